#pragma once
// Loops of the normalizations and of embedding's backward over contiguous
// float32 / float64 buffers: one pass per statistic, no temporaries the
// size of the input.

#include <vector>

#include "npgrad/tensor/tensor.h"

namespace npgrad::kernels {

/// x: contiguous, M rows of N elements. Fills mean[M] and
/// rstd[M] = 1 / sqrt(biased variance + eps), in x's dtype.
void row_moments(
    const Tensor& x,
    int64_t M,
    int64_t N,
    double eps,
    const Tensor& mean,
    const Tensor& rstd);

/// row_moments, and out[m, n] = (x[m, n] - mean[m]) * rstd[m] * weight[n] +
/// bias[n] in the same sweep over the rows (each row is read from memory
/// once); weight and bias may be undefined (1 and 0). All contiguous, of x's
/// dtype.
void layer_norm_forward(
    const Tensor& x,
    int64_t M,
    int64_t N,
    double eps,
    const Tensor& weight,
    const Tensor& bias,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& out);

/// x: contiguous (N, C, HxW). Per channel, the mean and biased variance
/// over N and HxW (float64).
void channel_moments(
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    std::vector<double>& mean,
    std::vector<double>& var);

/// out[n, c, :] = (x[n, c, :] - center[k]) * scale[k] + shift[k] with
/// k = n * C + c (vectors of N * C entries), or k = c (C entries).
void channel_affine(
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    const std::vector<double>& center,
    const std::vector<double>& scale,
    const std::vector<double>& shift,
    const Tensor& out);

/// out[indices[k], :] += grad[k, :] * row_scale[k] for each k whose index
/// is not padding_idx (row_scale empty: 1). grad contiguous (K, D),
/// indices contiguous int64 (K), out contiguous (V, D) of grad's dtype.
void embedding_accumulate(
    const Tensor& grad,
    const Tensor& indices,
    int64_t padding_idx,
    const std::vector<double>& row_scale,
    const Tensor& out);

}  // namespace npgrad::kernels

namespace npgrad::kernels {

/// The gradients of layer_norm over M rows of N elements, from grad: dx (if
/// defined) = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with
/// gw = grad * weight, and dweight = sum over rows of grad * xhat, dbias =
/// sum over rows of grad (each if defined). All contiguous, of x's dtype.
void layer_norm_backward(
    const Tensor& grad,
    const Tensor& x,
    int64_t M,
    int64_t N,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& weight,
    const Tensor& dx,
    const Tensor& dweight,
    const Tensor& dbias);

/// The gradients of batch norm over contiguous (N, C, HxW) buffers of x's
/// dtype, per channel c with mean[c], invstd[c] (the batch's in training, the
/// running statistics' in evaluation) and weight[c]: in training dx =
/// invstd * weight * (grad - mean(grad) - xhat * mean(grad * xhat)) with the
/// means over N and HxW, in evaluation dx = grad * invstd * weight; dweight
/// = sum of grad * xhat, dbias = sum of grad (C entries). Each of dx,
/// dweight, dbias is written if defined. One pass over a channel for the two
/// sums (accumulated in float64 per channel), one for dx.
void batch_norm_backward(
    const Tensor& grad,
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    const std::vector<double>& mean,
    const std::vector<double>& invstd,
    const std::vector<double>& weight,
    bool train,
    const Tensor& dx,
    const Tensor& dweight,
    const Tensor& dbias);

/// The gradients of group norm over a contiguous (N, C, HxW) buffer of x's
/// dtype, `group` groups of C / group channels, with mean and rstd per (n,
/// group) (N * group entries) and weight[c]: dx = rstd * (gw - mean(gw) -
/// xhat * mean(gw * xhat)) with gw = grad * weight and the means over the
/// group, dweight = sum over n and HxW of grad * xhat, dbias = sum of grad
/// (C entries). Each of dx, dweight, dbias is written if defined.
void group_norm_backward(
    const Tensor& grad,
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    const std::vector<double>& mean,
    const std::vector<double>& rstd,
    const std::vector<double>& weight,
    const Tensor& dx,
    const Tensor& dweight,
    const Tensor& dbias);

}  // namespace npgrad::kernels
