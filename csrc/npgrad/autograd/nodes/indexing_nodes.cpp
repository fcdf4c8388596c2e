#include "npgrad/autograd/nodes/indexing_nodes.h"

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/kernels/kernels.h"
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

// torch's scatter_reduce_backward, written with differentiable ops so the
// gradients have gradients.
namespace {
// Whether any element of t is zero (no graph).
bool has_zero(const Tensor& t) {
  return kernels::item(kernels::any(
             eq(t, wrapped_scalar(0, t.dtype())), {}, false, true)) != 0;
}
}  // namespace

void ScatterReduceBackward0::compute(
    const variable_list& g, variable_list& out) {
  const Tensor& grad = g[0];
  Tensor index = index_.unpack();
  Tensor self = self_.unpack();
  Tensor src = src_.unpack();
  Tensor grad_self;
  Tensor grad_src;
  ScalarType dt = self.dtype();
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = gather(grad, dim, index, false);
  } else if (reduce == "prod") {
    Tensor result = result_.unpack(self_ptr());
    Tensor zero = wrapped_scalar(0, dt);
    Tensor one = wrapped_scalar(1, dt);
    // Without a graph to record, an operand with no zero skips its masking
    // steps: they would change nothing, so the values are the formula's.
    // Under create_graph the whole formula records, as torch's.
    bool graph = GradMode::is_enabled();
    bool self_zeros = graph || has_zero(self);
    bool src_zeros = graph || has_zero(src);
    // Products that leave out self's (src's single) zero at each place.
    Tensor masked_self =
        self_zeros ? masked_fill(self, eq(self, zero), one) : self;
    Tensor masked_self_result =
        self_zeros
            ? scatter_reduce(
                  masked_self, dim, index, src, reduce, include_self, false)
            : result;
    grad_self = div(mul(grad, masked_self_result), masked_self);
    if (!src_zeros) {
      grad_src = div(gather(mul(grad, result), dim, index, false), src);
    } else {
      Tensor src_zero = eq(src, zero);
      Tensor src_num_zeros = gather(
          scatter_add(
              zeros_like(self), dim, index, to_dtype(src_zero, dt), false),
          dim,
          index,
          false);
      Tensor src_single_zero = logical_and(src_zero, eq(src_num_zeros, one));
      Tensor masked_src = masked_fill(src, src_single_zero, one);
      Tensor masked_src_result = scatter_reduce(
          self, dim, index, masked_src, reduce, include_self, false);
      grad_src = where(
          src_single_zero,
          gather(mul(grad, masked_src_result), dim, index, false),
          div(gather(mul(grad, result), dim, index, false),
              masked_fill(src, src_zero, one)));
    }
  } else if (reduce == "mean") {
    Tensor n = include_self ? ones_like(self) : zeros_like(self);
    n = scatter_add(n, dim, index, ones_like(src), false);
    n = masked_fill(n, eq(n, wrapped_scalar(0, dt)), wrapped_scalar(1, dt));
    grad_self = div(grad, n);
    grad_src =
        div(gather(grad, dim, index, false), gather(n, dim, index, false));
  } else {
    // amax/amin: the gradient shared evenly among the values equal to the
    // result at each place.
    Tensor result = result_.unpack(self_ptr());
    Tensor value = gather(result, dim, index, false);
    Tensor self_is_result = to_dtype(eq(self, result), dt);
    Tensor src_is_result = to_dtype(eq(src, value), dt);
    Tensor n_to_distribute =
        scatter_add(self_is_result, dim, index, src_is_result, false);
    Tensor grad_distributed = div(grad, n_to_distribute);
    grad_self = mul(self_is_result, grad_distributed);
    grad_src = mul(src_is_result, gather(grad_distributed, dim, index, false));
  }
  if (!include_self) {
    grad_self = scatter(grad_self, dim, index, wrapped_scalar(0, dt), false);
  }
  if (task_should_compute_output(0)) {
    out[0] = grad_self;
  }
  if (task_should_compute_output(1)) {
    out[1] = grad_src;
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
