#pragma once
// The activation ops: pointwise ops of one tensor with scalar parameters.
// One entry per op states everything about it (see activation_family.h for
// the fields). torch.nn.functional's activations are these, or composites
// of them and of the other tables' ops (python/npgrad/nn/functional.py).

#include <cmath>
#include <limits>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/ops/activation_family.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/unary_ops.h"

namespace npgrad::ops::activation_ops {

using autograd::scalar;

// x where mask, else 0, in x's dtype.
inline Tensor keep_where(const Tensor& mask, const Tensor& x) {
  return where(mask, x, zeros_like(x));
}

// mask (a bool tensor) as 0/1 in like's dtype: torch's mask.type_as(grad).
inline Tensor as_dtype_of(const Tensor& mask, const Tensor& like) {
  return to_dtype(mask, like.dtype());
}

// t, but 0 where -lambd <= x <= lambd: the shrinks' mask, as torch's
// kernels test it (a nan x keeps t).
inline Tensor keep_beyond(const Tensor& x, double lambd, const Tensor& t) {
  return where(le(abs(x), scalar(lambd)), zeros_like(t), t);
}

struct LeakyRelu {
  static constexpr const char* name = "leaky_relu";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "LeakyReluBackward0";
  static constexpr const char* inplace_node = "LeakyReluBackward1";
  static constexpr const char* backward_node = "LeakyReluBackwardBackward0";
  static constexpr Inplace inplace = Inplace::SavesResult;
  static constexpr const char* cpu_kernel = "leaky_relu_cpu";
  static constexpr std::array<Param, 1> params = {{{"negative_slope", 0.01}}};
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    return ops::where(gt(x, scalar(0)), x, mul(x, scalar(p[0])));
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return ops::where(gt(self, scalar(0)), grad, mul(grad, scalar(p[0])));
  }
  static Tensor backward_from_result(
      const Tensor& grad, const Tensor& result, const ParamValues& p) {
    return backward(grad, result, p);
  }
  static constexpr OpDoc doc = {
      "``x`` where positive, else ``negative_slope * x``",
      "[-2.0, 3.0]",
      "tensor([-0.0200,  3.0000])"};
};

// elu's negative side: scale * alpha * (exp(x * input_scale) - 1).
struct Elu {
  static constexpr const char* name = "elu";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "EluBackward0";
  static constexpr const char* inplace_node = "EluBackward1";
  static constexpr const char* backward_node = "EluBackwardBackward0";
  static constexpr bool backward_is_result_arg = true;
  static constexpr Inplace inplace = Inplace::SavesResult;
  static constexpr const char* cpu_kernel = "elu_cpu";
  static constexpr std::array<Param, 3> params = {
      {{"alpha", 1}, {"scale", 1}, {"input_scale", 1}}};
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    Tensor negative = mul(expm1_of(mul(x, scalar(p[2]))), scalar(p[0] * p[1]));
    return ops::where(gt(x, scalar(0)), mul(x, scalar(p[1])), negative);
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    // torch's elu_backward takes the negative branch where self <= 0 (a nan
    // takes the positive one).
    Tensor negative = mul(
        grad, mul(exp(mul(self, scalar(p[2]))), scalar(p[0] * p[1] * p[2])));
    return ops::where(le(self, scalar(0)), negative, mul(grad, scalar(p[1])));
  }
  template <typename T>
  static T value(T x, const ParamValues& p) {
    return x > 0 ? x * T(p[1]) : std::expm1(x * T(p[2])) * T(p[0] * p[1]);
  }
  template <typename T>
  static T derivative(T grad, T self, const ParamValues& p) {
    return self <= 0
               ? grad * (std::exp(self * T(p[2])) * T(p[0] * p[1] * p[2]))
               : grad * T(p[1]);
  }
  static Tensor backward_from_result(
      const Tensor& grad, const Tensor& result, const ParamValues& p) {
    // exp(x * input_scale) * scale * alpha = result + scale * alpha
    Tensor negative =
        mul(grad, mul(add(result, scalar(p[0] * p[1])), scalar(p[2])));
    return ops::where(le(result, scalar(0)), negative, mul(grad, scalar(p[1])));
  }
  // torch's elu_double_backward: from the result, grad * grad_output *
  // input_scale where negative; from the input, elu_backward of that
  // product where negative.
  static Tensor double_backward(
      const Tensor& grad,
      const Tensor& grad_output,
      const Tensor& self_or_result,
      const ParamValues& p,
      bool is_result) {
    Tensor negative = as_dtype_of(lt(self_or_result, scalar(0)), grad);
    Tensor scaled = mul(mul(grad, grad_output), scalar(p[2]));
    if (is_result) {
      return mul(scaled, negative);
    }
    return mul(
        activation_backward<Elu>(scaled, self_or_result, p, false, Tensor()),
        negative);
  }
  static Tensor expm1_of(const Tensor& x) { return unary<unary_ops::Expm1>(x); }
  static constexpr OpDoc doc = {
      "``scale * x`` where positive, else ``scale * alpha * (exp(x * "
      "input_scale) - 1)``",
      "[-1.0, 2.0]",
      "tensor([-0.6321,  2.0000])"};
};

