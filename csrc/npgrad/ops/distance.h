#pragma once
// The ops behind torch.bilinear and torch.cdist as torch records them:
// `_trilinear` (TrilinearBackward0), `_cdist_forward` (CdistBackward0, whose
// formula `_cdist_backward` torch does not differentiate again) and, for the
// matrix-multiply path of p = 2, `_euclidean_dist` (EuclideanDistBackward0);
// and cosine_similarity's composite.

#include <optional>
#include <vector>

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

/// torch's _trilinear: each input unsqueezed at its `expand` dims (to one
/// common rank), multiplied together and summed over `sumdim`, which the
/// result drops.
Tensor trilinear(
    const Tensor& i1,
    const Tensor& i2,
    const Tensor& i3,
    const std::vector<int64_t>& expand1,
    const std::vector<int64_t>& expand2,
    const std::vector<int64_t>& expand3,
    const std::vector<int64_t>& sumdim,
    int64_t unroll_dim);

/// torch.cdist (at::cdist): the p-norm distances between the rows of x1 and
/// x2, batch dims broadcast. compute_mode: nullopt (the mm path for p = 2
/// when a side has more than 25 rows), 1 (always for p = 2), 2 (never).
Tensor cdist(
    const Tensor& x1,
    const Tensor& x2,
    double p,
    std::optional<int64_t> compute_mode);

/// torch.nn.functional.cosine_similarity, torch's composite: x1 and x2
/// expanded to their broadcast shape (unless their shapes are the same),
/// each divided by its 2-norm over `dim` (kept, cloned and clamped below at
/// eps without grad), multiplied and summed over `dim`.
Tensor cosine_similarity(
    const Tensor& x1, const Tensor& x2, int64_t dim, double eps);

/// The gradient of _cdist_forward for x1 (torch's _cdist_backward), of
/// x1's broadcast shape; recorded as CdistBackwardBackward0, which raises
/// torch's error if differentiated.
Tensor cdist_backward(
    const Tensor& grad,
    const Tensor& x1,
    const Tensor& x2,
    double p,
    const Tensor& cdist);

}  // namespace npgrad::ops
