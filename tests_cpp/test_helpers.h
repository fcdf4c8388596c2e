#pragma once
// Builders and a recording node shared by the C++ tests.

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/node.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::testing {

inline Tensor tensor(
    const std::vector<double>& values, bool requires_grad = false) {
  Tensor t = kernels::empty(
      {static_cast<int64_t>(values.size())}, ScalarType::Float64);
  auto* p = static_cast<double*>(t.data_ptr());
  for (std::size_t i = 0; i < values.size(); ++i) {
    p[i] = values[i];
  }
  if (requires_grad) {
    autograd::set_requires_grad(t, true);
  }
  return t;
}

inline std::vector<double> values(const Tensor& t) {
  Tensor c = kernels::cast(t, ScalarType::Float64);
  auto* p = static_cast<const double*>(c.data_ptr());
  return std::vector<double>(p, p + c.numel());
}

inline Tensor grad_of(const Tensor& t) {
  return autograd::get_autograd_meta(t)->grad;
}

/// A node that records its execution in a shared log and passes a gradient
/// of ones-like shape through to each of its edges.
class RecordingNode final : public autograd::Node {
 public:
  RecordingNode(
      std::string label,
      std::vector<std::string>* log,
      autograd::edge_list edges)
      : Node(autograd::next_sequence_nr(), std::move(edges)),
        label_(std::move(label)),
        log_(log) {}
  variable_list apply(variable_list&& grads) override {
    log_->push_back(label_);
    seen = grads;
    return variable_list(num_outputs(), grads.empty() ? Tensor() : grads[0]);
  }
  std::string name() const override { return label_; }
  variable_list seen;

 private:
  std::string label_;
  std::vector<std::string>* log_;
};

/// Central finite differences of a scalar function of one float64 tensor.
inline std::vector<double> numerical_grad(
    const std::function<double(const Tensor&)>& f,
    const Tensor& x,
    double eps = 1e-6) {
  std::vector<double> out;
  auto* p = static_cast<double*>(x.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) {
    double orig = p[i];
    p[i] = orig + eps;
    double hi = f(x);
    p[i] = orig - eps;
    double lo = f(x);
    p[i] = orig;
    out.push_back((hi - lo) / (2 * eps));
  }
  return out;
}

}  // namespace npgrad::testing
