// Scans and sorting: cumulative sums and products, stable sorts and
// selection along a dim (NumPy's cumsum, cumprod, argsort, take_along_axis).
#include <cstring>

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
  if (a.is_contiguous() && indices.is_contiguous() &&
      indices.dtype() == ScalarType::Int64 && a.dim() == indices.dim() &&
      a.dim() > 0) {
    // The sorts' own cases (indices of a's shape, or of size 1 outside dim
    // to broadcast) as a loop: NumPy's take_along_axis is a Python function,
    // a few microseconds a call on tiny inputs. Anything else (an index out
    // of range too: the sorts make none) goes to NumPy.
    int64_t nd = a.dim();
    Shape out_sizes = a.sizes();
    out_sizes[dim] = indices.sizes()[dim];
    bool handled = true;
    Shape a_step(nd, 0), i_step(nd, 0);
    for (int64_t d = nd - 1, sa = 1, si = 1; d >= 0; --d) {
      int64_t is = indices.sizes()[d];
      handled = handled && (d == dim || is == out_sizes[d] || is == 1);
      a_step[d] = sa;
      i_step[d] = is == out_sizes[d] ? si : 0;
      sa *= a.sizes()[d];
      si *= is;
    }
    const auto* idx = static_cast<const int64_t*>(indices.data_ptr());
    int64_t n = a.sizes()[dim];
    for (int64_t j = 0; handled && j < indices.numel(); ++j) {
      handled = idx[j] >= 0 && idx[j] < n;
    }
    if (handled) {
      Tensor out = empty(out_sizes, a.dtype());
      std::size_t size = element_size(a.dtype());
      const char* src = static_cast<const char*>(a.data_ptr());
      char* dst = static_cast<char*>(out.data_ptr());
      Shape pos(nd, 0);
      int64_t total = out.numel();
      for (int64_t at = 0; at < total; ++at) {
        int64_t from = 0, ix = 0;
        for (int64_t d = 0; d < nd; ++d) {
          ix += pos[d] * i_step[d];
          from += d == dim ? 0 : pos[d] * a_step[d];
        }
        from += idx[ix] * a_step[dim];
        std::memcpy(
            dst + static_cast<std::size_t>(at) * size,
            src + static_cast<std::size_t>(from) * size,
            size);
        for (int64_t d = nd - 1; d >= 0 && ++pos[d] == out_sizes[d]; --d) {
          pos[d] = 0;
        }
      }
      return out;
    }
  }
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
