// Scans and sorting: cumulative sums and products, stable sorts and
// selection along a dim (NumPy's cumsum, cumprod, argsort, take_along_axis).
#include "npgrad/kernels/internal.h"

namespace npgrad::kernels {
namespace {

Tensor scan(const Tensor& a, int64_t dim, ScalarType dtype, bool is_prod) {
  IgnoreFpErrors quiet;
  if (is_reduced_float(dtype)) {
    // torch accumulates a reduced float in float32 and rounds each output
    // once. See Note [Reduced floats compute in float32 where torch does].
    constexpr ScalarType f32 = ScalarType::Float32;
    return cast(scan(cast(a, f32), dim, f32, is_prod), dtype);
  }
  int axis = static_cast<int>(dim);
  int type = npy_type(dtype);
  return wrap_array(check(
      is_prod ? PyArray_CumProd(arr(a), axis, type, nullptr)
              : PyArray_CumSum(arr(a), axis, type, nullptr)));
}

// x[..., ::-1, ...] (dim reversed), a view.
PyObject* flip(PyObject* x, int64_t dim, int64_t ndim) {
  Ref index(PyTuple_New(static_cast<Py_ssize_t>(ndim)));
  for (int64_t i = 0; i < ndim; ++i) {
    Ref step(PyLong_FromLong(i == dim ? -1 : 1));
    PyTuple_SET_ITEM(index.p, i, check(PySlice_New(nullptr, nullptr, step.p)));
  }
  return check(PyObject_GetItem(x, index.p));
}

PyObject* argsort(PyObject* x, int64_t dim) {
  return check(PyArray_ArgSort(
      reinterpret_cast<PyArrayObject*>(x),
      static_cast<int>(dim),
      NPY_STABLESORT));
}

}  // namespace

Tensor cumsum(const Tensor& a, int64_t dim, ScalarType dtype) {
  return scan(a, dim, dtype, false);
}

Tensor cumprod(const Tensor& a, int64_t dim, ScalarType dtype) {
  return scan(a, dim, dtype, true);
}

Tensor take_along(const Tensor& a, const Tensor& indices, int64_t dim) {
  Ref axis(PyLong_FromLongLong(dim));
  PyObject* args[3] = {obj(a), obj(indices), axis.p};
  return wrap_array(
      check(PyObject_Vectorcall(np_.take_along_axis, args, 2, np_.kw_axis)));
}

std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending) {
  Tensor indices;
  if (!descending) {
    indices = wrap_array(argsort(obj(a), dim));
  } else {
    // The ascending stable sort of the reversed dim, reversed back: largest
    // first, NaN (NumPy's largest too) before all, and equal elements in
    // their original order. Positions in the reversed dim map back as
    // n - 1 - i.
    int64_t ndim = a.dim();
    Ref reversed(flip(obj(a), dim, ndim));
    Ref order(argsort(reversed.p, dim));
    Ref back(flip(order.p, dim, ndim));
    Ref last(PyLong_FromLongLong(a.sizes()[dim] - 1));
    indices = wrap_array(check(PyNumber_Subtract(last.p, back.p)));
  }
  return {take_along(a, indices, dim), indices};
}

}  // namespace npgrad::kernels
