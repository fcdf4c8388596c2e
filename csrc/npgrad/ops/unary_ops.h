#pragma once
// The pointwise unary ops: one entry per op states everything about it (see
// unary_family.h for the fields). Adding an op is an entry here and its name
// in UnaryOps below; scripts/update_op_stubs.py then writes its stubs.

#include <cmath>

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/nodes/reduced_float_formulas.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/unary_family.h"
#include "npgrad/util/error.h"

namespace npgrad::ops::unary_ops {

using autograd::div_reusing;
using autograd::mul_reusing;
using autograd::one_minus_reusing;
using autograd::scalar;

// torch's error for a dtype its kernel has no instantiation for (the rounding
// kernels have none for bool, frac's none for any integer type).
inline void check_kernel_dtype(
    const char* kernel, const Tensor& input, bool supported) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      supported,
      '"',
      kernel,
      "\" not implemented for '",
      scalar_type_name(input.dtype()),
      "'");
}

// The backward of the piecewise-constant ops (sign, floor, ceil, trunc,
// round): torch's formula is zeros_like(grad), so a double backward reaches
// nothing.
inline Tensor zero_gradient(const Tensor& grad) {
  return zeros_like(grad);
}

struct Neg {
  static constexpr const char* name = "neg";
  static constexpr const char* node = "NegBackward0";
  static constexpr const char* ufunc = "negative";
  static constexpr Saves saves = Saves::Nothing;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static void check(const Tensor& input) {
    NPGRAD_CHECK(
        input.dtype() != ScalarType::Bool,
        "Negation, the `-` operator, on a bool tensor is not supported. If "
        "you are trying to invert a mask, use the `~` or `logical_not()` "
        "operator instead.");
  }
  static Tensor backward(const Tensor& grad, const Tensor&) {
    return neg(grad);
  }
  static constexpr OpDoc doc = {
      "The negation ``-x``", "[1.0, -2.0]", "tensor([-1.,  2.])"};
};

struct Reciprocal {
  static constexpr const char* name = "reciprocal";
  static constexpr const char* node = "ReciprocalBackward0";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    return kernels::binary(kernels::Binary::Div, scalar(1), input, compute);
  }
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    return mul(neg(grad), mul(result, result));
  }
  static constexpr OpDoc doc = {
      "``1 / x``", "[2.0, 4.0]", "tensor([0.5000, 0.2500])"};
};

struct Exp {
  static constexpr const char* name = "exp";
  static constexpr const char* node = "ExpBackward0";
  static constexpr const char* ufunc = "exp";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    return mul_reusing(grad, result);
  }
  static constexpr OpDoc doc = {
      "The exponential ``e ** x``", "[0.0, 1.0]", "tensor([1.0000, 2.7183])"};
};

struct Log {
  static constexpr const char* name = "log";
  static constexpr const char* node = "LogBackward0";
  static constexpr const char* ufunc = "log";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return div_reusing(grad, self);
  }
  static constexpr OpDoc doc = {
      "The natural logarithm", "[1.0, 2.0]", "tensor([0.0000, 0.6931])"};
};

struct Sin {
  static constexpr const char* name = "sin";
  static constexpr const char* node = "SinBackward0";
  static constexpr const char* ufunc = "sin";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return mul_reusing(grad, cos(self));
  }
  static constexpr OpDoc doc = {
      "The sine", "[0.0, 1.0]", "tensor([0.0000, 0.8415])"};
};

struct Cos {
  static constexpr const char* name = "cos";
  static constexpr const char* node = "CosBackward0";
  static constexpr const char* ufunc = "cos";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return mul_reusing(grad, neg(sin(self)));
  }
  static constexpr OpDoc doc = {
      "The cosine", "[0.0, 1.0]", "tensor([1.0000, 0.5403])"};
};

struct Tanh {
  static constexpr const char* name = "tanh";
  static constexpr const char* node = "TanhBackward0";
  static constexpr const char* ufunc = "tanh";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    return tanh_backward(grad, result);
  }
  static constexpr OpDoc doc = {
      "The hyperbolic tangent", "[0.0, 1.0]", "tensor([0.0000, 0.7616])"};
};

