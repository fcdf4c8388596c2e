#include "npgrad/autograd/nodes/normalization_nodes.h"

#include <numeric>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/kernels/attention.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/kernels/normalization.h"
#include "npgrad/ops/attention.h"
#include "npgrad/ops/normalization.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

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

// P(v) = v - mean(v) - xhat * mean(v * xhat), the means over dims: the
// gradient w.r.t. x of xhat = (x - mean) * rstd is rstd * P(its gradient
// w.r.t. xhat). P is symmetric (a projection when eps is 0).
Tensor project(
    const Tensor& v, const Tensor& xhat, const std::vector<int64_t>& dims) {
  Tensor centered = sub(v, mean(v, dims, true));
  return sub(centered, mul(xhat, mean(mul(v, xhat), dims, true)));
}

}  // namespace

Tensor normalized_grad(
    const Tensor& gw,
    const Tensor& xhat,
    const Tensor& rstd,
    const std::vector<int64_t>& dims) {
  return mul(rstd, project(gw, xhat, dims));
}

namespace {

// a += t, a undefined counting as zero.
void accumulate(Tensor& a, const Tensor& t) {
  a = a.defined() ? add(a, t) : t;
}

// t in dtype (t itself when it is already, or undefined).
Tensor as_dtype(const Tensor& t, ScalarType dtype) {
  return t.defined() && t.dtype() != dtype ? to_dtype(t, dtype) : t;
}

// The statistics that normalize x over dims, from the saved ones. The double
// backward's formulas account for their dependence on x analytically, but a
// further derivative differentiates through the formulas: when one is
// recorded (grad mode on, x requiring grad) the statistics are recomputed from
// x with npgrad ops, eps recovered from the saved rstd (torch 2.13 treats
// them as constants there, and its third order w.r.t. the input is wrong).
std::pair<Tensor, Tensor> statistics(
    const Tensor& x,
    const std::vector<int64_t>& dims,
    const Tensor& saved_mean,
    const Tensor& saved_rstd) {
  if (!GradMode::is_enabled() || !requires_grad(x)) {
    return {saved_mean, saved_rstd};
  }
  VarArgs args;
  args.dims = dims;
  args.correction = 0.0;
  args.keepdim = true;
  auto [var, mu] = var_mean(x, args, false);
  Tensor eps;
  {
    AutoGradMode no_grad(false);
    eps = sub(reciprocal(mul(saved_rstd, saved_rstd)), var);
  }
  return {mu, rsqrt(add(var, eps))};
}

// The gradients w.r.t. (grad_out, x, gamma) of a normalization's first-order
// gradients over the groups along dims: with xhat = (x - mean) * rstd and
// g = gO * gamma, gx = rstd * P(g), ggamma = sum gO * xhat and gbeta = sum gO
// (the sums over what gamma broadcasts over), contracted with ggx, ggw, ggb
// (each may be undefined: zero). gamma, ggw and ggb broadcast against x
// (gamma undefined: 1). gamma's is unsummed: the caller sums it to gamma's
// shape.
//   grad_out: rstd * P(ggx) * gamma + xhat * ggw + ggb (the forward's JVP)
//   x:        rstd^2 * (-(mean(ggx * g) - mean(g) * mean(ggx) - m_g * m_gg)
//             * xhat - m_gg * P(g) - m_g * P(ggx)) + rstd * P(gO * ggw), with
//             m_g = mean(g * xhat), m_gg = mean(ggx * xhat) (differentiating
//             rstd and xhat, d rstd / dx = -rstd^2 * xhat / n)
//   gamma:    gO * rstd * P(ggx)
struct NormDoubleBackward {
  Tensor grad_out, input, gamma;
};
NormDoubleBackward normalization_double_backward(
    const Tensor& gO,
    const Tensor& x,
    const Tensor& mu,
    const Tensor& rstd,
    const Tensor& gamma,
    const Tensor& ggx,
    const Tensor& ggw,
    const Tensor& ggb,
    const std::vector<int64_t>& dims,
    std::array<bool, 3> mask) {
  NormDoubleBackward r;
  Tensor xhat = mul(sub(x, mu), rstd);
  Tensor g = gamma.defined() ? mul(gO, gamma) : gO;
  Tensor p_ggx = ggx.defined() ? project(ggx, xhat, dims) : Tensor();
  if (mask[0]) {
    if (ggx.defined()) {
      Tensor t = mul(rstd, p_ggx);
      accumulate(r.grad_out, gamma.defined() ? mul(t, gamma) : t);
    }
    if (ggw.defined()) {
      accumulate(r.grad_out, mul(xhat, ggw));
    }
    if (ggb.defined()) {
      accumulate(r.grad_out, ggb);
    }
    if (r.grad_out.defined() && r.grad_out.sizes() != x.sizes()) {
      r.grad_out = expand(r.grad_out, x.sizes());  // ggb alone
    }
  }
  if (mask[1]) {
    if (ggx.defined()) {
      Tensor m_g = mean(mul(g, xhat), dims, true);
      Tensor m_gg = mean(mul(ggx, xhat), dims, true);
      Tensor c =
          sub(sub(mean(mul(ggx, g), dims, true),
                  mul(mean(g, dims, true), mean(ggx, dims, true))),
              mul(m_g, m_gg));
      Tensor inner = neg(
          add(add(mul(c, xhat), mul(m_gg, project(g, xhat, dims))),
              mul(m_g, p_ggx)));
      accumulate(r.input, mul(mul(rstd, rstd), inner));
    }
    if (ggw.defined()) {
      accumulate(r.input, mul(rstd, project(mul(gO, ggw), xhat, dims)));
    }
  }
  if (mask[2] && ggx.defined()) {
    r.gamma = mul(gO, mul(rstd, p_ggx));
  }
  return r;
}

void check_not_requested(
    const Node& node, std::size_t i, const char* derivative) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      !node.should_compute_output(i),
      "the derivative for '",
      derivative,
      "' is not implemented.");
}

}  // namespace

