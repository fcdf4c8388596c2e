// Elementwise ops through NumPy's ufuncs (after the direct inner loops of
// inner_loops.cpp where the operands allow), with torch's broadcasting errors.
#include "npgrad/kernels/internal.h"

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "npgrad/kernels/float16.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::kernels {
namespace {

// check() for a NumPy call over operands of these shapes: when they do not
// broadcast, torch's error instead of NumPy's ValueError (only computed on the
// failure path).
PyObject* check_broadcast(
    PyObject* result, std::initializer_list<const Tensor*> operands) {
  if (result == nullptr) {
    auto it = operands.begin();
    Shape shape = (*it)->sizes();
    try {
      for (++it; it != operands.end(); ++it) {
        shape = infer_size(shape, (*it)->sizes());
      }
    } catch (const Error&) {
      PyErr_Clear();
      throw;
    }
    throw_python_error();
  }
  return result;
}

}  // namespace

PyObject* operand(const Tensor& t, ScalarType dtype) {
  if (t.impl()->is_wrapped_number) {
    if (npy_type(dtype) >= NPY_USERDEF) {
      // NumPy treats a Python number as weakly typed only beside its own
      // dtypes: beside bfloat16 a float would promote to float32. The value
      // is stored as torch converts a scalar, in a 0-dim array of dtype.
      Tensor value = scalar_tensor(item(t), dtype, false);
      Py_INCREF(obj(value));
      return obj(value);
    }
    double v = item(t);
    if (is_floating(dtype)) {
      return check(PyFloat_FromDouble(v));
    }
    if (dtype == ScalarType::Bool) {
      return check(PyBool_FromLong(v != 0));
    }
    // As torch converts a scalar to a narrow integer type: wrapped to its
    // width (NumPy 2 would raise for a Python int out of range).
    auto i = static_cast<int64_t>(v);
    switch (dtype) {
      case ScalarType::UInt8:
        i = static_cast<uint8_t>(i);
        break;
      case ScalarType::Int8:
        i = static_cast<int8_t>(i);
        break;
      case ScalarType::Int16:
        i = static_cast<int16_t>(i);
        break;
      case ScalarType::Int32:
        i = static_cast<int32_t>(i);
        break;
      default:
        break;
    }
    return check(PyLong_FromLongLong(i));
  }
  if (t.dtype() == dtype) {
    Py_INCREF(obj(t));
    return obj(t);
  }
  return check(
      PyArray_CastToType(arr(t), PyArray_DescrFromType(npy_type(dtype)), 0));
}

// Note [Reduced floats compute in float32 where torch does]
// NumPy's float16 ufunc loops, and ml_dtypes' bfloat16 ones, convert each
// element to float, compute and round once, which is what torch's CPU kernels
// do for these reduced floats (is_reduced_float), so pointwise ops on them are
// NumPy's. Where npgrad composes a result from several NumPy steps (sigmoid,
// softmax) or NumPy would round between steps (a reduction's partial sums),
// reduced-float inputs are computed in float32 and rounded once at the end,
// as torch accumulates them in float (their opmath_type): otherwise each
// intermediate rounding adds an error of up to 2^-11 (float16) or 2^-8
// (bfloat16). matmul also goes through float32, where NumPy has BLAS.
// Multiplying or dividing by a scalar (a Python number or a 0-dim tensor of
// another dtype as the second operand) is the other case: torch's mul and div
// kernels read the scalar's original value in float, where NumPy would first
// round it to the reduced float (x * 0.1 differs in the last bit for a third
// of all float16 x). torch's add, sub and pow round the scalar to the
// reduced float first, as NumPy does.
namespace {
bool scalar_in_float32(Binary op, const Tensor& b, ScalarType compute) {
  return is_reduced_float(compute) &&
         (op == Binary::Mul || op == Binary::Div) && b.dim() == 0 &&
         b.dtype() != compute;
}

// binary() through the op's NumPy ufunc (or its direct inner loop).
Tensor binary_ufunc(
    Binary op, const Tensor& a, const Tensor& b, ScalarType compute) {
  Tensor fast;
  if (try_binary_loop(op, a, b, compute, nullptr, &fast)) {
    return fast;
  }
  IgnoreFpErrors quiet;
  BufferCacheScope cached(is_large(a) || is_large(b));
  Ref x(operand(a, compute));
  Ref y(operand(b, compute));
  PyObject* args[2] = {x.p, y.p};
  return wrap_array(check_broadcast(
      PyObject_Vectorcall(np_.binary[static_cast<int>(op)], args, 2, nullptr),
      {&a, &b}));
}

// torch's remainder of floats: fmod's remainder, moved by b where its sign
// is not b's. NumPy's computes the same values but gives a zero the sign of
// b (npy_divmod's copysign(0, b)); torch's zero is fmod's, the sign of a.
Tensor float_remainder(const Tensor& a, const Tensor& b, ScalarType compute) {
  Tensor r = binary_ufunc(Binary::Remainder, a, b, compute);
  Tensor zero =
      binary_ufunc(Binary::Eq, r, scalar_tensor(0, compute, true), compute);
  return where(zero, binary_ufunc(Binary::Copysign, r, a, compute), r, compute);
}

bool is_float_remainder(Binary op, ScalarType compute) {
  return op == Binary::Remainder && is_floating(compute);
}
}  // namespace

