#pragma once
// Backward nodes of the view ops outside the view table (whose nodes come
// from their entries: view_family.h), and of the ops that undo views in
// backward (select_backward / slice_backward), which are differentiable
// themselves.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// Nodes whose formula reshapes the gradient back to the input sizes.
struct SizesNode : FormulaNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  Shape self_sizes;
};

/// reshape of a non-contiguous tensor that is still a view (torch's
/// _reshape_alias).
struct ReshapeAliasBackward0 final : SizesNode {
  NPGRAD_NODE_NAME(ReshapeAliasBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};
struct UnsafeViewBackward0 final : SizesNode {
  NPGRAD_NODE_NAME(UnsafeViewBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};
struct SliceBackward0 final : SizesNode {
  NPGRAD_NODE_NAME(SliceBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.integer("_saved_end", end_saved);
    SizesNode::visit_saved(v);
    v.integer("_saved_start", start_saved);
    v.integer("_saved_step", step);
  }
  int64_t dim = 0, start = 0, end = 0, step = 1;
  // As the user gave them (INT64_MAX for an omitted end, like torch).
  int64_t start_saved = 0, end_saved = 0;
};

/// The arguments of diagonal and diag_embed, as their nodes show them.
struct DiagonalArgs {
  int64_t offset = 0, dim1 = 0, dim2 = 1;
  void visit(SavedAttributeVisitor& v) const {
    v.integer("_saved_dim1", dim1);
    v.integer("_saved_dim2", dim2);
    v.integer("_saved_offset", offset);
  }
};

/// diag of a matrix: a copy of its diagonal (torch's diagonal_copy).
struct DiagonalBackward0_copy final : SizesNode {
  NPGRAD_NODE_NAME(DiagonalBackward0_copy)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    args.visit(v);
    SizesNode::visit_saved(v);
  }
  DiagonalArgs args;
};

/// split / chunk: the output gradients (zeros for an output nobody used)
/// concatenated along dim.
struct SplitBackward0 final : SizesNode {
  NPGRAD_NODE_NAME(SplitBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    SizesNode::visit_saved(v);
    v.integer("_saved_split_size", split_size);
  }
  int64_t dim = 0, split_size = 0;
};

struct SplitWithSizesBackward0 final : SizesNode {
  NPGRAD_NODE_NAME(SplitWithSizesBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    SizesNode::visit_saved(v);
    v.int_list("_saved_split_sizes", split_sizes);
  }
  int64_t dim = 0;
  Shape split_sizes;
};

/// unbind: the output gradients stacked along dim. torch saves only dim; the
/// sizes are the input's, kept for the zeros of unused outputs (not shown).
struct UnbindBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(UnbindBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
  }
  int64_t dim = 0;
  Shape self_sizes;
};

struct AliasBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AliasBackward0)
  void compute(const variable_list& g, variable_list& out) override {
    out[0] = g[0];
  }
};

struct SelectBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(SelectBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.integer("_saved_index", index);
  }
  int64_t dim = 0, index = 0;
};

struct SliceBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(SliceBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.integer("_saved_end", end);
    v.integer("_saved_start", start);
    v.integer("_saved_step", step);
  }
  int64_t dim = 0, start = 0, end = 0, step = 1;
};

struct DiagonalBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(DiagonalBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override { args.visit(v); }
  DiagonalArgs args;
};

struct UnfoldBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(UnfoldBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.integer("_saved_size", size);
    v.integer("_saved_step", step);
  }
  int64_t dim = 0, size = 0, step = 1;
};

}  // namespace npgrad::autograd

namespace npgrad::autograd {

/// Geometry of a view relative to its root base's data (elements).
struct ViewGeometry {
  Shape base_sizes, base_strides;
  Shape sizes, strides;
  int64_t offset = 0;
};

/// A view's grad_fn after its base (or another view) was modified in place:
/// the gradient flows to the base through the view's region.
struct AsStridedBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AsStridedBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_size", geometry.sizes);
    v.integer("_saved_storage_offset", geometry.offset);
    v.int_list("_saved_stride", geometry.strides);
  }
  ViewGeometry geometry;
};

/// The backward of as_strided_backward: read the region again.
struct AsStridedScatterBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AsStridedScatterBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  ViewGeometry geometry;
};

}  // namespace npgrad::autograd
