#pragma once
// The normalizations and embedding as torch's native ops: the forward
// values from the loops of kernels/normalization.h, the nodes of
// autograd/nodes/normalization_nodes.h.

#include <array>
#include <tuple>

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

/// (output, mean, rstd); weight and bias may be undefined.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(
    const Tensor& input,
    const Shape& normalized_shape,
    const Tensor& weight,
    const Tensor& bias,
    double eps);

/// (output, mean (N, group), rstd (N, group)).
std::tuple<Tensor, Tensor, Tensor> native_group_norm(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    double eps);

/// (output, save_mean, save_invstd); in training the running statistics (if
/// defined) are updated in place, with the unbiased variance; as torch's
/// kernel, that write leaves their version counters as they were.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const Tensor& running_mean,
    const Tensor& running_var,
    bool training,
    double momentum,
    double eps);

/// torch's native_group_norm_backward without a graph (a reduced float in
/// float32, rounded once): the gradients w.r.t. (input, weight, bias) that
/// output_mask asks for, from the saved mean and rstd (N, group).
std::tuple<Tensor, Tensor, Tensor> group_norm_backward_values(
    const Tensor& grad_out,
    const Tensor& input,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& weight,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    std::array<bool, 3> output_mask);

/// torch's native_layer_norm_backward: the gradients w.r.t. (input, weight,
/// bias) of native_layer_norm given grad_out, each only where output_mask
/// asks (else undefined). Under create_graph it records
/// NativeLayerNormBackwardBackward0, torch's double backward.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out,
    const Tensor& input,
    const Shape& normalized_shape,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& weight,
    const Tensor& bias,
    std::array<bool, 3> output_mask);

/// torch's native_batch_norm_backward: the gradients w.r.t. (input, weight,
/// bias) of native_batch_norm given grad_out, normalized by save_mean and
/// save_invstd in training, by the running statistics otherwise. Under
/// create_graph it records NativeBatchNormBackwardBackward0.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out,
    const Tensor& input,
    const Tensor& weight,
    const Tensor& running_mean,
    const Tensor& running_var,
    const Tensor& save_mean,
    const Tensor& save_invstd,
    bool train,
    double eps,
    std::array<bool, 3> output_mask);

/// self + other for a Scalar other (AddBackward1): the dtype of self.
Tensor add_scalar(const Tensor& self, double other);
/// self - other for a Scalar other (SubBackward1), as torch's C++ composites
/// call it (cosine_embedding_loss's margin): the dtype of self.
Tensor sub_scalar(const Tensor& self, double other);

Tensor embedding(
    const Tensor& weight,
    const Tensor& indices,
    int64_t padding_idx,
    bool scale_grad_by_freq);

}  // namespace npgrad::ops
