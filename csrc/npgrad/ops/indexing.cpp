// Ops that address elements by an index tensor or a mask: gather, scatter
// (with and without reduce), scatter_add, scatter_reduce, index_select,
// index_add, index_copy, masked_select, masked_scatter, take_along_dim,
// nonzero, index_put.
//
// Note [Ops that write into self]
// scatter, scatter_add, index_add, index_copy, masked_scatter and index_put
// have one body for both forms: the out-of-place form writes into a copy of
// self and records its node on the copy; the in-place form writes into self
// through the mutation path (Note [The mutation path], inplace.cpp). Every
// check runs before anything is written, so a bad index leaves every tensor
// as it was.
#include <cstddef>
#include <optional>
#include <type_traits>
#include <vector>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/autograd/nodes/indexing_nodes.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

// See Note [Ops that write into self]. `make` builds the node (called only
// when the result requires grad); `write` writes into the tensor it is given.
template <typename MakeNode, typename Write>
Tensor write_into_node(
    const Tensor& self,
    bool inplace,
    const char* op,
    std::initializer_list<const Tensor*> inputs,
    MakeNode make,
    Write write) {
  bool rg = compute_requires_grad(inputs);
  if (inplace) {
    check_inplace(self, rg);
  }
  std::shared_ptr<Node> node;
  if (rg) {
    node = make();
    node->set_next_edges(collect_next_edges(inputs));
  }
  Tensor out = inplace ? self : kernels::cast(self, self.dtype());
  write(out);
  if (inplace) {
    finish_inplace(self, node, op);
  } else if (node) {
    set_history(out, node);
  }
  return out;
}

// write_into_node with a node of type NodeT whose saved state `save` fills.
template <typename NodeT, typename Save, typename Write>
Tensor write_into(
    const Tensor& self,
    bool inplace,
    const char* op,
    std::initializer_list<const Tensor*> inputs,
    Save save,
    Write write) {
  return write_into_node(
      self,
      inplace,
      op,
      inputs,
      [&] {
        auto node = make_node<NodeT>();
        save(*node);
        return node;
      },
      write);
}

// A 0-dim tensor as one of one element (torch's gather and scatter treat
// it so); other tensors as they are. No graph.
Tensor at_least_1d(const Tensor& t) {
  return t.dim() == 0 ? kernels::view_as_strided(t, {1}, {1}, 0) : t;
}

int64_t nonempty_dim(const Tensor& t) {
  return t.dim() == 0 ? 1 : t.dim();
}

int64_t nonempty_size(const Tensor& t, int64_t d) {
  return t.dim() == 0 ? 1 : t.sizes()[d];
}

std::string sizes_str(const Tensor& t) {
  return shape_str(t.dim() == 0 ? Shape{1} : t.sizes());
}

bool is_index_dtype(const Tensor& index) {
  return index.dtype() == ScalarType::Int64 ||
         index.dtype() == ScalarType::Int32;
}

// torch's check that every value of `index` addresses dim d of a tensor of
// `size` elements along it (the kernels of gather, scatter and index_add).
void check_in_range(const Tensor& index, int64_t d, int64_t size) {
  std::optional<int64_t> bad = kernels::first_outside(index, 0, size);
  NPGRAD_CHECK(
      !bad,
      "index ",
      bad.value_or(0),
      " is out of bounds for dimension ",
      d,
      " with size ",
      size);
}

