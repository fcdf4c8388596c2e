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

namespace {
template <PointwiseLoss K>
Tensor loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    Reduction reduction,
    double param) {
  auto r = static_cast<int64_t>(reduction);
  if constexpr (K == PointwiseLoss::Mse) {
    return mse_loss_backward(grad_output, self, target, r);
  } else if constexpr (K == PointwiseLoss::SmoothL1) {
    return smooth_l1_loss_backward(grad_output, self, target, r, param);
  } else {
    return huber_loss_backward(grad_output, self, target, r, param);
  }
}

// torch's formulas: the target's gradient is the backward op with self and
// target swapped (its own node, as torch's).
template <PointwiseLoss K>
void pointwise_loss_grads(
    const FormulaNode& node,
    const Tensor& grad,
    const Tensor& self,
    const Tensor& target,
    Reduction reduction,
    double param,
    variable_list& out) {
  if (node.task_should_compute_output(0)) {
    out[0] = loss_backward<K>(grad, self, target, reduction, param);
  }
  if (node.task_should_compute_output(1)) {
    out[1] = loss_backward<K>(grad, target, self, reduction, param);
  }
}
}  // namespace

void MseLossBackward0::compute(const variable_list& g, variable_list& out) {
  pointwise_loss_grads<PointwiseLoss::Mse>(
      *this, g[0], self_.unpack(), target_.unpack(), reduction, 0, out);
}

void SmoothL1LossBackward0::compute(
    const variable_list& g, variable_list& out) {
  pointwise_loss_grads<PointwiseLoss::SmoothL1>(
      *this, g[0], self_.unpack(), target_.unpack(), reduction, beta, out);
}

void HuberLossBackward0::compute(const variable_list& g, variable_list& out) {
  pointwise_loss_grads<PointwiseLoss::Huber>(
      *this, g[0], self_.unpack(), target_.unpack(), reduction, delta, out);
}

// The backward ops' derivatives (torch's): in grad_output the op itself
// (linear there), summed to grad_output's shape; in self the
// *_loss_double_backward of grad * grad_output, its negation in target.
template <PointwiseLoss K>
void LossBackwardBackward<K>::compute(
    const variable_list& g, variable_list& out) {
  Tensor grad_output = grad_output_.unpack();
  Tensor self = self_.unpack();
  Tensor target = target_.unpack();
  if (task_should_compute_output(0)) {
    out[0] = sum_to(
        loss_backward<K>(g[0], self, target, reduction, param),
        grad_output.sizes());
  }
  if (!task_should_compute_output(1) && !task_should_compute_output(2)) {
    return;
  }
  Tensor gg = mul(g[0], grad_output);
  Tensor d;
  if constexpr (K == PointwiseLoss::Mse) {
    d = times(gg, 2);
  } else if (K == PointwiseLoss::SmoothL1 && param == 0) {
    d = zeros_like(gg);  // torch's guard against dividing by beta = 0
  } else {
    Tensor inside =
        to_dtype(lt(abs(sub(self, target)), scalar(param)), gg.dtype());
    d = mul(gg, inside);
    if constexpr (K == PointwiseLoss::SmoothL1) {
      d = div(d, scalar(param));
    }
  }
  if (reduction == Reduction::Mean) {
    d = div(d, scalar(static_cast<double>(g[0].numel())));
  }
  if (task_should_compute_output(1)) {
    out[1] = d;
  }
  if (task_should_compute_output(2)) {
    out[2] = neg(d);
  }
}

template struct LossBackwardBackward<PointwiseLoss::Mse>;
template struct LossBackwardBackward<PointwiseLoss::SmoothL1>;
template struct LossBackwardBackward<PointwiseLoss::Huber>;

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
  if (task_should_compute_output(0)) {
    out[0] = binary_cross_entropy_backward(
        g[0], self, target, weight, static_cast<int64_t>(reduction));
  }
  if (task_should_compute_output(1)) {
    Tensor grad = share(g[0], self.numel());
    if (weight.defined()) {
      grad = mul(grad, weight);
    }
    // -logit(x) = log(1 - x) - log(x)
    Tensor logit = sub(log(self), log(rsub(self, 1.0)));
    out[1] = mul(grad, neg(logit));
  }
}

// torch's binary_cross_entropy_double_backward{,_grad_output,_target}, with
// their eps of 1e-12.
void BinaryCrossEntropyBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  constexpr double eps = 1e-12;
  Tensor grad_output = grad_output_.unpack();
  Tensor self = self_.unpack();
  Tensor target = target_.unpack();
  Tensor weight = weight_.unpack();
  auto weighted = [&](Tensor t) {
    return weight.defined() ? mul(t, weight) : t;
  };
  auto mean_share = [&](Tensor t) {
    return reduction == Reduction::Mean
               ? div(t, scalar(static_cast<double>(self.numel())))
               : t;
  };
  if (task_should_compute_output(0)) {
    // (x - t) / ((x + eps) (1 - x + eps)) * grad, reduced as the loss was
    Tensor slope =
        div(sub(self, target),
            mul(add(self, scalar(eps)), add(rsub(self, 1.0), scalar(eps))));
    Tensor d = mul(weighted(slope), g[0]);
    out[0] = reduction == Reduction::None ? d : mean_share(sum(d));
  }
  if (task_should_compute_output(1)) {
    // (x^2 - 2 x t + t) / ((x + eps)^2 (1 - x + eps)^2) * grad * grad_output
    Tensor numer =
        add(sub(mul(self, self), mul(times(self, 2), target)), target);
    Tensor a = add(self, scalar(eps));
    Tensor b = add(rsub(self, 1.0), scalar(eps));
    Tensor gi = div(numer, mul(mul(a, a), mul(b, b)));
    out[1] = mean_share(weighted(mul(gi, mul(g[0], grad_output))));
  }
  if (task_should_compute_output(2)) {
    // -grad * grad_output / max((1 - x) x, eps)
    Tensor denom = clamp(mul(rsub(self, 1.0), self), eps, std::nullopt);
    out[2] = mean_share(div(weighted(neg(mul(g[0], grad_output))), denom));
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
  out[0] = nll_loss_backward(
      g[0],
      self_.unpack(),
      target_.unpack(),
      weight_.unpack(),
      static_cast<int64_t>(reduction),
      ignore_index,
      total_weight_.unpack(),
      two_d);
}

template <bool TwoD>
void NllLossBackwardBackward<TwoD>::compute(
    const variable_list& g, variable_list& out) {
  Tensor target = target_.unpack();
  Tensor weight = weight_.unpack();
  if (task_should_compute_output(0)) {
    out[0] = nll_loss(
        g[0],
        target,
        weight,
        static_cast<int64_t>(reduction),
        ignore_index,
        TwoD);
  }
  if (task_should_compute_output(1)) {
    out[1] = zeros_like(g[0]);
  }
}

template struct NllLossBackwardBackward<false>;
template struct NllLossBackwardBackward<true>;

}  // namespace npgrad::autograd
