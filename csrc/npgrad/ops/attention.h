#pragma once
// scaled_dot_product_attention's CPU flash kernel as torch records it.

#include <optional>
#include <utility>

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

/// (output, logsumexp) of softmax(q @ k^T * scale + mask) @ v for 4-D
/// (batch, heads, tokens, features) inputs; attn_mask is an additive float
/// mask (or undefined), is_causal masks the keys after each query.
std::pair<Tensor, Tensor> scaled_dot_product_flash_attention(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& attn_mask,
    bool is_causal,
    std::optional<double> scale);

/// The attention scores q @ k^T * scale + mask (and the causal mask), with
/// key's heads repeated to query's: shared by the forward and the backward.
Tensor attention_scores(
    const Tensor& query,
    const Tensor& key,
    const Tensor& attn_mask,
    bool is_causal,
    double scale);

/// (softmax over the keys, logsumexp) of float32 / float64 scores; a query
/// whose keys are all masked gets zeros, as torch's kernel.
std::pair<Tensor, Tensor> attention_probs(const Tensor& scores);
/// The probabilities again from the logsumexp attention_probs gave, as
/// torch's flash backward does: exp(scores - lse), one pass, no row sums.
Tensor attention_probs_from_lse(const Tensor& scores, const Tensor& lse);

/// key's or value's heads repeated to `heads` (grouped-query attention).
Tensor repeat_heads(const Tensor& t, int64_t heads);

/// 1 / sqrt(features) unless a scale is given.
double attention_scale(const Tensor& query, std::optional<double> scale);

}  // namespace npgrad::ops
