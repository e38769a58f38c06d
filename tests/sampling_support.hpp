#pragma once
// Statistics shared by the sampling suites: an estimator is run n times with batch b on an
// advancing stream; the per-coordinate standard error SE = sd/sqrt(n) of the mean comes from those
// replicates, and each coordinate must satisfy |mean - exact| <= 4 SE + bias (bias bounds the
// horizon's truncation and, in float, the rounding of the sums). -DPBRL_SAMPLING_VERBOSE logs
// every coordinate's error in units of its SE.
#include "support.hpp"

#include <algorithm>
#include <cstring>

namespace {

// The regularizer's part of dV/dparam at s, per visit, as the estimators computed it before they
// cached it per batch (RegularizerFactors): grad row s += w * (direct: -tau dh(s,.); softmax:
// -tau pi(s) .* (l(s,.) - h_s), 0 where pi(a|s) = 0).
template <int S, int A>
void regularizer_term_per_visit(const pbrl::Regularizer<Real, S, A>& reg, pbrl::Parameterization param,
                                const pbrl::StateActionMatrix<Real, S, A>& pi, int s, Real w,
                                pbrl::StateActionMatrix<Real, S, A>& grad) {
  const Real tau = reg.tau;
  if (!(tau > Real(0))) return;
  if (param == pbrl::Parameterization::direct) {
    for (int a = 0; a < A; ++a) grad(s, a) -= w * tau * reg.derivative(s, a, pi(s, a));
  } else {
    const Real h = reg.value(s, pi.row(s));
    for (int a = 0; a < A; ++a) {
      const Real p = pi(s, a);
      if (p > Real(0)) grad(s, a) -= w * tau * p * (std::log(p) - reg.log_reference(s, a) - h);
    }
  }
}

#ifndef PBRL_SAMPLING_SCALE
#define PBRL_SAMPLING_SCALE 4
#endif
constexpr int kScale = kDouble ? PBRL_SAMPLING_SCALE : 1;  // replicates: 4x more in double

pbrl::SamplingSettings sizes(int horizon, int batch, bool crn = true) {
  pbrl::SamplingSettings s;
  s.horizon = horizon;
  s.batch = batch;
  s.common_random_numbers = crn;
  return s;
}

// Bound on the truncation bias of every estimator here (see estimators.hpp): gamma^H * (H +
// 1/(1-gamma)) * C with C = 100 (1 + |V|_max + tau*|dh|_max) / pi_min (generous), plus the rounding
// of float sums.
Real bias_bound(Real gamma, int horizon, Real value_max, Real pi_min, Real exact_scale) {
  const Real per_step = Real(100) * (Real(1) + value_max + Real(10)) / pi_min;
  const Real truncation =
      std::pow(gamma, Real(horizon)) * (Real(horizon) + Real(1) / (Real(1) - gamma)) * per_step;
  const Real rounding = kDouble ? Real(1e-12) : Real(2e-4) * (Real(1) + exact_scale);
  return truncation + rounding;
}

// Running mean and variance (Welford) of n replicate estimates, per coordinate.
template <int N>
struct Stats {
  int n = 0;
  Real mean[N] = {};
  Real m2[N] = {};
  Real squared_error = 0;  // sum over replicates and coordinates of (estimate - exact)^2

