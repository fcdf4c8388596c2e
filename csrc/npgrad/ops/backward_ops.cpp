// Ops that backward formulas use, differentiable themselves so that a double
// backward (create_graph=True) records them as torch does.
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/pointwise_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/unary_ops.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

Tensor sgn(const Tensor& a) {
  // sign's kernel: NaN gives 0, as torch's (so abs's gradient at NaN is 0).
  Tensor out = unary_ops::Sign::kernel(a, a.dtype());
  if (compute_requires_grad({&a})) {
    auto node = make_node<SgnBackward0>();
    node->set_next_edges(collect_next_edges({&a}));
    set_history(out, node);
    node->self_ = SavedVariable(a, false);
    node->result_ = SavedVariable(out, true);
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
