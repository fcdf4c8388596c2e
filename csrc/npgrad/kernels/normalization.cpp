// Normalization statistics and affine maps, and embedding's gradient
// accumulation, as plain loops over contiguous buffers (float32, float64).
#include "npgrad/kernels/normalization.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/simd.h"
#include "npgrad/util/error.h"

namespace npgrad::kernels {
namespace {

template <typename T>
T* data(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// Row sums in kLanes independent partial sums, added pairwise at the end:
// the compiler may not reorder a single float accumulator, so one running
// sum is a chain of dependent adds (one add latency per element) that it
// cannot vectorize; the lanes are independent, and become vector registers.
constexpr int64_t kLanes = 8;

template <typename T>
T add_lanes(const T (&acc)[kLanes], T tail) {
  T a = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  T b = (acc[4] + acc[5]) + (acc[6] + acc[7]);
  return (a + b) + tail;
}

// sum over n < N of f(n).
// Inlined always: also into the AVX2 copies of the loops that call it.
template <typename T, typename F>
__attribute__((always_inline)) inline T lane_sum(int64_t N, F f) {
  T acc[kLanes] = {};
  int64_t n = 0;
  for (; n + kLanes <= N; n += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      acc[j] += f(n + j);
    }
  }
  T tail = 0;
  for (; n < N; ++n) {
    tail += f(n);
  }
  return add_lanes(acc, tail);
}

}  // namespace

namespace {

// The mean and 1 / sqrt(biased variance + eps) of one row: two passes over
// it (it stays in cache), the mean, then the sum of squared deviations,
// accumulated in lanes.
template <typename T>
void one_row_moments(const T* row, int64_t N, double eps, T& mean, T& rstd) {
  T s = lane_sum<T>(N, [row](int64_t n) { return row[n]; });
  T mu = N > 0 ? s / static_cast<T>(N) : T(0);
  T ss = lane_sum<T>(N, [row, mu](int64_t n) {
    T d = row[n] - mu;
    return d * d;
  });
  T var = N > 0 ? ss / static_cast<T>(N) : std::nan("");
  mean = mu;
  rstd = static_cast<T>(1.0 / std::sqrt(static_cast<double>(var) + eps));
}

}  // namespace

void row_moments(
    const Tensor& x,
    int64_t M,
    int64_t N,
    double eps,
    const Tensor& mean,
    const Tensor& rstd) {
  dispatch_floating(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* px = data<T>(x);
    T* pm = data<T>(mean);
    T* pr = data<T>(rstd);
    for (int64_t m = 0; m < M; ++m) {
      one_row_moments(px + m * N, N, eps, pm[m], pr[m]);
    }
  });
}

void layer_norm_forward(
    const Tensor& x,
    int64_t M,
    int64_t N,
    double eps,
    const Tensor& weight,
    const Tensor& bias,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& out) {
  dispatch_floating(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* px = data<T>(x);
    T* pm = data<T>(mean);
    T* pr = data<T>(rstd);
    const T* pw = weight.defined() ? data<T>(weight) : nullptr;
    const T* pb = bias.defined() ? data<T>(bias) : nullptr;
    T* po = data<T>(out);
    for (int64_t m = 0; m < M; ++m) {
      const T* row = px + m * N;
      T* orow = po + m * N;
      one_row_moments(row, N, eps, pm[m], pr[m]);
      T mu = pm[m];
      T r = pr[m];
      // One loop per case (the same operations in the same order as
      // normalizing, then scaling, then shifting): each element is written
      // once.
      if (pw && pb) {
        for (int64_t n = 0; n < N; ++n) {
          orow[n] = (row[n] - mu) * r * pw[n] + pb[n];
        }
      } else if (pw) {
        for (int64_t n = 0; n < N; ++n) {
          orow[n] = (row[n] - mu) * r * pw[n];
        }
      } else if (pb) {
        for (int64_t n = 0; n < N; ++n) {
          orow[n] = (row[n] - mu) * r + pb[n];
        }
      } else {
        for (int64_t n = 0; n < N; ++n) {
          orow[n] = (row[n] - mu) * r;
        }
      }
    }
  });
}