Tensor binary(Binary op, const Tensor& a, const Tensor& b, ScalarType compute) {
  if (scalar_in_float32(op, b, compute)) {
    return cast(binary(op, a, b, ScalarType::Float32), compute);
  }
  if (is_float_remainder(op, compute)) {
    return float_remainder(a, b, compute);
  }
  return binary_ufunc(op, a, b, compute);
}

void binary_out(
    Binary op, const Tensor& a, const Tensor& b, const Tensor& out) {
  ScalarType compute = out.dtype();
  if (scalar_in_float32(op, b, compute)) {
    copy_into(out, binary(op, a, b, ScalarType::Float32));
    return;
  }
  if (is_float_remainder(op, compute)) {
    // Not in place: the zeros' signs are read from a, which out may be.
    copy_into(out, float_remainder(a, b, compute));
    return;
  }
  if (try_binary_loop(op, a, b, compute, &out, nullptr)) {
    return;
  }
  IgnoreFpErrors quiet;
  Ref x(operand(a, compute));
  Ref y(operand(b, compute));
  PyObject* args[3] = {x.p, y.p, obj(out)};
  Py_XDECREF(check(PyObject_Vectorcall(
      np_.binary[static_cast<int>(op)], args, 2, np_.kw_out)));
}

Tensor binary_with_alpha(
    Binary op,
    const Tensor& a,
    const Tensor& b,
    double alpha,
    ScalarType compute) {
  if (alpha == 1) {
    return binary(op, a, b, compute);
  }
  if (!is_reduced_float(compute)) {
    Tensor scaled = binary(
        Binary::Mul,
        b,
        scalar_tensor(alpha, ScalarType::Float64, true),
        compute);
    return binary(op, a, scaled, compute);
  }
  // See Note [Reduced floats compute in float32 where torch does]: torch
  // rounds alpha to the reduced float, then computes a + alpha * b in float.
  constexpr ScalarType f32 = ScalarType::Float32;
  double rounded = item(scalar_tensor(alpha, compute, true));
  Tensor scaled = binary(
      Binary::Mul,
      cast(b, f32),
      scalar_tensor(rounded, ScalarType::Float64, true),
      f32);
  return cast(binary(op, a, scaled, f32), compute);
}

