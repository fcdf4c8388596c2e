// The C++ names (ops.h) of the table ops that other formulas call.
#include "npgrad/ops/unary_ops.h"

namespace npgrad::ops {

using namespace unary_ops;

Tensor neg(const Tensor& a) {
  return unary<Neg>(a);
}
Tensor reciprocal(const Tensor& a) {
  return unary<Reciprocal>(a);
}
Tensor exp(const Tensor& a) {
  return unary<Exp>(a);
}
Tensor log(const Tensor& a) {
  return unary<Log>(a);
}
Tensor sin(const Tensor& a) {
  return unary<Sin>(a);
}
Tensor cos(const Tensor& a) {
  return unary<Cos>(a);
}
Tensor tanh(const Tensor& a) {
  return unary<Tanh>(a);
}
Tensor sigmoid(const Tensor& a) {
  return unary<Sigmoid>(a);
}
Tensor relu(const Tensor& a) {
  return unary<Relu>(a);
}
Tensor abs(const Tensor& a) {
  return unary<Abs>(a);
}
Tensor sqrt(const Tensor& a) {
  return unary<Sqrt>(a);
}
Tensor rsqrt(const Tensor& a) {
  return unary<Rsqrt>(a);
}
Tensor sinh(const Tensor& a) {
  return unary<Sinh>(a);
}
Tensor cosh(const Tensor& a) {
  return unary<Cosh>(a);
}
Tensor logical_not(const Tensor& a) {
  return unary<LogicalNot>(a);
}
Tensor isnan(const Tensor& a) {
  return unary<Isnan>(a);
}
Tensor isinf(const Tensor& a) {
  return unary<Isinf>(a);
}
Tensor isfinite(const Tensor& a) {
  return unary<Isfinite>(a);
}

}  // namespace npgrad::ops
