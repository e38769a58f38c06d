// Certificates under rounding (oracle/optimality_gap.hpp): on random MDPs at gamma 0.9 to 0.9999,
// in float and in double, LU and sweeps, for uniform, random, PMD and near-optimal policies,
// optimality_gap_bound is at least V* - V_c, value_rounding_bound at least the evaluation's error,
// and their sums at least the true gaps, all against a long double reference (soft policy
// iteration and LU solves in long double on the model's numbers as stored); never negative; and
// in double at gamma 0.9 within rounding of the exact certificate, so a bound too loose to use fails.
// The solvers' certificates: Pbrl on a Stackelberg game and PbrlZeroSum on an incentive design, in
// tolerance mode, float and double, gamma 0.9 to 0.9999: at every iterate the report's gap_bound is
// at least the long double re-evaluation of its true gap (V*(rho) - V^{pi_y}(rho), resp. the
// Nikaido-Isoda gap V1*(rho) + V2*(rho) of the induced MDPs) and not negative, and tolerance_met
// is never true with the true gap above epsilon; from uniform policies and from the lower-level
// solution of M(x_0), so that both large gaps and gaps within the bound's rounding terms occur.
// The reference checks need long double wider than the evaluation's scalar (on the host x87's 64
// bits; ARM targets' long double is double, so there only the float evaluations are checked).
#include "game_support.hpp"
#include "support.hpp"

#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include <Eigen/LU>

#include <array>
#include <string>

namespace test_certificate {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
using LD = long double;

template <typename T>
constexpr bool kReferenceWider = std::numeric_limits<LD>::digits > std::numeric_limits<T>::digits;

template <typename T, int S, int A>
using MatT = pbrl::StateActionMatrix<T, S, A>;
template <int S, int A>
using MatL = Eigen::Matrix<LD, S, A, Eigen::RowMajor>;
template <int S>
using VecL = Eigen::Matrix<LD, S, 1>;

// A random model in T whose arrays live in the object.
template <typename T, int S, int A>
struct Model {
  T reward[S * A];
  T transition[S * A * S];
  T initial[S];
  T reference[S * A];
  explicit Model(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward, S * A);
    pbrl::random_transition(rng, transition, S * A, S);
    pbrl::random_distribution(rng, initial, S);
    for (int s = 0; s < S; ++s) pbrl::random_distribution(rng, reference + s * A, A);
  }
  pbrl::Mdp<T, S, A> mdp(T gamma, T tau, RegularizerKind kind) const {
    return pbrl::Mdp<T, S, A>{reward, transition, initial, gamma, {kind, tau, reference}};
  }
};

// The model's numbers as exact long doubles, and exact-arithmetic (long double) evaluation.
template <int S, int A>
struct Reference {
  Eigen::Matrix<LD, S * A, S, Eigen::RowMajor> P;
  MatL<S, A> r, log_ref;
  VecL<S> rho;
  LD gamma = 0, tau = 0;

  template <typename T>
  explicit Reference(const pbrl::Mdp<T, S, A>& m) {
    for (int i = 0; i < S * A; ++i)
      for (int j = 0; j < S; ++j) P(i, j) = LD(m.transition[i * S + j]);
    for (int s = 0; s < S; ++s) {
      rho(s) = LD(m.initial[s]);
      for (int a = 0; a < A; ++a) {
        r(s, a) = LD(m.reward[s * A + a]);
        log_ref(s, a) = m.regularizer.kind == RegularizerKind::kl_reference ? std::log(LD(m.regularizer.reference[s * A + a]))
                                                                           : -std::log(LD(A));
      }
    }
    gamma = LD(m.discount);
    tau = LD(m.tau());
  }

