#pragma once
// Backward nodes of arithmetic and unary math, with torch's names and saved
// attributes (derivatives.yaml).

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

struct AddBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AddBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
  }
  double alpha = 1;
};

struct SubBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(SubBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
  }
  double alpha = 1;
};

struct RsubBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(RsubBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.real("_saved_alpha", alpha);
  }
  double alpha = 1;
};

struct MulBackward0 final : TwoOperandNode {
  NPGRAD_NODE_NAME(MulBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

struct DivBackward0 final : TwoOperandNode {
  NPGRAD_NODE_NAME(DivBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

struct NegBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(NegBackward0)
  void compute(const variable_list& g, variable_list& out) override;
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

/// Unary nodes that save one tensor: the input (`_saved_self`) or the
/// output (`_saved_result`).
struct UnarySavedNode : FormulaNode {
  explicit UnarySavedNode(bool saves_result) : saves_result_(saves_result) {}
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor(saves_result_ ? "_saved_result" : "_saved_self", saved_);
  }
  Tensor saved() { return saved_.unpack(self_ptr()); }
  SavedVariable saved_;

 private:
  bool saves_result_;
};

#define NPGRAD_UNARY_NODE(N, saves_result)                             \
  struct N final : UnarySavedNode {                                    \
    N() : UnarySavedNode(saves_result) {}                              \
    NPGRAD_NODE_NAME(N)                                                \
    void compute(const variable_list& g, variable_list& out) override; \
  };

NPGRAD_UNARY_NODE(ReciprocalBackward0, true)
NPGRAD_UNARY_NODE(ExpBackward0, true)
NPGRAD_UNARY_NODE(LogBackward0, false)
NPGRAD_UNARY_NODE(SinBackward0, false)
NPGRAD_UNARY_NODE(CosBackward0, false)
NPGRAD_UNARY_NODE(TanhBackward0, true)
NPGRAD_UNARY_NODE(SigmoidBackward0, true)
NPGRAD_UNARY_NODE(ReluBackward0, true)
NPGRAD_UNARY_NODE(AbsBackward0, false)
NPGRAD_UNARY_NODE(SqrtBackward0, true)
#undef NPGRAD_UNARY_NODE

struct ClampBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(ClampBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if (max) {
      v.real("_saved_max", *max);
    } else {
      v.none("_saved_max");
    }
    if (min) {
      v.real("_saved_min", *min);
    } else {
      v.none("_saved_min");
    }
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_;
  std::optional<double> min, max;
};

struct WhereBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(WhereBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_condition", condition_);
  }
  SavedVariable condition_;
};

/// sgn's backward for real tensors: zero.
struct SgnBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(SgnBackward0)
  void compute(const variable_list& g, variable_list& out) override;
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
