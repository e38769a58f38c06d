#pragma once
// Shared test fixtures: random instances, a problem whose transitions depend on x (so every
// vector-Jacobian product has a transition term), exact optima and finite differences.
// The same sources run on the host in double and on the Cortex-M4 in float.

#include "doctest.h"
#include "pbrl/pbrl.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "visited_fields.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>

#ifndef PBRL_TEST_SCALAR
#define PBRL_TEST_SCALAR double
#endif
using Real = PBRL_TEST_SCALAR;

// The library's enumerations the suites name, once for all of them.
using pbrl::EvaluationMethod;
using pbrl::GradientMode;
using pbrl::OracleKind;
using pbrl::Parameterization;
using pbrl::PenaltyKind;
using pbrl::RegularizerKind;
using pbrl::Status;

// Every field the report's visit() lists is the same in a and b, numbers to the bit (so a NaN
// field with no value, DrlhfReport::true_return without a true MDP, equals itself); a failure
// names the field.
template <class Report>
void same_report(const Report& a, const Report& b) {
  const char* field = first_different_field(a, b);
  CHECK(doctest::String(field != nullptr ? field : "") == "");
}

// Every number the report's visit() lists is finite (the promise for a report returned with ok);
// a failure names the field.
template <class Report>
void check_report_finite(const Report& report) {
  const char* field = non_finite_field(report);
  CHECK(doctest::String(field != nullptr ? field : "") == "");
}

// 1 on the host (tests/CMakeLists.txt): the comparisons with replaced formulas at every size and
// in both scalars; cross trees take fewer sizes, in Real.
#ifndef PBRL_TEST_EVERY_SIZE
#define PBRL_TEST_EVERY_SIZE 0
#endif
constexpr bool kDouble = sizeof(Real) == sizeof(double);

// Finite-difference step and tolerances suited to the precision.
constexpr Real kFdStep = kDouble ? Real(1e-6) : Real(2e-2);
constexpr Real kFdTol = kDouble ? Real(1e-6) : Real(3e-2);  // relative to the gradient's scale
constexpr Real kTight = kDouble ? Real(1e-10) : Real(2e-4);  // identities that hold exactly

template <int S, int A>
using Mat = pbrl::StateActionMatrix<Real, S, A>;
template <int S>
using Vec = pbrl::StateVector<Real, S>;

// A random MDP whose arrays live in the object (allocate big ones with std::make_unique).
template <int S, int A>
struct RandomModel {
  Real reward[S * A];
  Real transition[S * A * S];
  Real initial[S];
  Real reference[S * A];

  explicit RandomModel(std::uint32_t seed, Real sparsity = Real(0)) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward, S * A, sparsity);
    pbrl::random_transition(rng, transition, S * A, S);
    pbrl::random_distribution(rng, initial, S);
    for (int s = 0; s < S; ++s) pbrl::random_distribution(rng, reference + s * A, A);
  }

  pbrl::Mdp<Real, S, A> mdp(Real gamma, Real tau,
                            pbrl::RegularizerKind kind = pbrl::RegularizerKind::entropy) const {
    pbrl::Mdp<Real, S, A> m{reward, transition, initial, gamma, {kind, tau, reference}};
    return m;
  }
};

// A random policy with every probability >= 0.05 / A (rows are distributions).
template <int S, int A>
Mat<S, A> random_policy(pbrl::Rng& rng) {
  Mat<S, A> pi;
  for (int s = 0; s < S; ++s) pbrl::random_distribution(rng, pi.row(s).data(), A);
  return pi;
}

// A draw uniform in [-1, 1): 2u - 1.
inline Real symmetric_uniform(pbrl::Rng& rng) { return Real(2) * rng.uniform<Real>() - Real(1); }

// The coefficients of a mixture fixture (MixtureProblem here, MixtureGame in game_support.hpp),
// through which x enters the rewards (b) and the transitions (c): b's entries, then c's, each a
// symmetric_uniform draw.
template <std::size_t NB, std::size_t NC>
void draw_mixture_coefficients(pbrl::Rng& rng, Real (&b)[NB], Real (&c)[NC]) {
  for (Real& v : b) v = symmetric_uniform(rng);
  for (Real& v : c) v = symmetric_uniform(rng);
}

template <int S, int A>
Mat<S, A> random_logits(pbrl::Rng& rng, Real scale = Real(1)) {
  Mat<S, A> y;
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) y(s, a) = scale * (Real(2) * rng.uniform<Real>() - Real(1));
  return y;
}

