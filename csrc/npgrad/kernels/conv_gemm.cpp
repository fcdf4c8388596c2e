// See Note [Convolutions as GEMMs] in conv_gemm.h.
#include "npgrad/kernels/conv_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "npgrad/kernels/gemm.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/util/error.h"

namespace npgrad::kernels {
namespace {

// One sample's channels, zero-padded, in planes of hp x wp. At stride 1 the
// window of output position (oy, ox) starts at element oy * wp + ox of each
// plane, and kernel tap (c, ki, kj) is a fixed offset from it (tap_offsets).
class PaddedSample {
 public:
  // h x w planes at row ph, column pw of hp x wp ones; `slack`: zeros after
  // the last plane, for reads that run past it.
  PaddedSample(
      int64_t channels,
      int64_t h,
      int64_t w,
      int64_t ph,
      int64_t pw,
      int64_t hp,
      int64_t wp,
      int64_t slack)
      : channels_(channels),
        h_(h),
        w_(w),
        ph_(ph),
        pw_(pw),
        wp_(wp),
        plane_(hp * wp),
        data_(static_cast<std::size_t>(channels * plane_ + slack), 0.0f) {}

  // The sample's channels (contiguous h x w planes) inside the padding,
  // which stays zero.
  void load(const float* x) {
    for (int64_t c = 0; c < channels_; ++c) {
      for (int64_t i = 0; i < h_; ++i) {
        std::memcpy(
            data_.data() + c * plane_ + (i + ph_) * wp_ + pw_,
            x + (c * h_ + i) * w_,
            static_cast<std::size_t>(w_) * sizeof(float));
      }
    }
  }

  const float* channel(int64_t c) const { return data_.data() + c * plane_; }
  int64_t row_pitch() const { return wp_; }

  // Tap (c, ki, kj)'s offset from a window's start, for c < channels, in
  // im2col's row order.
  std::vector<int64_t> tap_offsets(
      int64_t channels, int64_t kh, int64_t kw, int64_t dh, int64_t dw) const {
    std::vector<int64_t> out;
    out.reserve(static_cast<std::size_t>(channels * kh * kw));
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t ki = 0; ki < kh; ++ki) {
        for (int64_t kj = 0; kj < kw; ++kj) {
          out.push_back(c * plane_ + ki * dh * wp_ + kj * dw);
        }
      }
    }
    return out;
  }

 private:
  int64_t channels_, h_, w_, ph_, pw_, wp_, plane_;
  std::vector<float> data_;
};

const float* floats(const Tensor& t) {
  return static_cast<const float*>(t.data_ptr());
}

float* floats(Tensor& t) {
  return static_cast<float*>(t.data_ptr());
}

// out (N, K, oh, ow) = the stride-1 convolution of x (N, C, h, w) padded by
// (ph, pw), with each group's weight the (K / groups) x (C / groups * kh *
// kw) rows of `weight` from group * (K / groups) on.
//
// Each sample's product runs over the positions oy * wp + ox of its padded
// planes for every ox < wp, so that a tap's row of B is contiguous in the
// padded image (RowOffsetsB); the wp - ow positions past each row of
// windows compute values that are dropped.
void gather(
    const float* x,
    const Shape& xs,
    const float* weight,
    int64_t out_channels,
    int64_t kh,
    int64_t kw,
    const ConvWindows& g,
    int64_t oh,
    int64_t ow,
    float* out) {
  int64_t n = xs[0], channels = xs[1], h = xs[2], w = xs[3];
  int64_t groups = g.groups;
  int64_t cg = channels / groups, kg = out_channels / groups;
  int64_t rows = cg * kh * kw;
  int64_t dh = g.dilation[0], dw = g.dilation[1];
  // Zeros past the padding where more windows are asked for than it has (a
  // transposed convolution's output_padding); the last plane's reads of the
  // dropped positions run up to (kw - 1) * dw past it.
  int64_t ph = g.padding[0], pw = g.padding[1];
  int64_t hp = std::max(h + 2 * ph, oh + (kh - 1) * dh);
  int64_t wp = std::max(w + 2 * pw, ow + (kw - 1) * dw);
  PaddedSample sample(channels, h, w, ph, pw, hp, wp, (kw - 1) * dw);
  std::vector<int64_t> taps = sample.tap_offsets(cg, kh, kw, dh, dw);
  int64_t positions = oh * wp;
  bool direct = wp == ow;  // no dropped positions: straight into out
  std::vector<float> product(
      direct ? 0 : static_cast<std::size_t>(out_channels * positions));
  for (int64_t s = 0; s < n; ++s) {
    sample.load(x + s * channels * h * w);
    float* sample_out = out + s * out_channels * oh * ow;
    float* c = direct ? sample_out : product.data();
    for (int64_t group = 0; group < groups; ++group) {
      gemm::sgemm(
          kg,
          positions,
          rows,
          gemm::Matrix{weight + group * kg * rows, rows, 1},
          gemm::RowOffsetsB{sample.channel(group * cg), taps.data()},
          c + group * kg * positions,
          positions,
          false);
    }
    if (direct) {
      continue;
    }
    for (int64_t k = 0; k < out_channels; ++k) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        std::memcpy(
            sample_out + (k * oh + oy) * ow,
            product.data() + k * positions + oy * wp,
            static_cast<std::size_t>(ow) * sizeof(float));
      }
    }
  }
}

