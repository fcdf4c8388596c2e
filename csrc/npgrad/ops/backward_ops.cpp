// Ops that backward formulas use, differentiable themselves so that a double
// backward (create_graph=True) records them as torch does.
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/normalization_nodes.h"
#include "npgrad/autograd/nodes/pointwise_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/kernels/normalization.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/unary_ops.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

Tensor sgn(const Tensor& a) {
  // sign's kernel: NaN gives 0, as torch's (so abs's gradient at NaN is 0).
  Tensor out = unary_ops::Sign::kernel(a, a.dtype());
  if (compute_requires_grad({&a})) {
    auto node = make_node<SgnBackward0>();
    node->set_next_edges(collect_next_edges({&a}));
    set_history(out, node);
    node->self_ = SavedVariable(a, false);
    node->result_ = SavedVariable(out, true);
  }
  return out;
}

Tensor threshold_backward(
    const Tensor& grad, const Tensor& self, double threshold) {
  Tensor mask = kernels::binary(
      kernels::Binary::Gt,
      self,
      wrapped_scalar(threshold, ScalarType::Float64),
      self.dtype());
  Tensor out = kernels::binary(kernels::Binary::Mul, grad, mask, grad.dtype());
  if (compute_requires_grad({&grad, &self})) {
    auto node = make_node<ThresholdBackwardBackward0>();
    node->set_next_edges(collect_next_edges({&grad, &self}));
    set_history(out, node);
    node->self_ = SavedVariable(self, false);
    node->threshold = threshold;
  }
  return out;
}

Tensor embedding_dense_backward(
    const Tensor& grad,
    const Tensor& indices,
    int64_t num_weights,
    int64_t padding_idx,
    bool scale_grad_by_freq) {
  ScalarType dtype = grad.dtype();
  Tensor flat = reshape(contiguous(to_dtype(indices, ScalarType::Int64)), {-1});
  int64_t K = flat.numel();
  int64_t D = grad.dim() > 0 ? grad.sizes().back() : 1;
  Tensor rows = reshape(grad, {K, D});
  // Each row's factor: 0 for padding_idx, 1 / (the index's count) when
  // scale_grad_by_freq, else 1 (no factors).
  std::vector<double> factors;
  if (scale_grad_by_freq || padding_idx >= 0) {
    const auto* idx = static_cast<const int64_t*>(flat.data_ptr());
    std::vector<int64_t> counts(
        scale_grad_by_freq ? static_cast<std::size_t>(num_weights) : 0, 0);
    for (int64_t k = 0; k < K && scale_grad_by_freq; ++k) {
      ++counts[static_cast<std::size_t>(idx[k])];
    }
    factors.resize(static_cast<std::size_t>(K));
    for (int64_t k = 0; k < K; ++k) {
      factors[k] = idx[k] == padding_idx ? 0.0
                   : scale_grad_by_freq
                       ? 1.0 / static_cast<double>(counts[idx[k]])
                       : 1.0;
    }
  }
  Tensor out;
  {
    AutoGradMode no_grad(false);
    if (dtype == ScalarType::Float32 || dtype == ScalarType::Float64) {
      out = zeros({num_weights, D}, dtype);
      kernels::embedding_accumulate(
          contiguous(rows), flat, padding_idx, factors, out);
    } else {
      if (!factors.empty()) {
        Tensor f = kernels::empty({K, 1}, ScalarType::Float64);
        std::copy(
            factors.begin(), factors.end(), static_cast<double*>(f.data_ptr()));
        rows = mul(rows, to_dtype(f, dtype));
      }
      out = index_add(zeros({num_weights, D}, dtype), 0, flat, rows, 1, false);
    }
  }
  if (compute_requires_grad({&grad})) {
    auto node = make_node<EmbeddingDenseBackwardBackward0>();
    node->set_next_edges(collect_next_edges({&grad}));
    set_history(out, node);
    node->indices_ = SavedVariable(indices, false);
    node->padding_idx = padding_idx;
  }
  return out;
}

}  // namespace npgrad::ops
