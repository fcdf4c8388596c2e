#pragma once
// Backward nodes of the pointwise ops of three operands (lerp, addcmul,
// addcdiv) and of glu, with torch's names and saved attributes
// (derivatives.yaml). A tensor only some gradient reads is saved only when
// that gradient is needed, as torch does. The engine sums a broadcast
// gradient down to each input's shape.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// lerp with a Python number weight: saves only the weight.
struct LerpBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(LerpBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_weight", weight);
  }
  double weight = 0;
};

/// lerp with a tensor weight: self and end are saved only for the weight's
/// gradient.
struct LerpBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(LerpBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_end", end_);
    v.tensor("_saved_self", self_);
    v.tensor("_saved_weight", weight_);
  }
  SavedVariable self_, end_, weight_;
};

/// addcmul and addcdiv: self + value * tensor1 (* or /) tensor2.
struct AddcBackwardBase : FormulaNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_tensor1", tensor1_);
    v.tensor("_saved_tensor2", tensor2_);
    v.real("_saved_value", value);
  }
  SavedVariable tensor1_, tensor2_;
  double value = 1;
};

struct AddcmulBackward0 final : AddcBackwardBase {
  NPGRAD_NODE_NAME(AddcmulBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

struct AddcdivBackward0 final : AddcBackwardBase {
  NPGRAD_NODE_NAME(AddcdivBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// glu along `dim` (saved as given).
struct GluBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(GluBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_;
  int64_t dim = -1;
};

}  // namespace npgrad::autograd