// Exact regularized optimum by soft value iteration to the precision's limit.
template <int S, int A>
struct Optimum {
  Vec<S> value = Vec<S>::Zero();
  Mat<S, A> q, log_pi, pi;
};
template <int S, int A>
Optimum<S, A> optimum(const pbrl::Mdp<Real, S, A>& m) {
  Optimum<S, A> o;
  pbrl::SoftValueIterationResult<Real> res;
  REQUIRE(pbrl::soft_value_iteration(m, 20000, Real(0), o.value, o.q, {o.log_pi, o.pi}, &res) ==
          pbrl::Status::ok);
  return o;
}

// A bilevel problem with x in R^K entering both the reward and the transitions:
//   r_x(s,a) = r(s,a) + tanh(<B(s,a), x>)
//   P_x(.|s,a) = (1 - sig(<C(s,a), x>)) P0(.|s,a) + sig(<C(s,a), x>) P1(.|s,a)
//   f(x, pi) = -V^pi_{(r_up, P_x, tau_up)}(rho) + kappa/2 |x|^2
// Its vjp (and the per-sample sample_vjp of sampled mode) is written out by hand; the tests check
// it, and everything built on it, against finite differences.
template <int S, int A, int K>
class MixtureProblem {
 public:
  using Scalar = Real;
  static constexpr int kStates = S, kActions = A, kParams = K;
  using Params = pbrl::Vector<Real, K>;
  using Matrix = Mat<S, A>;
  using MdpType = pbrl::Mdp<Real, S, A>;
  struct Model {
    Real reward[S * A];
    Real transition[S * A * S];
    Real x[K];  // the x it was built for, which vjp() and sample_vjp() read
  };

