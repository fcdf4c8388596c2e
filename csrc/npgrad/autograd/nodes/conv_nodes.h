#pragma once
// Backward nodes of the convolutions, of their backward op
// (convolution_backward) and of their sliding-window halves (im2col, col2im).
// Each formula is written with the ops themselves, so a double backward
// records a graph of its own.

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/ops/conv.h"

namespace npgrad::autograd {

/// The arguments both convolution nodes show.
struct ConvolutionNode : FormulaNode {
  void visit_args(SavedAttributeVisitor& v) const {
    v.int_list("_saved_dilation", args.dilation);
    v.integer("_saved_groups", args.groups);
    v.int_list("_saved_output_padding", args.output_padding);
    v.int_list("_saved_padding", args.padding);
    v.int_list("_saved_stride", args.stride);
    v.boolean("_saved_transposed", args.transposed);
  }
  ops::ConvArgs args;
};

/// convolution (conv1d, conv2d and their transposed forms): the gradients of
/// input, weight and bias, by the op convolution_backward.
struct ConvolutionBackward0 final : ConvolutionNode {
  NPGRAD_NODE_NAME(ConvolutionBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if (bias_sizes) {
      v.int_list("_saved_bias_sym_sizes_opt", *bias_sizes);
    } else {
      v.none("_saved_bias_sym_sizes_opt");
    }
    visit_args(v);
    v.tensor("_saved_input", input_);
    v.tensor("_saved_weight", weight_);
  }
  std::optional<Shape> bias_sizes;
  SavedVariable input_, weight_;
};

/// convolution_backward (the convolution's gradients under
/// create_graph=True): the gradients of grad_output, input and weight.
struct ConvolutionBackwardBackward0 final : ConvolutionNode {
  NPGRAD_NODE_NAME(ConvolutionBackwardBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    visit_args(v);
    v.tensor("_saved_grad_output", grad_output_);
    v.tensor("_saved_input", input_);
    v.tensor("_saved_weight", weight_);
  }
  SavedVariable grad_output_, input_, weight_;
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