  struct Eval {
    VecL<S> v;
    MatL<S, A> q;
  };
  // V^pi and Q^pi of pi as given (its rows need not sum to 1), h with exact logs.
  Eval evaluate(const MatL<S, A>& pi) const {
    Eigen::Matrix<LD, S, S> M = Eigen::Matrix<LD, S, S>::Identity();
    VecL<S> c;
    for (int s = 0; s < S; ++s) {
      LD cs = 0;
      for (int a = 0; a < A; ++a) {
        const LD p = pi(s, a);
        cs += p * r(s, a);
        if (tau > 0 && p > 0) cs -= tau * p * (std::log(p) - log_ref(s, a));
        M.row(s) -= gamma * p * P.row(s * A + a);
      }
      c(s) = cs;
    }
    Eval e;
    e.v = M.partialPivLu().solve(c);
    for (int s = 0; s < S; ++s)
      for (int a = 0; a < A; ++a) e.q(s, a) = r(s, a) + gamma * P.row(s * A + a).dot(e.v);
    return e;
  }
  LD soft_max(int s, const MatL<S, A>& q) const {
    if (!(tau > 0)) return q.row(s).maxCoeff();
    LD top = -std::numeric_limits<LD>::infinity();
    for (int a = 0; a < A; ++a) top = std::max(top, q(s, a) + tau * log_ref(s, a));
    LD sum = 0;
    for (int a = 0; a < A; ++a) sum += std::exp((q(s, a) + tau * log_ref(s, a) - top) / tau);
    return top + tau * std::log(sum);
  }
  // max_s (soft max of Q^pi(s,.) - V^pi(s)): 0 at the optimum.
  LD improvement(const Eval& e) const {
    LD g = -std::numeric_limits<LD>::infinity();
    for (int s = 0; s < S; ++s) g = std::max(g, soft_max(s, e.q) - e.v(s));
    return g;
  }
  // The soft-greedy policy of q.
  MatL<S, A> greedy(const MatL<S, A>& q) const {
    MatL<S, A> pi;
    for (int s = 0; s < S; ++s) {
      const LD top = q.row(s).maxCoeff();
      for (int a = 0; a < A; ++a) pi(s, a) = std::exp(log_ref(s, a) + (q(s, a) - top) / tau);
      pi.row(s) /= pi.row(s).sum();
    }
    return pi;
  }
  // Soft policy iteration from uniform: V of its last policy is <= V* (any policy's is) and
  // within improvement / (1 - gamma) of it.
  Eval optimum() const {
    Eval e = evaluate(MatL<S, A>::Constant(LD(1) / LD(A)));
    for (int k = 0; k < 200; ++k) {
      const Eval next = evaluate(greedy(e.q));
      const bool better = improvement(next) < improvement(e);
      if (better) e = next;
      if (!better || improvement(e) <= LD(1e-17) * (LD(1) + e.v.cwiseAbs().maxCoeff())) break;
    }
    return e;
  }
};

template <typename T, int S, int A>
MatL<S, A> widen(const MatT<T, S, A>& pi) {
  return pi.template cast<LD>();
}
template <typename T, int S>
VecL<S> widen(const pbrl::StateVector<T, S>& v) {
  return v.template cast<LD>();
}

// A policy and its logs, as the oracles keep them.
template <typename T, int S, int A>
struct Policy {
  MatT<T, S, A> pi, log_pi;
  const char* name = "";
};

template <typename T, int S, int A>
Policy<T, S, A> from_logits(const MatT<T, S, A>& logits, const char* name) {
  Policy<T, S, A> p;
  p.log_pi = logits;
  for (int s = 0; s < S; ++s) pbrl::normalize_policy_row(p.log_pi.row(s), p.pi.row(s));
  p.name = name;
  return p;
}

