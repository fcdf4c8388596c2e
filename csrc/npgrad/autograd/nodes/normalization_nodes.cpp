#include "npgrad/autograd/nodes/normalization_nodes.h"

#include <numeric>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/kernels/normalization.h"
#include "npgrad/ops/attention.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {

std::vector<int64_t> dim_range(int64_t begin, int64_t end) {
  std::vector<int64_t> dims(static_cast<std::size_t>(end - begin));
  std::iota(dims.begin(), dims.end(), begin);
  return dims;
}

// The mean and 1 / sqrt(biased variance + eps) of x over dims (kept), with
// npgrad ops: under create_graph the statistics are recomputed from the
// input so that the gradient formula differentiates through them.
std::pair<Tensor, Tensor> moments(
    const Tensor& x, const std::vector<int64_t>& dims, double eps) {
  VarArgs args;
  args.dims = dims;
  args.correction = 0.0;
  args.keepdim = true;
  auto [var, mu] = var_mean(x, args, false);
  return {mu, rsqrt(add(var, scalar(eps)))};
}

// The gradient w.r.t. x of y = (x - mean) * rstd over dims, given gw, the
// gradient w.r.t. y: rstd * (gw - mean(gw) - xhat * mean(gw * xhat)).
Tensor normalized_grad(
    const Tensor& gw,
    const Tensor& xhat,
    const Tensor& rstd,
    const std::vector<int64_t>& dims) {
  Tensor centered = sub(gw, mean(gw, dims, true));
  return mul(rstd, sub(centered, mul(xhat, mean(mul(gw, xhat), dims, true))));
}

// sum over dims (t itself when there are none).
Tensor sum_over(const Tensor& t, const std::vector<int64_t>& dims) {
  return dims.empty() ? t : sum(t, dims, false);
}

// A reduced float computes in float32, as torch's CPU kernels accumulate it.
Tensor f32(const Tensor& t) {
  return t.defined() && is_reduced_float(t.dtype())
             ? to_dtype(t, ScalarType::Float32)
             : t;
}

// The gradients rounded once to the input's dtype when it is a reduced float.
void round_to(ScalarType dtype, variable_list& out) {
  if (!is_reduced_float(dtype)) {
    return;
  }
  for (auto& t : out) {
    if (t.defined()) {
      t = to_dtype(t, dtype);
    }
  }
}

}  // namespace

void NativeLayerNormBackward0::compute(
    const variable_list& g, variable_list& out) {
  // Unpacked once: a saved_tensors_hooks unpack hook runs once per backward.
  Tensor input = input_.unpack();
  compute_float(input, g, out);
  round_to(input.dtype(), out);
}

void NativeLayerNormBackward0::compute_float(
    const Tensor& input, const variable_list& g, variable_list& out) {
  Tensor grad = f32(g[0]);
  Tensor x = f32(input);
  Tensor weight = f32(weight_.unpack());
  int64_t axis = x.dim() - static_cast<int64_t>(normalized_shape.size());
  ScalarType dt = x.dtype();
  if (!GradMode::is_enabled() &&
      (dt == ScalarType::Float32 || dt == ScalarType::Float64) &&
      (!weight.defined() || weight.dtype() == dt)) {
    // No graph to record: one pass of the loop kernel over the rows.
    int64_t N = 1;
    for (int64_t s : normalized_shape) {
      N *= s;
    }
    int64_t M = N > 0 ? x.numel() / N : 0;
    auto buffer = [&](bool needed, const Shape& sizes) {
      return needed ? kernels::empty(sizes, dt) : Tensor();
    };
    Tensor dx = buffer(should_compute_output(0), x.sizes());
    Tensor dw = buffer(should_compute_output(1), normalized_shape);
    Tensor db = buffer(should_compute_output(2), normalized_shape);
    kernels::layer_norm_backward(
        contiguous(to_dtype(grad, dt)),
        contiguous(x),
        M,
        N,
        contiguous(f32(result1_.unpack())),
        contiguous(f32(result2_.unpack())),
        weight.defined() ? contiguous(weight) : weight,
        dx,
        dw,
        db);
    out[0] = dx;
    out[1] = dw;
    out[2] = db;
    return;
  }
  std::vector<int64_t> inner = dim_range(axis, x.dim());
  std::vector<int64_t> outer = dim_range(0, axis);
  auto [mu, rstd] =
      GradMode::is_enabled()
          ? moments(x, inner, eps)
          : std::pair{f32(result1_.unpack()), f32(result2_.unpack())};
  Tensor xhat = mul(sub(x, mu), rstd);
  if (should_compute_output(0)) {
    Tensor gw = weight.defined() ? mul(grad, weight) : grad;
    out[0] = normalized_grad(gw, xhat, rstd, inner);
  }
  if (should_compute_output(1)) {
    out[1] = sum_over(mul(grad, xhat), outer);
  }
  if (should_compute_output(2)) {
    out[2] = sum_over(grad, outer);
  }
}

