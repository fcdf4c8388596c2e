#include "npgrad/autograd/nodes/view_nodes.h"

#include <functional>

#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void ReshapeAliasBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = reshape(g[0], self_sizes);
}

void UnsafeViewBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = reshape(g[0], self_sizes);
}

void SliceBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = slice_backward(g[0], self_sizes, dim, start, end, step);
}

void DiagonalBackward0_copy::compute(
    const variable_list& g, variable_list& out) {
  out[0] =
      diagonal_backward(g[0], self_sizes, args.offset, args.dim1, args.dim2);
}

namespace {
// The gradient of each piece of a split or unbind: the incoming one, or
// zeros of the piece's shape for an output that got none.
std::vector<Tensor> piece_grads(
    const variable_list& g,
    ScalarType dtype,
    const std::function<Shape(std::size_t)>& piece_shape) {
  std::vector<Tensor> pieces;
  for (std::size_t i = 0; i < g.size(); ++i) {
    pieces.push_back(g[i].defined() ? g[i] : zeros(piece_shape(i), dtype));
  }
  return pieces;
}

ScalarType defined_dtype(const variable_list& g) {
  for (const auto& t : g) {
    if (t.defined()) {
      return t.dtype();
    }
  }
  return ScalarType::Float32;  // unreachable: FormulaNode runs on a defined one
}

// Concatenates the pieces of length lengths[i] along dim of self_sizes.
Tensor cat_pieces(
    const variable_list& g,
    const Shape& self_sizes,
    int64_t dim,
    const std::vector<int64_t>& lengths) {
  int64_t d = maybe_wrap_dim(dim, static_cast<int64_t>(self_sizes.size()));
  auto grads = piece_grads(g, defined_dtype(g), [&](std::size_t i) {
    Shape s = self_sizes;
    s[d] = lengths[i];
    return s;
  });
  return cat(grads, d);
}
}  // namespace

void SplitBackward0::compute(const variable_list& g, variable_list& out) {
  int64_t d = maybe_wrap_dim(dim, static_cast<int64_t>(self_sizes.size()));
  out[0] =
      cat_pieces(g, self_sizes, dim, split_lengths(self_sizes[d], split_size));
}

void SplitWithSizesBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = cat_pieces(g, self_sizes, dim, split_sizes);
}

void UnbindBackward0::compute(const variable_list& g, variable_list& out) {
  int64_t d = maybe_wrap_dim(dim, static_cast<int64_t>(self_sizes.size()));
  Shape piece = self_sizes;
  piece.erase(piece.begin() + d);
  out[0] = stack(
      piece_grads(g, defined_dtype(g), [&](std::size_t) { return piece; }), d);
}

void SelectBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = select(g[0], dim, index);
}

void SliceBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = slice(g[0], dim, start, end, step);
}

void DiagonalBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = diagonal(g[0], args.offset, args.dim1, args.dim2);
}

void UnfoldBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  out[0] = unfold(g[0], dim, size, step);
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
