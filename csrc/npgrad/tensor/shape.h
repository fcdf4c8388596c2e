#pragma once
// Shape helpers: broadcasting shape inference with torch's errors (ATen's
// infer_size) and contiguous strides. In the tensor tier because the kernels
// need them too (their NumPy calls report a failed broadcast in torch's
// words).

#include "npgrad/tensor/tensor.h"

namespace npgrad {

/// The shape a and b broadcast to. Throws torch's RuntimeError "The size of
/// tensor a (3) must match the size of tensor b (2) at non-singleton
/// dimension 1" when they do not broadcast.
Shape infer_size(const Shape& a, const Shape& b);

/// The strides (in elements) of a C-contiguous tensor of `sizes`.
Shape contiguous_strides(const Shape& sizes);

/// torch's checks before allocating a tensor of `sizes`: "Trying to create
/// tensor with negative dimension", "Storage size calculation overflowed".
void check_allocatable(const Shape& sizes);

}  // namespace npgrad
