#pragma once

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

// Note [Fused backward formulas round float16 once]
// torch's tanh_backward, _softmax_backward_data and _log_softmax_backward_data
// are single kernels that read Half operands as float, compute in float and
// round once (its sigmoid_backward rounds after each step, as npgrad's ops do).
// npgrad writes these formulas as several ops, each of which would round to
// float16 (up to 177 ulps apart from torch for log_softmax). Without
// create_graph the formula runs on float32 copies of its float16 operands and
// its result is rounded once, as torch's kernel does. With create_graph its
// steps are recorded ops in the gradient's own dtype, so that the recorded
// graph differentiates them.
template <class Formula>
Tensor round_float16_once(
    const Tensor& grad, const Tensor& saved, Formula&& formula) {
  if (grad.dtype() != ScalarType::Float16 ||
      saved.dtype() != ScalarType::Float16 || GradMode::is_enabled()) {
    return formula(grad, saved);
  }
  return kernels::cast(
      formula(
          kernels::cast(grad, ScalarType::Float32),
          kernels::cast(saved, ScalarType::Float32)),
      ScalarType::Float16);
}

}  // namespace npgrad::autograd
