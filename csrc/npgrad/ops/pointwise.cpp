// Arithmetic and unary math: kernels for the values, then the backward node.
#include <cmath>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/pointwise_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/binary_ops.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;
using kernels::Binary;

Tensor wrapped_scalar(double value, ScalarType dtype) {
  return kernels::scalar_tensor(value, dtype, true);
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState state;
  state.add(a.dtype(), a.dim(), a.impl()->is_wrapped_number);
  state.add(b.dtype(), b.dim(), b.impl()->is_wrapped_number);
  return state.result();
}

bool is_expandable_to(const Shape& shape, const Shape& desired) {
  if (shape.size() > desired.size()) {
    return false;
  }
  std::size_t lead = desired.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != desired[lead + i] && shape[i] != 1) {
      return false;
    }
  }
  return true;
}

Tensor sum_to(const Tensor& t, const Shape& shape) {
  if (t.sizes() == shape) {
    return t;
  }
  int64_t lead = t.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && t.sizes()[i] != 1)) {
      dims.push_back(i);
    }
  }
  Tensor r = dims.empty() ? t : sum(t, dims, true);
  return lead > 0 ? view(r, shape) : r;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) {
    return t;
  }
  Tensor out = kernels::cast(t, dtype);
  if (is_floating(dtype) && compute_requires_grad({&t})) {
    auto node = make_node<ToCopyBackward0>();
    node->set_next_edges(collect_next_edges({&t}));
    set_history(out, node);
  }
  return out;
}

Tensor zeros(const Shape& sizes, ScalarType dtype) {
  return kernels::full(sizes, 0, dtype);
}
Tensor zeros_like(const Tensor& t) {
  return kernels::full(t.sizes(), 0, t.dtype());
}
Tensor ones_like(const Tensor& t) {
  return kernels::full(t.sizes(), 1, t.dtype());
}

namespace {

Tensor scalar_of(double v) {
  return wrapped_scalar(v, ScalarType::Float64);
}

// Records a node taking (a) or (a, b), whose output is `out`.
template <typename NodeT>
std::shared_ptr<NodeT> record(
    const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  auto node = make_node<NodeT>();
  node->set_next_edges(collect_next_edges(inputs));
  set_history(out, node);
  return node;
}

}  // namespace

Tensor rsub(const Tensor& a, double b, double alpha) {
  return rsub(a, wrapped_scalar(b, ScalarType::Float64), alpha);
}

Tensor rsub(const Tensor& a, const Tensor& other, double alpha) {
  binary_ops::Sub::check(other, a);
  ScalarType dt = result_type(a, other);
  Tensor scaled =
      alpha == 1 ? a : kernels::binary(Binary::Mul, a, scalar_of(alpha), dt);
  Tensor out = kernels::binary(Binary::Sub, other, scaled, dt);
  if (compute_requires_grad({&a})) {
    record<RsubBackward1>(out, {&a})->alpha = alpha;
  }
  return out;
}

namespace {
// pow(Tensor, Python number): PowBackward0. The number's own kind (int or
// float) takes part in type promotion.
Tensor pow_scalar(const Tensor& a, const Tensor& e) {
  double exponent = kernels::item(e);
  ScalarType dt = result_type(a, e);
  NPGRAD_CHECK(
      is_floating(dt) || exponent >= 0,
      "Integers to negative integer powers are not allowed.");
  Tensor out = exponent == 2 ? kernels::binary(Binary::Mul, a, a, dt)
                             : kernels::binary(Binary::Pow, a, e, dt);
  if (compute_requires_grad({&a})) {
    auto node = record<PowBackward0>(out, {&a});
    node->self_ = SavedVariable(a, false);
    node->exponent = exponent;
  }
  return out;
}
}  // namespace

Tensor pow(const Tensor& a, double exponent) {
  return pow_scalar(a, wrapped_scalar(exponent, ScalarType::Float64));
}

Tensor pow(const Tensor& a, const Tensor& b) {
  if (b.impl()->is_wrapped_number) {
    return pow_scalar(a, b);
  }
  Tensor out = kernels::binary(Binary::Pow, a, b, result_type(a, b));
  if (compute_requires_grad({&a, &b})) {
    auto node = record<PowBackward1>(out, {&a, &b});
    node->self_ = SavedVariable(a, false);
    node->exponent_ = SavedVariable(b, false);
    node->result_ = SavedVariable(out, true);
  }
  return out;
}

Tensor pow(double base, const Tensor& exponent) {
  Tensor b = wrapped_scalar(base, ScalarType::Float64);
  Tensor out =
      kernels::binary(Binary::Pow, b, exponent, result_type(b, exponent));
  if (compute_requires_grad({&exponent})) {
    auto node = record<PowBackward2>(out, {&exponent});
    node->exponent_ = SavedVariable(exponent, false);
    node->result_ = SavedVariable(out, true);
    node->self = base;
  }
  return out;
}

