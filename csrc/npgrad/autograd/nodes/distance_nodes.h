#pragma once
// Nodes of the ops of ops/distance.h, with torch's names and saved
// attributes.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// _trilinear: each input is saved only when another input's gradient
/// needs it (torch's `wrap_opt_if`); each gradient is a _trilinear itself.
struct TrilinearBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(TrilinearBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_expand1", expand1);
    v.int_list("_saved_expand2", expand2);
    v.int_list("_saved_expand3", expand3);
    v.tensor("_saved_i1", i1_);
    v.tensor("_saved_i2", i2_);
    v.tensor("_saved_i3", i3_);
    v.int_list("_saved_sumdim", sumdim);
  }
  Shape expand1, expand2, expand3, sumdim;
  SavedVariable i1_, i2_, i3_;
};

/// _cdist_forward.
struct CdistBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(CdistBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_p", p);
    v.tensor("_saved_result", result_);
    v.tensor("_saved_x1", x1_);
    v.tensor("_saved_x2", x2_);
  }
  double p = 2;
  SavedVariable x1_, x2_, result_;
};

/// _cdist_backward, whose derivative torch does not implement: a backward
/// through it raises torch's NotImplementedError.
struct CdistBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(CdistBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// _euclidean_dist: the gradient is written with differentiable ops.
struct EuclideanDistBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(EuclideanDistBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_result", result_);
    v.tensor("_saved_x1", x1_);
    v.tensor("_saved_x2", x2_);
  }
  SavedVariable x1_, x2_, result_;
};

}  // namespace npgrad::autograd
