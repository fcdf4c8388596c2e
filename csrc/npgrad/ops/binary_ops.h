#pragma once
// The pointwise binary ops: one entry per op states everything about it (see
// binary_family.h for the fields). Adding an op is an entry here and its name
// in BinaryOps below (and, when NumPy's ufunc is new to npgrad, a row in
// NPGRAD_FORALL_BINARY_UFUNCS); scripts/update_op_stubs.py then writes its
// stubs.

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/nodes/reduced_float_formulas.h"
#include "npgrad/ops/binary_family.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/unary_ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops::binary_ops {

using autograd::div_reusing;
using autograd::mul_reusing;
using autograd::one_minus_reusing;
using autograd::scalar;
using autograd::times;
using kernels::Binary;

// torch's CPU kernels of some float-only ops have no integer version.
inline void floating_only(
    const char* kernel, const Tensor& self, const Tensor& other) {
  ScalarType common = result_type(self, other);
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      is_floating(common),
      "\"",
      kernel,
      "\" not implemented for '",
      scalar_type_name(common),
      "'");
}

struct Add {
  static constexpr const char* name = "add";
  static constexpr const char* node = "AddBackward0";
  static constexpr Binary ufunc = Binary::Add;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static constexpr bool numbers = true;
  static constexpr bool alpha = true;
  static constexpr unsigned self_reads = 0;
  static constexpr unsigned other_reads = 0;
  static Tensor grad_self(const Tensor& grad, const BinaryOperands&) {
    return grad;
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return times(grad, s.alpha);
  }
  static constexpr OpDoc doc = {
      "``input + alpha * other``",
      "[1.0, 2.0]",
      "tensor([11., 22.])",
      "[10.0, 20.0]"};
};

struct Sub {
  static constexpr const char* name = "sub";
  static constexpr const char* node = "SubBackward0";
  static constexpr Binary ufunc = Binary::Sub;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static constexpr bool numbers = true;
  static constexpr bool alpha = true;
  static constexpr unsigned self_reads = 0;
  static constexpr unsigned other_reads = 0;
  static void check(const Tensor& self, const Tensor& other) {
    bool self_bool = self.dtype() == ScalarType::Bool;
    bool other_bool = other.dtype() == ScalarType::Bool;
    NPGRAD_CHECK(
        !(self_bool && other_bool),
        "Subtraction, the `-` operator, with two bool tensors is not "
        "supported. Use the `^` or `logical_xor()` operator instead.");
    NPGRAD_CHECK(
        !self_bool && !other_bool,
        "Subtraction, the `-` operator, with a bool tensor is not supported. "
        "If you are trying to invert a mask, use the `~` or `logical_not()` "
        "operator instead.");
  }
  static Tensor grad_self(const Tensor& grad, const BinaryOperands&) {
    return grad;
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return times(neg(grad), s.alpha);
  }
  static constexpr OpDoc doc = {
      "``input - alpha * other``",
      "[10.0, 20.0]",
      "tensor([ 9., 18.])",
      "[1.0, 2.0]"};
};

struct Mul {
  static constexpr const char* name = "mul";
  static constexpr const char* node = "MulBackward0";
  static constexpr Binary ufunc = Binary::Mul;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static constexpr bool numbers = true;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Other;
  static constexpr unsigned other_reads = Operand::Self;
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return mul_reusing(grad, s.other);
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return mul_reusing(grad, s.self);
  }
  static constexpr OpDoc doc = {
      "The product ``input * other``", "[1.0, 2.0]", "tensor([3., 6.])", "3"};
};

struct Div {
  static constexpr const char* name = "div";
  static constexpr const char* node = "DivBackward0";
  static constexpr Binary ufunc = Binary::Div;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static constexpr bool numbers = true;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Other;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return div_reusing(grad, s.other);
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    // -grad * self / other**2
    return neg(mul(grad, div(div(s.self, s.other), s.other)));
  }
  static constexpr OpDoc doc = {
      "The true quotient ``input / other`` (integers divide in float)",
      "[1.0, 3.0]",
      "tensor([0.5000, 1.5000])",
      "2"};
};

