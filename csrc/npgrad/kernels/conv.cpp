// Sliding windows, the two halves of every convolution: im2col copies each
// window of the zero-padded input out as a column, col2im adds columns back
// into their windows. Both are plain loops over rows of the 1-d or 2-d input
// (1-d as height 1): the padding is never materialized, and a row of windows
// at stride 1 is one memcpy. NumPy's strided copy and add did the same work
// with one inner loop call per 32-element row, and the padded copy first.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/internal.h"

namespace npgrad::kernels {
namespace {

int64_t product(const Shape& s) {
  return std::accumulate(
      s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

// The view of `padded` (N, C, *spatial + 2 * padding) without its padding.
Tensor interior(
    const Tensor& padded, const Shape& sizes, const Shape& padding) {
  const Shape& st = padded.strides();
  int64_t offset = 0;
  for (std::size_t d = 0; d < padding.size(); ++d) {
    offset += padding[d] * st[2 + d];
  }
  return view_as_strided(padded, sizes, st, offset);
}

Shape padded_sizes(const Shape& sizes, const Shape& padding) {
  Shape out = sizes;
  for (std::size_t d = 0; d < padding.size(); ++d) {
    out[2 + d] += 2 * padding[d];
  }
  return out;
}

// The 2-d geometry of a 1-d or 2-d sliding window (1-d: height 1).
struct Geometry {
  int64_t n, c, h, w;  // input (N, C, H, W)
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t oh, ow;  // windows
};

Geometry geometry(
    const Shape& xs,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride,
    const Shape& windows) {
  NPGRAD_INTERNAL_ASSERT(
      kernel.size() == 1 || kernel.size() == 2, "im2col: 1 or 2 dims");
  Geometry g{};
  g.n = xs[0];
  g.c = xs[1];
  bool two = kernel.size() == 2;
  std::size_t last = kernel.size() - 1;
  g.h = two ? xs[2] : 1;
  g.kh = two ? kernel[0] : 1;
  g.dh = two ? dilation[0] : 1;
  g.ph = two ? padding[0] : 0;
  g.sh = two ? stride[0] : 1;
  g.oh = two ? windows[0] : 1;
  g.w = xs[2 + last];
  g.kw = kernel[last];
  g.dw = dilation[last];
  g.pw = padding[last];
  g.sw = stride[last];
  g.ow = windows[last];
  return g;
}

// [lo, hi): the windows o < count whose element o * s + off (the kernel
// offset k * d - p) falls inside [0, size).
void inside(
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

// An element of `size` bytes: im2col only copies, so any dtype is its bytes.
template <std::size_t size>
struct Bytes {
  unsigned char b[size];
};

template <typename E>
void im2col_loop(const Geometry& g, const E* x, E* out, bool batch_inner) {
  int64_t windows = g.oh * g.ow;
  int64_t rows = g.c * g.kh * g.kw;
  const E zero{};
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      const E* plane = x + (n * g.c + c) * g.h * g.w;
      for (int64_t ki = 0; ki < g.kh; ++ki) {
        for (int64_t kj = 0; kj < g.kw; ++kj) {
          int64_t r = (c * g.kh + ki) * g.kw + kj;
          E* dst = batch_inner ? out + r * g.n * windows + n * windows
                               : out + (n * rows + r) * windows;
          int64_t lo = 0, hi = 0;
          int64_t off_w = kj * g.dw - g.pw;
          inside(g.w, off_w, g.sw, g.ow, lo, hi);
          for (int64_t oh = 0; oh < g.oh; ++oh, dst += g.ow) {
            int64_t ih = oh * g.sh - g.ph + ki * g.dh;
            if (ih < 0 || ih >= g.h) {
              std::fill(dst, dst + g.ow, zero);
              continue;
            }
            const E* src = plane + ih * g.w;
            std::fill(dst, dst + lo, zero);
            if (g.sw == 1) {
              std::memcpy(
                  static_cast<void*>(dst + lo),
                  static_cast<const void*>(src + off_w + lo),
                  static_cast<std::size_t>(hi - lo) * sizeof(E));
            } else {
              for (int64_t o = lo; o < hi; ++o) {
                dst[o] = src[o * g.sw + off_w];
              }
            }
            std::fill(dst + hi, dst + g.ow, zero);
          }
        }
      }
    }
  }
}

// Adds each kernel position's columns in turn (the order of the sums is
// the kernel positions', for every output element).
template <typename T>
void col2im_loop(const Geometry& g, const T* cols, T* out) {
  int64_t windows = g.oh * g.ow;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      T* plane = out + (n * g.c + c) * g.h * g.w;
      for (int64_t ki = 0; ki < g.kh; ++ki) {
        for (int64_t kj = 0; kj < g.kw; ++kj) {
          int64_t r = (c * g.kh + ki) * g.kw + kj;
          const T* src = cols + (n * g.c * g.kh * g.kw + r) * windows;
          int64_t lo = 0, hi = 0;
          int64_t off_w = kj * g.dw - g.pw;
          inside(g.w, off_w, g.sw, g.ow, lo, hi);
          for (int64_t oh = 0; oh < g.oh; ++oh, src += g.ow) {
            int64_t ih = oh * g.sh - g.ph + ki * g.dh;
            if (ih < 0 || ih >= g.h) {
              continue;
            }
            T* dst = plane + ih * g.w;
            for (int64_t o = lo; o < hi; ++o) {
              dst[o * g.sw + off_w] += src[o];
            }
          }
        }
      }
    }
  }
}

}  // namespace

