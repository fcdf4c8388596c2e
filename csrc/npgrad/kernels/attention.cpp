// Attention on small inputs as plain loops: see Note [Small attention in one
// loop] in attention.h.
#include "npgrad/kernels/attention.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"

namespace npgrad::kernels {
namespace {

// A 4-D tensor read through its strides (elements); a broadcast dim has
// stride 0.
template <typename T>
struct Strided4 {
  const T* data = nullptr;
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const T* row(int64_t b, int64_t h, int64_t i) const {
    return data + b * s0 + h * s1 + i * s2;
  }
};

template <typename T>
Strided4<T> strided(const Tensor& t) {
  const Shape& st = t.strides();
  return {static_cast<const T*>(t.data_ptr()), st[0], st[1], st[2], st[3]};
}

// The mask read as (B, Hq, L, S): its dims aligned to the right, stride 0
// where it has size 1 or no dim. Empty data: no mask.
template <typename T>
Strided4<T> broadcast_mask(const Tensor& mask) {
  Strided4<T> m;
  if (!mask.defined()) {
    return m;
  }
  int64_t strides[4] = {0, 0, 0, 0};
  int64_t lead = 4 - mask.dim();
  for (int64_t d = 0; d < mask.dim(); ++d) {
    strides[lead + d] = mask.sizes()[d] == 1 ? 0 : mask.strides()[d];
  }
  m.data = static_cast<const T*>(mask.data_ptr());
  m.s0 = strides[0];
  m.s1 = strides[1];
  m.s2 = strides[2];
  m.s3 = strides[3];
  return m;
}

template <typename T>
T dot(const T* a, int64_t sa, const T* b, int64_t sb, int64_t n) {
  T acc = 0;
  for (int64_t e = 0; e < n; ++e) {
    acc += a[e * sa] * b[e * sb];
  }
  return acc;
}

// The scores of query row i of (b, h) against every key of head kh:
// (q . k) * scale + mask, -inf after i when causal.
template <typename T>
void score_row(
    const Strided4<T>& q,
    const Strided4<T>& k,
    const Strided4<T>& mask,
    int64_t b,
    int64_t h,
    int64_t kh,
    int64_t i,
    int64_t S,
    int64_t E,
    bool is_causal,
    T scale,
    T* scores) {
  const T* qi = q.row(b, h, i);
  const T* mrow = mask.data != nullptr ? mask.row(b, h, i) : nullptr;
  for (int64_t j = 0; j < S; ++j) {
    T s = dot(qi, q.s3, k.row(b, kh, j), k.s3, E) * scale;
    if (mrow != nullptr) {
      s += mrow[j * mask.s3];
    }
    if (is_causal && j > i) {
      s = -std::numeric_limits<T>::infinity();
    }
    scores[j] = s;
  }
}

struct Dims {
  int64_t B, Hq, Hk, L, S, E, Ev;
};

Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v) {
  return {
      q.sizes()[0],
      q.sizes()[1],
      k.sizes()[1],
      q.sizes()[2],
      k.sizes()[2],
      q.sizes()[3],
      v.sizes()[3]};
}

}  // namespace

bool small_attention_fits(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& mask) {
  ScalarType dtype = query.dtype();
  if ((dtype != ScalarType::Float32 && dtype != ScalarType::Float64) ||
      key.dtype() != dtype || value.dtype() != dtype || query.dim() != 4 ||
      key.dim() != 4 || value.dim() != 4) {
    return false;
  }
  Dims d = dims_of(query, key, value);
  if (d.B <= 0 || d.Hq <= 0 || d.Hk <= 0 || d.L <= 0 || d.S <= 0 || d.E <= 0 ||
      d.Ev <= 0 || d.Hq % d.Hk != 0 || key.sizes()[0] != d.B ||
      value.sizes()[0] != d.B || value.sizes()[1] != d.Hk ||
      value.sizes()[2] != d.S || key.sizes()[3] != d.E) {
    return false;
  }
  // Multiply-adds, checked dim by dim so that the product cannot overflow.
  int64_t work = d.E + d.Ev;
  for (int64_t n : {d.B, d.Hq, d.L, d.S}) {
    if (work > kSmallAttentionWork / n) {
      return false;
    }
    work *= n;
  }
  if (work > kSmallAttentionWork) {
    return false;
  }
  if (mask.defined()) {
    if (mask.dtype() != dtype || mask.dim() > 4) {
      return false;
    }
    const int64_t target[4] = {d.B, d.Hq, d.L, d.S};
    int64_t lead = 4 - mask.dim();
    for (int64_t i = 0; i < mask.dim(); ++i) {
      int64_t size = mask.sizes()[i];
      if (size != 1 && size != target[lead + i]) {
        return false;
      }
    }
  }
  return true;
}

