#pragma once
// clamp, clamp_min and clamp_max with tensor or number bounds, and their
// in-place forms. A bound is an undefined Tensor (absent), a wrapped number
// (a Python number: torch's Number overload, whose node saves the number) or
// a tensor (torch's Tensor overload, whose node saves the bounds and gives
// them gradients). The result's dtype is torch's result_type of self and the
// bounds (clamp(int_tensor, 2.5) is float32); bounds broadcast with self.

#include <array>

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

/// Up to this many gradient elements the tensor overloads' backward is one
/// loop (Note [Small clamp backward in one loop]).
constexpr int64_t kSmallClampBackward = 4096;

/// The gradients of a tensor-bound clamp (self; min, max: undefined when
/// absent), each in grad's shape and only where `want` asks, in one loop:
/// when no graph is being recorded and grad, self and the defined bounds
/// are float32/float64 of one dtype that broadcast to grad's small shape.
/// False, with nothing done, otherwise.
bool clamp_backward_loop(
    const Tensor& grad,
    const Tensor& self,
    const Tensor& min,
    const Tensor& max,
    std::array<bool, 3> want,
    std::array<Tensor, 3>& out);

}  // namespace npgrad::ops