struct Atan2 {
  static constexpr const char* name = "atan2";
  static constexpr const char* node = "Atan2Backward0";
  static constexpr Binary ufunc = Binary::Atan2;
  static constexpr Promotes promotes = Promotes::ToFloat;
  static constexpr bool inplace = true;
  static constexpr bool numbers = false;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Self | Operand::Other;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  // d/dself = other / (self^2 + other^2), d/dother = -self / (...)
  static Tensor squared_norm(const BinaryOperands& s) {
    return add(mul(s.self, s.self), mul(s.other, s.other));
  }
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return mul(grad, div(s.other, squared_norm(s)));
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return mul(grad, div(neg(s.self), squared_norm(s)));
  }
  static constexpr OpDoc doc = {
      "The angle of the point ``(other, input)``, in ``[-pi, pi]``",
      "[1.0, -1.0]",
      "tensor([ 0.7854, -0.7854])",
      "[1.0, 1.0]"};
};

// maximum and minimum share the gradient: the larger (smaller) operand gets
// it, and on ties each gets half (torch's rule).
// `beats(theirs, mine)` is where the other operand wins.
inline Tensor grad_to_winner(
    const Tensor& grad,
    const Tensor& mine,
    const Tensor& theirs,
    Tensor (*beats)(const Tensor&, const Tensor&)) {
  Tensor halved = where(eq(mine, theirs), div(grad, scalar(2)), grad);
  return where(beats(theirs, mine), zeros_like(halved), halved);
}

struct Maximum {
  static constexpr const char* name = "maximum";
  static constexpr const char* node = "MaximumBackward0";
  static constexpr Binary ufunc = Binary::Maximum;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = false;
  static constexpr bool numbers = false;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Self | Operand::Other;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return grad_to_winner(grad, s.self, s.other, gt);
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return grad_to_winner(grad, s.other, s.self, gt);
  }
  static constexpr OpDoc doc = {
      "The larger of ``input`` and ``other`` (NaN if either is)",
      "[1.0, 5.0]",
      "tensor([3., 5.])",
      "[3.0, 2.0]"};
};

struct Minimum {
  static constexpr const char* name = "minimum";
  static constexpr const char* node = "MinimumBackward0";
  static constexpr Binary ufunc = Binary::Minimum;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = false;
  static constexpr bool numbers = false;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Self | Operand::Other;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return grad_to_winner(grad, s.self, s.other, lt);
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return grad_to_winner(grad, s.other, s.self, lt);
  }
  static constexpr OpDoc doc = {
      "The smaller of ``input`` and ``other`` (NaN if either is)",
      "[1.0, 5.0]",
      "tensor([1., 2.])",
      "[3.0, 2.0]"};
};

struct Hypot {
  static constexpr const char* name = "hypot";
  static constexpr const char* node = "HypotBackward0";
  static constexpr Binary ufunc = Binary::Hypot;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static constexpr bool numbers = false;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Self | Operand::Result;
  static constexpr unsigned other_reads = Operand::Other | Operand::Result;
  static void check(const Tensor& self, const Tensor& other) {
    floating_only("hypot_cpu", self, other);
  }
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return mul(grad, div(s.self, s.result));
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return mul(grad, div(s.other, s.result));
  }
  static constexpr OpDoc doc = {
      "The hypotenuse ``sqrt(input**2 + other**2)``",
      "[3.0, 5.0]",
      "tensor([ 5., 13.])",
      "[4.0, 12.0]"};
};

struct Logaddexp {
  static constexpr const char* name = "logaddexp";
  static constexpr const char* node = "LogaddexpBackward0";
  static constexpr Binary ufunc = Binary::Logaddexp;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = false;
  static constexpr bool numbers = false;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Self | Operand::Other;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  static void check(const Tensor& self, const Tensor& other) {
    floating_only("logaddexp_cpu", self, other);
  }
  // d/dself log(e^self + e^other) = 1 / (1 + e^(other - self))
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return div(grad, add(scalar(1), exp(sub(s.other, s.self))));
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return div(grad, add(scalar(1), exp(sub(s.self, s.other))));
  }
  static constexpr OpDoc doc = {
      "``log(exp(input) + exp(other))`` without overflow",
      "[0.0, 10.0]",
      "tensor([ 0.6931, 10.0000])",
      "[0.0, 0.0]"};
};

// fmod and remainder: the gradient of `other` is -grad times the quotient
// rounded as the op rounds (toward zero for fmod, down for remainder).
// Integer division by zero is torch's error (NumPy would give 0).
inline void check_modulo(
    const char* kernel, const Tensor& self, const Tensor& other) {
  ScalarType common = result_type(self, other);
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      common != ScalarType::Bool,
      "\"",
      kernel,
      "\" not implemented for 'Bool'");
  if (!is_floating(common)) {
    Tensor zero = kernels::binary(
        Binary::Eq, other, wrapped_scalar(0, ScalarType::Int64), common);
    NPGRAD_CHECK(
        kernels::item(kernels::any(zero, {}, false, true)) == 0,
        "ZeroDivisionError");
  }
}

