#include "npgrad/autograd/nodes/indexing_nodes.h"

#include "npgrad/ops/ops.h"
#include "npgrad/tensor/shape.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void GatherBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  out[0] = scatter_add(
      zeros(self.sizes(), g[0].dtype()), dim, index_.unpack(), g[0], false);
}

namespace {
// grad.scatter(dim, index, 0): the gradient of what scatter overwrote.
Tensor scattered_away(const Tensor& grad, int64_t dim, const Tensor& index) {
  return scatter(grad, dim, index, wrapped_scalar(0, grad.dtype()), false);
}
}  // namespace

void ScatterBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor index = index_.unpack();
  if (task_should_compute_output(0)) {
    out[0] = scattered_away(g[0], dim, index);
  }
  if (task_should_compute_output(1)) {
    out[1] = gather(g[0], dim, index, false);
  }
}

void ScatterBackward1::compute(const variable_list& g, variable_list& out) {
  out[0] = scattered_away(g[0], dim, index_.unpack());
}

void ScatterAddBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = g[0];
  }
  if (task_should_compute_output(1)) {
    out[1] = gather(g[0], dim, index_.unpack(), false);
  }
}

void IndexSelectBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = index_add(
      zeros(self_sizes, g[0].dtype()), dim, index_.unpack(), g[0], 1, false);
}

Tensor IndexSourceNode::source_grad(const Tensor& grad, const Tensor& index) {
  Tensor selected = index_select(grad, dim, index);
  Tensor source = source_.unpack();
  return source_dim > 0 ? expand(selected, source.sizes()) : selected;
}

void IndexAddBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = g[0];
  }
  if (task_should_compute_output(1)) {
    Tensor grad = source_grad(g[0], index_.unpack());
    out[1] = alpha == 1 ? grad : mul(grad, wrapped_scalar(alpha, grad.dtype()));
  }
}

void IndexCopyBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor index = index_.unpack();
  if (task_should_compute_output(0)) {
    // torch's grad.index_fill(dim, index, 0), as a copy of zeros.
    Tensor rows = index_select(g[0], dim, index);
    out[0] = index_copy(g[0], dim, index, zeros_like(rows), false);
  }
  if (task_should_compute_output(1)) {
    out[1] = source_grad(g[0], index);
  }
}

void MaskedSelectBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor mask = mask_.unpack();
  Tensor self = self_.unpack();
  Tensor z = zeros(infer_size(self.sizes(), mask.sizes()), g[0].dtype());
  out[0] = masked_scatter(z, mask, g[0], false);
}

void MaskedScatterBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor mask = mask_.unpack();
  if (task_should_compute_output(0)) {
    out[0] = masked_fill(g[0], mask, wrapped_scalar(0, g[0].dtype()));
  }
  if (task_should_compute_output(1)) {
    Tensor selected = masked_select(g[0], mask);
    int64_t numel = 1;
    for (int64_t s : source_sizes) {
      numel *= s;
    }
    int64_t missing = numel - selected.numel();
    if (missing > 0) {
      selected = cat({selected, zeros({missing}, g[0].dtype())}, 0);
    }
    out[1] = view(selected, source_sizes);
  }
}

}  // namespace npgrad::autograd