const UnaryUfunc& unary_ufunc(const char* numpy_name) {
  // Touched with the GIL held (ops run with it); entries are never removed,
  // so references stay valid.
  static auto* found = new std::unordered_map<std::string, UnaryUfunc>();
  auto it = found->find(numpy_name);
  if (it != found->end()) {
    return it->second;
  }
  Ref numpy(check(PyImport_ImportModule("numpy")));
  PyObject* fn = PyObject_GetAttrString(numpy.p, numpy_name);
  if (fn == nullptr) {
    PyErr_Clear();
  }
  // The type is compared by name: npgrad never imports NumPy's ufunc C API.
  bool is_unary_ufunc = fn != nullptr &&
                        std::string(Py_TYPE(fn)->tp_name) == "numpy.ufunc" &&
                        reinterpret_cast<PyUFuncObject*>(fn)->nin == 1;
  if (!is_unary_ufunc) {
    Py_XDECREF(fn);
    throw Error(
        std::string("npgrad: numpy has no one-operand ufunc '") + numpy_name +
        "'");
  }
  UnaryUfunc op;
  op.ufunc = fn;  // the reference is kept for the life of the process
  for (int slot = 0; slot < kLoopDtypes; ++slot) {
    op.loops[slot] = find_inner_loop(fn, loop_slot_type(slot));
  }
  return found->emplace(numpy_name, op).first->second;
}

Tensor unary(const UnaryUfunc& op, const Tensor& a, ScalarType compute) {
  Tensor fast;
  if (try_unary_loop(op, a, compute, nullptr, &fast)) {
    return fast;
  }
  IgnoreFpErrors quiet;
  BufferCacheScope cached(is_large(a));
  Ref x(operand(a, compute));
  PyObject* args[1] = {x.p};
  return wrap_array(check(PyObject_Vectorcall(op.ufunc, args, 1, nullptr)));
}

void unary_out(const UnaryUfunc& op, const Tensor& a, const Tensor& out) {
  if (try_unary_loop(op, a, out.dtype(), &out, nullptr)) {
    return;
  }
  IgnoreFpErrors quiet;
  Ref x(operand(a, out.dtype()));
  PyObject* args[2] = {x.p, obj(out)};
  Py_XDECREF(check(PyObject_Vectorcall(op.ufunc, args, 1, np_.kw_out)));
}

namespace {
// Whether NumPy's result for a (its strides' order, NumPy's K order) is
// C-contiguous: positive strides, non-increasing over the dims of size > 1.
bool in_c_order(const Tensor& a) {
  int64_t last = std::numeric_limits<int64_t>::max();
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.sizes()[d] > 1) {
      int64_t st = a.strides()[d];
      if (st <= 0 || st > last) {
        return false;
      }
      last = st;
    }
  }
  return true;
}
}  // namespace

