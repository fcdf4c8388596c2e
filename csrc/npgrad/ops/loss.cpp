// The losses torch implements natively, with its checks and messages. The
// values are computed with npgrad ops in no-grad mode; the node is recorded
// after, saving what torch's saves.
#include <cstdint>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/nodes/loss_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/loss.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/ops/unary_ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using autograd::AutoGradMode;
using autograd::Reduction;
using autograd::SavedVariable;

namespace {

Reduction to_reduction(int64_t reduction) {
  NPGRAD_CHECK(
      reduction >= 0 && reduction <= 2,
      "reduction must be 0 (none), 1 (mean) or 2 (sum), but got ",
      reduction);
  return static_cast<Reduction>(reduction);
}

Tensor reduce(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::Mean:
      return mean(loss);
    case Reduction::Sum:
      return sum(loss);
    default:
      return loss;
  }
}

// torch's check of an argument its formula does not differentiate.
void check_not_differentiable(
    const Tensor& t, const char* function, const char* argument) {
  NPGRAD_CHECK(
      !(t.defined() && autograd::requires_grad(t)),
      "The function '",
      function,
      "' is not differentiable with respect to argument '",
      argument,
      "'. This input cannot have requires_grad True.");
}

// The "not implemented for 'Long'" of torch's CPU kernel `kernel`.
void check_floating(ScalarType dtype, const char* kernel) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      is_floating(dtype),
      '"',
      kernel,
      "\" not implemented for '",
      scalar_type_name(dtype),
      "'");
}

// An optional argument as the node keeps it: None when not given.
SavedVariable saved_if_defined(const Tensor& t) {
  return t.defined() ? SavedVariable(t, false) : SavedVariable();
}

Tensor number(double v) {
  return wrapped_scalar(v, ScalarType::Float64);
}

// A pointwise loss of input and target, recorded as NodeT; `loss(diff)`
// computes the elementwise loss from input - target.
template <typename NodeT, typename Loss>
std::shared_ptr<NodeT> pointwise_loss(
    Tensor& out,
    const Tensor& input,
    const Tensor& target,
    int64_t reduction,
    const char* kernel,
    Loss loss) {
  Reduction r = to_reduction(reduction);
  check_floating(result_type(input, target), kernel);
  {
    AutoGradMode no_grad(false);
    out = reduce(loss(sub(input, target)), r);
  }
  auto node = record<NodeT>(out, {&input, &target});
  if (node) {
    node->reduction = r;
    node->self_ = SavedVariable(input, false);
    node->target_ = SavedVariable(target, false);
  }
  return node;
}

void check_between_0_and_1(const Tensor& t, const char* name) {
  AutoGradMode no_grad(false);
  Tensor outside = logical_or(lt(t, number(0)), gt(t, number(1)));
  bool bad = kernels::item(any(outside, std::nullopt, false, true)) != 0;
  NPGRAD_CHECK(!bad, "all elements of ", name, " should be between 0 and 1");
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction) {
  Tensor out;
  pointwise_loss<autograd::MseLossBackward0>(
      out, input, target, reduction, "mse_cpu", [](const Tensor& d) {
        return mul(d, d);
      });
  return out;
}

