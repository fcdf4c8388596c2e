// The AVX-512 float32 exp of the softmax rows (Note [Vector exp for softmax
// rows] in kernels/vector_exp.h): within one ulp of the correctly rounded exp
// over the float range, the special values, and the fused passes with every
// tail length.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "npgrad/kernels/vector_exp.h"

namespace vexp = npgrad::kernels::vector_exp;

namespace {

// The float's position on the number line: adjacent floats differ by one.
int64_t ordered(float f) {
  int32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits < 0 ? -static_cast<int64_t>(bits & 0x7FFFFFFF) : bits;
}

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// exp rounded once from double (e^x of a float is never within double's
// rounding error of a float halfway point in this range).
float reference_exp(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}

}  // namespace

TEST_CASE("vector exp is within one ulp of the rounded exp over the floats") {
  if (!vexp::available()) {
    WARN("no AVX-512F on this CPU: the vector exp is not used here");
    return;
  }
  // Every 61st bit pattern of the positive and negative floats (NaNs
  // included), about 70 million values in batches.
  std::vector<float> x, y;
  int64_t worst = 0;
  float worst_at = 0;
  int64_t nan_mismatches = 0;
  for (uint64_t start = 0; start < (uint64_t{1} << 32);
       start += uint64_t{61} << 16) {
    x.clear();
    for (uint64_t b = start;
         b < start + (uint64_t{61} << 16) && b < (uint64_t{1} << 32);
         b += 61) {
      x.push_back(from_bits(static_cast<uint32_t>(b)));
    }
    y.assign(x.size(), 0.0f);
    vexp::exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
      float want = reference_exp(x[i]);
      if (std::isnan(want) || std::isnan(y[i])) {
        nan_mismatches += std::isnan(want) != std::isnan(y[i]);
        continue;
      }
      int64_t ulps = std::abs(ordered(y[i]) - ordered(want));
      if (ulps > worst) {
        worst = ulps;
        worst_at = x[i];
      }
    }
  }
  INFO("worst at x = " << worst_at);
  CHECK(worst <= 1);
  CHECK(nan_mismatches == 0);
}

TEST_CASE("vector exp of the special values and the range edges") {
  if (!vexp::available()) {
    return;
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {
      0.0f,
      -0.0f,
      kInf,
      -kInf,
      kNan,
      88.72283f,    // the largest finite result
      88.72284f,    // the first overflow
      -87.33654f,   // the smallest normal result
      -103.27893f,  // the smallest denormal result
      -103.97282f,  // below half the smallest denormal: 0
      1.0f,
      -1.0f};
  std::vector<float> y(x.size());
  vexp::exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
  CHECK(y[0] == 1.0f);
  CHECK(y[1] == 1.0f);
  CHECK(y[2] == kInf);
  CHECK(y[3] == 0.0f);
  CHECK(std::isnan(y[4]));
  for (std::size_t i = 5; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    CHECK(std::abs(ordered(y[i]) - ordered(reference_exp(x[i]))) <= 1);
  }
  CHECK(std::isfinite(y[5]));
  CHECK(y[6] == kInf);
  CHECK(y[8] > 0.0f);
  CHECK(y[9] == 0.0f);
}

TEST_CASE("vector exp's fused passes, for every tail length") {
  if (!vexp::available()) {
    return;
  }
  for (int64_t n = 0; n <= 50; ++n) {
    INFO("n = " << n);
    std::vector<float> x(n), g(n), out(n + 1, -7.0f);  // a guard after n
    for (int64_t i = 0; i < n; ++i) {
      x[i] = 0.37f * static_cast<float>(i % 11) - 1.5f;
      g[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
    }
    const float shift = 0.75f;
    double want_sum = 0, want_exp_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      want_sum += x[i];
      want_exp_sum += std::exp(static_cast<double>(x[i] - shift));
    }
    CHECK(vexp::sum(x.data(), n) == Approx(want_sum).margin(1e-5));
    CHECK(
        vexp::sum_exp_shifted(x.data(), shift, n) ==
        Approx(want_exp_sum).epsilon(1e-6));
    CHECK(
        vexp::exp_shifted_sum(x.data(), shift, out.data(), n) ==
        Approx(want_exp_sum).epsilon(1e-6));
    for (int64_t i = 0; i < n; ++i) {
      CHECK(out[i] == Approx(reference_exp(x[i] - shift)).epsilon(1e-6));
    }
    CHECK(out[n] == -7.0f);  // nothing written past the row
    vexp::subtract_twice(x.data(), shift, 0.125f, out.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      CHECK(out[i] == (x[i] - shift) - 0.125f);
    }
    vexp::grad_minus_scaled_exp(g.data(), x.data(), 0.5f, out.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      CHECK(out[i] == Approx(g[i] - std::exp(x[i]) * 0.5f).margin(1e-6));
    }
    CHECK(out[n] == -7.0f);
    // In place: out is x.
    std::vector<float> inplace = x;
    vexp::exp(inplace.data(), inplace.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      CHECK(inplace[i] == Approx(reference_exp(x[i])).epsilon(1e-6));
    }
  }
}