struct Celu {
  static constexpr const char* name = "celu";
  static constexpr Where binding = Where::Torch;
  static constexpr const char* node = "CeluBackward0";
  static constexpr const char* inplace_node = "CeluBackward1";
  static constexpr Inplace inplace = Inplace::SavesResult;
  static constexpr const char* cpu_kernel = "elu_cpu";
  static constexpr std::array<Param, 1> params = {{{"alpha", 1}}};
  static void check(const Tensor&, const ParamValues& p) {
    NPGRAD_CHECK(p[0] != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  }
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    return Elu::forward(x, {p[0], 1, 1 / p[0]});
  }
  template <typename T>
  static T value(T x, const ParamValues& p) {
    return Elu::value(x, {p[0], 1, 1 / p[0]});
  }

  // torch's celu differentiates through elu_backward: its node is
  // EluBackwardBackward0 (with input_scale 1 / alpha).
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return activation_backward<Elu>(
        grad, self, {p[0], 1, 1 / p[0]}, false, Tensor());
  }
  static Tensor backward_from_result(
      const Tensor& grad, const Tensor& result, const ParamValues& p) {
    return activation_backward<Elu>(
        grad, result, {p[0], 1, 1 / p[0]}, true, Tensor());
  }
  static constexpr OpDoc doc = {
      "``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``",
      "[-1.0, 2.0]",
      "tensor([-0.6321,  2.0000])"};
};