Tensor smooth_l1_loss(
    const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
  NPGRAD_CHECK(
      beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  Tensor out;
  auto node = pointwise_loss<autograd::SmoothL1LossBackward0>(
      out, input, target, reduction, "smooth_l1_cpu", [&](const Tensor& d) {
        Tensor z = abs(d);
        if (beta == 0) {
          return z;
        }
        // 0.5 z^2 / beta below beta, z - 0.5 beta above
        return where(
            lt(z, number(beta)),
            mul(mul(z, z), number(0.5 / beta)),
            sub(z, number(0.5 * beta)));
      });
  if (node) {
    node->beta = beta;
  }
  return out;
}

Tensor huber_loss(
    const Tensor& input,
    const Tensor& target,
    int64_t reduction,
    double delta) {
  NPGRAD_CHECK(
      delta > 0, "huber_loss does not support non-positive values for delta.");
  Tensor out;
  auto node = pointwise_loss<autograd::HuberLossBackward0>(
      out, input, target, reduction, "huber_cpu", [&](const Tensor& d) {
        Tensor z = abs(d);
        // 0.5 z^2 below delta, delta (z - 0.5 delta) above
        return where(
            lt(z, number(delta)),
            mul(mul(z, z), number(0.5)),
            mul(sub(z, number(0.5 * delta)), number(delta)));
      });
  if (node) {
    node->delta = delta;
  }
  return out;
}

namespace {
using autograd::PointwiseLoss;

// The value of a pointwise loss's backward op, without a graph: the loss's
// slope at self - target times grad_output (its share for a mean); then
// its node.
template <PointwiseLoss K>
Tensor pointwise_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    int64_t reduction,
    double param) {
  Reduction r = to_reduction(reduction);
  Tensor out;
  {
    AutoGradMode no_grad(false);
    Tensor diff = sub(self, target);
    Tensor slope;
    if constexpr (K == PointwiseLoss::Mse) {
      slope = autograd::times(diff, 2);
    } else if constexpr (K == PointwiseLoss::SmoothL1) {
      // x / beta inside (-beta, beta), its sign outside
      slope = param == 0 ? sgn(diff)
                         : clamp(autograd::times(diff, 1 / param), -1, 1);
    } else {
      slope = clamp(diff, -param, param);
    }
    Tensor share =
        r == Reduction::Mean
            ? div(grad_output, number(static_cast<double>(diff.numel())))
            : grad_output;
    out = mul(slope, share);
  }
  if (auto node = record<autograd::LossBackwardBackward<K>>(
          out, {&grad_output, &self, &target})) {
    node->reduction = r;
    node->param = param;
    node->grad_output_ = SavedVariable(grad_output, false);
    node->self_ = SavedVariable(self, false);
    node->target_ = SavedVariable(target, false);
  }
  return out;
}
}  // namespace

Tensor mse_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    int64_t reduction) {
  return pointwise_loss_backward<PointwiseLoss::Mse>(
      grad_output, self, target, reduction, 0);
}

Tensor smooth_l1_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    int64_t reduction,
    double beta) {
  return pointwise_loss_backward<PointwiseLoss::SmoothL1>(
      grad_output, self, target, reduction, beta);
}

Tensor huber_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    int64_t reduction,
    double delta) {
  return pointwise_loss_backward<PointwiseLoss::Huber>(
      grad_output, self, target, reduction, delta);
}

Tensor soft_margin_loss(
    const Tensor& input, const Tensor& target, int64_t reduction) {
  Reduction r = to_reduction(reduction);
  check_not_differentiable(target, "soft_margin_loss", "target");
  ScalarType dtype = result_type(input, target);
  check_castable(
      is_floating(dtype) ? dtype : ScalarType::Float32, input.dtype());
  Tensor out;
  {
    AutoGradMode no_grad(false);
    Tensor margin = neg(mul(input, target));
    out = reduce(unary<unary_ops::Log1p>(exp(margin)), r);
  }
  if (auto node = record<autograd::SoftMarginLossBackward0>(out, {&input})) {
    node->reduction = r;
    node->self_ = SavedVariable(input, false);
    node->target_ = SavedVariable(target, false);
  }
  return out;
}

Tensor binary_cross_entropy(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction) {
  Reduction r = to_reduction(reduction);
  check_not_differentiable(weight, "binary_cross_entropy", "weight");
  check_floating(input.dtype(), "binary_cross_entropy");
  NPGRAD_CHECK(
      target.dtype() == input.dtype(),
      "Found dtype ",
      scalar_type_name(target.dtype()),
      " but expected ",
      scalar_type_name(input.dtype()));
  check_between_0_and_1(input, "input");
  check_between_0_and_1(target, "target");
  Tensor out;
  {
    AutoGradMode no_grad(false);
    // -(t log(x) + (1 - t) log(1 - x)), each log at least -100
    Tensor log_x = clamp(log(input), -100, std::nullopt);
    Tensor log_1mx =
        clamp(unary<unary_ops::Log1p>(neg(input)), -100, std::nullopt);
    Tensor loss = neg(add(mul(target, log_x), mul(rsub(target, 1.0), log_1mx)));
    if (weight.defined()) {
      loss = mul(loss, weight);
    }
    out = reduce(loss, r);
  }
  if (auto node = record<autograd::BinaryCrossEntropyBackward0>(
          out, {&input, &target})) {
    node->reduction = r;
    node->self_ = SavedVariable(input, false);
    node->target_ = SavedVariable(target, false);
    node->weight_ = saved_if_defined(weight);
  }
  return out;
}

