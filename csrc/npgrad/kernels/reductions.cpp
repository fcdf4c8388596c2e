// Reductions (sum, prod, any/all, max/min and their indices, softmax) and
// matmul: NumPy's reduce methods and BLAS.
#include <cmath>
#include <limits>
#include <type_traits>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/internal.h"

namespace npgrad::kernels {
namespace {

PyObject* dims_tuple(const std::vector<int64_t>& dims) {
  PyObject* tup = check(PyTuple_New(static_cast<Py_ssize_t>(dims.size())));
  for (std::size_t i = 0; i < dims.size(); ++i) {
    PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(dims[i]));
  }
  return tup;
}

PyObject* dtype_obj(ScalarType t) {
  return reinterpret_cast<PyObject*>(PyArray_DescrFromType(npy_type(t)));
}

}  // namespace

namespace {
// reduce(a, axis=dims or None, dtype=dtype, keepdims=keepdim) of a NumPy ufunc.
Tensor reduce_in(
    PyObject* reduce,
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype) {
  IgnoreFpErrors quiet;
  if (is_reduced_float(dtype)) {
    // See Note [Reduced floats compute in float32 where torch does].
    Tensor input = a.dtype() == dtype ? a : cast(a, dtype);
    return cast(
        reduce_in(reduce, input, dims, keepdim, ScalarType::Float32), dtype);
  }
  Ref axes(dims.empty() ? (Py_INCREF(Py_None), Py_None) : dims_tuple(dims));
  Ref dt(dtype_obj(dtype));
  PyObject* args[4] = {obj(a), axes.p, dt.p, keepdim ? Py_True : Py_False};
  return wrap_array(
      check(PyObject_Vectorcall(reduce, args, 1, np_.kw_axis_dtype_keepdims)));
}
}  // namespace

Tensor sum(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype) {
  Tensor fast;
  if (dims.empty() && !keepdim && a.dtype() == dtype &&
      try_sum_loop(a, dtype, &fast)) {
    return fast;
  }
  if (a.dtype() == dtype &&
      try_last_dim_reduce_loop(Binary::Add, a, dims, keepdim, dtype, &fast)) {
    return fast;
  }
  return reduce_in(np_.add_reduce, a, dims, keepdim, dtype);
}

Tensor prod(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype) {
  return reduce_in(np_.mul_reduce, a, dims, keepdim, dtype);
}

Tensor any(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    bool is_any) {
  return reduce_in(
      is_any ? np_.logical_or_reduce : np_.logical_and_reduce,
      a,
      dims,
      keepdim,
      ScalarType::Bool);
}

Tensor amax(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    bool is_max) {
  Tensor fast;
  if (try_last_dim_reduce_loop(
          is_max ? Binary::Maximum : Binary::Minimum,
          a,
          dims,
          keepdim,
          a.dtype(),
          &fast)) {
    return fast;
  }
  Ref axes(dims.empty() ? (Py_INCREF(Py_None), Py_None) : dims_tuple(dims));
  PyObject* args[3] = {obj(a), axes.p, keepdim ? Py_True : Py_False};
  return wrap_array(check(PyObject_Vectorcall(
      is_max ? np_.max_reduce : np_.min_reduce,
      args,
      1,
      np_.kw_axis_keepdims)));
}

Tensor argmax(
    const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  Ref axis(dim ? PyLong_FromLongLong(*dim) : (Py_INCREF(Py_None), Py_None));
  PyObject* args[3] = {obj(a), axis.p, keepdim ? Py_True : Py_False};
  return wrap_array(check(PyObject_Vectorcall(
      is_max ? np_.argmax : np_.argmin, args, 1, np_.kw_axis_keepdims)));
}

Tensor softmax(const Tensor& a, int64_t dim, bool log) {
  IgnoreFpErrors quiet;
  if (is_reduced_float(a.dtype())) {
    // See Note [Reduced floats compute in float32 where torch does].
    return cast(softmax(cast(a, ScalarType::Float32), dim, log), a.dtype());
  }
  // shifted = a - max(a, dim); softmax = exp(shifted) / sum(exp(shifted));
  // log_softmax = shifted - log(sum(exp(shifted))).
  Tensor m = amax(a, {dim}, true, true);
  Tensor shifted = binary(Binary::Sub, a, m, a.dtype());
  static const UnaryUfunc& exp = unary_ufunc("exp");
  static const UnaryUfunc& log_ = unary_ufunc("log");
  Tensor e = unary(exp, shifted, a.dtype());
  Tensor s = sum(e, {dim}, true, a.dtype());
  if (!log) {
    binary_out(Binary::Div, e, s, e);
    return e;
  }
  unary_out(log_, s, s);
  binary_out(Binary::Sub, shifted, s, shifted);
  return shifted;
}

