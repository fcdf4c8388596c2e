#include "npgrad/autograd/nodes/conv_nodes.h"

#include <algorithm>
#include <array>

#include "npgrad/ops/conv.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void ConvolutionBackward0::compute(const variable_list& g, variable_list& out) {
  std::array<Tensor, 3> grads = convolution_backward(
      g[0],
      input_.unpack(),
      weight_.unpack(),
      args,
      {task_should_compute_output(0),
       task_should_compute_output(1),
       task_should_compute_output(2)});
  std::move(grads.begin(), grads.end(), out.begin());
}

// The convolution y = B(input, weight) is bilinear, and convolution_backward
// gives (B_input^T gO, B_weight^T gO, the sum of gO). Differentiated along
// (ggI, ggW, ggb): in grad_output B(ggI, weight) + B(input, ggW) + ggb per
// channel; in input B_input^T gO at weight ggW; in weight B_weight^T gO at
// input ggI (torch's _convolution_double_backward). The transposed forms are
// bilinear too, with B the transposed convolution.
void ConvolutionBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  const Tensor& ggI = g[0];
  const Tensor& ggW = g[1];
  const Tensor& ggb = g[2];
  Tensor grad_output = grad_output_.unpack();
  Tensor input = input_.unpack();
  Tensor weight = weight_.unpack();
  auto convolve = [this](const Tensor& x, const Tensor& w) {
    return convolution(
        x,
        w,
        Tensor(),
        args.stride,
        args.padding,
        args.dilation,
        args.transposed,
        args.output_padding,
        args.groups);
  };
  if (task_should_compute_output(0)) {
    Tensor ggO;
    auto add_term = [&ggO](const Tensor& t) {
      ggO = ggO.defined() ? add(ggO, t) : t;
    };
    if (ggI.defined()) {
      add_term(convolve(ggI, weight));
    }
    if (ggW.defined()) {
      add_term(convolve(input, ggW));
    }
    if (ggb.defined()) {
      Shape per_channel(grad_output.dim(), 1);
      per_channel[1] = ggb.sizes()[0];
      add_term(expand(reshape(ggb, per_channel), grad_output.sizes()));
    }
    out[0] = ggO;
  }
  if (task_should_compute_output(1) && ggW.defined()) {
    out[1] = convolution_backward(
        grad_output, input, ggW, args, {true, false, false})[0];
  }
  if (task_should_compute_output(2) && ggI.defined()) {
    out[2] = convolution_backward(
        grad_output, ggI, weight, args, {false, true, false})[1];
  }
}

void Im2ColBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] =
      col2im(g[0], {height, width}, kernel_size, dilation, padding, stride);
}

void Col2ImBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = im2col(g[0], kernel_size, dilation, padding, stride);
}

}  // namespace npgrad::autograd
