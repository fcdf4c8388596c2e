// Scans (cumsum, cumprod), sorting and selection along a dim (sort, topk,
// median, kthvalue) and vector norms.
#include <functional>
#include <limits>
#include <tuple>
#include <type_traits>

#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/nodes/reduction_nodes.h"
#include "npgrad/autograd/nodes/sorting_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

Tensor scan_values(const Tensor& a, int64_t d, ScalarType dtype, bool is_prod) {
  if (a.dim() == 0) {
    return kernels::cast(a, dtype);
  }
  return is_prod ? kernels::cumprod(a, d, dtype) : kernels::cumsum(a, d, dtype);
}

// The node of cumsum / cumprod of self (its value before an in-place write).
std::shared_ptr<Node> scan_node(
    const Tensor& self, int64_t dim, bool is_prod, SavedVariable original) {
  if (!is_prod) {
    auto node = make_node<CumsumBackward0>();
    node->set_next_edges(collect_next_edges({&self}));
    node->dim = dim;
    node->self_dtype = self.dtype();
    return node;
  }
  auto node = make_node<CumprodBackward0>();
  node->set_next_edges(collect_next_edges({&self}));
  node->dim = dim;
  node->self_ = std::move(original);
  return node;
}

Tensor scan(
    const Tensor& a,
    int64_t dim,
    std::optional<ScalarType> dtype,
    bool is_prod) {
  int64_t d = maybe_wrap_dim(dim, a.dim());
  Tensor out = scan_values(a, d, sum_dtype(a, dtype), is_prod);
  if (compute_requires_grad({&a})) {
    auto node = scan_node(a, dim, is_prod, SavedVariable(a, false));
    set_history(out, node);
    if (is_prod) {
      static_cast<CumprodBackward0&>(*node).result_ = SavedVariable(out, true);
    }
  }
  return out;
}

void scan_(
    const Tensor& self,
    int64_t dim,
    std::optional<ScalarType> dtype,
    bool is_prod) {
  int64_t d = maybe_wrap_dim(dim, self.dim());
  ScalarType dt = sum_dtype(self, dtype);
  NPGRAD_CHECK(
      dt == self.dtype(),
      "Bad in-place call: input tensor dtype ",
      type_meta_name(self.dtype()),
      " and output tensor dtype ",
      type_meta_name(dt),
      " should match");
  bool rg = compute_requires_grad({&self});
  check_inplace(self, rg);
  std::shared_ptr<Node> node;
  if (rg) {
    node = scan_node(
        self, dim, is_prod, is_prod ? save_original(self) : SavedVariable());
  }
  kernels::copy_into(self, scan_values(self, d, dt, is_prod));
  finish_inplace(self, node, is_prod ? "cumprod_" : "cumsum_");
  if (node && is_prod) {
    static_cast<CumprodBackward0&>(*node).result_ =
        SavedVariable(self, true, self.is_view());
  }
}

// t without its dim d (of size 1): a view of the same data.
Tensor drop_dim(const Tensor& t, int64_t d) {
  Shape sizes = t.sizes();
  Shape strides = t.strides();
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return kernels::view_as_strided(t, sizes, strides, 0);
}

// The elements of the ascending sort of a along d at `positions` (int64,
// the shape of a with dim d of size 1 or k): (values, indices).
std::pair<Tensor, Tensor> sorted_at(
    const Tensor& a, int64_t d, const Tensor& positions, bool descending) {
  auto [values, indices] = kernels::sort(a, d, descending);
  return {
      kernels::take_along(values, positions, d),
      kernels::take_along(indices, positions, d)};
}

// The shape of a reduced over d with keepdim.
Shape kept_shape(const Tensor& a, int64_t d) {
  Shape shape = a.sizes();
  shape[d] = 1;
  return shape;
}

template <typename NodeT>
void record_selection(
    const Tensor& values,
    const Tensor& a,
    int64_t dim,
    const Tensor& indices,
    std::optional<bool> keepdim) {
  if (!compute_requires_grad({&a})) {
    return;
  }
  auto node = make_node<NodeT>();
  node->set_next_edges(collect_next_edges({&a}));
  set_history(values, node);
  node->dim = dim;
  node->self_sizes = a.sizes();
  node->indices_ = SavedVariable(indices, false);
  if constexpr (std::is_base_of_v<SelectAlongDimNode, NodeT>) {
    node->keepdim = *keepdim;
  }
}

// A value selected along a dim (median, kthvalue): the keepdim-shaped
// results, squeezed unless keepdim; 0-dim inputs select themselves.
template <typename NodeT>
std::pair<Tensor, Tensor> select_along(
    const Tensor& a,
    int64_t dim,
    bool keepdim,
    const std::function<Tensor(int64_t d)>& positions) {
  int64_t d = maybe_wrap_dim(dim, a.dim());
  Tensor values, indices;
  if (a.dim() == 0) {
    values = kernels::cast(a, a.dtype());
    indices = kernels::full({}, 0, ScalarType::Int64);
  } else {
    std::tie(values, indices) = sorted_at(a, d, positions(d), false);
    if (!keepdim) {
      values = drop_dim(values, d);
      indices = drop_dim(indices, d);
    }
  }
  record_selection<NodeT>(values, a, dim, indices, keepdim);
  return {values, indices};
}

void check_not_bool(const Tensor& a, const char* kernel) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      a.dtype() != ScalarType::Bool,
      "\"",
      kernel,
      "\" not implemented for 'Bool'");
}

