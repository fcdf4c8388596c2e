#include "npgrad/tensor/shape.h"

#include <algorithm>

#include "npgrad/util/error.h"

namespace npgrad {

Shape infer_size(const Shape& a, const Shape& b) {
  auto dims_a = static_cast<int64_t>(a.size());
  auto dims_b = static_cast<int64_t>(b.size());
  int64_t ndim = std::max(dims_a, dims_b);
  Shape out(static_cast<std::size_t>(ndim));
  // Aligned from the trailing dimension; a missing dimension has size 1.
  for (int64_t i = ndim - 1; i >= 0; --i) {
    int64_t offset = ndim - 1 - i;
    int64_t dim_a = dims_a - 1 - offset;
    int64_t dim_b = dims_b - 1 - offset;
    int64_t size_a = dim_a >= 0 ? a[static_cast<std::size_t>(dim_a)] : 1;
    int64_t size_b = dim_b >= 0 ? b[static_cast<std::size_t>(dim_b)] : 1;
    NPGRAD_CHECK(
        size_a == size_b || size_a == 1 || size_b == 1,
        "The size of tensor a (",
        size_a,
        ") must match the size of tensor b (",
        size_b,
        ") at non-singleton dimension ",
        i);
    out[static_cast<std::size_t>(i)] = size_a == 1 ? size_b : size_a;
  }
  return out;
}

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

void check_allocatable(const Shape& sizes) {
  int64_t numel = 1;
  for (int64_t n : sizes) {
    NPGRAD_CHECK(
        n >= 0,
        "Trying to create tensor with negative dimension ",
        n,
        ": ",
        shape_str(sizes));
  }
  bool overflow = false;
  for (int64_t n : sizes) {
    overflow = overflow || __builtin_mul_overflow(numel, n, &numel);
  }
  NPGRAD_CHECK(
      !overflow,
      "Storage size calculation overflowed with sizes=",
      shape_str(sizes));
}

Shape broadcast_steps(
    const Shape& sizes, const Shape& strides, const Shape& shape) {
  Shape steps(shape.size(), 0);
  std::size_t lead = shape.size() - sizes.size();
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1) {
      steps[lead + d] = strides[d];
    }
  }
  return steps;
}

}  // namespace npgrad
