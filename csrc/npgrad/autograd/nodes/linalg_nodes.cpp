#include "npgrad/autograd/nodes/linalg_nodes.h"

#include "npgrad/autograd/nodes/formula_helpers.h"
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

void AddmmBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = times(g[0], beta);
  }
  if (task_should_compute_output(1)) {
    out[1] = times(mm(g[0], t(mat2_.unpack())), alpha);
  }
  if (task_should_compute_output(2)) {
    out[2] = times(mm(t(mat1_.unpack()), g[0]), alpha);
  }
}

void BmmBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = bmm(g[0], transpose(other_.unpack(), 1, 2));
  }
  if (task_should_compute_output(1)) {
    out[1] = bmm(transpose(self_.unpack(), 1, 2), g[0]);
  }
}

void BaddbmmBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = times(g[0], beta);
  }
  if (task_should_compute_output(1)) {
    out[1] = times(bmm(g[0], transpose(batch2_.unpack(), 1, 2)), alpha);
  }
  if (task_should_compute_output(2)) {
    out[2] = times(bmm(transpose(batch1_.unpack(), 1, 2), g[0]), alpha);
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
    out[0] = outer(g[0], other_.unpack());
  }
  if (task_should_compute_output(1)) {
    out[1] = mv(t(self_.unpack()), g[0]);
  }
}

void AddmvBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = times(g[0], beta);
  }
  if (task_should_compute_output(1)) {
    out[1] = times(outer(g[0], vec_.unpack()), alpha);
  }
  if (task_should_compute_output(2)) {
    out[2] = times(mv(t(mat_.unpack()), g[0]), alpha);
  }
}

}  // namespace npgrad::autograd
