// tests_cpp/test_tensor_caster.cpp -- the Tensor type caster of the binding
// layer (bindings.h): None and other non-tensors never load as a Tensor, so no
// binding can hand a null tensor to an op (that crashed the interpreter).
// The Tensor type is registered here in an embedded module, as _C registers
// it; the two functions of the binding layer that the caster calls are
// defined below over that registration.
#include <catch2/catch.hpp>

#include <pybind11/embed.h>

#include "bindings/bindings.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/tensor/dtype.h"

namespace npgrad::bindings {
const py::detail::type_info* tensor_type_info() {
  return py::detail::get_type_info(typeid(TensorImpl));
}
std::shared_ptr<TensorImpl> reclaim_pyobj(PyObject*, TensorImpl*) {
  // Only reached for a TensorImpl that owns its Python object (Note
  // [PyObject preservation]), which this test never makes.
  throw std::logic_error("reclaim_pyobj is not used by this test");
}
}  // namespace npgrad::bindings

PYBIND11_EMBEDDED_MODULE(npgrad_caster_test, m) {
  py::class_<npgrad::TensorImpl, std::shared_ptr<npgrad::TensorImpl>>(
      m, "Tensor");
}

namespace {

bool loads(py::handle obj, bool convert) {
  py::detail::make_caster<npgrad::Tensor> caster;
  return caster.load(obj, convert);
}

}  // namespace

TEST_CASE(
    "the Tensor caster rejects None and other non-tensors", "[bindings]") {
  py::module_::import("npgrad_caster_test");
  for (bool convert : {false, true}) {
    CAPTURE(convert);
    CHECK_FALSE(loads(py::none(), convert));
    CHECK_FALSE(loads(py::int_(3), convert));
    CHECK_FALSE(loads(py::str("tensor"), convert));
    CHECK_FALSE(loads(py::make_tuple(), convert));
  }
  CHECK_THROWS_AS(py::none().cast<npgrad::Tensor>(), py::cast_error);
}

TEST_CASE(
    "the Tensor caster loads a Tensor and converts one back", "[bindings]") {
  py::module_::import("npgrad_caster_test");
  npgrad::Tensor t =
      npgrad::kernels::empty({2, 3}, npgrad::ScalarType::Float32);
  py::object obj = py::cast(t);
  REQUIRE(obj.ptr() != Py_None);
  for (bool convert : {false, true}) {
    py::detail::make_caster<npgrad::Tensor> caster;
    REQUIRE(caster.load(obj, convert));
    CHECK(static_cast<npgrad::Tensor&>(caster).impl() == t.impl());
  }
  // An undefined Tensor (an absent gradient) still converts to None.
  CHECK(py::cast(npgrad::Tensor()).is_none());
}