// gather's and scatter's checks (ATen's scatter_gather_dtype_check and
// gather_shape_check / scatter_shape_check); src is undefined for gather
// and for scatter with a number. Then, unless `values` is false (the caller
// checks them later with check_in_range), index's values in range.
void check_scatter_gather(
    const char* fn,
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor* src,
    bool is_gather,
    bool values = true) {
  if (index.numel() == 0) {
    return;
  }
  NPGRAD_CHECK(
      is_index_dtype(index), fn, "(): Expected dtype int32/int64 for index");
  if (src != nullptr) {
    NPGRAD_CHECK(
        self.dtype() == src->dtype(),
        fn,
        "(): Expected self.dtype to be equal to src.dtype");
  }
  int64_t rank = nonempty_dim(self);
  NPGRAD_CHECK(
      nonempty_dim(index) == rank,
      "Index tensor must have the same number of dimensions as ",
      is_gather ? "input" : "self",
      " tensor");
  if (src != nullptr) {
    NPGRAD_CHECK(
        nonempty_dim(index) == nonempty_dim(*src),
        "Index tensor must have the same number of dimensions as src tensor");
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = nonempty_size(index, d);
    if (is_gather) {
      NPGRAD_CHECK(
          d == dim || n <= nonempty_size(self, d),
          "Size does not match at dimension ",
          d,
          " expected index ",
          sizes_str(index),
          " to be no larger than self ",
          sizes_str(self),
          " apart from dimension ",
          dim);
      continue;
    }
    bool ok = (d == dim || n <= nonempty_size(self, d)) &&
              (src == nullptr || n <= nonempty_size(*src, d));
    if (src != nullptr) {
      NPGRAD_CHECK(
          ok,
          "Expected index ",
          sizes_str(index),
          " to be no larger than self ",
          sizes_str(self),
          " apart from dimension ",
          dim,
          " and to be no larger size than src ",
          sizes_str(*src));
    } else {
      NPGRAD_CHECK(
          ok,
          "Expected index ",
          sizes_str(index),
          " to be no larger than self ",
          sizes_str(self),
          " apart from dimension ",
          dim);
    }
  }
  if (values) {
    check_in_range(index, dim, nonempty_size(self, dim));
  }
}

// index_add's and index_copy's index: a vector or a scalar.
void check_index_vector(const char* fn, const Tensor& index) {
  NPGRAD_CHECK_INDEX(
      index.dim() <= 1,
      fn,
      "(): Index is supposed to be a vector, but got dim: ",
      index.dim(),
      " with type: ",
      scalar_type_name(index.dtype()),
      " and size: ",
      shape_str(index.sizes()));
}

// The advanced indices selecting `index` along dim of a tensor of rank
// `rank` (full slices elsewhere).
std::vector<Tensor> at_dim(int64_t rank, int64_t dim, const Tensor& index) {
  std::vector<Tensor> indices(static_cast<std::size_t>(rank));
  indices[static_cast<std::size_t>(dim)] = at_least_1d(index);
  return indices;
}

// The values a scatter writes for `idx` (index as at least 1-d): src's
// leading block of idx's shape, or the wrapped number itself.
Tensor scattered_values(const Tensor& idx, const Tensor& src) {
  if (src.impl()->is_wrapped_number) {
    return src;
  }
  Tensor s = at_least_1d(src);
  return kernels::view_as_strided(s, idx.sizes(), s.strides(), 0);
}

// The scatters' write: the scattered values written at the addressed places
// (no `op`), or each combined into its place by `op` in index order
// (scatter_add, scatter_reduce, scatter(reduce=)).
void scatter_kernel(
    const Tensor& out,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    std::optional<kernels::Binary> op = std::nullopt) {
  if (index.numel() == 0) {
    return;
  }
  Tensor idx = at_least_1d(index);
  std::vector<Tensor> places = kernels::along_dim_indices(idx, dim);
  Tensor values = scattered_values(idx, src);
  if (op) {
    kernels::index_reduce_at(at_least_1d(out), places, values, *op);
  } else {
    kernels::index_put(at_least_1d(out), places, values, false);
  }
}

}  // namespace

Tensor gather(
    const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  check_scatter_gather("gather", self, d, index, nullptr, true);
  Tensor out;
  if (index.numel() == 0) {
    out = kernels::empty(index.sizes(), self.dtype());
  } else {
    Tensor idx = at_least_1d(index);
    out = kernels::index(at_least_1d(self), kernels::along_dim_indices(idx, d));
    if (index.dim() == 0) {
      out = kernels::view_as_strided(out, {}, {}, 0);
    }
  }
  if (auto node = record<GatherBackward0>(out, {&self})) {
    node->dim = dim;
    node->index_ = SavedVariable(index, false);
    node->self_ = SavedVariable(self, false);
    node->sparse_grad = sparse_grad;
  }
  return out;
}

