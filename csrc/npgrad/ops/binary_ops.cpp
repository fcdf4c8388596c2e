// The C++ names (ops.h) of the binary table ops that other formulas call.
#include "npgrad/ops/binary_ops.h"

namespace npgrad::ops {

using namespace binary_ops;

Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  return binary<Add>(a, b, alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, double alpha) {
  return binary<Sub>(a, b, alpha);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return binary<Mul>(a, b);
}
Tensor div(const Tensor& a, const Tensor& b) {
  return binary<Div>(a, b);
}
Tensor atan2(const Tensor& a, const Tensor& b) {
  return binary<Atan2>(a, b);
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  return binary<Maximum>(a, b);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return binary<Minimum>(a, b);
}
Tensor hypot(const Tensor& a, const Tensor& b) {
  return binary<Hypot>(a, b);
}
Tensor logaddexp(const Tensor& a, const Tensor& b) {
  return binary<Logaddexp>(a, b);
}
Tensor eq(const Tensor& a, const Tensor& b) {
  return binary<Eq>(a, b);
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return binary<Ne>(a, b);
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return binary<Lt>(a, b);
}
Tensor le(const Tensor& a, const Tensor& b) {
  return binary<Le>(a, b);
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return binary<Gt>(a, b);
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return binary<Ge>(a, b);
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return binary<LogicalAnd>(a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return binary<LogicalOr>(a, b);
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  return binary<LogicalXor>(a, b);
}

Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  return binary<TanhBackward>(grad_output, output);
}
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  return binary<SigmoidBackward>(grad_output, output);
}

}  // namespace npgrad::ops
