#pragma once
// Shape helpers: broadcasting shape inference with torch's errors (ATen's
// infer_size), contiguous strides, and a walk over a broadcast index space
// for the loops that read tensors through their strides. In the tensor tier
// because the kernels need them too (their NumPy calls report a failed
// broadcast in torch's words).

#include <array>
#include <cstddef>
#include <utility>

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

/// The element steps of a tensor of `sizes` and `strides` read as if
/// broadcast to `shape` (dims right-aligned): its stride along a dim it has
/// with the full size, 0 along a dim it lacks or has as 1. The sizes must
/// broadcast to `shape`.
Shape broadcast_steps(
    const Shape& sizes, const Shape& strides, const Shape& shape);

/// Walks the indices of `shape` in C order (last dim fastest), keeping each
/// of N operands' element offset for the current index, given each
/// operand's steps along the dims (broadcast_steps, or 0 along a dim the
/// operand does not move on).
template <std::size_t N>
class StridedWalk {
 public:
  StridedWalk(const Shape& shape, std::array<Shape, N> steps)
      : shape_(shape), steps_(std::move(steps)), index_(shape.size(), 0) {}

  /// Operand i's offset at the current index.
  int64_t operator[](std::size_t i) const { return offsets_[i]; }

  /// To the next index (after the last one, back to the first).
  void next() {
    for (int64_t d = static_cast<int64_t>(shape_.size()) - 1; d >= 0; --d) {
      for (std::size_t i = 0; i < N; ++i) {
        offsets_[i] += steps_[i][d];
      }
      if (++index_[d] < shape_[d]) {
        return;
      }
      for (std::size_t i = 0; i < N; ++i) {
        offsets_[i] -= steps_[i][d] * shape_[d];
      }
      index_[d] = 0;
    }
  }

 private:
  const Shape& shape_;
  std::array<Shape, N> steps_;
  Shape index_;
  std::array<int64_t, N> offsets_{};
};

}  // namespace npgrad
