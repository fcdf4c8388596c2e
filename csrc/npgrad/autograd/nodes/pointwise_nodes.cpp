#include "npgrad/autograd/nodes/pointwise_nodes.h"

#include <cmath>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/nodes/half_formulas.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

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
