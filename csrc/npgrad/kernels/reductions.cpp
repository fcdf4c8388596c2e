// Reductions (sum, prod, any/all, max/min and their indices, softmax) and
// matmul: NumPy's reduce methods and BLAS.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <vector>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/gemm.h"
#include "npgrad/kernels/internal.h"
#include "npgrad/kernels/vector_exp.h"
#include "npgrad/tensor/shape.h"

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

namespace {

// Note [Softmax rows in one pass]
// Over the last dim of a contiguous float32/float64 tensor, (log_)softmax
// makes the same NumPy inner-loop calls as the whole-array passes below (the
// max and the sum as reduce loops, the subtracts, exp, the divide), but row by
// row: each row is read from memory once and worked on while it is in cache,
// and there are no whole-array temporaries (at cross_entropy's 512x1000,
// log_softmax takes about a seventh less time). The results are the passes'
// own, bit for bit, but for contiguous float32 rows on a CPU with AVX-512:
// there the subtract, exp and sum are one fused pass of the vector exp (Note
// [Vector exp for softmax rows]), which takes about half the time of NumPy's
// exp loop alone.
// Attention's row_softmax and probs_from_lse do the same with their own
// passes.
// (log_)softmax over another dim, or over short rows, takes the same calls
// lane by lane (a lane: the elements along dim, `inner` apart) when there
// are few lanes: a small tensor's whole-array passes cost a few microseconds
// each whatever its size, the calls of a lane a few dozen nanoseconds. There
// the sums of a lane are NumPy's pairwise sum where the passes over a
// non-last dim add row after row (the same values up to the last bits).
constexpr int64_t kMinFusedRow = 64;  // below it, a row's calls cost more
constexpr int64_t kMaxShortLanes = 64;  // above it, short lanes' calls do

struct RowLoops {
  InnerLoop max, sub, div, mul, add, exp, log;
};

RowLoops find_row_loops(int slot) {
  int type = loop_slot_type(slot);
  auto binary_loop = [type](Binary op) {
    return find_inner_loop(np_.binary[static_cast<int>(op)], type);
  };
  return RowLoops{
      binary_loop(Binary::Maximum),
      binary_loop(Binary::Sub),
      binary_loop(Binary::Div),
      binary_loop(Binary::Mul),
      binary_loop(Binary::Add),
      unary_ufunc("exp").loops[slot],
      unary_ufunc("log").loops[slot]};
}

// Null when NumPy lacks one of the loops (then the whole-array passes run).
const RowLoops* row_loops(int slot) {
  static const RowLoops loops[kLoopDtypes] = {
      find_row_loops(0), find_row_loops(1)};
  const RowLoops& l = loops[slot];
  int type = loop_slot_type(slot);
  for (const InnerLoop* loop :
       {&l.max, &l.sub, &l.div, &l.mul, &l.add, &l.exp, &l.log}) {
    if (loop->fn == nullptr || loop->out_type != type) {
      return nullptr;
    }
  }
  return &l;
}

// The row loops for a contiguous, aligned, native float32/float64 tensor,
// else null.
const RowLoops* contiguous_float_loops(const Tensor& a) {
  ScalarType dtype = a.dtype();
  int slot = dtype == ScalarType::Float32   ? 0
             : dtype == ScalarType::Float64 ? 1
                                            : -1;
  if (slot < 0 || !a.is_contiguous() || a.impl()->is_wrapped_number) {
    return nullptr;
  }
  int flags = PyArray_FLAGS(arr(a));
  if ((flags & NPY_ARRAY_ALIGNED) == 0 || !PyArray_ISNOTSWAPPED(arr(a))) {
    return nullptr;
  }
  return row_loops(slot);
}

// The row loops for a's last dim, or null when a must take the whole-array
// passes (another dtype, short rows, not contiguous, aligned and native).
const RowLoops* last_dim_loops(const Tensor& a) {
  if (a.dim() == 0 || a.sizes().back() < kMinFusedRow) {
    return nullptr;
  }
  return contiguous_float_loops(a);
}

// The lanes along dim d of a contiguous tensor: outer x (n elements,
// `inner` apart) x inner.
struct Lanes {
  int64_t outer = 1, n = 1, inner = 1;
};

Lanes lanes_of(const Tensor& a, int64_t d) {
  Lanes l;
  for (int64_t i = 0; i < a.dim(); ++i) {
    int64_t size = a.sizes()[i];
    (i < d ? l.outer : i == d ? l.n : l.inner) *= size;
  }
  return l;
}

// The loops for (log_)softmax over dim d of a lane by lane: long rows of the
// last dim, or few lanes of any dim (Note [Softmax rows in one pass]).
const RowLoops* lane_loops(const Tensor& a, int64_t d) {
  if (a.dim() == 0 || a.numel() == 0) {
    return nullptr;
  }
  Lanes l = lanes_of(a, d);
  bool long_rows = d == a.dim() - 1 && l.n >= kMinFusedRow;
  if (!long_rows && l.outer * l.inner > kMaxShortLanes) {
    return nullptr;
  }
  return contiguous_float_loops(a);
}

// One inner-loop call with up to three operands.
void call_loop(
    const InnerLoop& loop,
    std::initializer_list<char*> args,
    std::initializer_list<npy_intp> steps,
    npy_intp count) {
  char* a[3];
  npy_intp s[3];
  std::copy(args.begin(), args.end(), a);
  std::copy(steps.begin(), steps.end(), s);
  loop.fn(a, &count, s, loop.data);
}

// Whether T's contiguous lanes (inner == 1) take the vector exp's fused
// passes (Note [Vector exp for softmax rows]) instead of NumPy's loops.
template <typename T>
bool vector_rows(const Lanes& l) {
  return std::is_same_v<T, float> && l.inner == 1 && vector_exp::available();
}

// The row max from the first element, as NumPy's reduce call makes it
// (acc, lane, acc) with steps (0, step, 0); maximum propagates a nan.
template <typename T>
T lane_max(const RowLoops& loops, char* x, npy_intp step, npy_intp n) {
  T m = *reinterpret_cast<T*>(x);
  char* pm = reinterpret_cast<char*>(&m);
  call_loop(loops.max, {pm, x + step, pm}, {0, step, 0}, n - 1);
  return m;
}

bool try_softmax_rows(const Tensor& a, int64_t dim, bool log, Tensor* result) {
  const RowLoops* loops = lane_loops(a, dim);
  if (loops == nullptr) {
    return false;
  }
  ScalarType dtype = a.dtype();
  Tensor out = empty(a.sizes(), dtype);
  Lanes l = lanes_of(a, dim);
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    npy_intp n = l.n;
    char* px = static_cast<char*>(a.data_ptr());
    char* po = static_cast<char*>(out.data_ptr());
    std::vector<T> scratch(log ? n : 0);
    char* pe = reinterpret_cast<char*>(scratch.data());
    constexpr npy_intp es = sizeof(T);
    npy_intp step = l.inner * es;  // between a lane's elements
    auto vector_run = [&] {
      for (int64_t o = 0; o < l.outer; ++o) {
        char* row = px + o * n * es;
        const float* x = reinterpret_cast<const float*>(row);
        float* y = reinterpret_cast<float*>(po + o * n * es);
        float m = static_cast<float>(lane_max<T>(*loops, row, es, n));
        if (log) {
          // (x - max) - log(sum(exp(x - max))), as torch's kernel.
          float log_sum = std::log(vector_exp::sum_exp_shifted(x, m, n));
          vector_exp::subtract_twice(x, m, log_sum, y, n);
        } else {
          float s = vector_exp::exp_shifted_sum(x, m, y, n);
          char* ps = reinterpret_cast<char*>(&s);
          char* py = reinterpret_cast<char*>(y);
          call_loop(loops->div, {py, ps, py}, {es, 0, es}, n);
        }
      }
    };
    auto run = [&] {
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t in = 0; in < l.inner; ++in) {
          npy_intp start = (o * l.n * l.inner + in) * es;
          char* x = px + start;
          char* y = po + start;
          // Reduce calls as NumPy makes them, the sum from add's identity.
          T m = lane_max<T>(*loops, x, step, n);
          char* pm = reinterpret_cast<char*>(&m);
          call_loop(loops->sub, {x, pm, y}, {step, 0, step}, n);
          // softmax: exp in place; log_softmax: into the scratch lane, the
          // shifted values stay for the subtract.
          char* e = log ? pe : y;
          npy_intp e_step = log ? es : step;
          call_loop(loops->exp, {y, e}, {step, e_step}, n);
          T s = 0;
          char* ps = reinterpret_cast<char*>(&s);
          call_loop(loops->add, {ps, e, ps}, {0, e_step, 0}, n);
          if (log) {
            call_loop(loops->log, {ps, ps}, {0, 0}, 1);
            call_loop(loops->sub, {y, ps, y}, {step, 0, step}, n);
          } else {
            call_loop(loops->div, {y, ps, y}, {step, 0, step}, n);
          }
        }
      }
    };
    bool vector = vector_rows<T>(l);
    Py_BEGIN_ALLOW_THREADS if (vector) {
      vector_run();
    }
    else {
      run();
    }
    Py_END_ALLOW_THREADS
  });
  *result = std::move(out);
  return true;
}

}  // namespace

