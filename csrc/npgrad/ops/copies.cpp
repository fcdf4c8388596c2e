// Ops that copy: clone, contiguous, cat, stack, advanced indexing, and the
// shape ops whose result is a new tensor (flip, roll, repeat,
// repeat_interleave, triu/tril, diag, diag_embed).
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

#include <algorithm>
#include <numeric>

namespace npgrad::ops {

using namespace npgrad::autograd;

Tensor clone(const Tensor& a) {
  Tensor out = kernels::cast(a, a.dtype());
  if (compute_requires_grad({&a})) {
    auto node = make_node<CloneBackward0>();
    node->set_next_edges(collect_next_edges({&a}));
    set_history(out, node);
  }
  return out;
}

Tensor contiguous(const Tensor& a) {
  return a.is_contiguous() ? a : clone(a);
}

namespace {
ScalarType common_dtype(const std::vector<Tensor>& tensors) {
  ScalarType dt = tensors[0].dtype();
  for (const auto& t : tensors) {
    dt = promote_types(dt, t.dtype());
  }
  return dt;
}

std::vector<Tensor> cast_all(
    const std::vector<Tensor>& tensors, ScalarType dt) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) {
    out.push_back(t.dtype() == dt ? t : kernels::cast(t, dt));
  }
  return out;
}
}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  NPGRAD_CHECK_VALUE(
      !tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor& first = tensors[0];
  NPGRAD_CHECK(
      first.dim() > 0,
      "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = maybe_wrap_dim(dim, first.dim());
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    NPGRAD_CHECK(
        t.dim() == first.dim(),
        "Tensors must have same number of dimensions: got ",
        first.dim(),
        " and ",
        t.dim());
    for (int64_t k = 0; k < first.dim(); ++k) {
      NPGRAD_CHECK(
          k == d || t.sizes()[k] == first.sizes()[k],
          "Sizes of tensors must match except in dimension ",
          d,
          ". Expected size ",
          first.sizes()[k],
          " but got size ",
          t.sizes()[k],
          " for tensor number ",
          i,
          " in the list.");
    }
  }
  Tensor out =
      kernels::concatenate(cast_all(tensors, common_dtype(tensors)), d);
  if (compute_requires_grad(tensors)) {
    auto node = make_node<CatBackward0>();
    node->set_next_edges(collect_next_edges(tensors));
    node->dim = dim;
    for (const auto& t : tensors) {
      node->sizes_along_dim.push_back(t.sizes()[d]);
    }
    set_history(out, node);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  NPGRAD_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  int64_t d = maybe_wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> expanded;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    NPGRAD_CHECK(
        t.sizes() == tensors[0].sizes(),
        "stack expects each tensor to be equal size, but got ",
        shape_str(tensors[0].sizes()),
        " at entry 0 and ",
        shape_str(t.sizes()),
        " at entry ",
        i);
    Shape sizes = t.sizes();
    Shape strides = t.strides();
    sizes.insert(sizes.begin() + d, 1);
    strides.insert(strides.begin() + d, 1);
    expanded.push_back(kernels::view_as_strided(t, sizes, strides, 0));
  }
  Tensor out =
      kernels::concatenate(cast_all(expanded, common_dtype(tensors)), d);
  if (compute_requires_grad(tensors)) {
    auto node = make_node<StackBackward0>();
    node->set_next_edges(collect_next_edges(tensors));
    node->dim = dim;
    set_history(out, node);
  }
  return out;
}

void check_index_bounds(const Tensor& a, const std::vector<Tensor>& indices) {
  int64_t indexer = 0;
  for (std::size_t d = 0; d < indices.size(); ++d) {
    const Tensor& idx = indices[d];
    if (!idx.defined()) {
      continue;
    }
    if (idx.dtype() == ScalarType::Bool) {
      return;  // a mask may cover several dims: NumPy's message stands
    }
    if (is_integral(idx.dtype(), false) &&
        d < static_cast<std::size_t>(a.dim())) {
      int64_t size = a.sizes()[d];
      std::optional<int64_t> bad = kernels::first_outside(idx, -size, size);
      NPGRAD_CHECK_INDEX(
          !bad,
          "index ",
          bad.value_or(0),
          " is out of bounds for dimension ",
          indexer,
          " with size ",
          size);
    }
    ++indexer;
  }
}
void check_index_tensors(const std::vector<Tensor>& indices) {
  for (const auto& idx : indices) {
    NPGRAD_CHECK_INDEX(
        !idx.defined() || idx.dtype() == ScalarType::Int64 ||
            idx.dtype() == ScalarType::Int32 || idx.dtype() == ScalarType::Bool,
        "tensors used as indices must be long, int, byte or bool tensors");
  }
}