std::pair<Tensor, Tensor> small_attention_forward(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& mask,
    bool is_causal,
    double scale) {
  Dims d = dims_of(query, key, value);
  ScalarType dtype = query.dtype();
  Tensor out = empty(Shape{d.B, d.Hq, d.L, d.Ev}, dtype);
  Tensor lse = empty(Shape{d.B, d.Hq, d.L}, dtype);
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr T kInf = std::numeric_limits<T>::infinity();
    auto q = strided<T>(query);
    auto k = strided<T>(key);
    auto v = strided<T>(value);
    auto m = broadcast_mask<T>(mask);
    T* po = static_cast<T*>(out.data_ptr());
    T* pl = static_cast<T*>(lse.data_ptr());
    std::vector<T> p(static_cast<std::size_t>(d.S));
    int64_t group = d.Hq / d.Hk;
    for (int64_t b = 0; b < d.B; ++b) {
      for (int64_t h = 0; h < d.Hq; ++h) {
        int64_t kh = h / group;
        for (int64_t i = 0; i < d.L; ++i) {
          score_row(
              q, k, m, b, h, kh, i, d.S, d.E, is_causal, T(scale), p.data());
          // The max propagates NaN, as NumPy's maximum; a row of -inf is
          // shifted by 0, so that its exps are zeros, not NaN.
          T mx = p[0];
          for (int64_t j = 1; j < d.S; ++j) {
            mx = (std::isnan(mx) || mx >= p[j]) ? mx : p[j];
          }
          if (mx == -kInf) {
            mx = 0;
          }
          T total = 0;
          for (int64_t j = 0; j < d.S; ++j) {
            p[j] = std::exp(p[j] - mx);
            total += p[j];
          }
          int64_t row = (b * d.Hq + h) * d.L + i;
          T inv = 0;
          if (total == 0) {
            pl[row] = -kInf;
          } else {
            pl[row] = mx + std::log(total);
            inv = T(1) / total;
          }
          T* orow = po + row * d.Ev;
          for (int64_t e = 0; e < d.Ev; ++e) {
            orow[e] = 0;
          }
          for (int64_t j = 0; j < d.S; ++j) {
            T pj = p[j] * inv;
            const T* vj = v.row(b, kh, j);
            for (int64_t e = 0; e < d.Ev; ++e) {
              orow[e] += pj * vj[e * v.s3];
            }
          }
        }
      }
    }
  });
  return {out, lse};
}

AttentionGrads small_attention_backward(
    const Tensor& grad,
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const Tensor& mask,
    bool is_causal,
    double scale,
    const Tensor& output,
    const Tensor& logsumexp) {
  Dims d = dims_of(query, key, value);
  ScalarType dtype = query.dtype();
  AttentionGrads grads{
      full(query.sizes(), 0, dtype),
      full(key.sizes(), 0, dtype),
      full(value.sizes(), 0, dtype)};
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr T kInf = std::numeric_limits<T>::infinity();
    auto q = strided<T>(query);
    auto k = strided<T>(key);
    auto v = strided<T>(value);
    auto g = strided<T>(grad);
    auto o = strided<T>(output);
    auto m = broadcast_mask<T>(mask);
    const Shape& ls = logsumexp.strides();
    const T* pl = static_cast<const T*>(logsumexp.data_ptr());
    T* dq = static_cast<T*>(grads.query.data_ptr());
    T* dk = static_cast<T*>(grads.key.data_ptr());
    T* dv = static_cast<T*>(grads.value.data_ptr());
    T s = T(scale);
    std::vector<T> p(static_cast<std::size_t>(d.S));
    std::vector<T> ds(static_cast<std::size_t>(d.S));
    // ds^T @ q of one (b, h), scaled once at the end, as (ds^T @ q) * scale.
    std::vector<T> dsq(static_cast<std::size_t>(d.S * d.E));
    int64_t group = d.Hq / d.Hk;
    for (int64_t b = 0; b < d.B; ++b) {
      for (int64_t h = 0; h < d.Hq; ++h) {
        int64_t kh = h / group;
        std::fill(dsq.begin(), dsq.end(), T(0));
        T* dk_head = dk + (b * d.Hk + kh) * d.S * d.E;
        T* dv_head = dv + (b * d.Hk + kh) * d.S * d.Ev;
        for (int64_t i = 0; i < d.L; ++i) {
          score_row(q, k, m, b, h, kh, i, d.S, d.E, is_causal, s, p.data());
          // exp(scores - logsumexp), zeros for a row whose logsumexp is -inf.
          T shift = pl[b * ls[0] + h * ls[1] + i * ls[2]];
          if (shift == -kInf) {
            shift = kInf;
          }
          const T* gi = g.row(b, h, i);
          T dot_go = dot(gi, g.s3, o.row(b, h, i), o.s3, d.Ev);
          for (int64_t j = 0; j < d.S; ++j) {
            p[j] = std::exp(p[j] - shift);
            const T* vj = v.row(b, kh, j);
            T dp = dot(gi, g.s3, vj, v.s3, d.Ev);
            ds[j] = p[j] * (dp - dot_go);
            T* dvj = dv_head + j * d.Ev;
            for (int64_t e = 0; e < d.Ev; ++e) {
              dvj[e] += p[j] * gi[e * g.s3];
            }
          }
          const T* qi = q.row(b, h, i);
          T* dqi = dq + ((b * d.Hq + h) * d.L + i) * d.E;
          for (int64_t j = 0; j < d.S; ++j) {
            const T* kj = k.row(b, kh, j);
            T* dsqj = dsq.data() + j * d.E;
            for (int64_t e = 0; e < d.E; ++e) {
              dqi[e] += ds[j] * kj[e * k.s3];
              dsqj[e] += ds[j] * qi[e * q.s3];
            }
          }
          for (int64_t e = 0; e < d.E; ++e) {
            dqi[e] *= s;
          }
        }
        for (int64_t n = 0; n < d.S * d.E; ++n) {
          dk_head[n] += dsq[static_cast<std::size_t>(n)] * s;
        }
      }
    }
  });
  return grads;
}

}  // namespace npgrad::kernels