  void add(const Real* x, const Real* exact) {
    ++n;
    for (int i = 0; i < N; ++i) {
      const Real d = x[i] - mean[i];
      mean[i] += d / Real(n);
      m2[i] += d * (x[i] - mean[i]);
      squared_error += (x[i] - exact[i]) * (x[i] - exact[i]);
    }
  }
  Real se(int i) const { return std::sqrt(m2[i] / Real(n - 1) / Real(n)); }
  Real rms_error() const { return std::sqrt(squared_error / Real(n * N)); }
};

// n replicates of estimate(batch, out[N]).
template <int N, typename Estimate>
Stats<N> replicate(Estimate&& estimate, int n, int batch, const Real* exact) {
  Stats<N> st;
  Real out[N];
  for (int r = 0; r < n; ++r) {
    estimate(batch, out);
    st.add(out, exact);
  }
  return st;
}

// |mean - exact| <= 4 SE + bias for every coordinate; logs the errors in units of SE.
template <int N>
void check_within_error(const char* what, const Stats<N>& st, const Real* exact, Real bias) {
  Real worst(0), sum_z2(0), largest_se(0);
  for (int i = 0; i < N; ++i) {
    const Real error = std::abs(st.mean[i] - exact[i]);
    const Real se = st.se(i);
    CAPTURE(doctest::String(what));
    CAPTURE(i);
    CAPTURE(st.mean[i]);
    CAPTURE(exact[i]);
    CAPTURE(se);
    CHECK(error <= Real(4) * se + bias);
#ifdef PBRL_SAMPLING_VERBOSE
    MESSAGE(i, ": mean ", st.mean[i], " exact ", exact[i], " z ", (st.mean[i] - exact[i]) / se);
#endif
    largest_se = std::max(largest_se, se);
    if (se > Real(0)) {
      worst = std::max(worst, error / se);
      sum_z2 += (error / se) * (error / se);
    }
  }
  MESSAGE(doctest::String(what), ": ", N, " coordinates, ", st.n, " replicates; max |err|/SE = ", worst,
          ", rms |err|/SE = ", std::sqrt(sum_z2 / Real(N)), ", largest SE = ", largest_se,
          ", bias bound = ", bias);
}

// The RMS error over replicates and coordinates shrinks like 1/sqrt(B): 4x B -> about half.
template <int N, typename Estimate>
void check_error_halves(const char* what, Estimate&& estimate, int n, int batch, const Real* exact) {
  const Stats<N> small = replicate<N>(estimate, n, batch, exact);
  const Stats<N> large = replicate<N>(estimate, n / 4, 4 * batch, exact);
  const Real ratio = large.rms_error() / small.rms_error();
  MESSAGE(doctest::String(what), ": rms error at B = ", batch, ": ", small.rms_error(), ", at B = ", 4 * batch, ": ",
          large.rms_error(), ", ratio ", ratio, " (1/sqrt(4) = 0.5)");
  CHECK(ratio > Real(0.3));   // not faster than 1/sqrt(B) (a ratio of 0.25 would mean 1/B)
  CHECK(ratio < Real(0.75));  // and not stuck (a bias that does not average out gives ~1)
}

template <int N, typename Derived>
void flatten(const Eigen::DenseBase<Derived>& m, Real* out) {
  for (int i = 0; i < N; ++i) out[i] = m.derived().data()[i];
}

// Replicates of an estimate of a parameter vector (a product J^T(w, v) in x's coordinates):
// exact_g flattened into `exact`, and the estimate(b, out) replicate() takes, from
// sample(b, rng, steps, gs) (the estimator's status, ok expected; gs its estimate from b rollouts)
// on a stream of its own (from seed) with its own step count.
template <class Params, class Sample>
struct ParamsReplicates {
  static constexpr int N = Params::SizeAtCompileTime;
  Real exact[N];
  pbrl::Rng rng;
  std::int64_t steps = 0;
  Sample sample;

  ParamsReplicates(const Params& exact_g, std::uint32_t seed, Sample s) : rng(seed), sample(s) {
    flatten<N>(exact_g, exact);
  }
  void operator()(int b, Real* out) {
    Params gs;
    REQUIRE(sample(b, rng, steps, gs) == pbrl::Status::ok);
    flatten<N>(gs, out);
  }
  Stats<N> run(int n, int batch) { return replicate<N>(*this, n, batch, exact); }
};
template <class Params, class Sample>
ParamsReplicates<Params, Sample> params_replicates(const Params& exact_g, std::uint32_t seed, Sample sample) {
  return ParamsReplicates<Params, Sample>(exact_g, seed, sample);
}

bool same_rng(const pbrl::Rng& a, const pbrl::Rng& b) {
  for (int i = 0; i < 4; ++i)
    if (a.state()[i] != b.state()[i]) return false;
  return true;
}

template <typename T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace
