// The float32 GEMM (Note [float32 GEMM in AVX-512] in kernels/gemm.h)
// against a float64 reference: every edge of its tiles and blocks, strided
// and transposed operands, accumulation and an empty inner dim; B packed
// from columns (pack_columns) and read in place (RowOffsetsB).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "npgrad/kernels/gemm.h"

namespace gemm = npgrad::kernels::gemm;

namespace {

struct Case {
  int64_t m, n, k;
  bool transpose_a, transpose_b, accumulate;
};

// Small integers scaled by 1/8: every product and partial sum is exact in
// float32, so the result must equal the reference exactly.
std::vector<float> values(int64_t count, int64_t seed) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>((i * 7 + seed * 13) % 9 - 4) / 8.0f;
  }
  return v;
}

void check_case(const Case& c) {
  INFO(
      "m=" << c.m << " n=" << c.n << " k=" << c.k << " ta=" << c.transpose_a
           << " tb=" << c.transpose_b << " acc=" << c.accumulate);
  std::vector<float> a = values(c.m * c.k, 1), b = values(c.k * c.n, 2);
  // Row-major a (m x k) and b (k x n), or their transposes' memory.
  gemm::Matrix ma = c.transpose_a ? gemm::Matrix{a.data(), 1, c.m}
                                  : gemm::Matrix{a.data(), c.k, 1};
  gemm::Matrix mb = c.transpose_b ? gemm::Matrix{b.data(), 1, c.k}
                                  : gemm::Matrix{b.data(), c.n, 1};
  const int64_t ldc = c.n + 3;  // rows of C further apart than n
  std::vector<float> out(c.m * ldc, 0.5f);
  gemm::sgemm(c.m, c.n, c.k, ma, mb, out.data(), ldc, c.accumulate);
  int64_t mismatches = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double want = c.accumulate ? 0.5 : 0.0;
      for (int64_t p = 0; p < c.k; ++p) {
        double x = ma.data[i * ma.row_stride + p * ma.col_stride];
        double y = mb.data[p * mb.row_stride + j * mb.col_stride];
        want += x * y;
      }
      mismatches += out[i * ldc + j] != static_cast<float>(want);
    }
    for (int64_t j = c.n; j < ldc; ++j) {
      mismatches += out[i * ldc + j] != 0.5f;  // past n: untouched
    }
  }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("sgemm matches the reference at every tile and block edge") {
  // m around the 8-row slivers and the 128-row blocks, n around the
  // 48-column slivers and the 1920-column panels, k around the 384-deep
  // panels.
  for (const Case& c : std::vector<Case>{
           {1, 1, 1, false, false, false},
           {8, 48, 16, false, false, false},
           {7, 47, 5, false, false, false},
           {9, 49, 385, false, false, false},
           {130, 50, 384, false, false, false},
           {64, 1921, 20, false, false, false},
           {17, 100, 769, true, false, false},
           {33, 97, 64, false, true, false},
           {40, 60, 400, true, true, false},
           {23, 71, 390, false, false, true},
           {5, 3, 0, false, false, false},
           {5, 3, 0, false, false, true},
       }) {
    check_case(c);
  }
}

TEST_CASE("sgemm propagates nan and infinities as a sum of products") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> a(16 * 16, 1.0f), b(16 * 16, 1.0f), c(16 * 16);
  a[0] = std::nanf("");  // row 0 of the result: nan
  b[5] = inf;            // column 5: inf (rows 1..15)
  gemm::sgemm(
      16, 16, 16, {a.data(), 16, 1}, {b.data(), 16, 1}, c.data(), 16, false);
  CHECK(std::isnan(c[0]));
  CHECK(std::isnan(c[7]));
  CHECK(c[16 + 5] == inf);
  CHECK(c[16 + 4] == 16.0f);
}

TEST_CASE("pack_columns writes the transposed sliver, zeros past its width") {
  const int64_t w = gemm::kSliverWidth;
  for (int64_t width : {1, 15, 16, 17, 47, 48}) {
    for (int64_t count : {1, 15, 16, 17, 40}) {
      INFO("width=" << width << " count=" << count);
      // Column j: count values, each column its own allocation (exactly
      // its size, so a read past it is caught under ASan).
      std::vector<std::vector<float>> data(width);
      std::vector<const float*> columns(width);
      for (int64_t j = 0; j < width; ++j) {
        data[j].resize(count);
        for (int64_t p = 0; p < count; ++p) {
          data[j][p] = static_cast<float>(j * 1000 + p);
        }
        columns[j] = data[j].data();
      }
      std::vector<float> out(count * w, -1.0f);
      gemm::pack_columns(columns.data(), width, count, out.data());
      int64_t mismatches = 0;
      for (int64_t p = 0; p < count; ++p) {
        for (int64_t j = 0; j < w; ++j) {
          float want = j < width ? static_cast<float>(j * 1000 + p) : 0.0f;
          mismatches += out[p * w + j] != want;
        }
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("sgemm reads B's rows in place at their offsets") {
  // B's row p: n values at offsets[p] of one buffer, rows out of order with
  // gaps, the last one at the very end of the buffer (only n columns read).
  for (const Case& c : std::vector<Case>{
           {8, 48, 16, false, false, false},
           {7, 47, 5, false, false, false},
           {9, 49, 385, false, false, false},
           {130, 50, 384, false, false, true},
           {20, 100, 769, true, false, false},
           {5, 3, 0, false, false, false},
       }) {
    INFO("m=" << c.m << " n=" << c.n << " k=" << c.k);
    std::vector<float> a = values(c.m * c.k, 1);
    const int64_t pitch = c.n + 5;
    std::vector<float> b = values(c.k * pitch, 2);
    std::vector<int64_t> offsets(c.k);
    for (int64_t p = 0; p < c.k; ++p) {
      offsets[p] = ((p * 7) % c.k) * pitch + 5;  // shuffled; one ends b
    }
    gemm::Matrix ma = c.transpose_a ? gemm::Matrix{a.data(), 1, c.m}
                                    : gemm::Matrix{a.data(), c.k, 1};
    const int64_t ldc = c.n + 3;
    std::vector<float> out(c.m * ldc, 0.5f);
    gemm::sgemm(
        c.m,
        c.n,
        c.k,
        ma,
        gemm::RowOffsetsB{b.data(), offsets.data()},
        out.data(),
        ldc,
        c.accumulate);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double want = c.accumulate ? 0.5 : 0.0;
        for (int64_t p = 0; p < c.k; ++p) {
          want += static_cast<double>(
                      ma.data[i * ma.row_stride + p * ma.col_stride]) *
                  b[offsets[p] + j];
        }
        mismatches += out[i * ldc + j] != static_cast<float>(want);
      }
      for (int64_t j = c.n; j < ldc; ++j) {
        mismatches += out[i * ldc + j] != 0.5f;
      }
    }
    CHECK(mismatches == 0);
  }
}