void channel_moments(
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    std::vector<double>& mean,
    std::vector<double>& var) {
  mean.assign(C, 0.0);
  var.assign(C, 0.0);
  double count = static_cast<double>(N * HxW);
  dispatch_floating(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* px = data<T>(x);
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T* block = px + (n * C + c) * HxW;
        T bs = 0;
        for (int64_t i = 0; i < HxW; ++i) {
          bs += block[i];
        }
        s += static_cast<double>(bs);
      }
      double mu = s / count;
      double ss = 0;
      for (int64_t n = 0; n < N; ++n) {
        const T* block = px + (n * C + c) * HxW;
        T bss = 0;
        T tmu = static_cast<T>(mu);
        for (int64_t i = 0; i < HxW; ++i) {
          T d = block[i] - tmu;
          bss += d * d;
        }
        ss += static_cast<double>(bss);
      }
      mean[c] = mu;
      var[c] = ss / count;
    }
  });
}

void channel_affine(
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    const std::vector<double>& center,
    const std::vector<double>& scale,
    const std::vector<double>& shift,
    const Tensor& out) {
  bool per_sample = static_cast<int64_t>(scale.size()) == N * C;
  dispatch_floating(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* px = data<T>(x);
    T* po = data<T>(out);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t c = 0; c < C; ++c) {
        std::size_t k = static_cast<std::size_t>(per_sample ? n * C + c : c);
        T mu = static_cast<T>(center[k]);
        T a = static_cast<T>(scale[k]);
        T b = static_cast<T>(shift[k]);
        const T* block = px + (n * C + c) * HxW;
        T* oblock = po + (n * C + c) * HxW;
        for (int64_t i = 0; i < HxW; ++i) {
          oblock[i] = (block[i] - mu) * a + b;
        }
      }
    }
  });
}

void embedding_accumulate(
    const Tensor& grad,
    const Tensor& indices,
    int64_t padding_idx,
    const std::vector<double>& row_scale,
    const Tensor& out) {
  int64_t K = indices.numel();
  int64_t D = K > 0 ? grad.numel() / K : 0;
  const auto* pi = static_cast<const int64_t*>(indices.data_ptr());
  dispatch_floating(grad.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* pg = data<T>(grad);
    T* po = data<T>(out);
    for (int64_t k = 0; k < K; ++k) {
      if (pi[k] == padding_idx) {
        continue;
      }
      const T* src = pg + k * D;
      T* dst = po + pi[k] * D;
      if (row_scale.empty()) {
        for (int64_t d = 0; d < D; ++d) {
          dst[d] += src[d];
        }
      } else {
        T s = static_cast<T>(row_scale[static_cast<std::size_t>(k)]);
        for (int64_t d = 0; d < D; ++d) {
          dst[d] += src[d] * s;
        }
      }
    }
  });
}

}  // namespace npgrad::kernels

