// Upsampling (nearest, nearest-exact, linear, bilinear): torch's argument
// checks, the per-axis source indices and weights as torch's CPU kernels
// compute them, the forward as gathers along each axis, the backward as
// scatter-adds, and the nodes.
//
// Interpolating along W first and then along H computes
// h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11), the order of
// torch's kernel, with its fused multiply-adds, so the values are torch's.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/upsample_nodes.h"
#include "npgrad/kernels/float16.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

// torch's compute_scales_value / area_pixel_compute_scale (UpSample.h): the
// step between source positions, in the kernel's opmath type T.
template <typename T>
T area_pixel_scale(
    int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) {
    return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  }
  return (scale && *scale > 0.) ? static_cast<T>(1.0 / *scale)
                                : static_cast<T>(in) / static_cast<T>(out);
}

// torch's area_pixel_compute_source_index (never cubic here). torch's
// compiled kernel contracts scale * (dst + 0.5) - 0.5 into one fused
// multiply-add; so does this, for torch's weights to the bit.
template <typename T>
T source_index(T scale, int64_t dst, bool align_corners) {
  if (align_corners) {
    return scale * static_cast<T>(dst);
  }
  T src = std::fma(scale, static_cast<T>(dst) + T(0.5), T(-0.5));
  return src < T(0) ? T(0) : src;
}

// The plan of one spatial axis: for each output position, the source index
// (nearest) or the two source indices and their weights (linear).
struct AxisPlan {
  Tensor i0, i1, w0, w1;
};

Tensor int64_tensor(const std::vector<int64_t>& v) {
  Tensor t =
      kernels::empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
  std::copy(v.begin(), v.end(), static_cast<int64_t*>(t.data_ptr()));
  return t;
}

// A weight vector shaped to broadcast along axis `dim` of an ndim tensor.
template <typename T>
Tensor weight_tensor(const std::vector<T>& v, int64_t dim, int64_t ndim) {
  Shape shape(static_cast<std::size_t>(ndim - dim), 1);
  shape[0] = static_cast<int64_t>(v.size());
  Tensor t = kernels::empty(
      shape,
      std::is_same_v<T, double> ? ScalarType::Float64 : ScalarType::Float32);
  std::copy(v.begin(), v.end(), static_cast<T*>(t.data_ptr()));
  return t;
}

// torch's HelperInterpNearest and HelperInterpLinear index computations
// (scales and positions in opmath: double for float64, float otherwise; the
// floor is floorf, as torch's).
template <typename T>
AxisPlan plan_axis(
    UpsampleMode mode,
    int64_t in,
    int64_t out,
    std::optional<double> scale,
    bool align_corners,
    int64_t dim,
    int64_t ndim,
    bool half_weights) {
  auto n = static_cast<std::size_t>(out);
  std::vector<int64_t> i0(n);
  AxisPlan plan;
  if (mode != UpsampleMode::Linear) {
    T s = area_pixel_scale<T>(in, out, false, scale);
    for (int64_t i = 0; i < out; ++i) {
      auto idx =
          mode == UpsampleMode::Nearest
              ? static_cast<int64_t>(
                    std::floor(static_cast<float>(source_index<T>(s, i, true))))
              : static_cast<int64_t>(std::floor(
                    static_cast<float>(source_index<T>(s, i, false) + T(0.5))));
      i0[static_cast<std::size_t>(i)] = std::min(idx, in - 1);
    }
    plan.i0 = int64_tensor(i0);
    return plan;
  }
  std::vector<int64_t> i1(n);
  std::vector<T> w0(n), w1(n);
  T s = area_pixel_scale<T>(in, out, align_corners, scale);
  for (int64_t i = 0; i < out; ++i) {
    auto k = static_cast<std::size_t>(i);
    if (in == out) {
      i0[k] = i1[k] = i;
      w0[k] = T(1);
      w1[k] = T(0);
      continue;
    }
    T real = source_index<T>(s, i, align_corners);
    int64_t idx = std::min(
        static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
    T lambda = std::min(std::max(real - static_cast<T>(idx), T(0)), T(1));
    if (half_weights) {
      // Rounded to float16 and back (torch's scalar_t weights).
      lambda = kernels::half_to_float(
          kernels::float_to_half(static_cast<float>(lambda)));
    }
    i0[k] = idx;
    i1[k] = idx + (idx < in - 1 ? 1 : 0);
    w0[k] = T(1) - lambda;
    w1[k] = lambda;
    if (half_weights) {
      w0[k] = static_cast<T>(kernels::half_to_float(
          kernels::float_to_half(static_cast<float>(w0[k]))));
    }
  }
  plan.i0 = int64_tensor(i0);
  plan.i1 = int64_tensor(i1);
  plan.w0 = weight_tensor(w0, dim, ndim);
  plan.w1 = weight_tensor(w1, dim, ndim);
  return plan;
}

// One linear-interpolation step along an axis of a contiguous (outer, in,
// inner) buffer: out[o, j, k] = x[o, i0[j], k] * w0[j] + x[o, i1[j], k] *
// w1[j], rounded as torch's kernel rounds it (the first product fused into
// the sum: fma(x0, w0, x1 * w1)).
template <typename T>
void lerp_axis(
    const T* x,
    T* out,
    int64_t outer,
    int64_t in_len,
    int64_t out_len,
    int64_t inner,
    const AxisPlan& p) {
  const auto* i0 = static_cast<const int64_t*>(p.i0.data_ptr());
  const auto* i1 = static_cast<const int64_t*>(p.i1.data_ptr());
  const auto* w0 = static_cast<const T*>(p.w0.data_ptr());
  const auto* w1 = static_cast<const T*>(p.w1.data_ptr());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < out_len; ++j) {
      const T* a = x + (o * in_len + i0[j]) * inner;
      const T* b = x + (o * in_len + i1[j]) * inner;
      T* r = out + (o * out_len + j) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        r[k] = std::fma(a[k], w0[j], b[k] * w1[j]);
      }
    }
  }
}

