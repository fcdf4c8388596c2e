// The view ops outside the view table (view_ops.h says why), the ops.h
// entry points of the table's ops, and the backward helpers of views. The
// ndarray view is made by the kernels tier, and the result shares the base's
// version counter.
#include <algorithm>
#include <numeric>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/mutation_provenance.h"
#include "npgrad/autograd/nodes/view_nodes.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/view_ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

Tensor make_view_of(const Tensor& a, const Strided& g) {
  return make_view(
      a, kernels::view_as_strided(a, g.sizes, g.strides, g.offset));
}

int64_t product(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

Shape infer_size(Shape shape, int64_t numel) {
  int64_t known = 1;
  std::optional<std::size_t> infer;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      NPGRAD_CHECK(!infer, "only one dimension can be inferred");
      infer = i;
    } else {
      NPGRAD_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  bool ok = numel == known || (infer && known > 0 && numel % known == 0);
  NPGRAD_CHECK(
      ok,
      "shape '",
      shape_str(shape),
      "' is invalid for input of size ",
      numel);
  if (infer) {
    NPGRAD_CHECK(
        known != 0,
        "cannot reshape tensor of 0 elements into shape ",
        shape_str(shape),
        " because the unspecified dimension size -1 can be any value and is "
        "ambiguous");
    shape[*infer] = numel / known;
  }
  return shape;
}

// torch's computeStride: strides for viewing (oldshape, oldstride) as
// newshape without a copy, or nothing if the memory layout does not allow it.
std::optional<Shape> compute_stride(
    const Shape& oldshape, const Shape& oldstride, const Shape& newshape) {
  if (oldshape.empty()) {
    return Shape(newshape.size(), 1);
  }
  int64_t numel = product(oldshape);
  if (numel == 0 && oldshape == newshape) {
    return oldstride;
  }
  Shape newstride(newshape.size());
  if (numel == 0) {
    for (int64_t d = static_cast<int64_t>(newshape.size()) - 1; d >= 0; --d) {
      newstride[d] =
          d == static_cast<int64_t>(newshape.size()) - 1
              ? 1
              : std::max<int64_t>(newshape[d + 1], 1) * newstride[d + 1];
    }
    return newstride;
  }
  int64_t view_d = static_cast<int64_t>(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1;
       tensor_d >= 0;
       --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 ||
        (oldshape[tensor_d - 1] != 1 &&
         oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) {
        return std::nullopt;
      }
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) {
    return std::nullopt;
  }
  return newstride;
}

namespace {

struct SliceBounds {
  int64_t start, end, step;
};

SliceBounds slice_bounds(
    int64_t size,
    std::optional<int64_t> start,
    std::optional<int64_t> end,
    int64_t step) {
  NPGRAD_CHECK_VALUE(step > 0, "step must be greater than zero");
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(INT64_MAX);
  if (s < 0) {
    s += size;
  }
  if (e < 0) {
    e += size;
  }
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  return {s, e, step};
}

Strided slice_geometry(
    const Shape& sizes,
    const Shape& strides,
    int64_t dim,
    const SliceBounds& b) {
  Strided g{sizes, strides, b.start * strides[dim]};
  g.sizes[dim] = (b.end - b.start + b.step - 1) / b.step;
  g.strides[dim] = strides[dim] * b.step;
  return g;
}

// Zeros of `sizes` with grad written at the view geometry(zeros) (the
// backward of a view op).
template <typename GeometryFn>
Tensor zeros_with(const Tensor& grad, const Shape& sizes, GeometryFn geometry) {
  Tensor z = zeros(sizes, grad.dtype());
  Strided g = geometry(z);
  kernels::copy_into(
      kernels::view_as_strided(z, g.sizes, g.strides, g.offset), grad);
  return z;
}

}  // namespace

// The ops.h entry points of the view table's ops.

Tensor view(const Tensor& a, Shape sizes) {
  return view_op<view_ops::View>(a, {std::move(sizes)});
}

Tensor reshape(const Tensor& a, Shape sizes) {
  sizes = infer_size(std::move(sizes), a.numel());
  if (auto strides = compute_stride(a.sizes(), a.strides(), sizes)) {
    if (a.is_contiguous()) {
      return view(a, sizes);
    }
    // A non-contiguous tensor that is still viewable: torch's _reshape_alias.
    Tensor out = make_view_of(a, {sizes, *strides, 0});
    if (auto node = record_node<ReshapeAliasBackward0>(out, a)) {
      node->self_sizes = a.sizes();
    }
    return out;
  }
  // Not viewable: copy, then an unsafe view of the copy (not a view for
  // autograd: the copy is private).
  return unsafe_view(clone(a), sizes);
}

Tensor unsafe_view(const Tensor& a, Shape sizes) {
  sizes = infer_size(std::move(sizes), a.numel());
  Tensor contiguous_a = a.is_contiguous() ? a : kernels::cast(a, a.dtype());
  Tensor out = kernels::view_as_strided(
      contiguous_a, sizes, contiguous_strides(sizes), 0);
  out.impl()->version_counter = a.impl()->version_counter;
  if (auto node = record_node<UnsafeViewBackward0>(out, a)) {
    node->self_sizes = a.sizes();
  }
  return out;
}

Tensor expand(const Tensor& a, Shape sizes) {
  return view_op<view_ops::Expand>(a, {std::move(sizes)});
}

Tensor t(const Tensor& a) {
  return view_op<view_ops::T>(a, {});
}

Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1) {
  return view_op<view_ops::Transpose>(a, {dim0, dim1});
}