Tensor scatter(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    bool inplace) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  auto write = [&](const Tensor& out) { scatter_kernel(out, d, index, src); };
  auto save = [&](DimIndexNode& n) {
    n.dim = dim;
    n.index_ = SavedVariable(index, false);
  };
  if (src.impl()->is_wrapped_number) {
    check_scatter_gather("scatter", self, d, index, nullptr, false);
    return write_into<ScatterBackward1>(
        self, inplace, "scatter_", {&self}, save, write);
  }
  check_scatter_gather("scatter", self, d, index, &src, false);
  return write_into<ScatterBackward0>(
      self, inplace, "scatter_", {&self, &src}, save, write);
}

Tensor scatter(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    const std::string& reduce,
    bool inplace) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  bool is_value = src.impl()->is_wrapped_number;
  check_scatter_gather(
      "scatter", self, d, index, is_value ? nullptr : &src, false, false);
  // torch checks the name after the dtypes and shapes, before the values.
  NPGRAD_CHECK(
      reduce == "add" || reduce == "multiply",
      "reduce argument must be either add or multiply.");
  if (index.numel() > 0) {
    check_in_range(index, d, nonempty_size(self, d));
  }
  kernels::Binary combine =
      reduce == "add" ? kernels::Binary::Add : kernels::Binary::Mul;
  // torch has no derivative for this overload: its NotImplemented node,
  // named after the in-place or out-of-place op, raises at backward.
  auto make = [&] {
    return make_node<NotImplemented>(
        inplace ? "aten::scatter_" : "aten::scatter");
  };
  auto write = [&](const Tensor& out) {
    scatter_kernel(out, d, index, src, combine);
  };
  if (is_value) {
    return write_into_node(self, inplace, "scatter_", {&self}, make, write);
  }
  return write_into_node(self, inplace, "scatter_", {&self, &src}, make, write);
}

namespace {
// The value scatter_reduce starts from where include_self is false: the
// reduction's identity (amax and amin instead start from one of the
// scattered values, which the reduction then leaves as it is).
void reset_scattered(
    const Tensor& out,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    const std::string& reduce) {
  if (reduce == "amax" || reduce == "amin") {
    scatter_kernel(out, dim, index, src);
  } else {
    scatter_kernel(
        out, dim, index, wrapped_scalar(reduce == "prod" ? 1 : 0, out.dtype()));
  }
}

// mean's division by the count of values reduced at each place (self's
// included when include_self; a place nothing reached keeps its value);
// integer results are floored, as torch's.
void divide_by_count(
    const Tensor& out, int64_t dim, const Tensor& index, bool include_self) {
  Tensor count = kernels::full(out.sizes(), include_self ? 1 : 0, out.dtype());
  scatter_kernel(
      count, dim, index, wrapped_scalar(1, out.dtype()), kernels::Binary::Add);
  kernels::binary_out(
      kernels::Binary::Maximum, count, wrapped_scalar(1, out.dtype()), count);
  if (is_floating(out.dtype())) {
    kernels::binary_out(kernels::Binary::Div, out, count, out);
    return;
  }
  Tensor rem =
      kernels::binary(kernels::Binary::Remainder, out, count, out.dtype());
  Tensor exact = kernels::binary(kernels::Binary::Sub, out, rem, out.dtype());
  Tensor q =
      kernels::binary(kernels::Binary::Div, exact, count, ScalarType::Float64);
  kernels::copy_into(out, kernels::cast(q, out.dtype()));
}
}  // namespace

