#pragma once
// Backward nodes of mm, mv, dot and batched matmul.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

struct MmBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(MmBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void release_variables() override {
    self_.reset_data();
    mat2_.reset_data();
  }
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_mat2", mat2_);
    v.int_list("_saved_mat2_sym_sizes", mat2_sizes);
    v.int_list("_saved_mat2_sym_strides", mat2_strides);
    v.tensor("_saved_self", self_);
    v.int_list("_saved_self_sym_sizes", self_sizes);
    v.int_list("_saved_self_sym_strides", self_strides);
  }
  SavedVariable self_, mat2_;
  Shape self_sizes, self_strides, mat2_sizes, mat2_strides;
};

struct DotBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(DotBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void release_variables() override {
    self_.reset_data();
    tensor_.reset_data();
  }
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_self", self_);
    v.tensor("_saved_tensor", tensor_);
  }
  SavedVariable self_, tensor_;
};

struct MvBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(MvBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void release_variables() override {
    self_.reset_data();
    vec_.reset_data();
  }
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_self", self_);
    v.tensor("_saved_vec", vec_);
  }
  SavedVariable self_, vec_;
};

/// Batched (>= 3-D, broadcasting) matmul in one node.
/// Deviation from torch: torch decomposes it into view/expand/bmm nodes.
struct BmmBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(BmmBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void release_variables() override {
    self_.reset_data();
    mat2_.reset_data();
  }
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_mat2", mat2_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, mat2_;
};

}  // namespace npgrad::autograd
