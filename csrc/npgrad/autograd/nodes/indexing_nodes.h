#pragma once
// Backward nodes of the indexing ops that address elements by an index
// tensor or a mask: gather, scatter, scatter_add, index_select, index_add,
// index_copy, masked_select, masked_scatter. (Advanced indexing, x[idx], has
// its nodes in copy_nodes.h.)

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// Nodes that save the dim (as the caller passed it) and the index tensor.
struct DimIndexNode : FormulaNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.tensor("_saved_index", index_);
  }
  int64_t dim = 0;
  SavedVariable index_;
};

/// gather: the gradient scattered (added) into zeros of self's shape.
struct GatherBackward0 final : DimIndexNode {
  NPGRAD_NODE_NAME(GatherBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    DimIndexNode::visit_saved(v);
    v.tensor("_saved_self", self_);
    v.boolean("_saved_sparse_grad", sparse_grad);
  }
  SavedVariable self_;
  bool sparse_grad = false;
};

/// scatter with a src tensor: self gets the gradient with the written places
/// zeroed, src the gradient gathered from them.
struct ScatterBackward0 final : DimIndexNode {
  NPGRAD_NODE_NAME(ScatterBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// scatter with a number: self's gradient as ScatterBackward0's.
struct ScatterBackward1 final : DimIndexNode {
  NPGRAD_NODE_NAME(ScatterBackward1)
  void compute(const variable_list& g, variable_list& out) override;
};

/// scatter_add: self gets the gradient, src the gradient gathered.
struct ScatterAddBackward0 final : DimIndexNode {
  NPGRAD_NODE_NAME(ScatterAddBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// scatter_reduce: torch's scatter_reduce_backward for each reduce.
struct ScatterReduceBackward0 final : DimIndexNode {
  NPGRAD_NODE_NAME(ScatterReduceBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    DimIndexNode::visit_saved(v);
    v.boolean("_saved_include_self", include_self);
    v.text("_saved_reduce", reduce.c_str());
    v.tensor("_saved_result", result_);
    v.tensor("_saved_self", self_);
    v.tensor("_saved_src", src_);
  }
  bool include_self = true;
  std::string reduce;
  SavedVariable result_;
  SavedVariable self_;
  SavedVariable src_;
};

/// index_select: the gradient added into zeros of self's shape (index_add).
struct IndexSelectBackward0 final : DimIndexNode {
  NPGRAD_NODE_NAME(IndexSelectBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    DimIndexNode::visit_saved(v);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  Shape self_sizes;
};

/// index_add and index_copy: source's gradient is the gradient selected at
/// the index (times alpha for index_add). As torch's, the node saves index
/// (index_add) and source only when source's gradient is needed.
struct IndexSourceNode : DimIndexNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    DimIndexNode::visit_saved(v);
    v.tensor("_saved_source", source_);
    v.integer("_saved_source_dim", source_dim);
  }
  /// grad.index_select(dim, index) shaped as source (`index` is index_
  /// unpacked by the caller: a saved tensor is unpacked once per backward).
  Tensor source_grad(const Tensor& grad, const Tensor& index);
  SavedVariable source_;
  int64_t source_dim = 0;
};

struct IndexAddBackward0 final : IndexSourceNode {
  NPGRAD_NODE_NAME(IndexAddBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
    IndexSourceNode::visit_saved(v);
  }
  double alpha = 1;
};

/// index_copy: self's gradient is the gradient with the copied rows zeroed.
struct IndexCopyBackward0 final : IndexSourceNode {
  NPGRAD_NODE_NAME(IndexCopyBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// masked_select: the gradient scattered into zeros of the broadcast shape
/// at the mask (reduced to self's shape by the engine).
struct MaskedSelectBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(MaskedSelectBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_mask", mask_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable mask_;
  SavedVariable self_;
};

/// masked_scatter: self gets the gradient off the mask, source the
/// gradient at the mask in order (zeros for the source elements not used).
struct MaskedScatterBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(MaskedScatterBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_mask", mask_);
    v.int_list("_saved_source_sym_sizes", source_sizes);
  }
  SavedVariable mask_;
  Shape source_sizes;
};

}  // namespace npgrad::autograd