// Uniform, random (logs by std::log), PMD after a few and after many steps, and the long double
// optimum rounded to T (where the unrounded certificate is about 0, its rounding decides its sign).
template <typename T, int S, int A, int Count = 5>
std::array<Policy<T, S, A>, Count> policies(const pbrl::Mdp<T, S, A>& m, const Reference<S, A>& ref,
                                            const typename Reference<S, A>::Eval& opt, std::uint32_t seed) {
  std::array<Policy<T, S, A>, Count> out;
  out[0] = from_logits<T, S, A>(MatT<T, S, A>::Zero(), "uniform");
  pbrl::Rng rng(seed);
  for (int s = 0; s < S; ++s) pbrl::random_distribution(rng, out[1].pi.row(s).data(), A);
  out[1].log_pi = out[1].pi.array().log().matrix();
  out[1].name = "random";
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<T, S, EvaluationMethod::direct>>();
  pbrl::Evaluation<T, S, A> e;
  Policy<T, S, A> p = out[0];
  const T eta = T(10) / (m.tau() > T(0) ? m.tau() : T(1));
  for (int k = 0; k < 40; ++k) {
    REQUIRE(pbrl::pmd_step(m, eta, *ws, e, {p.log_pi, p.pi}) == Status::ok);
    if (k == 2) out[2] = p, out[2].name = "pmd 3 steps";
  }
  out[3] = p, out[3].name = "pmd 40 steps";
  MatT<T, S, A> logits;
  const MatL<S, A> star = ref.greedy(opt.q);
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) logits(s, a) = T(std::log(star(s, a)));
  out[4] = from_logits<T, S, A>(logits, "optimum rounded");
  return out;
}

struct Case {
  double gamma, tau;
  RegularizerKind kind;
};

// Every check on one model and case.
template <typename T, int S, int A, EvaluationMethod M>
void check_case(std::uint32_t seed, const Case& c) {
  const auto model = std::make_unique<Model<T, S, A>>(seed);
  const auto m = model->mdp(T(c.gamma), T(c.tau), c.kind);
  REQUIRE(pbrl::validate(m) == Status::ok);
  const Reference<S, A> ref(m);
  const auto opt = ref.optimum();
  const LD opt_rho = ref.rho.dot(opt.v);
  const auto pols = policies<T, S, A>(m, ref, opt, seed + 1);
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<T, S, M>>();
  std::array<pbrl::Evaluation<T, S, A>, 5> evals;
  std::array<typename Reference<S, A>::Eval, 5> truth;
  for (std::size_t i = 0; i < pols.size(); ++i) {
    const auto& p = pols[i];
    const std::string name = p.name;
    CAPTURE(name);
    CAPTURE(c.gamma);
    CAPTURE(c.tau);
    CAPTURE(int(c.kind));
    CAPTURE(sizeof(T));
    CAPTURE(int(M));
    auto& e = evals[i];
    REQUIRE(pbrl::evaluate(m, p.pi, *ws, e, &p.log_pi) == Status::ok);
    const T gap = pbrl::optimality_gap_bound(m, e);
    const T err = pbrl::value_rounding_bound(m, p.pi, e, &p.log_pi);
    const T err_no_logs = pbrl::value_rounding_bound(m, p.pi, e);
    const T own = pbrl::policy_gap_bound(m, p.pi, e, &p.log_pi);
    CHECK(gap >= T(0));
    CHECK(err >= T(0));
    CHECK(err_no_logs >= T(0));
    CHECK(own >= gap);
    CHECK(std::isfinite(gap));
    CHECK(std::isfinite(err));
    truth[i] = ref.evaluate(widen<T, S, A>(p.pi));
    const auto& t = truth[i];
    const VecL<S> v = widen<T, S>(e.value);
    if constexpr (kReferenceWider<T>) {
      // V* - V_c, at every state and at rho (opt.v <= V*: these are the checks' weak side).
      const LD above = (opt.v - v).maxCoeff(), above_rho = opt_rho - LD(e.value_rho);
      CHECK(LD(gap) >= above);
      CHECK(LD(gap) >= above_rho);
      // The evaluation's error.
      const LD error = (t.v - v).cwiseAbs().maxCoeff(), error_rho = std::abs(ref.rho.dot(t.v) - LD(e.value_rho));
      CHECK(LD(err) >= error);
      CHECK(LD(err) >= error_rho);
      CHECK(LD(err_no_logs) >= error);
      CHECK(LD(err_no_logs) >= error_rho);
      // The policy's own gap.
      const LD true_gap = opt_rho - ref.rho.dot(t.v);
      CHECK(LD(own) >= true_gap);
      CHECK(LD(own) >= (opt.v - t.v).maxCoeff());
      CHECK(LD(gap) + LD(err) >= true_gap);
    }
    // Not too loose to use: within rounding of the exact certificate of pi. The bound divides by
    // 1 - gamma (1 + kappa), kappa = distribution_tolerance(S), the row sums validate(m) admits;
    // its rounding allowance is about (S + A) u |V| / (1 - gamma), and the tolerance leaves a
    // factor of about 40 in double, 5 in float.
    if (c.gamma == 0.9 && M == EvaluationMethod::direct) {
      const LD cert = std::max(ref.improvement(t), LD(0)) / (LD(1) - ref.gamma);
      const LD kappa = LD(pbrl::distribution_tolerance<T>(S)) * LD(1.01);
      const LD admitted = (LD(1) - ref.gamma) / (LD(1) - ref.gamma * (LD(1) + kappa));
      const LD scale = LD(1) + t.v.cwiseAbs().maxCoeff();
      const LD slack = sizeof(T) == sizeof(double) ? LD(1e-12) : LD(1e-4);
      CHECK(LD(gap) <= cert * admitted * (LD(1) + slack) + slack * scale);
      CHECK(LD(err) <= slack * scale);
    }
  }
  // The solver's certificate of pi_y from pi-hat's evaluation: every pair.
  if constexpr (kReferenceWider<T>) {
    for (std::size_t h = 0; h < pols.size(); ++h)
      for (std::size_t y = 0; y < pols.size(); ++y) {
        const T b = pbrl::lower_level_gap_bound(m, evals[h], pols[y].pi, evals[y], &pols[y].log_pi);
        const std::string hat_name = pols[h].name, y_name = pols[y].name;
        CAPTURE(hat_name);
        CAPTURE(y_name);
        CAPTURE(c.gamma);
        CAPTURE(sizeof(T));
        CHECK(b >= T(0));
        CHECK(LD(b) >= opt_rho - ref.rho.dot(truth[y].v));
      }
  }
}