Tensor scatter_reduce(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    const std::string& reduce,
    bool include_self,
    bool inplace) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  kernels::Binary op = kernels::Binary::Add;
  if (reduce == "prod") {
    op = kernels::Binary::Mul;
  } else if (reduce == "amax") {
    op = kernels::Binary::Maximum;
  } else if (reduce == "amin") {
    op = kernels::Binary::Minimum;
  } else {
    NPGRAD_CHECK(
        reduce == "sum" || reduce == "mean",
        "reduce argument must be either sum, prod, mean, amax or amin, got ",
        reduce);
  }
  check_scatter_gather("scatter", self, d, index, &src, false);
  bool rg = compute_requires_grad({&self, &src});
  if (inplace) {
    check_inplace(self, rg);
  }
  std::shared_ptr<ScatterReduceBackward0> node;
  if (rg) {
    node = make_node<ScatterReduceBackward0>();
    node->set_next_edges(collect_next_edges({&self, &src}));
    node->dim = dim;
    node->index_ = SavedVariable(index, false);
    node->include_self = include_self;
    node->reduce = reduce;
    node->self_ = SavedVariable(self, false);
    node->src_ = SavedVariable(src, false);
  }
  Tensor out = inplace ? self : kernels::cast(self, self.dtype());
  if (index.numel() > 0) {
    if (!include_self) {
      reset_scattered(out, d, index, src, reduce);
    }
    scatter_kernel(out, d, index, src, op);
    if (reduce == "mean") {
      divide_by_count(out, d, index, include_self);
    }
  }
  if (inplace) {
    finish_inplace(self, node, "scatter_reduce_");
  } else if (node) {
    set_history(out, node);
  }
  if (node) {
    node->result_ = SavedVariable(out, true);
  }
  return out;
}

Tensor scatter_add(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    bool inplace) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  check_scatter_gather("scatter", self, d, index, &src, false);
  return write_into<ScatterAddBackward0>(
      self,
      inplace,
      "scatter_add_",
      {&self, &src},
      [&](DimIndexNode& n) {
        n.dim = dim;
        // As torch's: the index only for src's gradient.
        if (compute_requires_grad({&src})) {
          n.index_ = SavedVariable(index, false);
        }
      },
      [&](const Tensor& out) {
        scatter_kernel(out, d, index, src, kernels::Binary::Add);
      });
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  NPGRAD_CHECK_INDEX(
      index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  NPGRAD_CHECK(
      is_index_dtype(index),
      "index_select(): Expected dtype int32 or int64 for index");
  NPGRAD_CHECK_INDEX(
      !kernels::first_outside(index, 0, nonempty_size(self, d)),
      "index out of range in self");
  Tensor out;
  if (self.dim() == 0) {
    out = kernels::cast(self, self.dtype());
  } else {
    out = kernels::index(self, at_dim(self.dim(), d, index));
  }
  if (auto node = record<IndexSelectBackward0>(out, {&self})) {
    node->dim = dim;
    node->index_ = SavedVariable(index, false);
    node->self_sizes = self.sizes();
  }
  return out;
}