Tensor permute(const Tensor& a, std::vector<int64_t> dims) {
  return view_op<view_ops::Permute>(a, {std::move(dims)});
}

Tensor squeeze(const Tensor& a) {
  return view_op<view_ops::Squeeze>(a, {SqueezeDims{}});
}

Tensor squeeze(const Tensor& a, int64_t dim) {
  return view_op<view_ops::Squeeze>(a, {SqueezeDims{Shape{dim}, false}});
}

Tensor squeeze(const Tensor& a, std::vector<int64_t> dims) {
  return view_op<view_ops::Squeeze>(a, {SqueezeDims{std::move(dims), true}});
}

/// matmul's squeeze_ of the helper dimension of a 1-D operand.
Tensor squeeze_matmul_dim(const Tensor& a, int64_t dim) {
  return view_op<view_ops::Squeeze, /*InplaceNode=*/true>(
      a, {SqueezeDims{Shape{dim}, false}});
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  return view_op<view_ops::Unsqueeze>(a, {dim});
}

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  return view_op<view_ops::Select>(a, {dim, index});
}

Tensor diagonal(const Tensor& a, int64_t offset, int64_t dim1, int64_t dim2) {
  return view_op<view_ops::Diagonal>(a, {offset, dim1, dim2});
}

Tensor unfold(const Tensor& a, int64_t dimension, int64_t size, int64_t step) {
  return view_op<view_ops::Unfold>(a, {dimension, size, step});
}

void transpose_(const Tensor& self, int64_t dim0, int64_t dim1) {
  view_op_<view_ops::Transpose>(self, {dim0, dim1});
}

