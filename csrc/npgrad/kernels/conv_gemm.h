#pragma once
// Convolutions of model size as float32 GEMMs (kernels/gemm.h).
//
// Note [Convolutions as GEMMs]
// A convolution is a matrix product with the input's windows as columns
// (im2col): out[n] (K x L) = w (K x C * T) @ columns[n] (C * T x L), for T
// kernel taps and L output positions. Stored whole for a batch, the
// columns of a layer of model size (64 x 32 x 32 x 32, 3 x 3) take 75 MB
// that the forward writes and the product then reads back from memory, and
// again for the weight's gradient, whose per-sample products were stored
// and summed too. Here nothing of that size is stored:
// - each sample is copied once into a zero-padded buffer, in which, at
//   stride 1, a kernel tap of every window is a fixed offset from the
//   window's start;
// - gather (the forward): the product runs over the window starts of whole
//   padded rows, so that a tap's row of columns is a contiguous run of the
//   padded image, read in place by the GEMM's micro-kernel and never copied
//   (the positions past each row of windows are computed and dropped);
// - weight: one product per sample, each added into the one weight gradient,
//   the transposed columns packed straight from the padded image 16 x 16 at
//   a time (gemm::pack_columns);
// - scatter (the input's gradient): at stride 1 the adjoint of a
//   convolution is a convolution of grad with the weight transposed and
//   flipped, so the gather again (no col2im).
// The three are the same gather/scatter/weight passes as the direct loops
// (Note [Small convolutions in direct loops] in conv_direct.h), with the same
// arguments: transposed convolutions use them with the grids' roles swapped.
// Only float32, and only where the GEMM is AVX-512's (gemm::available()).

#include "npgrad/kernels/conv_direct.h"

namespace npgrad::kernels {

/// Whether the conv_gemm_* passes run: float32 on a CPU with the AVX-512
/// GEMM, stride 1, and padding at most dilation * (k - 1) (the input
/// gradient's padding, d * (k - 1) - p, is then not negative).
bool conv_gemm_applies(
    ScalarType dtype, const ConvWindows& g, int64_t kh, int64_t kw);

/// small (N, K, oh, ow) from large (N, C, ih, iw): a new tensor.
Tensor conv_gemm_gather(
    const Tensor& large,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t oh,
    int64_t ow);

/// large (N, C, ih, iw) from small: a new tensor (zeros where no window
/// reaches).
Tensor conv_gemm_scatter(
    const Tensor& small,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t ih,
    int64_t iw);

/// The weight's gradient (K, C / groups, kh, kw): a new tensor.
Tensor conv_gemm_weight_grad(
    const Tensor& small,
    const Tensor& large,
    const ConvWindows& g,
    int64_t kh,
    int64_t kw);

}  // namespace npgrad::kernels