void NativeGroupNormBackward0::compute(
    const variable_list& g, variable_list& out) {
  // Unpacked once: a saved_tensors_hooks unpack hook runs once per backward.
  Tensor input = input_.unpack();
  compute_float(input, g, out);
  round_to(input.dtype(), out);
}

void NativeGroupNormBackward0::compute_float(
    const Tensor& input, const variable_list& g, variable_list& out) {
  Tensor x = f32(input);
  Tensor weight = f32(weight_.unpack());
  // (N, group, C / group, HxW): each group's statistics over dims 2 and 3.
  Shape grouped{N, group, C / group, HxW};
  Tensor x4 = reshape(x, grouped);
  Tensor grad = reshape(f32(g[0]), grouped);
  std::vector<int64_t> dims{2, 3};
  Shape stat{N, group, 1, 1};
  auto [mu, rstd] = GradMode::is_enabled()
                        ? moments(x4, dims, eps)
                        : std::pair{
                              reshape(f32(result1_.unpack()), stat),
                              reshape(f32(result2_.unpack()), stat)};
  Tensor xhat = mul(sub(x4, mu), rstd);
  Shape channels{1, group, C / group, 1};
  if (should_compute_output(0)) {
    Tensor gw = weight.defined() ? mul(grad, reshape(weight, channels)) : grad;
    out[0] = reshape(normalized_grad(gw, xhat, rstd, dims), x.sizes());
  }
  if (should_compute_output(1)) {
    out[1] = reshape(sum(mul(grad, xhat), {0, 3}, false), {C});
  }
  if (should_compute_output(2)) {
    out[2] = reshape(sum(grad, {0, 3}, false), {C});
  }
}

void NativeBatchNormBackward0::compute(
    const variable_list& g, variable_list& out) {
  // Unpacked once: a saved_tensors_hooks unpack hook runs once per backward.
  Tensor input = input_.unpack();
  compute_float(input, g, out);
  round_to(input.dtype(), out);
}

void NativeBatchNormBackward0::compute_float(
    const Tensor& input, const variable_list& g, variable_list& out) {
  Tensor x = f32(input);
  Tensor weight = f32(weight_.unpack());
  int64_t N = x.sizes()[0];
  int64_t C = x.sizes()[1];
  int64_t HxW = N * C > 0 ? x.numel() / (N * C) : 0;
  // (N, C, HxW): each channel's statistics over dims 0 and 2.
  Shape flat{N, C, HxW};
  Shape stat{1, C, 1};
  Tensor x3 = reshape(x, flat);
  Tensor grad = reshape(f32(g[0]), flat);
  std::vector<int64_t> dims{0, 2};
  Tensor mu, rstd;
  if (!training) {
    mu = reshape(f32(running_mean_.unpack()), stat);
    rstd = reshape(rsqrt(add(f32(running_var_.unpack()), scalar(eps))), stat);
  } else if (GradMode::is_enabled()) {
    std::tie(mu, rstd) = moments(x3, dims, eps);
  } else {
    mu = reshape(f32(result1_.unpack()), stat);
    rstd = reshape(f32(result2_.unpack()), stat);
  }
  Tensor xhat = mul(sub(x3, mu), rstd);
  if (should_compute_output(0)) {
    Tensor gw = weight.defined() ? mul(grad, reshape(weight, stat)) : grad;
    Tensor gx =
        training ? normalized_grad(gw, xhat, rstd, dims) : mul(gw, rstd);
    out[0] = reshape(gx, x.sizes());
  }
  if (should_compute_output(1)) {
    out[1] = sum(mul(grad, xhat), dims, false);
  }
  if (should_compute_output(2)) {
    out[2] = sum(grad, dims, false);
  }
}

