// 2-D pooling over the last two dims of a (C, H, W) or (N, C, H, W) tensor:
// max (with the flat H * W index of each maximum) and average, and their
// backward scatters. The ops layer computes the windows (torch's output
// sizes, padding, dilation, ceil mode, adaptive bounds); these loops read the
// input through its own strides, so no padded or contiguous copy is made.
#include <cmath>
#include <limits>
#include <type_traits>

#include "npgrad/kernels/internal.h"
#include "npgrad/util/error.h"

namespace npgrad::kernels {
namespace {

// The (planes, H, W) geometry of a 3-D or 4-D tensor, strides in elements;
// plane p is (n, c) = (p / C, p % C).
struct Planes {
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t sn = 0, sc = 0, sh = 0, sw = 0;
};

Planes planes_of(const Tensor& t) {
  auto* a = arr(t);
  int nd = PyArray_NDIM(a);
  NPGRAD_INTERNAL_ASSERT(
      nd == 3 || nd == 4, "pooling wants a 3-D or 4-D tensor");
  const npy_intp* dims = PyArray_DIMS(a);
  const npy_intp* strides = PyArray_STRIDES(a);
  auto item = static_cast<int64_t>(PyArray_ITEMSIZE(a));
  Planes p;
  int off = nd - 3;
  if (nd == 4) {
    p.n = dims[0];
    p.sn = strides[0] / item;
  }
  p.c = dims[off];
  p.h = dims[off + 1];
  p.w = dims[off + 2];
  p.sc = strides[off] / item;
  p.sh = strides[off + 1] / item;
  p.sw = strides[off + 2] / item;
  return p;
}

template <typename T>
T* data(const Tensor& t) {
  return static_cast<T*>(PyArray_DATA(arr(t)));
}

// f(T{}) for the C type T of dtype: the floating types and, unless
// `only_long` (average pooling), the integer ones.
template <typename F>
void dispatch(ScalarType dtype, const char* name, bool only_long, F&& f) {
  bool integer = dtype != ScalarType::Int64 && !is_floating(dtype);
  switch (only_long && integer ? ScalarType::Bool : dtype) {
    case ScalarType::Float32:
      return f(float{});
    case ScalarType::Float64:
      return f(double{});
    case ScalarType::Int64:
      return f(int64_t{});
    case ScalarType::Int32:
      return f(int32_t{});
    case ScalarType::Int16:
      return f(int16_t{});
    case ScalarType::Int8:
      return f(int8_t{});
    case ScalarType::UInt8:
      return f(uint8_t{});
    default:
      NPGRAD_CHECK_TYPED(
          NotImplementedError,
          false,
          "\"",
          name,
          "\" not implemented for '",
          dtype_info(dtype).scalar_type_name,
          "'");
  }
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

template <typename T>
void max_loop(
    const Tensor& a,
    const PoolWindows& win,
    const Tensor& out,
    const Tensor& indices) {
  Planes p = planes_of(a);
  const T* x = data<T>(a);
  T* y = data<T>(out);
  int64_t* idx = data<int64_t>(indices);
  auto oh = static_cast<int64_t>(win.first[0].size());
  auto ow = static_cast<int64_t>(win.first[1].size());
  int64_t dh = win.step[0], dw = win.step[1];
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t c = 0; c < p.c; ++c) {
      const T* plane = x + n * p.sn + c * p.sc;
      for (int64_t i = 0; i < oh; ++i) {
        int64_t h0 = win.first[0][i], hc = win.count[0][i];
        for (int64_t j = 0; j < ow; ++j) {
          int64_t w0 = win.first[1][j], wc = win.count[1][j];
          T best = std::numeric_limits<T>::has_infinity
                       ? -std::numeric_limits<T>::infinity()
                       : std::numeric_limits<T>::lowest();
          int64_t at = h0 * p.w + w0;
          for (int64_t u = 0; u < hc; ++u) {
            int64_t h = h0 + u * dh;
            const T* row = plane + h * p.sh;
            for (int64_t v = 0; v < wc; ++v) {
              int64_t w = w0 + v * dw;
              T val = row[w * p.sw];
              if (val > best || is_nan(val)) {
                best = val;
                at = h * p.w + w;
              }
            }
          }
          *y++ = best;
          *idx++ = at;
        }
      }
    }
  }
}

template <typename T>
void avg_loop(
    const Tensor& a,
    const PoolWindows& win,
    const std::vector<int64_t>& divisors,
    const Tensor& out) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  Planes p = planes_of(a);
  const T* x = data<T>(a);
  T* y = data<T>(out);
  auto oh = static_cast<int64_t>(win.first[0].size());
  auto ow = static_cast<int64_t>(win.first[1].size());
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t c = 0; c < p.c; ++c) {
      const T* plane = x + n * p.sn + c * p.sc;
      for (int64_t i = 0; i < oh; ++i) {
        int64_t h0 = win.first[0][i], hc = win.count[0][i];
        for (int64_t j = 0; j < ow; ++j) {
          int64_t w0 = win.first[1][j], wc = win.count[1][j];
          Acc sum = 0;
          for (int64_t h = h0; h < h0 + hc; ++h) {
            const T* row = plane + h * p.sh;
            for (int64_t w = w0; w < w0 + wc; ++w) {
              sum += static_cast<Acc>(row[w * p.sw]);
            }
          }
          int64_t d = divisors[i * ow + j];
          *y++ = hc == 0 || wc == 0 ? T(0)
                                    : static_cast<T>(sum / static_cast<Acc>(d));
        }
      }
    }
  }
}