namespace {

// index_add's checks (ATen's index_func_meta_impl).
void check_index_add(
    const Tensor& self, int64_t d, const Tensor& index, const Tensor& source) {
  check_index_vector("index_add_", index);
  NPGRAD_CHECK(
      is_index_dtype(index),
      "index_add_(): Expected dtype int32/int64 for index but got: ",
      scalar_type_name(index.dtype()));
  NPGRAD_CHECK(
      self.dtype() == source.dtype(),
      "index_add_(): self (",
      scalar_type_name(self.dtype()),
      ") and source (",
      scalar_type_name(source.dtype()),
      ") must have the same scalar type");
  NPGRAD_CHECK(
      d == 0 || d < source.dim(),
      "index_add_(): Indexing dim ",
      d,
      " is out of bounds of the source tensor with dim ",
      source.dim());
  int64_t along = source.dim() == 0 ? 1 : source.sizes()[d];
  NPGRAD_CHECK(
      index.numel() == along,
      "index_add_(): Number of indices (",
      index.numel(),
      ") should be equal to source.size(dim): (",
      along,
      "), for dim: ",
      d);
  bool same = nonempty_dim(self) == nonempty_dim(source);
  for (int64_t k = 0; same && k < self.dim(); ++k) {
    same = k == d || self.sizes()[k] == source.sizes()[k];
  }
  NPGRAD_CHECK(
      same,
      "source tensor shape must match self tensor shape, excluding the "
      "specified dimension. Got self.shape = ",
      shape_str(self.sizes()),
      " source.shape = ",
      shape_str(source.sizes()));
  check_in_range(index, d, nonempty_size(self, d));
}

// The slice shape index_copy's message shows: the sizes but dim's, joined
// by spaces.
std::string slice_shape(const Tensor& t, int64_t dim) {
  std::string s;
  for (int64_t k = 0; k < t.dim(); ++k) {
    if (k != dim) {
      s += (s.empty() ? "" : " ") + std::to_string(t.sizes()[k]);
    }
  }
  return s;
}

// index_copy's checks (ATen's index_copy_meta).
void check_index_copy(
    const Tensor& self, int64_t d, const Tensor& index, const Tensor& source) {
  NPGRAD_CHECK_INDEX(
      index.dim() < 2,
      "index_copy_(): Index should have dimension 1 or 0 (got ",
      index.dim(),
      ")");
  NPGRAD_CHECK(
      index.dtype() == ScalarType::Int64,
      "index_copy_(): Expected a long tensor for index, but got ",
      scalar_type_name(index.dtype()));
  NPGRAD_CHECK(
      self.dtype() == source.dtype(),
      "index_copy_(): self and source expected to have the same dtype, but "
      "got (self) ",
      scalar_type_name(self.dtype()),
      " and (source) ",
      scalar_type_name(source.dtype()));
  NPGRAD_CHECK_INDEX(
      self.dim() == source.dim() || self.dim() == 0 || source.dim() == 0,
      "index_copy_(): When source and destination are not scalars, their "
      "dimensionality must match. Source dimensionality (",
      source.dim(),
      "), destination dimensionality (",
      self.dim(),
      ")");
  int64_t along = source.dim() == 0 ? 1 : source.sizes()[d];
  NPGRAD_CHECK_INDEX(
      index.numel() == along,
      "index_copy_(): Number of indices (",
      index.numel(),
      ") should be equal to source.size(dim) (",
      along,
      ")");
  bool same = true;
  for (int64_t k = 0; k < self.dim() && source.dim() > 0; ++k) {
    same = same && (k == d || self.sizes()[k] == source.sizes()[k]);
  }
  NPGRAD_CHECK(
      same,
      "index_copy_(): Source/destination tensor must have same slice shapes. "
      "Destination slice shape: ",
      slice_shape(self, d),
      " at dimension ",
      d,
      " and source slice shape: ",
      slice_shape(source, 0),
      " at dimension 0.");
  std::optional<int64_t> bad =
      kernels::first_outside(index, 0, nonempty_size(self, d));
  NPGRAD_CHECK_INDEX(
      !bad,
      "index_copy_(): index ",
      bad.value_or(0),
      " is out of bounds for dimension ",
      d,
      " with size ",
      nonempty_size(self, d));
}

// The write of index_add and index_copy: source at the index along dim.
// out[..., index[j], ...] += source[..., j, ...] as a loop, for contiguous
// float32/float64 data and an in-range int64 index: NumPy's add.at (a
// Python-level call, microseconds) adds to each element in the order of j,
// and so does this, one IEEE add at a time: the same bits.
bool index_add_by_loop(
    const Tensor& out, int64_t d, const Tensor& index, const Tensor& source) {
  ScalarType dt = out.dtype();
  if ((dt != ScalarType::Float32 && dt != ScalarType::Float64) ||
      source.dtype() != dt || index.dtype() != ScalarType::Int64 ||
      out.dim() == 0 || index.dim() != 1 || source.dim() != out.dim() ||
      !out.is_contiguous() || !source.is_contiguous() ||
      !index.is_contiguous() || source.sizes()[d] != index.numel()) {
    return false;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < out.dim(); ++k) {
    if (k != d && source.sizes()[k] != out.sizes()[k]) {
      return false;
    }
    if (k < d) {
      outer *= out.sizes()[k];
    } else if (k > d) {
      inner *= out.sizes()[k];
    }
  }
  std::size_t size = element_size(dt);
  const char* o_begin = static_cast<const char*>(out.data_ptr());
  const char* s_begin = static_cast<const char*>(source.data_ptr());
  if (o_begin < s_begin + static_cast<std::size_t>(source.numel()) * size &&
      s_begin < o_begin + static_cast<std::size_t>(out.numel()) * size) {
    return false;  // overlapping: NumPy's own handling
  }
  int64_t n = out.sizes()[d], k = index.numel();
  const auto* idx = static_cast<const int64_t*>(index.data_ptr());
  for (int64_t j = 0; j < k; ++j) {
    if (idx[j] < 0 || idx[j] >= n) {
      return false;
    }
  }
  kernels::dispatch_floating(dt, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* o = static_cast<T*>(out.data_ptr());
    const T* src = static_cast<const T*>(source.data_ptr());
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t j = 0; j < k; ++j) {
        T* dst = o + (a * n + idx[j]) * inner;
        const T* from = src + (a * k + j) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          dst[i] = dst[i] + from[i];
        }
      }
    }
  });
  return true;
}