struct Gelu {
  static constexpr const char* name = "gelu";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "GeluBackward0";
  static constexpr const char* backward_node = "GeluBackwardBackward0";
  static constexpr Inplace inplace = Inplace::None;
  static constexpr const char* cpu_kernel = "GeluKernelImpl";
  static constexpr std::array<Param, 1> params = {
      {{"approximate", 0, true, ParamKind::Choice}}};
  static constexpr std::array<const char*, 2> choices = {"none", "tanh"};
  static constexpr const char* choice_error =
      "approximate argument must be either none or tanh.";
  static constexpr double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5;  // sqrt(2/pi)
  static constexpr double kKappa = 0.044715;
  // tanh(sqrt(2/pi) * (x + 0.044715 * x^3))
  static Tensor tanh_inner(const Tensor& x) {
    Tensor cube = mul(mul(x, x), x);
    return tanh(mul(add(x, mul(cube, scalar(kKappa))), scalar(kBeta)));
  }
  // The normal distribution's cdf
  static Tensor cdf(const Tensor& x) {
    Tensor e = unary<unary_ops::Erf>(mul(x, scalar(M_SQRT1_2)));
    return mul(add(e, scalar(1)), scalar(0.5));
  }
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    if (p[0] == 1) {
      return mul(mul(x, scalar(0.5)), add(tanh_inner(x), scalar(1)));
    }
    return mul(x, cdf(x));
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    if (p[0] == 1) {
      // 0.5 * (1 + t) + 0.5 * x * (1 - t^2) * beta * (1 + 3 kappa x^2)
      Tensor t = tanh_inner(self);
      Tensor inner_grad =
          mul(add(mul(mul(self, self), scalar(3 * kKappa)), scalar(1)),
              scalar(kBeta));
      Tensor sech2 = rsub(mul(t, t), 1);
      Tensor d =
          add(mul(add(t, scalar(1)), scalar(0.5)),
              mul(mul(mul(self, scalar(0.5)), sech2), inner_grad));
      return mul(grad, d);
    }
    // cdf(x) + x * pdf(x)
    Tensor pdf =
        mul(exp(mul(mul(self, self), scalar(-0.5))),
            scalar(M_2_SQRTPI * M_SQRT1_2 * 0.5));
    return mul(grad, add(cdf(self), mul(self, pdf)));
  }
  template <typename T>
  static T cdf_of(T x) {
    return (std::erf(x * T(M_SQRT1_2)) + T(1)) * T(0.5);
  }
  template <typename T>
  static T tanh_inner_of(T x) {
    return std::tanh((x + ((x * x) * x) * T(kKappa)) * T(kBeta));
  }
  template <typename T>
  static T value(T x, const ParamValues& p) {
    if (p[0] == 1) {
      return (x * T(0.5)) * (tanh_inner_of(x) + T(1));
    }
    return x * cdf_of(x);
  }
  template <typename T>
  static T derivative(T grad, T x, const ParamValues& p) {
    if (p[0] == 1) {
      T t = tanh_inner_of(x);
      T inner_grad = ((x * x) * T(3 * kKappa) + T(1)) * T(kBeta);
      T sech2 = T(1) - t * t;
      T d = (t + T(1)) * T(0.5) + ((x * T(0.5)) * sech2) * inner_grad;
      return grad * d;
    }
    T pdf =
        std::exp((x * x) * T(-0.5)) * T(M_2_SQRTPI * M_SQRT1_2 * 0.5);
    return grad * (cdf_of(x) + x * pdf);
  }
  // grad * grad_output * gelu''(x): pdf(x) * (2 - x^2) for the exact form;
  // for tanh's, with t = tanh(u), u = beta * (x + kappa x^3):
  // (1 - t^2) * (u' + x / 2 * (u'' - 2 t u'^2)).
  static Tensor double_backward(
      const Tensor& grad,
      const Tensor& grad_output,
      const Tensor& self,
      const ParamValues& p,
      bool) {
    Tensor x2 = mul(self, self);
    Tensor second;
    if (p[0] == 1) {
      Tensor t = tanh_inner(self);
      Tensor du =
          mul(add(mul(x2, scalar(3 * kKappa)), scalar(1)), scalar(kBeta));
      Tensor ddu = mul(self, scalar(6 * kKappa * kBeta));
      Tensor inner = sub(ddu, mul(mul(t, scalar(2)), mul(du, du)));
      second =
          mul(rsub(mul(t, t), 1), add(du, mul(mul(self, scalar(0.5)), inner)));
    } else {
      Tensor pdf =
          mul(exp(mul(x2, scalar(-0.5))), scalar(M_2_SQRTPI * M_SQRT1_2 * 0.5));
      second = mul(pdf, rsub(x2, 2));
    }
    return mul(mul(grad, grad_output), second);
  }
  static constexpr OpDoc doc = {
      "``x * Phi(x)``, Phi the standard normal distribution's cdf (or its "
      "tanh approximation)",
      "[-1.0, 1.0]",
      "tensor([-0.1587,  0.8413])"};
};

