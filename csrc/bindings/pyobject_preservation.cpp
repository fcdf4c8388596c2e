// The Python side of Note [PyObject preservation] (npgrad/tensor/tensor.h):
// the tensor type's dealloc hands a still-used TensorImpl its Python object,
// the Tensor type caster takes it back, and ~TensorImpl releases it.

#include "bindings.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/util/error.h"

namespace npgrad::bindings {

namespace {

using Holder = std::shared_ptr<TensorImpl>;

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;  // public from 3.13
#else
  return _Py_IsFinalizing() != 0;
#endif
}

PyTypeObject* preserving_type = nullptr;
destructor pybind_dealloc = nullptr;

// Called with the object's refcount at zero. Only for instances of Tensor
// itself: a Python subclass's dealloc (CPython's subtype_dealloc) has cleared
// the instance's __dict__ and weakrefs before it reaches this base dealloc,
// so there is nothing left worth preserving.
bool try_preserve(PyObject* self) {
  if (Py_TYPE(self) != preserving_type || interpreter_finalizing()) {
    return false;
  }
  Holder* constructed = tensor_holder(self);
  if (constructed == nullptr) {
    return false;
  }
  Holder& holder = *constructed;
  // A non-owning holder (the TensorImpl is dying and releasing us) reports 0.
  if (holder.use_count() <= 1) {
    return false;
  }
  TensorImpl* impl = holder.get();
  Py_INCREF(self);  // resurrected: the reference now belongs to the impl
  impl->owned_pyobj = self;
  Holder owner = std::move(holder);
  holder = Holder(Holder(), impl);  // aliasing a null owner: owns nothing
  // Last, as it may be the last owner after all (another thread let go in
  // between): then ~TensorImpl releases `self` and this frees it.
  owner.reset();
  return true;
}

void tensor_dealloc(PyObject* self) {
  if (try_preserve(self)) {
    return;
  }
  pybind_dealloc(self);
}

// ~TensorImpl of an impl that owns its Python object.
void release(TensorImpl& dying) {
  if (!Py_IsInitialized()) {
    return;  // process exit: nothing left to free
  }
  // Usually the GIL is held (the graph is freed from Python); Ensure costs
  // more than the check.
  bool had_gil = PyGILState_Check() != 0;
  PyGILState_STATE gil{};
  if (!had_gil) {
    gil = PyGILState_Ensure();
  }
  auto* obj = static_cast<PyObject*>(dying.owned_pyobj);
  dying.owned_pyobj = nullptr;
  if (Py_REFCNT(obj) > 1) {
    // Python reached the object without npgrad's help (a weakref, gc's
    // lists) and still holds it: the object must stay a valid tensor, so it
    // takes the dying impl's state over in a TensorImpl of its own.
    auto* inst = reinterpret_cast<py::detail::instance*>(obj);
    auto v_h = inst->get_value_and_holder(tensor_type_info());
    auto fresh = make_tensor_impl();
    dying.move_state_to(*fresh);
    py::detail::deregister_instance(inst, v_h.value_ptr(), v_h.type);
    v_h.value_ptr() = fresh.get();
    v_h.holder<Holder>() = std::move(fresh);
    py::detail::register_instance(inst, v_h.value_ptr(), v_h.type);
    autograd::adopt_moved_tensor(Tensor(v_h.holder<Holder>()));
  }
  Py_DECREF(obj);
  if (!had_gil) {
    PyGILState_Release(gil);
  }
}

bool is_shared(const TensorImpl& impl) {
  return Py_REFCNT(static_cast<PyObject*>(impl.owned_pyobj)) > 1;
}

}  // namespace

void install_pyobject_preservation(PyTypeObject* tensor_type) {
  preserving_type = tensor_type;
  pybind_dealloc = tensor_type->tp_dealloc;
  NPGRAD_INTERNAL_ASSERT(pybind_dealloc != nullptr, "type not ready");
  tensor_type->tp_dealloc = tensor_dealloc;
  release_owned_pyobj = release;
  owned_pyobj_is_shared = is_shared;
}

Holder reclaim_pyobj(PyObject* obj, TensorImpl* impl) {
  NPGRAD_INTERNAL_ASSERT(
      impl->owned_pyobj == obj, "a tensor owns another Python object");
  Holder owner = impl->weak_from_this().lock();
  // Null only while another thread is in ~TensorImpl waiting for the GIL;
  // it then hands the object a TensorImpl of its own (release above).
  NPGRAD_CHECK(owner != nullptr, "the tensor is being freed by another thread");
  *tensor_holder(obj) = owner;
  impl->owned_pyobj = nullptr;
  Py_DECREF(obj);  // the impl's reference; the caller holds its own
  return owner;
}

}  // namespace npgrad::bindings