Tensor slice(
    const Tensor& a,
    int64_t dim,
    std::optional<int64_t> start,
    std::optional<int64_t> end,
    int64_t step) {
  NPGRAD_CHECK_INDEX(
      a.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  int64_t d = maybe_wrap_dim(dim, a.dim());
  SliceBounds b = slice_bounds(a.sizes()[d], start, end, step);
  Tensor out = make_view_of(a, slice_geometry(a.sizes(), a.strides(), d, b));
  if (auto node = record_node<SliceBackward0>(out, a)) {
    node->dim = dim;
    node->start = b.start;
    node->end = b.end;
    node->step = step;
    node->start_saved = start.value_or(0);
    node->end_saved = end.value_or(INT64_MAX);
    node->self_sizes = a.sizes();
  }
  return out;
}

Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  NPGRAD_CHECK(a.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  NPGRAD_CHECK(length >= 0, "narrow(): length must be non-negative.");
  int64_t size = a.sizes()[maybe_wrap_dim(dim, a.dim())];
  NPGRAD_CHECK_INDEX(
      start >= -size && start <= size,
      "start out of range (expected to be in range of [",
      -size,
      ", ",
      size,
      "], but got ",
      start,
      ")");
  if (start < 0) {
    start += size;
  }
  NPGRAD_CHECK(
      start <= size - length,
      "start (",
      start,
      ") + length (",
      length,
      ") exceeds dimension size (",
      size,
      ").");
  return slice(a, dim, start, start + length, 1);
}

Tensor movedim(
    const Tensor& a,
    const std::vector<int64_t>& source,
    const std::vector<int64_t>& destination) {
  NPGRAD_CHECK(
      source.size() == destination.size(),
      "movedim: Invalid source or destination dims: source (",
      shape_str(source),
      " dims) should contain the same number of dims as destination (",
      shape_str(destination),
      " dims)");
  int64_t n = a.dim();
  // order[i]: the input dim that goes to position i (-1: not placed yet).
  std::vector<int64_t> order(std::max<int64_t>(n, 1), -1);
  std::vector<bool> moved(order.size());
  std::vector<bool> taken(order.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    int64_t s = maybe_wrap_dim(source[i], n);
    int64_t d = maybe_wrap_dim(destination[i], n);
    NPGRAD_CHECK(
        !moved[s],
        "movedim: repeated dim in `source` (",
        shape_str(source),
        ")");
    NPGRAD_CHECK(
        !taken[d],
        "movedim: repeated dim in `destination` (",
        shape_str(destination),
        ")");
    moved[s] = taken[d] = true;
    order[d] = s;
  }
  if (n == 0) {
    return alias(a);  // as torch's movedim of a 0-dim tensor
  }
  int64_t next = 0;
  for (auto& o : order) {
    if (o == -1) {
      while (moved[next]) {
        ++next;
      }
      o = next++;
    }
  }
  return permute(a, order);
}

Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  if (a.dim() == 0) {
    maybe_wrap_dim(start_dim, 0);
    maybe_wrap_dim(end_dim, 0);
    return reshape(a, {1});
  }
  int64_t s = maybe_wrap_dim(start_dim, a.dim());
  int64_t e = maybe_wrap_dim(end_dim, a.dim());
  NPGRAD_CHECK(
      s <= e,
      "flatten() has invalid args: start_dim cannot come after end_dim");
  if (s == e) {
    return a;
  }
  Shape sizes(a.sizes().begin(), a.sizes().begin() + s);
  sizes.push_back(
      product(Shape(a.sizes().begin() + s, a.sizes().begin() + e + 1)));
  sizes.insert(sizes.end(), a.sizes().begin() + e + 1, a.sizes().end());
  return reshape(a, sizes);
}

Tensor unflatten(const Tensor& a, int64_t dim, const Shape& sizes) {
  // torch reports the errors of its inner calls as "unexpected".
  NPGRAD_CHECK(
      a.dim() > 0,
      "unflatten got an unexpected error:\nDimension specified as ",
      dim,
      " but tensor has no dimensions");
  int64_t d = maybe_wrap_dim(dim, a.dim());
  NPGRAD_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t size = a.sizes()[d];
  Shape inferred;
  try {
    inferred = infer_size(sizes, size);
  } catch (const Error& e) {
    int64_t known = 1;
    for (int64_t s : sizes) {
      known *= s == -1 ? 1 : s;
    }
    int64_t unknown = std::count(sizes.begin(), sizes.end(), -1);
    NPGRAD_CHECK(
        unknown > 1 || (unknown == 1 && known == 0 && size == 0),
        "unflatten: Provided sizes ",
        shape_str(sizes),
        " don't multiply up to the size of dim ",
        dim,
        " (",
        size,
        ") in the input tensor");
    throw Error(std::string("unflatten got an unexpected error:\n") + e.what());
  }
  Shape shape(a.sizes().begin(), a.sizes().begin() + d);
  shape.insert(shape.end(), inferred.begin(), inferred.end());
  shape.insert(shape.end(), a.sizes().begin() + d + 1, a.sizes().end());
  return view(a, shape);
}

namespace {
// The outputs of split, split_with_sizes, chunk and unbind: views of `a`
// that share one node. torch forbids writing to them in place
// (CreationMeta::MultiOutputNode): the node's formula would not see the write.
template <typename NodeT>
std::shared_ptr<NodeT> record_multi_output(
    const Tensor& a, const std::vector<Tensor>& outs) {
  if (GradMode::is_enabled()) {
    for (const auto& out : outs) {
      out.impl()->creation_meta = CreationMeta::MultiOutputNode;
    }
  }
  if (!compute_requires_grad({&a})) {
    return nullptr;
  }
  auto node = make_node<NodeT>();
  node->set_next_edges(collect_next_edges({&a}));
  for (const auto& out : outs) {
    set_history(out, node);  // output_nr: the position in `outs`
  }
  node->self_sizes = a.sizes();
  return node;
}

// Consecutive views of `a` along `d`, of the given lengths.
std::vector<Tensor> pieces_along(
    const Tensor& a, int64_t d, const std::vector<int64_t>& lengths) {
  std::vector<Tensor> outs;
  int64_t start = 0;
  for (int64_t n : lengths) {
    outs.push_back(make_view_of(
        a, slice_geometry(a.sizes(), a.strides(), d, {start, start + n, 1})));
    start += n;
  }
  return outs;
}
}  // namespace

