// Ops that backward formulas use, differentiable themselves so that a double
// backward (create_graph=True) records them as torch does.
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/pointwise_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

Tensor sgn(const Tensor& a) {
  static const kernels::UnaryUfunc& sign = kernels::unary_ufunc("sign");
  Tensor out = kernels::unary(sign, a, a.dtype());
  if (compute_requires_grad({&a})) {
    auto node = make_node<SgnBackward0>();
    node->set_next_edges(collect_next_edges({&a}));
    set_history(out, node);
  }
  return out;
}

Tensor threshold_backward(
    const Tensor& grad, const Tensor& self, double threshold) {
  Tensor mask = kernels::binary(
      kernels::Binary::Gt,
      self,
      wrapped_scalar(threshold, ScalarType::Float64),
      self.dtype());
  Tensor out = kernels::binary(kernels::Binary::Mul, grad, mask, grad.dtype());
  if (compute_requires_grad({&grad, &self})) {
    auto node = make_node<ThresholdBackwardBackward0>();
    node->set_next_edges(collect_next_edges({&grad, &self}));
    set_history(out, node);
    node->self_ = SavedVariable(self, false);
    node->threshold = threshold;
  }
  return out;
}

}  // namespace npgrad::ops