struct Silu {
  static constexpr const char* name = "silu";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "SiluBackward0";
  static constexpr Inplace inplace = Inplace::SavesSelf;
  static constexpr const char* cpu_kernel = "silu_cpu";
  static constexpr std::array<Param, 0> params = {};
  static Tensor forward(const Tensor& x, const ParamValues&) {
    return mul(x, sigmoid(x));
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues&) {
    // s * (1 + x * (1 - s))
    Tensor s = sigmoid(self);
    return mul(grad, mul(s, add(mul(self, rsub(s, 1)), scalar(1))));
  }
  static constexpr OpDoc doc = {
      "``x * sigmoid(x)``", "[-1.0, 1.0]", "tensor([-0.2689,  0.7311])"};
};

// log(1 + exp(beta * x)) / beta, computed as torch does: x itself where
// beta * x exceeds threshold.
struct Softplus {
  static constexpr const char* name = "softplus";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "SoftplusBackward0";
  static constexpr const char* backward_node = "SoftplusBackwardBackward0";
  static constexpr Inplace inplace = Inplace::None;
  static constexpr const char* cpu_kernel = "softplus_cpu";
  static constexpr std::array<Param, 2> params = {
      {{"beta", 1}, {"threshold", 20}}};
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    Tensor bx = mul(x, scalar(p[0]));
    Tensor soft = div(unary<unary_ops::Log1p>(exp(bx)), scalar(p[0]));
    return ops::where(gt(bx, scalar(p[1])), x, soft);
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    Tensor bx = mul(self, scalar(p[0]));
    return ops::where(gt(bx, scalar(p[1])), grad, mul(grad, sigmoid(bx)));
  }
  // torch's softplus_double_backward: sigmoid_backward(grad * grad_output,
  // sigmoid(beta x)) * beta where beta x < threshold.
  static Tensor double_backward(
      const Tensor& grad,
      const Tensor& grad_output,
      const Tensor& self,
      const ParamValues& p,
      bool) {
    Tensor bx = mul(self, scalar(p[0]));
    Tensor d = sigmoid_backward(mul(grad, grad_output), sigmoid(bx));
    return mul(mul(d, as_dtype_of(lt(bx, scalar(p[1])), grad)), scalar(p[0]));
  }
  static constexpr OpDoc doc = {
      "``log(1 + exp(beta * x)) / beta``, ``x`` where ``beta * x > "
      "threshold``",
      "[0.0, 30.0]",
      "tensor([ 0.6931, 30.0000])"};
};

struct Mish {
  static constexpr const char* name = "mish";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "MishBackward0";
  static constexpr Inplace inplace = Inplace::SavesSelf;
  static constexpr const char* cpu_kernel = "mish_cpu";
  static constexpr std::array<Param, 0> params = {};
  static Tensor forward(const Tensor& x, const ParamValues&) {
    return mul(x, tanh(Softplus::forward(x, {1, 20})));
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues&) {
    // t + x * sigmoid(x) * (1 - t^2), t = tanh(softplus(x))
    Tensor t = tanh(Softplus::forward(self, {1, 20}));
    Tensor sech2 = rsub(mul(t, t), 1);
    return mul(grad, add(t, mul(mul(self, sigmoid(self)), sech2)));
  }
  static constexpr OpDoc doc = {
      "``x * tanh(softplus(x))``", "[-1.0, 1.0]", "tensor([-0.3034,  0.8651])"};
};

struct Hardtanh {
  static constexpr const char* name = "hardtanh";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "HardtanhBackward0";
  static constexpr const char* backward_node = "HardtanhBackwardBackward0";
  static constexpr Inplace inplace = Inplace::SavesSelf;
  static constexpr std::array<Param, 2> params = {
      {{"min_val", -1}, {"max_val", 1}}};
  static void check(const Tensor& input, const ParamValues&) {
    NPGRAD_CHECK(
        input.dtype() != ScalarType::Bool,
        "Bool inputs not supported for hardtanh");
  }
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    return clamp(x, p[0], p[1]);
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return keep_where(
        logical_and(gt(self, scalar(p[0])), lt(self, scalar(p[1]))), grad);
  }
  static constexpr OpDoc doc = {
      "``x`` clamped to ``[min_val, max_val]``",
      "[-2.0, 0.5]",
      "tensor([-1.0000,  0.5000])"};
};

