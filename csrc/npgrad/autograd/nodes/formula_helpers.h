#pragma once
// Building blocks of backward formulas, shared by the hand-written nodes and
// the op tables (ops/unary_ops.h). Each is written with npgrad ops, so a
// formula recorded under create_graph differentiates again.

#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

/// A Python number as a float64 wrapped scalar (weak in type promotion).
Tensor scalar(double v);
/// 0, 1, ..., n - 1 (int64) laid along dim of an ndim-dim tensor whose
/// other sizes are 1: the positions along dim, to compare with indices.
Tensor arange_along(int64_t n, int64_t ndim, int64_t dim);
/// t * alpha (t itself when alpha is 1).
Tensor times(const Tensor& t, double alpha);
/// See Note [Backward temporaries are reused] in formula_helpers.cpp: a * b
/// or a / b, written into a or b when that is a temporary nobody else holds.
Tensor mul_reusing(const Tensor& a, Tensor b);
Tensor div_reusing(const Tensor& a, Tensor b);
/// 1 - a, in place when a is such a temporary.
Tensor one_minus_reusing(Tensor a);
/// grad of a reduction over dims (as given; all when empty) of an ndim-dim
/// input, with the reduced dims put back as size 1 (unless keepdim), so that
/// it broadcasts against the input.
Tensor unsqueeze_reduced(Tensor grad, int64_t ndim, Shape dims, bool keepdim);
/// The gradient of a sum over dims, broadcast back to the input's sizes.
Tensor sum_backward(
    const Tensor& grad, const Shape& sizes, Shape dims, bool keepdim);

}  // namespace npgrad::autograd
