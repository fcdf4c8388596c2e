#pragma once
// What the AVX-512 kernels (vector_exp.cpp, gemm.cpp) share: whether this
// build can compile them (NPGRAD_AVX512_BUILD), the per-function target
// attribute that lets them use AVX-512 while the rest of npgrad is built for
// plain x86-64 (so one wheel runs on any x86-64 CPU), the run-time check
// that decides whether they run, and the silencing of a GCC warning their
// intrinsics trigger.

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define NPGRAD_AVX512_BUILD 1
#define NPGRAD_AVX512 __attribute__((target("avx512f")))

// GCC's AVX-512 intrinsics pass an intentionally undefined register as the
// masked-off source (`__m512 __Y = __Y;`), which -Wmaybe-uninitialized and
// -Wuninitialized flag once they are inlined into a kernel.
#if defined(__GNUC__) && !defined(__clang__)
#define NPGRAD_AVX512_WARNINGS_OFF                                \
  _Pragma("GCC diagnostic push")                                  \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
          _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define NPGRAD_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define NPGRAD_AVX512_WARNINGS_OFF
#define NPGRAD_AVX512_WARNINGS_ON
#endif

namespace npgrad::kernels {

/// Whether this CPU has AVX-512F (checked once).
inline bool cpu_has_avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f") != 0;
  return has;
}

}  // namespace npgrad::kernels

#endif
