#pragma once
// What a node expects of the gradient arriving at one of its inputs (shape and
// dtype of the forward output), used to validate and reduce gradients.
// Mirrors torch/csrc/autograd/input_metadata.h.

#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

struct InputMetadata {
  InputMetadata() = default;  // an input that takes no gradient
  explicit InputMetadata(const Tensor& t)
      : shape(t.sizes()), dtype(t.dtype()), is_valid(true) {}

  Shape shape;
  ScalarType dtype = ScalarType::Float32;
  bool is_valid = false;
};

}  // namespace npgrad::autograd