namespace npgrad::kernels {

namespace {

// Note [layer_norm's backward in two passes]
// Per row one pass for the two sums of the input's gradient and one for the
// gradients (the three in one loop when all are wanted, the common case),
// x_hat and grad * weight recomputed in each (nothing stored between them),
// the row in cache for the second. __restrict: no two buffers overlap, and
// GCC vectorizes the loops only with it (the run-time overlap checks it adds
// otherwise are too many). On a CPU with AVX2 and FMA a copy of the loops
// compiled for it runs (64x128x512 float32: 2.3 -> 1.6 ms, torch 1.55; the
// copy GCC makes for AVX-512 was slower than both). `weighted`: whether pw
// is the weight (without one, grad * weight is grad); any of pdx, pdw, pdb
// may be null; pdw and pdb are accumulated.
template <typename T, bool weighted>
__attribute__((always_inline)) inline void layer_norm_backward_rows(
    const T* __restrict pg,
    const T* __restrict px,
    int64_t M,
    int64_t N,
    const T* __restrict pm,
    const T* __restrict pr,
    const T* __restrict pw,
    T* __restrict pdx,
    T* __restrict pdw,
    T* __restrict pdb) {
  const T inv_n = N > 0 ? T(1) / static_cast<T>(N) : T(0);
  for (int64_t m = 0; m < M; ++m) {
    const T* __restrict g = pg + m * N;
    const T* __restrict row = px + m * N;
    const T mu = pm[m];
    const T r = pr[m];
    auto gw = [=](int64_t n) {
      if constexpr (weighted) {
        return g[n] * pw[n];
      } else {
        return g[n];
      }
    };
    T a = 0, b = 0;
    if (pdx != nullptr) {
      a = lane_sum<T>(N, gw) * inv_n;
      b = lane_sum<T>(
              N, [=](int64_t n) { return gw(n) * ((row[n] - mu) * r); }) *
          inv_n;
    }
    T* __restrict out = pdx != nullptr ? pdx + m * N : nullptr;
    if (out != nullptr && pdw != nullptr && pdb != nullptr) {
      for (int64_t n = 0; n < N; ++n) {
        T xhat = (row[n] - mu) * r;
        out[n] = r * (gw(n) - a - xhat * b);
        pdw[n] += g[n] * xhat;
        pdb[n] += g[n];
      }
      continue;
    }
    if (out != nullptr) {
      for (int64_t n = 0; n < N; ++n) {
        out[n] = r * (gw(n) - a - ((row[n] - mu) * r) * b);
      }
    }
    if (pdw != nullptr) {
      for (int64_t n = 0; n < N; ++n) {
        pdw[n] += g[n] * ((row[n] - mu) * r);
      }
    }
    if (pdb != nullptr) {
      for (int64_t n = 0; n < N; ++n) {
        pdb[n] += g[n];
      }
    }
  }
}

template <typename T, bool weighted>
void layer_norm_backward_generic(
    const T* pg,
    const T* px,
    int64_t M,
    int64_t N,
    const T* pm,
    const T* pr,
    const T* pw,
    T* pdx,
    T* pdw,
    T* pdb) {
  layer_norm_backward_rows<T, weighted>(
      pg, px, M, N, pm, pr, pw, pdx, pdw, pdb);
}

#ifdef NPGRAD_AVX512_BUILD
template <bool weighted>
NPGRAD_AVX2 void layer_norm_backward_avx2(
    const float* pg,
    const float* px,
    int64_t M,
    int64_t N,
    const float* pm,
    const float* pr,
    const float* pw,
    float* pdx,
    float* pdw,
    float* pdb) {
  layer_norm_backward_rows<float, weighted>(
      pg, px, M, N, pm, pr, pw, pdx, pdw, pdb);
}
#endif

}  // namespace

void layer_norm_backward(
    const Tensor& grad,
    const Tensor& x,
    int64_t M,
    int64_t N,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& weight,
    const Tensor& dx,
    const Tensor& dweight,
    const Tensor& dbias) {
  dispatch_floating(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* pg = data<T>(grad);
    const T* px = data<T>(x);
    const T* pm = data<T>(mean);
    const T* pr = data<T>(rstd);
    const T* pw = weight.defined() ? data<T>(weight) : nullptr;
    T* pdx = dx.defined() ? data<T>(dx) : nullptr;
    std::vector<T> dw(dweight.defined() ? N : 0, T(0));
    std::vector<T> db(dbias.defined() ? N : 0, T(0));
    // See Note [layer_norm's backward in two passes].
    auto rows = pw ? &layer_norm_backward_generic<T, true>
                   : &layer_norm_backward_generic<T, false>;
#ifdef NPGRAD_AVX512_BUILD
    if constexpr (std::is_same_v<T, float>) {
      if (cpu_has_avx2_fma()) {
        rows = pw ? &layer_norm_backward_avx2<true>
                  : &layer_norm_backward_avx2<false>;
      }
    }
#endif
    rows(
        pg,
        px,
        M,
        N,
        pm,
        pr,
        pw,
        pdx,
        dw.empty() ? nullptr : dw.data(),
        db.empty() ? nullptr : db.data());
    if (!dw.empty()) {
      std::copy(dw.begin(), dw.end(), data<T>(dweight));
    }
    if (!db.empty()) {
      std::copy(db.begin(), db.end(), data<T>(dbias));
    }
  });
}

void batch_norm_backward(
    const Tensor& grad,
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    const std::vector<double>& mean,
    const std::vector<double>& invstd,
    const std::vector<double>& weight,
    bool train,
    const Tensor& dx,
    const Tensor& dweight,
    const Tensor& dbias) {
  double count = static_cast<double>(N * HxW);
  dispatch_floating(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* pg = data<T>(grad);
    const T* px = data<T>(x);
    T* pdx = dx.defined() ? data<T>(dx) : nullptr;
    T* pdw = dweight.defined() ? data<T>(dweight) : nullptr;
    T* pdb = dbias.defined() ? data<T>(dbias) : nullptr;
    bool need_sums = pdw != nullptr || pdb != nullptr || (pdx && train);
    for (int64_t c = 0; c < C; ++c) {
      auto k = static_cast<std::size_t>(c);
      T mu = static_cast<T>(mean[k]);
      T r = static_cast<T>(invstd[k]);
      // sum(grad) and sum(grad * (x - mean)), a float sum per block of HxW
      // in lanes and a float64 sum over the blocks.
      double sum_g = 0, sum_gd = 0;
      for (int64_t n = 0; need_sums && n < N; ++n) {
        const T* g = pg + (n * C + c) * HxW;
        const T* row = px + (n * C + c) * HxW;
        sum_g += static_cast<double>(
            lane_sum<T>(HxW, [g](int64_t i) { return g[i]; }));
        sum_gd += static_cast<double>(lane_sum<T>(
            HxW, [g, row, mu](int64_t i) { return g[i] * (row[i] - mu); }));
      }
      double sum_g_xhat = sum_gd * invstd[k];
      if (pdw != nullptr) {
        pdw[c] = static_cast<T>(sum_g_xhat);
      }
      if (pdb != nullptr) {
        pdb[c] = static_cast<T>(sum_g);
      }
      if (pdx == nullptr) {
        continue;
      }
      T rw = static_cast<T>(invstd[k] * weight[k]);
      T a = train ? static_cast<T>(sum_g / count) : T(0);
      T b = train ? static_cast<T>(sum_g_xhat / count) : T(0);
      for (int64_t n = 0; n < N; ++n) {
        const T* g = pg + (n * C + c) * HxW;
        const T* row = px + (n * C + c) * HxW;
        T* out = pdx + (n * C + c) * HxW;
        if (train) {
          for (int64_t i = 0; i < HxW; ++i) {
            out[i] = (g[i] - a - (row[i] - mu) * r * b) * rw;
          }
        } else {
          for (int64_t i = 0; i < HxW; ++i) {
            out[i] = g[i] * rw;
          }
        }
      }
    }
  });
}

