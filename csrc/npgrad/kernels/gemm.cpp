// See Note [float32 GEMM in AVX-512] in gemm.h.
#include "npgrad/kernels/gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "npgrad/kernels/simd.h"

namespace npgrad::kernels::gemm {

namespace {

// c = 0 (m x n, rows ldc apart) unless accumulating: a product over k = 0.
void zero_rows(int64_t m, int64_t n, float* c, int64_t ldc, bool accumulate) {
  if (accumulate) {
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
  }
}

void pack_columns_scalar(
    const float* const* columns, int64_t width, int64_t count, float* out) {
  for (int64_t p = 0; p < count; ++p, out += kSliverWidth) {
    for (int64_t j = 0; j < width; ++j) {
      out[j] = columns[j][p];
    }
    std::fill(out + width, out + kSliverWidth, 0.0f);
  }
}

// B's rows [p0, p0 + kc) of columns [j0, j0 + nr) as one sliver: kc rows of
// kSliverWidth values (past nr, zeros). `source` is the Matrix.
void pack_matrix_sliver(
    const void* source,
    int64_t p0,
    int64_t kc,
    int64_t j0,
    int64_t nr,
    float* dst) {
  const Matrix& b = *static_cast<const Matrix*>(source);
  if (b.row_stride == 1 && b.col_stride != 1) {
    // B is a transposed matrix (its columns contiguous).
    const float* columns[kSliverWidth];
    for (int64_t j = 0; j < nr; ++j) {
      columns[j] = b.data + p0 + (j0 + j) * b.col_stride;
    }
    pack_columns(columns, nr, kc, dst);
    return;
  }
  for (int64_t p = 0; p < kc; ++p, dst += kSliverWidth) {
    const float* src = b.data + (p0 + p) * b.row_stride + j0 * b.col_stride;
    if (b.col_stride == 1 && nr == kSliverWidth) {
      std::memcpy(dst, src, kSliverWidth * sizeof(float));
      continue;
    }
    int64_t j = 0;
    for (; j < nr; ++j) {
      dst[j] = src[j * b.col_stride];
    }
    std::fill(dst + j, dst + kSliverWidth, 0.0f);
  }
}

}  // namespace

#ifdef NPGRAD_AVX512_BUILD

NPGRAD_AVX512_WARNINGS_OFF

namespace {

// The micro-kernel's tile: MR rows of A by NR = 3 x 16 columns of B, 24
// accumulators; the blocks: a KC x NC panel of B (in L2 and L3), an MC x KC
// block of A (in L1 and L2).
constexpr int64_t kMR = 8;
constexpr int64_t kNR = kSliverWidth;
static_assert(kNR == 48, "the micro-kernel holds 3 vectors of 16 per row");
constexpr int64_t kKC = 384;
constexpr int64_t kMC = 128;
constexpr int64_t kNC = 1920;

// acc += the product of an A sliver (kc columns of MR values) and kc rows
// of NR values of B, row p's three vectors from load_row(p). One loop per
// kind of row (no branch inside, which made GCC keep acc in memory).
template <typename LoadRow>
NPGRAD_AVX512 __attribute__((always_inline)) inline void tile_product(
    int64_t kc, const float* a, LoadRow load_row, __m512 (&acc)[kMR][3]) {
  for (int64_t p = 0; p < kc; ++p, a += kMR) {
    __m512 b0, b1, b2;
    load_row(p, b0, b1, b2);
#pragma GCC unroll 8
    for (int64_t i = 0; i < kMR; ++i) {
      __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(ai, b2, acc[i][2]);
    }
  }
}

// c (mr x nr of an MR x NR tile, rows ldc apart) (+)= the product of an A
// sliver (kc columns of MR values) and kc rows of NR values of B: a packed
// sliver (rows NR apart), or with `in_place` B's own rows, row p at b +
// offsets[p], of which only the first nr values are read.
template <bool in_place>
NPGRAD_AVX512 void micro_kernel(
    int64_t kc,
    const float* a,
    const float* b,
    const int64_t* offsets,
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
  if constexpr (!in_place) {
    tile_product(
        kc,
        a,
        [b](int64_t p, __m512& b0, __m512& b1, __m512& b2) NPGRAD_AVX512 {
          const float* row = b + p * kNR;
          b0 = _mm512_loadu_ps(row);
          b1 = _mm512_loadu_ps(row + 16);
          b2 = _mm512_loadu_ps(row + 32);
        },
        acc);
  } else if (nr == kNR) {
    tile_product(
        kc,
        a,
        [b, offsets](int64_t p, __m512& b0, __m512& b1, __m512& b2)
            NPGRAD_AVX512 {
              const float* row = b + offsets[p];
              b0 = _mm512_loadu_ps(row);
              b1 = _mm512_loadu_ps(row + 16);
              b2 = _mm512_loadu_ps(row + 32);
            },
        acc);
  } else {
    // Only B's nr columns: the lanes past them are not read.
    auto lanes = [nr](int64_t first) {
      int64_t count = std::clamp<int64_t>(nr - first, 0, 16);
      return static_cast<__mmask16>((uint32_t{1} << count) - 1);
    };
    const __mmask16 m0 = lanes(0), m1 = lanes(16), m2 = lanes(32);
    tile_product(
        kc,
        a,
        [b, offsets, m0, m1, m2](int64_t p, __m512& b0, __m512& b1, __m512& b2)
            NPGRAD_AVX512 {
              const float* row = b + offsets[p];
              b0 = _mm512_maskz_loadu_ps(m0, row);
              b1 = _mm512_maskz_loadu_ps(m1, row + 16);
              b2 = _mm512_maskz_loadu_ps(m2, row + 32);
            },
        acc);
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

// 16 rows of 16 floats transposed in registers: rows[i][q] -> rows[q][i].
NPGRAD_AVX512 void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  // Each 128-bit lane L of u[4k + m]: column 4L + m of rows 4k .. 4k + 3.
  for (int k = 0; k < 4; ++k) {
    __m512d a = _mm512_castps_pd(t[4 * k]), b = _mm512_castps_pd(t[4 * k + 1]);
    __m512d c = _mm512_castps_pd(t[4 * k + 2]);
    __m512d d = _mm512_castps_pd(t[4 * k + 3]);
    u[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // Column 4L + m gathers lane L of u[m], u[4 + m], u[8 + m], u[12 + m].
  for (int m = 0; m < 4; ++m) {
    __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x44);
    __m512 v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xEE);
    __m512 w0 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x44);
    __m512 w1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xEE);
    r[m] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    r[4 + m] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    r[8 + m] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

// pack_columns by 16 x 16 blocks transposed in registers.
NPGRAD_AVX512 void pack_columns_avx512(
    const float* const* columns, int64_t width, int64_t count, float* out) {
  for (int64_t p = 0; p < count; p += 16) {
    int64_t rows = std::min<int64_t>(16, count - p);
    __mmask16 mask = static_cast<__mmask16>((uint32_t{1} << rows) - 1);
    for (int64_t jb = 0; jb < kNR; jb += 16) {
      __m512 r[16];
      for (int64_t i = 0; i < 16; ++i) {
        r[i] = jb + i < width ? _mm512_maskz_loadu_ps(mask, columns[jb + i] + p)
                              : _mm512_setzero_ps();
      }
      transpose16(r);
      for (int64_t q = 0; q < rows; ++q) {
        _mm512_storeu_ps(out + (p + q) * kNR + jb, r[q]);
      }
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

// Per thread and kept, as packed_b below: a call's packing would otherwise
// page-fault fresh megabytes in each time.
std::vector<float>& packed_a_buffer() {
  static thread_local std::vector<float> packed(kMC * kKC);
  return packed;
}

}  // namespace

bool available() {
  return cpu_has_avx512f();
}

void pack_columns(
    const float* const* columns, int64_t width, int64_t count, float* out) {
  if (cpu_has_avx512f()) {
    pack_columns_avx512(columns, width, count, out);
    return;
  }
  pack_columns_scalar(columns, width, count, out);
}

namespace {

// The blocked product of Note [float32 GEMM in AVX-512]: B's KC x NC panels
// packed by `packed` first, or, `in_place`, B's rows read where they are
// (`rows`; one panel as wide as B).
template <bool in_place>
void blocked_product(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    PackedB packed,
    RowOffsetsB rows,
    float* c,
    int64_t ldc,
    bool accumulate) {
  if (m == 0 || n == 0) {
    return;
  }
  if (k == 0) {
    zero_rows(m, n, c, ldc, accumulate);
    return;
  }
  std::vector<float>& packed_a = packed_a_buffer();
  static thread_local std::vector<float> packed_b(in_place ? 0 : kNC * kKC);
  const int64_t panel = in_place ? n : kNC;
  for (int64_t j0 = 0; j0 < n; j0 += panel) {
    int64_t nc = std::min(panel, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      int64_t kc = std::min(kKC, k - p0);
      bool add = accumulate || p0 > 0;  // later panels add to the first's
      if constexpr (!in_place) {
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          packed.pack(
              packed.source,
              p0,
              kc,
              j0 + jr,
              std::min(kNR, nc - jr),
              packed_b.data() + jr * kc);
        }
      }
      for (int64_t i0 = 0; i0 < m; i0 += kMC) {
        int64_t mc = std::min(kMC, m - i0);
        pack_a(a, i0, mc, p0, kc, packed_a.data());
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            micro_kernel<in_place>(
                kc,
                packed_a.data() + ir * kc,
                in_place ? rows.base + j0 + jr : packed_b.data() + jr * kc,
                in_place ? rows.row_offsets + p0 : nullptr,
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

}  // namespace

void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    PackedB b,
    float* c,
    int64_t ldc,
    bool accumulate) {
  blocked_product<false>(m, n, k, a, b, RowOffsetsB{}, c, ldc, accumulate);
}

void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    RowOffsetsB b,
    float* c,
    int64_t ldc,
    bool accumulate) {
  blocked_product<true>(m, n, k, a, PackedB{}, b, c, ldc, accumulate);
}

NPGRAD_AVX512_WARNINGS_ON

#else  // no AVX-512 build: callers take NumPy's matmul; a plain loop here

bool available() {
  return false;
}

void pack_columns(
    const float* const* columns, int64_t width, int64_t count, float* out) {
  pack_columns_scalar(columns, width, count, out);
}

void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    RowOffsetsB b,
    float* c,
    int64_t ldc,
    bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float& out = c[i * ldc + j];
      float sum = accumulate ? out : 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        sum += a.data[i * a.row_stride + p * a.col_stride] *
               b.base[b.row_offsets[p] + j];
      }
      out = sum;
    }
  }
}

void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    PackedB b,
    float* c,
    int64_t ldc,
    bool accumulate) {
  std::vector<float> sliver(static_cast<std::size_t>(k * kSliverWidth));
  for (int64_t j0 = 0; j0 < n; j0 += kSliverWidth) {
    int64_t width = std::min(kSliverWidth, n - j0);
    b.pack(b.source, 0, k, j0, width, sliver.data());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < width; ++j) {
        float& out = c[i * ldc + j0 + j];
        float sum = accumulate ? out : 0.0f;
        for (int64_t p = 0; p < k; ++p) {
          sum += a.data[i * a.row_stride + p * a.col_stride] *
                 sliver[p * kSliverWidth + j];
        }
        out = sum;
      }
    }
  }
}

#endif

void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    Matrix b,
    float* c,
    int64_t ldc,
    bool accumulate) {
  sgemm(m, n, k, a, PackedB{&pack_matrix_sliver, &b}, c, ldc, accumulate);
}

}  // namespace npgrad::kernels::gemm
