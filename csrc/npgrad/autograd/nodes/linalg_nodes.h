#pragma once
// Backward nodes of the matrix products (mm, addmm, bmm, baddbmm, dot, mv,
// addmv), as torch's derivatives.yaml declares them. matmul records no node of
// its own: it dispatches to these ops and views, as torch's does.

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

/// beta * self + alpha * mat1 @ mat2. Each matrix (and the other one's
/// strides) is saved only when the other matrix's gradient is needed.
struct AddmmBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AddmmBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
    v.real("_saved_beta", beta);
    v.tensor("_saved_mat1", mat1_);
    v.int_list("_saved_mat1_sym_sizes", mat1_sizes);
    v.int_list("_saved_mat1_sym_strides", mat1_strides);
    v.tensor("_saved_mat2", mat2_);
    v.int_list("_saved_mat2_sym_sizes", mat2_sizes);
    v.int_list("_saved_mat2_sym_strides", mat2_strides);
  }
  SavedVariable mat1_, mat2_;
  double alpha = 1, beta = 1;
  Shape mat1_sizes, mat1_strides, mat2_sizes, mat2_strides;
};

struct BmmBackward0 final : TwoOperandNode {
  BmmBackward0() : TwoOperandNode("_saved_mat2") {}
  NPGRAD_NODE_NAME(BmmBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// beta * self + alpha * bmm(batch1, batch2).
struct BaddbmmBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(BaddbmmBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
    v.tensor("_saved_batch1", batch1_);
    v.tensor("_saved_batch2", batch2_);
    v.real("_saved_beta", beta);
  }
  SavedVariable batch1_, batch2_;
  double alpha = 1, beta = 1;
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

/// beta * self + alpha * mat @ vec.
struct AddmvBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AddmvBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
    v.real("_saved_beta", beta);
    v.tensor("_saved_mat", mat_);
    v.tensor("_saved_vec", vec_);
  }
  SavedVariable mat_, vec_;
  double alpha = 1, beta = 1;
};

}  // namespace npgrad::autograd
