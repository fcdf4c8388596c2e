#pragma once
// clamp, clamp_min and clamp_max with tensor or number bounds, and their
// in-place forms. A bound is an undefined Tensor (absent), a wrapped number
// (a Python number: torch's Number overload, whose node saves the number) or
// a tensor (torch's Tensor overload, whose node saves the bounds and gives
// them gradients). The result's dtype is torch's result_type of self and the
// bounds (clamp(int_tensor, 2.5) is float32); bounds broadcast with self.

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

/// ClampBackward1 (number bounds) or ClampBackward0 (tensor bounds); at
/// least one bound is defined.
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max);
void clamp_(const Tensor& self, const Tensor& min, const Tensor& max);
/// ClampMinBackward0 (number) or ClampMinBackward1 (tensor).
Tensor clamp_min(const Tensor& self, const Tensor& min);
void clamp_min_(const Tensor& self, const Tensor& min);
/// ClampMaxBackward0 (number) or ClampMaxBackward1 (tensor).
Tensor clamp_max(const Tensor& self, const Tensor& max);
void clamp_max_(const Tensor& self, const Tensor& max);

}  // namespace npgrad::ops
