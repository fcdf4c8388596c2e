#include "npgrad/autograd/nodes/reduction_nodes.h"

#include <algorithm>
#include <cmath>

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void EvenlyDistributeNode::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor result = result_.unpack(self_ptr());
  Tensor hit =
      kernels::item(isnan(result)) != 0 ? isnan(self) : eq(self, result);
  Tensor count = sum(to_dtype(hit, g[0].dtype()));
  // where(), not mask * (g / count): when no element equals the saved result
  // (it was modified through hooks) count is 0 and the gradient is 0, not NaN.
  out[0] = where(hit, div(g[0], count), scalar(0));
}

void SelectAlongDimNode::compute(const variable_list& g, variable_list& out) {
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
  Tensor onehot =
      eq(arange_along(
             self_sizes[dim], static_cast<int64_t>(self_sizes.size()), dim),
         indices);
  out[0] = mul(expand(grad, self_sizes), onehot);
}

namespace {
// grad (of var(self) over dims) times the derivative of var.
Tensor var_backward(
    const Tensor& grad,
    const Tensor& self,
    const Shape& dims,
    double correction,
    bool keepdim) {
  double dof = std::max(0.0, reduced_numel(self.sizes(), dims) - correction);
  Tensor grad_u = unsqueeze_reduced(grad, self.dim(), dims, keepdim);
  return mul(mul(grad_u, scalar(2 / dof)), sub(self, mean(self, dims, true)));
}
}  // namespace

template <bool kStd, bool kMean>
void VarStdBackward<kStd, kMean>::compute(
    const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Shape reduced = dims.value_or(Shape{});
  Tensor grad_self;
  if (g[0].defined()) {
    Tensor grad_var = g[0];
    if (kStd) {
      // d std = d var / (2 std); 0 where the std is 0, as torch's masked_fill.
      Tensor result = result_.unpack(self_ptr());
      grad_var = where(
          eq(result, scalar(0)), scalar(0), div(g[0], mul(result, scalar(2))));
    }
    grad_self =
        var_backward(grad_var, self, reduced, correction.value_or(1), keepdim);
  }
  if (kMean && g[1].defined()) {
    Tensor grad_mean =
        div(sum_backward(g[1], self.sizes(), reduced, keepdim),
            scalar(reduced_numel(self.sizes(), reduced)));
    grad_self = grad_self.defined() ? add(grad_self, grad_mean) : grad_mean;
  }
  out[0] = grad_self;
}

template struct VarStdBackward<false, false>;
template struct VarStdBackward<true, false>;
template struct VarStdBackward<false, true>;
template struct VarStdBackward<true, true>;

namespace {
// grad times the derivative of prod(self, d) (grad and result keep dim d as
// size 1). Without zeros in self that is result / self, as torch computes it;
// with zeros, each element's product of the others, from an n x n layout
// that replaces one element by 1 per row, so that higher orders stay exact.
Tensor prod_backward(
    const Tensor& grad, const Tensor& self, const Tensor& result, int64_t d) {
  Tensor x = to_dtype(self, result.dtype());
  Tensor has_zero = any(eq(x, scalar(0)), std::nullopt, false, true);
  if (kernels::item(has_zero) == 0) {
    return to_dtype(mul(grad, div(result, x)), self.dtype());
  }
  int64_t n = x.sizes()[d];
  int64_t ndim = x.dim() + 1;
  Shape rows = x.sizes();
  rows.insert(rows.begin() + d, n);
  Tensor eye = eq(arange_along(n, ndim, d), arange_along(n, ndim, d + 1));
  Tensor others =
      prod(where(eye, scalar(1), expand(unsqueeze(x, d), rows)), d + 1, false);
  return to_dtype(mul(grad, others), self.dtype());
}
}  // namespace

void ProdBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor flat = reshape(self, {self.numel()});
  out[0] = reshape(
      prod_backward(g[0], flat, result_.unpack(self_ptr()), 0), self.sizes());
}