std::vector<int64_t> split_lengths(int64_t size, int64_t split_size) {
  int64_t pieces =
      split_size == 0
          ? 1
          : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<int64_t> lengths(pieces, split_size);
  lengths.back() = size - split_size * (pieces - 1);
  return lengths;
}

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  NPGRAD_CHECK(a.dim() != 0, "split expects at least a 1-dimensional tensor");
  NPGRAD_CHECK(
      split_size >= 0,
      "split expects split_size be non-negative, but got split_size=",
      split_size);
  int64_t d = maybe_wrap_dim(dim, a.dim());
  int64_t size = a.sizes()[d];
  NPGRAD_CHECK(
      split_size > 0 || size == 0,
      "split_size can only be 0 if dimension size is 0, but got dimension "
      "size of ",
      size);
  std::vector<Tensor> outs =
      pieces_along(a, d, split_lengths(size, split_size));
  if (auto node = record_multi_output<SplitBackward0>(a, outs)) {
    node->dim = dim;
    node->split_size = split_size;
  }
  return outs;
}

std::vector<Tensor> split_with_sizes(
    const Tensor& a, const std::vector<int64_t>& split_sizes, int64_t dim) {
  NPGRAD_CHECK(a.dim() != 0, "split expects at least a 1-dimensional tensor");
  int64_t d = maybe_wrap_dim(dim, a.dim());
  int64_t total = 0;
  for (int64_t n : split_sizes) {
    NPGRAD_CHECK(
        n >= 0,
        "split_with_sizes expects split_sizes have only non-negative entries, "
        "but got split_sizes=",
        shape_str(split_sizes));
    total += n;
  }
  NPGRAD_CHECK(
      total == a.sizes()[d],
      "split_with_sizes expects split_sizes to sum exactly to ",
      a.sizes()[d],
      " (input tensor's size at dimension ",
      d,
      "), but got split_sizes=",
      shape_str(split_sizes));
  std::vector<Tensor> outs = pieces_along(a, d, split_sizes);
  if (auto node = record_multi_output<SplitWithSizesBackward0>(a, outs)) {
    node->dim = dim;
    node->split_sizes = split_sizes;
  }
  return outs;
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  NPGRAD_CHECK(a.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  NPGRAD_CHECK(
      chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t size = a.sizes()[maybe_wrap_dim(dim, a.dim())];
  int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0) {
    // `chunks` empty pieces, as torch returns them (split(0) gives one).
    return split_with_sizes(a, std::vector<int64_t>(chunks, 0), dim);
  }
  return split(a, split_size, dim);
}

std::vector<Tensor> unbind(const Tensor& a, int64_t dim) {
  NPGRAD_CHECK_INDEX(
      a.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  int64_t d = maybe_wrap_dim(dim, a.dim());
  std::vector<Tensor> outs;
  for (int64_t i = 0; i < a.sizes()[d]; ++i) {
    outs.push_back(make_view_of(a, view_ops::Select::geometry(a, {d, i})));
  }
  if (auto node = record_multi_output<UnbindBackward0>(a, outs)) {
    node->dim = dim;
  }
  return outs;
}

Tensor alias(const Tensor& a) {
  Tensor out = make_view_of(a, {a.sizes(), a.strides(), 0});
  record_node<AliasBackward0>(out, a);
  return out;
}

Tensor select_backward(
    const Tensor& grad, const Shape& sizes, int64_t dim, int64_t index) {
  Tensor z = zeros_with(grad, sizes, [&](const Tensor& z) {
    return view_ops::Select::geometry(z, {dim, index});
  });
  if (auto node = record_node<SelectBackwardBackward0>(z, grad)) {
    node->dim = dim;
    node->index = index;
  }
  return z;
}

Tensor diagonal_backward(
    const Tensor& grad,
    const Shape& sizes,
    int64_t offset,
    int64_t dim1,
    int64_t dim2) {
  Tensor z = zeros_with(grad, sizes, [&](const Tensor& z) {
    return view_ops::Diagonal::geometry(z, {offset, dim1, dim2});
  });
  if (auto node = record_node<DiagonalBackwardBackward0>(z, grad)) {
    node->args = {offset, dim1, dim2};
  }
  return z;
}

Tensor unfold_backward(
    const Tensor& grad,
    const Shape& sizes,
    int64_t dim,
    int64_t size,
    int64_t step) {
  Tensor z = zeros(sizes, grad.dtype());
  // A 0-dim input unfolds as a tensor of one element.
  bool scalar = sizes.empty();
  Tensor z1 = scalar ? kernels::view_as_strided(z, {1}, {1}, 0) : z;
  Tensor g1 = scalar ? kernels::view_as_strided(
                           grad, {1, size}, {0, grad.strides()[0]}, 0)
                     : grad;
  int64_t d = maybe_wrap_dim(dim, z1.dim());
  int64_t last = g1.dim() - 1;
  Strided windows{z1.sizes(), z1.strides(), 0};
  windows.sizes[d] = g1.sizes()[d];
  windows.strides[d] *= step;
  // Element i of every window, added where it came from (windows overlap
  // when step < size).
  for (int64_t i = 0; i < size; ++i) {
    Tensor region = kernels::view_as_strided(
        z1, windows.sizes, windows.strides, i * z1.strides()[d]);
    Strided piece = view_ops::Select::geometry(g1, {last, i});
    Tensor src =
        kernels::view_as_strided(g1, piece.sizes, piece.strides, piece.offset);
    kernels::binary_out(kernels::Binary::Add, region, src, region);
  }
  if (auto node = record_node<UnfoldBackwardBackward0>(z, grad)) {
    node->dim = dim;
    node->size = size;
    node->step = step;
  }
  return z;
}

Tensor slice_backward(
    const Tensor& grad,
    const Shape& sizes,
    int64_t dim,
    int64_t start,
    int64_t end,
    int64_t step) {
  Tensor z = zeros_with(grad, sizes, [&](const Tensor& z) {
    return slice_geometry(
        z.sizes(),
        z.strides(),
        maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size())),
        {start, end, step});
  });
  if (auto node = record_node<SliceBackwardBackward0>(z, grad)) {
    node->dim = dim;
    node->start = start;
    node->end = end;
    node->step = step;
  }
  return z;
}

}  // namespace npgrad::ops

