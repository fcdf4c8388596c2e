// The C++ names (ops.h) of the reduction table ops that other code calls.
#include "npgrad/ops/reduction_ops.h"

#include <utility>

#include "npgrad/autograd/nodes/reduction_nodes.h"

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

namespace {
// var_mean/std_mean: the table's var (or std) and mean kernels, one node for
// the pair.
template <bool kStd>
std::pair<Tensor, Tensor> var_mean_pair(const Tensor& a, const VarArgs& args) {
  VarStd<kStd>::check_floating(a, kStd ? "std_mean" : "var_mean");
  std::vector<int64_t> dims =
      args.dims ? wrap_dims(*args.dims, a.dim()) : std::vector<int64_t>{};
  Tensor out =
      VarStd<kStd>::kernel(a, dims, args.keepdim, a.dtype(), args.correction);
  Tensor mean = Mean::kernel(a, dims, args.keepdim, a.dtype());
  if (autograd::compute_requires_grad({&a})) {
    auto node = autograd::make_node<autograd::VarMeanBackward<kStd>>();
    node->set_next_edges(autograd::collect_next_edges({&a}));
    autograd::set_history(out, node);
    node->dims = args.dims;
    node->correction = args.correction;
    node->keepdim = args.keepdim;
    node->self_ = autograd::SavedVariable(a, false);
    autograd::set_history(mean, node);
    if (kStd) {
      node->result_ = autograd::SavedVariable(out, true);
    }
  }
  return {out, mean};
}
}  // namespace

std::pair<Tensor, Tensor> var_mean(
    const Tensor& a, const VarArgs& args, bool take_sqrt) {
  return take_sqrt ? var_mean_pair<true>(a, args)
                   : var_mean_pair<false>(a, args);
}

}  // namespace npgrad::ops
