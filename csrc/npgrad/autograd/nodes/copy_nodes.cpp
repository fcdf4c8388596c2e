#include "npgrad/autograd/nodes/copy_nodes.h"

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
  indices.reserve(indices_.size());
  for (const auto& sv : indices_) {
    indices.push_back(sv.unpack());
  }
  out[0] = index_backward(g[0], self_sizes, indices);
}

void IndexPutImplBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = index(g[0], indices);
}

void CopyBackwards::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = zeros_like(g[0]);
  }
  if (task_should_compute_output(1)) {
    out[1] = g[0];  // validate_outputs reduces and casts it to src
  }
}

template <bool kIsZero>
void FillBackward<kIsZero>::compute(
    const variable_list& g, variable_list& out) {
  out[0] = zeros_like(g[0]);
}
template struct FillBackward<true>;
template struct FillBackward<false>;

}  // namespace npgrad::autograd
