#pragma once
/// @file
/// Eigen and platform settings in one place, and the fixed-size types every header uses.
/// The alignment setting that changes layouts (EIGEN_MAX_STATIC_ALIGN_BYTES) comes from the
/// CMake target pbrl::pbrl so that the library and its users always agree on it.

#include "pbrl/core/status.hpp"

#include <Eigen/Core>

#include <cmath>
#include <cstring>
#include <limits>

// Work caps: the largest batch B, horizon H and inner step count T a setting may ask for, so the
// worst case of one step() is known when the firmware is built (validation refuses more). A build
// lowers them with the CMake cache variables PBRL_MAX_BATCH, PBRL_MAX_HORIZON and
// PBRL_MAX_INNER_STEPS, which travel with the target (the horizon also sizes the trajectory
// buffers, so library and firmware must agree); the defaults are the widest the library allows.
#ifndef PBRL_MAX_BATCH
/// Work cap: the largest sampled batch B a setting may ask for, in [1, 2^20] (default 2^20).
/// Set by the CMake cache variable PBRL_MAX_BATCH, which travels with the target pbrl::pbrl.
#define PBRL_MAX_BATCH 1048576
#endif
#ifndef PBRL_MAX_HORIZON
/// Work cap: the largest rollout horizon H a setting may ask for, in [1, 4096] (default 64).
/// It also sizes the trajectory buffers, so the library and the firmware must agree on it (the
/// CMake cache variable PBRL_MAX_HORIZON travels with the target).
#define PBRL_MAX_HORIZON 64
#endif
#ifndef PBRL_MAX_INNER_STEPS
/// Work cap: the largest inner (oracle) step count T a setting may ask for, in [1, 100000]
/// (default 100000). Set by the CMake cache variable PBRL_MAX_INNER_STEPS.
#define PBRL_MAX_INNER_STEPS 100000
#endif
// B*H*(T+2) environment steps per solver step, and counts over many steps, stay far inside int64.
static_assert(PBRL_MAX_BATCH >= 1 && PBRL_MAX_BATCH <= 1048576, "PBRL_MAX_BATCH must be in [1, 2^20]");
static_assert(PBRL_MAX_HORIZON >= 1 && PBRL_MAX_HORIZON <= 4096, "PBRL_MAX_HORIZON must be in [1, 4096]");
static_assert(PBRL_MAX_INNER_STEPS >= 1 && PBRL_MAX_INNER_STEPS <= 100000,
              "PBRL_MAX_INNER_STEPS must be in [1, 100000]");

