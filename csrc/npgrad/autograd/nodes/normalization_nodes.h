#pragma once
// Backward nodes of the normalizations (native_layer_norm, native_group_norm,
// native_batch_norm), of their backward ops (native_layer_norm_backward,
// native_batch_norm_backward) and of embedding. Each saves what torch's node
// saves, under torch's names. The formulas are written with npgrad ops.
// Layer and batch norm's first-order nodes call their backward op, which
// records its own node under create_graph (torch's double backward); group
// norm's recomputes the statistics from the saved input under create_graph,
// so that its gradient is a differentiable function of the input.

#include <optional>
#include <vector>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), the means over dims:
/// the gradient w.r.t. x of xhat = (x - mean) * rstd (mean and rstd x's
/// statistics over dims) given gw, the gradient w.r.t. xhat.
Tensor normalized_grad(
    const Tensor& gw,
    const Tensor& xhat,
    const Tensor& rstd,
    const std::vector<int64_t>& dims);

/// Batch norm's view of an input (N, C, *): (N, C, HxW), each channel's
/// statistics over dims 0 and 2, shaped (1, C, 1).
struct ChannelGeometry {
  explicit ChannelGeometry(const Tensor& input) {
    int64_t N = input.sizes()[0];
    int64_t C = input.sizes()[1];
    flat = {N, C, N * C > 0 ? input.numel() / (N * C) : 0};
    stat = {1, C, 1};
  }
  Shape flat, stat;
  std::vector<int64_t> dims{0, 2};
};

/// Gradients w.r.t. (input, weight, bias) of native_layer_norm; torch's
/// result1 is the mean, result2 the reciprocal standard deviation.
struct NativeLayerNormBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(NativeLayerNormBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_bias", bias_);
    v.tensor("_saved_input", input_);
    v.int_list("_saved_normalized_shape", normalized_shape);
    v.tensor("_saved_result1", result1_);
    v.tensor("_saved_result2", result2_);
    v.tensor("_saved_weight", weight_);
  }
  Shape normalized_shape;
  SavedVariable input_, weight_, bias_, result1_, result2_;
};

/// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
/// weight, bias): gradients w.r.t. (grad_out, input, mean, rstd, weight, bias)
/// from those of (grad_input, grad_weight, grad_bias), torch's
/// layer_norm_double_backward. bias's gradient is none (the first-order
/// gradients do not depend on it); mean's and rstd's are not implemented.
struct NativeLayerNormBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(NativeLayerNormBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_grad_out", grad_out_);
    v.tensor("_saved_input", input_);
    v.tensor("_saved_mean", mean_);
    v.int_list("_saved_normalized_shape", normalized_shape);
    v.tensor("_saved_rstd", rstd_);
    v.tensor("_saved_weight", weight_);
  }
  Shape normalized_shape;
  SavedVariable grad_out_, input_, mean_, rstd_, weight_;
};

/// native_group_norm: input (N, C, HxW...) in `group` groups.
struct NativeGroupNormBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(NativeGroupNormBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  /// The formula in float32 for a reduced-float input (compute rounds the
  /// result).
  // The formulas in float32 (or float64) for the unpacked input.
  void compute_float(
      const Tensor& input, const variable_list& g, variable_list& out);
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_C", C);
    v.integer("_saved_HxW", HxW);
    v.integer("_saved_N", N);
    v.real("_saved_eps", eps);
    v.integer("_saved_group", group);
    v.tensor("_saved_input", input_);
    v.tensor("_saved_result1", result1_);
    v.tensor("_saved_result2", result2_);
    v.tensor("_saved_weight", weight_);
  }
  int64_t N = 0, C = 0, HxW = 0, group = 0;
  double eps = 0;
  SavedVariable input_, weight_, result1_, result2_;
};

/// native_batch_norm: in training, result1/result2 are the batch mean and
/// inverse standard deviation; in evaluation they are empty and the running
/// statistics normalize.
struct NativeBatchNormBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(NativeBatchNormBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_eps", eps);
    v.tensor("_saved_input", input_);
    v.tensor("_saved_result1", result1_);
    v.tensor("_saved_result2", result2_);
    v.tensor("_saved_running_mean", running_mean_);
    v.tensor("_saved_running_var", running_var_);
    v.boolean("_saved_training", training);
    v.tensor("_saved_weight", weight_);
  }
  double eps = 0;
  bool training = true;
  SavedVariable input_, weight_, running_mean_, running_var_, result1_,
      result2_;
};