void index_kernel(
    const Tensor& out,
    int64_t d,
    const Tensor& index,
    const Tensor& source,
    bool accumulate) {
  if (accumulate && index_add_by_loop(out, d, index, source)) {
    return;
  }
  Tensor o = at_least_1d(out);
  Tensor s = at_least_1d(source);
  kernels::index_put(o, at_dim(o.dim(), d, index), s, accumulate);
}

}  // namespace

Tensor index_add(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    double alpha,
    bool inplace) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  check_index_add(self, d, index, source);
  return write_into<IndexAddBackward0>(
      self,
      inplace,
      "index_add_",
      {&self, &source},
      [&](IndexAddBackward0& n) {
        n.dim = dim;
        n.alpha = alpha;
        n.source_dim = source.dim();
        if (compute_requires_grad({&source})) {
          n.index_ = SavedVariable(index, false);
          n.source_ = SavedVariable(source, false);
        }
      },
      [&](const Tensor& out) {
        Tensor scaled = source;
        if (alpha != 1) {
          AutoGradMode no_grad(false);
          scaled = to_dtype(
              mul(source, wrapped_scalar(alpha, source.dtype())),
              source.dtype());
        }
        index_kernel(out, d, index, scaled, true);
      });
}

Tensor index_copy(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    bool inplace) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  check_index_copy(self, d, index, source);
  return write_into<IndexCopyBackward0>(
      self,
      inplace,
      "index_copy_",
      {&self, &source},
      [&](IndexCopyBackward0& n) {
        n.dim = dim;
        n.index_ = SavedVariable(index, false);
        n.source_dim = source.dim();
        if (compute_requires_grad({&source})) {
          n.source_ = SavedVariable(source, false);
        }
      },
      [&](const Tensor& out) { index_kernel(out, d, index, source, false); });
}

namespace {
void check_bool_mask(const Tensor& mask, const char* message) {
  NPGRAD_CHECK(mask.dtype() == ScalarType::Bool, message);
}
}  // namespace

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  check_bool_mask(mask, "masked_select: expected BoolTensor for mask");
  Shape shape = infer_size(mask.sizes(), self.sizes());
  Tensor out;
  {
    AutoGradMode no_grad(false);
    out = kernels::index(
        at_least_1d(expand(self, shape)), {at_least_1d(expand(mask, shape))});
  }
  if (auto node = record<MaskedSelectBackward0>(out, {&self})) {
    node->mask_ = SavedVariable(mask, false);
    node->self_ = SavedVariable(self, false);
  }
  return out;
}

