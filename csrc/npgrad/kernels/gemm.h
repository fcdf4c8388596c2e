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

}  // namespace npgrad::kernels::gemm
