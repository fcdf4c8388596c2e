// See Note [Small convolutions in direct loops] in conv_direct.h.
#include "npgrad/kernels/conv_direct.h"

#include <limits>
#include <type_traits>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"

namespace npgrad::kernels {
namespace {

struct Grid {
  int64_t n, small_c, oh, ow, large_c, ih, iw, kh, kw;
  int64_t per_group_small, per_group_large;
};

// f(n, k, o, c, i, t): every (small position, tap) pair that meets the large
// grid, with flat indices into small, large and weight.
template <typename F>
void for_each_pair(const Grid& d, const ConvWindows& g, F&& f) {
  for (int64_t n = 0; n < d.n; ++n) {
    for (int64_t k = 0; k < d.small_c; ++k) {
      int64_t group = k / d.per_group_small;
      for (int64_t cc = 0; cc < d.per_group_large; ++cc) {
        int64_t c = group * d.per_group_large + cc;
        int64_t w_base = (k * d.per_group_large + cc) * d.kh * d.kw;
        int64_t large_base = (n * d.large_c + c) * d.ih * d.iw;
        int64_t small_base = (n * d.small_c + k) * d.oh * d.ow;
        for (int64_t oy = 0; oy < d.oh; ++oy) {
          for (int64_t ty = 0; ty < d.kh; ++ty) {
            int64_t iy = oy * g.stride[0] - g.padding[0] + ty * g.dilation[0];
            if (iy < 0 || iy >= d.ih) {
              continue;
            }
            for (int64_t ox = 0; ox < d.ow; ++ox) {
              for (int64_t tx = 0; tx < d.kw; ++tx) {
                int64_t ix =
                    ox * g.stride[1] - g.padding[1] + tx * g.dilation[1];
                if (ix < 0 || ix >= d.iw) {
                  continue;
                }
                f(small_base + oy * d.ow + ox,
                  large_base + iy * d.iw + ix,
                  w_base + ty * d.kw + tx);
              }
            }
          }
        }
      }
    }
  }
}

Grid grid(
    const Shape& small,
    const Shape& large,
    const Shape& weight,
    const ConvWindows& g) {
  return {
      small[0],
      small[1],
      small[2],
      small[3],
      large[1],
      large[2],
      large[3],
      weight[2],
      weight[3],
      small[1] / g.groups,
      large[1] / g.groups};
}

template <typename T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

}  // namespace

int64_t direct_conv_work(const Shape& small, const Shape& weight) {
  int64_t work = 1;
  for (int64_t v :
       {small[0],
        small[1],
        small[2],
        small[3],
        weight[1],
        weight[2],
        weight[3]}) {
    if (v != 0 && work > std::numeric_limits<int64_t>::max() / v) {
      return std::numeric_limits<int64_t>::max();
    }
    work *= v;
  }
  return work;
}

Tensor conv_gather(
    const Tensor& large,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t oh,
    int64_t ow) {
  Shape small_sizes{large.sizes()[0], weight.sizes()[0], oh, ow};
  Tensor out = full(small_sizes, 0, large.dtype());
  Grid d = grid(small_sizes, large.sizes(), weight.sizes(), g);
  dispatch_floating(large.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* s = ptr<T>(out);
    const T* l = ptr<T>(large);
    const T* w = ptr<T>(weight);
    for_each_pair(d, g, [&](int64_t so, int64_t li, int64_t wi) {
      s[so] += l[li] * w[wi];
    });
  });
  return out;
}

Tensor conv_scatter(
    const Tensor& small,
    const Tensor& weight,
    const ConvWindows& g,
    int64_t ih,
    int64_t iw) {
  Shape large_sizes{small.sizes()[0], weight.sizes()[1] * g.groups, ih, iw};
  Tensor out = full(large_sizes, 0, small.dtype());
  Grid d = grid(small.sizes(), large_sizes, weight.sizes(), g);
  dispatch_floating(small.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* s = ptr<T>(small);
    T* l = ptr<T>(out);
    const T* w = ptr<T>(weight);
    for_each_pair(d, g, [&](int64_t so, int64_t li, int64_t wi) {
      l[li] += s[so] * w[wi];
    });
  });
  return out;
}

Tensor conv_weight_grad(
    const Tensor& small,
    const Tensor& large,
    const ConvWindows& g,
    int64_t kh,
    int64_t kw) {
  Shape weight_sizes{small.sizes()[1], large.sizes()[1] / g.groups, kh, kw};
  Tensor out = full(weight_sizes, 0, small.dtype());
  Grid d = grid(small.sizes(), large.sizes(), weight_sizes, g);
  dispatch_floating(small.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* s = ptr<T>(small);
    const T* l = ptr<T>(large);
    T* w = ptr<T>(out);
    for_each_pair(d, g, [&](int64_t so, int64_t li, int64_t wi) {
      w[wi] += s[so] * l[li];
    });
  });
  return out;
}

}  // namespace npgrad::kernels
