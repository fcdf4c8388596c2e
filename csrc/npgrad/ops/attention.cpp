// scaled_dot_product_attention (CPU flash): batched matmuls, a logsumexp
// over the keys, and the recorded
// ScaledDotProductFlashAttentionForCpuBackward0.
#include "npgrad/ops/attention.h"

#include <cmath>
#include <limits>
#include <tuple>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/nodes/normalization_nodes.h"
#include "npgrad/kernels/attention.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

// True above the diagonal of an (L, S) grid: the keys a query may not see.
Tensor causal_mask(int64_t L, int64_t S) {
  Tensor m = kernels::empty(Shape{L, S}, ScalarType::Bool);
  auto* p = static_cast<bool*>(m.data_ptr());
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j < S; ++j) {
      p[i * S + j] = j > i;
    }
  }
  return m;
}

}  // namespace

double attention_scale(const Tensor& query, std::optional<double> scale) {
  return scale ? *scale
               : 1.0 / std::sqrt(static_cast<double>(query.sizes().back()));
}

Tensor repeat_heads(const Tensor& t, int64_t heads) {
  int64_t h = t.sizes()[1];
  return h == heads ? t : repeat_interleave(t, heads / h, 1, std::nullopt);
}

Tensor attention_scores(
    const Tensor& query,
    const Tensor& key,
    const Tensor& attn_mask,
    bool is_causal,
    double scale) {
  Tensor k = repeat_heads(key, query.sizes()[1]);
  Tensor scores = mul(matmul(query, transpose(k, -2, -1)), scalar(scale));
  if (attn_mask.defined()) {
    scores = add(scores, attn_mask);
  }
  if (is_causal) {
    scores = masked_fill(
        scores,
        causal_mask(query.sizes()[2], key.sizes()[2]),
        wrapped_scalar(
            -std::numeric_limits<double>::infinity(), ScalarType::Float64));
  }
  return scores;
}

std::pair<Tensor, Tensor> attention_probs(const Tensor& scores) {
  if (is_reduced_float(scores.dtype())) {
    // A reduced float computes in float32 and rounds once, as torch's kernel.
    auto [p, lse] = attention_probs(to_dtype(scores, ScalarType::Float32));
    return {to_dtype(p, scores.dtype()), to_dtype(lse, scores.dtype())};
  }
  return kernels::row_softmax(scores);
}

Tensor attention_probs_from_lse(const Tensor& scores, const Tensor& lse) {
  if (is_reduced_float(scores.dtype()) || lse.dtype() != scores.dtype()) {
    return attention_probs(scores).first;
  }
  return kernels::probs_from_lse(scores, lse);
}

std::pair<Tensor, Tensor> scaled_dot_product_flash_attention(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& attn_mask,
    bool is_causal,
    std::optional<double> scale) {
  Tensor out, lse;
  {
    AutoGradMode no_grad(false);
    // A reduced float computes in float32 and rounds the results once, as
    // torch's.
    ScalarType dt = opmath_type(query.dtype());
    Tensor q = to_dtype(query, dt);
    Tensor k = to_dtype(key, dt);
    Tensor v = to_dtype(value, dt);
    Tensor mask = attn_mask.defined() ? to_dtype(attn_mask, dt) : attn_mask;
    double s = attention_scale(query, scale);
    if (kernels::small_attention_fits(q, k, v, mask)) {
      std::tie(out, lse) =
          kernels::small_attention_forward(q, k, v, mask, is_causal, s);
    } else {
      Tensor p;
      std::tie(p, lse) =
          attention_probs(attention_scores(q, k, mask, is_causal, s));
      out = matmul(p, repeat_heads(v, query.sizes()[1]));
    }
    out = to_dtype(out, query.dtype());
    lse = to_dtype(lse, query.dtype());
  }
  if (auto node = record<ScaledDotProductFlashAttentionForCpuBackward0>(
          out, {&query, &key, &value})) {
    node->is_causal = is_causal;
    node->scale = scale;
    node->query_ = SavedVariable(query, false);
    node->key_ = SavedVariable(key, false);
    node->value_ = SavedVariable(value, false);
    node->attn_mask_ = SavedVariable(attn_mask, false);
    node->output_ = SavedVariable(out, true);
    node->logsumexp_ = SavedVariable(lse, false);
  }
  return {out, lse};
}

}  // namespace npgrad::ops