void ProdBackward1::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  if (self.dim() == 0) {
    out[0] = to_dtype(g[0], self.dtype());
    return;
  }
  int64_t d = maybe_wrap_dim(dim, self.dim());
  Shape dims{d};
  out[0] = prod_backward(
      unsqueeze_reduced(g[0], self.dim(), dims, keepdim),
      self,
      unsqueeze_reduced(result_.unpack(self_ptr()), self.dim(), dims, keepdim),
      d);
}

void SoftmaxBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor result = result_.unpack(self_ptr());
  out[0] = _softmax_backward_data(g[0], result, dim, result.dtype());
}

void LogSoftmaxBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor result = result_.unpack(self_ptr());
  out[0] = _log_softmax_backward_data(g[0], result, dim, result.dtype());
}

// torch's derivatives of _softmax_backward_data(grad_output, output):
// itself in grad_output (it is linear there); in output,
// grad_output * grad - sum(output * grad_output) * grad
//                    - grad_output * sum(output * grad).
void SoftmaxBackwardDataBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor grad_output = grad_output_.unpack();
  Tensor output = output_.unpack();
  Tensor grad = to_dtype(g[0], output.dtype());
  if (task_should_compute_output(0)) {
    out[0] = _softmax_backward_data(grad, output, dim, input_dtype);
  }
  if (task_should_compute_output(1)) {
    Tensor d =
        sub(sub(mul(grad_output, grad),
                mul(sum(mul(output, grad_output), {dim}, true), grad)),
            mul(grad_output, sum(mul(output, grad), {dim}, true)));
    out[1] = to_dtype(d, output.dtype());
  }
}

// _log_softmax_backward_data(grad_output, output) is
// grad_output - exp(output) * sum(grad_output): in grad_output its transpose
// grad - sum(grad * exp(output)); in output -sum(grad_output) * exp(output)
// * grad (torch's formulas).
void LogSoftmaxBackwardDataBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor grad_output = grad_output_.unpack();
  Tensor output = output_.unpack();
  Tensor grad = to_dtype(g[0], output.dtype());
  if (task_should_compute_output(0)) {
    out[0] = sub(grad, sum(mul(grad, exp(output)), {dim}, true));
  }
  if (task_should_compute_output(1)) {
    Tensor d = mul(mul(neg(sum(grad_output, {dim}, true)), exp(output)), grad);
    out[1] = to_dtype(d, output.dtype());
  }
}

void VectorNormBackward::compute(const variable_list& g, variable_list& out) {
  if (ord == 0) {
    return;  // no gradient (undefined), as torch's formula gives
  }
  Tensor self = self_.unpack();
  int64_t ndim = self.dim();
  Shape reduced = dims.value_or(Shape{});
  Tensor grad = unsqueeze_reduced(g[0], ndim, reduced, keepdim);
  Tensor norm =
      unsqueeze_reduced(result_.unpack(self_ptr()), ndim, reduced, keepdim);
  Tensor zero_norm = eq(norm, scalar(0));
  Tensor r;
  if (ord == 1) {
    r = mul(sgn(self), grad);
  } else if (ord == 2) {
    r = mul(grad, where(zero_norm, scalar(0), div(self, norm)));
  } else if (std::isinf(ord)) {
    // Split evenly among the elements whose |x| is the norm.
    Tensor hit = to_dtype(eq(abs(self), norm), grad.dtype());
    r = mul(sgn(self), mul(div(grad, sum(hit, reduced, true)), hit));
  } else if (ord < 1) {
    Tensor scaled =
        mul(sgn(self),
            where(eq(self, scalar(0)), scalar(0), pow(abs(self), ord - 1)));
    r = mul(mul(scaled, grad), pow(norm, 1 - ord));
  } else {
    Tensor scaled = ord < 2 ? where(
                                  eq(self, scalar(0)),
                                  scalar(0),
                                  mul(self, pow(abs(self), ord - 2)))
                            : mul(self, pow(abs(self), ord - 2));
    r = mul(scaled, where(zero_norm, scalar(0), div(grad, pow(norm, ord - 1))));
  }
  out[0] = to_dtype(r, self.dtype());
}

}  // namespace npgrad::autograd
