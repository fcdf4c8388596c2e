// The C++ names (ops.h) of the reduction table ops that other code calls.
#include "npgrad/ops/reduction_ops.h"

#include <utility>

namespace npgrad::ops {

using namespace reduction_ops;

Tensor sum(const Tensor& a, std::optional<ScalarType> dtype) {
  return reduction<Sum>(a, std::nullopt, false, dtype);
}
Tensor sum(
    const Tensor& a,
    std::vector<int64_t> dims,
    bool keepdim,
    std::optional<ScalarType> dtype) {
  return reduction<Sum>(a, std::move(dims), keepdim, dtype);
}
Tensor mean(const Tensor& a) {
  return reduction<Mean>(a, std::nullopt);
}
Tensor mean(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
  return reduction<Mean>(a, std::move(dims), keepdim);
}
Tensor amax(
    const Tensor& a, std::vector<int64_t> dims, bool keepdim, bool is_max) {
  return is_max ? reduction<Amax>(a, std::move(dims), keepdim)
                : reduction<Amin>(a, std::move(dims), keepdim);
}
Tensor logsumexp(const Tensor& a, std::vector<int64_t> dims, bool keepdim) {
  return reduction<Logsumexp>(a, std::move(dims), keepdim);
}

}  // namespace npgrad::ops
