#pragma once
// Convolutions of small inputs as direct loops (float32 / float64).
//
// Note [Small convolutions in direct loops]
// At model sizes a convolution is im2col and BLAS (conv.cpp, ops/conv.cpp);
// on a few channels of a few pixels each of those NumPy calls costs more
// than the arithmetic, so below kDirectConvWork multiply-adds the forward
// and both gradients are direct loops. Every one is a loop over the pairs of
// a position of the "small" grid o and a kernel tap t, which meet the
// position i = o * stride - padding + t * dilation of the "large" grid (skipped
// when it falls in the padding):
//   gather:  small[n, k, o] = sum over c, t of large[n, c, i] * w[k, c, t]
//   scatter: large[n, c, i] += small[n, k, o] * w[k, c, t]
//   weight:  w[k, c, t] += small[n, k, o] * large[n, c, i]
// with c over the group of k. A convolution's output is the small grid
// (forward: gather; input gradient: scatter; weight gradient: weight), a
// transposed convolution's input is (forward: scatter; input gradient:
// gather; weight gradient: weight). Grids are 2-d (a 1-d convolution has
// height 1); all tensors contiguous, of one dtype; the weight is (small
// channels, large channels / groups, kh, kw).

#include "npgrad/tensor/tensor.h"

namespace npgrad::kernels {

constexpr int64_t kDirectConvWork = 8192;

/// The windows' geometry of one 2-d convolution.
struct ConvWindows {
  int64_t stride[2], padding[2], dilation[2];
  int64_t groups;
};

/// Multiply-adds of one pass over small (N, K, oh, ow) with weight (K, C /
/// groups, kh, kw) (the int64 maximum when the product overflows).
int64_t direct_conv_work(const Shape& small, const Shape& weight);

/// small (N, K, oh, ow) from large (N, C, ih, iw): a new tensor.
Tensor conv_gather(
    const Tensor& large,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t oh,
    int64_t ow);

/// large (N, C, ih, iw) from small: a new tensor (zeros where no window
/// reaches).
Tensor conv_scatter(
    const Tensor& small,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t ih,
    int64_t iw);

/// The weight's gradient (K, C / groups, kh, kw): a new tensor.
Tensor conv_weight_grad(
    const Tensor& small,
    const Tensor& large,
    const ConvWindows& g,
    int64_t kh,
    int64_t kw);

}  // namespace npgrad::kernels