Tensor binary_cross_entropy_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction) {
  Reduction r = to_reduction(reduction);
  Tensor out;
  {
    AutoGradMode no_grad(false);
    Tensor grad =
        r == Reduction::Mean
            ? div(grad_output, number(static_cast<double>(self.numel())))
            : grad_output;
    if (weight.defined()) {
      grad = mul(grad, weight);
    }
    // (x - t) / max(x (1 - x), 1e-12), torch's EPSILON
    Tensor denom = clamp(mul(rsub(self, 1.0), self), 1e-12, std::nullopt);
    out = mul(grad, div(sub(self, target), denom));
  }
  if (auto node = record<autograd::BinaryCrossEntropyBackwardBackward0>(
          out, {&grad_output, &self, &target})) {
    node->reduction = r;
    node->grad_output_ = SavedVariable(grad_output, false);
    node->self_ = SavedVariable(self, false);
    node->target_ = SavedVariable(target, false);
    node->weight_ = saved_if_defined(weight);
  }
  return out;
}

Tensor binary_cross_entropy_with_logits(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    const Tensor& pos_weight,
    int64_t reduction) {
  Reduction r = to_reduction(reduction);
  check_not_differentiable(
      weight, "binary_cross_entropy_with_logits", "weight");
  check_not_differentiable(
      pos_weight, "binary_cross_entropy_with_logits", "pos_weight");
  check_floating(result_type(input, target), "log_sigmoid_cpu");
  Tensor out;
  {
    AutoGradMode no_grad(false);
    // (1 - t) x + log_weight * softplus(-x), log_weight = (pw - 1) t + 1
    Tensor softplus_neg =
        add(unary<unary_ops::Log1p>(exp(neg(abs(input)))), relu(neg(input)));
    if (pos_weight.defined()) {
      Tensor log_weight =
          add(mul(sub(pos_weight, number(1)), target), number(1));
      softplus_neg = mul(log_weight, softplus_neg);
    }
    Tensor loss = add(mul(rsub(target, 1.0), input), softplus_neg);
    if (weight.defined()) {
      loss = mul(loss, weight);
    }
    out = reduce(loss, r);
  }
  if (auto node = record<autograd::BinaryCrossEntropyWithLogitsBackward0>(
          out, {&input, &target})) {
    node->reduction = r;
    node->self_ = SavedVariable(input, false);
    node->target_ = SavedVariable(target, false);
    node->weight_ = saved_if_defined(weight);
    node->pos_weight_ = saved_if_defined(pos_weight);
  }
  return out;
}

