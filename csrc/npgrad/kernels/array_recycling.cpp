// Small-array recycling: see Note [Small ndarrays are recycled].
#include "npgrad/kernels/internal.h"

#include <algorithm>

namespace npgrad::kernels {
namespace {

// Note [Small ndarrays are recycled]
// Every op's output and every gradient is a new ndarray, and the backward pass
// frees them all moments later: NumPy's creation and dealloc of a small array
// (descriptor and memory-handler lookups, three allocations and their frees)
// cost about a sixth of a small op. When a TensorImpl drops the last reference
// to an ndarray nobody could tell from a fresh np.empty (exactly an ndarray,
// NumPy's own C strides, owning aligned writable data of at most
// kRecycleMaxBytes, no base, no weak reference, its dtype's canonical
// descriptor), the array is kept, and new_array hands it out again for the
// same dtype and shape. Its contents are as undefined as np.empty's, and no
// one else holds it, so nothing can observe the reuse. At most
// kRecycleMaxKept arrays are kept; every access holds the GIL.
constexpr std::size_t kRecycleMaxBytes = 512;
constexpr std::size_t kRecycleMaxKept = 4096;
constexpr int kRecycleMaxDims = 6;
struct RecycledArrays {
  std::vector<PyObject*> stacks[kNumScalarTypes][kRecycleMaxDims + 1];
  PyArray_Descr* descrs[kNumScalarTypes] = {};  // the canonical ones
  std::size_t kept = 0;
};
RecycledArrays recycled_;

// A kept array of this dtype and shape (a new reference), or null.
PyObject* reuse_array(int nd, const npy_intp* dims, int type) {
  int slot = dtype_index(type);
  if (nd > kRecycleMaxDims || slot < 0) {
    return nullptr;
  }
  std::vector<PyObject*>& stack = recycled_.stacks[slot][nd];
  if (stack.empty()) {
    return nullptr;
  }
  PyObject* o = stack.back();
  if (!std::equal(
          dims, dims + nd, PyArray_DIMS(reinterpret_cast<PyArrayObject*>(o)))) {
    return nullptr;
  }
  stack.pop_back();
  --recycled_.kept;
  return o;
}

}  // namespace

void init_array_recycling() {
  for (int i = 0; i < kNumScalarTypes; ++i) {
    // Builtin descriptors are immortal singletons and a registered one
    // (bfloat16's) lives as long as NumPy: a borrowed pointer is fine.
    PyArray_Descr* d =
        PyArray_DescrFromType(npy_type(static_cast<ScalarType>(i)));
    recycled_.descrs[i] = d;
    Py_DECREF(d);
  }
}

bool recycle_array(PyObject* o) {
  if (Py_TYPE(o) != &PyArray_Type || recycled_.kept >= kRecycleMaxKept) {
    return false;
  }
  auto* a = reinterpret_cast<PyArrayObject*>(o);
  constexpr int kRequired = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_OWNDATA |
                            NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE;
  int nd = PyArray_NDIM(a);
  int flags = PyArray_FLAGS(a);
  if (nd > kRecycleMaxDims || (flags & kRequired) != kRequired ||
      (flags & ~(kRequired | NPY_ARRAY_F_CONTIGUOUS)) != 0 ||
      PyArray_BASE(a) != nullptr ||
      reinterpret_cast<PyArrayObject_fields*>(a)->weakreflist != nullptr) {
    return false;
  }
  int slot = dtype_index(PyArray_TYPE(a));
  if (slot < 0 || PyArray_DESCR(a) != recycled_.descrs[slot]) {
    return false;
  }
  npy_intp bytes = PyArray_ITEMSIZE(a);
  const npy_intp* dims = PyArray_DIMS(a);
  const npy_intp* strides = PyArray_STRIDES(a);
  for (int i = nd - 1; i >= 0; --i) {
    if (dims[i] == 0 || strides[i] != bytes) {
      return false;
    }
    bytes *= dims[i];
    if (bytes > static_cast<npy_intp>(kRecycleMaxBytes)) {
      return false;
    }
  }
  recycled_.stacks[slot][nd].push_back(o);
  ++recycled_.kept;
  return true;
}

PyObject* new_array(int nd, npy_intp* dims, int type) {
  if (PyObject* reused = reuse_array(nd, dims, type)) {
    return reused;
  }
  std::size_t bytes = element_size(static_cast<ScalarType>(dtype_index(type)));
  for (int i = 0; i < nd; ++i) {
    bytes *= static_cast<std::size_t>(dims[i]);
  }
  BufferCacheScope cached(bytes >= buffer_cache::kMinCachedBytes);
  return PyArray_SimpleNew(nd, dims, type);
}

}  // namespace npgrad::kernels
