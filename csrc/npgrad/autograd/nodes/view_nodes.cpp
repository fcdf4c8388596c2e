#include "npgrad/autograd/nodes/view_nodes.h"

#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void ViewBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = reshape(g[0], self_sizes);
}

void ReshapeAliasBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = reshape(g[0], self_sizes);
}

void UnsafeViewBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = reshape(g[0], self_sizes);
}

void ExpandBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = sum_to(g[0], self_sizes);
}

void SqueezeBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = reshape(g[0], self_sizes);
}

template <int kVariant>
void SqueezeDimsBackward<kVariant>::compute(
    const variable_list& g, variable_list& out) {
  out[0] = reshape(g[0], self_sizes);
}
template struct SqueezeDimsBackward<1>;
template struct SqueezeDimsBackward<2>;
template struct SqueezeDimsBackward<4>;

void UnsqueezeBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = squeeze(g[0], dim);
}

void TBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = t(g[0]);
}

void TransposeBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = transpose(g[0], dim0, dim1);
}

void PermuteBackward0::compute(const variable_list& g, variable_list& out) {
  std::vector<int64_t> inverse(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    inverse[maybe_wrap_dim(dims[i], static_cast<int64_t>(dims.size()))] =
        static_cast<int64_t>(i);
  }
  out[0] = permute(g[0], inverse);
}

void SelectBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = select_backward(g[0], self_sizes, dim, index);
}

void SliceBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = slice_backward(g[0], self_sizes, dim, start, end, step);
}

void SelectBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = select(g[0], dim, index);
}

void SliceBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = slice(g[0], dim, start, end, step);
}

}  // namespace npgrad::autograd

namespace npgrad::autograd {

void AsStridedBackward0::compute(const variable_list& g, variable_list& out) {
  const ViewGeometry& v = geometry;
  out[0] = ops::as_strided_backward(
      g[0], v.base_sizes, v.base_strides, v.sizes, v.strides, v.offset);
}

void AsStridedScatterBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] =
      ops::as_strided(g[0], geometry.sizes, geometry.strides, geometry.offset);
}

}  // namespace npgrad::autograd
