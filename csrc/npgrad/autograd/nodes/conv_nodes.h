#pragma once
// Backward nodes of the convolutions and of their sliding-window halves
// (im2col, col2im). Each formula is written with the ops themselves, so a
// double backward records a graph of its own.

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// convolution (conv1d, conv2d and their transposed forms): the gradients of
/// input, weight and bias.
struct ConvolutionBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(ConvolutionBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if (bias_sizes) {
      v.int_list("_saved_bias_sym_sizes_opt", *bias_sizes);
    } else {
      v.none("_saved_bias_sym_sizes_opt");
    }
    v.int_list("_saved_dilation", dilation);
    v.integer("_saved_groups", groups);
    v.tensor("_saved_input", input_);
    v.int_list("_saved_output_padding", output_padding);
    v.int_list("_saved_padding", padding);
    v.int_list("_saved_stride", stride);
    v.boolean("_saved_transposed", transposed);
    v.tensor("_saved_weight", weight_);
  }
  std::optional<Shape> bias_sizes;
  Shape stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  SavedVariable input_, weight_;

 private:
  // The formulas, in the dtype of g (compute widens a reduced float to float32
  // first).
  void compute_in(
      const variable_list& g, Tensor x, Tensor w, variable_list& out);
};

/// im2col (unfold): its gradient is col2im of the gradient.
struct Im2ColBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(Im2ColBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_dilation", dilation);
    v.int_list("_saved_kernel_size", kernel_size);
    v.int_list("_saved_padding", padding);
    v.integer("_saved_self_sym_argsize_minus_1", width);
    v.integer("_saved_self_sym_argsize_minus_2", height);
    v.int_list("_saved_stride", stride);
  }
  Shape kernel_size, dilation, padding, stride;
  int64_t height = 0, width = 0;
};

/// col2im (fold): its gradient is im2col of the gradient.
struct Col2ImBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(Col2ImBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_dilation", dilation);
    v.int_list("_saved_kernel_size", kernel_size);
    v.int_list("_saved_padding", padding);
    v.int_list("_saved_stride", stride);
  }
  Shape kernel_size, dilation, padding, stride;
};

}  // namespace npgrad::autograd
