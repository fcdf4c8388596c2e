#include "npgrad/autograd/nodes/pointwise_nodes.h"

#include <cmath>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/half_formulas.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {
Tensor scalar(double v) {
  return wrapped_scalar(v, ScalarType::Float64);
}
Tensor times(const Tensor& t, double alpha) {
  return alpha == 1 ? t : mul(t, scalar(alpha));
}

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

Tensor mul_reusing(const Tensor& a, Tensor b) {
  return binary_reusing(kernels::Binary::Mul, mul, a, std::move(b));
}

Tensor div_reusing(const Tensor& a, Tensor b) {
  return binary_reusing(kernels::Binary::Div, div, a, std::move(b));
}

// 1 - a, in place when a is a reusable temporary.
Tensor one_minus_reusing(Tensor a) {
  Tensor one = scalar(1);
  if (can_write_into(a, one)) {
    kernels::binary_out(kernels::Binary::Sub, one, a, a);
    return a;
  }
  return rsub(a, 1);
}
}  // namespace

void AddBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = g[0];
  }
  if (task_should_compute_output(1)) {
    out[1] = times(g[0], alpha);
  }
}

void SubBackward0::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = g[0];
  }
  if (task_should_compute_output(1)) {
    out[1] = times(neg(g[0]), alpha);
  }
}

void RsubBackward1::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = times(neg(g[0]), alpha);
  }
}

void MulBackward0::compute(const variable_list& g, variable_list& out) {
  bool need_other = task_should_compute_output(1);
  if (task_should_compute_output(0)) {
    // g[0] is still needed for the other input's gradient.
    out[0] = need_other ? mul(g[0], other_.unpack())
                        : mul_reusing(g[0], other_.unpack());
  }
  if (need_other) {
    out[1] = mul(g[0], self_.unpack());
  }
}

void DivBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor other = other_.unpack();
  bool need_other = task_should_compute_output(1);
  if (task_should_compute_output(0)) {
    // g[0] is still needed for the other input's gradient.
    out[0] = need_other ? div(g[0], other) : div_reusing(g[0], other);
  }
  if (need_other) {
    out[1] = neg(mul(g[0], div(div(self_.unpack(), other), other)));
  }
}

void NegBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = neg(g[0]);
}

void PowBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  if (exponent == 0) {
    out[0] = zeros_like(self);
  } else {
    // x ** 1 is x: no copy for the common square.
    Tensor base = exponent == 2 ? self : pow(self, exponent - 1);
    out[0] = mul_reusing(g[0], mul(scalar(exponent), base));
  }
}

void PowBackward1::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor exponent = exponent_.unpack();
  Tensor zero = scalar(0);
  if (task_should_compute_output(0)) {
    Tensor d = mul(g[0], mul(exponent, pow(self, sub(exponent, scalar(1)))));
    out[0] = where(compare(Compare::Eq, exponent, zero), zeros_like(d), d);
  }
  if (task_should_compute_output(1)) {
    Tensor d = mul(g[0], mul(result_.unpack(self_ptr()), log(self)));
    Tensor mask = logical_and(
        compare(Compare::Eq, self, zero), compare(Compare::Ge, exponent, zero));
    out[1] = where(mask, zeros_like(d), d);
  }
}

void PowBackward2::compute(const variable_list& g, variable_list& out) {
  Tensor exponent = exponent_.unpack();
  Tensor d = mul(g[0], mul(result_.unpack(self_ptr()), scalar(std::log(self))));
  if (self == 0) {
    d = where(compare(Compare::Ge, exponent, scalar(0)), zeros_like(d), d);
  }
  out[0] = d;
}

void ReciprocalBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor r = saved();
  out[0] = mul(neg(g[0]), mul(r, r));
}

void ExpBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = mul_reusing(g[0], saved());
}

void LogBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = div_reusing(g[0], saved());
}

void SinBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = mul_reusing(g[0], cos(saved()));
}

void CosBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = mul_reusing(g[0], neg(sin(saved())));
}

void TanhBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = round_float16_once(
      g[0], saved(), [](const Tensor& grad, const Tensor& r) {
        return mul_reusing(grad, one_minus_reusing(mul(r, r)));
      });
}

void SigmoidBackward0::compute(const variable_list& g, variable_list& out) {
  // grad * (1 - r) * r, in torch's sigmoid_backward order; for float16 torch
  // rounds after each step too (unlike tanh's, its kernel has no float path).
  // (1 - r) * grad has the same bits and goes into the temporary 1 - r, which
  // then takes the second product too: one buffer. (Written into the incoming
  // gradient instead, the first product would stay referenced by `g`, and the
  // second would need a buffer of its own.)
  Tensor r = saved();
  Tensor t = rsub(r, 1);
  t = mul_reusing(t, g[0]);
  out[0] = mul_reusing(t, r);
}

void ReluBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = threshold_backward(g[0], saved(), 0);
}

void AbsBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = mul(g[0], sgn(saved()));
}

void SgnBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = zeros_like(g[0]);
}

void ThresholdBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = threshold_backward(g[0], self_.unpack(), threshold);
  }
  if (task_should_compute_output(1)) {
    out[1] = zeros_like(g[0]);
  }
}

void SqrtBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = div_reusing(g[0], mul(saved(), scalar(2)));
}

void ClampBackward1::compute(const variable_list& g, variable_list& out) {
  Tensor self = self_.unpack();
  Tensor mask;
  if (min) {
    mask = compare(Compare::Ge, self, scalar(*min));
  }
  if (max) {
    Tensor le = compare(Compare::Le, self, scalar(*max));
    mask = mask.defined() ? logical_and(mask, le) : le;
  }
  out[0] = mask.defined() ? mul(g[0], mask) : g[0];
}

void WhereBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor cond = condition_.unpack();
  Tensor zero = zeros_like(g[0]);
  if (task_should_compute_output(0)) {
    out[0] = where(cond, g[0], zero);
  }
  if (task_should_compute_output(1)) {
    out[1] = where(cond, zero, g[0]);
  }
}

}  // namespace npgrad::autograd