// What fmod and remainder share; `Rounding` is the unary entry that rounds
// the quotient in the gradient of `other`.
template <Binary Kernel, typename Rounding>
struct Modulo {
  static constexpr Binary ufunc = Kernel;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = true;
  static constexpr bool numbers = true;
  static constexpr bool number_overload =
      true;  // fmod.Scalar, remainder.Scalar
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = 0;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  static Tensor grad_self(const Tensor& grad, const BinaryOperands&) {
    return grad;
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    return mul(neg(grad), unary<Rounding>(div(s.self, s.other)));
  }
};

struct Fmod : Modulo<Binary::Fmod, unary_ops::Trunc> {
  static constexpr const char* name = "fmod";
  static constexpr const char* node = "FmodBackward1";
  static constexpr const char* number_node = "FmodBackward0";
  static void check(const Tensor& self, const Tensor& other) {
    check_modulo("fmod_cpu", self, other);
  }
  static constexpr OpDoc doc = {
      "The remainder of ``input / other`` rounded toward zero (the sign of "
      "``input``)",
      "[-3.0, 5.0]",
      "tensor([-1.,  1.])",
      "2"};
};

struct Remainder : Modulo<Binary::Remainder, unary_ops::Floor> {
  static constexpr const char* name = "remainder";
  static constexpr const char* node = "RemainderBackward1";
  static constexpr const char* number_node = "RemainderBackward0";
  static constexpr const char* number_self = "aten::remainder";
  static void check(const Tensor& self, const Tensor& other) {
    check_modulo("remainder_cpu", self, other);
  }
  static constexpr OpDoc doc = {
      "The remainder of ``input / other`` rounded down (the sign of "
      "``other``), Python's ``%``",
      "[-3.0, 5.0]",
      "tensor([1., 1.])",
      "2"};
};

// The comparisons and logical ops: bool results, no node. The in-place
// comparisons (eq_) write into self and record a zero-gradient node: `torch_`
// is the prefix of torch's node names (EqBackward0 for a number, EqBackward1
// for a tensor).
#define NPGRAD_BOOL_BINARY(Struct, name_, kernel_, torch_, summary, output) \
  struct Struct {                                                           \
    static constexpr const char* name = name_;                              \
    static constexpr Binary ufunc = Binary::kernel_;                        \
    static constexpr Promotes promotes = Promotes::No;                      \
    static constexpr bool inplace = true;                                   \
    static constexpr bool numbers = true;                                   \
    static constexpr bool number_overload = true;                           \
    static constexpr bool alpha = false;                                    \
    static constexpr const char* inplace_node = torch_ "Backward1";         \
    static constexpr const char* inplace_number_node = torch_ "Backward0";  \
    static constexpr OpDoc doc = {summary, "[1.0, 2.0, 3.0]", output, "2"}; \
  };
NPGRAD_BOOL_BINARY(
    Eq, "eq", Eq, "Eq", "``input == other``", "tensor([False,  True, False])")
NPGRAD_BOOL_BINARY(
    Ne, "ne", Ne, "Ne", "``input != other``", "tensor([ True, False,  True])")
NPGRAD_BOOL_BINARY(
    Lt, "lt", Lt, "Lt", "``input < other``", "tensor([ True, False, False])")
NPGRAD_BOOL_BINARY(
    Le, "le", Le, "Le", "``input <= other``", "tensor([ True,  True, False])")
NPGRAD_BOOL_BINARY(
    Gt, "gt", Gt, "Gt", "``input > other``", "tensor([False, False,  True])")
NPGRAD_BOOL_BINARY(
    Ge, "ge", Ge, "Ge", "``input >= other``", "tensor([False,  True,  True])")
#undef NPGRAD_BOOL_BINARY

// The logical ops take tensors only; nonzero is true.
#define NPGRAD_LOGICAL_BINARY(Struct, name_, kernel_, summary, output) \
  struct Struct {                                                      \
    static constexpr const char* name = name_;                         \
    static constexpr Binary ufunc = Binary::kernel_;                   \
    static constexpr Promotes promotes = Promotes::No;                 \
    static constexpr bool inplace = true;                              \
    static constexpr bool numbers = false;                             \
    static constexpr bool alpha = false;                               \
    static constexpr OpDoc doc = {                                     \
        summary, "[0.0, 1.0, 2.0]", output, "[1.0, 1.0, 0.0]"};        \
  };
