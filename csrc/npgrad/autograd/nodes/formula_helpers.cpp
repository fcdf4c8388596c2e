#include "npgrad/autograd/nodes/formula_helpers.h"

#include <algorithm>
#include <utility>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

Tensor scalar(double v) {
  return wrapped_scalar(v, ScalarType::Float64);
}
Tensor arange_along(int64_t n, int64_t ndim, int64_t dim) {
  Shape shape(ndim, 1);
  shape[dim] = n;
  Tensor range = kernels::empty(shape, ScalarType::Int64);
  for (int64_t i = 0; i < n; ++i) {
    static_cast<int64_t*>(range.data_ptr())[i] = i;
  }
  return range;
}

Tensor times(const Tensor& t, double alpha) {
  return alpha == 1 ? t : mul(t, scalar(alpha));
}

namespace {

// Note [Backward temporaries are reused]
// Without create_graph the formulas run in no-grad mode, and a tensor that
// nobody else can observe (kernels::is_exclusively_owned: a temporary the
// formula just made, or an incoming gradient no hook, buffer or Python object
// holds) can take the next step's result in place (NumPy's out=). A formula
// then allocates once instead of once per step, which for large tensors is
// most of its cost (each new array is fresh pages). With create_graph every
// step is a recorded op, as torch's formulas are. The result dtype and shape
// must be the target's own (no promotion, no broadcast of the target).
bool can_write_into(const Tensor& target, const Tensor& other) {
  return !GradMode::is_enabled() && kernels::is_exclusively_owned(target) &&
         (other.sizes() == target.sizes() || other.dim() == 0) &&
         result_type(target, other) == target.dtype();
}

// op(a, b), written into a or b when it is a reusable temporary; `recorded`
// is the ordinary op otherwise. `b` (and one_minus_reusing's `a`) are taken
// by value: a temporary argument is moved in, so when it is returned as the
// result no second reference to it is left in the caller's expression, and a
// nested call can reuse it again (tanh).
Tensor binary_reusing(
    kernels::Binary op,
    Tensor (*recorded)(const Tensor&, const Tensor&),
    const Tensor& a,
    Tensor b) {
  if (can_write_into(a, b)) {
    kernels::binary_out(op, a, b, a);
    return a;
  }
  if (can_write_into(b, a)) {
    kernels::binary_out(op, a, b, b);
    return b;
  }
  return recorded(a, b);
}

}  // namespace

Tensor mul_reusing(const Tensor& a, Tensor b) {
  return binary_reusing(kernels::Binary::Mul, mul, a, std::move(b));
}

Tensor div_reusing(const Tensor& a, Tensor b) {
  return binary_reusing(kernels::Binary::Div, div, a, std::move(b));
}

Tensor one_minus_reusing(Tensor a) {
  Tensor one = scalar(1);
  if (can_write_into(a, one)) {
    kernels::binary_out(kernels::Binary::Sub, one, a, a);
    return a;
  }
  return rsub(a, 1);
}

Tensor unsqueeze_reduced(Tensor grad, int64_t ndim, Shape dims, bool keepdim) {
  if (keepdim || ndim == 0) {
    return grad;
  }
  for (auto& d : dims) {
    d = maybe_wrap_dim(d, ndim);
  }
  std::sort(dims.begin(), dims.end());
  for (int64_t d : dims) {
    grad = unsqueeze(grad, d);
  }
  return grad;
}

Tensor sum_backward(
    const Tensor& grad, const Shape& sizes, Shape dims, bool keepdim) {
  return expand(
      unsqueeze_reduced(
          grad, static_cast<int64_t>(sizes.size()), std::move(dims), keepdim),
      sizes);
}

}  // namespace npgrad::autograd
