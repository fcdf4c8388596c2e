#pragma once
// InputBuffer: sums the gradients that arrive at one node before it runs
// (torch/csrc/autograd/input_buffer.h).

#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

class InputBuffer {
 public:
  explicit InputBuffer(std::size_t size) : buffer_(size) {}
  /// Adds var at pos: the first defined value is stored as is, later ones
  /// are summed in arrival order.
  void add(std::size_t pos, Tensor&& var);
  variable_list release() { return std::move(buffer_); }

 private:
  variable_list buffer_;
};

}  // namespace npgrad::autograd
