#include "npgrad/autograd/nodes/loss_nodes.h"

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/ops/loss.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/unary_ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {
// log(1 + exp(-x)) in the form that does not overflow: the softplus of -x.
Tensor softplus_of_neg(const Tensor& x) {
  return add(unary<unary_ops::Log1p>(exp(neg(abs(x)))), relu(neg(x)));
}
}  // namespace

Tensor PointwiseLossNode::share(const Tensor& grad, int64_t numel) const {
  return reduction == Reduction::Mean
             ? div(grad, scalar(static_cast<double>(numel)))
             : grad;
}

void MseLossBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor diff = sub(self_.unpack(), target_.unpack());
  Tensor grad = mul(times(diff, 2), share(g[0], diff.numel()));
  if (task_should_compute_output(1)) {
    out[1] = neg(grad);
  }
  out[0] = grad;
}

void SmoothL1LossBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor diff = sub(self_.unpack(), target_.unpack());
  // d/dx: x / beta inside (-beta, beta), its sign outside.
  Tensor slope = beta == 0 ? sgn(diff) : clamp(times(diff, 1 / beta), -1, 1);
  Tensor grad = mul(slope, share(g[0], diff.numel()));
  if (task_should_compute_output(1)) {
    out[1] = neg(grad);
  }
  out[0] = grad;
}

void HuberLossBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor diff = sub(self_.unpack(), target_.unpack());
  Tensor grad = mul(clamp(diff, -delta, delta), share(g[0], diff.numel()));
  if (task_should_compute_output(1)) {
    out[1] = neg(grad);
  }
  out[0] = grad;
}

void SoftMarginLossBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor target = target_.unpack();
  // d/dx log(1 + exp(-t x)) = -t * sigmoid(-t x)
  Tensor slope = mul(neg(target), sigmoid(neg(mul(target, self))));
  out[0] = mul(slope, share(g[0], slope.numel()));
}

void BinaryCrossEntropyBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor target = target_.unpack();
  Tensor weight = weight_.unpack();
  Tensor grad = share(g[0], self.numel());
  if (weight.defined()) {
    grad = mul(grad, weight);
  }
  if (task_should_compute_output(0)) {
    // (x - t) / max(x (1 - x), 1e-12), torch's EPSILON
    Tensor denom = clamp(mul(rsub(self, 1.0), self), 1e-12, std::nullopt);
    out[0] = mul(grad, div(sub(self, target), denom));
  }
  if (task_should_compute_output(1)) {
    // -logit(x) = log(1 - x) - log(x)
    Tensor logit = sub(log(self), log(rsub(self, 1.0)));
    out[1] = mul(grad, neg(logit));
  }
}

void BinaryCrossEntropyWithLogitsBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor target = target_.unpack();
  Tensor weight = weight_.unpack();
  Tensor pos_weight = pos_weight_.unpack();
  Tensor grad = share(g[0], self.numel());
  if (weight.defined()) {
    grad = mul(grad, weight);
  }
  if (task_should_compute_output(0)) {
    Tensor slope;
    if (pos_weight.defined()) {
      // (pw t + 1 - t) sigmoid(x) - pw t
      Tensor pt = mul(pos_weight, target);
      slope = sub(mul(sub(add(pt, scalar(1)), target), sigmoid(self)), pt);
    } else {
      slope = sub(sigmoid(self), target);
    }
    out[0] = mul(grad, slope);
  }
  if (task_should_compute_output(1)) {
    // -x, plus (pw - 1) * softplus(-x) with a pos_weight
    Tensor slope = neg(self);
    if (pos_weight.defined()) {
      slope =
          add(slope, mul(sub(pos_weight, scalar(1)), softplus_of_neg(self)));
    }
    out[1] = mul(grad, slope);
  }
}

void NllLossBackwardBase::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor target = target_.unpack();
  Tensor weight = weight_.unpack();
  Tensor grad = g[0];
  if (reduction == Reduction::Mean) {
    grad = div(grad, total_weight_.unpack());
  }
  if (!GradMode::is_enabled() &&
      nll_grad_by_loop(self, target, weight, ignore_index, grad, &out[0])) {
    return;
  }
  auto [safe, weights] =
      nll_target_weights(target, weight, ignore_index, self.dtype());
  // -weight[t] * grad at each target's class, zero elsewhere (and for an
  // ignored target, even when the total weight is 0)
  Tensor ignored =
      eq(target,
         wrapped_scalar(static_cast<double>(ignore_index), ScalarType::Int64));
  Tensor values = masked_fill(
      mul(neg(weights), grad), ignored, wrapped_scalar(0, ScalarType::Float64));
  int64_t class_dim = self.dim() == 1 ? 0 : 1;
  // Without a graph, written into the fresh zeros (scatter would copy them).
  out[0] = scatter(
      zeros_like(self),
      class_dim,
      unsqueeze(safe, class_dim),
      unsqueeze(values, class_dim),
      !GradMode::is_enabled());
}

}  // namespace npgrad::autograd
