#pragma once
// A float32 matrix product in AVX-512, for the float32 matmuls of model size.
//
// Note [float32 GEMM in AVX-512]
// NumPy's matmul calls the BLAS it was built with (OpenBLAS in the wheels),
// whose kernels are chosen when it loads: where OPENBLAS_CORETYPE names a
// core, or on a CPU it does not know, it runs its AVX2 kernels at half the
// AVX-512 rate (a convolution layer of model size was 1.5x torch's oneDNN
// there). This is the textbook blocked product (Goto's): B in panels of KC
// rows by NC columns packed into slivers of NR columns, A in blocks of MC rows
// packed into slivers of MR rows, and an MR x NR micro-kernel of 24 AVX-512
// accumulators over a sliver pair, which reaches about 210 GFLOP/s on one
// core of the EPYC it was tuned on (1024^3: 9.5-10 ms, OpenBLAS's own
// AVX-512 kernels 9.3 ms, its AVX2 ones 17 ms). Each element of C is a sum
// over k in order within each KC panel, panels added in order: the values
// differ from BLAS's in the last bits only.
//
// B comes three ways. A strided Matrix is packed by copying rows, or, when
// its columns are the contiguous ones (a transposed operand), by 16 x 16
// blocks transposed in registers (pack_columns). A PackedB packs its own
// slivers, for operands never stored whole (a convolution's transposed
// windows, Note [Convolutions as GEMMs] in conv_gemm.h). A RowOffsetsB is
// not packed at all: its rows are contiguous wherever they are (a kernel
// tap's run of a padded image), and the micro-kernel reads them in place.
// The micro-kernel's k loop is one loop per kind of row, without a branch:
// GCC kept the 24 accumulators in memory when a branch was inside, at a
// third of the speed.
//
// Only where the CPU has AVX-512F (`available()`, checked once); the packing
// buffers are per thread and kept (about 2 MiB), as BLAS keeps its own.

#include <cstdint>

namespace npgrad::kernels::gemm {

/// Whether sgemm is the AVX-512 product (an x86-64 CPU with AVX-512F);
/// elsewhere it is a plain loop, and callers keep NumPy's matmul.
bool available();

/// A strided matrix: element (i, j) at data[i * row_stride + j * col_stride].
struct Matrix {
  const float* data;
  int64_t row_stride, col_stride;
};

/// c (m x n, rows `ldc` apart, columns contiguous) = a (m x k) @ b (k x n),
/// or c += a @ b when `accumulate`.
void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    Matrix b,
    float* c,
    int64_t ldc,
    bool accumulate);

/// The width of the column slivers B is packed in.
constexpr int64_t kSliverWidth = 48;

/// A B that is never stored whole (a convolution's windows): `pack` writes
/// its rows [p0, p0 + kc) of columns [j0, j0 + width) (width <= kSliverWidth)
/// to `out` as kc rows of kSliverWidth floats, zeros past width. Each
/// element is packed once per call of sgemm.
struct PackedB {
  void (*pack)(
      const void* source,
      int64_t p0,
      int64_t kc,
      int64_t j0,
      int64_t width,
      float* out);
  const void* source;
};

/// Writes `count` rows of a sliver from `width` (<= kSliverWidth) columns
/// stored contiguously: out[p * kSliverWidth + j] = columns[j][p] (a
/// transpose, 16 x 16 at a time in registers), zeros past width. For
/// PackedB's packers.
void pack_columns(
    const float* const* columns, int64_t width, int64_t count, float* out);

/// sgemm with B given by its packing.
void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    PackedB b,
    float* c,
    int64_t ldc,
    bool accumulate);

/// A B whose rows are contiguous, each where it is: B(p, j) = base[
/// row_offsets[p] + j] (a convolution's kernel taps over an image). Its rows
/// are read in place, never packed; of each only its n columns are read.
struct RowOffsetsB {
  const float* base;
  const int64_t* row_offsets;  // k of them
};

/// sgemm with B's rows read in place.
void sgemm(
    int64_t m,
    int64_t n,
    int64_t k,
    Matrix a,
    RowOffsetsB b,
    float* c,
    int64_t ldc,
    bool accumulate);

}  // namespace npgrad::kernels::gemm
