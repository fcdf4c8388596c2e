#pragma once
// Backward nodes of upsampling (nearest, nearest-exact, linear, bilinear) and
// of its backward ops (the nodes a double backward records). Each shows the
// arguments as torch's node does: _saved_output_size, the scales (None when
// the output size was given), align_corners for the linear modes, and
// self's sizes on the forward nodes.

#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

struct UpsampleNode : FormulaNode {
  void visit_args(SavedAttributeVisitor& v);
  ops::UpsampleArgs args;
  Shape self_sizes;
};

/// The gradient of upsample: upsample_backward (records the node below).
struct UpsampleBackwardNode : UpsampleNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    visit_args(v);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
};

/// The gradient of upsample_backward with respect to grad_output: upsample.
struct UpsampleBackwardBackwardNode : UpsampleNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override { visit_args(v); }
};

// One C++ class (and Python type) per torch node name.
#define NPGRAD_UPSAMPLE_NODE(N, Base) \
  struct N final : Base {             \
    NPGRAD_NODE_NAME(N)               \
  };
// clang-format off
#define NPGRAD_FORALL_UPSAMPLE_NODES(_)                                 \
  _(UpsampleNearest1DBackward0, UpsampleBackwardNode)                   \
  _(UpsampleNearest2DBackward0, UpsampleBackwardNode)                   \
  _(UpsampleNearestExact1DBackward0, UpsampleBackwardNode)              \
  _(UpsampleNearestExact2DBackward0, UpsampleBackwardNode)              \
  _(UpsampleLinear1DBackward0, UpsampleBackwardNode)                    \
  _(UpsampleBilinear2DBackward0, UpsampleBackwardNode)                  \
  _(UpsampleNearest1DBackwardBackward0, UpsampleBackwardBackwardNode)   \
  _(UpsampleNearest2DBackwardBackward0, UpsampleBackwardBackwardNode)   \
  _(UpsampleNearestExact1DBackwardBackward0, UpsampleBackwardBackwardNode) \
  _(UpsampleNearestExact2DBackwardBackward0, UpsampleBackwardBackwardNode) \
  _(UpsampleLinear1DBackwardBackward0, UpsampleBackwardBackwardNode)    \
  _(UpsampleBilinear2DBackwardBackward0, UpsampleBackwardBackwardNode)
// clang-format on
NPGRAD_FORALL_UPSAMPLE_NODES(NPGRAD_UPSAMPLE_NODE)
#undef NPGRAD_UPSAMPLE_NODE

}  // namespace npgrad::autograd
