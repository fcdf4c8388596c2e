#pragma once
// Backward nodes of mm, mv, dot and batched matmul.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

struct MmBackward0 final : TwoOperandNode {
  MmBackward0() : TwoOperandNode("_saved_mat2") {}
  NPGRAD_NODE_NAME(MmBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    TwoOperandNode::visit_saved(v);
    v.int_list("_saved_mat2_sym_sizes", mat2_sizes);
    v.int_list("_saved_mat2_sym_strides", mat2_strides);
    v.int_list("_saved_self_sym_sizes", self_sizes);
    v.int_list("_saved_self_sym_strides", self_strides);
  }
  Shape self_sizes, self_strides, mat2_sizes, mat2_strides;
};

struct DotBackward0 final : TwoOperandNode {
  DotBackward0() : TwoOperandNode("_saved_tensor") {}
  NPGRAD_NODE_NAME(DotBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

struct MvBackward0 final : TwoOperandNode {
  MvBackward0() : TwoOperandNode("_saved_vec") {}
  NPGRAD_NODE_NAME(MvBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// Batched (>= 3-D, broadcasting) matmul in one node.
/// Deviation from torch: torch decomposes it into view/expand/bmm nodes.
struct BmmBackward0 final : TwoOperandNode {
  BmmBackward0() : TwoOperandNode("_saved_mat2") {}
  NPGRAD_NODE_NAME(BmmBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  /// The operands' shapes before broadcasting, to reduce each gradient to;
  /// not saved state in torch (whose bmm does not broadcast).
  Shape self_sizes, mat2_sizes;
};

}  // namespace npgrad::autograd
