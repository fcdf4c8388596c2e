// Python subclasses of Tensor (nn.Parameter and user classes):
// Tensor._make_subclass, as torch's, makes an instance of the subclass that
// wraps a detached alias of a tensor.
//
// Note [Tensor subclass instances]: the instance is a pybind11 instance of
// the subclass whose holder owns the alias's TensorImpl, registered under it
// like any Tensor object. While it lives, every conversion of that TensorImpl
// to Python (an op's saved input, .grad's leaf in a hook, .base) finds it
// there and returns it, so `y.grad_fn._saved_self is param`. Unlike a plain
// Tensor it is not preserved (Note [PyObject preservation]): CPython's
// subtype_dealloc has cleared its __dict__ before the base dealloc runs, so
// once Python drops it, C++ converts the TensorImpl to a fresh plain Tensor.
// Its GC traversal is CPython's for the subclass (slots, __dict__) then
// tensor_traverse, which reports what the TensorImpl owns alone.
#include "bindings.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/util/error.h"

namespace npgrad::bindings {

namespace {

PyTypeObject* tensor_type() {
  return tensor_type_info()->type;
}

py::object make_subclass(
    py::handle cls, const Tensor& data, py::handle require_grad_arg) {
  NPGRAD_CHECK_TYPE(
      PyType_Check(cls.ptr()),
      "cls must be a type (got ",
      python_type_name(cls),
      ")");
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  NPGRAD_CHECK_TYPE(
      PyType_IsSubtype(type, tensor_type()),
      "Creating a Tensor subclass from a class that does not inherit from "
      "Tensor is not possible. Make sure your class inherits from Tensor.");
  // Checked here: pybind11's bool caster would take any number.
  NPGRAD_CHECK_TYPE(
      PyBool_Check(require_grad_arg.ptr()),
      "_make_subclass(): argument 'require_grad' must be bool, not ",
      python_type_name(require_grad_arg));
  Tensor alias = autograd::detach(data);
  if (require_grad_arg.ptr() == Py_True) {
    NPGRAD_CHECK(
        is_floating(alias.dtype()),
        "Only Tensors of floating point and complex dtype can require "
        "gradients");
    autograd::set_requires_grad(alias, true);
  }
  if (type == tensor_type()) {
    return py::cast(alias);
  }
  // pybind11's tp_new allocates the instance with its value slot empty.
  py::tuple no_args;
  auto obj = py::reinterpret_steal<py::object>(
      tensor_type()->tp_new(type, no_args.ptr(), nullptr));
  if (!obj) {
    throw py::error_already_set();
  }
  auto* inst = reinterpret_cast<py::detail::instance*>(obj.ptr());
  auto v_h = inst->get_value_and_holder(tensor_type_info());
  v_h.value_ptr() = alias.impl();
  // Copies the holder and registers the instance under the TensorImpl.
  v_h.type->init_instance(inst, &alias.impl_ptr());
  return obj;
}

}  // namespace

void bind_tensor_subclass(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::object>(
      reinterpret_cast<PyObject*>(tensor_type()));
  // Tensor has no Python constructor. An instance that _make_subclass built
  // (a subclass's __new__ returned it) passes through __init__, as in torch,
  // where Tensor.__init__ is object's: pybind11 skips the __init__ of a
  // registered instance.
  tensor.attr("__init__") = py::cpp_function(
      [](py::handle self, const py::args&, const py::kwargs&) {
        throw py::type_error(
            std::string(Py_TYPE(self.ptr())->tp_name) +
            ": No constructor defined!");
      },
      py::name("__init__"),
      py::is_method(tensor));
  py::cpp_function make(
      &make_subclass,
      py::name("_make_subclass"),
      py::scope(tensor),
      py::arg("cls"),
      py::arg("data"),
      py::arg("require_grad") = false);
  tensor.attr("_make_subclass") = py::staticmethod(make);
  (void)m;
}

}  // namespace npgrad::bindings
