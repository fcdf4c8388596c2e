// torch.cdist's and _trilinear's loops: see distance.h. Each pair of rows is
// one loop over the features, in the formulas and order of the NumPy passes
// they replace.
#include "npgrad/kernels/distance.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/tensor/shape.h"

namespace npgrad::kernels {
namespace {

template <typename T>
T sgn(T v) {
  return std::isnan(v) ? v : static_cast<T>((T(0) < v) - (v < T(0)));
}

// The p-norm of a - b over d features, accumulated in T.
template <typename T>
T distance(const T* a, const T* b, int64_t d, double p) {
  T acc = 0;
  if (p == 0) {
    for (int64_t k = 0; k < d; ++k) {
      acc += static_cast<T>(a[k] - b[k] != 0);
    }
    return acc;
  }
  if (p == 1) {
    for (int64_t k = 0; k < d; ++k) {
      acc += std::abs(a[k] - b[k]);
    }
    return acc;
  }
  if (p == 2) {
    for (int64_t k = 0; k < d; ++k) {
      T diff = a[k] - b[k];
      acc += diff * diff;
    }
    return std::sqrt(acc);
  }
  if (std::isinf(p)) {
    // NaN propagates, as NumPy's maximum.
    acc = std::abs(a[0] - b[0]);
    for (int64_t k = 1; k < d; ++k) {
      T v = std::abs(a[k] - b[k]);
      acc = (std::isnan(acc) || acc >= v) ? acc : v;
    }
    return acc;
  }
  T tp = static_cast<T>(p);
  for (int64_t k = 0; k < d; ++k) {
    acc += std::pow(std::abs(a[k] - b[k]), tp);
  }
  return std::pow(acc, T(1) / tp);
}

// The term of one feature: d dist / d a times g, torch's zeros included.
template <typename T>
T term(T diff, T g, T dist, double p) {
  if (p == 1) {
    return g * sgn(diff);
  }
  if (std::isinf(p)) {
    return g * sgn(diff) * static_cast<T>(std::abs(diff) == dist);
  }
  if (dist == 0) {
    return 0;
  }
  if (p == 2) {
    return g * diff / dist;
  }
  T tp = static_cast<T>(p);
  if (p < 2) {
    if (p < 1 && diff == 0) {
      return 0;
    }
    return sgn(diff) * std::pow(std::abs(diff), tp - 1) * g /
           std::pow(dist, tp - 1);
  }
  return diff * std::pow(std::abs(diff), tp - 2) * g / std::pow(dist, tp - 1);
}

}  // namespace

void cdist_forward(
    const Tensor& x1, const Tensor& x2, double p, const Tensor& out) {
  int64_t n = x1.sizes()[x1.dim() - 2];
  int64_t m = x2.sizes()[x2.dim() - 2];
  int64_t d = x1.sizes()[x1.dim() - 1];
  int64_t batches = n * m > 0 ? out.numel() / (n * m) : 0;
  dispatch_floating(x1.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* a = static_cast<const T*>(x1.data_ptr());
    const T* b = static_cast<const T*>(x2.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t bi = 0; bi < batches; ++bi) {
      for (int64_t i = 0; i < n; ++i) {
        const T* row = a + (bi * n + i) * d;
        T* orow = o + (bi * n + i) * m;
        for (int64_t j = 0; j < m; ++j) {
          orow[j] = distance(row, b + (bi * m + j) * d, d, p);
        }
      }
    }
  });
}

void cdist_backward(
    const Tensor& grad,
    const Tensor& x1,
    const Tensor& x2,
    double p,
    const Tensor& dist,
    const Tensor& out) {
  int64_t n = x1.sizes()[x1.dim() - 2];
  int64_t m = x2.sizes()[x2.dim() - 2];
  int64_t d = x1.sizes()[x1.dim() - 1];
  int64_t batches = n * d > 0 ? out.numel() / (n * d) : 0;
  dispatch_floating(x1.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* a = static_cast<const T*>(x1.data_ptr());
    const T* b = static_cast<const T*>(x2.data_ptr());
    const T* pg = static_cast<const T*>(grad.data_ptr());
    const T* pd = static_cast<const T*>(dist.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t bi = 0; bi < batches; ++bi) {
      for (int64_t i = 0; i < n; ++i) {
        const T* row = a + (bi * n + i) * d;
        T* orow = o + (bi * n + i) * d;
        for (int64_t k = 0; k < d; ++k) {
          orow[k] = 0;
        }
        for (int64_t j = 0; j < m; ++j) {
          const T* other = b + (bi * m + j) * d;
          T g = pg[(bi * n + i) * m + j];
          T dd = pd[(bi * n + i) * m + j];
          for (int64_t k = 0; k < d; ++k) {
            orow[k] += term(row[k] - other[k], g, dd, p);
          }
        }
      }
    }
  });
}

bool trilinear_loop_fits(
    const Tensor& a, const Tensor& b, const Tensor& c, const Shape& shape) {
  ScalarType dtype = a.dtype();
  if ((dtype != ScalarType::Float32 && dtype != ScalarType::Float64) ||
      b.dtype() != dtype || c.dtype() != dtype) {
    return false;
  }
  int64_t terms = 1;
  for (int64_t size : shape) {
    terms *= size;
    if (terms > kSmallTrilinearTerms) {
      return false;
    }
  }
  auto has_rank = [&](const Tensor& t) {
    return t.dim() == static_cast<int64_t>(shape.size());
  };
  return terms > 0 && has_rank(a) && has_rank(b) && has_rank(c);
}

void trilinear_loop(
    const Tensor& a,
    const Tensor& b,
    const Tensor& c,
    const Shape& shape,
    const std::vector<bool>& summed,
    const Tensor& out) {
  // The result moves along the dims that are not summed (C order over
  // those), not at all along the summed ones.
  const int64_t rank = static_cast<int64_t>(shape.size());
  Shape step_out(rank, 0);
  for (int64_t d = rank - 1, step = 1; d >= 0; --d) {
    if (!summed[d]) {
      step_out[d] = step;
      step *= shape[d];
    }
  }
  auto steps = [&](const Tensor& t) {
    return broadcast_steps(t.sizes(), t.strides(), shape);
  };
  StridedWalk<4> walk(shape, {steps(a), steps(b), steps(c), step_out});
  dispatch_floating(a.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* pa = static_cast<const T*>(a.data_ptr());
    const T* pb = static_cast<const T*>(b.data_ptr());
    const T* pc = static_cast<const T*>(c.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    int64_t terms = 1;
    for (int64_t size : shape) {
      terms *= size;
    }
    for (int64_t e = 0; e < terms; ++e, walk.next()) {
      po[walk[3]] += pa[walk[0]] * pb[walk[1]] * pc[walk[2]];
    }
  });
}

}  // namespace npgrad::kernels