struct Sigmoid {
  static constexpr const char* name = "sigmoid";
  static constexpr const char* node = "SigmoidBackward0";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    return kernels::sigmoid(input, compute);
  }
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    return sigmoid_backward(grad, result);
  }
  static constexpr OpDoc doc = {
      "The logistic sigmoid ``1 / (1 + exp(-x))``",
      "[0.0, 2.0]",
      "tensor([0.5000, 0.8808])"};
};

struct Relu {
  static constexpr const char* name = "relu";
  static constexpr const char* node = "ReluBackward0";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    return kernels::binary(
        kernels::Binary::Maximum,
        input,
        wrapped_scalar(0, ScalarType::Int64),
        compute);
  }
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    return threshold_backward(grad, result, 0);
  }
  static constexpr OpDoc doc = {
      "``max(x, 0)``", "[-1.0, 2.0]", "tensor([0., 2.])"};
};

struct Abs {
  static constexpr const char* name = "abs";
  static constexpr const char* node = "AbsBackward0";
  static constexpr const char* ufunc = "absolute";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return mul(grad, sgn(self));
  }
  static constexpr OpDoc doc = {
      "The absolute value", "[-1.5, 2.0]", "tensor([1.5000, 2.0000])"};
};

struct Sqrt {
  static constexpr const char* name = "sqrt";
  static constexpr const char* node = "SqrtBackward0";
  static constexpr const char* ufunc = "sqrt";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    return div_reusing(grad, mul(result, scalar(2)));
  }
  static constexpr OpDoc doc = {
      "The square root", "[4.0, 9.0]", "tensor([2., 3.])"};
};

struct Log1p {
  static constexpr const char* name = "log1p";
  static constexpr const char* node = "Log1PBackward0";
  static constexpr const char* ufunc = "log1p";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return div(grad, add(self, scalar(1)));
  }
  static constexpr OpDoc doc = {
      "The natural logarithm of ``1 + x``, accurate for small ``x``",
      "[0.0, 1.0]",
      "tensor([0.0000, 0.6931])"};
};

struct Expm1 {
  static constexpr const char* name = "expm1";
  static constexpr const char* node = "Expm1Backward0";
  static constexpr const char* ufunc = "expm1";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    return mul(grad, add(result, scalar(1)));
  }
  static constexpr OpDoc doc = {
      "``e ** x - 1``, accurate for small ``x``",
      "[0.0, 1.0]",
      "tensor([0.0000, 1.7183])"};
};

struct Erf {
  static constexpr const char* name = "erf";
  static constexpr const char* node = "ErfBackward0";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  // NumPy has no erf ufunc: the C library's, element by element.
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    return kernels::unary_map(
        input,
        compute,
        [](float x) { return std::erf(x); },
        [](double x) { return std::erf(x); });
  }
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    // d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2)
    Tensor density = exp(neg(mul(self, self)));
    return mul(grad, mul(scalar(2.0 / std::sqrt(M_PI)), density));
  }
  static constexpr OpDoc doc = {
      "The error function", "[0.0, 1.0]", "tensor([0.0000, 0.8427])"};
};

struct Exp2 {
  static constexpr const char* name = "exp2";
  static constexpr const char* node = "Exp2Backward0";
  static constexpr const char* ufunc = "exp2";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    // d/dx 2^x = 2^x * ln 2, in torch's order (grad * result * ln 2).
    return mul(mul(grad, result), scalar(M_LN2));
  }
  static constexpr OpDoc doc = {
      "The base-2 exponential ``2 ** x``", "[0.0, 3.0]", "tensor([1., 8.])"};
};

struct Log2 {
  static constexpr const char* name = "log2";
  static constexpr const char* node = "Log2Backward0";
  static constexpr const char* ufunc = "log2";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return div(grad, mul(self, scalar(M_LN2)));
  }
  static constexpr OpDoc doc = {
      "The base-2 logarithm", "[1.0, 8.0]", "tensor([0., 3.])"};
};