// The transposed columns of one padded sample: B(p, j) = tap j of window p
// (p = oy * ow + ox over the windows, j over one group's taps).
struct WindowTaps {
  const float* base;  // the group's first padded plane
  const int64_t* taps;
  int64_t ow, wp;
};

void pack_window_taps(
    const void* source,
    int64_t p0,
    int64_t kc,
    int64_t j0,
    int64_t width,
    float* out) {
  const WindowTaps& s = *static_cast<const WindowTaps*>(source);
  const float* columns[gemm::kSliverWidth];
  // Runs of windows along one row, whose taps are contiguous.
  for (int64_t p = p0; p < p0 + kc;) {
    int64_t oy = p / s.ow, ox = p % s.ow;
    int64_t run = std::min(s.ow - ox, p0 + kc - p);
    const float* start = s.base + oy * s.wp + ox;
    for (int64_t j = 0; j < width; ++j) {
      columns[j] = start + s.taps[j0 + j];
    }
    gemm::pack_columns(
        columns, width, run, out + (p - p0) * gemm::kSliverWidth);
    p += run;
  }
}

}  // namespace

bool conv_gemm_applies(
    ScalarType dtype, const ConvWindows& g, int64_t kh, int64_t kw) {
  return dtype == ScalarType::Float32 && gemm::available() &&
         g.stride[0] == 1 && g.stride[1] == 1 &&
         g.padding[0] <= g.dilation[0] * (kh - 1) &&
         g.padding[1] <= g.dilation[1] * (kw - 1);
}

Tensor conv_gemm_gather(
    const Tensor& large,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t oh,
    int64_t ow) {
  const Shape& ws = weight.sizes();
  Tensor out = empty({large.sizes()[0], ws[0], oh, ow}, ScalarType::Float32);
  gather(
      floats(large),
      large.sizes(),
      floats(weight),
      ws[0],
      ws[2],
      ws[3],
      g,
      oh,
      ow,
      floats(out));
  return out;
}

Tensor conv_gemm_scatter(
    const Tensor& small,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t ih,
    int64_t iw) {
  // At stride 1 the adjoint of a convolution is the convolution of small,
  // padded by d * (k - 1) - p, with each group's weight transposed (its
  // channels swapped) and flipped: tap t becomes kh * kw - 1 - t.
  const Shape& ws = weight.sizes();
  int64_t k = ws[0], cg = ws[1], kh = ws[2], kw = ws[3], taps = kh * kw;
  int64_t groups = g.groups, kg = k / groups;
  std::vector<float> flipped(static_cast<std::size_t>(k * cg * taps));
  const float* w = floats(weight);
  for (int64_t group = 0; group < groups; ++group) {
    float* dst = flipped.data() + group * cg * kg * taps;
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t kk = 0; kk < kg; ++kk) {
        const float* src = w + ((group * kg + kk) * cg + c) * taps;
        for (int64_t t = 0; t < taps; ++t) {
          dst[(c * kg + kk) * taps + t] = src[taps - 1 - t];
        }
      }
    }
  }
  ConvWindows adjoint = g;
  adjoint.padding[0] = g.dilation[0] * (kh - 1) - g.padding[0];
  adjoint.padding[1] = g.dilation[1] * (kw - 1) - g.padding[1];
  Tensor out =
      empty({small.sizes()[0], cg * groups, ih, iw}, ScalarType::Float32);
  gather(
      floats(small),
      small.sizes(),
      flipped.data(),
      cg * groups,
      kh,
      kw,
      adjoint,
      ih,
      iw,
      floats(out));
  return out;
}

Tensor conv_gemm_weight_grad(
    const Tensor& small,
    const Tensor& large,
    const ConvWindows& g,
    int64_t kh,
    int64_t kw) {
  const Shape& ss = small.sizes();
  const Shape& ls = large.sizes();
  int64_t n = ss[0], k = ss[1], oh = ss[2], ow = ss[3];
  int64_t channels = ls[1], h = ls[2], w = ls[3];
  int64_t groups = g.groups, kg = k / groups, cg = channels / groups;
  int64_t rows = cg * kh * kw, windows = oh * ow;
  Tensor out = full({k, cg, kh, kw}, 0, ScalarType::Float32);
  if (n == 0) {
    return out;
  }
  int64_t ph = g.padding[0], pw = g.padding[1];
  PaddedSample sample(channels, h, w, ph, pw, h + 2 * ph, w + 2 * pw, 0);
  std::vector<int64_t> taps =
      sample.tap_offsets(cg, kh, kw, g.dilation[0], g.dilation[1]);
  const float* grad = floats(small);
  float* dw = floats(out);
  for (int64_t s = 0; s < n; ++s) {
    sample.load(floats(large) + s * channels * h * w);
    for (int64_t group = 0; group < groups; ++group) {
      WindowTaps source{
          sample.channel(group * cg), taps.data(), ow, sample.row_pitch()};
      gemm::sgemm(
          kg,
          rows,
          windows,
          gemm::Matrix{grad + (s * k + group * kg) * windows, windows, 1},
          gemm::PackedB{&pack_window_taps, &source},
          dw + group * kg * rows,
          rows,
          s > 0);
    }
  }
  return out;
}

}  // namespace npgrad::kernels