NPGRAD_LOGICAL_BINARY(
    LogicalAnd,
    "logical_and",
    LogicalAnd,
    "Both nonzero",
    "tensor([False,  True, False])")
NPGRAD_LOGICAL_BINARY(
    LogicalOr,
    "logical_or",
    LogicalOr,
    "Either nonzero",
    "tensor([True, True, True])")
NPGRAD_LOGICAL_BINARY(
    LogicalXor,
    "logical_xor",
    LogicalXor,
    "Exactly one nonzero",
    "tensor([ True, False,  True])")
#undef NPGRAD_LOGICAL_BINARY

// The backward formulas of tanh and sigmoid as ops of their own, as torch's
// tanh_backward and sigmoid_backward are: under create_graph their nodes
// (TanhBackwardBackward0, SigmoidBackwardBackward0) are what torch records,
// with their own derivatives. Not exposed: torch has no torch.tanh_backward.
struct TanhBackward {
  static constexpr const char* name = "tanh_backward";
  static constexpr const char* node = "TanhBackwardBackward0";
  static constexpr const char* self_name = "grad_output";
  static constexpr const char* other_name = "output";
  static constexpr bool exposed = false;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = false;
  static constexpr bool numbers = false;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Other;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  // grad_output * (1 - output^2), a reduced float through float32 as torch's
  // kernel.
  // The products go into the temporary 1 - output^2, never into grad_output
  // (the node saves it after the kernel).
  static Tensor kernel(
      const Tensor& grad_output, const Tensor& output, ScalarType) {
    return autograd::round_reduced_float_once(
        grad_output, output, [](const Tensor& g, const Tensor& y) {
          return mul_reusing(one_minus_reusing(mul(y, y)), g);
        });
  }
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return tanh_backward(grad, s.other);
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    // grad * (-2 * output * grad_output)
    return mul(grad, mul(mul(scalar(-2), s.other), s.self));
  }
  static constexpr OpDoc doc = {
      "tanh's gradient ``grad_output * (1 - output**2)``",
      "[1.0, 1.0]",
      "tensor([0.7500, 0.0000])",
      "[0.5, 1.0]"};
};

struct SigmoidBackward {
  static constexpr const char* name = "sigmoid_backward";
  static constexpr const char* node = "SigmoidBackwardBackward0";
  static constexpr const char* self_name = "grad_output";
  static constexpr const char* other_name = "output";
  static constexpr bool exposed = false;
  static constexpr Promotes promotes = Promotes::No;
  static constexpr bool inplace = false;
  static constexpr bool numbers = false;
  static constexpr bool alpha = false;
  static constexpr unsigned self_reads = Operand::Other;
  static constexpr unsigned other_reads = Operand::Self | Operand::Other;
  // grad_output * (1 - output) * output, in torch's order. torch's kernel
  // computes bfloat16 in float and rounds once, but rounds float16 after each
  // step (it has no float path for Half). The products go into the temporary
  // 1 - output: one buffer.
  static Tensor kernel(
      const Tensor& grad_output, const Tensor& output, ScalarType) {
    auto formula = [](const Tensor& g, const Tensor& y) {
      Tensor t = rsub(y, 1);
      t = mul_reusing(t, g);
      return mul_reusing(t, y);
    };
    if (grad_output.dtype() == ScalarType::BFloat16) {
      return autograd::round_reduced_float_once(grad_output, output, formula);
    }
    return formula(grad_output, output);
  }
  static Tensor grad_self(const Tensor& grad, const BinaryOperands& s) {
    return sigmoid_backward(grad, s.other);
  }
  static Tensor grad_other(const Tensor& grad, const BinaryOperands& s) {
    // grad * grad_output * (-2 * output + 1)
    return mul(mul(grad, s.self), add(mul(scalar(-2), s.other), scalar(1)));
  }
  static constexpr OpDoc doc = {
      "sigmoid's gradient ``grad_output * (1 - output) * output``",
      "[1.0, 1.0]",
      "tensor([0.2500, 0.0000])",
      "[0.5, 1.0]"};
};

// One op per line, so that adding one is a one-line change here.
// clang-format off
using BinaryOps = OpList<
    Add,
    Sub,
    Mul,
    Div,
    Atan2,
    Maximum,
    Minimum,
    Hypot,
    Logaddexp,
    Fmod,
    Remainder,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    TanhBackward,
    SigmoidBackward>;
// clang-format on

}  // namespace npgrad::ops::binary_ops
