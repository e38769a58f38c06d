#pragma once
// e^z for every softmax (logits less their max), sigmoid (e^-|z|) and log-sum-exp in the library.
// In double, with glibc, and without a single-precision FPU it is std::exp; in float on bare metal
// with a single-precision FPU it is the library's own kernel, Cephes' single-precision exponential
// (about 22 instructions and no call, against about 40 for newlib's expf on a Cortex-M4).
// PBRL_OWN_FLOAT_EXP = 0 or 1 overrides the choice. The kernel returns 0 below -103.97, infinity
// above 88.72 and NaN for NaN; tests/test_exp.cpp asserts 2 units in the last place (1 where the
// result is subnormal) in every tree. How it works and its accuracy:
// docs/performance.md#the-float-exponential-and-logarithm.

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#ifndef PBRL_OWN_FLOAT_EXP
#if !defined(__GLIBC__) && defined(__ARM_FP) && (__ARM_FP & 4)
#define PBRL_OWN_FLOAT_EXP 1
#else
#define PBRL_OWN_FLOAT_EXP 0
#endif
#endif

namespace pbrl {
namespace detail {

inline float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// e^z = e^r * 2^n: n = round(z / ln 2) and e^r (|r| <= ln 2 / 2, e^r in [0.70, 1.42]).
inline float exponential_reduced(float z, int& n) {
  // Adding and subtracting 1.5 * 2^23 rounds to an integer (|z / ln 2| < 2^22; the library is
  // never built with -ffast-math, which would fold the pair away).
  const float shift = 12582912.0f;
  const float fn = (z * 1.44269504088896341f + shift) - shift;
  n = static_cast<int>(fn);
  float r = z - fn * 0.693359375f;  // C1: 9 significant bits, fn * C1 exact for |n| <= 150
  r = r + fn * 2.12194440e-4f;      // - fn * C2, C2 = ln 2 - C1
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return (p * r2 + r) + 1.0f;
}

// 2^k for -126 <= k <= 127.
inline float power_of_two(int k) { return float_from_bits(static_cast<std::uint32_t>(k + 127) << 23); }

// |z| > 87 or NaN, out of line (the common path keeps one test): 2^n may be outside the normal
// floats (n = 127, 128, or e^z subnormal), so it is applied in two factors, the second rounding once.
[[gnu::noinline]] inline float exponential_float_ends(float z) {
  if (!(z >= -103.972084f)) return z < 0.0f ? 0.0f : z;  // below half the smallest subnormal, -inf; NaN
  if (z > 88.7228394f) return std::numeric_limits<float>::infinity();
  int n = 0;
  const float e = exponential_reduced(z, n);
  const int half = n / 2;
  return (e * power_of_two(half)) * power_of_two(n - half);
}

inline float exponential_float(float z) {
  if (!(std::fabs(z) <= 87.0f)) return exponential_float_ends(z);
  int n = 0;
  const float e = exponential_reduced(z, n);  // |n| <= 126: 2^n a normal float
  return e * power_of_two(n);
}

}  // namespace detail

/// Whether exponential<Scalar> is the library's own float kernel (else std::exp).
template <typename Scalar>
constexpr bool own_exponential() {
  return std::is_same<Scalar, float>::value && PBRL_OWN_FLOAT_EXP != 0;
}

/// e^z: the library's float kernel where own_exponential, std::exp otherwise.
template <typename Scalar>
inline Scalar exponential(Scalar z) {
  if constexpr (own_exponential<Scalar>())
    return detail::exponential_float(z);
  else
    return std::exp(z);
}

/// out_a = e^{z_a} for a < N; out may be z. The kernel entry by entry where own_exponential,
/// Eigen's exp over the row otherwise (vectorized where Eigen is).
template <int N, typename Scalar>
inline void exponential_row(const Scalar* z, Scalar* out) {
  if constexpr (own_exponential<Scalar>()) {
    for (int a = 0; a < N; ++a) out[a] = detail::exponential_float(z[a]);
  } else {
    Eigen::Map<Eigen::Matrix<Scalar, 1, N>> e(out);
    e = Eigen::Map<const Eigen::Matrix<Scalar, 1, N>>(z).array().exp().matrix();
  }
}

/// sigma(z) = 1 / (1 + e^-z) without overflow (incentive design's incentive, the Bradley-Terry
/// probability): one exponential, of -|z|, and one division whose numerator is 1 or e^-|z| by the
/// sign of z, so no branch around the exponential.
template <typename Scalar>
Scalar sigmoid(Scalar z) {
  const Scalar e = exponential(-std::abs(z));
  return (z >= Scalar(0) ? Scalar(1) : e) / (Scalar(1) + e);
}

}  // namespace pbrl
