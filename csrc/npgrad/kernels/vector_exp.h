#pragma once
// float32 exp over contiguous rows in AVX-512, fused with the passes that
// softmax, log_softmax and their backward make around it.
//
// Note [Vector exp for softmax rows]
// At cross_entropy's and attention's sizes the exp of the (log_)softmax rows
// is half of the layer's time. NumPy's float32 exp loop handles every input
// class one lane at a time at the edges and costs about a cycle an element;
// torch's vectorized exp costs less. This one is the textbook float32 exp
// (Cody-Waite reduction by ln 2, a degree-6 polynomial, the scale by 2^n with
// AVX-512's scalef, which rounds overflow to inf and gradual underflow once),
// within one ulp of the correctly rounded value over the whole float range
// (tests_cpp/test_vector_exp.cpp sweeps it); NaN stays NaN, -inf gives 0 and
// +inf gives inf. Each function below is one pass that would otherwise be two
// or three NumPy calls, and sums in 16 lanes (not NumPy's pairwise order: the
// same values up to the last bits).
//
// Only float32 and only where the CPU has AVX-512F (`available()`): elsewhere,
// and for float64, the callers keep NumPy's own exp loop, which has its AVX2
// and SSE versions.

#include <cstdint>

namespace npgrad::kernels::vector_exp {

/// Whether the functions below run (an x86-64 CPU with AVX-512F, checked
/// once). They must not be called when this is false.
bool available();

/// out[i] = exp(x[i]); `out` may be `x`.
void exp(const float* x, float* out, int64_t n);

/// out[i] = exp(x[i] - shift); returns the sum of out. `out` may be `x`.
float exp_shifted_sum(const float* x, float shift, float* out, int64_t n);

/// The sum of exp(x[i] - shift), nothing stored.
float sum_exp_shifted(const float* x, float shift, int64_t n);

/// The sum of x.
float sum(const float* x, int64_t n);

/// out[i] = (x[i] - first) - second, in that order (log_softmax's
/// (x - max) - log(sum): exactly -log(sum) at the max); `out` may be `x`.
void subtract_twice(
    const float* x, float first, float second, float* out, int64_t n);

/// out[i] = grad[i] - exp(result[i]) * scale: log_softmax's backward, with
/// scale the sum of the row's gradient. `out` may be `grad`.
void grad_minus_scaled_exp(
    const float* grad, const float* result, float scale, float* out, int64_t n);

}  // namespace npgrad::kernels::vector_exp