struct Log10 {
  static constexpr const char* name = "log10";
  static constexpr const char* node = "Log10Backward0";
  static constexpr const char* ufunc = "log10";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return div(grad, mul(self, scalar(M_LN10)));
  }
  // The example avoids 100: NumPy's AVX-512 float32 log10 gives 2.0000002
  // there (torch: 2.), so the printed result would depend on the CPU.
  static constexpr OpDoc doc = {
      "The base-10 logarithm", "[1.0, 10.0]", "tensor([0., 1.])"};
};

struct Rsqrt {
  static constexpr const char* name = "rsqrt";
  static constexpr const char* node = "RsqrtBackward0";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  // NumPy has no rsqrt ufunc; torch's kernel is 1 / sqrt(x) (one rounding of
  // a reduced float, which computes in float).
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    return kernels::unary_map(
        input,
        compute,
        [](float x) { return 1.0f / std::sqrt(x); },
        [](double x) { return 1.0 / std::sqrt(x); });
  }
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    // d/dx x^(-1/2) = -1/2 * x^(-3/2) = -1/2 * result^3
    return mul(mul(scalar(-0.5), grad), pow(result, 3));
  }
  static constexpr OpDoc doc = {
      "The reciprocal of the square root ``1 / sqrt(x)``",
      "[4.0, 0.25]",
      "tensor([0.5000, 2.0000])"};
};

struct Atan {
  static constexpr const char* name = "atan";
  static constexpr const char* node = "AtanBackward0";
  static constexpr const char* ufunc = "arctan";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return div(grad, add(pow(self, 2), scalar(1)));
  }
  static constexpr OpDoc doc = {
      "The arctangent", "[0.0, 1.0]", "tensor([0.0000, 0.7854])"};
};

struct Asin {
  static constexpr const char* name = "asin";
  static constexpr const char* node = "AsinBackward0";
  static constexpr const char* ufunc = "arcsin";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    // d/dx asin(x) = 1 / sqrt(1 - x^2)
    return mul(grad, rsqrt(add(mul(neg(self), self), scalar(1))));
  }
  static constexpr OpDoc doc = {
      "The arcsine", "[0.0, 1.0]", "tensor([0.0000, 1.5708])"};
};

struct Acos {
  static constexpr const char* name = "acos";
  static constexpr const char* node = "AcosBackward0";
  static constexpr const char* ufunc = "arccos";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    // d/dx acos(x) = -1 / sqrt(1 - x^2)
    return mul(grad, neg(rsqrt(add(mul(neg(self), self), scalar(1)))));
  }
  static constexpr OpDoc doc = {
      "The arccosine", "[0.0, 1.0]", "tensor([1.5708, 0.0000])"};
};

struct Sinh {
  static constexpr const char* name = "sinh";
  static constexpr const char* node = "SinhBackward0";
  static constexpr const char* ufunc = "sinh";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return mul(grad, cosh(self));
  }
  static constexpr OpDoc doc = {
      "The hyperbolic sine", "[0.0, 1.0]", "tensor([0.0000, 1.1752])"};
};

struct Cosh {
  static constexpr const char* name = "cosh";
  static constexpr const char* node = "CoshBackward0";
  static constexpr const char* ufunc = "cosh";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    return mul(grad, sinh(self));
  }
  static constexpr OpDoc doc = {
      "The hyperbolic cosine", "[0.0, 1.0]", "tensor([1.0000, 1.5431])"};
};

struct Tan {
  static constexpr const char* name = "tan";
  static constexpr const char* node = "TanBackward0";
  static constexpr const char* ufunc = "tan";
  static constexpr Saves saves = Saves::Result;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static Tensor backward(const Tensor& grad, const Tensor& result) {
    // d/dx tan(x) = 1 + tan(x)^2
    return mul(grad, add(pow(result, 2), scalar(1)));
  }
  static constexpr OpDoc doc = {
      "The tangent", "[0.0, 1.0]", "tensor([0.0000, 1.5574])"};
};