void NativeLayerNormBackward0::compute(
    const variable_list& g, variable_list& out) {
  std::tie(out[0], out[1], out[2]) = native_layer_norm_backward(
      g[0],
      input_.unpack(),
      normalized_shape,
      result1_.unpack(),
      result2_.unpack(),
      weight_.unpack(),
      bias_.unpack(),
      {should_compute_output(0),
       should_compute_output(1),
       should_compute_output(2)});
}

void NativeLayerNormBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  check_not_requested(*this, 2, "native_layer_norm_backward mean");
  check_not_requested(*this, 3, "native_layer_norm_backward rstd");
  Tensor x = input_.unpack();
  Tensor gO = grad_out_.unpack();
  Tensor weight = weight_.unpack();
  int64_t axis = x.dim() - static_cast<int64_t>(normalized_shape.size());
  std::vector<int64_t> inner = dim_range(axis, x.dim());
  auto [mu, rstd] = statistics(x, inner, mean_.unpack(), rstd_.unpack());
  auto r = normalization_double_backward(
      gO,
      x,
      mu,
      rstd,
      weight,
      g[0],
      g[1],
      g[2],
      inner,
      {should_compute_output(0),
       should_compute_output(1),
       should_compute_output(4)});
  out[0] = as_dtype(r.grad_out, gO.dtype());
  out[1] = as_dtype(r.input, x.dtype());
  if (r.gamma.defined()) {
    out[4] = as_dtype(sum_over(r.gamma, dim_range(0, axis)), weight.dtype());
  }
  // out[5], bias: none, as torch's (the first-order gradients do not depend
  // on it).
}

void NativeGroupNormBackward0::compute(
    const variable_list& g, variable_list& out) {
  // Unpacked once: a saved_tensors_hooks unpack hook runs once per backward.
  Tensor input = input_.unpack();
  if (!GradMode::is_enabled()) {
    // No graph to record: one loop over each group.
    std::tie(out[0], out[1], out[2]) = group_norm_backward_values(
        g[0],
        input,
        result1_.unpack(),
        result2_.unpack(),
        weight_.unpack(),
        N,
        C,
        HxW,
        group,
        {should_compute_output(0),
         should_compute_output(1),
         should_compute_output(2)});
    return;
  }
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
  std::tie(out[0], out[1], out[2]) = native_batch_norm_backward(
      g[0],
      input_.unpack(),
      weight_.unpack(),
      running_mean_.unpack(),
      running_var_.unpack(),
      result1_.unpack(),
      result2_.unpack(),
      training,
      eps,
      {should_compute_output(0),
       should_compute_output(1),
       should_compute_output(2)});
}

