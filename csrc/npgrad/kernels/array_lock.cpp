// The NumPy side of Note [lock_saved_tensors] (autograd/saved_tensor_lock.h):
// the storage's ndarrays made read-only while saves hold it, and the list of
// those saves. Everything here runs with the GIL held, which also guards
// each counter's BufferLock.
#include <algorithm>

#include "npgrad/kernels/internal.h"

namespace npgrad::kernels {

void lock_storage(const Tensor& t, const void* holder) {
  GilGuard gil;
  VersionCounter& counter = *t.impl()->version_counter;
  if (!counter.lock) {
    counter.lock = std::make_unique<BufferLock>();
  }
  BufferLock& lock = *counter.lock;
  // The tensor's ndarray and the chain of its bases: a write through any of
  // them (or through a NumPy view made from them from now on) raises. Only
  // writeable ones are flipped, so that only they are restored.
  PyObject* a = static_cast<PyObject*>(materialize_array(*t.impl()));
  while (a != nullptr && PyArray_Check(a)) {
    auto* arr = reinterpret_cast<PyArrayObject*>(a);
    if (PyArray_ISWRITEABLE(arr)) {
      PyArray_CLEARFLAGS(arr, NPY_ARRAY_WRITEABLE);
      Py_INCREF(a);
      lock.made_read_only.push_back(ArrayHandle::steal(a));
    }
    a = PyArray_BASE(arr);
  }
  lock.holders.emplace_back(holder, std::string());
  counter.saved_locks.fetch_add(1, std::memory_order_release);
}

void unlock_storage(VersionCounter& counter, const void* holder) {
  if (!Py_IsInitialized()) {
    return;  // interpreter gone at process exit: nothing to restore
  }
  GilGuard gil;
  if (!counter.lock) {
    return;
  }
  BufferLock& lock = *counter.lock;
  auto it = std::find_if(
      lock.holders.begin(), lock.holders.end(), [&](const auto& h) {
        return h.first == holder;
      });
  if (it == lock.holders.end()) {
    return;
  }
  lock.holders.erase(it);
  counter.saved_locks.fetch_sub(1, std::memory_order_release);
  if (!lock.holders.empty()) {
    return;
  }
  // The flag is set directly: NumPy's Python-level setter refuses a view
  // whose base is still read-only, and the order of restoring does not
  // matter here (each of these arrays was writeable before).
  for (const ArrayHandle& h : lock.made_read_only) {
    PyArray_ENABLEFLAGS(
        reinterpret_cast<PyArrayObject*>(h.get()), NPY_ARRAY_WRITEABLE);
  }
  counter.lock.reset();
}

void name_lock_holder(
    VersionCounter& counter, const void* holder, const std::string& name) {
  GilGuard gil;
  if (!counter.lock) {
    return;
  }
  for (auto& h : counter.lock->holders) {
    if (h.first == holder) {
      h.second = name;
    }
  }
}

std::vector<std::string> lock_holder_names(const VersionCounter& counter) {
  GilGuard gil;
  std::vector<std::string> names;
  if (counter.lock) {
    for (const auto& h : counter.lock->holders) {
      names.push_back(h.second);
    }
  }
  return names;
}

bool made_read_only_by_lock(const Tensor& t) {
  const VersionCounter& counter = *t.impl()->version_counter;
  if (counter.saved_locks.load(std::memory_order_acquire) == 0 ||
      !counter.lock || t.impl()->array.get() == nullptr) {
    return false;
  }
  const auto& arrays = counter.lock->made_read_only;
  return std::any_of(arrays.begin(), arrays.end(), [&](const ArrayHandle& h) {
    return h.get() == t.impl()->array.get();
  });
}

}  // namespace npgrad::kernels