  explicit MixtureProblem(std::uint32_t seed, Real gamma = Real(0.8), Real tau = Real(0.3),
                          Real tau_up = Real(0.05), Real kappa = Real(0.1))
      : gamma_(gamma), kappa_(kappa) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward_, S * A);
    pbrl::random_reward(rng, reward_up_, S * A);
    pbrl::random_transition(rng, p0_, S * A, S);
    pbrl::random_transition(rng, p1_, S * A, S);
    pbrl::random_distribution(rng, initial_, S);
    draw_mixture_coefficients(rng, b_, c_);
    lower_ = {pbrl::RegularizerKind::entropy, tau, nullptr};
    upper_ = {pbrl::RegularizerKind::entropy, tau_up, nullptr};
  }

  Real b(int sa, int k) const { return b_[sa * K + k]; }
  Real c(int sa, int k) const { return c_[sa * K + k]; }
  Real mix(int sa, const Params& x) const {
    Real t(0);
    for (int k = 0; k < K; ++k) t += c(sa, k) * x(k);
    return Real(1) / (Real(1) + std::exp(-t));
  }
  Real shaping(int sa, const Params& x) const {
    Real t(0);
    for (int k = 0; k < K; ++k) t += b(sa, k) * x(k);
    return std::tanh(t);
  }

  pbrl::Status validate_parameters(const Params& x) const {
    return pbrl::contains(box_, x) ? pbrl::Status::ok : pbrl::Status::out_of_bounds;
  }
  void project_parameters(Params& x) const { pbrl::project(box_, x); }

  pbrl::Status build(const Params& x, Model& model, MdpType& mdp) const {
    if (auto st = validate_parameters(x); st != pbrl::Status::ok) return st;
    fill(x, model);
    mdp = MdpType{model.reward, model.transition, initial_, gamma_, lower_};
    return pbrl::Status::ok;
  }

  void vjp(const Model& model, const Matrix& w, const Vec<S>& v, Real scale, Params& grad) const {
    vjp_with(built_for(model), w, v, scale, grad, true);
  }

  // Per-sample hook of sampled mode (problem.hpp):
  //   grad += rw * grad_x r_x(s,a) + tw * grad_x log P_x(s'|s,a), with
  //   grad_x log P_x(s'|s,a) = sig'(<C,x>) C(s,a) (P1(s'|s,a) - P0(s'|s,a)) / P_x(s'|s,a),
  //   sig' = m (1 - m); P_x(s'|s,a) > 0 because s' was drawn from it.
  void sample_vjp(const Model& model, const pbrl::VjpSample<Real>& sample, Params& grad) const {
    const auto [s, a, s_next, reward_weight, transition_weight] = sample;
    const Params x = built_for(model);
    const int sa = s * A + a;
    const Real t = shaping(sa, x);
    const Real dr = reward_weight * (Real(1) - t * t);
    Real dlog(0);
    if (transition_weight != Real(0)) {
      const Real m = mix(sa, x);
      const Real p0 = p0_[sa * S + s_next], p1 = p1_[sa * S + s_next];
      dlog = transition_weight * m * (Real(1) - m) * (p1 - p0) / ((Real(1) - m) * p0 + m * p1);
    }
    for (int k = 0; k < K; ++k) grad(k) += dr * b(sa, k) + dlog * c(sa, k);
  }

  template <pbrl::EvaluationMethod M>
  pbrl::Status upper(const Matrix& pi, Model& model, pbrl::EvaluationWorkspace<Real, S, M>& ws,
                     pbrl::Evaluation<Real, S, A>& scratch, Real& f, Params& grad_x, Matrix& grad_pi) const {
    const Params x = built_for(model);
    const MdpType up = upper_mdp(model);
    if (auto st = pbrl::evaluate(up, pi, ws, scratch); st != pbrl::Status::ok) return st;
    f = -scratch.value_rho + Real(0.5) * kappa_ * x.squaredNorm();
    grad_x = kappa_ * x;
    pbrl::state_action_occupancy(scratch, pi, grad_pi);  // weights of J_up^T
    vjp_with(x, grad_pi, scratch.value, Real(-1), grad_x, false);
    pbrl::policy_gradient(up, pi, scratch, grad_pi);
    grad_pi = -grad_pi;
    return pbrl::Status::ok;
  }

  // The upper-level MDP on M(x)'s transitions (model must have been built for x).
  MdpType upper_mdp(const Model& model) const {
    return MdpType{reward_up_, model.transition, initial_, gamma_, upper_};
  }
  static Params built_for(const Model& model) { return Eigen::Map<const Params>(model.x); }
  void fill(const Params& x, Model& model) const {
    Eigen::Map<Params>(model.x) = x;
    for (int sa = 0; sa < S * A; ++sa) {
      model.reward[sa] = reward_[sa] + shaping(sa, x);
      const Real m = mix(sa, x);
      for (int t = 0; t < S; ++t)
        model.transition[sa * S + t] = (Real(1) - m) * p0_[sa * S + t] + m * p1_[sa * S + t];
    }
  }

  Real gamma() const { return gamma_; }
  Real kappa() const { return kappa_; }

 private:
  // grad += scale * J^T(w, v); with_reward = false drops the reward term (the upper reward
  // r_up does not depend on x).
  void vjp_with(const Params& x, const Matrix& w, const Vec<S>& v, Real scale, Params& grad,
                bool with_reward) const {
    for (int sa = 0; sa < S * A; ++sa) {
      const Real wsa = w(sa / A, sa % A);
      if (with_reward) {
        const Real t = shaping(sa, x);
        for (int k = 0; k < K; ++k) grad(k) += scale * wsa * (Real(1) - t * t) * b(sa, k);
      }
      const Real m = mix(sa, x);
      Real dv(0);
      for (int t = 0; t < S; ++t) dv += (p1_[sa * S + t] - p0_[sa * S + t]) * v(t);
      for (int k = 0; k < K; ++k) grad(k) += scale * wsa * gamma_ * m * (Real(1) - m) * c(sa, k) * dv;
    }
  }

  Real reward_[S * A], reward_up_[S * A], p0_[S * A * S], p1_[S * A * S], initial_[S];
  Real b_[S * A * K], c_[S * A * K];
  Real gamma_, kappa_;
  pbrl::Regularizer<Real, S, A> lower_{}, upper_{};
  pbrl::Box<Real> box_{Real(-2), Real(2)};
};

// Central difference of a scalar function of one coordinate.
template <typename F>
Real central_difference(F&& f, Real h = kFdStep) {
  return (f(h) - f(-h)) / (Real(2) * h);
}

// |a - b| <= tol * max(1, scale)
#define CHECK_CLOSE(a, b, tol, scale)                                                   \
  CHECK(std::abs(Real(a) - Real(b)) <=                                                  \
        Real(tol) * std::max(Real(1), Real(scale)))

// Sweep evaluation follows the direct solve: a matrix of a solver on the sweeps within
// kSweepsFollowDirect of the same solver's on the direct solve, entry by entry.
constexpr Real kSweepsFollowDirect = kDouble ? Real(1e-8) : Real(2e-3);
template <class Direct, class Swept>
void check_follows_direct(const Direct& direct, const Swept& swept) {
  CHECK((direct - swept).cwiseAbs().maxCoeff() <= kSweepsFollowDirect);
}