Tensor masked_scatter(
    const Tensor& self,
    const Tensor& mask,
    const Tensor& source,
    bool inplace) {
  std::string message = detail::str_cat(
      "masked_scatter_ only supports boolean masks, but got mask with dtype ",
      scalar_type_name(mask.dtype()));
  check_bool_mask(mask, message.c_str());
  NPGRAD_CHECK(
      self.dtype() == source.dtype(),
      "masked_scatter: expected self and source to have same dtypes but got",
      scalar_type_name(self.dtype()),
      " and ",
      scalar_type_name(source.dtype()));
  Tensor target = self;
  Tensor m;
  {
    AutoGradMode no_grad(false);
    if (!inplace) {
      // torch's expand_outplace(mask, self): both broadcast.
      target = expand(self, infer_size(mask.sizes(), self.sizes()));
    }
    m = expand(mask, target.sizes());
  }
  Tensor count = kernels::sum(
      kernels::cast(m, ScalarType::Int64), {}, false, ScalarType::Int64);
  int64_t n = static_cast<int64_t>(kernels::item(count));
  NPGRAD_CHECK(
      n <= source.numel(),
      "Number of elements of source < number of ones in mask");
  return write_into<MaskedScatterBackward0>(
      target,
      inplace,
      "masked_scatter_",
      {&self, &source},
      [&](MaskedScatterBackward0& node) {
        node.mask_ = SavedVariable(mask, false);
        node.source_sizes = source.sizes();
      },
      [&](const Tensor& out) {
        if (n == 0) {
          return;
        }
        Tensor flat = at_least_1d(kernels::cast(source, source.dtype()));
        Tensor values = kernels::view_as_strided(
            kernels::view_as_strided(flat, {source.numel()}, {1}, 0),
            {n},
            {1},
            0);
        kernels::index_put(at_least_1d(out), {at_least_1d(m)}, values, false);
      });
}

Tensor take_along_dim(
    const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  if (!dim) {
    return gather(view(self, {-1}), 0, view(indices, {-1}), false);
  }
  NPGRAD_CHECK(
      self.dim() == indices.dim(),
      "torch.take_along_dim(): input and indices should have the same number "
      "of dimensions, but got ",
      self.dim(),
      " dimensions for input, and ",
      indices.dim(),
      " dimensions for indices");
  NPGRAD_CHECK(
      indices.dtype() == ScalarType::Int64,
      "torch.take_along_dim(): dtype of indices should be Long but got ",
      scalar_type_name(indices.dtype()));
  int64_t d = maybe_wrap_dim(*dim, self.dim());
  Shape self_sizes = self.sizes();
  Shape index_sizes = indices.sizes();
  if (self.dim() > 0) {
    self_sizes[static_cast<std::size_t>(d)] = indices.sizes()[d];
    index_sizes[static_cast<std::size_t>(d)] = self.sizes()[d];
  }
  Tensor idx = expand(indices, infer_size(self_sizes, indices.sizes()));
  Tensor src = expand(self, infer_size(index_sizes, self.sizes()));
  return gather(src, d, idx, false);
}

Tensor nonzero(const Tensor& self) {
  return kernels::nonzero(self);
}

std::vector<Tensor> nonzero_tuple(const Tensor& self) {
  Tensor positions = kernels::nonzero(at_least_1d(self));
  std::vector<Tensor> out;
  for (int64_t d = 0; d < positions.sizes()[1]; ++d) {
    out.push_back(
        kernels::view_as_strided(
            positions,
            {positions.sizes()[0]},
            {positions.strides()[0]},
            d * positions.strides()[1]));
  }
  return out;
}

namespace {
Tensor put(
    const Tensor& self,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate,
    bool inplace) {
  check_index_tensors(indices);
  check_index_bounds(self, indices);
  return write_into<IndexPutBackward0>(
      self,
      inplace,
      "index_put_",
      {&self, &values},
      [&](IndexPutBackward0& n) {
        n.accumulate = accumulate;
        n.indices_ = SavedVariableList(indices, false);
      },
      [&](const Tensor& out) {
        kernels::index_put(out, indices, values, accumulate);
      });
}
}  // namespace

void index_put_(
    const Tensor& self,
    const std::vector<Tensor>& indices,
    const Tensor& value) {
  put(self, indices, value, false, true);
}

Tensor index_put(
    const Tensor& self,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate,
    bool inplace) {
  NPGRAD_CHECK(
      values.impl()->is_wrapped_number || self.dtype() == values.dtype(),
      "Index put requires the source and destination dtypes match, got ",
      scalar_type_name(self.dtype()),
      " for the destination and ",
      scalar_type_name(values.dtype()),
      " for the source.");
  return put(self, indices, values, accumulate, inplace);
}

}  // namespace npgrad::ops
