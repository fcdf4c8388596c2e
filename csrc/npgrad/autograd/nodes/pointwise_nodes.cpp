#include "npgrad/autograd/nodes/pointwise_nodes.h"

#include <cmath>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/nodes/reduced_float_formulas.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

void RsubBackward1::compute(const variable_list& g, variable_list& out) {
  if (task_should_compute_output(0)) {
    out[0] = times(neg(g[0]), alpha);
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
    out[0] = where(eq(exponent, zero), zeros_like(d), d);
  }
  if (task_should_compute_output(1)) {
    Tensor d = mul(g[0], mul(result_.unpack(self_ptr()), log(self)));
    Tensor mask = logical_and(eq(self, zero), ge(exponent, zero));
    out[1] = where(mask, zeros_like(d), d);
  }
}

void PowBackward2::compute(const variable_list& g, variable_list& out) {
  Tensor exponent = exponent_.unpack();
  Tensor d = mul(g[0], mul(result_.unpack(self_ptr()), scalar(std::log(self))));
  if (self == 0) {
    d = where(ge(exponent, scalar(0)), zeros_like(d), d);
  }
  out[0] = d;
}

void MaskedFillBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = masked_fill(g[0], mask_.unpack(), scalar(0));
}

void MaskedFillBackward1::compute(const variable_list& g, variable_list& out) {
  Tensor mask = mask_.unpack();
  if (task_should_compute_output(0)) {
    out[0] = masked_fill(g[0], mask, scalar(0));
  }
  if (task_should_compute_output(1)) {
    // torch's masked_select(grad, mask).sum(): the filled places' sum.
    out[1] = sum(where(mask, g[0], zeros_like(g[0])));
  }
}

void NanToNumBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = mul(g[0], isfinite(self_.unpack()));
}

void SgnBackward0::compute(const variable_list& g, variable_list& out) {
  // Unpacked as torch's node does: a saved value modified since is an error.
  result_.unpack(self_ptr());
  self_.unpack();
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
