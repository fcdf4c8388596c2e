#include "npgrad/autograd/nodes/conv_nodes.h"

#include "npgrad/ops/conv.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {

// A 1-d convolution's arguments as a 2-d one's (a height of 1).
Shape with_height(const Shape& v, int64_t height) {
  Shape out = v;
  if (out.size() == 1) {
    out.insert(out.begin(), height);
  }
  return out;
}

// grad (n, g * rows, L) per group against a (g, rows, cols) matrix stack:
// sum over n of grad[n, group] @ columns[n, group].T, as (g, rows, cols).
Tensor summed_products(
    const Tensor& grad, const Tensor& columns, int64_t n, int64_t g) {
  int64_t count = columns.sizes()[2];
  Tensor a = reshape(grad, {n, g, grad.sizes()[1] / g, count});
  Tensor b = reshape(columns, {n, g, columns.sizes()[1] / g, count});
  return sum(matmul(a, transpose(b, 2, 3)), {0}, false);
}

}  // namespace

void ConvolutionBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor grad = g[0];
  Tensor x = input_.unpack();
  Tensor w = weight_.unpack();
  // A reduced float computes in float32 and rounds each gradient once, as the
  // forward does: the formulas below chain a matmul with col2im's sums (or a
  // matmul per sample with their sum), which would round at every step.
  ScalarType dtype = grad.dtype();
  if (is_reduced_float(dtype)) {
    variable_list wide = {to_dtype(g[0], ScalarType::Float32)};
    x = to_dtype(x, ScalarType::Float32);
    w = to_dtype(w, ScalarType::Float32);
    compute_in(wide, x, w, out);
    for (Tensor& t : out) {
      if (t.defined()) {
        t = to_dtype(t, dtype);
      }
    }
    return;
  }
  compute_in(g, x, w, out);
}

void ConvolutionBackward0::compute_in(
    const variable_list& g, Tensor x, Tensor w, variable_list& out) {
  Tensor grad = g[0];
  bool one_d = grad.dim() == 3;
  Shape st = with_height(stride, 1);
  Shape pad = with_height(padding, 0);
  Shape dil = with_height(dilation, 1);
  if (one_d) {
    grad = unsqueeze(grad, 2);
    x = unsqueeze(x, 2);
    w = unsqueeze(w, 2);
  }
  auto finish = [one_d](const Tensor& t) { return one_d ? squeeze(t, 2) : t; };
  int64_t n = grad.sizes()[0];
  const Shape& ws = w.sizes();
  if (task_should_compute_output(0)) {
    Shape kernel = {ws[2], ws[3]};
    if (transposed) {
      out[0] = finish(
          convolution(grad, w, Tensor(), st, pad, dil, false, {0, 0}, groups));
    } else {
      // The columns of each group's input from its weight, summed back into
      // their windows.
      int64_t count = grad.sizes()[2] * grad.sizes()[3];
      int64_t rows = ws[0] / groups;
      int64_t per_group = ws[1] * ws[2] * ws[3];
      Tensor mats = transpose(reshape(w, {groups, rows, per_group}), 1, 2);
      Tensor cols = matmul(mats, reshape(grad, {n, groups, rows, count}));
      Tensor flat = reshape(cols, {n, groups * per_group, count});
      Shape size = {x.sizes()[2], x.sizes()[3]};
      out[0] = finish(col2im(flat, size, kernel, dil, pad, st));
    }
  }
  if (task_should_compute_output(1)) {
    Shape kernel = {ws[2], ws[3]};
    Shape wsizes = one_d ? squeeze(w, 2).sizes() : ws;
    if (transposed) {
      Tensor cols = im2col(grad, kernel, dil, pad, st);
      Tensor flat_x = reshape(x, {n, x.sizes()[1], cols.sizes()[2]});
      out[1] = reshape(summed_products(flat_x, cols, n, groups), wsizes);
    } else {
      Tensor cols = im2col(x, kernel, dil, pad, st);
      Tensor flat_grad = reshape(grad, {n, grad.sizes()[1], cols.sizes()[2]});
      out[1] = reshape(summed_products(flat_grad, cols, n, groups), wsizes);
    }
  }
  if (task_should_compute_output(2)) {
    out[2] =
        sum(g[0],
            one_d ? std::vector<int64_t>{0, 2} : std::vector<int64_t>{0, 2, 3},
            false);
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