struct Erfc {
  static constexpr const char* name = "erfc";
  static constexpr const char* node = "ErfcBackward0";
  static constexpr Saves saves = Saves::Self;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  // NumPy has no erfc ufunc (and 1 - erf(x) loses the small tail values):
  // the C library's, element by element.
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    return kernels::unary_map(
        input,
        compute,
        [](float x) { return std::erfc(x); },
        [](double x) { return std::erfc(x); });
  }
  static Tensor backward(const Tensor& grad, const Tensor& self) {
    // d/dx erfc(x) = -2 / sqrt(pi) * exp(-x^2)
    Tensor density = exp(neg(pow(self, 2)));
    return mul(mul(scalar(-2.0 / std::sqrt(M_PI)), density), grad);
  }
  static constexpr OpDoc doc = {
      "The complementary error function ``1 - erf(x)``",
      "[0.0, 1.0]",
      "tensor([1.0000, 0.1573])"};
};

struct Sign {
  static constexpr const char* name = "sign";
  static constexpr const char* node = "SignBackward0";
  static constexpr Saves saves = Saves::Nothing;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  // torch's sign is (0 < x) - (x < 0): NaN gives 0 where numpy.sign gives
  // NaN, and numpy.sign has no bool loop (torch's sign of a bool is itself).
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    if (compute == ScalarType::Bool) {
      return kernels::cast(input, compute);
    }
    Tensor zero = wrapped_scalar(0, ScalarType::Int64);
    Tensor positive =
        kernels::binary(kernels::Binary::Gt, input, zero, compute);
    Tensor negative =
        kernels::binary(kernels::Binary::Lt, input, zero, compute);
    return kernels::binary(kernels::Binary::Sub, positive, negative, compute);
  }
  static Tensor backward(const Tensor& grad, const Tensor&) {
    return zero_gradient(grad);
  }
  static constexpr OpDoc doc = {
      "The sign: -1, 0 or 1", "[-2.0, 0.0, 3.0]", "tensor([-1.,  0.,  1.])"};
};

struct Floor {
  static constexpr const char* name = "floor";
  static constexpr const char* node = "FloorBackward0";
  static constexpr const char* ufunc = "floor";
  static constexpr Saves saves = Saves::Nothing;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static void check(const Tensor& input) {
    check_kernel_dtype(
        "floor_vml_cpu", input, input.dtype() != ScalarType::Bool);
  }
  static Tensor backward(const Tensor& grad, const Tensor&) {
    return zero_gradient(grad);
  }
  static constexpr OpDoc doc = {
      "Rounds down to an integer", "[-1.5, 1.5]", "tensor([-2.,  1.])"};
};

struct Ceil {
  static constexpr const char* name = "ceil";
  static constexpr const char* node = "CeilBackward0";
  static constexpr const char* ufunc = "ceil";
  static constexpr Saves saves = Saves::Nothing;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static void check(const Tensor& input) {
    check_kernel_dtype(
        "ceil_vml_cpu", input, input.dtype() != ScalarType::Bool);
  }
  static Tensor backward(const Tensor& grad, const Tensor&) {
    return zero_gradient(grad);
  }
  static constexpr OpDoc doc = {
      "Rounds up to an integer", "[-1.5, 1.5]", "tensor([-1.,  2.])"};
};

struct Trunc {
  static constexpr const char* name = "trunc";
  static constexpr const char* node = "TruncBackward0";
  static constexpr const char* ufunc = "trunc";
  static constexpr Saves saves = Saves::Nothing;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static void check(const Tensor& input) {
    check_kernel_dtype(
        "trunc_vml_cpu", input, input.dtype() != ScalarType::Bool);
  }
  static Tensor backward(const Tensor& grad, const Tensor&) {
    return zero_gradient(grad);
  }
  static constexpr OpDoc doc = {
      "Rounds toward zero to an integer", "[-1.5, 1.5]", "tensor([-1.,  1.])"};
};