constexpr Case kCases[] = {
    {0.9, 0.1, RegularizerKind::entropy},    {0.9, 0.01, RegularizerKind::kl_reference},
    {0.99, 0.05, RegularizerKind::entropy},  {0.99, 0.01, RegularizerKind::kl_reference},
    {0.999, 0.1, RegularizerKind::entropy},  {0.999, 0.02, RegularizerKind::kl_reference},
    {0.9999, 0.1, RegularizerKind::entropy}, {0.9999, 0.01, RegularizerKind::entropy},
    {0.9999, 0.05, RegularizerKind::kl_reference},
};

template <typename T, int S, int A>
void check_sizes(std::uint32_t seed) {
  for (const Case& c : kCases) {
    check_case<T, S, A, EvaluationMethod::direct>(seed, c);
    check_case<T, S, A, EvaluationMethod::sweeps>(seed, c);
  }
}

}  // namespace

TEST_CASE("certificate: float evaluations, optimality_gap_bound and value_rounding_bound cover V* - V_c and the error, gamma to 0.9999") {
  check_sizes<float, 6, 3>(501);
  check_sizes<float, 5, 4>(502);
}

TEST_CASE("certificate: double evaluations, the same, and within rounding of the exact certificate at gamma 0.9") {
  check_sizes<double, 6, 3>(511);
  check_sizes<double, 5, 4>(512);
}

#if PBRL_TEST_EVERY_SIZE
TEST_CASE("certificate: above 16 states (blocked LU, gemv Q), float and double") {
  check_sizes<float, 20, 3>(521);
  check_sizes<double, 20, 3>(522);
}
#endif