Tensor index(const Tensor& a, const std::vector<Tensor>& indices) {
  check_index_tensors(indices);
  Tensor out;
  try {
    out = kernels::index(a, indices);
  } catch (const IndexError&) {
    check_index_bounds(a, indices);
    throw;
  }
  if (compute_requires_grad({&a})) {
    auto node = make_node<IndexBackward0>();
    node->set_next_edges(collect_next_edges({&a}));
    node->indices_ = SavedVariableList(indices, false);
    node->self_sizes = a.sizes();
    set_history(out, node);
  }
  return out;
}

Tensor index_backward(
    const Tensor& grad,
    const Shape& sizes,
    const std::vector<Tensor>& indices) {
  Tensor z = zeros(sizes, grad.dtype());
  kernels::index_put(z, indices, grad, true);
  if (compute_requires_grad({&grad})) {
    auto node = make_node<IndexPutImplBackward0>();
    // z does not require grad yet: its edge (self's) is invalid, as torch's.
    node->set_next_edges(collect_next_edges({&z, &grad}));
    node->indices_ = SavedVariableList(indices, false);
    set_history(z, node);
  }
  return z;
}

namespace {
// `t` rolled by `shift` along d (wrapped): a copy.
Tensor roll_along(const Tensor& t, int64_t d, int64_t shift) {
  int64_t size = t.sizes()[d];
  if (size == 0) {
    return kernels::cast(t, t.dtype());
  }
  int64_t s = ((shift % size) + size) % size;
  auto piece = [&](int64_t start, int64_t length) {
    Shape sizes = t.sizes();
    sizes[d] = length;
    return kernels::view_as_strided(
        t, sizes, t.strides(), start * t.strides()[d]);
  };
  return kernels::concatenate({piece(size - s, s), piece(0, size - s)}, d);
}

// An uninitialized tensor like `a`, laid out as torch's empty_like with
// preserve_format: a's strides when they are a permutation of a dense
// layout (a transpose), else contiguous.
Tensor empty_preserving_layout(const Tensor& a) {
  std::vector<int64_t> order(a.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return a.strides()[x] < a.strides()[y];
  });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (a.sizes()[d] != 1 && a.strides()[d] != expected) {
      return kernels::empty(a.sizes(), a.dtype());
    }
    expected *= a.sizes()[d];
  }
  return kernels::empty_strided(a.sizes(), a.strides(), a.dtype());
}

// Values of triu (upper) or tril of the last two dims of `a`.
Tensor triangle_values(const Tensor& a, int64_t diagonal, bool upper) {
  NPGRAD_CHECK(
      a.dim() >= 2,
      upper ? "triu" : "tril",
      ": input tensor must have at least 2 dimensions");
  int64_t rows = a.sizes()[a.dim() - 2];
  int64_t cols = a.sizes()[a.dim() - 1];
  Tensor mask = kernels::empty({rows, cols}, ScalarType::Bool);
  auto* keep = static_cast<bool*>(mask.data_ptr());
  // j - i lies in [-rows, cols]: a diagonal clamped to one beyond keeps
  // every comparison and cannot overflow.
  int64_t k = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      keep[i * cols + j] = upper ? j - i >= k : j - i <= k;
    }
  }
  Tensor out = kernels::where(
      mask, a, kernels::scalar_tensor(0, a.dtype(), false), a.dtype());
  return out.is_contiguous() ? out : kernels::cast(out, a.dtype());  // torch's
}
}  // namespace

Tensor flip(const Tensor& a, const std::vector<int64_t>& dims) {
  std::vector<bool> flipped(std::max<int64_t>(a.dim(), 1));
  for (int64_t dim : dims) {
    int64_t d = maybe_wrap_dim(dim, a.dim());
    NPGRAD_CHECK(
        !flipped[d], "dim ", d, " appears multiple times in the list of dims");
    flipped[d] = true;
  }
  Shape strides = a.strides();
  int64_t offset = 0;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (flipped[d] && a.sizes()[d] > 1) {
      offset += (a.sizes()[d] - 1) * strides[d];
      strides[d] = -strides[d];
    }
  }
  Tensor out = empty_preserving_layout(a);
  kernels::copy_into(
      out, kernels::view_as_strided(a, a.sizes(), strides, offset));
  if (auto node = record_node<FlipBackward0>(out, a)) {
    node->dims = dims;
  }
  return out;
}

