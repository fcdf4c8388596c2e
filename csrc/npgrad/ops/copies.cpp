// Ops that copy: clone, contiguous, cat, stack, advanced indexing.
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

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
    for (const auto& idx : indices) {
      node->indices_.items.emplace_back(idx, false);
    }
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
    for (const auto& idx : indices) {
      node->indices_.items.emplace_back(idx, false);
    }
    set_history(z, node);
  }
  return z;
}

}  // namespace npgrad::ops