Tensor sigmoid(const Tensor& a, ScalarType compute) {
  IgnoreFpErrors quiet;
  if (is_reduced_float(compute)) {
    // See Note [Reduced floats compute in float32 where torch does].
    return cast(sigmoid(a, ScalarType::Float32), compute);
  }
  static const UnaryUfunc& absolute = unary_ufunc("absolute");
  static const UnaryUfunc& negative = unary_ufunc("negative");
  static const UnaryUfunc& exp = unary_ufunc("exp");
  if (a.dtype() == compute && a.numel() <= 4096 &&
      !a.impl()->is_wrapped_number && in_c_order(a) &&
      (compute == ScalarType::Float32 || compute == ScalarType::Float64)) {
    // Small inputs: the same steps as below (the exp is NumPy's own inner
    // loop; the rest are single IEEE operations, so the same bits) without
    // seven NumPy calls; a strided view (glu's halves) is copied first. The
    // GIL is held: the size is bounded.
    Tensor x = a.is_contiguous() ? a : cast(a, compute);
    Tensor e = empty(a.sizes(), compute);
    Tensor out = empty(a.sizes(), compute);
    bool ok = false;
    dispatch_floating(compute, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* px = static_cast<const T*>(x.data_ptr());
      T* pe = static_cast<T*>(e.data_ptr());
      int64_t n = a.numel();
      for (int64_t i = 0; i < n; ++i) {
        pe[i] = -std::abs(px[i]);
      }
      ok = try_unary_loop(exp, e, compute, &e, nullptr);
      if (ok) {
        T* po = static_cast<T*>(out.data_ptr());
        for (int64_t i = 0; i < n; ++i) {
          T num = px[i] >= T(0) ? T(1) : pe[i];
          T den = pe[i] + T(1);
          po[i] = num / den;
        }
      }
    });
    if (ok) {
      return out;
    }
  }
  BufferCacheScope cached(is_large(a));
  Ref x(operand(a, compute));
  // Stable form: e = exp(-|x|); sigmoid = where(x >= 0, 1, e) / (1 + e).
  Ref ax(PyObject_CallOneArg(absolute.ufunc, x.p));
  // 0-dim inputs give NumPy scalars; out= below needs arrays.
  Ref neg(PyObject_CallOneArg(negative.ufunc, ax.p));
  Ref e(PyArray_FromAny(neg.p, nullptr, 0, 0, NPY_ARRAY_ENSUREARRAY, nullptr));
  PyObject* exp_args[2] = {e.p, e.p};
  Py_XDECREF(check(PyObject_Vectorcall(exp.ufunc, exp_args, 1, np_.kw_out)));
  Ref zero(PyLong_FromLong(0));
  Ref one(PyLong_FromLong(1));
  PyObject* ge_args[2] = {x.p, zero.p};
  Ref nonneg(PyObject_Vectorcall(
      np_.binary[static_cast<int>(Binary::Ge)], ge_args, 2, nullptr));
  PyObject* where_args[3] = {nonneg.p, one.p, e.p};
  Ref where(PyObject_Vectorcall(np_.where, where_args, 3, nullptr));
  Ref num(
      PyArray_FromAny(where.p, nullptr, 0, 0, NPY_ARRAY_ENSUREARRAY, nullptr));
  PyObject* add_args[3] = {e.p, one.p, e.p};
  Py_XDECREF(check(PyObject_Vectorcall(
      np_.binary[static_cast<int>(Binary::Add)], add_args, 2, np_.kw_out)));
  PyObject* div_args[3] = {num.p, e.p, num.p};
  Py_XDECREF(check(PyObject_Vectorcall(
      np_.binary[static_cast<int>(Binary::Div)], div_args, 2, np_.kw_out)));
  Tensor out = wrap_array(num.release());
  if (out.dtype() != compute) {
    out = cast(out, compute);
  }
  return out;
}

namespace {
template <typename T>
void map_in_place(const Tensor& t, T (*f)(T)) {
  T* data = static_cast<T*>(t.data_ptr());
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    data[i] = f(data[i]);
  }
}
}  // namespace

Tensor unary_map(
    const Tensor& a,
    ScalarType compute,
    float (*f32)(float),
    double (*f64)(double)) {
  // A reduced float reads as float, computes and rounds once, as torch's
  // kernels do.
  ScalarType work = compute == ScalarType::Float64 ? ScalarType::Float64
                                                   : ScalarType::Float32;
  Tensor out = cast(a, work);  // a fresh contiguous array nobody else holds
  if (work == ScalarType::Float64) {
    map_in_place(out, f64);
  } else {
    map_in_place(out, f32);
  }
  return work == compute ? out : cast(out, compute);
}

Tensor where(
    const Tensor& cond, const Tensor& a, const Tensor& b, ScalarType dtype) {
  IgnoreFpErrors quiet;  // casting a float into a reduced float may overflow
  BufferCacheScope cached(is_large(cond) || is_large(a) || is_large(b));
  Ref x(operand(a, dtype));
  Ref y(operand(b, dtype));
  PyObject* args[3] = {obj(cond), x.p, y.p};
  Tensor out = wrap_array(check_broadcast(
      PyObject_Vectorcall(np_.where, args, 3, nullptr), {&cond, &a, &b}));
  return out.dtype() == dtype ? out : cast(out, dtype);
}

}  // namespace npgrad::kernels
