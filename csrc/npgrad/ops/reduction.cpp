// Reductions, softmax, log_softmax.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/reduced_float_formulas.h"
#include "npgrad/autograd/nodes/reduction_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

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

double reduced_numel(const Shape& sizes, const std::vector<int64_t>& dims) {
  double n = 1;
  if (dims.empty() || sizes.empty()) {  // all dims; a 0-dim tensor's one
    for (int64_t s : sizes) {
      n *= static_cast<double>(s);
    }
    return n;
  }
  for (int64_t d : dims) {
    n *= static_cast<double>(
        sizes[maybe_wrap_dim(d, static_cast<int64_t>(sizes.size()))]);
  }
  return n;
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

namespace {
// grad - exp(r) * sum(grad, dim): the same NumPy passes as the ops, written
// into one new buffer instead of three (at cross_entropy's sizes the fresh
// buffers cost as much as the passes).
Tensor log_softmax_grad_in_place(
    const Tensor& grad, const Tensor& r, int64_t dim) {
  Tensor out;
  if (r.dim() > 0 &&
      kernels::softmax_backward_rows(
          grad, r, maybe_wrap_dim(dim, r.dim()), /*log=*/true, &out)) {
    return out;
  }
  static const kernels::UnaryUfunc& exp_ = kernels::unary_ufunc("exp");
  ScalarType dtype = r.dtype();
  out = kernels::unary(exp_, r, dtype);
  Tensor total =
      kernels::sum(grad, {maybe_wrap_dim(dim, r.dim())}, true, dtype);
  kernels::binary_out(kernels::Binary::Mul, out, total, out);
  kernels::binary_out(kernels::Binary::Sub, grad, out, out);
  return out;
}

// The value of a softmax backward op, in no-grad mode (a reduced float
// through float32, rounded once: torch's kernel, Note [Fused backward
// formulas round a reduced float once]; cast to input_dtype when that
// differs, as torch's half_to_float path), then its node.
template <typename NodeT, typename Formula>
Tensor softmax_backward_data(
    const Tensor& grad_output,
    const Tensor& output,
    int64_t dim,
    ScalarType input_dtype,
    Formula&& formula) {
  Tensor out;
  {
    AutoGradMode no_grad(false);
    out = round_reduced_float_once(grad_output, output, formula);
  }
  if (out.dtype() != input_dtype) {
    out = kernels::cast(out, input_dtype);
  }
  if (compute_requires_grad({&grad_output, &output})) {
    auto node = make_node<NodeT>();
    node->set_next_edges(collect_next_edges({&grad_output, &output}));
    set_history(out, node);
    node->dim = dim;
    node->input_dtype = input_dtype;
    node->grad_output_ = SavedVariable(grad_output, false);
    node->output_ = SavedVariable(output, false);
  }
  return out;
}
}  // namespace

Tensor _softmax_backward_data(
    const Tensor& grad_output,
    const Tensor& output,
    int64_t dim,
    ScalarType input_dtype) {
  return softmax_backward_data<SoftmaxBackwardDataBackward0>(
      grad_output,
      output,
      dim,
      input_dtype,
      [&](const Tensor& grad, const Tensor& r) {
        Tensor rows;
        if (r.dim() > 0 &&
            kernels::softmax_backward_rows(
                grad, r, maybe_wrap_dim(dim, r.dim()), /*log=*/false, &rows)) {
          return rows;
        }
        return mul(sub(grad, sum(mul(grad, r), {dim}, true)), r);
      });
}

Tensor _log_softmax_backward_data(
    const Tensor& grad_output,
    const Tensor& output,
    int64_t dim,
    ScalarType input_dtype) {
  return softmax_backward_data<LogSoftmaxBackwardDataBackward0>(
      grad_output,
      output,
      dim,
      input_dtype,
      [&](const Tensor& grad, const Tensor& r) {
        ScalarType dt = r.dtype();
        if (r.dim() > 0 && grad.dtype() == dt &&
            (dt == ScalarType::Float32 || dt == ScalarType::Float64) &&
            grad.sizes() == r.sizes()) {
          return log_softmax_grad_in_place(grad, r, dim);
        }
        return sub(grad, mul(exp(r), sum(grad, {dim}, true)));
      });
}

Tensor argmax(
    const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* fn = is_max ? "argmax" : "argmin";
  NPGRAD_CHECK(
      a.dtype() != ScalarType::Bool, fn, "(): does not support bool input");
  if (!dim) {
    NPGRAD_CHECK_INDEX(
        a.numel() > 0,
        fn,
        "(): Expected reduction dim to be specified for input.numel() == 0.");
    return kernels::argmax(a, std::nullopt, keepdim, is_max);
  }
  int64_t d = maybe_wrap_dim(*dim, a.dim());
  if (a.dim() == 0) {
    return kernels::full({}, 0, ScalarType::Int64);
  }
  NPGRAD_CHECK_INDEX(
      a.sizes()[d] > 0,
      fn,
      "(): Expected reduction dim ",
      d,
      " to have non-zero size.");
  return kernels::argmax(a, d, keepdim, is_max);
}

Tensor any(
    const Tensor& a,
    std::optional<std::vector<int64_t>> dims,
    bool keepdim,
    bool is_any) {
  // torch keeps uint8 for a uint8 input (masks were uint8 before bool).
  ScalarType out =
      a.dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  Tensor r;
  if (!dims) {
    r = kernels::any(a, {}, keepdim, is_any);
  } else if (dims->empty() && a.dim() > 0) {
    r = kernels::cast(a, ScalarType::Bool);  // torch reduces no dim
  } else {
    r = kernels::any(a, wrap_dims(std::move(*dims), a.dim()), keepdim, is_any);
  }
  return out == ScalarType::Bool ? r : kernels::cast(r, out);
}

}  // namespace npgrad::ops