template <typename T>
void avg_backward_loop(
    const Tensor& grad,
    const PoolWindows& win,
    const std::vector<int64_t>& divisors,
    const Tensor& out) {
  Planes g = planes_of(grad);
  Planes p = planes_of(out);  // contiguous
  const T* gy = data<T>(grad);
  T* gx = data<T>(out);
  auto oh = static_cast<int64_t>(win.first[0].size());
  auto ow = static_cast<int64_t>(win.first[1].size());
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t c = 0; c < p.c; ++c) {
      T* plane = gx + n * p.sn + c * p.sc;
      const T* gplane = gy + n * g.sn + c * g.sc;
      for (int64_t i = 0; i < oh; ++i) {
        int64_t h0 = win.first[0][i], hc = win.count[0][i];
        for (int64_t j = 0; j < ow; ++j) {
          int64_t w0 = win.first[1][j], wc = win.count[1][j];
          T share = gplane[i * g.sh + j * g.sw] /
                    static_cast<T>(divisors[i * ow + j]);
          for (int64_t h = h0; h < h0 + hc; ++h) {
            for (int64_t w = w0; w < w0 + wc; ++w) {
              plane[h * p.sh + w * p.sw] += share;
            }
          }
        }
      }
    }
  }
}

template <typename T>
void scatter_loop(
    const Tensor& grad, const Tensor& indices, const Tensor& out) {
  Planes g = planes_of(grad);
  Planes ip = planes_of(indices);
  Planes p = planes_of(out);  // contiguous
  const T* gy = data<T>(grad);
  const int64_t* idx = data<int64_t>(indices);
  T* gx = data<T>(out);
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      T* plane = gx + n * p.sn + c * p.sc;
      const T* gplane = gy + n * g.sn + c * g.sc;
      const int64_t* iplane = idx + n * ip.sn + c * ip.sc;
      for (int64_t i = 0; i < g.h; ++i) {
        for (int64_t j = 0; j < g.w; ++j) {
          plane[iplane[i * ip.sh + j * ip.sw]] += gplane[i * g.sh + j * g.sw];
        }
      }
    }
  }
}

// The sizes of a's pooled result: the last two dims replaced.
Shape pooled_sizes(const Tensor& a, const PoolWindows& win) {
  Shape sizes = a.sizes();
  sizes[sizes.size() - 2] = static_cast<int64_t>(win.first[0].size());
  sizes[sizes.size() - 1] = static_cast<int64_t>(win.first[1].size());
  return sizes;
}

// f computed in float32 for a reduced-float tensor, the result rounded once.
template <typename F>
Tensor through_float32(const Tensor& a, F&& f) {
  return cast(f(cast(a, ScalarType::Float32)), a.dtype());
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d(
    const Tensor& a, const PoolWindows& win, const char* name) {
  if (is_reduced_float(a.dtype())) {
    Tensor indices;
    Tensor values = through_float32(a, [&](const Tensor& f) {
      auto r = max_pool2d(f, win, name);
      indices = r.second;
      return r.first;
    });
    return {values, indices};
  }
  Shape sizes = pooled_sizes(a, win);
  Tensor out = empty(sizes, a.dtype());
  Tensor indices = empty(sizes, ScalarType::Int64);
  dispatch(a.dtype(), name, false, [&](auto tag) {
    max_loop<decltype(tag)>(a, win, out, indices);
  });
  return {out, indices};
}

Tensor avg_pool2d(
    const Tensor& a,
    const PoolWindows& win,
    const std::vector<int64_t>& divisors,
    const char* name) {
  if (is_reduced_float(a.dtype())) {
    return through_float32(
        a, [&](const Tensor& f) { return avg_pool2d(f, win, divisors, name); });
  }
  Tensor out = empty(pooled_sizes(a, win), a.dtype());
  dispatch(a.dtype(), name, true, [&](auto tag) {
    avg_loop<decltype(tag)>(a, win, divisors, out);
  });
  return out;
}

Tensor avg_pool2d_backward(
    const Tensor& grad,
    const Shape& self_sizes,
    const PoolWindows& win,
    const std::vector<int64_t>& divisors) {
  if (is_reduced_float(grad.dtype())) {
    return through_float32(grad, [&](const Tensor& f) {
      return avg_pool2d_backward(f, self_sizes, win, divisors);
    });
  }
  Tensor out = full(self_sizes, 0, grad.dtype());
  dispatch(grad.dtype(), "avg_pool2d_backward", true, [&](auto tag) {
    avg_backward_loop<decltype(tag)>(grad, win, divisors, out);
  });
  return out;
}

Tensor scatter_to_planes(
    const Tensor& grad, const Tensor& indices, const Shape& self_sizes) {
  if (is_reduced_float(grad.dtype())) {
    return through_float32(grad, [&](const Tensor& f) {
      return scatter_to_planes(f, indices, self_sizes);
    });
  }
  Tensor out = full(self_sizes, 0, grad.dtype());
  dispatch(
      grad.dtype(), "max_pool2d_with_indices_backward", false, [&](auto tag) {
        scatter_loop<decltype(tag)>(grad, indices, out);
      });
  return out;
}

}  // namespace npgrad::kernels
