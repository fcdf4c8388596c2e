#pragma once
// The backward node of embedding_bag and the node its backward op records.
// EmbeddingBagBackward0 shows what torch's shows: the indices and offsets,
// offset2bag, bag_size and max_indices (_saved_result1..3), the mode, and the
// weight only when per_sample_weights needs a gradient (that gradient reads
// it).

#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

struct EmbeddingBagBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(EmbeddingBagBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_indices", indices_);
    v.integer("_saved_mode", mode);
    v.tensor("_saved_offsets", offsets_);
    v.unsigned_integer("_saved_padding_idx", padding_idx);
    v.tensor("_saved_per_sample_weights", per_sample_weights_);
    v.tensor("_saved_result1", offset2bag_);
    v.tensor("_saved_result2", bag_size_);
    v.tensor("_saved_result3", max_indices_);
    v.boolean("_saved_scale_grad_by_freq", scale_grad_by_freq);
    v.boolean("_saved_sparse", false);
    v.tensor("_saved_weight", weight_);
    v.integer("_saved_weight_sym_argsize_0", num_weights);
  }
  int64_t mode = 0;
  int64_t padding_idx = -1;
  bool scale_grad_by_freq = false;
  int64_t num_weights = 0;
  ScalarType weight_dtype = ScalarType::Float32;
  SavedVariable indices_, offsets_, per_sample_weights_, offset2bag_, bag_size_,
      max_indices_, weight_;
};

/// torch has no derivative of _embedding_bag_backward: a backward through
/// this node raises its NotImplementedError.
struct EmbeddingBagBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(EmbeddingBagBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor&) override {}
};

}  // namespace npgrad::autograd
