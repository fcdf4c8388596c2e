// See Note [float32 GEMM in AVX-512] in gemm.h.
#include "npgrad/kernels/gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "npgrad/kernels/avx512.h"

namespace npgrad::kernels::gemm {

#ifdef NPGRAD_AVX512_BUILD

NPGRAD_AVX512_WARNINGS_OFF

namespace {

// The micro-kernel's tile: MR rows of A by NR = 3 x 16 columns of B, 24
// accumulators; the blocks: a KC x NC panel of B (in L2 and L3), an MC x KC
// block of A (in L1 and L2).
constexpr int64_t kMR = 8;
constexpr int64_t kNR = 48;
constexpr int64_t kKC = 384;
constexpr int64_t kMC = 128;
constexpr int64_t kNC = 1920;

// c (mr x nr of an MR x NR tile, rows ldc apart) (+)= the product of an A
// sliver (kc columns of MR values) and a B sliver (kc rows of NR values).
NPGRAD_AVX512 void micro_kernel(
    int64_t kc,
    const float* a,
    const float* b,
    float* c,
    int64_t ldc,
    bool accumulate,
    int64_t mr,
    int64_t nr) {
  __m512 acc[kMR][3];
  for (int64_t i = 0; i < kMR; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      acc[i][j] = _mm512_setzero_ps();
    }
  }
  for (int64_t p = 0; p < kc; ++p, a += kMR, b += kNR) {
    __m512 b0 = _mm512_loadu_ps(b);
    __m512 b1 = _mm512_loadu_ps(b + 16);
    __m512 b2 = _mm512_loadu_ps(b + 32);
#pragma GCC unroll 8
    for (int64_t i = 0; i < kMR; ++i) {
      __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(ai, b2, acc[i][2]);
    }
  }
  if (mr == kMR && nr == kNR) {
    for (int64_t i = 0; i < kMR; ++i) {
      float* row = c + i * ldc;
      for (int64_t j = 0; j < 3; ++j) {
        __m512 v = acc[i][j];
        if (accumulate) {
          v = _mm512_add_ps(v, _mm512_loadu_ps(row + 16 * j));
        }
        _mm512_storeu_ps(row + 16 * j, v);
      }
    }
    return;
  }
  // A tile at the edge of C: through a buffer, only its mr x nr part.
  alignas(64) float tile[kMR][kNR];
  for (int64_t i = 0; i < kMR; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      _mm512_store_ps(&tile[i][16 * j], acc[i][j]);
    }
  }
  for (int64_t i = 0; i < mr; ++i) {
    for (int64_t j = 0; j < nr; ++j) {
      float& out = c[i * ldc + j];
      out = accumulate ? out + tile[i][j] : tile[i][j];
    }
  }
}

// B's rows [p0, p0 + kc) and columns [j0, j0 + nc) as slivers of NR columns
// (each kc rows of NR values; past n, zeros).
void pack_b(
    Matrix b, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* out) {
  for (int64_t jr = 0; jr < nc; jr += kNR) {
    int64_t nr = std::min(kNR, nc - jr);
    float* dst = out + jr * kc;
    if (b.row_stride == 1 && b.col_stride != 1) {
      // B is a transposed matrix (its columns contiguous): read each column
      // along k, so that each cache line is read once.
      for (int64_t j = 0; j < kNR; ++j) {
        if (j >= nr) {
          for (int64_t p = 0; p < kc; ++p) {
            dst[p * kNR + j] = 0.0f;
          }
          continue;
        }
        const float* src = b.data + p0 + (j0 + jr + j) * b.col_stride;
        for (int64_t p = 0; p < kc; ++p) {
          dst[p * kNR + j] = src[p];
        }
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p, dst += kNR) {
      const float* src =
          b.data + (p0 + p) * b.row_stride + (j0 + jr) * b.col_stride;
      if (b.col_stride == 1 && nr == kNR) {
        std::memcpy(dst, src, kNR * sizeof(float));
        continue;
      }
      int64_t j = 0;
      for (; j < nr; ++j) {
        dst[j] = src[j * b.col_stride];
      }
      std::fill(dst + j, dst + kNR, 0.0f);
    }
  }
}

// A's rows [i0, i0 + mc) and columns [p0, p0 + kc) as slivers of MR rows
// (each kc columns of MR values; past m, zeros).
void pack_a(
    Matrix a, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* out) {
  for (int64_t ir = 0; ir < mc; ir += kMR) {
    int64_t mr = std::min(kMR, mc - ir);
    float* dst = out + ir * kc;
    const float* src = a.data + (i0 + ir) * a.row_stride + p0 * a.col_stride;
    for (int64_t p = 0; p < kc; ++p, dst += kMR) {
      const float* column = src + p * a.col_stride;
      int64_t i = 0;
      for (; i < mr; ++i) {
        dst[i] = column[i * a.row_stride];
      }
      std::fill(dst + i, dst + kMR, 0.0f);
    }
  }
}

}  // namespace

bool available() {
  return cpu_has_avx512f();
}

void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    Matrix b,
    float* c,
    int64_t ldc,
    bool accumulate) {
  if (m == 0 || n == 0) {
    return;
  }
  if (k == 0) {
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) {
        std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
      }
    }
    return;
  }
  // Per thread and kept: a call's packing would otherwise page-fault fresh
  // megabytes in each time.
  static thread_local std::vector<float> packed_a(kMC * kKC);
  static thread_local std::vector<float> packed_b(kNC * kKC);
  for (int64_t j0 = 0; j0 < n; j0 += kNC) {
    int64_t nc = std::min(kNC, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      int64_t kc = std::min(kKC, k - p0);
      bool add = accumulate || p0 > 0;  // later panels add to the first's
      pack_b(b, p0, kc, j0, nc, packed_b.data());
      for (int64_t i0 = 0; i0 < m; i0 += kMC) {
        int64_t mc = std::min(kMC, m - i0);
        pack_a(a, i0, mc, p0, kc, packed_a.data());
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            micro_kernel(
                kc,
                packed_a.data() + ir * kc,
                packed_b.data() + jr * kc,
                c + (i0 + ir) * ldc + j0 + jr,
                ldc,
                add,
                std::min(kMR, mc - ir),
                std::min(kNR, nc - jr));
          }
        }
      }
    }
  }
}

NPGRAD_AVX512_WARNINGS_ON

#else  // no AVX-512 build: callers take NumPy's matmul; a plain loop here

bool available() {
  return false;
}

void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    Matrix b,
    float* c,
    int64_t ldc,
    bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = accumulate ? c[i * ldc + j] : 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        sum += a.data[i * a.row_stride + p * a.col_stride] *
               b.data[p * b.row_stride + j * b.col_stride];
      }
      c[i * ldc + j] = sum;
    }
  }
}

#endif

}  // namespace npgrad::kernels::gemm