bool softmax_backward_rows(
    const Tensor& grad_in,
    const Tensor& result,
    int64_t dim,
    bool log,
    Tensor* out) {
  const RowLoops* loops = lane_loops(result, dim);
  if (loops == nullptr || grad_in.dtype() != result.dtype() ||
      grad_in.sizes() != result.sizes()) {
    return false;
  }
  // A gradient that is not a plain buffer (an expanded one, from a sum) is
  // copied: one call, where the passes would take several.
  Tensor grad = contiguous_float_loops(grad_in) != nullptr
                    ? grad_in
                    : cast(grad_in, grad_in.dtype());
  if (contiguous_float_loops(grad) == nullptr) {
    return false;
  }
  ScalarType dtype = result.dtype();
  Tensor o = empty(result.sizes(), dtype);
  Lanes l = lanes_of(result, dim);
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    npy_intp n = l.n;
    char* pg = static_cast<char*>(grad.data_ptr());
    char* pr = static_cast<char*>(result.data_ptr());
    char* po = static_cast<char*>(o.data_ptr());
    constexpr npy_intp es = sizeof(T);
    npy_intp st = l.inner * es;
    // log_softmax over contiguous float32 rows: two fused passes a row.
    auto vector_run = [&] {
      for (int64_t lo = 0; lo < l.outer; ++lo) {
        npy_intp start = lo * l.n * es;
        const float* g = reinterpret_cast<const float*>(pg + start);
        const float* r = reinterpret_cast<const float*>(pr + start);
        float* w = reinterpret_cast<float*>(po + start);
        vector_exp::grad_minus_scaled_exp(g, r, vector_exp::sum(g, n), w, n);
      }
    };
    auto run = [&] {
      for (int64_t lo = 0; lo < l.outer; ++lo) {
        for (int64_t in = 0; in < l.inner; ++in) {
          npy_intp start = (lo * l.n * l.inner + in) * es;
          char* g = pg + start;
          char* r = pr + start;
          char* w = po + start;
          T s = 0;
          char* ps = reinterpret_cast<char*>(&s);
          if (log) {
            // grad - exp(r) * sum(grad)
            call_loop(loops->add, {ps, g, ps}, {0, st, 0}, n);
            call_loop(loops->exp, {r, w}, {st, st}, n);
            call_loop(loops->mul, {w, ps, w}, {st, 0, st}, n);
            call_loop(loops->sub, {g, w, w}, {st, st, st}, n);
          } else {
            // (grad - sum(grad * r)) * r
            call_loop(loops->mul, {g, r, w}, {st, st, st}, n);
            call_loop(loops->add, {ps, w, ps}, {0, st, 0}, n);
            call_loop(loops->sub, {g, ps, w}, {st, 0, st}, n);
            call_loop(loops->mul, {w, r, w}, {st, st, st}, n);
          }
        }
      }
    };
    bool vector = log && vector_rows<T>(l);
    Py_BEGIN_ALLOW_THREADS if (vector) {
      vector_run();
    }
    else {
      run();
    }
    Py_END_ALLOW_THREADS
  });
  *out = std::move(o);
  return true;
}

