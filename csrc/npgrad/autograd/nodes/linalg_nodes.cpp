#include "npgrad/autograd/nodes/linalg_nodes.h"

#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void MmBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = mm(g[0], t(other_.unpack()));
  }
  if (task_should_compute_output(1)) {
    out[1] = mm(t(self_.unpack()), g[0]);
  }
}

void DotBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = mul(g[0], other_.unpack());
  }
  if (task_should_compute_output(1)) {
    out[1] = mul(g[0], self_.unpack());
  }
}

void MvBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = mm(unsqueeze(g[0], 1), unsqueeze(other_.unpack(), 0));
  }
  if (task_should_compute_output(1)) {
    out[1] = matmul(t(self_.unpack()), g[0]);
  }
}

void BmmBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    Tensor mat2 = other_.unpack();
    out[0] = sum_to(matmul(g[0], transpose(mat2, -1, -2)), self_sizes);
  }
  if (task_should_compute_output(1)) {
    Tensor self = self_.unpack();
    out[1] = sum_to(matmul(transpose(self, -1, -2), g[0]), mat2_sizes);
  }
}

}  // namespace npgrad::autograd