// The sizes before and after dim, each multiplied out: a contiguous tensor
// as (outer, sizes[dim], inner).
std::pair<int64_t, int64_t> outer_inner(const Shape& sizes, int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) {
    outer *= sizes[static_cast<std::size_t>(d)];
  }
  for (auto d = static_cast<std::size_t>(dim) + 1; d < sizes.size(); ++d) {
    inner *= sizes[d];
  }
  return {outer, inner};
}

Tensor lerp(const Tensor& x, int64_t dim, const AxisPlan& p) {
  Tensor src = contiguous(x);
  Shape sizes = src.sizes();
  auto [outer, inner] = outer_inner(sizes, dim);
  int64_t in_len = sizes[static_cast<std::size_t>(dim)];
  int64_t out_len = p.i0.numel();
  sizes[static_cast<std::size_t>(dim)] = out_len;
  Tensor out = kernels::empty(sizes, src.dtype());
  kernels::dispatch_floating(src.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    lerp_axis(
        static_cast<const T*>(src.data_ptr()),
        static_cast<T*>(out.data_ptr()),
        outer,
        in_len,
        out_len,
        inner,
        p);
  });
  return out;
}

// The adjoint of one axis step, into a zeroed (outer, in, inner) buffer:
// each output position's gradient added to the source it read (nearest), or
// to the two sources it read times their weights (linear: lerp_axis).
template <typename T>
void axis_adjoint(
    const T* grad,
    T* acc,
    int64_t outer,
    int64_t in_len,
    int64_t out_len,
    int64_t inner,
    const AxisPlan& p,
    bool linear) {
  const auto* i0 = static_cast<const int64_t*>(p.i0.data_ptr());
  const auto* i1 = linear ? static_cast<const int64_t*>(p.i1.data_ptr()) : i0;
  const auto* w0 = linear ? static_cast<const T*>(p.w0.data_ptr()) : nullptr;
  const auto* w1 = linear ? static_cast<const T*>(p.w1.data_ptr()) : nullptr;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < out_len; ++j) {
      const T* g = grad + (o * out_len + j) * inner;
      T* a = acc + (o * in_len + i0[j]) * inner;
      if (!linear) {
        for (int64_t k = 0; k < inner; ++k) {
          a[k] += g[k];
        }
        continue;
      }
      T* b = acc + (o * in_len + i1[j]) * inner;
      for (int64_t k = 0; k < inner; ++k) {
        a[k] += g[k] * w0[j];
        b[k] += g[k] * w1[j];
      }
    }
  }
}

