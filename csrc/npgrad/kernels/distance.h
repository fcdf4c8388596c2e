#pragma once
// torch.cdist's p-norm distances and their gradient as loops over the pairs
// of rows (float32 / float64): no (rows x rows x features) temporaries.

#include <vector>

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

/// Note [Small trilinear in one loop]
/// torch's _trilinear (bilinear's product, and each of its gradients) is two
/// bmm of permuted, reshaped operands: about ten NumPy calls of a microsecond
/// each, whatever the size. Up to this many terms (the elements of the three
/// operands' broadcast shape) one loop over that shape is faster.
constexpr int64_t kSmallTrilinearTerms = 4096;

/// Whether trilinear_loop takes a, b and c: one rank, one float32/float64
/// dtype, sizes that broadcast to `shape`, at most kSmallTrilinearTerms terms.
bool trilinear_loop_fits(
    const Tensor& a, const Tensor& b, const Tensor& c, const Shape& shape);

/// out += the sum over the dims marked in `summed` of a * b * c, broadcast
/// to `shape` (a size-1 dim is read at index 0). `out` is contiguous, with
/// the dims of `shape` that are not summed.
void trilinear_loop(
    const Tensor& a,
    const Tensor& b,
    const Tensor& c,
    const Shape& shape,
    const std::vector<bool>& summed,
    const Tensor& out);

}  // namespace npgrad::kernels
