#pragma once
// Backward nodes of the scans (cumsum, cumprod) and of sort and topk. Dims are
// saved as the caller gave them (negative ones too), as torch does.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

struct CumsumBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(CumsumBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
  }
  int64_t dim = 0;
  ScalarType self_dtype = ScalarType::Float32;  // the gradient's dtype
};

struct CumprodBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(CumprodBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.tensor("_saved_result", result_);
    v.tensor("_saved_self", self_);
  }
  int64_t dim = 0;
  SavedVariable self_, result_;
};

/// sort and topk: the gradient of each output element goes to its index
/// along dim in the input.
struct ScatterAlongDimNode : FormulaNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.tensor("_saved_indices", indices_);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  int64_t dim = 0;
  Shape self_sizes;
  SavedVariable indices_;
};
/// sort(dim, descending) and msort.
struct SortBackward0 final : ScatterAlongDimNode {
  NPGRAD_NODE_NAME(SortBackward0)
};
/// sort with `stable=` given (torch's sort.stable overload).
struct SortBackward1 final : ScatterAlongDimNode {
  NPGRAD_NODE_NAME(SortBackward1)
};
struct TopkBackward0 final : ScatterAlongDimNode {
  NPGRAD_NODE_NAME(TopkBackward0)
};

}  // namespace npgrad::autograd
