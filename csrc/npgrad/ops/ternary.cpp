// The pointwise ops of three operands (lerp, addcmul, addcdiv) and glu. The
// values are computed with npgrad ops in no-grad mode; the node is recorded
// after, saving what torch's formula reads.
#include <cmath>
#include <memory>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/ternary_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/ops/ternary.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using autograd::AutoGradMode;
using autograd::SavedVariable;

namespace {

void check_lerp(const Tensor& self, const Tensor& end, const Tensor* weight) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      is_floating(self.dtype()),
      "\"",
      weight ? "lerp_kernel_tensor" : "lerp_kernel_scalar",
      "\" not implemented for '",
      scalar_type_name(self.dtype()),
      "'");
  NPGRAD_CHECK(
      end.dtype() == self.dtype(),
      "expected dtype ",
      type_meta_name(self.dtype()),
      " for `end` but got dtype ",
      type_meta_name(end.dtype()));
  // torch's broadcast error names self "a" and end "b".
  Shape shape = infer_size(self.sizes(), end.sizes());
  if (weight != nullptr) {
    infer_size(shape, weight->sizes());
    NPGRAD_CHECK(
        weight->dtype() == self.dtype() || weight->dim() == 0,
        "expected dtype ",
        type_meta_name(self.dtype()),
        " for `weight` but got dtype ",
        type_meta_name(weight->dtype()));
  }
}

// torch's lerp kernel: self + w * (end - self) for |w| < 0.5, else
// end - (end - self) * (1 - w) (exact at w == 1).
// A reduced float as float32 (its opmath type); any other dtype as it is.
Tensor reduced_to_float(const Tensor& t) {
  return is_reduced_float(t.dtype()) ? kernels::cast(t, ScalarType::Float32)
                                     : t;
}

Tensor lerp_value(const Tensor& self, const Tensor& end, double weight) {
  if (is_reduced_float(self.dtype())) {
    // A reduced float computes in float32 and rounds once, as torch's kernel
    // does.
    return kernels::cast(
        lerp_value(reduced_to_float(self), reduced_to_float(end), weight),
        self.dtype());
  }
  AutoGradMode no_grad(false);
  Tensor diff = sub(end, self);
  return std::abs(weight) < 0.5
             ? add(self, diff, weight)
             : sub(end,
                   mul(diff, wrapped_scalar(1 - weight, ScalarType::Float64)));
}

Tensor lerp_value(const Tensor& self, const Tensor& end, const Tensor& weight) {
  if (is_reduced_float(self.dtype())) {
    return kernels::cast(
        lerp_value(
            reduced_to_float(self),
            reduced_to_float(end),
            reduced_to_float(weight)),
        self.dtype());
  }
  AutoGradMode no_grad(false);
  Tensor w = to_dtype(weight, self.dtype());
  Tensor diff = sub(end, self);
  Tensor low = add(self, mul(w, diff));
  Tensor high = sub(end, mul(diff, rsub(w, 1.0)));
  return where(lt(abs(w), wrapped_scalar(0.5, ScalarType::Float64)), low, high);
}

// self + value * (tensor1 op tensor2) in the operands' promoted dtype; an
// integer result takes value as an integer (torch casts it to the dtype).
Tensor addc_value(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value,
    bool divide) {
  AutoGradMode no_grad(false);
  Tensor product = divide ? div(tensor1, tensor2) : mul(tensor1, tensor2);
  ScalarType dt = result_type(self, product);
  if (is_reduced_float(dt)) {
    // A reduced float computes in float32 and rounds once, as torch's kernel
    // does.
    return kernels::cast(
        addc_value(
            reduced_to_float(self),
            reduced_to_float(tensor1),
            reduced_to_float(tensor2),
            value,
            divide),
        dt);
  }
  bool integral = !is_floating(dt);
  Tensor scale = integral ? wrapped_scalar(std::trunc(value), ScalarType::Int64)
                          : wrapped_scalar(value, ScalarType::Float64);
  return add(self, mul(product, scale));
}

void check_addc(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    bool divide) {
  if (divide) {
    NPGRAD_CHECK(
        !(is_integral(tensor1.dtype(), true) &&
          is_integral(tensor2.dtype(), true)),
        "Integer division with addcdiv is no longer supported, and in a "
        "future  release addcdiv will perform a true division of tensor1 and "
        "tensor2. The historic addcdiv behavior can be implemented as (input "
        "+ value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
        "integer inputs and as (input + value * tensor1 / tensor2) for float "
        "inputs. The future addcdiv behavior is just the latter "
        "implementation: (input + value * tensor1 / tensor2), for all "
        "dtypes.");
  }
  bool all_bool = self.dtype() == ScalarType::Bool &&
                  tensor1.dtype() == ScalarType::Bool &&
                  tensor2.dtype() == ScalarType::Bool;
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      !all_bool,
      "\"",
      divide ? "addcdiv_cpu_out" : "addcmul_cpu_out",
      "\" not implemented for 'Bool'");
}

template <typename NodeT>
void save_addc(
    NodeT& node,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value,
    bool divide) {
  node.value = value;
  bool grad1 = node.should_compute_output(1);
  bool grad2 = node.should_compute_output(2);
  // addcmul: tensor1's gradient reads tensor2 and the reverse; addcdiv:
  // tensor2's gradient reads tensor1, and torch keeps tensor2 always.
  if (grad2) {
    node.tensor1_ = SavedVariable(tensor1, false);
  }
  if (divide || grad1) {
    node.tensor2_ = SavedVariable(tensor2, false);
  }
}

