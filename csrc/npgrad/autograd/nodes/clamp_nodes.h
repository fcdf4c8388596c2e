#pragma once
// Backward nodes of clamp, clamp_min and clamp_max, with torch's names and
// saved attributes (derivatives.yaml). Each op has two overloads in torch:
// number bounds (ClampBackward1, ClampMinBackward0, ClampMaxBackward0: the
// node saves the numbers and self) and tensor bounds (ClampBackward0,
// ClampMinBackward1, ClampMaxBackward1: it saves the bound tensors and self,
// and the bounds get gradients too). The engine sums a broadcast gradient
// down to each input's shape.

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// Which bounds an op takes: clamp both (either may be absent), clamp_min
/// and clamp_max one.
enum class ClampSide { Both, Min, Max };

/// The number overloads: self's gradient where min <= self <= max.
template <ClampSide S>
struct ClampNumberBackward : FormulaNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if constexpr (S != ClampSide::Min) {
      visit_bound(v, "_saved_max", max);
    }
    if constexpr (S != ClampSide::Max) {
      visit_bound(v, "_saved_min", min);
    }
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_;
  std::optional<double> min, max;

 private:
  static void visit_bound(
      SavedAttributeVisitor& v, const char* name, std::optional<double> b) {
    if (b) {
      v.real(name, *b);
    } else {
      v.none(name);
    }
  }
};

/// The tensor overloads: inputs (self, min, max) for clamp, (self, bound)
/// for clamp_min and clamp_max; an absent bound of clamp is saved as None.
template <ClampSide S>
struct ClampTensorBackward : FormulaNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if constexpr (S != ClampSide::Min) {
      v.tensor("_saved_max", max_);
    }
    if constexpr (S != ClampSide::Max) {
      v.tensor("_saved_min", min_);
    }
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, min_, max_;
};

struct ClampBackward1 final : ClampNumberBackward<ClampSide::Both> {
  NPGRAD_NODE_NAME(ClampBackward1)
};
struct ClampMinBackward0 final : ClampNumberBackward<ClampSide::Min> {
  NPGRAD_NODE_NAME(ClampMinBackward0)
};
struct ClampMaxBackward0 final : ClampNumberBackward<ClampSide::Max> {
  NPGRAD_NODE_NAME(ClampMaxBackward0)
};
struct ClampBackward0 final : ClampTensorBackward<ClampSide::Both> {
  NPGRAD_NODE_NAME(ClampBackward0)
};
struct ClampMinBackward1 final : ClampTensorBackward<ClampSide::Min> {
  NPGRAD_NODE_NAME(ClampMinBackward1)
};
struct ClampMaxBackward1 final : ClampTensorBackward<ClampSide::Max> {
  NPGRAD_NODE_NAME(ClampMaxBackward1)
};

}  // namespace npgrad::autograd