void NativeBatchNormBackwardBackward0::compute(
    const variable_list& g, variable_list& out) {
  check_not_requested(*this, 3, "native_batch_norm_backward save_mean");
  check_not_requested(*this, 4, "native_batch_norm_backward save_invstd");
  Tensor input = input_.unpack();
  Tensor grad_out = grad_out_.unpack();
  Tensor weight = weight_.unpack();
  ChannelGeometry geometry(input);
  const Shape& flat = geometry.flat;
  const Shape& stat = geometry.stat;
  const std::vector<int64_t>& dims = geometry.dims;
  auto per_channel = [&](const Tensor& t) {
    return t.defined() ? reshape(t, stat) : t;
  };
  Tensor x = reshape(input, flat);
  Tensor gO = reshape(grad_out, flat);
  Tensor ggx = g[0].defined() ? reshape(g[0], flat) : g[0];
  Tensor gamma = per_channel(weight);
  Tensor ggw = per_channel(g[1]);
  Tensor ggb = per_channel(g[2]);
  Tensor d_grad_out, d_input, d_gamma;
  if (train) {
    auto [mu, rstd] = statistics(
        x,
        dims,
        per_channel(save_mean_.unpack()),
        per_channel(save_invstd_.unpack()));
    auto r = normalization_double_backward(
        gO,
        x,
        mu,
        rstd,
        gamma,
        ggx,
        ggw,
        ggb,
        dims,
        {should_compute_output(0),
         should_compute_output(1),
         should_compute_output(2)});
    d_grad_out = r.grad_out;
    d_input = r.input;
    d_gamma = r.gamma;
  } else {
    // y = xhat * gamma + beta with constant statistics: linear in x, and in
    // (gamma, beta).
    Tensor rstd = rsqrt(add(per_channel(running_var_.unpack()), scalar(eps)));
    Tensor xhat = mul(sub(x, per_channel(running_mean_.unpack())), rstd);
    if (should_compute_output(0)) {
      if (ggx.defined()) {
        Tensor t = mul(ggx, rstd);
        accumulate(d_grad_out, gamma.defined() ? mul(t, gamma) : t);
      }
      if (ggw.defined()) {
        accumulate(d_grad_out, mul(xhat, ggw));
      }
      if (ggb.defined()) {
        accumulate(d_grad_out, ggb);
      }
      if (d_grad_out.defined() && d_grad_out.sizes() != flat) {
        d_grad_out = expand(d_grad_out, flat);  // ggb alone
      }
    }
    if (should_compute_output(1) && ggw.defined()) {
      d_input = mul(mul(rstd, ggw), gO);
    }
    if (should_compute_output(2) && ggx.defined()) {
      d_gamma = mul(mul(ggx, gO), rstd);
    }
  }
  if (d_grad_out.defined()) {
    out[0] = as_dtype(reshape(d_grad_out, input.sizes()), grad_out.dtype());
  }
  if (d_input.defined()) {
    out[1] = as_dtype(reshape(d_input, input.sizes()), input.dtype());
  }
  if (d_gamma.defined()) {
    out[2] = as_dtype(sum(d_gamma, dims, false), weight.dtype());
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
    Tensor mask = attn_mask_.unpack();
    if (kernels::small_attention_fits(q, k, v, mask) &&
        grad.dtype() == q.dtype() && output.dtype() == q.dtype() &&
        lse.dtype() == q.dtype() && grad.sizes() == output.sizes()) {
      // See Note [Small attention in one loop].
      auto small = kernels::small_attention_backward(
          grad, q, k, v, mask, is_causal, s, output, lse);
      Tensor all[3] = {small.query, small.key, small.value};
      for (std::size_t i = 0; i < 3; ++i) {
        if (should_compute_output(i)) {
          grads[i] = all[i];
        }
      }
    } else {
      Tensor scores = attention_scores(q, k, mask, is_causal, s);
      Tensor p = attention_probs_from_lse(scores, lse);
      Tensor vv = repeat_heads(v, q.sizes()[1]);
      Tensor dp = matmul(grad, transpose(vv, -2, -1));
      // sum(dp * p) over the keys is sum(grad * output) over the features.
      Tensor ds = mul(p, sub(dp, sum(mul(grad, output), {-1}, true)));
      if (should_compute_output(0)) {
        grads[0] = mul(matmul(ds, repeat_heads(k, q.sizes()[1])), scalar(s));
      }
      if (should_compute_output(1)) {
        grads[1] =
            sum_heads(mul(matmul(transpose(ds, -2, -1), q), scalar(s)), k);
      }
      if (should_compute_output(2)) {
        grads[2] = sum_heads(matmul(transpose(p, -2, -1), grad), v);
      }
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