namespace pbrl {

/// A value per state: V(s), d(s), rho(s).
template <typename Scalar, int S>
using StateVector = Eigen::Matrix<Scalar, S, 1>;
/// A value per state-action pair, S x A and row-major: row s of a policy is a distribution over
/// actions, and the flat index s*A + a matches the row of the transition table.
template <typename Scalar, int S, int A>
using StateActionMatrix = Eigen::Matrix<Scalar, S, A, Eigen::RowMajor>;
/// A column vector of N scalars (a problem's parameters x).
template <typename Scalar, int N>
using Vector = Eigen::Matrix<Scalar, N, 1>;

/// A read-only S x A caller array (flash on a device) seen through a fixed-size map, never copied.
template <typename Scalar, int S, int A>
using ConstStateActionMap = Eigen::Map<const StateActionMatrix<Scalar, S, A>>;
/// A read-only caller array of S values seen through a fixed-size map, never copied.
template <typename Scalar, int S>
using ConstStateMap = Eigen::Map<const StateVector<Scalar, S>>;
/// A read-only transition table seen through a fixed-size map: row s*A + a holds P(. | s, a).
template <typename Scalar, int S, int A>
using ConstTransitionMap = Eigen::Map<const Eigen::Matrix<Scalar, S * A, S, Eigen::RowMajor>>;

/// Compile-time check that a model has at least two states and two actions.
/// Why: Eigen forbids row-major column vectors, which a single state or action would create.
template <int S, int A>
constexpr void check_sizes() {
  // Eigen forbids row-major column vectors, which a single state or action would create.
  static_assert(S >= 2 && A >= 2, "pbrl needs at least two states and two actions");
}

/// Tolerance for "sums to one" checks on model data given in Scalar precision: 64 epsilon.
template <typename Scalar>
constexpr Scalar distribution_tolerance() {
  return std::numeric_limits<Scalar>::epsilon() * Scalar(64);
}
/// Tolerance for "sums to one" checks of a row of n probabilities (n roundings): what the model
/// checks use.
template <typename Scalar>
constexpr Scalar distribution_tolerance(int n) {
  return distribution_tolerance<Scalar>() * Scalar(n);
}

/// Smallest probability that enters a logarithm: keeps log and its gradient finite.
template <typename Scalar>
constexpr Scalar log_floor() {
  return std::numeric_limits<Scalar>::min() * Scalar(1) / std::numeric_limits<Scalar>::epsilon();
}

// Checks on stored arrays: plain loops over pointers, instantiated once per Scalar rather than
// once per size and expression type. Why: GCC's front end slows superlinearly with the number of
// Eigen class instantiations in a translation unit, and Eigen's allFinite() and (x < c).any()
// instantiate a handful per array type. They cost O(n) against the O(S^2)-O(S^3) work of the
// calls that use them (some run once per oracle step).
namespace detail {

// Branch-free: x * 0 is 0 for a finite x and NaN for an infinite or NaN one (IEEE; the library
// is never built with -ffinite-math-only or -ffast-math, which would fold it), so the sums stay 0
// exactly when every entry is finite. Four sums, four entries a pass: about 2 instructions an
// entry on a Cortex-M4 against 7 for a test and a branch each (the checks of every call's inputs
// were 6 % of an exact PBRL-NI step). No early exit: a failing check is the rare path.
// The tail is three guarded statements, not a loop: GCC 12 on 32-bit targets warns about an
// int-indexed tail loop (-Waggressive-loop-optimizations: "iteration 2^30 invokes undefined
// behavior", an error under the instantiation check's strict flags), and walking by pointer
// instead costs the main loop about 1 % of an exact step on the Cortex-M4 and 3.4 KB of flash.
// all_finite_times<F>(p, n): every p_i * F finite. With F a power of two the product is exact
// unless it overflows, so F = 4 tells |p_i| <= max/4 for every i, finite, in the same branch-free
// pass (a compare and a branch per entry cost about 11 instructions on the Cortex-M4). F is a
// template argument so that all_finite's p_i * 1 folds away in its own instantiation (as a run-time
// argument it cost the Cortex-M0+, in software floating point, a multiply per entry: 2 % of a
// step). Not `inline`: so marked, GCC inlined the four-lane loop into every check and the minimal
// link grew by 9.9 KB on the Cortex-M4F.
template <int F, typename Scalar>
bool all_finite_times(const Scalar* p, int n) {
  const Scalar f(F);
  Scalar s0(0), s1(0), s2(0), s3(0);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += (p[i] * f) * Scalar(0);
    s1 += (p[i + 1] * f) * Scalar(0);
    s2 += (p[i + 2] * f) * Scalar(0);
    s3 += (p[i + 3] * f) * Scalar(0);
  }
  if (i < n) s0 += (p[i] * f) * Scalar(0);
  if (i + 1 < n) s1 += (p[i + 1] * f) * Scalar(0);
  if (i + 2 < n) s2 += (p[i + 2] * f) * Scalar(0);
  return (s0 + s1) + (s2 + s3) == Scalar(0);
}
template <typename Scalar>
bool all_finite(const Scalar* p, int n) {
  return all_finite_times<1>(p, n);
}

// rows x cols values, row after row: every entry finite (else not_finite), every entry >= lower
// (> lower if positive) and every row summing to one within tol (else bad).
template <typename Scalar>
Status check_distribution_rows(const Scalar* p, int rows, int cols, Scalar lower, bool positive, Scalar tol,
                               Status bad) {
  if (!all_finite(p, rows * cols)) return Status::not_finite;
  for (int r = 0; r < rows; ++r) {
    const Scalar* row = p + r * cols;
    Scalar sum = 0;
    for (int c = 0; c < cols; ++c) {
      if (positive ? !(row[c] > lower) : row[c] < lower) return bad;
      sum += row[c];
    }
    if (std::abs(sum - Scalar(1)) > tol) return bad;
  }
  return Status::ok;
}

// <p, v> of S entries (p contiguous). Without SIMD (the Cortex-M targets) one multiply-add chain
// in index order, which takes a multiply-add and a load an entry: Eigen's dot sums a tree there,
// one instruction more for every two entries. With SIMD, Eigen's dot, whose lanes are faster.
template <typename Scalar, int S>
Scalar row_dot(const Scalar* p, const Eigen::Matrix<Scalar, S, 1>& v) {
#ifdef EIGEN_VECTORIZE
  return Eigen::Map<const Eigen::Matrix<Scalar, S, 1>>(p).dot(v);
#else
  Scalar sum = p[0] * v(0);
  for (int i = 1; i < S; ++i) sum += p[i] * v(i);
  return sum;
#endif
}

// dst = src for a fixed-size matrix (a solver's commit of its next iterate), as one block copy:
// without SIMD (the Cortex-M targets) Eigen copies entry by entry, 4 instructions an entry on the
// M4F, and the C library's memcpy moves words in unrolled blocks, about 2.
template <typename Scalar, int R, int C, int O>
void copy_matrix(Eigen::Matrix<Scalar, R, C, O, R, C>& dst, const Eigen::Matrix<Scalar, R, C, O, R, C>& src) {
  std::memcpy(dst.data(), src.data(), sizeof(Scalar) * R * C);
}

// Every entry finite and within [lower, upper].
template <typename Scalar>
bool all_within(const Scalar* p, int n, Scalar lower, Scalar upper) {
  for (int i = 0; i < n; ++i)
    if (!(p[i] >= lower && p[i] <= upper)) return false;
  return true;
}

// Largest |p_i|; NaN if any entry is NaN.
template <typename Scalar>
Scalar max_abs(const Scalar* p, int n) {
  Scalar largest = 0;
  for (int i = 0; i < n; ++i) {
    const Scalar a = std::abs(p[i]);
    if (std::isnan(a)) return a;
    if (a > largest) largest = a;
  }
  return largest;
}

// True when the coefficients are stored one after another (a Matrix, a Map with default strides,
// a row of a row-major matrix): then data() and size() describe them.
template <typename Derived>
constexpr bool contiguous() {
  if constexpr ((int(Derived::Flags) & Eigen::DirectAccessBit) == 0) {
    return false;
  } else {
    return int(Derived::InnerStrideAtCompileTime) == 1 &&
           (bool(Derived::IsVectorAtCompileTime) ||
            int(Derived::OuterStrideAtCompileTime) ==
                int(Derived::IsRowMajor ? Derived::ColsAtCompileTime : Derived::RowsAtCompileTime));
  }
}

}  // namespace detail

/// Whether every coefficient of m is finite (no NaN, no infinity).
/// Stored coefficients are checked by one branch-free pass over the array.
template <typename Derived>
bool all_finite(const Eigen::DenseBase<Derived>& m) {
  if constexpr (detail::contiguous<Derived>())
    return detail::all_finite(m.derived().data(), int(m.size()));
  else
    return m.allFinite();
}

}  // namespace pbrl
