#pragma once
// Scalar conversions between double and the narrower float formats (float,
// float16, bfloat16), for the values the kernels read and write themselves
// (item, fill, wrapped numbers, the scalars of direct inner loops).

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace npgrad::kernels {

// A double as the nearest float; a finite value beyond float's range becomes
// inf, as NumPy and torch round it (the plain conversion would be UB).
inline float to_float(double v) {
  if (std::abs(v) > static_cast<double>(FLT_MAX) && std::isfinite(v)) {
    return v > 0 ? HUGE_VALF : -HUGE_VALF;
  }
  return static_cast<float>(v);
}

// IEEE binary16 <-> float, for the scalar reads and writes the kernels do
// themselves (item, fill); all arithmetic on float16 is NumPy's. A double
// becomes a half through float, as c10::Half converts it.
inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise into float's wider exponent range
    uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even, overflow to inf, nan stays nan.
inline uint16_t float_to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  bits &= 0x7fffffffu;
  if (bits >= 0x7f800000u) {
    return sign | (bits > 0x7f800000u ? 0x7e00 : 0x7c00);
  }
  if (bits >= 0x477ff000u) {  // 65520 and above round to inf
    return sign | 0x7c00;
  }
  if (bits < 0x38800000u) {
    // Below half's smallest normal: adding 0.5 lets the FPU round the value
    // to a multiple of 2^-24 (half's subnormal step) in float's mantissa.
    constexpr uint32_t kMagic = 126u << 23;  // 0.5f
    float magic, sum, x;
    std::memcpy(&magic, &kMagic, sizeof magic);
    std::memcpy(&x, &bits, sizeof x);
    sum = x + magic;
    uint32_t sum_bits;
    std::memcpy(&sum_bits, &sum, sizeof sum_bits);
    return sign | static_cast<uint16_t>(sum_bits - kMagic);
  }
  uint32_t odd = (bits >> 13) & 1u;
  bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
  return sign | static_cast<uint16_t>(bits >> 13);
}

// bfloat16 <-> float, as c10::BFloat16 converts: the float's upper 16 bits,
// rounded to nearest even; a nan becomes the quiet nan 0x7fc0.
inline float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_bfloat16(float f) {
  if (std::isnan(f)) {
    return 0x7fc0;
  }
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  uint32_t odd = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + odd) >> 16);
}

}  // namespace npgrad::kernels