Tensor roll(
    const Tensor& a,
    const std::vector<int64_t>& shifts,
    const std::vector<int64_t>& dims) {
  NPGRAD_CHECK(!shifts.empty(), "`shifts` required");
  NPGRAD_CHECK(
      dims.empty() ? shifts.size() == 1 : shifts.size() == dims.size(),
      "shifts and dimensions must align. shifts: ",
      shifts.size(),
      ", dims:",
      dims.size());
  Tensor out;
  if (dims.empty()) {
    // The flattened tensor rolled, in a's sizes.
    Tensor flat = kernels::cast(a, a.dtype());
    flat = kernels::view_as_strided(flat, {a.numel()}, {1}, 0);
    Tensor rolled = roll_along(flat, 0, shifts[0]);
    out = kernels::view_as_strided(
        rolled, a.sizes(), contiguous_strides(a.sizes()), 0);
  } else {
    out = a;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      NPGRAD_CHECK_INDEX(
          a.dim() > 0,
          "Dimension specified as ",
          dims[i],
          " but tensor has no dimensions");
      out = roll_along(out, maybe_wrap_dim(dims[i], a.dim()), shifts[i]);
    }
    if (!out.is_contiguous()) {
      out = kernels::cast(out, a.dtype());  // torch's result is contiguous
    }
  }
  if (auto node = record_node<RollBackward0>(out, a)) {
    node->shifts = shifts;
    node->dims = dims;
  }
  return out;
}

Tensor repeat(const Tensor& a, const std::vector<int64_t>& repeats) {
  int64_t n = static_cast<int64_t>(repeats.size());
  NPGRAD_CHECK(
      n >= a.dim(),
      "Number of dimensions of repeat dims can not be smaller than number of "
      "dimensions of tensor");
  int64_t lead = n - a.dim();
  Shape target(n);
  // a seen as (repeats[0], size[0], repeats[1], size[1], ...), the repeats
  // with stride 0, written into the result laid out the same way.
  Shape split_sizes, split_strides;
  for (int64_t i = 0; i < n; ++i) {
    int64_t size = i < lead ? 1 : a.sizes()[i - lead];
    bool overflow = __builtin_mul_overflow(size, repeats[i], &target[i]);
    NPGRAD_CHECK(
        !overflow,
        "Storage size calculation overflowed with sizes=",
        shape_str(repeats));
    split_sizes.push_back(repeats[i]);
    split_sizes.push_back(size);
    split_strides.push_back(0);
    split_strides.push_back(i < lead ? 0 : a.strides()[i - lead]);
  }
  check_allocatable(target);
  Tensor out = kernels::empty(target, a.dtype());
  if (out.numel() > 0) {
    kernels::copy_into(
        kernels::view_as_strided(
            out, split_sizes, contiguous_strides(split_sizes), 0),
        kernels::view_as_strided(a, split_sizes, split_strides, 0));
  }
  if (auto node = record_node<RepeatBackward0>(out, a)) {
    node->repeats = repeats;
    node->self_sizes = a.sizes();
  }
  return out;
}

Tensor tile(const Tensor& a, std::vector<int64_t> dims) {
  if (static_cast<int64_t>(dims.size()) < a.dim()) {
    dims.insert(dims.begin(), a.dim() - dims.size(), 1);
  }
  return repeat(a, dims);
}

Tensor repeat_interleave(
    const Tensor& a,
    int64_t repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size) {
  NPGRAD_CHECK(repeats >= 0, "Repeats must be non-negative");
  Tensor input = dim ? a : flatten(a, 0, -1);
  int64_t d = maybe_wrap_dim(dim.value_or(0), input.dim());
  if (input.dim() == 0) {
    input = reshape(input, {1});  // a 0-dim tensor with dim=0
  }
  int64_t expected = 0;
  NPGRAD_CHECK(
      !__builtin_mul_overflow(input.sizes()[d], repeats, &expected),
      "Storage size calculation overflowed with sizes=",
      shape_str({input.sizes()[d], repeats}));
  NPGRAD_CHECK(
      !output_size || *output_size == expected,
      "repeat_interleave: Invalid output_size, expected ",
      expected,
      " but got ",
      *output_size);
  // torch's composite: each element repeated along a new dim after d, then
  // the two dims flattened.
  Tensor grown = unsqueeze(input, d + 1);
  Shape sizes = grown.sizes();
  sizes[d + 1] = repeats;
  check_allocatable(sizes);
  return flatten(clone(expand(grown, sizes)), d, d + 1);
}