// An exact-only type (GradientSources::exact) against the default one: init(solver, mode) sets
// either up alike in GradientMode `mode`. In exact mode the two step bit for bit alike (same(a, b,
// report_a, report_b) compares what is observable); sampled mode is refused at init() by the
// exact-only type, whose bytes stay as they were, and accepted by the default type.
template <class Default, class Exact, class Init, class Same>
void check_exact_only_type(Init init, Same same, int steps = 4) {
  static_assert(sizeof(Exact) < sizeof(Default), "the exact-only type holds no sampled-mode scratch");
  auto a = std::make_unique<Default>();
  auto b = std::make_unique<Exact>();
  REQUIRE(init(*a, pbrl::GradientMode::exact) == pbrl::Status::ok);
  REQUIRE(init(*b, pbrl::GradientMode::exact) == pbrl::Status::ok);
  for (int k = 0; k < steps; ++k) {
    CAPTURE(k);
    typename Default::Report ra, rb;
    const bool with_report = k % 2 == 0;  // a step without a report may take another path
    REQUIRE(a->step(with_report ? &ra : nullptr) == pbrl::Status::ok);
    REQUIRE(b->step(with_report ? &rb : nullptr) == pbrl::Status::ok);
    same(*a, *b, ra, rb);
  }
  auto before = std::make_unique<unsigned char[]>(sizeof(Exact));
  std::memcpy(before.get(), b.get(), sizeof(Exact));
  CHECK(init(*b, pbrl::GradientMode::sampled) == pbrl::Status::bad_setting);
  CHECK(std::memcmp(before.get(), b.get(), sizeof(Exact)) == 0);
  CHECK(init(*a, pbrl::GradientMode::sampled) == pbrl::Status::ok);
}

// check_exact_only_type for a baseline, with either evaluation method: Baseline<Problem, M> against
// Baseline<Problem, M, GradientSources::exact>. Besides what same(a, b) compares (the baseline's
// own iterates), the two have the same x and generator, and the same reports (same_report).
template <template <class, pbrl::EvaluationMethod, pbrl::GradientSources> class Baseline, class Problem, class Init,
          class Same>
void check_exact_only_baseline(Init init, Same same) {
  auto same_all = [&](const auto& a, const auto& b, const auto& ra, const auto& rb) {
    CHECK(a.x() == b.x());
    CHECK(std::memcmp(a.rng().state(), b.rng().state(), 16) == 0);
    same_report(ra, rb);
    same(a, b);
  };
  using pbrl::GradientSources;
  check_exact_only_type<Baseline<Problem, EvaluationMethod::direct, GradientSources::exact_and_sampled>,
                        Baseline<Problem, EvaluationMethod::direct, GradientSources::exact>>(init, same_all);
  check_exact_only_type<Baseline<Problem, EvaluationMethod::sweeps, GradientSources::exact_and_sampled>,
                        Baseline<Problem, EvaluationMethod::sweeps, GradientSources::exact>>(init, same_all);
}

// ---- comparing two formulas that the compiler may contract differently ----------------------
// Where the target has a fast fused multiply-add for T (aarch64; the Cortex-M4F in float), GCC's
// default -ffp-contract=fast may fuse the a*b + c of the two formulas differently: there they agree
// within rounding, elsewhere (the x86-64 default target) to the bit.
template <typename T>
constexpr bool may_fuse() {
#if defined(__FP_FAST_FMA)
  if (sizeof(T) == sizeof(double)) return true;
#endif
#if defined(__FP_FAST_FMAF)
  if (sizeof(T) == sizeof(float)) return true;
#endif
  return false;
}

// The largest |a - b| over n entries, in units of epsilon * max |b|.
template <typename T>
double spread(const T* a, const T* b, int n) {
  double scale = 0, gap = 0;
  for (int i = 0; i < n; ++i) {
    scale = std::max(scale, std::abs(double(b[i])));
    gap = std::max(gap, std::abs(double(a[i]) - double(b[i])));
  }
  return scale > 0 ? gap / (scale * double(std::numeric_limits<T>::epsilon())) : gap;
}

// a and b the same to the bit, or, where the compiler may fuse, within `rounding` epsilons.
template <typename T>
void check_same_unless_fused(const T* a, const T* b, int n, double rounding) {
  if (!may_fuse<T>()) {
    CHECK(std::memcmp(a, b, sizeof(T) * n) == 0);
  } else {
    const double epsilons = spread(a, b, n);
    CAPTURE(epsilons);
    CHECK(epsilons <= rounding);
  }
}
