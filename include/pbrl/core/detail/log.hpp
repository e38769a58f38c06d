#pragma once
// log x, the logarithm of every policy entry, softmax sum and regularizer term in the library.
// Where the library uses its own float exponential (exp.hpp: bare metal with a single-precision
// FPU), it uses its own float logarithm too: newlib's logf costs about 75 instructions a call on a
// Cortex-M4, its errno wrapper included, and a sampled step takes S x A of them a batch (a fifth
// of a sampled PBRL-Bellman step). Elsewhere std::log. PBRL_OWN_FLOAT_LOG = 0 or 1 chooses.
// The kernel is Cephes' single-precision logarithm (Moshier): x = m 2^e with m in
// [sqrt(1/2), sqrt(2)) from the float's bits, log(1 + f) = f - f^2/2 + f^3 P(f) with a degree-8
// P, and e ln 2 added in two parts (ln 2 = C1 + C2, C1 with 9 significant bits). Checked against
// log x in double at every positive float on x86-64, with and without fused multiply-adds: at most
// 0.83 units in the last place, exactly 0 at 1, monotone; -inf at +-0, NaN below 0 and for NaN,
// inf at inf (subnormals out of line, scaled by 2^23 with the 23 joining the exponent).
// tests/test_exp.cpp asserts 2 units on 2^17 points in every tree.

#include "pbrl/core/detail/exp.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#ifndef PBRL_OWN_FLOAT_LOG
#define PBRL_OWN_FLOAT_LOG PBRL_OWN_FLOAT_EXP
#endif

namespace pbrl {
namespace detail {

// log(x 2^k) for a normal float x > 0 (x = m 2^e, m in [0.5, 1) from the bits, then folded into
// [sqrt(1/2), sqrt(2)); k joins e, so that e ln 2 is added in its two parts).
inline float logarithm_normal(float x, int k = 0) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  int e = static_cast<int>(bits >> 23) - 126 + k;
  float m = float_from_bits((bits & 0x007fffffu) | 0x3f000000u);
  if (m < 0.707106781186547524f) {
    e -= 1;
    m = m + m - 1.0f;
  } else {
    m = m - 1.0f;
  }
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  const float fe = static_cast<float>(e);
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  return (m + y) + 0.693359375f * fe;
}

// Zero, negative, subnormal, infinite or NaN, out of line (the common path keeps one test).
[[gnu::noinline]] inline float logarithm_float_ends(float x) {
  if (x == 0.0f) return -std::numeric_limits<float>::infinity();
  if (!(x > 0.0f)) return std::numeric_limits<float>::quiet_NaN();  // below 0, NaN
  if (x > std::numeric_limits<float>::max()) return x;                // inf
  return logarithm_normal(x * 8388608.0f, -23);                      // subnormal: log(x 2^23 2^-23)
}

// Out of line: inlined, its nine constants crowd the registers of the loops that take logs (on the
// Cortex-M4F the exact steps took 1,000-4,000 instructions more than with the call).
[[gnu::noinline]] inline float logarithm_float(float x) {
  if (!(x >= std::numeric_limits<float>::min() && x <= std::numeric_limits<float>::max()))
    return logarithm_float_ends(x);
  return logarithm_normal(x);
}

}  // namespace detail

/// Whether logarithm<Scalar> is the library's own float kernel (else std::log).
template <typename Scalar>
constexpr bool own_logarithm() {
  return std::is_same<Scalar, float>::value && PBRL_OWN_FLOAT_LOG != 0;
}

/// log x: the library's float kernel where own_logarithm, std::log otherwise.
template <typename Scalar>
inline Scalar logarithm(Scalar x) {
  if constexpr (own_logarithm<Scalar>())
    return detail::logarithm_float(x);
  else
    return std::log(x);
}

}  // namespace pbrl
