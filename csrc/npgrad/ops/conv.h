#pragma once
// The convolutions (torch.convolution, which conv1d, conv2d and their
// transposed forms call) and their sliding-window halves im2col (unfold) and
// col2im (fold).

#include <array>

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

/// A convolution's arguments after torch's checks: one value per spatial dim.
struct ConvArgs {
  Shape stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

/// torch.convolution: input (N, C, *spatial) and weight (out, C / groups,
/// *kernel), or with `transposed` weight (C, out / groups, *kernel); bias
/// undefined or (out,). One or two spatial dims. Records
/// ConvolutionBackward0; its _saved_bias_sym_sizes_opt of an absent bias is
/// None, or (0,) with `from_conv_function` (torch's conv1d, conv2d and
/// conv_transposeNd record that).
Tensor convolution(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const Shape& stride,
    const Shape& padding,
    const Shape& dilation,
    bool transposed,
    const Shape& output_padding,
    int64_t groups,
    bool from_conv_function = false);

/// torch's convolution_backward: the gradients (grad_input, grad_weight,
/// grad_bias) of a convolution of `input` and `weight` with `args`, each
/// undefined where output_mask is false. The values are computed without a
/// graph; when grad_output, input or weight requires grad, the three results
/// are the outputs of one ConvolutionBackwardBackward0 (torch's node under
/// create_graph=True). torch's bias_sizes argument is left out: the bias's
/// gradient only needs grad_output.
std::array<Tensor, 3> convolution_backward(
    const Tensor& grad_output,
    const Tensor& input,
    const Tensor& weight,
    const ConvArgs& args,
    std::array<bool, 3> output_mask);

/// torch's im2col: the windows of a (C, H, W) or (N, C, H, W) input as
/// columns (N, C * kH * kW, L). Records Im2ColBackward0.
Tensor im2col(
    const Tensor& self,
    const Shape& kernel_size,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride);

/// torch's col2im: columns (C * kH * kW, L) or (N, C * kH * kW, L) summed
/// into an (N, C, *output_size) tensor. Records Col2ImBackward0.
Tensor col2im(
    const Tensor& self,
    const Shape& output_size,
    const Shape& kernel_size,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride);

}  // namespace npgrad::ops