namespace npgrad::ops {

using namespace npgrad::autograd;

Tensor as_strided(const Tensor& a, Shape sizes, Shape strides, int64_t offset) {
  Tensor out =
      make_view(a, kernels::view_as_strided(a, sizes, strides, offset));
  if (compute_requires_grad({&a})) {
    auto node = make_node<AsStridedBackward0>();
    node->set_next_edges(collect_next_edges({&a}));
    node->geometry = {a.sizes(), a.strides(), sizes, strides, offset};
    set_history(out, node);
  }
  return out;
}

Tensor as_strided_backward(
    const Tensor& grad,
    const Shape& sizes,
    const Shape& strides,
    const Shape& view_sizes,
    const Shape& view_strides,
    int64_t offset) {
  Tensor result = kernels::empty_strided(sizes, strides, grad.dtype());
  kernels::fill(result, 0);
  // A stride-0 (expanded) dimension puts several gradient elements on one
  // storage element: they are summed first, since an add through an
  // overlapping view would keep only one of them.
  Shape region_sizes = view_sizes;
  std::vector<int64_t> expanded;
  for (std::size_t d = 0; d < view_sizes.size(); ++d) {
    if (view_strides[d] == 0 && view_sizes[d] > 1) {
      expanded.push_back(static_cast<int64_t>(d));
      region_sizes[d] = 1;
    }
  }
  Tensor g = expanded.empty()
                 ? grad
                 : kernels::sum(grad, expanded, /*keepdim=*/true, grad.dtype());
  Tensor region =
      kernels::view_as_strided(result, region_sizes, view_strides, offset);
  kernels::binary_out(kernels::Binary::Add, region, g, region);
  if (compute_requires_grad({&grad})) {
    auto node = make_node<AsStridedScatterBackward0>();
    node->set_next_edges(collect_next_edges({&grad}));
    node->geometry = {sizes, strides, view_sizes, view_strides, offset};
    set_history(result, node);
  }
  return result;
}

}  // namespace npgrad::ops
