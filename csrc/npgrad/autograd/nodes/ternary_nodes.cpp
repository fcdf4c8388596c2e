#include "npgrad/autograd/nodes/ternary_nodes.h"

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void LerpBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = times(g[0], 1 - weight);
  }
  if (task_should_compute_output(1)) {
    out[1] = times(g[0], weight);
  }
}

void LerpBackward1::compute(const variable_list& g, variable_list& out) {
  Tensor weight = weight_.unpack();
  if (task_should_compute_output(0)) {
    out[0] = mul(g[0], rsub(weight, 1.0));
  }
  if (task_should_compute_output(1)) {
    out[1] = mul(g[0], weight);
  }
  if (task_should_compute_output(2)) {
    out[2] = mul(g[0], sub(end_.unpack(), self_.unpack()));
  }
}

void AddcmulBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = g[0];
  }
  if (task_should_compute_output(1)) {
    out[1] = times(mul(g[0], tensor2_.unpack()), value);
  }
  if (task_should_compute_output(2)) {
    out[2] = times(mul(g[0], tensor1_.unpack()), value);
  }
}

void AddcdivBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor tensor2 = tensor2_.unpack();
  if (task_should_compute_output(0)) {
    out[0] = g[0];
  }
  if (task_should_compute_output(1)) {
    out[1] = times(div(g[0], tensor2), value);
  }
  if (task_should_compute_output(2)) {
    // -value * grad * tensor1 / tensor2^2
    Tensor t1 = tensor1_.unpack();
    out[2] = times(div(mul(g[0], t1), mul(tensor2, tensor2)), -value);
  }
}

void GluBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  int64_t d = maybe_wrap_dim(dim, self.dim());
  std::vector<Tensor> halves = chunk(self, 2, d);
  Tensor gate = sigmoid(halves[1]);
  Tensor grad_first = mul(g[0], gate);
  // d/db a * sigmoid(b) = a * sigmoid(b) * (1 - sigmoid(b))
  Tensor grad_second = mul(mul(grad_first, halves[0]), rsub(gate, 1.0));
  out[0] = cat({grad_first, grad_second}, d);
}

}  // namespace npgrad::autograd
