#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/util/error.h"

#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void CatBackward0::compute(const variable_list& g, variable_list& out) {
  int64_t offset = 0;
  for (std::size_t i = 0; i < sizes_along_dim.size(); ++i) {
    int64_t n = sizes_along_dim[i];
    if (task_should_compute_output(i)) {
      out[i] = slice(g[0], dim, offset, offset + n, 1);
    }
    offset += n;
  }
}

void StackBackward0::compute(const variable_list& g, variable_list& out) {
  for (std::size_t i = 0; i < num_outputs(); ++i) {
    if (task_should_compute_output(i)) {
      out[i] = select(g[0], dim, static_cast<int64_t>(i));
    }
  }
}

void IndexBackward0::compute(const variable_list& g, variable_list& out) {
  std::vector<Tensor> indices;
  indices.reserve(indices_.items.size());
  for (const auto& sv : indices_.items) {
    indices.push_back(sv.unpack());
  }
  out[0] = index_backward(g[0], self_sizes, indices);
}

void FlipBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = flip(g[0], dims);
}

void RollBackward0::compute(const variable_list& g, variable_list& out) {
  std::vector<int64_t> back;
  for (int64_t s : shifts) {
    // -s, wrapping at INT64_MIN as torch's negation does
    back.push_back(static_cast<int64_t>(0 - static_cast<uint64_t>(s)));
  }
  out[0] = roll(g[0], back, dims);
}

void RepeatBackward0::compute(const variable_list& g, variable_list& out) {
  if (repeats.empty()) {
    out[0] = g[0];
    return;
  }
  // The gradient seen as (repeats[0], size[0], repeats[1], size[1], ...),
  // summed over the repeats.
  std::size_t lead = repeats.size() - self_sizes.size();
  Shape split;
  std::vector<int64_t> repeat_dims;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    repeat_dims.push_back(static_cast<int64_t>(split.size()));
    split.push_back(repeats[i]);
    split.push_back(i < lead ? 1 : self_sizes[i - lead]);
  }
  out[0] = reshape(
      sum(reshape(g[0], split), repeat_dims, /*keepdim=*/false), self_sizes);
}

template <bool kUpper>
void TriangleBackward<kUpper>::compute(
    const variable_list& g, variable_list& out) {
  out[0] = kUpper ? triu(g[0], diagonal) : tril(g[0], diagonal);
}
template struct TriangleBackward<true>;
template struct TriangleBackward<false>;

void DiagEmbedBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = diagonal(g[0], args.offset, args.dim1, args.dim2);
}

void IndexPutImplBackward0::compute(
    const variable_list& g, variable_list& out) {
  if (!task_should_compute_output(1)) {
    return;
  }
  std::vector<Tensor> indices;
  indices.reserve(indices_.items.size());
  for (const auto& sv : indices_.items) {
    indices.push_back(sv.unpack());
  }
  out[1] = index(g[0], indices);
}

void FillBackward3::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = zeros_like(g[0]);
  }
  if (task_should_compute_output(1)) {
    out[1] = sum(g[0]);
  }
}

void CopyBackwards::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = zeros_like(g[0]);
  }
  if (task_should_compute_output(1)) {
    out[1] = g[0];  // validate_outputs reduces and casts it to src
  }
}

void ZeroGradientNode::compute(const variable_list& g, variable_list& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (task_should_compute_output(i)) {
      out[i] = zeros_like(g[0]);
    }
  }
}

std::shared_ptr<ZeroGradientNode> make_zero_gradient_node(
    const std::string& name) {
#define NPGRAD_MAKE_ZERO_GRADIENT_NODE(N) \
  if (name == #N) {                       \
    return make_node<N>();                \
  }
  NPGRAD_FORALL_ZERO_GRADIENT_NODES(NPGRAD_MAKE_ZERO_GRADIENT_NODE)
#undef NPGRAD_MAKE_ZERO_GRADIENT_NODE
  throw Error("no zero-gradient node named " + name);
}

}  // namespace npgrad::autograd

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"

namespace npgrad::autograd {

// Takes fn's next edges as its own, except edge 0, which goes to the base
// instead of the view.
CopySlices::CopySlices(
    const Tensor& base, ViewGeometry view_geometry, std::shared_ptr<Node> fn_)
    : view(std::move(view_geometry)), fn(std::move(fn_)) {
  add_input_metadata(base);
  add_next_edge(gradient_edge(base));
  for (std::size_t i = 1; i < fn->num_outputs(); ++i) {
    add_next_edge(fn->next_edge(i));
  }
}

void CopySlices::compute(const variable_list& g, variable_list& out) {
  NPGRAD_CHECK(fn != nullptr, messages::kBackwardTwice);
  // result: the base's gradient, laid out like the base so that the view's
  // geometry addresses its region.
  Tensor result =
      kernels::empty_strided(view.base_sizes, view.base_strides, g[0].dtype());
  ops::copy_(result, g[0]);
  Tensor grad_slice =
      ops::as_strided(result, view.sizes, view.strides, view.offset);
  // fn's edge 0 (the view's old history) is outside this pass's graph; a
  // pruned pass must still let fn compute that gradient.
  GraphTask* task = current_graph_task();
  if (task != nullptr && !task->exec_info.empty() &&
      fn->next_edge(0).is_valid()) {
    task->exec_info[fn->next_edge(0).function.get()].needed = true;
  }
  variable_list res = fn->apply({ops::clone(grad_slice)});
  for (std::size_t i = 0; i < num_outputs(); ++i) {
    if (!task_should_compute_output(i)) {
      continue;
    }
    if (i == 0) {
      if (res[0].defined()) {
        ops::copy_(grad_slice, res[0]);
      } else {
        ops::zero_(grad_slice);
      }
      out[0] = result;
    } else {
      out[i] = res[i];
    }
  }
}

void IndexPutBackward0::compute(const variable_list& g, variable_list& out) {
  std::vector<Tensor> indices;
  for (const auto& sv : indices_.items) {
    indices.push_back(sv.unpack());
  }
  if (task_should_compute_output(0) && accumulate) {
    out[0] = g[0];
  } else if (task_should_compute_output(0)) {
    Tensor self_grad = ops::clone(g[0]);
    ops::index_put_(
        self_grad, indices, ops::wrapped_scalar(0, ScalarType::Int64));
    out[0] = self_grad;
  }
  if (task_should_compute_output(1)) {
    out[1] = ops::index(g[0], indices);
  }
}

}  // namespace npgrad::autograd

namespace npgrad::autograd {

void CopySlices::visit_strong_refs(StrongRefVisitor& v) {
  Node::visit_strong_refs(v);
  if (fn) {
    v.node(fn);
  }
}

int CopySlices::traverse_python(PyVisitProc visit, void* arg) const {
  return fn ? traverse_if_owned_alone(fn, visit, arg) : 0;
}

void CopySlices::clear_python() {
  if (fn) {
    clear_if_owned_alone(fn);
  }
}

}  // namespace npgrad::autograd
