// Pooling: the functions of npgrad._C._nn that npgrad.nn.functional calls
// (torch._C._nn's max_pool2d_with_indices, avg_pool2d, adaptive_*_pool2d;
// torch's constant_pad_nd)
// and the node classes. List arguments arrive as lists (functional.py turns
// a single int into one).
#include "bindings.h"
#include "npgrad/autograd/nodes/pooling_nodes.h"
#include "npgrad/ops/ops.h"

namespace npgrad::bindings {

using namespace pybind11::literals;

namespace {
template <typename T>
void bind_pool_node(py::module_& m, const char* name) {
  py::class_<T, autograd::Node, std::shared_ptr<T>>(
      m, name, py::custom_type_setup(setup_node_type_gc));
}

py::tuple as_tuple(const std::pair<Tensor, Tensor>& p) {
  return py::make_tuple(p.first, p.second);
}
}  // namespace

void bind_pooling(py::module_& m) {
  py::module_ fm = m.attr("_functions");
  using namespace autograd;
  bind_pool_node<MaxPool2DWithIndicesBackward0>(
      fm, "MaxPool2DWithIndicesBackward0");
  bind_pool_node<MaxPool2DWithIndicesBackwardBackward0>(
      fm, "MaxPool2DWithIndicesBackwardBackward0");
  bind_pool_node<AvgPool2DBackward0>(fm, "AvgPool2DBackward0");
  bind_pool_node<AvgPool2DBackwardBackward0>(fm, "AvgPool2DBackwardBackward0");
  bind_pool_node<AdaptiveAvgPool2DBackward0>(fm, "AdaptiveAvgPool2DBackward0");
  bind_pool_node<AdaptiveAvgPool2DBackwardBackward0>(
      fm, "AdaptiveAvgPool2DBackwardBackward0");
  bind_pool_node<AdaptiveMaxPool2DBackward0>(fm, "AdaptiveMaxPool2DBackward0");
  bind_pool_node<AdaptiveMaxPool2DBackwardBackward0>(
      fm, "AdaptiveMaxPool2DBackwardBackward0");
  bind_pool_node<ConstantPadNdBackward0>(fm, "ConstantPadNdBackward0");

  py::module_ nn = m.attr("_nn");
  nn.def(
      "max_pool2d_with_indices",
      [](const Tensor& input,
         Shape kernel_size,
         Shape stride,
         Shape padding,
         Shape dilation,
         bool ceil_mode) {
        ops::Pool2dArgs args{
            std::move(kernel_size),
            std::move(stride),
            std::move(padding),
            std::move(dilation),
            ceil_mode};
        return as_tuple(ops::max_pool2d_with_indices(input, args));
      },
      "input"_a,
      "kernel_size"_a,
      "stride"_a = Shape{},
      "padding"_a = Shape{0},
      "dilation"_a = Shape{1},
      "ceil_mode"_a = false);
  nn.def(
      "avg_pool2d",
      [](const Tensor& input,
         Shape kernel_size,
         Shape stride,
         Shape padding,
         bool ceil_mode,
         bool count_include_pad,
         std::optional<int64_t> divisor_override) {
        ops::Pool2dArgs args{
            std::move(kernel_size),
            std::move(stride),
            std::move(padding),
            {1},
            ceil_mode,
            count_include_pad,
            divisor_override};
        return ops::avg_pool2d(input, args);
      },
      "input"_a,
      "kernel_size"_a,
      "stride"_a = Shape{},
      "padding"_a = Shape{0},
      "ceil_mode"_a = false,
      "count_include_pad"_a = true,
      "divisor_override"_a = py::none());
  nn.def(
      "adaptive_avg_pool2d",
      [](const Tensor& input, const Shape& output_size) {
        return ops::adaptive_avg_pool2d(input, output_size);
      },
      "input"_a,
      "output_size"_a);
  nn.def(
      "adaptive_max_pool2d",
      [](const Tensor& input, const Shape& output_size) {
        return as_tuple(ops::adaptive_max_pool2d(input, output_size));
      },
      "input"_a,
      "output_size"_a);
  nn.def(
      "constant_pad_nd",
      [](const Tensor& input, const Shape& pad, double value) {
        return ops::constant_pad_nd(input, pad, value);
      },
      "input"_a,
      "pad"_a,
      "value"_a = 0.0);
}

}  // namespace npgrad::bindings