Tensor square(const Tensor& a) {
  return pow(a, wrapped_scalar(2, ScalarType::Int64));
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(
      cond.dtype() == ScalarType::Bool,
      "where expected condition to be a boolean tensor, but got a tensor with "
      "dtype ",
      scalar_type_name(cond.dtype()));
  ScalarType dt = result_type(a, b);
  Tensor out = kernels::where(cond, a, b, dt);
  if (compute_requires_grad({&a, &b})) {
    record<WhereBackward0>(out, {&a, &b})->condition_ =
        SavedVariable(cond, false);
  }
  return out;
}

void check_masked_fill(const Tensor& mask, const Tensor& value) {
  NPGRAD_CHECK(
      mask.dtype() == ScalarType::Bool,
      "masked_fill_ only supports boolean masks, but got mask with dtype ",
      type_meta_name(mask.dtype()));
  NPGRAD_CHECK(
      value.dim() == 0,
      "masked_fill_ only supports a 0-dimensional value tensor, but got "
      "tensor with ",
      value.dim(),
      " dimension(s).");
}

Tensor masked_fill(
    const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill(mask, value);
  Tensor out = kernels::where(mask, value, self, self.dtype());
  if (!value.impl()->is_wrapped_number) {
    if (compute_requires_grad({&self, &value})) {
      record<MaskedFillBackward1>(out, {&self, &value})->mask_ =
          SavedVariable(mask, false);
    }
  } else if (compute_requires_grad({&self})) {
    record<MaskedFillBackward0>(out, {&self})->mask_ =
        SavedVariable(mask, false);
  }
  return out;
}

Tensor nan_to_num_values(
    const Tensor& a,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf) {
  ScalarType dt = a.dtype();
  if (!is_floating(dt)) {
    return kernels::cast(a, dt);  // integers and bools: a copy
  }
  double largest = largest_finite(dt);
  auto replace = [&](const Tensor& where_true, double value, const Tensor& t) {
    return kernels::where(
        where_true, wrapped_scalar(value, ScalarType::Float64), t, dt);
  };
  Tensor inf = wrapped_scalar(HUGE_VAL, ScalarType::Float64);
  Tensor out = replace(isnan(a), nan.value_or(0), a);
  out = replace(eq(a, inf), posinf.value_or(largest), out);
  return replace(eq(a, neg(inf)), neginf.value_or(-largest), out);
}

Tensor nan_to_num(
    const Tensor& a,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf) {
  Tensor out = nan_to_num_values(a, nan, posinf, neginf);
  if (compute_requires_grad({&a})) {
    record<NanToNumBackward0>(out, {&a})->self_ = SavedVariable(a, false);
  }
  return out;
}

Tensor isclose(
    const Tensor& a,
    const Tensor& b,
    double rtol,
    double atol,
    bool equal_nan) {
  NPGRAD_CHECK(
      a.dtype() == b.dtype(),
      scalar_type_name(a.dtype()),
      " did not match ",
      scalar_type_name(b.dtype()));
  NPGRAD_CHECK(
      rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  NPGRAD_CHECK(
      atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  AutoGradMode no_grad(false);
  // torch's order: equal values are close (infinities too), NaNs with
  // equal_nan; then the tolerance test on a finite difference, with bool
  // operands as the default float dtype.
  Tensor close = eq(a, b);
  if (equal_nan && is_floating(a.dtype())) {
    close = logical_or(close, logical_and(isnan(a), isnan(b)));
  }
  if (rtol == 0 && atol == 0) {
    return close;
  }
  bool as_float = a.dtype() == ScalarType::Bool;
  Tensor x = as_float ? to_dtype(a, ScalarType::Float32) : a;
  Tensor y = as_float ? to_dtype(b, ScalarType::Float32) : b;
  Tensor allowed =
      add(wrapped_scalar(atol, ScalarType::Float64),
          abs(mul(wrapped_scalar(rtol, ScalarType::Float64), y)));
  Tensor actual = abs(sub(x, y));
  return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
}

namespace {
// Whether every element of a bool tensor is true.
bool all_true(const Tensor& mask) {
  Tensor falses = logical_not(mask);
  return kernels::item(kernels::sum(falses, {}, false, ScalarType::Int64)) == 0;
}
}  // namespace

bool allclose(
    const Tensor& a,
    const Tensor& b,
    double rtol,
    double atol,
    bool equal_nan) {
  return all_true(isclose(a, b, rtol, atol, equal_nan));
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) {
    return false;
  }
  AutoGradMode no_grad(false);
  return all_true(eq(a, b));
}

}  // namespace npgrad::ops