struct Round {
  static constexpr const char* name = "round";
  static constexpr const char* node = "RoundBackward0";
  static constexpr Saves saves = Saves::Nothing;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static void check(const Tensor& input) {
    check_kernel_dtype(
        "round_vml_cpu", input, input.dtype() != ScalarType::Bool);
  }
  // Halves go to the even neighbour, as torch's (and numpy.rint's) do; an
  // integer tensor is copied (numpy.rint would make it float64).
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    if (!is_floating(compute)) {
      return kernels::cast(input, compute);
    }
    static const kernels::UnaryUfunc& rint = kernels::unary_ufunc("rint");
    return kernels::unary(rint, input, compute);
  }
  static Tensor backward(const Tensor& grad, const Tensor&) {
    return zero_gradient(grad);
  }
  static constexpr OpDoc doc = {
      "Rounds to the nearest integer, halves to even",
      "[0.5, 1.5, -2.7]",
      "tensor([ 0.,  2., -3.])"};
};

struct Frac {
  static constexpr const char* name = "frac";
  static constexpr const char* node = "FracBackward0";
  static constexpr Saves saves = Saves::Nothing;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static void check(const Tensor& input) {
    check_kernel_dtype("frac_cpu", input, is_floating(input.dtype()));
  }
  // x - trunc(x), as torch computes it (so frac(inf) is NaN, where
  // numpy.modf gives 0).
  static Tensor kernel(const Tensor& input, ScalarType compute) {
    static const kernels::UnaryUfunc& trunc = kernels::unary_ufunc("trunc");
    return kernels::binary(
        kernels::Binary::Sub,
        input,
        kernels::unary(trunc, input, compute),
        compute);
  }
  static Tensor backward(const Tensor& grad, const Tensor&) {
    // d/dx (x - trunc(x)) = 1 almost everywhere: torch passes grad through.
    return grad;
  }
  static constexpr OpDoc doc = {
      "The fractional part ``x - trunc(x)``",
      "[-1.25, 2.5]",
      "tensor([-0.2500,  0.5000])"};
};

// The tests of a value: bool results, no node (see unary_family.h).
#define NPGRAD_BOOL_UNARY(                                   \
    Struct, name_, ufunc_, inplace_, summary, input, output) \
  struct Struct {                                            \
    static constexpr const char* name = name_;               \
    static constexpr const char* ufunc = ufunc_;             \
    static constexpr bool inplace = inplace_;                \
    static constexpr OpDoc doc = {summary, input, output};   \
  };
NPGRAD_BOOL_UNARY(
    LogicalNot,
    "logical_not",
    "logical_not",
    true,
    "Whether each element is zero (``not x``)",
    "[True, False]",
    "tensor([False,  True])")
NPGRAD_BOOL_UNARY(
    Isnan,
    "isnan",
    "isnan",
    false,
    "Whether each element is NaN",
    "[1.0, float('nan'), float('inf')]",
    "tensor([False,  True, False])")
NPGRAD_BOOL_UNARY(
    Isinf,
    "isinf",
    "isinf",
    false,
    "Whether each element is positive or negative infinity",
    "[1.0, float('nan'), float('-inf')]",
    "tensor([False, False,  True])")
NPGRAD_BOOL_UNARY(
    Isfinite,
    "isfinite",
    "isfinite",
    false,
    "Whether each element is finite (not NaN, not infinite)",
    "[1.0, float('nan'), float('inf')]",
    "tensor([ True, False, False])")
#undef NPGRAD_BOOL_UNARY

// One op per line, so that adding one is a one-line change here.
// clang-format off
using UnaryOps = OpList<
    Neg,
    Reciprocal,
    Exp,
    Log,
    Sin,
    Cos,
    Tanh,
    Sigmoid,
    Relu,
    Abs,
    Sqrt,
    Log1p,
    Expm1,
    Erf,
    Exp2,
    Log2,
    Log10,
    Rsqrt,
    Atan,
    Asin,
    Acos,
    Sinh,
    Cosh,
    Tan,
    Erfc,
    Sign,
    Floor,
    Ceil,
    Trunc,
    Round,
    Frac,
    LogicalNot,
    Isnan,
    Isinf,
    Isfinite>;
// clang-format on

}  // namespace npgrad::ops::unary_ops
