#include "npgrad/autograd/nodes/pooling_nodes.h"

#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {
// A list argument as torch's int[2] shows it: one int stands for both.
Shape as_pair(const Shape& s) {
  return s.size() == 1 ? Shape{s[0], s[0]} : s;
}
}  // namespace

void Pool2dNode::visit_args(SavedAttributeVisitor& v, bool is_max) {
  v.boolean("_saved_ceil_mode", args.ceil_mode);
  if (is_max) {
    v.int_list("_saved_dilation", as_pair(args.dilation));
  } else {
    v.boolean("_saved_count_include_pad", args.count_include_pad);
    if (args.divisor_override) {
      v.integer("_saved_divisor_override", *args.divisor_override);
    } else {
      v.none("_saved_divisor_override");
    }
  }
  v.int_list("_saved_kernel_size", as_pair(args.kernel_size));
  v.int_list("_saved_padding", as_pair(args.padding));
  v.int_list("_saved_stride", as_pair(args.stride));
}

void MaxPool2DWithIndicesBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = max_pool2d_with_indices_backward(
      g[0], self_.unpack(), args, result1_.unpack());
}

void AvgPool2DBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = avg_pool2d_backward(g[0], self_.unpack(), args);
}

void AvgPool2DBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  if (should_compute_output(0)) {
    out[0] = avg_pool2d(g[0], args);
  }
  if (should_compute_output(1)) {
    out[1] = zeros(self_sizes, self_dtype);
  }
}

void AdaptiveAvgPool2DBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = adaptive_avg_pool2d_backward(g[0], self_.unpack());
}

void AdaptiveAvgPool2DBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  if (should_compute_output(0)) {
    out[0] = adaptive_avg_pool2d(g[0], output_size);
  }
  if (should_compute_output(1)) {
    out[1] = zeros(self_sizes, self_dtype);
  }
}

void AdaptiveMaxPool2DBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] =
      adaptive_max_pool2d_backward(g[0], self_.unpack(), result1_.unpack());
}

void MaxPoolBackwardBackwardNode::compute(
    const variable_list& g, variable_list& out) {
  if (should_compute_output(0)) {
    // grad[..., indices] over each flattened H * W plane.
    Tensor indices = indices_.unpack();
    Shape planes = indices.sizes();
    Shape flat_self(planes.begin(), planes.end() - 2);
    flat_self.push_back(-1);
    Shape flat_indices = flat_self;
    Tensor picked = gather(
        reshape(g[0], flat_self), -1, reshape(indices, flat_indices), false);
    out[0] = reshape(picked, planes);
  }
  if (should_compute_output(1)) {
    out[1] = zeros(self_sizes, self_dtype);
  }
}

void ConstantPadNdBackward0::compute(
    const variable_list& g, variable_list& out) {
  Shape negated(pad.size());
  for (std::size_t i = 0; i < pad.size(); ++i) {
    negated[i] = -pad[i];
  }
  out[0] = constant_pad_nd(g[0], negated, 0);
}

}  // namespace npgrad::autograd