namespace {

// For nll_loss and its backward: the targets with ignore_index replaced by
// 0 (int64), and each target's class weight in `dtype` (0 where ignored).
std::pair<Tensor, Tensor> nll_target_weights(
    const Tensor& target,
    const Tensor& weight,
    int64_t ignore_index,
    ScalarType dtype) {
  AutoGradMode no_grad(false);
  Tensor classes = kernels::cast(target, ScalarType::Int64);
  Tensor valid =
      ne(classes,
         wrapped_scalar(static_cast<double>(ignore_index), ScalarType::Int64));
  Tensor safe = mul(classes, valid);
  Tensor weights =
      weight.defined()
          ? mul(reshape(
                    index_select(weight, 0, reshape(safe, {-1})), safe.sizes()),
                valid)
          : kernels::cast(valid, dtype);
  return {safe, weights};
}

// The contiguous geometry nll_loss's loops walk: input (outer, classes,
// inner), target (outer, inner); false for other layouts.
struct NllGeometry {
  int64_t outer = 1, classes = 1, inner = 1;
};

bool nll_geometry(const Tensor& input, const Tensor& target, NllGeometry* g) {
  ScalarType dt = input.dtype();
  if ((dt != ScalarType::Float32 && dt != ScalarType::Float64) ||
      (target.dtype() != ScalarType::Int64 &&
       target.dtype() != ScalarType::UInt8)) {
    return false;
  }
  int64_t nd = input.dim();
  if (!((nd == 1 && target.dim() == 0) ||
        (nd >= 2 && target.dim() == nd - 1))) {
    return false;
  }
  int64_t class_dim = nd == 1 ? 0 : 1;
  const Shape& in = input.sizes();
  g->outer = class_dim == 1 ? in[0] : 1;
  g->classes = in[class_dim];
  g->inner = 1;
  for (int64_t d = class_dim + 1; d < nd; ++d) {
    g->inner *= in[d];
  }
  return target.numel() == g->outer * g->inner;
}

Tensor contiguous_data(const Tensor& t) {
  return t.is_contiguous() ? t : kernels::cast(t, t.dtype());
}

int64_t target_at(const Tensor& target, int64_t j) {
  return target.dtype() == ScalarType::Int64
             ? static_cast<const int64_t*>(target.data_ptr())[j]
             : static_cast<const uint8_t*>(target.data_ptr())[j];
}

// nll_loss's per-target losses -(input[class] * weight) and weights (both
// the target's shape) in one pass over contiguous float32/float64 data, with
// torch's IndexError for a target out of range: on tiny inputs the composed
// ops cost 20 NumPy calls. The same element operations as the composed path,
// so the same bits. False (nothing done) for a layout it does not handle.
bool nll_losses_by_loop(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    int64_t ignore_index,
    Tensor* losses,
    Tensor* weights) {
  NllGeometry g;
  if (!nll_geometry(input, target, &g)) {
    return false;
  }
  Tensor x = contiguous_data(input);
  Tensor t = contiguous_data(target);
  Tensor w = weight.defined() ? contiguous_data(weight) : Tensor();
  // torch's IndexError for the first target outside [0, classes) that is
  // not ignore_index, before anything is computed.
  int64_t n = t.numel();
  for (int64_t j = 0; j < n; ++j) {
    int64_t c = target_at(t, j);
    NPGRAD_CHECK_INDEX(
        c == ignore_index || (c >= 0 && c < g.classes),
        "Target ",
        c,
        " is out of bounds.");
  }
  *losses = kernels::empty(t.sizes(), input.dtype());
  *weights = kernels::empty(t.sizes(), input.dtype());
  kernels::dispatch_floating(input.dtype(), [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
    T* lp = static_cast<T*>(losses->data_ptr());
    T* tw = static_cast<T*>(weights->data_ptr());
    for (int64_t o = 0; o < g.outer; ++o) {
      for (int64_t i = 0; i < g.inner; ++i) {
        int64_t j = o * g.inner + i;
        int64_t c = target_at(t, j);
        // As the composed path: the class 0 where ignored, times a 0 weight.
        T valid = c != ignore_index ? T(1) : T(0);
        int64_t safe = c != ignore_index ? c : 0;
        T wt = wp != nullptr ? wp[safe] * valid : valid;
        T picked = xp[(o * g.classes + safe) * g.inner + i];
        tw[j] = wt;
        lp[j] = -(picked * wt);
      }
    }
  });
  return true;
}

// nll_loss's input gradient without a graph: -weight[t] * grad at each
// target's class, zeros elsewhere (grad already divided by the total weight
// for mean; 0-dim, or the target's shape). False for a layout it does not
// handle.
bool nll_grad_by_loop(
    const Tensor& self,
    const Tensor& target,
    const Tensor& weight,
    int64_t ignore_index,
    const Tensor& grad,
    Tensor* out) {
  NllGeometry g;
  if (!nll_geometry(self, target, &g) || grad.dtype() != self.dtype() ||
      !(grad.dim() == 0 || grad.sizes() == target.sizes())) {
    return false;
  }
  Tensor t = contiguous_data(target);
  Tensor w = weight.defined() ? contiguous_data(weight) : Tensor();
  Tensor gr = contiguous_data(grad);
  bool per_target = grad.dim() != 0;
  *out = kernels::full(self.sizes(), 0, self.dtype());
  kernels::dispatch_floating(self.dtype(), [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
    const T* gp = static_cast<const T*>(gr.data_ptr());
    T* op = static_cast<T*>(out->data_ptr());
    for (int64_t o = 0; o < g.outer; ++o) {
      for (int64_t i = 0; i < g.inner; ++i) {
        int64_t j = o * g.inner + i;
        int64_t c = target_at(t, j);
        if (c == ignore_index) {
          continue;  // masked to 0, written at class 0: the zero stays
        }
        T wt = wp != nullptr ? wp[c] * T(1) : T(1);
        op[(o * g.classes + c) * g.inner + i] = -wt * gp[per_target ? j : 0];
      }
    }
  });
  return true;
}

void check_nll_args(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    bool two_d) {
  if (two_d) {
    NPGRAD_CHECK(
        target.dim() == 3,
        "only batches of spatial targets supported (3D tensors) but got "
        "targets of dimension: ",
        target.dim());
    NPGRAD_CHECK(
        input.dim() == 4,
        "only batches of spatial inputs supported (4D tensors), but got "
        "input of dimension: ",
        input.dim());
    const Shape& in = input.sizes();
    const Shape& t = target.sizes();
    NPGRAD_CHECK(
        in[0] == t[0] && in[2] == t[1] && in[3] == t[2],
        "size mismatch (got input: ",
        shape_str(in),
        " , target: ",
        shape_str(t));
    NPGRAD_CHECK(
        target.dtype() == ScalarType::Int64,
        "expected scalar type Long but found ",
        scalar_type_name(target.dtype()));
  } else {
    NPGRAD_CHECK(
        input.dim() > 0 && input.dim() <= 2, "input tensor should be 1D or 2D");
    NPGRAD_CHECK(
        target.dim() <= 1,
        "0D or 1D target tensor expected, multi-target not supported");
    bool no_batch_dim = input.dim() == 1 && target.dim() == 0;
    NPGRAD_CHECK(
        no_batch_dim ||
            (target.dim() == 1 && input.sizes()[0] == target.sizes()[0]),
        "size mismatch (got input: ",
        shape_str(input.sizes()),
        ", target: ",
        shape_str(target.sizes()),
        ")");
    NPGRAD_CHECK(
        target.dtype() == ScalarType::Int64 ||
            target.dtype() == ScalarType::UInt8,
        "expected target dtype to be Long or Byte, but got ",
        scalar_type_name(target.dtype()));
  }
  int64_t classes = input.sizes()[input.dim() == 1 ? 0 : 1];
  if (weight.defined()) {
    NPGRAD_CHECK(
        weight.dim() == 1 && weight.numel() == classes,
        "weight tensor should be defined either for all ",
        classes,
        " classes or no classes but got weight tensor of shape: ",
        shape_str(weight.sizes()));
  }
  check_floating(
      input.dtype(),
      two_d ? "nll_loss2d_forward_out_frame" : "nll_loss_out_frame");
  if (weight.defined()) {
    NPGRAD_CHECK(
        weight.dtype() == input.dtype(),
        "expected scalar type ",
        scalar_type_name(input.dtype()),
        " but found ",
        scalar_type_name(weight.dtype()));
  }
}

// torch's IndexError for the first target outside [0, classes) that is not
// ignore_index.
void check_nll_bounds(
    const Tensor& target, int64_t classes, int64_t ignore_index) {
  AutoGradMode no_grad(false);
  Tensor t = kernels::cast(target, ScalarType::Int64);
  auto bound = [](double v) { return wrapped_scalar(v, ScalarType::Int64); };
  Tensor bad = logical_and(
      ne(t, bound(static_cast<double>(ignore_index))),
      logical_or(lt(t, bound(0)), ge(t, bound(static_cast<double>(classes)))));
  if (kernels::item(any(bad, std::nullopt, false, true)) == 0) {
    return;
  }
  Tensor first = masked_select(t, bad);
  NPGRAD_CHECK_INDEX(
      false,
      "Target ",
      static_cast<int64_t>(kernels::item(select(first, 0, 0))),
      " is out of bounds.");
}

template <typename NodeT>
Tensor nll_impl(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction,
    int64_t ignore_index,
    const char* function) {
  Reduction r = to_reduction(reduction);
  check_not_differentiable(weight, function, "weight");
  int64_t class_dim = input.dim() == 1 ? 0 : 1;
  Tensor out, total_weight;
  {
    AutoGradMode no_grad(false);
    Tensor losses, weights;
    if (!nll_losses_by_loop(
            input, target, weight, ignore_index, &losses, &weights)) {
      check_nll_bounds(target, input.sizes()[class_dim], ignore_index);
      Tensor safe;
      std::tie(safe, weights) =
          nll_target_weights(target, weight, ignore_index, input.dtype());
      Tensor picked = squeeze(
          gather(input, class_dim, unsqueeze(safe, class_dim), false),
          class_dim);
      losses = neg(mul(picked, weights));
    }
    if (r == Reduction::None) {
      out = losses;
      total_weight = kernels::full({}, 0, input.dtype());
    } else {
      total_weight = sum(weights);
      out = sum(losses);
      if (r == Reduction::Mean) {
        out = div(out, total_weight);
      }
    }
  }
  if (auto node = record<NodeT>(out, {&input})) {
    node->reduction = r;
    node->ignore_index = ignore_index;
    node->self_ = SavedVariable(input, false);
    node->target_ = SavedVariable(target, false);
    node->total_weight_ = SavedVariable(total_weight, false);
    node->weight_ = saved_if_defined(weight);
    node->two_d = std::is_same_v<NodeT, autograd::NllLoss2DBackward0>;
  }
  return out;
}

template <typename NodeT>
Tensor nll_backward_impl(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction,
    int64_t ignore_index,
    const Tensor& total_weight) {
  Reduction r = to_reduction(reduction);
  Tensor out;
  {
    AutoGradMode no_grad(false);
    Tensor grad = grad_output;
    if (r == Reduction::Mean) {
      grad = div(grad, total_weight);
    }
    // One loop over the targets where the layout allows (the same values).
    if (!nll_grad_by_loop(self, target, weight, ignore_index, grad, &out)) {
      auto [safe, weights] =
          nll_target_weights(target, weight, ignore_index, self.dtype());
      // -weight[t] * grad at each target's class, zero elsewhere (and for an
      // ignored target, even when the total weight is 0)
      Tensor ignored =
          eq(target,
             wrapped_scalar(
                 static_cast<double>(ignore_index), ScalarType::Int64));
      Tensor values =
          masked_fill(mul(neg(weights), grad), ignored, number(0));
      int64_t class_dim = self.dim() == 1 ? 0 : 1;
      // written into the fresh zeros (no graph: scatter need not copy them)
      out = scatter(
          zeros_like(self),
          class_dim,
          unsqueeze(safe, class_dim),
          unsqueeze(values, class_dim),
          true);
    }
  }
  if (auto node = record<NodeT>(out, {&grad_output, &self})) {
    node->reduction = r;
    node->ignore_index = ignore_index;
    node->target_ = SavedVariable(target, false);
    node->weight_ = saved_if_defined(weight);
  }
  return out;
}

}  // namespace

Tensor nll_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction,
    int64_t ignore_index,
    const Tensor& total_weight,
    bool two_d) {
  return two_d ? nll_backward_impl<autograd::NllLoss2DBackwardBackward0>(
                     grad_output,
                     self,
                     target,
                     weight,
                     reduction,
                     ignore_index,
                     total_weight)
               : nll_backward_impl<autograd::NllLossBackwardBackward0>(
                     grad_output,
                     self,
                     target,
                     weight,
                     reduction,
                     ignore_index,
                     total_weight);
}

Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction,
    int64_t ignore_index,
    bool two_d) {
  check_nll_args(input, target, weight, two_d);
  return two_d ? nll_impl<autograd::NllLoss2DBackward0>(
                     input,
                     target,
                     weight,
                     reduction,
                     ignore_index,
                     "nll_loss2d_forward")
               : nll_impl<autograd::NllLossBackward0>(
                     input,
                     target,
                     weight,
                     reduction,
                     ignore_index,
                     "nll_loss_forward");
}

}  // namespace npgrad::ops