void EmbeddingBackward0::compute(const variable_list& g, variable_list& out) {
  out[0] = embedding_dense_backward(
      to_dtype(g[0], weight_dtype),
      indices_.unpack(),
      num_weights,
      padding_idx,
      scale_grad_by_freq);
}

void EmbeddingDenseBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  // Each index's row of the incoming gradient, zero at padding_idx. No
  // scale_grad_by_freq factor, as torch's formula: embedding's own backward
  // (the node the grad came through) scales, so the chain is exact.
  Tensor indices = indices_.unpack();
  Tensor flat = reshape(to_dtype(indices, ScalarType::Int64), {-1});
  Tensor rows = index_select(g[0], 0, flat);
  if (padding_idx >= 0) {
    Tensor is_padding =
        eq(flat,
           wrapped_scalar(static_cast<double>(padding_idx), ScalarType::Int64));
    rows = masked_fill(
        rows,
        reshape(is_padding, {-1, 1}),
        wrapped_scalar(0, ScalarType::Float64));
  }
  Shape sizes = indices.sizes();
  sizes.push_back(-1);
  out[0] = view(rows, sizes);
}

}  // namespace npgrad::autograd

namespace npgrad::autograd {

namespace {
// The gradient of heads repeated from `like` (grouped-query attention): the
// sum over each group of repeated heads.
Tensor sum_heads(const Tensor& grad, const Tensor& like) {
  int64_t h = like.sizes()[1];
  if (grad.sizes()[1] == h) {
    return grad;
  }
  Shape grouped = grad.sizes();
  grouped[1] = h;
  grouped.insert(grouped.begin() + 2, grad.sizes()[1] / h);
  return ops::sum(ops::reshape(grad, grouped), {2}, false);
}
}  // namespace

void ScaledDotProductFlashAttentionForCpuBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor q = query_.unpack();
  Tensor k = key_.unpack();
  Tensor v = value_.unpack();
  Tensor output = output_.unpack(self_ptr());
  Tensor lse = logsumexp_.unpack();  // (the probabilities are recomputed)
  Tensor grad = g[0];
  variable_list grads(3);
  {
    // torch has no derivative of the flash backward: the gradients are
    // computed without a graph, and under create_graph they record its
    // NotImplemented node.
    AutoGradMode no_grad(false);
    double s = attention_scale(q, scale);
    Tensor scores = attention_scores(q, k, attn_mask_.unpack(), is_causal, s);
    Tensor p = attention_probs_from_lse(scores, lse);
    Tensor vv = repeat_heads(v, q.sizes()[1]);
    Tensor dp = matmul(grad, transpose(vv, -2, -1));
    // sum(dp * p) over the keys is sum(grad * output) over the features.
    Tensor ds = mul(p, sub(dp, sum(mul(grad, output), {-1}, true)));
    if (should_compute_output(0)) {
      grads[0] = mul(matmul(ds, repeat_heads(k, q.sizes()[1])), scalar(s));
    }
    if (should_compute_output(1)) {
      grads[1] = sum_heads(mul(matmul(transpose(ds, -2, -1), q), scalar(s)), k);
    }
    if (should_compute_output(2)) {
      grads[2] = sum_heads(matmul(transpose(p, -2, -1), grad), v);
    }
  }
  for (std::size_t i = 0; i < 3; ++i) {
    if (grads[i].defined()) {
      out[i] = record_not_implemented(
          grads[i],
          "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
          {grad, q, k, v, output, lse});
    }
  }
}

}  // namespace npgrad::autograd