Tensor im2col(
    const Tensor& x,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride,
    const Shape& windows,
    bool batch_inner) {
  const Shape& xs = x.sizes();
  Tensor src = x.is_contiguous() ? x : cast(x, x.dtype());
  Geometry g = geometry(xs, kernel, dilation, padding, stride, windows);
  int64_t rows = xs[1] * product(kernel);
  int64_t count = product(windows);
  Shape flat =
      batch_inner ? Shape{rows, xs[0] * count} : Shape{xs[0], rows, count};
  Tensor out = empty(flat, x.dtype());
  auto run = [&](auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    im2col_loop<E>(
        g,
        static_cast<const E*>(src.data_ptr()),
        static_cast<E*>(out.data_ptr()),
        batch_inner);
  };
  switch (element_size(x.dtype())) {
    case 1:
      run(static_cast<Bytes<1>*>(nullptr));
      break;
    case 2:
      run(static_cast<Bytes<2>*>(nullptr));
      break;
    case 4:
      run(static_cast<Bytes<4>*>(nullptr));
      break;
    default:
      NPGRAD_INTERNAL_ASSERT(
          element_size(x.dtype()) == 8, "im2col: element size");
      run(static_cast<Bytes<8>*>(nullptr));
  }
  return out;
}

Tensor col2im(
    const Tensor& columns,
    int64_t channels,
    const Shape& output,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride,
    const Shape& windows) {
  IgnoreFpErrors quiet;
  std::size_t nd = kernel.size();
  int64_t n = columns.sizes()[0];
  ScalarType dtype = columns.dtype();
  if (dtype == ScalarType::Float32 || dtype == ScalarType::Float64) {
    Shape sizes = {n, channels};
    sizes.insert(sizes.end(), output.begin(), output.end());
    Tensor out = full(sizes, 0, dtype);
    Tensor cols = columns.is_contiguous() ? columns : cast(columns, dtype);
    Geometry g = geometry(sizes, kernel, dilation, padding, stride, windows);
    dispatch_floating(dtype, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      col2im_loop<T>(
          g,
          static_cast<const T*>(cols.data_ptr()),
          static_cast<T*>(out.data_ptr()));
    });
    return out;
  }
  // Other dtypes (the integer transposed convolutions): one strided NumPy
  // add per kernel position into a zero-padded output.
  int64_t kernel_numel = product(kernel);
  Shape out_sizes = {n, channels};
  out_sizes.insert(out_sizes.end(), output.begin(), output.end());
  Tensor out = full(padded_sizes(out_sizes, padding), 0, columns.dtype());
  const Shape& ost = out.strides();
  const Shape& cst = columns.strides();
  // One kernel position's columns (N, C, *windows), and where they go.
  Shape sizes = {n, channels};
  sizes.insert(sizes.end(), windows.begin(), windows.end());
  Shape src_strides = {cst[0], cst[1] * kernel_numel};
  Shape dst_strides = {ost[0], ost[1]};
  int64_t window_step = cst[2];
  for (std::size_t d = nd; d-- > 0;) {
    src_strides.insert(src_strides.begin() + 2, window_step);
    window_step *= windows[d];
  }
  for (std::size_t d = 0; d < nd; ++d) {
    dst_strides.push_back(ost[2 + d] * stride[d]);
  }
  Shape position(nd, 0);
  for (int64_t k = 0; k < kernel_numel; ++k) {
    int64_t offset = 0;
    for (std::size_t d = 0; d < nd; ++d) {
      offset += position[d] * dilation[d] * ost[2 + d];
    }
    Tensor dst = view_as_strided(out, sizes, dst_strides, offset);
    Tensor src = view_as_strided(columns, sizes, src_strides, k * cst[1]);
    binary_out(Binary::Add, dst, src, dst);
    for (std::size_t d = nd; d-- > 0;) {
      if (++position[d] < kernel[d]) {
        break;
      }
      position[d] = 0;
    }
  }
  if (std::all_of(
          padding.begin(), padding.end(), [](int64_t p) { return p == 0; })) {
    return out;
  }
  return cast(interior(out, out_sizes, padding), out.dtype());
}

}  // namespace npgrad::kernels
