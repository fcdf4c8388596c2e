#pragma once
// What the kernels built for wider vectors than plain x86-64's share: the
// AVX-512 ones (vector_exp.cpp, gemm.cpp) and the AVX2 ones
// (normalization.cpp): whether this build can compile them
// (NPGRAD_AVX512_BUILD, on x86-64 with GCC or Clang), the per-function target
// attributes that let them use those instructions while the rest of npgrad
// is built for plain x86-64 (so one wheel runs on any x86-64 CPU), the
// run-time checks that decide whether they run, and the silencing of a GCC
// warning the AVX-512 intrinsics trigger.

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define NPGRAD_AVX512_BUILD 1
#define NPGRAD_AVX512 __attribute__((target("avx512f")))
// AVX2 with FMA (what torch's CPU kernels default to): for streaming row
// loops that GCC vectorizes itself, where its AVX-512 code was slower.
#define NPGRAD_AVX2 __attribute__((target("avx2,fma")))

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

/// Whether this CPU has AVX2 and FMA (checked once).
inline bool cpu_has_avx2_fma() {
  static const bool has =
      __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  return has;
}

}  // namespace npgrad::kernels

#endif