struct Hardsigmoid {
  static constexpr const char* name = "hardsigmoid";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "HardsigmoidBackward0";
  static constexpr Inplace inplace = Inplace::SavesSelf;
  static constexpr const char* cpu_kernel = "hardsigmoid_cpu";
  static constexpr std::array<Param, 0> params = {};
  static Tensor forward(const Tensor& x, const ParamValues&) {
    return div(clamp(add(x, scalar(3)), 0.0, 6.0), scalar(6));
  }
  // torch has no derivative of hardsigmoid_backward: under create_graph the
  // gradient records its NotImplemented node, as torch's does.
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues&) {
    Tensor value;
    {
      autograd::AutoGradMode no_grad(false);
      Tensor inside = logical_and(gt(self, scalar(-3)), lt(self, scalar(3)));
      value = keep_where(inside, div(grad, scalar(6)));
    }
    return record_not_implemented(
        value, "aten::hardsigmoid_backward", {grad, self});
  }
  static constexpr OpDoc doc = {
      "``relu6(x + 3) / 6``", "[-4.0, 0.0]", "tensor([0.0000, 0.5000])"};
};

struct Hardswish {
  static constexpr const char* name = "hardswish";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "HardswishBackward0";
  static constexpr const char* backward_node = "HardswishBackwardBackward0";
  static constexpr Inplace inplace = Inplace::SavesSelf;
  static constexpr const char* cpu_kernel = "hardswish_cpu";
  static constexpr std::array<Param, 0> params = {};
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    return mul(x, Hardsigmoid::forward(x, p));
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues&) {
    // 0 below -3, x / 3 + 1/2 up to 3, 1 above
    Tensor middle = mul(grad, add(div(self, scalar(3)), scalar(0.5)));
    Tensor upper = ops::where(le(self, scalar(3)), middle, grad);
    return ops::where(lt(self, scalar(-3)), zeros_like(upper), upper);
  }
  // grad * grad_output / 3 strictly inside (-3, 3), as torch's formula.
  static Tensor double_backward(
      const Tensor& grad,
      const Tensor& grad_output,
      const Tensor& self,
      const ParamValues&,
      bool) {
    Tensor inside = logical_and(gt(self, scalar(-3)), lt(self, scalar(3)));
    return keep_where(inside, div(mul(grad, grad_output), scalar(3)));
  }
  static constexpr OpDoc doc = {
      "``x * relu6(x + 3) / 6``", "[-4.0, 1.0]", "tensor([-0.0000,  0.6667])"};
};

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)); the node saves exp(-|x|)
// as torch's log_sigmoid_forward's buffer.
struct LogSigmoid {
  static constexpr const char* name = "log_sigmoid";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "LogSigmoidBackward0";
  static constexpr const char* backward_node = "LogSigmoidBackwardBackward0";
  static constexpr Inplace inplace = Inplace::None;
  static constexpr const char* cpu_kernel = "log_sigmoid_cpu";
  static constexpr std::array<Param, 0> params = {};
  static Tensor buffer(const Tensor& x) { return exp(neg(abs(x))); }
  static Tensor forward(const Tensor& x, const ParamValues&) {
    Tensor negative_part = minimum(x, zeros_like(x));
    return sub(negative_part, unary<unary_ops::Log1p>(buffer(x)));
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues&) {
    return mul(grad, sigmoid(neg(self)));
  }
  // torch's log_sigmoid_double_backward(grad * grad_output, self):
  // that product * (z - 1) * z, z = sigmoid(self).
  static Tensor double_backward(
      const Tensor& grad,
      const Tensor& grad_output,
      const Tensor& self,
      const ParamValues&,
      bool) {
    Tensor z = sigmoid(self);
    return mul(mul(mul(grad, grad_output), sub(z, scalar(1))), z);
  }
  static constexpr OpDoc doc = {
      "``log(sigmoid(x))``", "[-1.0, 1.0]", "tensor([-1.3133, -0.3133])"};
};

