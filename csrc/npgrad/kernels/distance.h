#pragma once
// torch.cdist's p-norm distances and their gradient as loops over the pairs
// of rows (float32 / float64): no (rows x rows x features) temporaries.

#include "npgrad/tensor/tensor.h"

namespace npgrad::kernels {

/// out[b, i, j] = the p-norm of x1[b, i, :] - x2[b, j, :] (p = 0: the count
/// of differing features; p = inf: the largest difference). x1 (B, n, d),
/// x2 (B, m, d) and out (B, n, m) contiguous, of one dtype.
void cdist_forward(
    const Tensor& x1, const Tensor& x2, double p, const Tensor& out);

/// torch's _cdist_backward: out[b, i, :] = the sum over j of the derivative
/// of dist[b, i, j] w.r.t. x1[b, i, :] times grad[b, i, j], with torch's
/// zeros where the distance (for p < 1 also a difference) is 0. grad and
/// dist (B, n, m), x1 and out (B, n, d), x2 (B, m, d), contiguous, of one
/// dtype.
void cdist_backward(
    const Tensor& grad,
    const Tensor& x1,
    const Tensor& x2,
    double p,
    const Tensor& dist,
    const Tensor& out);

}  // namespace npgrad::kernels
