#include "npgrad/autograd/nodes/reduction_nodes.h"

#include <algorithm>

#include "npgrad/autograd/nodes/half_formulas.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {
// The gradient of a reduction over dims, broadcast back to the input shape.
Tensor sum_backward(Tensor grad, const Shape& sizes, Shape dims, bool keepdim) {
  if (!keepdim && !sizes.empty()) {
    for (auto& d : dims) {
      d = maybe_wrap_dim(d, static_cast<int64_t>(sizes.size()));
    }
    std::sort(dims.begin(), dims.end());
    for (int64_t d : dims) {
      grad = unsqueeze(grad, d);
    }
  }
  return expand(grad, sizes);
}

Tensor scalar(double v) {
  return wrapped_scalar(v, ScalarType::Float64);
}
}  // namespace

void SumBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = expand(g[0], self_sizes);
}

void SumBackward1::compute(const variable_list& g, variable_list& out) {
  out[0] = sum_backward(g[0], self_sizes, dims, keepdim);
}

void MeanBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] =
      div(expand(g[0], self_sizes), scalar(static_cast<double>(self_numel)));
}

void MeanBackward1::compute(const variable_list& g, variable_list& out) {
  double n = static_cast<double>(self_numel) /
             static_cast<double>(std::max<int64_t>(g[0].numel(), 1));
  out[0] = div(sum_backward(g[0], self_sizes, dims, keepdim), scalar(n));
}

template <bool kIsMax>
void MaxMinBackward1<kIsMax>::compute(
    const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor result = result_.unpack(self_ptr());
  Tensor hit = eq(self, result);
  Tensor count = sum(to_dtype(hit, g[0].dtype()));
  // where(), not mask * (g / count): when no element equals the saved result
  // (it was modified through hooks) count is 0 and the gradient is 0, not NaN.
  out[0] = where(hit, div(g[0], count), scalar(0));
}

template <bool kIsMax>
void MaxMinBackward0<kIsMax>::compute(
    const variable_list& g, variable_list& out) {
  Tensor grad = g[0];
  Tensor indices = indices_.unpack();
  if (self_sizes.empty()) {
    out[0] = grad;
    return;
  }
  const int64_t dim =
      maybe_wrap_dim(this->dim, static_cast<int64_t>(self_sizes.size()));
  if (!keepdim) {
    grad = unsqueeze(grad, dim);
    indices = unsqueeze(indices, dim);
  }
  // One-hot of the selected index along dim, broadcast against the grad.
  Shape range_shape(self_sizes.size(), 1);
  range_shape[dim] = self_sizes[dim];
  Tensor range = kernels::empty({self_sizes[dim]}, ScalarType::Int64);
  for (int64_t i = 0; i < self_sizes[dim]; ++i) {
    static_cast<int64_t*>(range.data_ptr())[i] = i;
  }
  Tensor onehot = eq(view(range, range_shape), indices);
  out[0] = mul(expand(grad, self_sizes), onehot);
}

template struct MaxMinBackward1<true>;
template struct MaxMinBackward1<false>;
template struct MaxMinBackward0<true>;
template struct MaxMinBackward0<false>;

void SoftmaxBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = round_float16_once(
      g[0],
      result_.unpack(self_ptr()),
      [&](const Tensor& grad, const Tensor& r) {
        return mul(sub(grad, sum(mul(grad, r), {dim}, true)), r);
      });
}

void LogSoftmaxBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = round_float16_once(
      g[0],
      result_.unpack(self_ptr()),
      [&](const Tensor& grad, const Tensor& r) {
        return sub(grad, mul(exp(r), sum(grad, {dim}, true)));
      });
}

}  // namespace npgrad::autograd
