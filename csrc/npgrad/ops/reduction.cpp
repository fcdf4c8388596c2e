// Reductions, softmax, log_softmax.
#include <algorithm>

#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/reduction_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

ScalarType sum_dtype(const Tensor& a, std::optional<ScalarType> dtype) {
  if (dtype) {
    return *dtype;
  }
  return is_integral(a.dtype(), true) ? ScalarType::Int64 : a.dtype();
}

std::vector<int64_t> wrap_dims(std::vector<int64_t> dims, int64_t ndim) {
  std::vector<bool> seen(std::max<int64_t>(ndim, 1));
  for (auto& d : dims) {
    d = maybe_wrap_dim(d, ndim);
    NPGRAD_CHECK(
        !seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
  }
  if (ndim == 0) {
    dims.clear();  // reducing a 0-dim tensor over dim 0 or -1 is the identity
  }
  return dims;
}

void check_float_for_mean(const Tensor& a) {
  NPGRAD_CHECK(
      is_floating(a.dtype()),
      "mean(): could not infer output dtype. Input dtype must be either a "
      "floating point or complex dtype. Got: ",
      scalar_type_name(a.dtype()));
}

template <typename NodeT>
std::shared_ptr<NodeT> record(
    const Tensor& out, const Tensor& a, std::shared_ptr<NodeT> node) {
  node->set_next_edges(collect_next_edges({&a}));
  set_history(out, node);
  return node;
}

template <typename NodeT>
void record_max1(const Tensor& out, const Tensor& a) {
  auto node = record(out, a, make_node<NodeT>());
  node->self_ = SavedVariable(a, false);
  node->result_ = SavedVariable(out, true);
}

template <typename NodeT>
void record_max0(
    const Tensor& values,
    const Tensor& a,
    int64_t d,
    bool keepdim,
    const Tensor& indices) {
  auto node = record(values, a, make_node<NodeT>());
  node->dim = d;
  node->keepdim = keepdim;
  node->self_sizes = a.sizes();
  node->indices_ = SavedVariable(indices, false);
}

}  // namespace

Tensor sum(const Tensor& a, std::optional<ScalarType> dtype) {
  Tensor out = kernels::sum(a, {}, false, sum_dtype(a, dtype));
  if (compute_requires_grad({&a})) {
    record(out, a, make_node<SumBackward0>())->self_sizes = a.sizes();
  }
  return out;
}

Tensor sum(
    const Tensor& a,
    std::vector<int64_t> dims,
    bool keepdim,
    std::optional<ScalarType> dtype) {
  std::vector<int64_t> given = dims;  // saved as passed, as torch does
  dims = wrap_dims(std::move(dims), a.dim());
  Tensor out = dims.empty() && a.dim() == 0
                   ? kernels::cast(a, sum_dtype(a, dtype))
                   : kernels::sum(a, dims, keepdim, sum_dtype(a, dtype));
  if (compute_requires_grad({&a})) {
    auto node = record(out, a, make_node<SumBackward1>());
    node->dims = given;
    node->keepdim = keepdim;
    node->self_sizes = a.sizes();
  }
  return out;
}

namespace {
// sum / n. torch's CPU mean divides a float16 sum while it is still in float32
// and rounds once (see Note [float16 computes in float32 where torch does]).
Tensor mean_values(
    const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  bool half = a.dtype() == ScalarType::Float16;
  Tensor out =
      kernels::sum(a, dims, keepdim, half ? ScalarType::Float32 : a.dtype());
  double n = static_cast<double>(a.numel()) /
             static_cast<double>(std::max<int64_t>(out.numel(), 1));
  kernels::binary_out(
      kernels::Binary::Div, out, wrapped_scalar(n, ScalarType::Float64), out);
  return half ? kernels::cast(out, a.dtype()) : out;
}
}  // namespace

Tensor mean(const Tensor& a) {
  check_float_for_mean(a);
  Tensor out = mean_values(a, {}, false);
  if (compute_requires_grad({&a})) {
    auto node = record(out, a, make_node<MeanBackward0>());
    node->self_sizes = a.sizes();
    node->self_numel = a.numel();
  }
  return out;
}

Tensor mean(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
  check_float_for_mean(a);
  std::vector<int64_t> given = dims;  // saved as passed, as torch does
  dims = wrap_dims(std::move(dims), a.dim());
  Tensor out = mean_values(a, dims, keepdim);
  if (compute_requires_grad({&a})) {
    auto node = record(out, a, make_node<MeanBackward1>());
    node->dims = given;
    node->keepdim = keepdim;
    node->self_sizes = a.sizes();
    node->self_numel = a.numel();
  }
  return out;
}

Tensor max(const Tensor& a, bool is_max) {
  NPGRAD_CHECK(
      a.numel() > 0,
      is_max ? "max" : "min",
      "(): Expected reduction dim to be specified for input.numel() == 0. "
      "Specify the reduction dim with the 'dim' argument.");
  Tensor out = kernels::amax(a, {}, false, is_max);
  if (compute_requires_grad({&a})) {
    if (is_max) {
      record_max1<MaxBackward1>(out, a);
    } else {
      record_max1<MinBackward1>(out, a);
    }
  }
  return out;
}

std::pair<Tensor, Tensor> max(
    const Tensor& a, int64_t dim, bool keepdim, bool is_max) {
  int64_t d = maybe_wrap_dim(dim, a.dim());
  if (a.dim() == 0) {
    Tensor values = kernels::cast(a, a.dtype());
    Tensor indices = kernels::full({}, 0, ScalarType::Int64);
    if (compute_requires_grad({&a})) {
      if (is_max) {
        record_max0<MaxBackward0>(values, a, dim, keepdim, indices);
      } else {
        record_max0<MinBackward0>(values, a, dim, keepdim, indices);
      }
    }
    return {values, indices};
  }
  NPGRAD_CHECK_INDEX(
      a.sizes()[d] > 0,
      is_max ? "max" : "min",
      "(): Expected reduction dim ",
      d,
      " to have non-zero size.");
  Tensor values = kernels::amax(a, {d}, keepdim, is_max);
  Tensor indices = kernels::argmax(a, d, keepdim, is_max);
  if (compute_requires_grad({&a})) {
    if (is_max) {
      record_max0<MaxBackward0>(values, a, dim, keepdim, indices);
    } else {
      record_max0<MinBackward0>(values, a, dim, keepdim, indices);
    }
  }
  return {values, indices};
}

namespace {
template <typename NodeT>
Tensor softmax_impl(const Tensor& a, int64_t dim, bool log) {
  int64_t d = maybe_wrap_dim(dim, a.dim());
  Tensor input =
      is_floating(a.dtype()) ? a : kernels::cast(a, ScalarType::Float32);
  Tensor out = a.dim() == 0 ? kernels::full({}, log ? 0.0 : 1.0, input.dtype())
                            : kernels::softmax(input, d, log);
  if (compute_requires_grad({&a})) {
    auto node = record(out, a, make_node<NodeT>());
    node->dim = dim;
    node->result_ = SavedVariable(out, true);
  }
  return out;
}
}  // namespace

Tensor softmax(const Tensor& a, int64_t dim) {
  return softmax_impl<SoftmaxBackward0>(a, dim, false);
}

Tensor log_softmax(const Tensor& a, int64_t dim) {
  return softmax_impl<LogSoftmaxBackward0>(a, dim, true);
}

}  // namespace npgrad::ops