void check_nonempty_dim(const Tensor& a, int64_t d, const char* fn) {
  NPGRAD_CHECK_INDEX(
      a.dim() == 0 || a.sizes()[d] > 0,
      fn,
      "(): Expected reduction dim ",
      d,
      " to have non-zero size.");
}

// Positions (keepdim shape) of the lower median along d, or of the first NaN
// where a slice has one (the median is then NaN, as torch's).
Tensor median_positions(const Tensor& a, int64_t d) {
  int64_t n = a.sizes()[d];
  Tensor lower =
      kernels::full(kept_shape(a, d), (n - 1) / 2, ScalarType::Int64);
  if (!kernels::has_nan(a)) {
    return lower;
  }
  Tensor nans = kernels::sum(isnan(a), {d}, true, ScalarType::Int64);
  Tensor first_nan = kernels::binary(
      kernels::Binary::Sub,
      wrapped_scalar(static_cast<double>(n), ScalarType::Int64),
      nans,
      ScalarType::Int64);
  Tensor has_nan = kernels::binary(
      kernels::Binary::Gt,
      nans,
      wrapped_scalar(0, ScalarType::Int64),
      ScalarType::Int64);
  return kernels::where(has_nan, first_nan, lower, ScalarType::Int64);
}

}  // namespace

Tensor cumsum(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  return scan(a, dim, dtype, false);
}

Tensor cumprod(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  return scan(a, dim, dtype, true);
}

void cumsum_(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  scan_(self, dim, dtype, false);
}

void cumprod_(
    const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  scan_(self, dim, dtype, true);
}

std::pair<Tensor, Tensor> sort(
    const Tensor& a, int64_t dim, bool descending, std::optional<bool> stable) {
  int64_t d = maybe_wrap_dim(dim, a.dim());
  Tensor values, indices;
  if (a.dim() == 0) {
    values = kernels::cast(a, a.dtype());
    indices = kernels::full({}, 0, ScalarType::Int64);
  } else {
    std::tie(values, indices) = kernels::sort(a, d, descending);
  }
  if (stable) {
    record_selection<SortBackward1>(values, a, dim, indices, std::nullopt);
  } else {
    record_selection<SortBackward0>(values, a, dim, indices, std::nullopt);
  }
  return {values, indices};
}

Tensor argsort(const Tensor& a, int64_t dim, bool descending, bool /*stable*/) {
  int64_t d = maybe_wrap_dim(dim, a.dim());
  if (a.dim() == 0) {
    return kernels::full({}, 0, ScalarType::Int64);
  }
  return kernels::sort(a, d, descending).second;
}

std::pair<Tensor, Tensor> topk(
    const Tensor& a, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  int64_t d = maybe_wrap_dim(dim, a.dim());
  NPGRAD_CHECK(
      k >= 0 && k <= (a.dim() == 0 ? 1 : a.sizes()[d]),
      "selected index k out of range");
  NPGRAD_CHECK(
      a.dtype() != ScalarType::Bool,
      "topk does not support bool dtypes on CPU");
  Tensor values, indices;
  if (a.dim() == 0) {
    values = kernels::cast(a, a.dtype());
    indices = kernels::full({}, 0, ScalarType::Int64);
  } else {
    // Always in sorted order: torch leaves the order unspecified when
    // sorted=False.
    std::tie(values, indices) =
        sorted_at(a, d, arange_along(k, a.dim(), d), largest);
  }
  record_selection<TopkBackward0>(values, a, dim, indices, std::nullopt);
  return {values, indices};
}

Tensor median(const Tensor& a) {
  check_not_bool(a, "median_cpu");
  Tensor out;
  if (a.numel() == 0) {
    out =
        kernels::full({}, std::numeric_limits<double>::quiet_NaN(), a.dtype());
  } else {
    Tensor flat = kernels::cast(a, a.dtype());  // a contiguous copy
    flat = kernels::view_as_strided(flat, {a.numel()}, {1}, 0);
    out =
        drop_dim(sorted_at(flat, 0, median_positions(flat, 0), false).first, 0);
  }
  if (compute_requires_grad({&a})) {
    auto node = make_node<MedianBackward0>();
    node->set_next_edges(collect_next_edges({&a}));
    set_history(out, node);
    node->self_ = SavedVariable(a, false);
    node->result_ = SavedVariable(out, true);
  }
  return out;
}

std::pair<Tensor, Tensor> median(const Tensor& a, int64_t dim, bool keepdim) {
  check_not_bool(a, "median_cpu");
  check_nonempty_dim(a, maybe_wrap_dim(dim, a.dim()), "median");
  return select_along<MedianBackward1>(
      a, dim, keepdim, [&](int64_t d) { return median_positions(a, d); });
}

std::pair<Tensor, Tensor> kthvalue(
    const Tensor& a, int64_t k, int64_t dim, bool keepdim) {
  check_not_bool(a, "kthvalue_cpu");
  int64_t wrapped = maybe_wrap_dim(dim, a.dim());
  check_nonempty_dim(a, wrapped, "kthvalue");
  NPGRAD_CHECK(
      k >= 1 && k <= (a.dim() == 0 ? 1 : a.sizes()[wrapped]),
      "kthvalue(): selected number k out of range for dimension ",
      wrapped);
  return select_along<KthvalueBackward0>(a, dim, keepdim, [&](int64_t d) {
    return kernels::full(
        kept_shape(a, d), static_cast<double>(k - 1), ScalarType::Int64);
  });
}

}  // namespace npgrad::ops
