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

// t where |x| > lambd, else 0: the shrinks' mask.
inline Tensor keep_beyond(const Tensor& x, double lambd, const Tensor& t) {
  return keep_where(gt(abs(x), scalar(lambd)), t);
}

struct LeakyRelu {
  static constexpr const char* name = "leaky_relu";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "LeakyReluBackward0";
  static constexpr const char* inplace_node = "LeakyReluBackward1";
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
    Tensor negative = mul(
        grad, mul(exp(mul(self, scalar(p[2]))), scalar(p[0] * p[1] * p[2])));
    return ops::where(gt(self, scalar(0)), mul(grad, scalar(p[1])), negative);
  }
  static Tensor backward_from_result(
      const Tensor& grad, const Tensor& result, const ParamValues& p) {
    // exp(x * input_scale) * scale * alpha = result + scale * alpha
    Tensor negative =
        mul(grad, mul(add(result, scalar(p[0] * p[1])), scalar(p[2])));
    return ops::where(gt(result, scalar(0)), mul(grad, scalar(p[1])), negative);
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
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return Elu::backward(grad, self, {p[0], 1, 1 / p[0]});
  }
  static Tensor backward_from_result(
      const Tensor& grad, const Tensor& result, const ParamValues& p) {
    return Elu::backward_from_result(grad, result, {p[0], 1, 1 / p[0]});
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
  static constexpr OpDoc doc = {
      "``x * relu6(x + 3) / 6``", "[-4.0, 1.0]", "tensor([-0.0000,  0.6667])"};
};

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)); the node saves exp(-|x|)
// as torch's log_sigmoid_forward's buffer.
struct LogSigmoid {
  static constexpr const char* name = "log_sigmoid";
  static constexpr Where binding = Where::Nn;
  static constexpr const char* node = "LogSigmoidBackward0";
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
        ops::where(lt(x, neg(lambd)), add(x, lambd), zeros_like(x)));
    return shrunk;
  }
  static Tensor backward(
      const Tensor& grad, const Tensor& self, const ParamValues& p) {
    return keep_beyond(self, p[0], grad);
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