// The shrinks' lambd: torch's range check against the input dtype's range.
inline void check_lambd(const Tensor& input, double lambd) {
  double top = is_floating(input.dtype()) ? largest_finite(input.dtype())
                                          : std::numeric_limits<float>::max();
  NPGRAD_CHECK(
      lambd >= 0 && lambd <= top,
      "lambda must be in range [0, ",
      top,
      "] for input dtype ",
      scalar_type_name(input.dtype()),
      ", but found ",
      lambd);
}

struct Softshrink {
  static constexpr const char* name = "softshrink";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "SoftshrinkBackward0";
  static constexpr const char* backward_node = "SoftshrinkBackwardBackward0";
  static constexpr Inplace inplace = Inplace::None;
  static constexpr const char* cpu_kernel = "softshrink_check";
  static constexpr std::array<Param, 1> params = {{{"lambd", 0.5}}};
  static void check(const Tensor& input, const ParamValues& p) {
    check_lambd(input, p[0]);
  }
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    Tensor lambd = scalar(p[0]);
    Tensor shrunk = ops::where(
        gt(x, lambd),
        sub(x, lambd),
        ops::where(lt(x, neg(lambd)), add(x, lambd), mul(x, scalar(0))));
    return shrunk;
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return keep_beyond(self, p[0], grad);
  }
  template <typename T>
  static T value(T x, const ParamValues& p) {
    T lambd = T(p[0]);
    return x > lambd ? x - lambd : (x < -lambd ? x + lambd : x * T(0));
  }
  template <typename T>
  static T derivative(T grad, T x, const ParamValues& p) {
    return std::abs(x) <= T(p[0]) ? T(0) : grad;
  }
  static constexpr OpDoc doc = {
      "``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0",
      "[-2.0, 0.2, 1.0]",
      "tensor([-1.5000,  0.0000,  0.5000])"};
};

struct Hardshrink {
  static constexpr const char* name = "hardshrink";
  static constexpr Where binding = Where::TorchAndMethod;
  static constexpr const char* node = "HardshrinkBackward0";
  static constexpr const char* backward_node = "HardshrinkBackwardBackward0";
  static constexpr Inplace inplace = Inplace::None;
  static constexpr const char* cpu_kernel = "hardshrink_cpu";
  static constexpr std::array<Param, 1> params = {{{"lambd", 0.5}}};
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    return keep_beyond(x, p[0], x);
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return keep_beyond(self, p[0], grad);
  }
  static constexpr OpDoc doc = {
      "``x`` where ``|x| > lambd``, else 0",
      "[-2.0, 0.2, 1.0]",
      "tensor([-2.,  0.,  1.])"};
};

struct Threshold {
  static constexpr const char* name = "threshold";
  static constexpr Where binding = Where::Torch;
  static constexpr const char* node = "ThresholdBackward0";
  static constexpr const char* inplace_node = "ThresholdBackward1";
  static constexpr Inplace inplace = Inplace::SavesSelf;
  static constexpr std::array<Param, 2> params = {
      {{"threshold", kRequired}, {"value", kRequired, false}}};
  static Tensor forward(const Tensor& x, const ParamValues& p) {
    return ops::where(
        gt(x, scalar(p[0])),
        x,
        kernels::cast(wrapped_scalar(p[1], ScalarType::Float64), x.dtype()));
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return threshold_backward(grad, self, p[0]);
  }
  static constexpr OpDoc doc = {
      "``x`` where ``x > threshold``, else ``value``",
      "[-1.0, 2.0]",
      "tensor([0., 2.])"};
};

// One op per line, so that adding one is a one-line change here.
// clang-format off
using ActivationOps = OpList<
    LeakyRelu,
    Elu,
    Celu,
    Gelu,
    Silu,
    Softplus,
    Mish,
    Hardtanh,
    Hardsigmoid,
    Hardswish,
    LogSigmoid,
    Softshrink,
    Hardshrink,
    Threshold>;
// clang-format on

}  // namespace npgrad::ops::activation_ops
