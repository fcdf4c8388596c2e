// npgrad.convolution, and the sliding windows _C._im2col and _C._col2im that
// npgrad.nn.functional's unfold and fold call (torch's torch._C._nn.im2col
// and col2im).
#include "npgrad/ops/conv.h"
#include "bindings.h"

namespace npgrad::bindings {

using namespace py::literals;

void bind_conv(py::module_& m) {
  // torch.convolution, and _C._conv_function: the same for conv1d, conv2d and
  // the transposed forms (an absent bias's sizes saved as (0,)).
  for (bool from_function : {false, true}) {
    m.def(
        from_function ? "_conv_function" : "convolution",
        [from_function](
            const Tensor& input,
            const Tensor& weight,
            const std::optional<Tensor>& bias,
            const Shape& stride,
            const Shape& padding,
            const Shape& dilation,
            bool transposed,
            const Shape& output_padding,
            int64_t groups) {
          return ops::convolution(
              input,
              weight,
              bias.value_or(Tensor()),
              stride,
              padding,
              dilation,
              transposed,
              output_padding,
              groups,
              from_function);
        },
        "input"_a,
        "weight"_a,
        "bias"_a,
        "stride"_a,
        "padding"_a,
        "dilation"_a,
        "transposed"_a,
        "output_padding"_a,
        "groups"_a);
  }
  m.def(
      "_im2col",
      &ops::im2col,
      "input"_a,
      "kernel_size"_a,
      "dilation"_a,
      "padding"_a,
      "stride"_a);
  m.def(
      "_col2im",
      &ops::col2im,
      "input"_a,
      "output_size"_a,
      "kernel_size"_a,
      "dilation"_a,
      "padding"_a,
      "stride"_a);
}

}  // namespace npgrad::bindings
