#include "npgrad/autograd/nodes/reduction_nodes.h"

#include <algorithm>
#include <cmath>

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/reduction_ops.h"

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

template <bool kStd>
void VarMeanBackward<kStd>::compute(
    const variable_list& g, variable_list& out) {
  ReductionSaved saved;
  saved.self = self_.unpack();
  if (kStd) {
    saved.result = result_.unpack(self_ptr());
  }
  saved.dims = dims;
  saved.keepdim = keepdim;
  saved.scalar = correction;
  saved.ndim = saved.self.dim();
  saved.self_numel = saved.self.numel();
  saved.self_sizes = saved.self.sizes();
  Tensor grad_self;
  if (g[0].defined()) {
    grad_self = reduction_ops::VarStd<kStd>::backward(g[0], saved);
  }
  if (g[1].defined()) {
    Tensor grad_mean = reduction_ops::Mean::backward(g[1], saved);
    grad_self = grad_self.defined() ? add(grad_self, grad_mean) : grad_mean;
  }
  out[0] = grad_self;
}

template struct VarMeanBackward<false>;
template struct VarMeanBackward<true>;

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

}  // namespace npgrad::autograd