Tensor softmax(const Tensor& a, int64_t dim, bool log) {
  IgnoreFpErrors quiet;
  if (is_reduced_float(a.dtype())) {
    // See Note [Reduced floats compute in float32 where torch does].
    return cast(softmax(cast(a, ScalarType::Float32), dim, log), a.dtype());
  }
  if (a.numel() == 0) {
    return empty(a.sizes(), a.dtype());
  }
  Tensor fused;
  if (try_softmax_rows(a, dim, log, &fused)) {
    return fused;
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
  if (const RowLoops* loops = last_dim_loops(scores)) {
    // See Note [Softmax rows in one pass]: the passes below, row by row.
    Shape lead(sizes.begin(), sizes.end() - 1);
    Tensor probs = empty(sizes, dtype);
    Tensor lse = empty(lead, dtype);
    dispatch_floating(dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      constexpr npy_intp es = sizeof(T);
      int64_t rows = scores.numel() / n;
      char* px = static_cast<char*>(scores.data_ptr());
      char* po = static_cast<char*>(probs.data_ptr());
      T* pl = static_cast<T*>(lse.data_ptr());
      bool vector = vector_rows<T>(Lanes{rows, n, 1});
      auto run = [&] {
        for (int64_t i = 0; i < rows; ++i) {
          char* x = px + i * n * es;
          char* o = po + i * n * es;
          T m = lane_max<T>(*loops, x, es, n);
          if (m == -std::numeric_limits<T>::infinity()) {
            m = 0;
          }
          T total = 0;
          char* pt = reinterpret_cast<char*>(&total);
          if (vector) {
            total = vector_exp::exp_shifted_sum(
                reinterpret_cast<const float*>(x),
                static_cast<float>(m),
                reinterpret_cast<float*>(o),
                n);
          } else {
            char* pm = reinterpret_cast<char*>(&m);
            call_loop(loops->sub, {x, pm, o}, {es, 0, es}, n);
            call_loop(loops->exp, {o, o}, {es, es}, n);
            call_loop(loops->add, {pt, o, pt}, {0, es, 0}, n);
          }
          if (total == 0) {
            pl[i] = -std::numeric_limits<T>::infinity();
          } else {
            pl[i] = m + std::log(total);
            total = T(1) / total;
          }
          call_loop(loops->mul, {o, pt, o}, {es, 0, es}, n);
        }
      };
      Py_BEGIN_ALLOW_THREADS run();
      Py_END_ALLOW_THREADS
    });
    return {probs, lse};
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
  if (const RowLoops* loops = last_dim_loops(scores);
      loops != nullptr && shift.numel() > 0 && shift.is_contiguous() &&
      shift.numel() * scores.sizes().back() == scores.numel()) {
    // See Note [Softmax rows in one pass]: the two passes below, row by row.
    Tensor probs = empty(scores.sizes(), dtype);
    dispatch_floating(dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      constexpr npy_intp es = sizeof(T);
      npy_intp n = scores.sizes().back();
      int64_t rows = shift.numel();
      char* px = static_cast<char*>(scores.data_ptr());
      char* po = static_cast<char*>(probs.data_ptr());
      char* pl = static_cast<char*>(shift.data_ptr());
      bool vector = vector_rows<T>(Lanes{rows, n, 1});
      auto run = [&] {
        for (int64_t i = 0; i < rows; ++i) {
          char* o = po + i * n * es;
          if (vector) {
            vector_exp::exp_shifted_sum(
                reinterpret_cast<const float*>(px + i * n * es),
                *reinterpret_cast<float*>(pl + i * es),
                reinterpret_cast<float*>(o),
                n);
            continue;
          }
          call_loop(
              loops->sub, {px + i * n * es, pl + i * es, o}, {es, 0, es}, n);
          call_loop(loops->exp, {o, o}, {es, es}, n);
        }
      };
      Py_BEGIN_ALLOW_THREADS run();
      Py_END_ALLOW_THREADS
    });
    return probs;
  }
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

namespace {

// Up to this many multiply-adds a product stays NumPy's (its call costs
// less than the packing).
constexpr int64_t kMinGemmWork = int64_t{1} << 16;

// The float32 product of a (..., m, k) and b (..., k, n), batch dims
// broadcast, by gemm::sgemm into a new contiguous tensor (Note [float32 GEMM
// in AVX-512]); false (nothing done) for any other case, which NumPy's
// matmul takes, its errors included.
bool try_gemm(const Tensor& a, const Tensor& b, Tensor* result) {
  if (a.dtype() != ScalarType::Float32 || b.dtype() != ScalarType::Float32 ||
      a.dim() < 2 || b.dim() < 2 || !gemm::available()) {
    return false;
  }
  const Shape& as = a.sizes();
  const Shape& bs = b.sizes();
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k || m < 8 || n < 8 || k < 8 ||
      m * n * k < kMinGemmWork) {
    return false;
  }
  for (const Tensor* t : {&a, &b}) {
    int flags = PyArray_FLAGS(arr(*t));
    if ((flags & NPY_ARRAY_ALIGNED) == 0 || !PyArray_ISNOTSWAPPED(arr(*t))) {
      return false;
    }
  }
  // The batch dims, right-aligned; a dim of size 1 (or missing) is read at
  // index 0 (step 0).
  Shape batch_a(as.begin(), as.end() - 2), batch_b(bs.begin(), bs.end() - 2);
  std::size_t batch_dims = std::max(batch_a.size(), batch_b.size());
  Shape batch(batch_dims);
  for (std::size_t d = 0; d < batch_dims; ++d) {
    auto size_of = [&](const Shape& sizes) {
      std::size_t lead = batch_dims - sizes.size();
      return d >= lead ? sizes[d - lead] : int64_t{1};
    };
    int64_t size_a = size_of(batch_a), size_b = size_of(batch_b);
    if (size_a != size_b && size_a != 1 && size_b != 1) {
      return false;
    }
    batch[d] = std::max(size_a, size_b);
  }
  const Shape& sa = a.strides();
  const Shape& sb = b.strides();
  StridedWalk<2> walk(
      batch,
      {broadcast_steps(batch_a, Shape(sa.begin(), sa.end() - 2), batch),
       broadcast_steps(batch_b, Shape(sb.begin(), sb.end() - 2), batch)});
  Shape out_sizes = batch;
  out_sizes.push_back(m);
  out_sizes.push_back(n);
  Tensor out = empty(out_sizes, ScalarType::Float32);
  int64_t count = 1;
  for (int64_t size : batch) {
    count *= size;
  }
  const float* pa = static_cast<const float*>(a.data_ptr());
  const float* pb = static_cast<const float*>(b.data_ptr());
  float* po = static_cast<float*>(out.data_ptr());
  auto run = [&] {
    for (int64_t i = 0; i < count; ++i, walk.next()) {
      gemm::sgemm(
          m,
          n,
          k,
          {pa + walk[0], sa[sa.size() - 2], sa.back()},
          {pb + walk[1], sb[sb.size() - 2], sb.back()},
          po + i * m * n,
          n,
          false);
    }
  };
  Py_BEGIN_ALLOW_THREADS run();
  Py_END_ALLOW_THREADS* result = std::move(out);
  return true;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  IgnoreFpErrors quiet;
  if (Tensor product; try_gemm(a, b, &product)) {
    return product;
  }
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
