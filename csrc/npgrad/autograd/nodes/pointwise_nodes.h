#pragma once
// Backward nodes of arithmetic and unary math, with torch's names and saved
// attributes (derivatives.yaml).

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

struct RsubBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(RsubBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
  }
  double alpha = 1;
};

struct PowBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(PowBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_exponent", exponent);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_;
  double exponent = 0;
};

struct PowBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(PowBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_exponent", exponent_);
    v.tensor("_saved_result", result_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, exponent_, result_;
};

struct PowBackward2 final : FormulaNode {
  NPGRAD_NODE_NAME(PowBackward2)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_exponent", exponent_);
    v.tensor("_saved_result", result_);
    v.real("_saved_self", self);
  }
  SavedVariable exponent_, result_;
  double self = 0;
};

struct WhereBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(WhereBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_condition", condition_);
  }
  SavedVariable condition_;
};

/// masked_fill with a Python number: the filled places get no gradient.
struct MaskedFillBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(MaskedFillBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_mask", mask_);
  }
  SavedVariable mask_;
};

/// masked_fill with a 0-dim tensor value: the value gets the sum of the
/// gradient over the filled places.
struct MaskedFillBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(MaskedFillBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_mask", mask_);
  }
  SavedVariable mask_;
};

/// nan_to_num: the gradient passes where the input was finite.
struct NanToNumBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(NanToNumBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_;
};

/// sgn's backward for real tensors: zero. It saves what torch's formula
/// (written for complex inputs) saves.
struct SgnBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(SgnBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_result", result_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, result_;
};

/// threshold_backward(grad_output, self, threshold): differentiable in
/// grad_output (the same mask), zero in self.
struct ThresholdBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(ThresholdBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_self", self_);
    v.real("_saved_threshold", threshold);
  }
  SavedVariable self_;
  double threshold = 0;
};

struct ToCopyBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(ToCopyBackward0)
  void compute(const variable_list& g, variable_list& out) override {
    out[0] = g[0];
  }
};

}  // namespace npgrad::autograd
