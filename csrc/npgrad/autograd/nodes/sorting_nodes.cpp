#include "npgrad/autograd/nodes/sorting_nodes.h"

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {
// g[i] + g[i + 1] + ... along d: the gradient of cumsum.
Tensor reverse_cumsum(const Tensor& g, int64_t d) {
  return add(sub(sum(g, {d}, true), cumsum(g, d)), g);
}

// grad times the derivative of cumprod(x, d) when x has zeros: for each i,
// sum over j >= i of grad[j] * prod(x[k] for k <= j, k != i), from an n x n
// layout (i at dim d, j at d + 1) whose row i has x[i] replaced by 1, so that
// higher orders stay exact.
Tensor cumprod_backward_with_zeros(
    const Tensor& grad, const Tensor& x, int64_t d) {
  int64_t n = x.sizes()[d];
  int64_t ndim = x.dim() + 1;
  Shape rows = x.sizes();
  rows.insert(rows.begin() + d, n);
  Tensor i = arange_along(n, ndim, d);
  Tensor j = arange_along(n, ndim, d + 1);
  Tensor partial =
      cumprod(where(eq(i, j), scalar(1), expand(unsqueeze(x, d), rows)), d + 1);
  Tensor terms = mul(unsqueeze(grad, d), partial);
  return sum(where(ge(j, i), terms, scalar(0)), {d + 1}, false);
}
}  // namespace

void CumsumBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor grad = to_dtype(g[0], self_dtype);
  out[0] = grad.dim() == 0
               ? grad
               : reverse_cumsum(grad, maybe_wrap_dim(dim, grad.dim()));
}

void CumprodBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor grad = to_dtype(g[0], self.dtype());
  if (self.dim() == 0 || self.numel() == 0) {
    out[0] = grad;
    return;
  }
  int64_t d = maybe_wrap_dim(dim, self.dim());
  Tensor has_zero = any(eq(self, scalar(0)), std::nullopt, false, true);
  if (kernels::item(has_zero) != 0) {
    out[0] = cumprod_backward_with_zeros(grad, self, d);
    return;
  }
  Tensor result = result_.unpack(self_ptr());
  out[0] = div(reverse_cumsum(mul(grad, result), d), self);
}

void ScatterAlongDimNode::compute(const variable_list& g, variable_list& out) {
  if (self_sizes.empty()) {
    out[0] = g[0];
    return;
  }
  Tensor indices = indices_.unpack();
  auto ndim = static_cast<int64_t>(self_sizes.size());
  int64_t d = maybe_wrap_dim(dim, ndim);
  // Advanced indices that broadcast to the grad's shape: the saved indices
  // along d, each position along the other dims.
  std::vector<Tensor> index(ndim);
  for (int64_t e = 0; e < ndim; ++e) {
    index[e] = e == d ? indices : arange_along(indices.sizes()[e], ndim, e);
  }
  out[0] = index_backward(g[0], self_sizes, index);
}

}  // namespace npgrad::autograd