void group_norm_backward(
    const Tensor& grad,
    const Tensor& x,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    const std::vector<double>& mean,
    const std::vector<double>& rstd,
    const std::vector<double>& weight,
    const Tensor& dx,
    const Tensor& dweight,
    const Tensor& dbias) {
  int64_t per_group = C / group;
  double count = static_cast<double>(per_group * HxW);
  dispatch_floating(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* pg = data<T>(grad);
    const T* px = data<T>(x);
    T* pdx = dx.defined() ? data<T>(dx) : nullptr;
    // Per channel: sum over n of sum(grad) and of sum(grad * xhat).
    std::vector<double> dw(static_cast<std::size_t>(C), 0.0);
    std::vector<double> db(static_cast<std::size_t>(C), 0.0);
    // This group's per channel sum(grad) and sum(grad * (x - mean)).
    std::vector<double> sum_g(static_cast<std::size_t>(per_group));
    std::vector<double> sum_gd(static_cast<std::size_t>(per_group));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gr = 0; gr < group; ++gr) {
        auto stat = static_cast<std::size_t>(n * group + gr);
        T mu = static_cast<T>(mean[stat]);
        double r = rstd[stat];
        double sum_gw = 0, sum_gw_xhat = 0;
        for (int64_t j = 0; j < per_group; ++j) {
          int64_t c = gr * per_group + j;
          const T* g = pg + (n * C + c) * HxW;
          const T* row = px + (n * C + c) * HxW;
          auto jj = static_cast<std::size_t>(j);
          sum_g[jj] = static_cast<double>(
              lane_sum<T>(HxW, [g](int64_t i) { return g[i]; }));
          sum_gd[jj] = static_cast<double>(lane_sum<T>(
              HxW, [g, row, mu](int64_t i) { return g[i] * (row[i] - mu); }));
          auto cc = static_cast<std::size_t>(c);
          db[cc] += sum_g[jj];
          dw[cc] += sum_gd[jj] * r;
          sum_gw += sum_g[jj] * weight[cc];
          sum_gw_xhat += sum_gd[jj] * r * weight[cc];
        }
        if (pdx == nullptr) {
          continue;
        }
        T a = static_cast<T>(sum_gw / count);
        T b = static_cast<T>(sum_gw_xhat / count);
        T tr = static_cast<T>(r);
        for (int64_t j = 0; j < per_group; ++j) {
          int64_t c = gr * per_group + j;
          T w = static_cast<T>(weight[static_cast<std::size_t>(c)]);
          const T* g = pg + (n * C + c) * HxW;
          const T* row = px + (n * C + c) * HxW;
          T* out = pdx + (n * C + c) * HxW;
          for (int64_t i = 0; i < HxW; ++i) {
            out[i] = tr * (g[i] * w - a - (row[i] - mu) * tr * b);
          }
        }
      }
    }
    if (dweight.defined()) {
      T* p = data<T>(dweight);
      for (int64_t c = 0; c < C; ++c) {
        p[c] = static_cast<T>(dw[static_cast<std::size_t>(c)]);
      }
    }
    if (dbias.defined()) {
      T* p = data<T>(dbias);
      for (int64_t c = 0; c < C; ++c) {
        p[c] = static_cast<T>(db[static_cast<std::size_t>(c)]);
      }
    }
  });
}

}  // namespace npgrad::kernels
