#pragma once
// Backward nodes of the losses torch implements natively (mse_loss,
// smooth_l1_loss, huber_loss, soft_margin_loss, binary_cross_entropy, its
// with_logits form, nll_loss and nll_loss2d), with torch's names and saved
// attributes. `_saved_reduction` is torch's enum: 0 none, 1 mean, 2 sum.

#include <string>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// torch's at::Reduction values.
enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };

/// A loss of input and target elementwise, then reduced.
struct PointwiseLossNode : FormulaNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_reduction", static_cast<int64_t>(reduction));
    v.tensor("_saved_self", self_);
    v.tensor("_saved_target", target_);
  }
  /// The incoming gradient of the reduced loss, divided by the number of
  /// elements for a mean: each element's share.
  Tensor share(const Tensor& grad, int64_t numel) const;
  SavedVariable self_, target_;
  Reduction reduction = Reduction::Mean;
};

/// The losses whose gradient is an op of its own in torch
/// (mse_loss_backward, smooth_l1_loss_backward, huber_loss_backward).
enum class PointwiseLoss { Mse, SmoothL1, Huber };

/// The node of such a backward op (MseLossBackwardBackward0, ...), inputs
/// grad_output, self, target; `param` is smooth_l1's beta or huber's delta.
template <PointwiseLoss K>
struct LossBackwardBackward final : FormulaNode {
  std::string name() const override {
    if constexpr (K == PointwiseLoss::Mse) {
      return "MseLossBackwardBackward0";
    } else if constexpr (K == PointwiseLoss::SmoothL1) {
      return "SmoothL1LossBackwardBackward0";
    } else {
      return "HuberLossBackwardBackward0";
    }
  }
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if constexpr (K == PointwiseLoss::SmoothL1) {
      v.real("_saved_beta", param);
    } else if constexpr (K == PointwiseLoss::Huber) {
      v.real("_saved_delta", param);
    }
    v.tensor("_saved_grad_output", grad_output_);
    v.integer("_saved_reduction", static_cast<int64_t>(reduction));
    v.tensor("_saved_self", self_);
    v.tensor("_saved_target", target_);
  }
  SavedVariable grad_output_, self_, target_;
  Reduction reduction = Reduction::Mean;
  double param = 0;
};
using MseLossBackwardBackward0 = LossBackwardBackward<PointwiseLoss::Mse>;
using SmoothL1LossBackwardBackward0 =
    LossBackwardBackward<PointwiseLoss::SmoothL1>;
using HuberLossBackwardBackward0 = LossBackwardBackward<PointwiseLoss::Huber>;

struct MseLossBackward0 final : PointwiseLossNode {
  NPGRAD_NODE_NAME(MseLossBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

struct SmoothL1LossBackward0 final : PointwiseLossNode {
  NPGRAD_NODE_NAME(SmoothL1LossBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_beta", beta);
    PointwiseLossNode::visit_saved(v);
  }
  double beta = 1;
};

struct HuberLossBackward0 final : PointwiseLossNode {
  NPGRAD_NODE_NAME(HuberLossBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_delta", delta);
    PointwiseLossNode::visit_saved(v);
  }
  double delta = 1;
};

/// The target gets no gradient (torch refuses a target requiring grad).
struct SoftMarginLossBackward0 final : PointwiseLossNode {
  NPGRAD_NODE_NAME(SoftMarginLossBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// `weight` (None when not given) gets no gradient.
struct BinaryCrossEntropyBackward0 final : PointwiseLossNode {
  NPGRAD_NODE_NAME(BinaryCrossEntropyBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_weight", weight_);
    PointwiseLossNode::visit_saved(v);
  }
  SavedVariable weight_;
};

/// binary_cross_entropy_backward's node, inputs grad_output, self, target
/// (`weight` gets no gradient).
struct BinaryCrossEntropyBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(BinaryCrossEntropyBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_grad_output", grad_output_);
    v.integer("_saved_reduction", static_cast<int64_t>(reduction));
    v.tensor("_saved_self", self_);
    v.tensor("_saved_target", target_);
    v.tensor("_saved_weight", weight_);
  }
  SavedVariable grad_output_, self_, target_, weight_;
  Reduction reduction = Reduction::Mean;
};

struct BinaryCrossEntropyWithLogitsBackward0 final : PointwiseLossNode {
  NPGRAD_NODE_NAME(BinaryCrossEntropyWithLogitsBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_pos_weight", pos_weight_);
    v.tensor("_saved_weight", weight_);
    PointwiseLossNode::visit_saved(v);
  }
  SavedVariable weight_, pos_weight_;
};

/// nll_loss (1-D or 2-D input) and nll_loss2d (4-D input): the classes
/// along dim 1 (dim 0 of a 1-D input); only the input gets a gradient.
struct NllLossBackwardBase : FormulaNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_ignore_index", ignore_index);
    v.integer("_saved_reduction", static_cast<int64_t>(reduction));
    v.tensor("_saved_self", self_);
    v.tensor("_saved_target", target_);
    v.tensor("_saved_total_weight", total_weight_);
    v.tensor("_saved_weight", weight_);
  }
  SavedVariable self_, target_, weight_, total_weight_;
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
  bool two_d = false;  // nll_loss2d's node
};

struct NllLossBackward0 final : NllLossBackwardBase {
  NPGRAD_NODE_NAME(NllLossBackward0)
};

struct NllLoss2DBackward0 final : NllLossBackwardBase {
  NPGRAD_NODE_NAME(NllLoss2DBackward0)
};

/// The node of nll_loss_backward / nll_loss2d_backward (TwoD), inputs
/// grad_output and self: its derivative in grad_output is nll_loss of the
/// incoming gradient (the backward is linear there), zero in self.
template <bool TwoD>
struct NllLossBackwardBackward final : FormulaNode {
  std::string name() const override {
    return TwoD ? "NllLoss2DBackwardBackward0" : "NllLossBackwardBackward0";
  }
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_ignore_index", ignore_index);
    v.integer("_saved_reduction", static_cast<int64_t>(reduction));
    v.tensor("_saved_target", target_);
    v.tensor("_saved_weight", weight_);
  }
  SavedVariable target_, weight_;
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
};
using NllLossBackwardBackward0 = NllLossBackwardBackward<false>;
using NllLoss2DBackwardBackward0 = NllLossBackwardBackward<true>;

}  // namespace npgrad::autograd