TEST_CASE("certificate: never negative, NaN for a NaN input or a bad model, no_bound when the contraction is not certain") {
  const auto model = std::make_unique<Model<Real, 6, 3>>(531);
  auto m = model->mdp(Real(0.9), Real(0.1), RegularizerKind::entropy);
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, 6, EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, 6, 3> e;
  const MatT<Real, 6, 3> pi = MatT<Real, 6, 3>::Constant(Real(1) / Real(3));
  REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
  CHECK(pbrl::optimality_gap_bound(m, e) > Real(0));
  CHECK(pbrl::value_rounding_bound(m, pi, e) > Real(0));
  // V_c above V*: the certificate is the rounding of V_c(rho) alone, not negative.
  pbrl::Evaluation<Real, 6, 3> high = e;
  high.value.array() += Real(1);
  const Real floor = pbrl::optimality_gap_bound(m, high);
  CHECK(floor >= Real(0));
  CHECK(floor <= Real(64) * std::numeric_limits<Real>::epsilon() * (Real(1) + high.value.cwiseAbs().maxCoeff()));
  pbrl::Evaluation<Real, 6, 3> bad = e;
  bad.q(2, 1) = std::numeric_limits<Real>::quiet_NaN();
  CHECK(std::isnan(pbrl::optimality_gap_bound(m, bad)));
  CHECK(std::isnan(pbrl::value_rounding_bound(m, pi, bad)));
  MatT<Real, 6, 3> nan_pi = pi;
  nan_pi(0, 0) = std::numeric_limits<Real>::quiet_NaN();
  CHECK(std::isnan(pbrl::value_rounding_bound(m, nan_pi, e)));
  auto broken = m;
  broken.discount = Real(1);
  CHECK(std::isnan(pbrl::optimality_gap_bound(broken, e)));
  CHECK(std::isnan(pbrl::value_rounding_bound(broken, pi, e)));
  // gamma so close to 1 that rows summing to 1 + distribution_tolerance(S) may not contract.
  auto edge = m;
  edge.discount = Real(1) - std::numeric_limits<Real>::epsilon();
  CHECK(pbrl::optimality_gap_bound(edge, e) == pbrl::detail::no_bound<Real>());
  CHECK(pbrl::value_rounding_bound(edge, pi, e) == pbrl::detail::no_bound<Real>());
  CHECK(std::isfinite(pbrl::lower_level_gap_bound(edge, e, pi, e)));
}

// ---- The solvers' certificates, re-evaluated at every iterate ----

