#pragma once
// Backward nodes of 2-D pooling (max, average, adaptive), of their
// backward ops, and of constant padding (the nodes a double backward records).
// The arguments are saved as torch shows them: kernel_size, padding and
// dilation as pairs, stride as given (empty when it defaulted to kernel_size).

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

/// The arguments every max and average pooling node shows.
struct Pool2dNode : FormulaNode {
  void visit_args(SavedAttributeVisitor& v, bool is_max);
  ops::Pool2dArgs args;
};

struct MaxPool2DWithIndicesBackward0 final : Pool2dNode {
  NPGRAD_NODE_NAME(MaxPool2DWithIndicesBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    visit_args(v, true);
    v.tensor("_saved_result1", result1_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, result1_;
};

struct AvgPool2DBackward0 final : Pool2dNode {
  NPGRAD_NODE_NAME(AvgPool2DBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    visit_args(v, false);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_;
};

struct AvgPool2DBackwardBackward0 final : Pool2dNode {
  NPGRAD_NODE_NAME(AvgPool2DBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override { visit_args(v, false); }
  Shape self_sizes;
  ScalarType self_dtype = ScalarType::Float32;
};

struct AdaptiveAvgPool2DBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AdaptiveAvgPool2DBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_;
};

struct AdaptiveAvgPool2DBackwardBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AdaptiveAvgPool2DBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_grad_output_sym_argsize_minus_1", output_size[1]);
    v.integer("_saved_grad_output_sym_argsize_minus_2", output_size[0]);
  }
  Shape output_size;
  Shape self_sizes;
  ScalarType self_dtype = ScalarType::Float32;
};

struct AdaptiveMaxPool2DBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(AdaptiveMaxPool2DBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_result1", result1_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, result1_;
};

/// The double backward of max pooling (fixed and adaptive): the gradient of
/// grad_output gathers through the saved indices; self gets zeros.
struct MaxPoolBackwardBackwardNode : FormulaNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_indices", indices_);
  }
  SavedVariable indices_;
  Shape self_sizes;
  ScalarType self_dtype = ScalarType::Float32;
};
struct MaxPool2DWithIndicesBackwardBackward0 final
    : MaxPoolBackwardBackwardNode {
  NPGRAD_NODE_NAME(MaxPool2DWithIndicesBackwardBackward0)
};
struct AdaptiveMaxPool2DBackwardBackward0 final : MaxPoolBackwardBackwardNode {
  NPGRAD_NODE_NAME(AdaptiveMaxPool2DBackwardBackward0)
};

struct ConstantPadNdBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(ConstantPadNdBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_pad", pad);
  }
  Shape pad;
};

}  // namespace npgrad::autograd
