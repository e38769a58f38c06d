// exp.hpp and log.hpp: the float exponential and logarithm kernels against e^z and log x in
// double, in every build of the suite (whichever kernels the build's solvers use, and whatever the
// suite's scalar), at their ends and special values; exponential(), exponential_row() and
// logarithm() are the kernels or std::exp, Eigen's exp and std::log as the build chooses, double
// always std::exp and std::log to the bit.
#include "support.hpp"
#include "pbrl/core/detail/exp.hpp"
#include "pbrl/core/detail/log.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace test_exp {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {

// |got - e^z| in units in the last place of e^z as a float (normal range), or of the smallest
// subnormal (subnormal range).
double error_units(float z, float got) {
  const double exact = std::exp(double(z));
  if (exact >= double(FLT_MIN)) {
    int e = 0;
    std::frexp(exact, &e);
    return std::fabs(double(got) - exact) / std::ldexp(1.0, e - 24);
  }
  return std::fabs(double(got) - exact) / std::ldexp(1.0, -149);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("the float exponential kernel: within 2 units in the last place of e^z on [-104, 88.7], monotone") {
  // 2^17 points evenly over [-104, 88.72], every one of the kernel's reduction intervals hundreds
  // of times, and the points next to each boundary (n + 1/2) ln 2 where the reduction switches.
  constexpr int kPoints = 1 << 17;
  const float lo = -104.0f, hi = 88.72f;
  double worst_normal = 0, worst_subnormal = 0;
  int not_monotone = 0;
  float previous = 0.0f;
  for (int i = 0; i <= kPoints; ++i) {
    const float z = lo + (hi - lo) * float(i) / float(kPoints);
    const float got = pbrl::detail::exponential_float(z);
    const double units = error_units(z, got);
    if (std::exp(double(z)) >= double(FLT_MIN)) {
      if (units > worst_normal) worst_normal = units;
    } else if (units > worst_subnormal) {
      worst_subnormal = units;
    }
    if (i > 0 && got < previous) ++not_monotone;
    previous = got;
  }
  CHECK(worst_normal <= 2.0);
  CHECK(worst_subnormal <= 1.0);
  CHECK(not_monotone == 0);
  MESSAGE("largest error: " << worst_normal << " ulp (normal results), " << worst_subnormal
                            << " smallest-subnormal units (subnormal results)");
  const float ln2 = 0.693147180559945f;
  for (int n = -150; n <= 128; ++n) {
    const float boundary = (float(n) + 0.5f) * ln2;
    for (float z : {std::nextafter(boundary, -200.0f), boundary, std::nextafter(boundary, 200.0f)}) {
      if (z < -103.97f || z > 88.72f) continue;
      CHECK(error_units(z, pbrl::detail::exponential_float(z)) <= 2.0);
    }
  }
}

TEST_CASE("the float exponential kernel: exact and special values") {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  CHECK(pbrl::detail::exponential_float(0.0f) == 1.0f);
  CHECK(pbrl::detail::exponential_float(-0.0f) == 1.0f);
  CHECK(pbrl::detail::exponential_float(-kInf) == 0.0f);
  CHECK(pbrl::detail::exponential_float(kInf) == kInf);
  CHECK(std::isnan(pbrl::detail::exponential_float(std::numeric_limits<float>::quiet_NaN())));
  CHECK(pbrl::detail::exponential_float(-104.0f) == 0.0f);
  CHECK(pbrl::detail::exponential_float(-std::numeric_limits<float>::max()) == 0.0f);
  CHECK(pbrl::detail::exponential_float(std::numeric_limits<float>::max()) == kInf);
  // The ends of the range: the smallest subnormal (e^-103.97 = 0.7e-45 rounds to 1.4e-45), a
  // result below the normal floats, the largest finite results (n = 128) and the first infinite.
  CHECK(pbrl::detail::exponential_float(-103.97f) == std::numeric_limits<float>::denorm_min());
  CHECK(pbrl::detail::exponential_float(-87.34f) > 0.0f);
  CHECK(pbrl::detail::exponential_float(-87.34f) < FLT_MIN);
  CHECK(error_units(88.72f, pbrl::detail::exponential_float(88.72f)) <= 2.0);
  CHECK(std::isfinite(pbrl::detail::exponential_float(88.7228f)));
  CHECK(pbrl::detail::exponential_float(88.7229f) == kInf);
  // Tiny arguments: e^z = 1 + z rounds to 1 or next to it.
  CHECK(pbrl::detail::exponential_float(-std::numeric_limits<float>::denorm_min()) == 1.0f);
  CHECK(pbrl::detail::exponential_float(std::numeric_limits<float>::denorm_min()) == 1.0f);
  CHECK(error_units(-1e-7f, pbrl::detail::exponential_float(-1e-7f)) <= 1.0);
  CHECK(error_units(1e-7f, pbrl::detail::exponential_float(1e-7f)) <= 1.0);
}

TEST_CASE("exponential: std::exp to the bit in double (and in float on glibc), the row form Eigen's exp") {
  for (double z : {0.0, -1e-300, -1e-8, -0.5, -1.0, -20.0, -700.0, -745.0, -746.0, 0.25, 3.0}) {
    CHECK(same_bits(pbrl::exponential(z), std::exp(z)));
  }
  const double row[5] = {0.0, -0.1, -2.5, -40.0, -700.0};
  double out[5];
  pbrl::exponential_row<5>(row, out);
  const Eigen::Matrix<double, 1, 5> expected = Eigen::Map<const Eigen::Matrix<double, 1, 5>>(row).array().exp().matrix();
  for (int a = 0; a < 5; ++a) CHECK(same_bits(out[a], expected(a)));
  // Float: the kernel where the build uses it (bare metal), else std::exp and Eigen's exp; the
  // row in place too.
  float frow[5] = {0.0f, -0.1f, -2.5f, -40.0f, -100.0f};
  float fexpected[5];
  if (pbrl::own_exponential<float>()) {
    for (int a = 0; a < 5; ++a) CHECK(pbrl::exponential(frow[a]) == pbrl::detail::exponential_float(frow[a]));
    for (int a = 0; a < 5; ++a) fexpected[a] = pbrl::detail::exponential_float(frow[a]);
  } else {
    for (int a = 0; a < 5; ++a) CHECK(pbrl::exponential(frow[a]) == std::exp(frow[a]));
    Eigen::Map<Eigen::Matrix<float, 1, 5>> e(fexpected);
    e = Eigen::Map<const Eigen::Matrix<float, 1, 5>>(frow).array().exp().matrix();
  }
  pbrl::exponential_row<5>(frow, frow);
  for (int a = 0; a < 5; ++a) CHECK(frow[a] == fexpected[a]);
}

TEST_CASE("sigmoid: 1 / (1 + e^-z) within a few units in the last place, its ends, monotone, sigma(-z) = 1 - sigma(z)") {
  // Against long double at points over both signs, where each branch's numerator is used, out to
  // where e^-|z| underflows (z = -745 in double, -104 in float) and beyond.
  const Real eps = std::numeric_limits<Real>::epsilon();
  Real previous = Real(0);
  int not_monotone = 0;
  long double worst = 0;
  for (int i = -4000; i <= 4000; ++i) {
    const Real z = Real(i) * Real(0.03);  // [-120, 120]
    const Real got = pbrl::sigmoid(z);
    const long double exact = 1.0L / (1.0L + std::exp(-static_cast<long double>(z)));
    if (exact > static_cast<long double>(std::numeric_limits<Real>::min()))
      worst = std::max(worst, std::fabs(static_cast<long double>(got) - exact) / exact);
    if (got < previous) ++not_monotone;
    previous = got;
    CHECK(got >= Real(0));
    CHECK(got <= Real(1));
  }
  CHECK(not_monotone == 0);
  CHECK(worst <= 4 * eps);
  CHECK(pbrl::sigmoid(Real(0)) == Real(0.5));
  CHECK(pbrl::sigmoid(-Real(0)) == Real(0.5));
  CHECK(pbrl::sigmoid(std::numeric_limits<Real>::infinity()) == Real(1));
  CHECK(pbrl::sigmoid(-std::numeric_limits<Real>::infinity()) == Real(0));
  CHECK(pbrl::sigmoid(std::numeric_limits<Real>::max()) == Real(1));
  CHECK(pbrl::sigmoid(std::numeric_limits<Real>::lowest()) == Real(0));
  CHECK(std::isnan(pbrl::sigmoid(std::numeric_limits<Real>::quiet_NaN())));
  // Far out on the negative side it is e^z, down into the subnormals where e^-z has overflowed
  // (so 1 / (1 + e^-z) would give 0).
  const Real far = kDouble ? Real(-700) : Real(-80);
  CHECK(pbrl::sigmoid(kDouble ? Real(-740) : Real(-100)) > Real(0));
  CHECK(std::fabs(pbrl::sigmoid(far) / pbrl::exponential(far) - Real(1)) <= 4 * eps);
  for (Real z : {Real(0.1), Real(1), Real(3), Real(12)})
    CHECK(std::fabs(pbrl::sigmoid(-z) - (Real(1) - pbrl::sigmoid(z))) <= 2 * eps);
}

// |got - log x| in units in the last place of log x as a float.
double log_error_units(float x, float got) {
  const double exact = std::log(double(x));
  int e = 0;
  std::frexp(exact, &e);
  return std::fabs(double(got) - exact) / std::ldexp(1.0, e - 24);
}

TEST_CASE("the float logarithm kernel: within 2 units in the last place of log x, monotone, its ends") {
  // 2^17 points spread evenly in the exponent over the positive floats (subnormals included), and
  // the points next to every power of two and to each fold point sqrt(1/2) 2^k.
  constexpr int kPoints = 1 << 17;
  double worst = 0;
  int not_monotone = 0;
  float previous = -std::numeric_limits<float>::infinity();
  for (int i = 0; i <= kPoints; ++i) {
    const float x = std::exp2(-149.0f + 276.9f * float(i) / float(kPoints));  // 2^-149 .. 2^127.9
    const float got = pbrl::detail::logarithm_float(x);
    if (x != 1.0f) worst = std::max(worst, log_error_units(x, got));
    if (got < previous) ++not_monotone;
    previous = got;
  }
  CHECK(worst <= 2.0);
  CHECK(not_monotone == 0);
  MESSAGE("largest error of the logarithm: " << worst << " ulp");
  for (int k = -148; k <= 127; ++k) {
    for (float base : {std::ldexp(1.0f, k), std::ldexp(0.707106781f, k + 1)})
      for (float x : {std::nextafter(base, 0.0f), base, std::nextafter(base, 1e38f)})
        if (x > 0.0f && x != 1.0f) CHECK(log_error_units(x, pbrl::detail::logarithm_float(x)) <= 2.0);
  }
  // Exact and special values; the last subnormal and the first normal float in order.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  CHECK(pbrl::detail::logarithm_float(1.0f) == 0.0f);
  CHECK(pbrl::detail::logarithm_float(0.0f) == -kInf);
  CHECK(pbrl::detail::logarithm_float(-0.0f) == -kInf);
  CHECK(pbrl::detail::logarithm_float(kInf) == kInf);
  CHECK(std::isnan(pbrl::detail::logarithm_float(-1.0f)));
  CHECK(std::isnan(pbrl::detail::logarithm_float(-kInf)));
  CHECK(std::isnan(pbrl::detail::logarithm_float(std::numeric_limits<float>::quiet_NaN())));
  const float smallest = std::numeric_limits<float>::denorm_min();
  CHECK(log_error_units(smallest, pbrl::detail::logarithm_float(smallest)) <= 2.0);
  const float last_subnormal = std::nextafter(FLT_MIN, 0.0f);
  CHECK(pbrl::detail::logarithm_float(last_subnormal) <= pbrl::detail::logarithm_float(FLT_MIN));
  CHECK(log_error_units(FLT_MAX, pbrl::detail::logarithm_float(FLT_MAX)) <= 2.0);
}

TEST_CASE("logarithm: std::log to the bit in double (and in float off bare metal), else the kernel") {
  for (double x : {1.0, 1e-300, 1e-8, 0.5, 0.7, 2.0, 1e300, 5e-324})
    CHECK(same_bits(pbrl::logarithm(x), std::log(x)));
  for (float x : {1.0f, 1e-30f, 0.25f, 0.70710677f, 3.0f, 1e30f}) {
    if (pbrl::own_logarithm<float>())
      CHECK(pbrl::logarithm(x) == pbrl::detail::logarithm_float(x));
    else
      CHECK(pbrl::logarithm(x) == std::log(x));
  }
}

}  // namespace test_exp
