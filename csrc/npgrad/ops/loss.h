#pragma once
// The losses torch implements natively (torch._C._nn and
// torch.binary_cross_entropy_with_logits); the composite ones are in
// npgrad.nn.functional.

#include <utility>

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

// `reduction` is torch's enum: 0 none, 1 mean, 2 sum.
Tensor mse_loss(const Tensor& input, const Tensor& target, int64_t reduction);
Tensor smooth_l1_loss(
    const Tensor& input, const Tensor& target, int64_t reduction, double beta);
Tensor huber_loss(
    const Tensor& input, const Tensor& target, int64_t reduction, double delta);
/// torch's mse_loss_backward, smooth_l1_loss_backward, huber_loss_backward:
/// the losses' gradients in self (in target: self and target swapped), ops
/// of their own (MseLossBackwardBackward0, ...) so that a double backward
/// records torch's nodes.
Tensor mse_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    int64_t reduction);
Tensor smooth_l1_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    int64_t reduction,
    double beta);
Tensor huber_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    int64_t reduction,
    double delta);
Tensor soft_margin_loss(
    const Tensor& input, const Tensor& target, int64_t reduction);
/// `weight` may be undefined (none).
Tensor binary_cross_entropy(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction);
/// torch's binary_cross_entropy_backward: the loss's gradient in its input,
/// an op of its own (BinaryCrossEntropyBackwardBackward0) so that a double
/// backward records torch's node.
Tensor binary_cross_entropy_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction);
Tensor binary_cross_entropy_with_logits(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    const Tensor& pos_weight,
    int64_t reduction);
/// nll_loss of a 1-D or 2-D input (NllLossBackward0) and of a 4-D one
/// (NllLoss2DBackward0); `weight` may be undefined.
Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction,
    int64_t ignore_index,
    bool two_d);
/// torch's nll_loss_backward (nll_loss2d_backward when two_d): nll_loss's
/// gradient in its input, an op of its own (NllLossBackwardBackward0, ...)
/// so that a double backward records torch's nodes; `weight` may be
/// undefined, total_weight is the forward's.
Tensor nll_loss_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const Tensor& target,
    const Tensor& weight,
    int64_t reduction,
    int64_t ignore_index,
    const Tensor& total_weight,
    bool two_d);

}  // namespace npgrad::ops
