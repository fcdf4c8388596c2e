#pragma once
// The element type of a float32 / float64 tensor, for the kernels written as
// plain loops.

#include "npgrad/tensor/tensor.h"
#include "npgrad/util/error.h"

namespace npgrad::kernels {

/// Calls fn with a null pointer of the element type of dtype (float32 or
/// float64).
template <typename Fn>
void dispatch_floating(ScalarType dtype, Fn&& fn) {
  if (dtype == ScalarType::Float32) {
    fn(static_cast<float*>(nullptr));
  } else {
    NPGRAD_INTERNAL_ASSERT(
        dtype == ScalarType::Float64, "float kernels: float dtype");
    fn(static_cast<double*>(nullptr));
  }
}

}  // namespace npgrad::kernels