/// native_batch_norm_backward(grad_out, input, weight, running_mean,
/// running_var, save_mean, save_invstd, train, eps): gradients w.r.t.
/// (grad_out, input, weight, save_mean, save_invstd) from those of
/// (grad_input, grad_weight, grad_bias), torch's batchnorm_double_backward
/// (the running statistics are not differentiable inputs; save_mean's and
/// save_invstd's gradients are not implemented).
struct NativeBatchNormBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(NativeBatchNormBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_eps", eps);
    v.tensor("_saved_grad_out", grad_out_);
    v.tensor("_saved_input", input_);
    v.tensor("_saved_running_mean", running_mean_);
    v.tensor("_saved_running_var", running_var_);
    v.tensor("_saved_save_invstd", save_invstd_);
    v.tensor("_saved_save_mean", save_mean_);
    v.boolean("_saved_train", train);
    v.tensor("_saved_weight", weight_);
  }
  double eps = 0;
  bool train = true;
  SavedVariable grad_out_, input_, weight_, running_mean_, running_var_,
      save_mean_, save_invstd_;
};

/// embedding(weight, indices): the gradient rows are summed into the rows
/// the indices name (none for padding_idx).
struct EmbeddingBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(EmbeddingBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_indices", indices_);
    v.integer("_saved_padding_idx", padding_idx);
    v.boolean("_saved_scale_grad_by_freq", scale_grad_by_freq);
    v.boolean("_saved_sparse", false);
    v.integer("_saved_weight_sym_argsize_0", num_weights);
  }
  int64_t padding_idx = -1;
  bool scale_grad_by_freq = false;
  int64_t num_weights = 0;
  ScalarType weight_dtype = ScalarType::Float32;
  SavedVariable indices_;
};

/// embedding_dense_backward (embedding's backward under create_graph): its
/// gradient w.r.t. grad_output.
struct EmbeddingDenseBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(EmbeddingDenseBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_indices", indices_);
    v.integer("_saved_padding_idx", padding_idx);
  }
  int64_t padding_idx = -1;
  SavedVariable indices_;
};

}  // namespace npgrad::autograd

namespace npgrad::autograd {

/// torch's CPU flash attention (_scaled_dot_product_flash_attention_for_cpu):
/// gradients w.r.t. (query, key, value); key and value may have fewer heads
/// (grouped-query attention), their gradients then sum over each group.
struct ScaledDotProductFlashAttentionForCpuBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(ScaledDotProductFlashAttentionForCpuBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_attn_mask", attn_mask_);
    v.real("_saved_dropout_p", 0.0);
    v.boolean("_saved_is_causal", is_causal);
    v.tensor("_saved_key", key_);
    v.tensor("_saved_logsumexp", logsumexp_);
    v.tensor("_saved_output", output_);
    v.tensor("_saved_query", query_);
    if (scale) {
      v.real("_saved_scale", *scale);
    } else {
      v.none("_saved_scale");
    }
    v.tensor("_saved_value", value_);
  }
  bool is_causal = false;
  std::optional<double> scale;
  SavedVariable query_, key_, value_, attn_mask_, output_, logsumexp_;
};

}  // namespace npgrad::autograd

namespace npgrad::autograd {

/// add(Tensor, Scalar) as torch's C++ composites call it (rms_norm's eps):
/// the gradient passes to self; nothing is saved.
struct AddBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(AddBackward1)
  void compute(const variable_list& g, variable_list& out) override {
    out[0] = g[0];
  }
};

/// sub(Tensor, Scalar) as torch's C++ composites call it
/// (cosine_embedding_loss's margin): the gradient passes to self; nothing is
/// saved.
struct SubBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(SubBackward1)
  void compute(const variable_list& g, variable_list& out) override {
    out[0] = g[0];
  }
};

}  // namespace npgrad::autograd