template <typename NodeT>
Tensor addc(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value,
    bool divide) {
  check_addc(self, tensor1, tensor2, divide);
  Tensor out = addc_value(self, tensor1, tensor2, value, divide);
  if (auto node = record<NodeT>(out, {&self, &tensor1, &tensor2})) {
    save_addc(*node, tensor1, tensor2, value, divide);
  }
  return out;
}

template <typename NodeT>
void addc_(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value,
    bool divide) {
  check_addc(self, tensor1, tensor2, divide);
  bool requires_grad =
      autograd::compute_requires_grad({&self, &tensor1, &tensor2});
  check_inplace(self, requires_grad);
  Tensor result = addc_value(self, tensor1, tensor2, value, divide);
  check_castable(result.dtype(), self.dtype());
  check_broadcasts_to_self(self, result);
  std::shared_ptr<NodeT> node;
  if (requires_grad) {
    node = autograd::make_node<NodeT>();
    node->set_next_edges(
        autograd::collect_next_edges({&self, &tensor1, &tensor2}));
    save_addc(*node, tensor1, tensor2, value, divide);
  }
  kernels::copy_into(self, result);
  finish_inplace(self, node, divide ? "addcdiv_" : "addcmul_");
}

}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, double weight) {
  check_lerp(self, end, nullptr);
  Tensor out = lerp_value(self, end, weight);
  if (auto node = record<autograd::LerpBackward0>(out, {&self, &end})) {
    node->weight = weight;
  }
  return out;
}

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  check_lerp(self, end, &weight);
  Tensor out = lerp_value(self, end, weight);
  if (auto node =
          record<autograd::LerpBackward1>(out, {&self, &end, &weight})) {
    node->weight_ = SavedVariable(weight, false);
    if (node->should_compute_output(2)) {
      node->self_ = SavedVariable(self, false);
      node->end_ = SavedVariable(end, false);
    }
  }
  return out;
}

void lerp_(const Tensor& self, const Tensor& end, double weight) {
  check_lerp(self, end, nullptr);
  bool requires_grad = autograd::compute_requires_grad({&self, &end});
  check_inplace(self, requires_grad);
  check_broadcasts_to_self(self, end);
  std::shared_ptr<autograd::LerpBackward0> node;
  if (requires_grad) {
    node = autograd::make_node<autograd::LerpBackward0>();
    node->set_next_edges(autograd::collect_next_edges({&self, &end}));
    node->weight = weight;
  }
  kernels::copy_into(self, lerp_value(self, end, weight));
  finish_inplace(self, node, "lerp_");
}

void lerp_(const Tensor& self, const Tensor& end, const Tensor& weight) {
  check_lerp(self, end, &weight);
  bool requires_grad = autograd::compute_requires_grad({&self, &end, &weight});
  check_inplace(self, requires_grad);
  check_broadcasts_to_self(self, end);
  check_broadcasts_to_self(self, weight);
  std::shared_ptr<autograd::LerpBackward1> node;
  if (requires_grad) {
    node = autograd::make_node<autograd::LerpBackward1>();
    node->set_next_edges(autograd::collect_next_edges({&self, &end, &weight}));
    node->weight_ = SavedVariable(weight, false);
    if (node->should_compute_output(2)) {
      node->self_ = save_original(self);
      node->end_ = SavedVariable(end, false);
    }
  }
  kernels::copy_into(self, lerp_value(self, end, weight));
  finish_inplace(self, node, "lerp_");
}

Tensor addcmul(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value) {
  return addc<autograd::AddcmulBackward0>(self, tensor1, tensor2, value, false);
}

Tensor addcdiv(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value) {
  return addc<autograd::AddcdivBackward0>(self, tensor1, tensor2, value, true);
}

void addcmul_(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value) {
  addc_<autograd::AddcmulBackward0>(self, tensor1, tensor2, value, false);
}

void addcdiv_(
    const Tensor& self,
    const Tensor& tensor1,
    const Tensor& tensor2,
    double value) {
  addc_<autograd::AddcdivBackward0>(self, tensor1, tensor2, value, true);
}

Tensor glu(const Tensor& self, int64_t dim) {
  NPGRAD_CHECK(self.dim() > 0, "glu does not support 0-dimensional tensors");
  int64_t d = maybe_wrap_dim(dim, self.dim());
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      is_floating(self.dtype()),
      "\"glu_cpu\" not implemented for '",
      scalar_type_name(self.dtype()),
      "'");
  int64_t size = self.sizes()[d];
  NPGRAD_CHECK(
      size % 2 == 0,
      "Halving dimension must be even, but dimension ",
      d,
      " is size ",
      size);
  Tensor out;
  {
    AutoGradMode no_grad(false);
    std::vector<Tensor> halves = chunk(self, 2, d);
    out = contiguous(mul(halves[0], sigmoid(halves[1])));
  }
  if (auto node = record<autograd::GluBackward0>(out, {&self})) {
    node->dim = dim;
    node->self_ = SavedVariable(self, false);
  }
  return out;
}

}  // namespace npgrad::ops
