#pragma once

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

// Note [Fused backward formulas round a reduced float once]
// torch's tanh_backward, _softmax_backward_data and _log_softmax_backward_data
// are single kernels that read Half and BFloat16 operands as float, compute in
// float and round once (its sigmoid_backward too, for BFloat16 only). npgrad
// writes these formulas as several ops, each of which would round to the
// reduced float (up to 177 ulps apart from torch for float16's log_softmax).
// Without create_graph the formula runs on float32 copies of its reduced-float
// operands and its result is rounded once, as torch's kernel does. With
// create_graph its steps are recorded ops in the gradient's own dtype, so that
// the recorded graph differentiates them.
template <class Formula>
Tensor round_reduced_float_once(
    const Tensor& grad, const Tensor& saved, Formula&& formula) {
  ScalarType dtype = grad.dtype();
  if (!is_reduced_float(dtype) || saved.dtype() != dtype ||
      GradMode::is_enabled()) {
    return formula(grad, saved);
  }
  return kernels::cast(
      formula(
          kernels::cast(grad, ScalarType::Float32),
          kernels::cast(saved, ScalarType::Float32)),
      dtype);
}

}  // namespace npgrad::autograd