// The adjoint of one axis step along dim: grad (with the output's length
// there) to a new tensor with the input's length in_len.
Tensor adjoint(
    const Tensor& grad,
    int64_t dim,
    const AxisPlan& p,
    int64_t in_len,
    bool linear) {
  Tensor src = contiguous(grad);
  Shape sizes = src.sizes();
  auto [outer, inner] = outer_inner(sizes, dim);
  int64_t out_len = sizes[static_cast<std::size_t>(dim)];
  sizes[static_cast<std::size_t>(dim)] = in_len;
  Tensor acc = zeros(sizes, src.dtype());
  kernels::dispatch_floating(src.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    axis_adjoint(
        static_cast<const T*>(src.data_ptr()),
        static_cast<T*>(acc.data_ptr()),
        outer,
        in_len,
        out_len,
        inner,
        p,
        linear);
  });
  return acc;
}

std::vector<AxisPlan> plan_axes(
    const Shape& input_size, const UpsampleArgs& args, ScalarType dtype) {
  auto ndim = static_cast<int64_t>(input_size.size());
  // torch's 1-d kernel keeps a float16 input's weights in float16, its 2-d
  // kernel in float32.
  bool plans_1d = args.output_size.size() == 1;
  std::vector<AxisPlan> plans;
  for (std::size_t k = 0; k < args.output_size.size(); ++k) {
    int64_t dim = static_cast<int64_t>(k) + 2;
    int64_t in = input_size[static_cast<std::size_t>(dim)];
    int64_t out = args.output_size[k];
    kernels::dispatch_floating(opmath_type(dtype), [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      plans.push_back(plan_axis<T>(
          args.mode,
          in,
          out,
          args.scales[k],
          args.align_corners,
          dim,
          ndim,
          dtype == ScalarType::Float16 && plans_1d));
    });
  }
  return plans;
}

const char* spatial_name(std::size_t k, std::size_t n) {
  return n == 1 ? "W" : (k == 0 ? "H" : "W");
}

// torch's upsample_{1,2}d_common_check and the meta functions' checks.
void check_upsample(const Shape& input_size, const UpsampleArgs& args) {
  std::size_t n = args.output_size.size();
  NPGRAD_CHECK(
      input_size.size() == n + 2,
      "It is expected input_size equals to ",
      n + 2,
      ", but got size ",
      input_size.size());
  bool positive = true;
  for (std::size_t k = 0; k < n; ++k) {
    positive = positive && input_size[k + 2] > 0 && args.output_size[k] > 0;
  }
  if (!positive) {
    std::string in = "", out = "";
    for (std::size_t k = 0; k < n; ++k) {
      std::string sep = k == 0 ? "" : ", ";
      in += sep + spatial_name(k, n) + ": " + std::to_string(input_size[k + 2]);
      out +=
          sep + spatial_name(k, n) + ": " + std::to_string(args.output_size[k]);
    }
    NPGRAD_CHECK(
        false,
        "Input and output sizes should be greater than 0, but got input (",
        in,
        ")",
        n == 1 ? " and" : "",
        " output (",
        out,
        ")");
  }
  int64_t inner = 1;
  for (std::size_t d = 1; d < input_size.size(); ++d) {
    inner *= input_size[d];
  }
  NPGRAD_CHECK(
      inner != 0,
      "Non-empty ",
      n + 2,
      "D data tensor expected but got a tensor with sizes ",
      shape_str(input_size));
}

void check_dtype(ScalarType dtype, UpsampleMode mode) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      is_floating(dtype),
      mode == UpsampleMode::Linear ? "\"compute_indices_weights_linear\""
                                   : "\"compute_indices_weights_nearest\"",
      " not implemented for '",
      scalar_type_name(dtype),
      "'");
}

template <typename N1, typename N2>
void record_by_rank(
    const Tensor& out,
    const Tensor& input,
    const UpsampleArgs& args,
    const Shape& self_sizes) {
  auto fill = [&](auto node) {
    if (node) {
      node->args = args;
      node->self_sizes = self_sizes;
    }
  };
  if (args.output_size.size() == 1) {
    fill(record<N1>(out, {&input}));
  } else {
    fill(record<N2>(out, {&input}));
  }
}

}  // namespace