namespace {

// Per (scalar, solver, gamma, start): the steps, those with tolerance_met, the least
// gap_bound - truth, the least gap_bound, and the naive certificate without rounding terms (value
// difference plus max_s (soft max Q - V)^+ / (1 - gamma), from re-evaluations in T): how often it
// fell below the truth and its least margin. The naive one is a diagnostic of what the rounding
// terms cover (below the truth in float at gamma 0.99 to 0.9999), not asserted.
// The truth is of the numbers as stored in T (M(x), the induced MDPs, pi), whose rows sum to 1
// only within rounding; so V^{pi_y} can exceed V* of normalized policies and a true gap can be
// slightly negative (in float at gamma 0.9999 by a few units).
struct Tally {
  int steps = 0, met = 0, naive_below = 0;
  LD least_margin = std::numeric_limits<LD>::infinity(), least_naive_margin = std::numeric_limits<LD>::infinity();
  LD largest_truth = -std::numeric_limits<LD>::infinity(), largest_bound = 0;
  LD least_bound = std::numeric_limits<LD>::infinity(), truth_at_least = 0;
  void add(LD bound, LD truth, LD naive, bool met_here) {
    ++steps;
    met += met_here ? 1 : 0;
    least_margin = std::min(least_margin, bound - truth);
    least_naive_margin = std::min(least_naive_margin, naive - truth);
    naive_below += naive < truth ? 1 : 0;
    largest_truth = std::max(largest_truth, truth);
    largest_bound = std::max(largest_bound, bound);
    if (bound < least_bound) least_bound = bound, truth_at_least = truth;
  }
};

template <typename T>
void report_tally(const char* solver, double gamma, bool warm, const Tally& t) {
  MESSAGE(doctest::String(solver) << doctest::String(sizeof(T) == sizeof(double) ? " double" : " float") << " gamma "
                                  << gamma << doctest::String(warm ? " warm" : " cold") << ": tolerance_met " << t.met
                                  << "/" << t.steps << ", least gap_bound - true gap " << double(t.least_margin)
                                  << ", largest true gap " << double(t.largest_truth) << ", largest gap_bound "
                                  << double(t.largest_bound) << ", least gap_bound " << double(t.least_bound)
                                  << " (true gap " << double(t.truth_at_least) << "); naive certificate below the true gap at "
                                  << t.naive_below << " steps, least naive - true " << double(t.least_naive_margin));
}

// V(rho) of pi on m in T and the certificate without rounding terms: (T v - v)^+ / (1 - gamma).
template <typename T>
struct NaiveEval {
  T value_rho = 0, certificate = 0;
};
template <typename T, int S, int A>
NaiveEval<T> naive_eval(const pbrl::Mdp<T, S, A>& m, const MatT<T, S, A>& pi) {
  pbrl::EvaluationWorkspace<T, S, EvaluationMethod::direct> ws;
  pbrl::Evaluation<T, S, A> e;
  REQUIRE(pbrl::evaluate(m, pi, ws, e) == Status::ok);
  T g(0);
  for (int s = 0; s < S; ++s) g = std::max(g, pbrl::detail::soft_max_row(m.regularizer, s, e.q.row(s)) - e.value(s));
  return {e.value_rho, g / (T(1) - m.discount)};
}

// V*(rho) of m's numbers (soft policy iteration in long double; at most V*, within about
// 1e-17 |V| / (1 - gamma) of it) and V^pi(rho) of pi as stored.
template <typename T, int S, int A>
LD optimum_rho(const pbrl::Mdp<T, S, A>& m) {
  const Reference<S, A> ref(m);
  return ref.rho.dot(ref.optimum().v);
}
template <typename T, int S, int A>
LD value_rho(const pbrl::Mdp<T, S, A>& m, const MatT<T, S, A>& pi) {
  const Reference<S, A> ref(m);
  return ref.rho.dot(ref.evaluate(widen<T, S, A>(pi)).v);
}

constexpr double kSolverGammas[] = {0.9, 0.99, 0.999, 0.9999};
// 100 steps on the host; 30 at -O0 (the sanitizer tree, where Eigen's unoptimized templates make
// each step's long double re-evaluation some 500 times slower) and on the cross targets (under
// QEMU, the Cortex-M0+'s software floating point took 147 s for 100).
#if defined(__OPTIMIZE__) && PBRL_TEST_EVERY_SIZE
constexpr int kSolverSteps = 100;
#else
constexpr int kSolverSteps = 30;
#endif

// Cold: the paper's steps (0.1) from uniform policies, far from the lower-level solution at a
// large gamma (true gaps up to thousands at 0.9999); warm: from the lower-level solution of
// M(x_0), steps 0.1 ((1 - gamma) / 0.1)^2, so the iterates stay near the solution (true gaps
// below about 6), where the rounding terms decide the bound. PMD, T from 1 to 20, lambda from
// lambda_start.
template <typename T>
void tolerance_settings(pbrl::PenaltySolverSettings<T>& s, double gamma, bool warm, T lambda_start) {
  s.step_x = T(warm ? 10 * (1 - gamma) * (1 - gamma) : 0.1);
  s.lambda_start = lambda_start;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle = pbrl::OracleKind::policy_mirror_descent;
  s.inner_steps = 1;
  s.gap_tolerance = T(0.01);
  s.lambda_patience = 5;
  s.inner_steps_max = 20;  // cheap on the Cortex-M
}

// A solver step's certificate (its report r at step k) against the truth: non-negative, above the
// true gap, within epsilon (tolerance) where the step says it met it; tallied with the naive one.
template <typename T, class Report>
void check_step_certificate(int k, double gamma, bool warm, const Report& r, LD truth, LD naive, T tolerance,
                            Tally& tally) {
  CAPTURE(k);
  CAPTURE(gamma);
  CAPTURE(warm);
  CAPTURE(sizeof(T));
  CAPTURE(r.gap_bound);
  CAPTURE(double(truth));
  CHECK(r.gap_bound >= T(0));
  CHECK(LD(r.gap_bound) >= truth);
  if (r.tolerance_met) CHECK(truth <= LD(tolerance));
  tally.add(LD(r.gap_bound), truth, naive, r.tolerance_met);
}

// Pbrl on a leader-follower game (test_schedule.cpp's, smaller), follower tau 0.1.
template <typename T>
void check_pbrl(double gamma, bool warm) {
  constexpr int S = 3, AL = 2, AF = 3;
  using Problem = pbrl::Stackelberg<T, S, AL, AF>;
  using Solver = pbrl::Pbrl<Problem>;
  using Matrix = typename Solver::Matrix;
  struct Storage {
    StackelbergArrays<T, S, AL, AF> arrays;
    Problem problem;
    Solver solver;
    typename Problem::Model model;
  };
  const auto st = std::make_unique<Storage>();
  pbrl::Rng rng(3);
  st->arrays.draw(rng, T(0.7));
  typename Problem::Data d = st->arrays.data();
  d.discount = T(gamma);
  d.follower.tau = T(0.1);
  REQUIRE(st->problem.init(d) == Status::ok);
  pbrl::PbrlSettings<T> s;
  tolerance_settings(s, gamma, warm, T(2));
  s.step_y = s.step_x;
  // Warm: y_0 the logits of the soft-optimal follower of M(x_0) (long double, rounded to T).
  Matrix y0 = Matrix::Zero();
  if (warm) {
    pbrl::Mdp<T, S, AF> mdp;
    REQUIRE(st->problem.build(Problem::Params::Zero(), st->model, mdp) == Status::ok);
    const Reference<S, AF> ref(mdp);
    const MatL<S, AF> star = ref.greedy(ref.optimum().q);
    for (int i = 0; i < S; ++i)
      for (int a = 0; a < AF; ++a) y0(i, a) = T(std::log(star(i, a)));
  }
  REQUIRE(st->solver.init(st->problem, s, Problem::Params::Zero(), y0) == Status::ok);
  Tally tally;
  typename Solver::Report r;
  for (int k = 0; k < kSolverSteps; ++k) {
    // The iterate the report describes: M(x_k) in T as the solver builds it, and pi_y_k.
    pbrl::Mdp<T, S, AF> mdp;
    REQUIRE(st->problem.build(st->solver.x(), st->model, mdp) == Status::ok);
    Matrix pi_y;
    st->solver.policy(pi_y);
    const LD truth = optimum_rho(mdp) - value_rho(mdp, pi_y);
    REQUIRE(st->solver.step(&r) == Status::ok);
    // The naive certificate from pi-hat_k (the oracle's output of this step).
    const auto hat = naive_eval(mdp, st->solver.oracle_policy());
    const auto y = naive_eval(mdp, pi_y);
    const LD naive = LD(hat.value_rho) - LD(y.value_rho) + LD(hat.certificate);
    check_step_certificate<T>(k, gamma, warm, r, truth, naive, s.gap_tolerance, tally);
  }
  report_tally<T>("Pbrl", gamma, warm, tally);
}

// PbrlZeroSum on an incentive design (test_schedule.cpp's, smaller), tau 0.1.
template <typename T>
void check_zero_sum(double gamma, bool warm) {
  constexpr int S = 3, A1 = 3, A2 = 2, J = A1 * A2;
  using Design = pbrl::IncentiveDesign<T, S, A1, A2>;
  using Solver = pbrl::PbrlZeroSum<Design>;
  using M1 = typename Solver::Matrix1;
  using M2 = typename Solver::Matrix2;
  struct Storage {
    T reward[S * J], transition[S * J * S], initial[S], designer_reward[S * J], designer_transition[S * J * S];
    Design problem;
    Solver solver;
    typename Design::Model model;
    pbrl::InducedModel<T, S, A1> induced1;
    pbrl::InducedModel<T, S, A2> induced2;
  };
  const auto st = std::make_unique<Storage>();
  pbrl::Rng rng(7);
  pbrl::random_reward(rng, st->reward, S * J);
  pbrl::random_transition(rng, st->transition, S * J, S);
  pbrl::random_distribution(rng, st->initial, S);
  pbrl::random_reward(rng, st->designer_reward, S * J);
  pbrl::random_transition(rng, st->designer_transition, S * J, S);
  typename Design::Data d;
  d.reward = st->reward;
  d.transition = st->transition;
  d.initial = st->initial;
  d.discount = T(gamma);
  d.regularizer1.tau = T(0.1);
  d.regularizer2.tau = T(0.1);
  d.designer_reward = st->designer_reward;
  d.designer_transition = st->designer_transition;
  REQUIRE(st->problem.init(d) == Status::ok);
  pbrl::PbrlZeroSumSettings<T> s;
  tolerance_settings(s, gamma, warm, T(1));
  s.step_pi = s.step_x;
  // Warm: y_0 the logs of the regularized NE of M(x_0) (regularized_nash_equilibrium in T).
  M1 y1 = M1::Zero();
  M2 y2 = M2::Zero();
  if (warm) {
    pbrl::MarkovGame<T, S, A1, A2> g;
    REQUIRE(st->problem.build(Design::Params::Zero(), st->model, g) == Status::ok);
    const auto nash = std::make_unique<pbrl::NashWorkspace<T, S, A1, A2>>();
    pbrl::NashResult<T> result;
    pbrl::BestResponseSettings<T> near;
    near.max_iterations = 1000;  // near the NE is enough (the full 10000 sweeps took most of the test's time)
    REQUIRE(pbrl::regularized_nash_equilibrium(g, near, *nash, result) == Status::ok);
    y1 = nash->pi1.array().log().matrix();
    y2 = nash->pi2.array().log().matrix();
  }
  REQUIRE(st->solver.init(st->problem, s, Design::Params::Zero(), y1, y2) == Status::ok);
  Tally tally;
  typename Solver::Report r;
  for (int k = 0; k < kSolverSteps; ++k) {
    // The iterate: M(x_k) and the induced MDPs as the solver forms them (softmax: with the logs
    // it forms beside pi_k), in T.
    pbrl::MarkovGame<T, S, A1, A2> g;
    REQUIRE(st->problem.build(st->solver.x(), st->model, g) == Status::ok);
    M1 pi1, log1;
    M2 pi2, log2;
    const auto param = st->solver.settings().policy.parameterization;
    pbrl::policy_from_parameters<T, S, A1>(param, st->solver.y1(), pi1, &log1);
    pbrl::policy_from_parameters<T, S, A2>(param, st->solver.y2(), pi2, &log2);
    M1 check1;
    M2 check2;
    st->solver.policy1(check1);
    st->solver.policy2(check2);
    REQUIRE(check1 == pi1);
    REQUIRE(check2 == pi2);
    const bool logs = param == pbrl::Parameterization::softmax;
    pbrl::Mdp<T, S, A1> mdp1;
    pbrl::Mdp<T, S, A2> mdp2;
    REQUIRE(pbrl::player1_mdp(g, pi2, st->induced1, mdp1, logs ? &log2 : nullptr) == Status::ok);
    REQUIRE(pbrl::player2_mdp(g, pi1, st->induced2, mdp2, logs ? &log1 : nullptr) == Status::ok);
    const LD truth = optimum_rho(mdp1) + optimum_rho(mdp2);
    REQUIRE(st->solver.step(&r) == Status::ok);
    const auto hat1 = naive_eval(mdp1, st->solver.oracle_policy1());
    const auto hat2 = naive_eval(mdp2, st->solver.oracle_policy2());
    const LD naive = LD(hat1.value_rho) + LD(hat2.value_rho) + LD(hat1.certificate) + LD(hat2.certificate);
    check_step_certificate<T>(k, gamma, warm, r, truth, naive, s.gap_tolerance, tally);
  }
  report_tally<T>("PbrlZeroSum", gamma, warm, tally);
}

// The reference checks need long double wider than T (not on ARM for double: nothing to check).
template <typename T>
void check_solvers() {
  if constexpr (kReferenceWider<T>) {
    for (const double gamma : kSolverGammas) {
      for (const bool warm : {false, true}) {
        check_pbrl<T>(gamma, warm);
        check_zero_sum<T>(gamma, warm);
      }
    }
  }
}

}  // namespace

TEST_CASE("certificate: the solvers' gap_bound is never below the true gap of the iterate, float and double, gamma to 0.9999") {
  check_solvers<float>();
  check_solvers<double>();
}

}  // namespace test_certificate
