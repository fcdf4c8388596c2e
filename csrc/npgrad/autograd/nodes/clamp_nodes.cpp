#include "npgrad/autograd/nodes/clamp_nodes.h"

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/ops/clamp.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {

// A mask that is absent (undefined) means "everywhere".
Tensor both(const Tensor& a, const Tensor& b) {
  if (!a.defined()) {
    return b;
  }
  return b.defined() ? logical_and(a, b) : a;
}

Tensor grad_where(const Tensor& mask, const Tensor& grad) {
  return mask.defined() ? where(mask, grad, scalar(0)) : grad;
}

}  // namespace

template <ClampSide S>
void ClampNumberBackward<S>::compute(
    const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor above_min = min ? ge(self, scalar(*min)) : Tensor();
  Tensor below_max = max ? le(self, scalar(*max)) : Tensor();
  out[0] = grad_where(both(above_min, below_max), g[0]);
}

// torch's clamp_backward and clamp_backward_min_max: where min > max the
// result is max, so max gets the gradient there and min none.
template <ClampSide S>
void ClampTensorBackward<S>::compute(
    const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor min = min_.unpack();
  Tensor max = max_.unpack();
  constexpr std::size_t kMax = S == ClampSide::Both ? 2 : 1;
  std::array<Tensor, 3> grads;
  if (clamp_backward_loop(
          g[0],
          self,
          min,
          max,
          {task_should_compute_output(0),
           min.defined() && task_should_compute_output(1),
           max.defined() && task_should_compute_output(kMax)},
          grads)) {
    // Note [Small clamp backward in one loop] (ops/clamp.cpp).
    out[0] = grads[0];
    if (min.defined()) {
      out[1] = grads[1];
    }
    if (max.defined()) {
      out[kMax] = grads[2];
    }
    return;
  }
  if (task_should_compute_output(0)) {
    Tensor above_min = min.defined() ? ge(self, min) : Tensor();
    Tensor below_max = max.defined() ? le(self, max) : Tensor();
    out[0] = grad_where(both(above_min, below_max), g[0]);
  }
  if (min.defined() && task_should_compute_output(1)) {
    Tensor mask = lt(self, min);
    if (max.defined()) {
      mask = logical_and(mask, lt(min, max));
    }
    out[1] = grad_where(mask, g[0]);
  }
  if (max.defined() && task_should_compute_output(kMax)) {
    Tensor mask = gt(self, max);
    if (min.defined()) {
      mask = logical_or(mask, lt(max, min));
    }
    out[kMax] = grad_where(mask, g[0]);
  }
}

template struct ClampNumberBackward<ClampSide::Both>;
template struct ClampNumberBackward<ClampSide::Min>;
template struct ClampNumberBackward<ClampSide::Max>;
template struct ClampTensorBackward<ClampSide::Both>;
template struct ClampTensorBackward<ClampSide::Min>;
template struct ClampTensorBackward<ClampSide::Max>;

}  // namespace npgrad::autograd