Tensor repeat_interleave_index(const Tensor& repeats) {
  NPGRAD_CHECK(
      repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      repeats.dtype() == ScalarType::Int64,
      "\"repeat_interleave_cpu\" not implemented for '",
      scalar_type_name(repeats.dtype()),
      "'");
  Tensor counts = kernels::cast(repeats, ScalarType::Int64);
  const auto* r = static_cast<const int64_t*>(counts.data_ptr());
  int64_t total = 0;
  for (int64_t i = 0; i < counts.numel(); ++i) {
    NPGRAD_CHECK(r[i] >= 0, "repeats can not be negative");
    NPGRAD_CHECK(
        !__builtin_add_overflow(total, r[i], &total),
        "Storage size calculation overflowed with sizes=[",
        total,
        " + ",
        r[i],
        "]");
  }
  Tensor index = kernels::empty({total}, ScalarType::Int64);
  auto* out = static_cast<int64_t*>(index.data_ptr());
  for (int64_t i = 0, k = 0; i < counts.numel(); ++i) {
    for (int64_t j = 0; j < r[i]; ++j) {
      out[k++] = i;
    }
  }
  return index;
}

Tensor repeat_interleave(
    const Tensor& a,
    const Tensor& repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size) {
  Tensor input = dim ? a : flatten(a, 0, -1);
  int64_t d = maybe_wrap_dim(dim.value_or(0), input.dim());
  if (input.dim() == 0) {
    input = reshape(input, {1});
  }
  int64_t size = input.sizes()[d];
  NPGRAD_CHECK(repeats.dim() <= 1, "repeats must be 0-dim or 1-dim tensor");
  Tensor counts = repeats;
  if (repeats.dim() == 0 || repeats.sizes()[0] == 1) {
    counts = kernels::view_as_strided(repeats, {size}, {0}, 0);
  }
  NPGRAD_CHECK(
      counts.sizes()[0] == size,
      "repeats must have the same size as input along dim, but got "
      "repeats.size(0) = ",
      counts.sizes()[0],
      " and input.size(",
      d,
      ") = ",
      size);
  Tensor index = repeat_interleave_index(counts);
  NPGRAD_CHECK(
      !output_size || *output_size == index.numel(),
      "allocated size does not match required size");
  return index_select(input, dim.value_or(0), index);
}

Tensor triu(const Tensor& a, int64_t diagonal) {
  Tensor out = triangle_values(a, diagonal, /*upper=*/true);
  if (auto node = record_node<TriuBackward0>(out, a)) {
    node->diagonal = diagonal;
  }
  return out;
}

Tensor tril(const Tensor& a, int64_t diagonal) {
  Tensor out = triangle_values(a, diagonal, /*upper=*/false);
  if (auto node = record_node<TrilBackward0>(out, a)) {
    node->diagonal = diagonal;
  }
  return out;
}

Tensor diag_embed(const Tensor& a, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t n = a.dim() + 1;
  int64_t d1 = maybe_wrap_dim(dim1, n);
  int64_t d2 = maybe_wrap_dim(dim2, n);
  NPGRAD_CHECK(
      d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t last = a.dim() == 0 ? 1 : a.sizes().back();
  int64_t side = 0;
  NPGRAD_CHECK(
      offset > INT64_MIN &&
          !__builtin_add_overflow(last, std::abs(offset), &side),
      "Storage size calculation overflowed with sizes=[",
      last,
      " + |",
      offset,
      "|]");
  Shape sizes;
  std::size_t rest = 0;
  for (int64_t i = 0; i < n; ++i) {
    sizes.push_back(i == d1 || i == d2 ? side : a.sizes()[rest++]);
  }
  check_allocatable(sizes);
  Tensor out = zeros(sizes, a.dtype());
  kernels::copy_into(diagonal(out, offset, d1, d2), a);
  if (auto node = record_node<DiagEmbedBackward0>(out, a)) {
    node->args = {offset, dim1, dim2};
  }
  return out;
}

Tensor diag(const Tensor& a, int64_t diagonal) {
  NPGRAD_CHECK(
      a.dim() == 1 || a.dim() == 2,
      "diag(): Supports 1D or 2D tensors. Got ",
      a.dim(),
      "D");
  if (a.dim() == 1) {
    return diag_embed(a, diagonal, -2, -1);
  }
  Tensor out;
  {
    AutoGradMode no_grad(false);
    out = kernels::cast(ops::diagonal(a, diagonal, 0, 1), a.dtype());
  }
  if (auto node = record_node<DiagonalBackward0_copy>(out, a)) {
    node->args = {diagonal, 0, 1};
    node->self_sizes = a.sizes();
  }
  return out;
}

}  // namespace npgrad::ops
