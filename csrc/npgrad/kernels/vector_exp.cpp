// See Note [Vector exp for softmax rows] in vector_exp.h.
#include "npgrad/kernels/vector_exp.h"

#include <cmath>

#include "npgrad/kernels/simd.h"

namespace npgrad::kernels::vector_exp {

#ifdef NPGRAD_AVX512_BUILD

NPGRAD_AVX512_WARNINGS_OFF

namespace {

// exp of 16 lanes. The clamp keeps the reduction in range (e^89 overflows and
// e^-104 rounds to 0, which scalef then gives); min and max return their
// second operand when either is NaN, so a NaN lane stays NaN.
NPGRAD_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  // x = n ln2 + r, |r| <= ln2 / 2; ln2 in two parts so that n * ln2_hi is
  // exact (ln2_hi has 9 significant bits, n at most 9).
  __m512 n = _mm512_roundscale_ps(
      _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  // e^r = 1 + r + r^2 p(r), p the minimax fit of (e^r - 1 - r) / r^2.
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// The lanes of the block of 16 from i of a row of n: all but in the last,
// partial block. (A loop of masked loads and stores rather than a lambda per
// block: a lambda's body would not inherit the target attribute.)
NPGRAD_AVX512 inline __mmask16 lanes(int64_t n, int64_t i) {
  return n - i >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>((1u << (n - i)) - 1u);
}

}  // namespace

bool available() {
  return cpu_has_avx512f();
}

NPGRAD_AVX512 void exp(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = lanes(n, i);
    _mm512_mask_storeu_ps(out + i, m, exp16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

NPGRAD_AVX512 float exp_shifted_sum(
    const float* x, float shift, float* out, int64_t n) {
  __m512 s = _mm512_set1_ps(shift);
  __m512 total = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = lanes(n, i);
    __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s));
    _mm512_mask_storeu_ps(out + i, m, e);
    total = _mm512_mask_add_ps(total, m, total, e);
  }
  return _mm512_reduce_add_ps(total);
}

NPGRAD_AVX512 float sum_exp_shifted(const float* x, float shift, int64_t n) {
  __m512 s = _mm512_set1_ps(shift);
  __m512 total = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = lanes(n, i);
    __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s));
    total = _mm512_mask_add_ps(total, m, total, e);
  }
  return _mm512_reduce_add_ps(total);
}

NPGRAD_AVX512 float sum(const float* x, int64_t n) {
  __m512 total = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = lanes(n, i);
    total = _mm512_add_ps(total, _mm512_maskz_loadu_ps(m, x + i));
  }
  return _mm512_reduce_add_ps(total);
}

NPGRAD_AVX512 void subtract_twice(
    const float* x, float first, float second, float* out, int64_t n) {
  __m512 a = _mm512_set1_ps(first);
  __m512 b = _mm512_set1_ps(second);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = lanes(n, i);
    __m512 v = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), a);
    _mm512_mask_storeu_ps(out + i, m, _mm512_sub_ps(v, b));
  }
}

NPGRAD_AVX512 void grad_minus_scaled_exp(
    const float* grad,
    const float* result,
    float scale,
    float* out,
    int64_t n) {
  __m512 s = _mm512_set1_ps(scale);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = lanes(n, i);
    __m512 e = exp16(_mm512_maskz_loadu_ps(m, result + i));
    __m512 g = _mm512_maskz_loadu_ps(m, grad + i);
    _mm512_mask_storeu_ps(out + i, m, _mm512_fnmadd_ps(e, s, g));
  }
}

NPGRAD_AVX512_WARNINGS_ON

#else  // no AVX-512 build: scalar loops, for correctness only

bool available() {
  return false;
}

void exp(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = std::exp(x[i]);
  }
}

float exp_shifted_sum(const float* x, float shift, float* out, int64_t n) {
  float total = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = std::exp(x[i] - shift);
    total += out[i];
  }
  return total;
}

float sum_exp_shifted(const float* x, float shift, int64_t n) {
  float total = 0;
  for (int64_t i = 0; i < n; ++i) {
    total += std::exp(x[i] - shift);
  }
  return total;
}

float sum(const float* x, int64_t n) {
  float total = 0;
  for (int64_t i = 0; i < n; ++i) {
    total += x[i];
  }
  return total;
}

void subtract_twice(
    const float* x, float first, float second, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = (x[i] - first) - second;
  }
}

void grad_minus_scaled_exp(
    const float* grad,
    const float* result,
    float scale,
    float* out,
    int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = grad[i] - std::exp(result[i]) * scale;
  }
}

#endif

}  // namespace npgrad::kernels::vector_exp
