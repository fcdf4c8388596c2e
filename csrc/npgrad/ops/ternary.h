#pragma once
// The pointwise ops of three operands (lerp, addcmul, addcdiv) and glu.

#include <utility>

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

/// self + weight * (end - self) (LerpBackward0 for a number weight,
/// LerpBackward1 for a tensor); the in-place forms write into self.
Tensor lerp(const Tensor& self, const Tensor& end, double weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
void lerp_(const Tensor& self, const Tensor& end, double weight);
void lerp_(const Tensor& self, const Tensor& end, const Tensor& weight);
/// self + value * tensor1 * tensor2 (AddcmulBackward0) and
/// self + value * tensor1 / tensor2 (AddcdivBackward0).
Tensor addcmul(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value);
Tensor addcdiv(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value);
void addcmul_(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value);
void addcdiv_(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value);
/// The first half of dim times the sigmoid of the second (GluBackward0).
Tensor glu(const Tensor& self, int64_t dim);

}  // namespace npgrad::ops