namespace {

// `rows` (..., 1) as a tensor of the leading sizes of `sizes` (..., N).
Tensor drop_last(const Tensor& rows, const Shape& sizes) {
  Shape lead(sizes.begin(), sizes.end() - 1);
  Shape strides(lead.size());
  int64_t step = 1;
  for (std::size_t i = lead.size(); i-- > 0;) {
    strides[i] = step;
    step *= lead[i];
  }
  return view_as_strided(rows, lead, strides, 0);
}

}  // namespace

// Whole-array NumPy passes (max, subtract, exp, sum, scale): NumPy's SIMD
// exp is several times faster than a scalar loop of std::exp.
std::pair<Tensor, Tensor> row_softmax(const Tensor& scores) {
  IgnoreFpErrors quiet;
  ScalarType dtype = scores.dtype();
  const Shape& sizes = scores.sizes();
  int64_t n = sizes.back();
  int64_t last = scores.dim() - 1;
  if (n == 0 || scores.numel() == 0) {
    Shape rows(sizes.begin(), sizes.end() - 1);
    return {
        empty(sizes, dtype),
        full(rows, -std::numeric_limits<double>::infinity(), dtype)};
  }
  Tensor m = amax(scores, {last}, true, true);  // fresh, contiguous
  int64_t rows = m.numel();
  // A row of -inf is shifted by 0: its exps are zeros, not nan.
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* pm = static_cast<T*>(m.data_ptr());
    for (int64_t i = 0; i < rows; ++i) {
      if (pm[i] == -std::numeric_limits<T>::infinity()) {
        pm[i] = 0;
      }
    }
  });
  Tensor probs = binary(Binary::Sub, scores, m, dtype);
  static const UnaryUfunc& exp = unary_ufunc("exp");
  unary_out(exp, probs, probs);
  Tensor total = sum(probs, {last}, true, dtype);
  Tensor lse = empty(m.sizes(), dtype);
  // total becomes 1 / total (0 for an all -inf row, whose exps are 0).
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* pm = static_cast<T*>(m.data_ptr());
    T* pt = static_cast<T*>(total.data_ptr());
    T* pl = static_cast<T*>(lse.data_ptr());
    for (int64_t i = 0; i < rows; ++i) {
      if (pt[i] == 0) {
        pl[i] = -std::numeric_limits<T>::infinity();
      } else {
        pl[i] = pm[i] + std::log(pt[i]);
        pt[i] = T(1) / pt[i];
      }
    }
  });
  binary_out(Binary::Mul, probs, total, probs);
  return {probs, drop_last(lse, sizes)};
}

Tensor probs_from_lse(const Tensor& scores, const Tensor& lse) {
  IgnoreFpErrors quiet;
  ScalarType dtype = scores.dtype();
  Shape sizes = lse.sizes();
  sizes.push_back(1);
  // A copy of lse as (..., 1), with +inf for -inf: exp(s - inf) = 0.
  Tensor shift = cast(lse, dtype);
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* p = static_cast<T*>(shift.data_ptr());
    for (int64_t i = 0, e = shift.numel(); i < e; ++i) {
      if (p[i] == -std::numeric_limits<T>::infinity()) {
        p[i] = std::numeric_limits<T>::infinity();
      }
    }
  });
  Shape strides(sizes.size(), 1);
  for (std::size_t i = sizes.size() - 1; i-- > 0;) {
    strides[i] = strides[i + 1] * sizes[i + 1];
  }
  Tensor probs = binary(
      Binary::Sub, scores, view_as_strided(shift, sizes, strides, 0), dtype);
  static const UnaryUfunc& exp = unary_ufunc("exp");
  unary_out(exp, probs, probs);
  return probs;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  IgnoreFpErrors quiet;
  if (is_reduced_float(a.dtype()) && b.dtype() == a.dtype()) {
    // See Note [Reduced floats compute in float32 where torch does]. NumPy's
    // own float16 matmul is a scalar loop without BLAS (bfloat16's returns
    // float32).
    constexpr ScalarType f32 = ScalarType::Float32;
    return cast(matmul(cast(a, f32), cast(b, f32)), a.dtype());
  }
  BufferCacheScope cached(is_large(a) || is_large(b));
  PyObject* args[2] = {obj(a), obj(b)};
  return wrap_array(check(PyObject_Vectorcall(np_.matmul, args, 2, nullptr)));
}

bool has_nan(const Tensor& t) {
  if (!is_floating(t.dtype())) {
    return false;
  }
  if (t.is_contiguous() &&
      (t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64)) {
    // A plain scan: np.any is a Python function, microseconds a call.
    bool found = false;
    dispatch_floating(t.dtype(), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* p = static_cast<const T*>(t.data_ptr());
      for (int64_t i = 0, n = t.numel(); i < n && !found; ++i) {
        found = std::isnan(p[i]);
      }
    });
    return found;
  }
  PyObject* args[1] = {obj(t)};
  Ref mask(PyObject_Vectorcall(np_.isnan, args, 1, nullptr));
  PyObject* any_args[1] = {mask.p};
  Ref r(PyObject_Vectorcall(np_.any, any_args, 1, nullptr));
  return PyObject_IsTrue(r.p) == 1;
}

}  // namespace npgrad::kernels
