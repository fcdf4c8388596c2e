#pragma once
// The rows of a 2-d sliding window (a 1-d one has height 1), as the
// convolutions read and write them: im2col's columns and col2im's sums
// (conv.cpp), and the implicit columns of the convolution GEMM
// (conv_gemm.cpp). A window row is one kernel tap (ki, kj) at one row of
// output positions oy: the input row ih = oy * sh - ph + ki * dh at columns
// iw = ox * sw - pw + kj * dw, zero (never stored) in the padding.

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace npgrad::kernels {

struct WindowGeometry {
  int64_t n, c, h, w;  // the input (N, C, H, W)
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t oh, ow;  // the windows along H and W
};

/// [lo, hi): the positions o < count whose element o * s + off (the kernel
/// offset k * d - p) falls inside [0, size).
inline void window_inside(
    int64_t size,
    int64_t off,
    int64_t s,
    int64_t count,
    int64_t& lo,
    int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = off > size - 1 ? 0 : std::min(count, (size - 1 - off) / s + 1);
  lo = std::min(lo, count);
  hi = std::max(hi, lo);
}

/// dst[ox - ox0] for ox in [ox0, ox1): tap (ki, kj)'s elements of `plane`
/// (one H x W channel) at output row oy, zero in the padding.
template <typename E>
void read_window_row(
    const WindowGeometry& g,
    const E* plane,
    int64_t ki,
    int64_t kj,
    int64_t oy,
    int64_t ox0,
    int64_t ox1,
    E* dst) {
  const E zero{};
  int64_t ih = oy * g.sh - g.ph + ki * g.dh;
  if (ih < 0 || ih >= g.h) {
    std::fill(dst, dst + (ox1 - ox0), zero);
    return;
  }
  int64_t off = kj * g.dw - g.pw;
  int64_t lo = 0, hi = 0;
  window_inside(g.w, off, g.sw, g.ow, lo, hi);
  lo = std::clamp(lo, ox0, ox1);
  hi = std::clamp(hi, lo, ox1);
  std::fill(dst, dst + (lo - ox0), zero);
  if (hi > lo) {
    // The first element inside (pointers stay within the plane).
    const E* src = plane + ih * g.w + lo * g.sw + off;
    E* out = dst + (lo - ox0);
    if (g.sw == 1) {
      std::memcpy(
          static_cast<void*>(out),
          static_cast<const void*>(src),
          static_cast<std::size_t>(hi - lo) * sizeof(E));
    } else {
      for (int64_t o = 0; o < hi - lo; ++o) {
        out[o] = src[o * g.sw];
      }
    }
  }
  std::fill(dst + (hi - ox0), dst + (ox1 - ox0), zero);
}

/// The adjoint of read_window_row over a whole output row: src[ox] added
/// to its element of `plane` (the padding's dropped).
template <typename T>
void add_window_row(
    const WindowGeometry& g,
    const T* src,
    int64_t ki,
    int64_t kj,
    int64_t oy,
    T* plane) {
  int64_t ih = oy * g.sh - g.ph + ki * g.dh;
  if (ih < 0 || ih >= g.h) {
    return;
  }
  int64_t off = kj * g.dw - g.pw;
  int64_t lo = 0, hi = 0;
  window_inside(g.w, off, g.sw, g.ow, lo, hi);
  if (hi == lo) {
    return;
  }
  T* dst = plane + ih * g.w + lo * g.sw + off;
  for (int64_t o = 0; o < hi - lo; ++o) {
    dst[o * g.sw] += src[lo + o];
  }
}

}  // namespace npgrad::kernels