UpsampleArgs upsample_args(
    const Tensor& input,
    UpsampleMode mode,
    const std::optional<Shape>& output_size,
    const std::optional<std::vector<double>>& scale_factors,
    bool align_corners) {
  auto spatial =
      static_cast<std::size_t>(std::max<int64_t>(input.dim() - 2, 0));
  UpsampleArgs args;
  args.mode = mode;
  args.align_corners = align_corners;
  NPGRAD_CHECK(
      output_size.has_value() != scale_factors.has_value(),
      "Must specify exactly one of output_size and scale_factors");
  if (output_size) {
    NPGRAD_CHECK(
        output_size->size() == spatial,
        "It is expected output_size equals to ",
        spatial,
        ", but got size ",
        output_size->size());
    args.output_size = *output_size;
    args.scales.assign(spatial, std::nullopt);
    return args;
  }
  NPGRAD_CHECK(
      scale_factors->size() == spatial,
      "It is expected scale_factors equals to ",
      spatial,
      ", but got size ",
      scale_factors->size());
  for (std::size_t k = 0; k < spatial; ++k) {
    double size =
        static_cast<double>(input.sizes()[k + 2]) * (*scale_factors)[k];
    NPGRAD_CHECK(
        std::isfinite(size) && std::abs(size) < 9.2e18,
        "upsample: the output size of input size ",
        input.sizes()[k + 2],
        " and scale factor ",
        (*scale_factors)[k],
        " is out of range");
    args.output_size.push_back(static_cast<int64_t>(std::floor(size)));
    args.scales.emplace_back((*scale_factors)[k]);
  }
  return args;
}

Tensor upsample(const Tensor& input, const UpsampleArgs& args) {
  check_upsample(input.sizes(), args);
  check_dtype(input.dtype(), args.mode);
  // float16 and bfloat16 compute in float32 and round once, as torch's
  // kernels (their opmath type).
  ScalarType dtype = opmath_type(input.dtype());
  std::vector<AxisPlan> plans = plan_axes(input.sizes(), args, input.dtype());
  Tensor x;
  {
    AutoGradMode no_grad(false);
    x = to_dtype(input, dtype);
    for (auto k = static_cast<int64_t>(plans.size()) - 1; k >= 0; --k) {
      const AxisPlan& p = plans[static_cast<std::size_t>(k)];
      int64_t dim = k + 2;
      if (args.mode == UpsampleMode::Linear) {
        x = lerp(x, dim, p);
      } else {
        x = index_select(x, dim, p.i0);
      }
    }
    x = contiguous(to_dtype(x, input.dtype()));
  }
  switch (args.mode) {
    case UpsampleMode::Nearest:
      record_by_rank<UpsampleNearest1DBackward0, UpsampleNearest2DBackward0>(
          x, input, args, input.sizes());
      break;
    case UpsampleMode::NearestExact:
      record_by_rank<
          UpsampleNearestExact1DBackward0,
          UpsampleNearestExact2DBackward0>(x, input, args, input.sizes());
      break;
    case UpsampleMode::Linear:
      record_by_rank<UpsampleLinear1DBackward0, UpsampleBilinear2DBackward0>(
          x, input, args, input.sizes());
      break;
  }
  return x;
}

Tensor upsample_backward(
    const Tensor& grad, const UpsampleArgs& args, const Shape& input_size) {
  check_upsample(input_size, args);
  check_dtype(grad.dtype(), args.mode);
  ScalarType dtype = opmath_type(grad.dtype());
  std::vector<AxisPlan> plans = plan_axes(input_size, args, grad.dtype());
  Tensor g;
  {
    AutoGradMode no_grad(false);
    g = to_dtype(grad, dtype);
    // The adjoint of the forward: axes in the opposite order, each output
    // position's gradient added to the sources it read, times their weights.
    for (std::size_t k = 0; k < plans.size(); ++k) {
      g = adjoint(
          g,
          static_cast<int64_t>(k) + 2,
          plans[k],
          input_size[k + 2],
          args.mode == UpsampleMode::Linear);
    }
    g = to_dtype(g, grad.dtype());
  }
  switch (args.mode) {
    case UpsampleMode::Nearest:
      record_by_rank<
          UpsampleNearest1DBackwardBackward0,
          UpsampleNearest2DBackwardBackward0>(g, grad, args, input_size);
      break;
    case UpsampleMode::NearestExact:
      record_by_rank<
          UpsampleNearestExact1DBackwardBackward0,
          UpsampleNearestExact2DBackwardBackward0>(g, grad, args, input_size);
      break;
    case UpsampleMode::Linear:
      record_by_rank<
          UpsampleLinear1DBackwardBackward0,
          UpsampleBilinear2DBackwardBackward0>(g, grad, args, input_size);
      break;
  }
  return g;
}

}  // namespace npgrad::ops
