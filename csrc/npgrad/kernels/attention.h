#pragma once
// Attention on small inputs as plain loops (float32 / float64).
//
// Note [Small attention in one loop]
// At model sizes attention is batched matmuls and row passes
// (ops/attention.cpp); each of those is a NumPy call with a fixed cost of about
// a microsecond, and the forward and backward make about thirty of them. On a
// few heads of a few tokens that fixed cost is nearly all of the time, so below
// kSmallAttentionWork multiply-adds the forward and the backward are one loop
// each over (batch, head, query): scores, softmax and products per query row,
// with no temporaries but the row. The arithmetic is the same as the passes' (a
// row of -inf gives zero probabilities and a logsumexp of -inf; NaN propagates
// through the max), in another summation order.

#include <utility>

#include "npgrad/tensor/tensor.h"

namespace npgrad::kernels {

/// Below this many multiply-adds (batch x query heads x queries x keys x
/// (features + value features)) the loops are faster than the NumPy passes.
constexpr int64_t kSmallAttentionWork = 8192;

/// Whether the loops take this attention: query (B, Hq, L, E), key (B, Hk, S,
/// E) and value (B, Hk, S, Ev), all 4-D of one float32/float64 dtype and one
/// batch size, Hq a multiple of Hk, no empty dim, an additive mask (or none)
/// of the same dtype that broadcasts to (B, Hq, L, S), and little work.
bool small_attention_fits(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& mask);

/// The output (B, Hq, L, Ev) and the logsumexp of the scores (B, Hq, L),
/// both contiguous: softmax(query @ key^T * scale + mask) @ value, each group
/// of Hq / Hk query heads reading one key/value head; `is_causal` hides the
/// keys after each query (j > i).
std::pair<Tensor, Tensor> small_attention_forward(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& mask,
    bool is_causal,
    double scale);

struct AttentionGrads {
  Tensor query, key, value;
};

/// The gradients of small_attention_forward from the incoming gradient, its
/// output and logsumexp (the probabilities are recomputed from them); the key
/// and value gradients sum over each group of query heads. `grad`, `output`
/// and `logsumexp` have the forward's shapes and the inputs' dtype.
AttentionGrads small_attention_backward(
    const Tensor& grad,
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& mask,
    bool is_causal,
    double scale,
    const Tensor& output,
    const Tensor& logsumexp);

}  // namespace npgrad::kernels
