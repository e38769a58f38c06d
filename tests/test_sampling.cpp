// Sampled mode: rollouts from the generative model follow rho, sigma, P and pi; every Monte-Carlo
// estimator the solver uses agrees with its exact, model-based counterpart within its sampling
// error (and its error halves when the batch grows 4x); the estimators validate their inputs; the
// sampled PBRL solver drives the penalty down, improves f and counts its environment steps.
//
// Statistics: an estimator is run n times with batch b on an advancing stream; the per-coordinate
// standard error SE = sd/sqrt(n) of the mean comes from those replicates, and each coordinate must
// satisfy |mean - exact| <= 4 SE + bias, where bias bounds the horizon's truncation bias
// (gamma^H is ~1e-11 here) and, in float, the rounding of the sums. Seeds are fixed, so a run is
// deterministic; the float run (Cortex-M4 under QEMU) uses about 1e5 environment steps per check,
// the double run 4x that (PBRL_SAMPLING_SCALE, default 4; -DPBRL_SAMPLING_VERBOSE logs every
// coordinate's error in units of its SE).
#include "sampling_support.hpp"
#include "fd_support.hpp"
#include "solver_support.hpp"
#include "pbrl/problems/reward_shaping.hpp"

#include <cstring>

namespace test_sampling {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 5, A = 3, K = 3;
using Traj = pbrl::Trajectory<Real, 64>;
using Ws = pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct>;
using Mixture = MixtureProblem<S, A, K>;
using Shaping = pbrl::RewardShaping<Real, S, A>;

constexpr Real kGamma = Real(0.6);
constexpr int kLongHorizon = 48;         // gamma^H = 0.6^48 = 2.2e-11

Real max_abs_value(const pbrl::Evaluation<Real, S, A>& e) { return e.value.cwiseAbs().maxCoeff(); }

pbrl::Evaluation<Real, S, A> evaluated(const pbrl::Mdp<Real, S, A>& m, const Mat<S, A>& pi) {
  auto ws = std::make_unique<Ws>();
  pbrl::Evaluation<Real, S, A> e;
  REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
  return e;
}

Mixture::Params random_x(pbrl::Rng& rng) { return uniform_vector<Mixture::Params>(rng); }

// The mixture problem of seed Seed built at an x drawn from prng (seeded Seed + 1, which the test
// case draws on from): model and m, the MDP at x. A TEST_CASE_FIXTURE: the case reads the members
// by these names.
template <std::uint32_t Seed>
struct MixtureAtRandomX {
  Mixture problem{Seed, kGamma};
  pbrl::Rng prng{Seed + 1u};
  const Mixture::Params x = random_x(prng);
  std::unique_ptr<Mixture::Model> model = std::make_unique<Mixture::Model>();
  pbrl::Mdp<Real, S, A> m;
  MixtureAtRandomX() { REQUIRE(problem.build(x, *model, m) == Status::ok); }
};

// Reward shaping's data on a task's reward, transition and initial arrays, the rest at defaults.
Shaping::Data task_data(const RandomModel<S, A>& task) {
  Shaping::Data d;
  d.reward = task.reward;
  d.transition = task.transition;
  d.initial = task.initial;
  return d;
}

// A reward-shaping problem (Shaping, or a type derived from it) on task_data of RandomModel(seed),
// built at x = 0.
template <class Problem>
struct ShapingAtZero {
  RandomModel<S, A> task;
  Problem problem;
  Shaping::Model model;
  pbrl::Mdp<Real, S, A> mdp;
  explicit ShapingAtZero(std::uint32_t seed) : task(seed) {
    REQUIRE(problem.init(task_data(task)) == Status::ok);
    REQUIRE(problem.build(Shaping::Params::Zero(), model, mdp) == Status::ok);
  }
};

// x steers the dynamics only: P_x(.|s,a) = (1 - m) Down(.|s,a) + m Up(.|s,a), m = sig(<C(s,a), x>),
// Down/Up move one state down/up with probability 0.7 (else uniform), the reward -1..1 grows with
// the state and does not depend on x. So J^T(w, v) = gamma sum w m(1-m) C (Up - Down).v is all
// transition term, and large: V differs a lot between neighbouring states.
class Steering {
 public:
  using Scalar = Real;
  static constexpr int kStates = S, kActions = A, kParams = K;
  using Params = pbrl::Vector<Real, K>;
  struct Model {
    Real transition[S * A * S];
    Real x[K];  // the x it was built for, which vjp() and sample_vjp() read
  };
  explicit Steering(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    for (Real& c : c_) c = Real(0.5) + Real(0.5) * rng.uniform<Real>();
    for (int s = 0; s < S; ++s) {
      initial_[s] = Real(1) / S;
      for (int a = 0; a < A; ++a) {
        reward_[s * A + a] = Real(2) * s / (S - 1) - Real(1) + Real(0.05) * a;
        for (int t = 0; t < S; ++t) {
          down_[(s * A + a) * S + t] = Real(0.3) / S + (t == std::max(s - 1, 0) ? Real(0.7) : Real(0));
          up_[(s * A + a) * S + t] = Real(0.3) / S + (t == std::min(s + 1, S - 1) ? Real(0.7) : Real(0));
        }
      }
    }
  }
  Real mix(int sa, const Params& x) const {
    Real t(0);
    for (int k = 0; k < K; ++k) t += c_[sa * K + k] * x(k);
    return Real(1) / (Real(1) + std::exp(-t));
  }
  Status validate_parameters(const Params& x) const {
    return pbrl::contains(box_, x) ? Status::ok : Status::out_of_bounds;
  }
  void project_parameters(Params& x) const { pbrl::project(box_, x); }
  Status build(const Params& x, Model& model, pbrl::Mdp<Real, S, A>& mdp) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    for (int sa = 0; sa < S * A; ++sa) {
      const Real m = mix(sa, x);
      for (int t = 0; t < S; ++t)
        model.transition[sa * S + t] = (Real(1) - m) * down_[sa * S + t] + m * up_[sa * S + t];
    }
    Eigen::Map<Params>(model.x) = x;
    mdp = pbrl::Mdp<Real, S, A>{reward_, model.transition, initial_, kGamma, {pbrl::RegularizerKind::entropy, Real(0.3), nullptr}};
    return Status::ok;
  }
  void vjp(const Model& model, const Mat<S, A>& w, const Vec<S>& v, Real scale, Params& grad) const {
    const Params x = Eigen::Map<const Params>(model.x);
    for (int sa = 0; sa < S * A; ++sa) {
      const Real m = mix(sa, x);
      Real dv(0);
      for (int t = 0; t < S; ++t) dv += (up_[sa * S + t] - down_[sa * S + t]) * v(t);
      for (int k = 0; k < K; ++k)
        grad(k) += scale * w(sa / A, sa % A) * kGamma * m * (Real(1) - m) * c_[sa * K + k] * dv;
    }
  }
  void sample_vjp(const Model& model, const pbrl::VjpSample<Real>& sample, Params& grad) const {
    const auto [s, a, s_next, reward_weight, transition_weight] = sample;
    (void)reward_weight;  // r does not depend on x
    const Params x = Eigen::Map<const Params>(model.x);
    const int sa = s * A + a;
    const Real m = mix(sa, x);
    const Real down = down_[sa * S + s_next], up = up_[sa * S + s_next];
    const Real dlog = transition_weight * m * (Real(1) - m) * (up - down) / ((Real(1) - m) * down + m * up);
    for (int k = 0; k < K; ++k) grad(k) += dlog * c_[sa * K + k];
  }

 private:
  Real reward_[S * A], initial_[S], down_[S * A * S], up_[S * A * S], c_[S * A * K];
  pbrl::Box<Real> box_{Real(-2), Real(2)};
};

Mat<S, A> softmax_of(const Mat<S, A>& y) {
  Mat<S, A> pi;
  pbrl::policy_from_parameters<Real, S, A>(Parameterization::softmax, y, pi);
  return pi;
}
}  // namespace

// ---- rollouts -----------------------------------------------------------------------------------

TEST_CASE("sample_index draws by the inverse CDF and never an index of probability 0") {
  pbrl::Rng rng(1);
  const int n = 20000 * kScale;
  // Mass 0.9: the uniforms above the last cumulative sum fall to the last positive entry (index 4).
  pbrl::Vector<Real, 6> p;
  p << Real(0), Real(0.2), Real(0), Real(0.4), Real(0.3), Real(0);
  const Real expected[6] = {0, 0.2, 0, 0.4, 0.4, 0};
  int count[6] = {};
  for (int i = 0; i < n; ++i) {
    const int k = pbrl::sample_index(rng, p);
    REQUIRE(k >= 0);
    REQUIRE(k < 6);
    ++count[k];
  }
  for (int k = 0; k < 6; ++k) {
    CAPTURE(k);
    const Real freq = Real(count[k]) / Real(n);
    CHECK(std::abs(freq - expected[k]) <= Real(4) * std::sqrt(expected[k] * (1 - expected[k]) / n));
  }
  CHECK(count[0] + count[2] + count[5] == 0);
  pbrl::Vector<Real, 3> none = pbrl::Vector<Real, 3>::Zero();
  CHECK(pbrl::sample_index(rng, none) == -1);

  // Exactly the index of the inverse CDF over the positive entries in order, from the same
  // uniform (the scan adds zeros instead of skipping them): every draw, zeros first, in the middle
  // and last, and a mass short of one.
  pbrl::Vector<Real, 6> q;
  q << Real(0), Real(0.25), Real(0), Real(1) / Real(3), Real(0.1), Real(0);
  for (const auto& row : {p, q}) {
    for (int i = 0; i < 2000; ++i) {
      pbrl::Rng copy = rng;
      const Real u = copy.uniform<Real>();
      Real cumulative(0);
      int expected_index = -1, last = -1;
      for (int k = 0; k < 6 && expected_index < 0; ++k) {
        if (!(row(k) > Real(0))) continue;
        last = k;
        cumulative += row(k);
        if (u < cumulative) expected_index = k;
      }
      if (expected_index < 0) expected_index = last;
      REQUIRE(pbrl::sample_index(rng, row) == expected_index);
      REQUIRE(same_rng(rng, copy));  // one uniform
    }
  }
}

TEST_CASE("rollouts follow rho, sigma, P and pi; steps and the stream are exact") {
  RandomModel<S, A> model(71);
  const auto m = model.mdp(Real(0.9), Real(0.2));
  pbrl::Rng prng(72);
  const Mat<S, A> sigma = random_policy<S, A>(prng), pi = random_policy<S, A>(prng);
  const auto P = m.P();
  const auto rho = m.rho();

  const int n = 15000 * kScale, H = 2;
  auto traj = std::make_unique<Traj>();
  pbrl::Rng rng(73);
  std::int64_t steps = 5;  // the counter is added to, not reset
  static int c0[S][A], c01[S][A][S], c1[S][A], c2[S];
  std::memset(c0, 0, sizeof(c0));
  std::memset(c01, 0, sizeof(c01));
  std::memset(c1, 0, sizeof(c1));
  std::memset(c2, 0, sizeof(c2));
  for (int i = 0; i < n; ++i) {
    REQUIRE(pbrl::rollout(m, {sigma, pi}, H, rng, *traj, steps) == Status::ok);
    REQUIRE(traj->horizon == H);
    ++c0[traj->state[0]][traj->action[0]];
    ++c01[traj->state[0]][traj->action[0]][traj->state[1]];
    ++c1[traj->state[1]][traj->action[1]];
    ++c2[traj->state[2]];
  }
  CHECK(steps == 5 + std::int64_t(n) * H);
  // Exactly 2H + 1 uniforms per rollout.
  pbrl::Rng counted(73);
  for (int i = 0; i < n * (2 * H + 1); ++i) counted.next();
  CHECK(same_rng(rng, counted));

  auto check_freq = [&](int count, Real p) {
    const Real freq = Real(count) / Real(n);
    CHECK(std::abs(freq - p) <= Real(4) * std::sqrt(p * (1 - p) / n) + Real(1e-6));
  };
  Vec<S> d1 = Vec<S>::Zero(), d2 = Vec<S>::Zero();
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      CAPTURE(s);
      CAPTURE(a);
      check_freq(c0[s][a], rho(s) * sigma(s, a));
      for (int t = 0; t < S; ++t) check_freq(c01[s][a][t], rho(s) * sigma(s, a) * P(s * A + a, t));
      d1 += rho(s) * sigma(s, a) * P.row(s * A + a).transpose();
    }
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      check_freq(c1[s][a], d1(s) * pi(s, a));
      d2 += d1(s) * pi(s, a) * P.row(s * A + a).transpose();
    }
  for (int s = 0; s < S; ++s) check_freq(c2[s], d2(s));

  // Same seed, same trajectories; another seed, others.
  pbrl::Rng a(5), b(5), c(6);
  std::int64_t sa = 0, sb = 0, sc = 0;
  auto ta = std::make_unique<Traj>(), tb = std::make_unique<Traj>(), tc = std::make_unique<Traj>();
  bool differs = false;
  for (int i = 0; i < 20; ++i) {
    REQUIRE(pbrl::rollout(m, {sigma, pi}, 30, a, *ta, sa) == Status::ok);
    REQUIRE(pbrl::rollout(m, {sigma, pi}, 30, b, *tb, sb) == Status::ok);
    REQUIRE(pbrl::rollout(m, {sigma, pi}, 30, c, *tc, sc) == Status::ok);
    CHECK(same_bytes(*ta, *tb));
    differs = differs || !same_bytes(*ta, *tc);
  }
  CHECK(differs);

  // Returns: the backward recursion, by hand.
  REQUIRE(pbrl::compute_returns(m, pi, *ta) == Status::ok);
  Real v(0);
  for (int t = 29; t >= 0; --t) {
    const int s = ta->state[t];
    v = m.r()(s, ta->action[t]) - m.tau() * m.regularizer.value(s, pi.row(s)) + m.discount * v;
    CHECK_CLOSE(ta->value[t], v, kTight, std::abs(v));
    CHECK_CLOSE(pbrl::sampled_q(m, *ta, t), m.r()(s, ta->action[t]) + m.discount * ta->value[t + 1], kTight, Real(10));
  }
  CHECK(ta->value[30] == Real(0));
}

TEST_CASE("rollout and compute_returns validate and change nothing on error") {
  RandomModel<S, A> model(74);
  const auto m = model.mdp(Real(0.9), Real(0.2));
  pbrl::Rng prng(75);
  const Mat<S, A> pi = random_policy<S, A>(prng);
  Mat<S, A> bad = pi;
  bad(2, 1) += Real(0.1);
  Mat<S, A> nan = pi;
  nan(0, 0) = std::numeric_limits<Real>::quiet_NaN();
  auto traj = std::make_unique<pbrl::Trajectory<Real, 8>>();
  pbrl::Rng rng(76);
  std::int64_t steps = 0;
  REQUIRE(pbrl::rollout(m, {pi, pi}, 8, rng, *traj, steps) == Status::ok);
  const auto saved_traj = *traj;
  const pbrl::Rng saved_rng = rng;
  auto unchanged = [&] { return same_bytes(*traj, saved_traj) && same_rng(rng, saved_rng) && steps == 8; };
  CHECK(pbrl::rollout(m, {pi, pi}, 0, rng, *traj, steps) == Status::bad_setting);
  CHECK(unchanged());
  CHECK(pbrl::rollout(m, {pi, pi}, 9, rng, *traj, steps) == Status::bad_setting);
  CHECK(unchanged());
  CHECK(pbrl::rollout(m, {bad, pi}, 4, rng, *traj, steps) == Status::bad_policy);
  CHECK(unchanged());
  CHECK(pbrl::rollout(m, {pi, nan}, 4, rng, *traj, steps) == Status::not_finite);
  CHECK(unchanged());
  auto broken = m;
  broken.transition = nullptr;
  CHECK(pbrl::rollout(broken, {pi, pi}, 4, rng, *traj, steps) == Status::null_pointer);
  CHECK(unchanged());
  broken = m;
  broken.discount = Real(1);
  CHECK(pbrl::rollout(broken, {pi, pi}, 4, rng, *traj, steps) == Status::bad_discount);
  CHECK(unchanged());

  auto odd = std::make_unique<pbrl::Trajectory<Real, 8>>(*traj);
  odd->state[3] = S;
  const auto saved_odd = *odd;
  CHECK(pbrl::compute_returns(m, pi, *odd) == Status::bad_setting);
  CHECK(same_bytes(*odd, saved_odd));
  odd->state[3] = 0;
  odd->action[7] = -1;
  CHECK(pbrl::compute_returns(m, pi, *odd) == Status::bad_setting);
  odd->action[7] = 0;
  odd->horizon = 9;
  CHECK(pbrl::compute_returns(m, pi, *odd) == Status::bad_setting);
  odd->horizon = 8;
  CHECK(pbrl::compute_returns(m, bad, *odd) == Status::bad_policy);
  // A reward too large for the recursion: numerical_failure, the values untouched.
  Real huge[S * A];
  for (Real& r : huge) r = std::numeric_limits<Real>::max() / Real(2);
  auto overflow = m;
  overflow.reward = huge;
  overflow.discount = Real(0.99);
  const auto before = *odd;
  CHECK(pbrl::compute_returns(overflow, pi, *odd) == Status::numerical_failure);
  CHECK(same_bytes(*odd, before));
}

// ---- policy gradient and value ------------------------------------------------------------------

TEST_CASE("sampled policy gradient and value agree with the exact ones within their sampling error") {
  RandomModel<S, A> model(81);
  constexpr int N = S * A + 1;  // gradient, then V(rho)
  const int n = 250 * kScale, batch = 4;
  for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference})
    for (auto param : {Parameterization::softmax, Parameterization::direct}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(static_cast<int>(param));
      const auto m = model.mdp(kGamma, Real(0.3), kind);
      pbrl::Rng prng(82);
      const Mat<S, A> pi = param == Parameterization::softmax ? softmax_of(random_logits<S, A>(prng, Real(1.5)))
                                                              : random_policy<S, A>(prng);
      const auto e = evaluated(m, pi);
      Mat<S, A> grad_pi, grad;
      pbrl::policy_gradient(m, pi, e, grad_pi);
      pbrl::chain_policy_gradient<Real, S, A>(param, pi, grad_pi, grad);
      Real exact[N];
      flatten<S * A>(grad, exact);
      exact[S * A] = e.value_rho;

      auto traj = std::make_unique<Traj>();
      pbrl::Rng rng(83);
      std::int64_t steps = 0;
      auto estimate = [&](int b, Real* out) {
        Mat<S, A> g;
        Real v;
        REQUIRE(pbrl::sampled_policy_gradient(m, param, pi, sizes(kLongHorizon, b), rng, *traj, steps, v, g) ==
                Status::ok);
        flatten<S * A>(g, out);
        out[S * A] = v;
      };
      const Stats<N> st = replicate<N>(estimate, n, batch, exact);
      CHECK(steps == std::int64_t(n) * batch * kLongHorizon);
      const Real bias = bias_bound(kGamma, kLongHorizon, max_abs_value(e), pi.minCoeff(),
                                   grad.cwiseAbs().maxCoeff());
      check_within_error(param == Parameterization::softmax ? "policy gradient (softmax)"
                                                            : "policy gradient (direct)",
                         st, exact, bias);
      if (kind == pbrl::RegularizerKind::entropy)
        check_error_halves<N>(param == Parameterization::softmax ? "policy gradient (softmax)"
                                                                 : "policy gradient (direct)",
                              estimate, n, batch, exact);

      // One batch of B is the mean of B batches of one on the same stream.
      pbrl::Rng r1(84), r2(84);
      std::int64_t s1 = 0, s2 = 0;
      Mat<S, A> g_big, g_one, g_sum = Mat<S, A>::Zero();
      Real v_big, v_one, v_sum(0);
      REQUIRE(pbrl::sampled_policy_gradient(m, param, pi, sizes(10, 8), r1, *traj, s1, v_big, g_big) == Status::ok);
      for (int i = 0; i < 8; ++i) {
        REQUIRE(pbrl::sampled_policy_gradient(m, param, pi, sizes(10, 1), r2, *traj, s2, v_one, g_one) == Status::ok);
        g_sum += g_one / Real(8);
        v_sum += v_one / Real(8);
      }
      CHECK((g_big - g_sum).cwiseAbs().maxCoeff() <= kTight * (Real(1) + g_big.cwiseAbs().maxCoeff() / pi.minCoeff()));
      CHECK_CLOSE(v_big, v_sum, kTight, std::abs(v_big));
      CHECK(same_rng(r1, r2));
      CHECK(s1 == 80);
      CHECK(s2 == 80);
    }
}

// ---- vector-Jacobian products -------------------------------------------------------------------

TEST_CASE("the mixture problem's per-sample hook matches finite differences of r_x and log P_x") {
  Mixture problem(91, kGamma);
  pbrl::Rng rng(92);
  const Mixture::Params x = random_x(rng);
  auto model = std::make_unique<Mixture::Model>(), at_x = std::make_unique<Mixture::Model>();
  problem.fill(x, *at_x);
  for (int trial = 0; trial < 6; ++trial) {
    const int s = int(rng.below(S)), a = int(rng.below(A)), t = int(rng.below(S));
    Mixture::Params g_r = Mixture::Params::Zero(), g_p = Mixture::Params::Zero();
    problem.sample_vjp(*at_x, {s, a, t, Real(1), Real(0)}, g_r);
    problem.sample_vjp(*at_x, {s, a, t, Real(0), Real(1)}, g_p);
    for (int k = 0; k < K; ++k) {
      auto at = [&](Real h, bool reward) {
        Mixture::Params xh = x;
        xh(k) += h;
        problem.fill(xh, *model);
        return reward ? model->reward[s * A + a] : std::log(model->transition[(s * A + a) * S + t]);
      };
      const Real fd_r = central_difference([&](Real h) { return at(h, true); });
      const Real fd_p = central_difference([&](Real h) { return at(h, false); });
      CHECK_CLOSE(g_r(k), fd_r, kFdTol, g_r.cwiseAbs().maxCoeff());
      CHECK_CLOSE(g_p(k), fd_p, kFdTol, g_p.cwiseAbs().maxCoeff());
    }
  }
  // Reward shaping: e_{(s,a)}, no transition term.
  ShapingAtZero<Shaping> shaping(93);
  Shaping::Params g = Shaping::Params::Zero();
  shaping.problem.sample_vjp(shaping.model, {2, 1, 4, Real(0.5), Real(7)}, g);
  CHECK(g(2 * A + 1) == Real(0.5));
  CHECK(g.cwiseAbs().sum() == Real(0.5));
  static_assert(pbrl::has_sample_vjp<Shaping>::value, "reward shaping offers the hook");
  static_assert(pbrl::has_sample_vjp<Mixture>::value, "the mixture problem offers the hook");
}

TEST_CASE("sampled vector-Jacobian products agree with J^T(mu', V) within their sampling error") {
  const int n = 250 * kScale, batch = 4;
  pbrl::Rng prng(101);
  auto ws = std::make_unique<Ws>();
  auto traj = std::make_unique<Traj>();

  SUBCASE("reward shaping: J^T(mu', V) = mu'") {
    RandomModel<S, A> task(102);
    Shaping problem;
    Shaping::Data data = task_data(task);
    data.discount = kGamma;
    data.lower.tau = Real(0.3);
    REQUIRE(problem.init(data) == Status::ok);
    Shaping::Model model;
    const Shaping::Params x = uniform_vector<Shaping::Params>(prng);
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(problem.build(x, model, m) == Status::ok);
    const Mat<S, A> pi = random_policy<S, A>(prng), sigma = random_policy<S, A>(prng);
    for (bool from_sigma : {true, false}) {
      CAPTURE(from_sigma);
      const Mat<S, A>& start = from_sigma ? sigma : pi;
      const auto e = evaluated(m, pi);
      Vec<S> warm = Vec<S>::Zero();
      Mat<S, A> mu;
      REQUIRE(pbrl::occupancy_from_start(m, {start, pi}, *ws, warm, mu) == Status::ok);
      Shaping::Params g = Shaping::Params::Zero();
      problem.vjp(model, mu, e.value, Real(1), g);
      auto estimate = params_replicates(g, 103, [&](int b, pbrl::Rng& rng, std::int64_t& steps, Shaping::Params& gs) {
        return pbrl::sampled_vjp(problem, model, m, start, pi, sizes(kLongHorizon, b), rng, *traj, steps, gs);
      });
      const Stats<S * A> st = estimate.run(n, batch);
      CHECK(estimate.steps == std::int64_t(n) * batch * kLongHorizon);
      check_within_error(from_sigma ? "J^T(mu', V), reward shaping" : "J^T(mu, V), reward shaping", st, estimate.exact,
                         bias_bound(kGamma, kLongHorizon, max_abs_value(e), Real(1), g.cwiseAbs().maxCoeff()));
    }
  }

  SUBCASE("x-dependent transitions: the likelihood-ratio term") {
    Mixture problem(104, kGamma);
    const Mixture::Params x = random_x(prng);
    auto model = std::make_unique<Mixture::Model>();
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(problem.build(x, *model, m) == Status::ok);
    const Mat<S, A> pi = random_policy<S, A>(prng), sigma = random_policy<S, A>(prng);
    const auto e = evaluated(m, pi);
    Vec<S> warm = Vec<S>::Zero();
    Mat<S, A> mu;
    REQUIRE(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu) == Status::ok);
    Mixture::Params g = Mixture::Params::Zero(), reward_only = Mixture::Params::Zero();
    problem.vjp(*model, mu, e.value, Real(1), g);
    for (int sa = 0; sa < S * A; ++sa) {
      const Real t = problem.shaping(sa, x);
      for (int k = 0; k < K; ++k) reward_only(k) += mu(sa / A, sa % A) * (Real(1) - t * t) * problem.b(sa, k);
    }
    auto estimate = params_replicates(g, 105, [&](int b, pbrl::Rng& rng, std::int64_t& steps, Mixture::Params& gs) {
      return pbrl::sampled_vjp(problem, *model, m, sigma, pi, sizes(kLongHorizon, b), rng, *traj, steps, gs);
    });
    const Stats<K> st = estimate.run(n, batch);
    check_within_error("J^T(mu', V), x-dependent P", st, estimate.exact,
                       bias_bound(kGamma, kLongHorizon, max_abs_value(e), Real(1), g.cwiseAbs().maxCoeff()));
    // Random mixtures have nearly uniform P0, P1, so their transition term is small (about one SE
    // here); the steering problem below resolves it.
    Real resolved(0);
    for (int k = 0; k < K; ++k) resolved = std::max(resolved, std::abs(g(k) - reward_only(k)) / st.se(k));
    MESSAGE("mixture: transition term / SE, largest over coordinates: ", resolved);
    check_error_halves<K>("J^T(mu', V), x-dependent P", estimate, n, batch, estimate.exact);
  }
}

TEST_CASE("sampled vector-Jacobian product through the dynamics alone: the likelihood-ratio term") {
  Steering problem(106);
  pbrl::Rng prng(107);
  const Steering::Params x = Steering::Params::Constant(Real(0.3));
  auto model = std::make_unique<Steering::Model>();
  pbrl::Mdp<Real, S, A> m;
  REQUIRE(problem.build(x, *model, m) == Status::ok);
  const Mat<S, A> pi = random_policy<S, A>(prng), sigma = random_policy<S, A>(prng);
  const auto e = evaluated(m, pi);
  auto ws = std::make_unique<Ws>();
  Vec<S> warm = Vec<S>::Zero();
  Mat<S, A> mu;
  REQUIRE(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu) == Status::ok);
  Steering::Params g = Steering::Params::Zero();
  problem.vjp(*model, mu, e.value, Real(1), g);
  // The exact product against finite differences of E_{rho,sigma} Q^pi.
  for (int k = 0; k < K; ++k) {
    const Real fd = central_difference([&](Real h) {
      Steering::Params xh = x;
      xh(k) += h;
      pbrl::Mdp<Real, S, A> mh;
      REQUIRE(problem.build(xh, *model, mh) == Status::ok);
      const auto eh = evaluated(mh, pi);
      Real q(0);
      for (int s = 0; s < S; ++s) q += mh.rho()(s) * sigma.row(s).dot(eh.q.row(s));
      return q;
    });
    CHECK_CLOSE(g(k), fd, kFdTol, g.cwiseAbs().maxCoeff());
  }
  REQUIRE(problem.build(x, *model, m) == Status::ok);
  auto traj = std::make_unique<Traj>();
  auto estimate = params_replicates(g, 108, [&](int b, pbrl::Rng& rng, std::int64_t& steps, Steering::Params& gs) {
    return pbrl::sampled_vjp(problem, *model, m, sigma, pi, sizes(kLongHorizon, b), rng, *traj, steps, gs);
  });
  const int n = 250 * kScale, batch = 4;
  const Stats<K> st = estimate.run(n, batch);
  check_within_error("J^T(mu', V), dynamics only", st, estimate.exact,
                     bias_bound(kGamma, kLongHorizon, max_abs_value(e), Real(1), g.cwiseAbs().maxCoeff()));
  // Every coordinate is resolved: an estimator without the transition term (0 here) would fail.
  for (int k = 0; k < K; ++k) {
    CAPTURE(k);
    CHECK(std::abs(g(k)) > Real(8) * st.se(k));
  }
  MESSAGE("dynamics only: |J^T| / SE per coordinate: ", std::abs(g(0)) / st.se(0), ", ", std::abs(g(1)) / st.se(1),
          ", ", std::abs(g(2)) / st.se(2));
  check_error_halves<K>("J^T(mu', V), dynamics only", estimate, n, batch, estimate.exact);
}

// ---- penalties ----------------------------------------------------------------------------------

namespace {
// p, grad_x and grad_y (in param's coordinates) of the exact penalties with pi-hat given.
struct ExactPenalty {
  Real exact[K + S * A + 1];
};
ExactPenalty exact_penalty(const Mixture& problem, const Mixture::Model& model, const pbrl::Mdp<Real, S, A>& m,
                           PenaltyKind kind, Parameterization param, const Mat<S, A>& pi_y,
                           const Mat<S, A>& pi_hat) {
  auto ws = std::make_unique<Ws>();
  pbrl::Evaluation<Real, S, A> ey, eh;
  REQUIRE(pbrl::evaluate(m, pi_y, *ws, ey) == Status::ok);
  REQUIRE(pbrl::evaluate(m, pi_hat, *ws, eh) == Status::ok);
  Mixture::Params gx = Mixture::Params::Zero();
  Mat<S, A> gpi = Mat<S, A>::Zero(), gy, weights;
  Real p;
  if (kind == PenaltyKind::value) {
    p = pbrl::value_penalty(problem, model, m, pbrl::PolicyY{pi_y, ey}, pbrl::PolicyHat{pi_hat, eh}, Real(1), weights, {gx, gpi});
  } else {
    Vec<S> warm = Vec<S>::Zero();
    Mat<S, A> start;
    REQUIRE(pbrl::occupancy_from_start(m, {pi_y, pi_hat}, *ws, warm, start, true) == Status::ok);
    pbrl::bellman_penalty(problem, model, m, pbrl::PolicyY{pi_y}, pbrl::PolicyHat{pi_hat, eh}, start, Real(1), weights, {gx, gpi});
    // The sampled p estimates V^{pi-hat}(rho) - E_{rho,pi_y} Q^{pi-hat} + tau E_rho h(pi_y), which
    // is bellman_penalty's p at pi-hat = pi* (checked below).
    p = eh.value_rho;
    for (int s = 0; s < S; ++s)
      p += m.rho()(s) * (m.tau() * m.regularizer.value(s, pi_y.row(s)) - pi_y.row(s).dot(eh.q.row(s)));
  }
  pbrl::chain_policy_gradient<Real, S, A>(param, pi_y, gpi, gy);
  ExactPenalty out;
  flatten<K>(gx, out.exact);
  flatten<S * A>(gy, out.exact + K);
  out.exact[K + S * A] = p;
  return out;
}
}  // namespace

TEST_CASE_FIXTURE(MixtureAtRandomX<111>,
                  "sampled value and Bellman penalties agree with the exact ones within their sampling error") {
  constexpr int N = K + S * A + 1;  // grad_x, grad_y, p
  const int n = 250 * kScale, batch = 4;
  const auto opt = optimum(m);
  auto traj = std::make_unique<Traj>();

  // At pi-hat = pi* the sampled Bellman p's target is bellman_penalty's p.
  {
    const Mat<S, A> pi_y = random_policy<S, A>(prng);
    auto ws = std::make_unique<Ws>();
    pbrl::Evaluation<Real, S, A> eh;
    REQUIRE(pbrl::evaluate(m, opt.pi, *ws, eh) == Status::ok);
    Vec<S> warm = Vec<S>::Zero();
    Mat<S, A> start, weights, gpi = Mat<S, A>::Zero();
    REQUIRE(pbrl::occupancy_from_start(m, {pi_y, opt.pi}, *ws, warm, start, true) == Status::ok);
    Mixture::Params gx = Mixture::Params::Zero();
    const Real p = pbrl::bellman_penalty(problem, *model, m, pbrl::PolicyY{pi_y}, pbrl::PolicyHat{opt.pi, eh}, start, Real(1), weights, {gx, gpi});
    const auto target = exact_penalty(problem, *model, m, PenaltyKind::bellman, Parameterization::direct, pi_y, opt.pi);
    CHECK_CLOSE(target.exact[N - 1], p, Real(100) * kTight, std::abs(p));
  }

  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman})
    for (auto param : {Parameterization::softmax, Parameterization::direct}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(static_cast<int>(param));
      const Mat<S, A> pi_y = param == Parameterization::softmax ? softmax_of(random_logits<S, A>(prng))
                                                                : random_policy<S, A>(prng);
      // pi-hat: the optimum for one parameterization, an arbitrary policy for the other.
      const Mat<S, A> pi_hat = param == Parameterization::softmax ? opt.pi : random_policy<S, A>(prng);
      const ExactPenalty target = exact_penalty(problem, *model, m, kind, param, pi_y, pi_hat);
      pbrl::Rng rng(113);
      std::int64_t steps = 0;
      auto estimate = [&](int b, Real* out) {
        pbrl::SampledPenalty<Mixture> sp;
        REQUIRE(pbrl::sampled_penalty(kind, problem, *model, m, param, pbrl::PolicyY{pi_y}, pbrl::PolicyHat{pi_hat},
                                      sizes(kLongHorizon, b), rng, *traj, steps, sp) == Status::ok);
        flatten<K>(sp.grad_x, out);
        flatten<S * A>(sp.grad_y, out + K);
        out[K + S * A] = sp.value;
      };
      const Stats<N> st = replicate<N>(estimate, n, batch, target.exact);
      CHECK(steps == 2 * std::int64_t(n) * batch * kLongHorizon);
      Real scale(0);
      for (Real v : target.exact) scale = std::max(scale, std::abs(v));
      const Real vmax = std::max(max_abs_value(evaluated(m, pi_y)), max_abs_value(evaluated(m, pi_hat)));
      const Real bias = Real(2) * bias_bound(kGamma, kLongHorizon, vmax, std::min(pi_y.minCoeff(), pi_hat.minCoeff()), scale);
      check_within_error(kind == PenaltyKind::value ? "value penalty (grad_x, grad_y, p)"
                                                    : "Bellman penalty (grad_x, grad_y, p)",
                         st, target.exact, bias);
      if (param == Parameterization::softmax)
        check_error_halves<N>(kind == PenaltyKind::value ? "value penalty" : "Bellman penalty", estimate, n, batch,
                              target.exact);
    }
}

// The batches keep each policy's regularizer terms per state (detail::RegularizerCache, filled by a
// batch's first chunk): the estimates are the per-visit formulas' written out here (public
// rollout and compute_returns, the regularizer term per visit), to the bit unless fused, in
// uneven chunks, with one batch object reused for another policy.
TEST_CASE_FIXTURE(MixtureAtRandomX<131>,
                  "batches of one policy: the regularizer cache gives the per-visit formulas' estimates to the bit") {
  Real ref[S * A];
  for (int s = 0; s < S; ++s) pbrl::random_distribution(prng, ref + s * A, A);
  const pbrl::SamplingSettings set = sizes(4, 6);
  const Real w = Real(1) / Real(set.batch);
  // To the bit, or within a few epsilons of the largest entry where the compiler may fuse
  // multiply-adds differently in the library and here.
  constexpr double kRounding = 16;
  auto traj = std::make_unique<Traj>();
  // B rollouts (a_0 ~ sigma, then pi) and their returns under pi, one visit(traj) each.
  auto by_hand = [&](const Mat<S, A>& sigma, const Mat<S, A>& pi, pbrl::Rng& rng, auto&& visit) {
    std::int64_t steps = 0;
    for (int b = 0; b < set.batch; ++b) {
      REQUIRE(pbrl::rollout(m, {sigma, pi}, set.horizon, rng, *traj, steps) == Status::ok);
      REQUIRE(pbrl::compute_returns(m, pi, *traj) == Status::ok);
      visit(static_cast<const Traj&>(*traj));
    }
  };
  auto policy_gradient = [&](Parameterization param, const Mat<S, A>& pi, Real sign, const Traj& t, Mat<S, A>& g) {
    Real d = sign * w;
    for (int k = 0; k < t.horizon; ++k) {
      const int s = t.state[k];
      pbrl::detail::add_action_term(param, pi, s, t.action[k], d * pbrl::sampled_q(m, t, k), g);
      regularizer_term_per_visit(m.regularizer, param, pi, s, d, g);
      d *= m.discount;
    }
  };
  for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference})
    for (auto param : {Parameterization::softmax, Parameterization::direct}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(static_cast<int>(param));
      m.regularizer = {kind, Real(0.3), kind == pbrl::RegularizerKind::kl_reference ? ref : nullptr};
      REQUIRE(pbrl::validate(m) == Status::ok);
      Mat<S, A> pi_y = random_policy<S, A>(prng);
      const Mat<S, A> pi_hat = random_policy<S, A>(prng);
      pi_y(2, 1) = Real(0);  // a zero entry: no term there (softmax), the floored derivative (direct)
      pi_y.row(2) /= pi_y.row(2).sum();

      // The policy-gradient batch, one object for two policies, in chunks of 1, 3, 2.
      auto batch = std::make_unique<pbrl::detail::PolicyGradientBatch<Real, S, A, 64>>();
      for (const Mat<S, A>* pi : {static_cast<const Mat<S, A>*>(&pi_y), &pi_hat}) {
        Mat<S, A> expected = Mat<S, A>::Zero(), grad;
        Real sum(0), value(0);
        pbrl::Rng hand(133);
        by_hand(*pi, *pi, hand, [&](const Traj& t) {
          sum += t.value[0];
          policy_gradient(param, *pi, Real(1), t, expected);
        });
        pbrl::Rng rng(133);
        REQUIRE(batch->check(m, param, *pi, set) == Status::ok);
        batch->start(grad);
        for (int chunk : {1, 3, 2}) batch->rollouts(m, param, *pi, set, chunk, rng, *traj, grad);
        REQUIRE(batch->finish(set, grad, value) == Status::ok);
        const Real mean = sum * w;
        check_same_unless_fused(grad.data(), expected.data(), S * A, kRounding);
        check_same_unless_fused(&value, &mean, 1, kRounding);
        CHECK(same_rng(rng, hand));
      }

      // Both penalties with common random numbers: batch 1 of pi-hat, batch 2 from the same stream.
      for (auto penalty : {PenaltyKind::value, PenaltyKind::bellman}) {
        CAPTURE(static_cast<int>(penalty));
        const bool bellman = penalty == PenaltyKind::bellman;
        Mixture::Params gx = Mixture::Params::Zero();
        Mat<S, A> gy = Mat<S, A>::Zero();
        Real sum1(0), sum2(0);
        pbrl::Rng first(134), second(134);
        by_hand(pi_hat, pi_hat, first, [&](const Traj& t) {
          sum1 += t.value[0];
          pbrl::detail::accumulate_vjp(problem, *model, m.discount, t, w, gx);
        });
        if (bellman) {
          by_hand(pi_y, pi_hat, second, [&](const Traj& t) {
            const Real q0 = pbrl::sampled_q(m, t, 0);
            sum2 += q0;
            pbrl::detail::accumulate_vjp(problem, *model, m.discount, t, -w, gx);
            pbrl::detail::add_action_term(param, pi_y, t.state[0], t.action[0], -w * q0, gy);
          });
        } else {
          by_hand(pi_y, pi_y, second, [&](const Traj& t) {
            sum2 += t.value[0];
            pbrl::detail::accumulate_vjp(problem, *model, m.discount, t, -w, gx);
            policy_gradient(param, pi_y, Real(-1), t, gy);
          });
        }
        Real value = (sum1 - sum2) * w;
        if (bellman) {
          Real regularization(0);
          for (int s = 0; s < S; ++s) {
            regularization += m.rho()(s) * m.regularizer.value(s, pi_y.row(s));
            regularizer_term_per_visit(m.regularizer, param, pi_y, s, -m.rho()(s), gy);
          }
          value += m.tau() * regularization;
        }
        auto out = std::make_unique<pbrl::SampledPenalty<Mixture>>();
        pbrl::Rng rng(134);
        std::int64_t steps = 0;
        const Status st = pbrl::sampled_penalty(penalty, problem, *model, m, param, pbrl::PolicyY{pi_y},
                                                pbrl::PolicyHat{pi_hat}, set, rng, *traj, steps, *out);
        REQUIRE(st == Status::ok);
        check_same_unless_fused(out->grad_x.data(), gx.data(), K, kRounding);
        check_same_unless_fused(out->grad_y.data(), gy.data(), S * A, kRounding);
        check_same_unless_fused(&out->value, &value, 1, kRounding);
        CHECK(same_rng(rng, second));
      }
    }
}

TEST_CASE_FIXTURE(MixtureAtRandomX<121>,
                  "common random numbers: the value penalty vanishes at pi_y = pi-hat, and the noise shrinks near it") {
  auto traj = std::make_unique<Traj>();
  const Mat<S, A> pi_hat = random_policy<S, A>(prng);
  pbrl::Rng rng(123);
  std::int64_t steps = 0;
  pbrl::SampledPenalty<Mixture> sp;
  REQUIRE(pbrl::sampled_penalty(PenaltyKind::value, problem, *model, m, Parameterization::softmax,
                                pbrl::PolicyY{pi_hat}, pbrl::PolicyHat{pi_hat}, sizes(10, 16), rng, *traj, steps,
                                sp) == Status::ok);
  CHECK(sp.value == Real(0));
  CHECK(sp.grad_x.cwiseAbs().maxCoeff() <= kTight);
  // The stream advanced by one batch's draws: both batches replayed it.
  pbrl::Rng counted(123);
  for (int i = 0; i < 16 * 21; ++i) counted.next();
  CHECK(same_rng(rng, counted));
  REQUIRE(pbrl::sampled_penalty(PenaltyKind::value, problem, *model, m, Parameterization::softmax,
                                pbrl::PolicyY{pi_hat}, pbrl::PolicyHat{pi_hat}, sizes(10, 16, false), rng, *traj,
                                steps, sp) == Status::ok);
  CHECK(sp.value != Real(0));

  // Near pi-hat, the x-gradient's spread with common random numbers is a fraction of the spread
  // with independent batches.
  Mat<S, A> pi_y = Real(0.95) * pi_hat + Real(0.05) * Mat<S, A>::Constant(Real(1) / A);
  const int n = 200 * kScale;
  Real spread[2] = {0, 0};
  for (int crn = 0; crn < 2; ++crn) {
    Stats<K> st;
    const Real zero[K] = {};
    for (int r = 0; r < n; ++r) {
      REQUIRE(pbrl::sampled_penalty(PenaltyKind::value, problem, *model, m, Parameterization::softmax,
                                    pbrl::PolicyY{pi_y}, pbrl::PolicyHat{pi_hat}, sizes(20, 4, crn == 1), rng, *traj,
                                    steps, sp) == Status::ok);
      st.add(sp.grad_x.data(), zero);
    }
    for (int k = 0; k < K; ++k) spread[crn] += st.m2[k];
  }
  MESSAGE("grad_x variance near pi-hat: independent batches ", spread[0] / n, ", common random numbers ",
          spread[1] / n);
  CHECK(spread[1] < Real(0.25) * spread[0]);
}

// ---- validation ---------------------------------------------------------------------------------

namespace {
// Reward shaping whose per-sample hook returns NaN: a numerical failure after validation.
struct PoisonedShaping : Shaping {
  void sample_vjp(const Model&, const pbrl::VjpSample<Real>&, Params& grad) const {
    grad(0) = std::numeric_limits<Real>::quiet_NaN();
  }
};
// The mixture problem without the per-sample hook.
struct NoHookMixture {
  using Scalar = Real;
  static constexpr int kStates = S, kActions = A, kParams = K;
  using Params = Mixture::Params;
  using Model = Mixture::Model;
  Mixture inner{131};
  Status validate_parameters(const Params& x) const { return inner.validate_parameters(x); }
  void project_parameters(Params& x) const { inner.project_parameters(x); }
  Status build(const Params& x, Model& model, pbrl::Mdp<Real, S, A>& mdp) const { return inner.build(x, model, mdp); }
  void vjp(const Model& model, const Mat<S, A>& w, const Vec<S>& v, Real scale, Params& grad) const {
    inner.vjp(model, w, v, scale, grad);
  }
  template <pbrl::EvaluationMethod M>
  Status upper(const Mat<S, A>& pi, Model& model, pbrl::EvaluationWorkspace<Real, S, M>& ws,
               pbrl::Evaluation<Real, S, A>& scratch, Real& f, Params& grad_x, Mat<S, A>& grad_pi) const {
    return inner.upper(pi, model, ws, scratch, f, grad_x, grad_pi);
  }
};
static_assert(!pbrl::has_sample_vjp<NoHookMixture>::value, "no hook");
}  // namespace

TEST_CASE_FIXTURE(MixtureAtRandomX<141>,
                  "sampled estimators validate their inputs; on error the stream and the step count stay") {
  const Mat<S, A> pi = random_policy<S, A>(prng);
  Mat<S, A> bad = pi;
  bad(1, 1) = Real(-0.1);
  auto traj = std::make_unique<pbrl::Trajectory<Real, 16>>();
  pbrl::Rng rng(143);
  std::int64_t steps = 3;
  const pbrl::Rng saved = rng;
  pbrl::SampledPenalty<Mixture> sp, sp0;
  sp.value = Real(42);
  sp0 = sp;
  Mat<S, A> g = Mat<S, A>::Constant(Real(7)), g0 = g;
  Real v = Real(5);
  Mixture::Params gx = Mixture::Params::Constant(Real(9)), gx0 = gx;
  auto unchanged = [&] {
    return same_rng(rng, saved) && steps == 3 && g == g0 && v == Real(5) && gx == gx0 && sp.value == sp0.value &&
           sp.grad_x == sp0.grad_x && sp.grad_y == sp0.grad_y;
  };
  const Parameterization nonsense = static_cast<Parameterization>(9);
  struct Case {
    pbrl::SamplingSettings size;
    bool bad_policy;
    Parameterization param;
    Status expected;
  };
  // x is not an argument: it enters through the model, which build(x) made for a valid x.
  const Case cases[] = {
      {sizes(0, 4), false, Parameterization::softmax, Status::bad_setting},
      {sizes(17, 4), false, Parameterization::softmax, Status::bad_setting},
      {sizes(5, 0), false, Parameterization::softmax, Status::bad_setting},
      {sizes(5, pbrl::kMaxBatch + 1), false, Parameterization::softmax, Status::bad_setting},
      {sizes(5, 4), true, Parameterization::softmax, Status::bad_policy},
      {sizes(5, 4), false, nonsense, Status::bad_setting},
  };
  for (const Case& c : cases) {
    const Mat<S, A>& policy = c.bad_policy ? bad : pi;
    CHECK(pbrl::sampled_policy_gradient(m, c.param, policy, c.size, rng, *traj, steps, v, g) == c.expected);
    CHECK(unchanged());
    if (c.param != nonsense) {
      CHECK(pbrl::sampled_vjp(problem, *model, m, pi, policy, c.size, rng, *traj, steps, gx) == c.expected);
      CHECK(unchanged());
    }
    CHECK(pbrl::sampled_penalty(PenaltyKind::value, problem, *model, m, c.param, pbrl::PolicyY{policy},
                                pbrl::PolicyHat{pi}, c.size, rng, *traj, steps, sp) == c.expected);
    CHECK(unchanged());
    CHECK(pbrl::sampled_penalty(PenaltyKind::bellman, problem, *model, m, c.param, pbrl::PolicyY{pi},
                                pbrl::PolicyHat{policy}, c.size, rng, *traj, steps, sp) == c.expected);
    CHECK(unchanged());
  }
  // A penalty kind out of range.
  CHECK(pbrl::sampled_penalty(static_cast<PenaltyKind>(2), problem, *model, m, Parameterization::softmax,
                              pbrl::PolicyY{pi}, pbrl::PolicyHat{pi}, sizes(5, 4), rng, *traj, steps,
                              sp) == Status::bad_setting);
  CHECK(unchanged());
  // A hook that produces NaN: numerical_failure, stream and count unchanged.
  ShapingAtZero<PoisonedShaping> poisoned(144);
  pbrl::SampledPenalty<PoisonedShaping> pp;
  CHECK(pbrl::sampled_penalty(PenaltyKind::value, poisoned.problem, poisoned.model, poisoned.mdp,
                              Parameterization::softmax, pbrl::PolicyY{pi}, pbrl::PolicyHat{pi}, sizes(5, 4), rng,
                              *traj, steps, pp) == Status::numerical_failure);
  CHECK(same_rng(rng, saved));
  CHECK(steps == 3);
}

// ---- the sampled solver -------------------------------------------------------------------------

namespace {
template <int S_, int A_>
struct SampledShaping {
  RandomModel<S_, A_> task;
  pbrl::RewardShaping<Real, S_, A_> problem;
  explicit SampledShaping(std::uint32_t seed, Real gamma) : task(seed, Real(0.7)) {
    REQUIRE(problem.init(solver_support::shaping_task_data<pbrl::RewardShaping<Real, S_, A_>>(task, gamma)) ==
            Status::ok);
  }
};

pbrl::PbrlSettings<Real> sampled_settings(PenaltyKind kind, std::uint32_t seed) {
  pbrl::PbrlSettings<Real> s;
  s.penalty_kind = kind;
  s.policy.parameterization = Parameterization::softmax;
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.oracle_policy.parameterization = Parameterization::softmax;
  s.inner_steps = 5;
  s.oracle_step = Real(0.5);
  s.step_x = Real(0.05);
  s.step_y = Real(0.25);
  s.lambda_start = s.lambda_final = Real(5);
  s.gradient = pbrl::GradientMode::sampled;
  s.sampling = sizes(5, 16);  // the paper's Stackelberg setting: H = 5, B = 16
  s.seed = seed;
  return s;
}

// The exact value gap V*(rho) - V^{pi_y}(rho) on M(x) and f(x, pi_y).
template <class Problem>
void exact_measures(const Problem& problem, const typename Problem::Params& x,
                    const Mat<Problem::kStates, Problem::kActions>& pi_y, Real& gap, Real& f) {
  constexpr int S_ = Problem::kStates, A_ = Problem::kActions;
  auto model = std::make_unique<typename Problem::Model>();
  pbrl::Mdp<Real, S_, A_> m;
  REQUIRE(problem.build(x, *model, m) == Status::ok);
  const auto opt = optimum(m);
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S_, pbrl::EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, S_, A_> e;
  REQUIRE(pbrl::evaluate(m, pi_y, *ws, e) == Status::ok);
  gap = opt.value.dot(m.rho()) - e.value_rho;
  typename Problem::Params gx;
  Mat<S_, A_> gpi;
  REQUIRE(problem.upper(pi_y, *model, *ws, e, f, gx, gpi) == Status::ok);
}
}  // namespace

TEST_CASE("sampled PBRL on reward shaping drives the penalty down, improves f and counts its steps") {
  constexpr int S2 = 6, A2 = 3;
  using Solver = pbrl::Pbrl<pbrl::RewardShaping<Real, S2, A2>>;
  auto solver = std::make_unique<Solver>();
  const int iterations = 150;
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    Real gap0(0), gap1(0), f0(0), f1(0);
    const int seeds = 3;
    for (int seed = 0; seed < seeds; ++seed) {
      auto inst = std::make_unique<SampledShaping<S2, A2>>(151 + seed, Real(0.8));
      const auto settings = sampled_settings(kind, 7 + seed);
      REQUIRE(solver->init(inst->problem, settings, Solver::Params::Zero(), Mat<S2, A2>::Zero()) == Status::ok);
      Mat<S2, A2> pi_y;
      solver->policy(pi_y);
      Real gap, f;
      exact_measures(inst->problem, solver->x(), pi_y, gap, f);
      gap0 += gap / seeds;
      f0 += f / seeds;
      Solver::Report report;
      REQUIRE(solver->run(iterations, &report) == Status::ok);
      const std::int64_t per_step = std::int64_t(settings.inner_steps + 2) * settings.sampling.batch *
                                    settings.sampling.horizon;
      CHECK(solver->environment_steps() == iterations * per_step);
      CHECK(report.environment_steps == iterations * per_step);
      CHECK(report.iteration == iterations - 1);
      check_report_finite(report);
      solver->policy(pi_y);
      exact_measures(inst->problem, solver->x(), pi_y, gap, f);
      gap1 += gap / seeds;
      f1 += f / seeds;
    }
    MESSAGE(doctest::String(kind == PenaltyKind::value ? "value" : "Bellman"), " penalty, sampled (H = 5, B = 16, T = 5), ",
            iterations, " iterations, mean over ", seeds, " seeds: exact gap V*(rho) - V^{pi_y}(rho) ", gap0, " -> ",
            gap1, ", f ", f0, " -> ", f1);
    CHECK(gap1 <= Real(0.3) * gap0);
    CHECK(f1 < f0 - Real(0.05) * std::abs(f0));
  }
}

TEST_CASE("sampled PBRL: deterministic per seed, all-or-nothing steps, settings checked") {
  constexpr int S2 = 6, A2 = 3;
  using Problem = pbrl::RewardShaping<Real, S2, A2>;
  using Solver = pbrl::Pbrl<Problem>;
  auto inst = std::make_unique<SampledShaping<S2, A2>>(161, Real(0.8));
  auto a = std::make_unique<Solver>(), b = std::make_unique<Solver>(), c = std::make_unique<Solver>();
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    auto settings = sampled_settings(kind, 11);
    settings.oracle_policy.parameterization = Parameterization::direct;  // the projected oracle too
    settings.oracle_policy.floor = Real(1e-2);
    REQUIRE(a->init(inst->problem, settings, Solver::Params::Zero(), Mat<S2, A2>::Zero()) == Status::ok);
    REQUIRE(b->init(inst->problem, settings, Solver::Params::Zero(), Mat<S2, A2>::Zero()) == Status::ok);
    settings.seed = 12;
    REQUIRE(c->init(inst->problem, settings, Solver::Params::Zero(), Mat<S2, A2>::Zero()) == Status::ok);
    REQUIRE(a->run(10) == Status::ok);
    REQUIRE(b->run(10) == Status::ok);
    REQUIRE(c->run(10) == Status::ok);
    CHECK(a->x() == b->x());
    CHECK(a->y() == b->y());
    CHECK(a->oracle_policy() == b->oracle_policy());
    CHECK(same_rng(a->rng(), b->rng()));
    CHECK(a->x() != c->x());
    CHECK(a->environment_steps() == c->environment_steps());
    // The stream advanced by (T + 1) * B * (2H + 1) draws per step (common random numbers).
    pbrl::Rng counted(11);
    for (long i = 0; i < 10L * (settings.inner_steps + 1) * 16 * 11; ++i) counted.next();
    CHECK(same_rng(a->rng(), counted));
    // The stream is the solver's state: restoring a saved copy reproduces the continuation.
    const pbrl::Rng saved = a->rng();
    auto copy = std::make_unique<Solver>(*a);
    REQUIRE(a->step() == Status::ok);
    copy->rng().reseed(999);
    REQUIRE(copy->step() == Status::ok);
    CHECK(a->x() != copy->x());
    *copy = *b;  // b is where a was before its step
    copy->rng() = saved;
    REQUIRE(copy->step() == Status::ok);
    CHECK(a->x() == copy->x());
  }

  // Exact mode counts no environment steps.
  auto settings = sampled_settings(PenaltyKind::value, 1);
  settings.gradient = pbrl::GradientMode::exact;
  REQUIRE(a->init(inst->problem, settings, Solver::Params::Zero(), Mat<S2, A2>::Zero()) == Status::ok);
  Solver::Report report;
  report.environment_steps = 99;
  REQUIRE(a->run(3, &report) == Status::ok);
  CHECK(report.environment_steps == 0);
  CHECK(a->environment_steps() == 0);

  // Settings sampled mode refuses.
  REQUIRE(a->init(inst->problem, sampled_settings(PenaltyKind::value, 1), Solver::Params::Zero(),
                  Mat<S2, A2>::Zero()) == Status::ok);
  REQUIRE(a->run(2) == Status::ok);
  const auto x_before = a->x();
  for (int which = 0; which < 5; ++which) {
    auto bad = sampled_settings(PenaltyKind::value, 1);
    if (which == 0) bad.oracle = pbrl::OracleKind::policy_mirror_descent;
    if (which == 1) bad.oracle = pbrl::OracleKind::soft_value_iteration;
    if (which == 2) bad.sampling.horizon = pbrl::kMaxHorizon + 1;
    if (which == 3) bad.sampling.batch = 0;
    if (which == 4) bad.gradient = static_cast<pbrl::GradientMode>(5);
    CAPTURE(which);
    CHECK(pbrl::validate(bad, A2) == Status::bad_setting);
    CHECK(a->init(inst->problem, bad, Solver::Params::Zero(), Mat<S2, A2>::Zero()) == Status::bad_setting);
    CHECK(a->x() == x_before);
    CHECK(a->environment_steps() == 2 * 7 * 16 * 5);
  }
  // A problem without the per-sample hook: init() refuses sampled mode, exact mode works.
  auto nohook = std::make_unique<NoHookMixture>();
  auto ns = std::make_unique<pbrl::Pbrl<NoHookMixture>>();
  CHECK(ns->init(*nohook, sampled_settings(PenaltyKind::value, 1), NoHookMixture::Params::Zero(), Mat<S, A>::Zero()) ==
        Status::bad_setting);
  auto exact_settings = sampled_settings(PenaltyKind::value, 1);
  exact_settings.gradient = pbrl::GradientMode::exact;
  CHECK(ns->init(*nohook, exact_settings, NoHookMixture::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);

  // A step that fails (the hook yields NaN) leaves the iterate, the stream and the count as they were.
  RandomModel<S, A> task(162);
  auto poisoned = std::make_unique<PoisonedShaping>();
  Shaping::Data data = task_data(task);
  REQUIRE(poisoned->init(data) == Status::ok);
  auto ps = std::make_unique<pbrl::Pbrl<PoisonedShaping>>();
  REQUIRE(ps->init(*poisoned, sampled_settings(PenaltyKind::bellman, 3), Shaping::Params::Zero(), Mat<S, A>::Zero()) ==
          Status::ok);
  const pbrl::Rng before = ps->rng();
  const Mat<S, A> oracle_before = ps->oracle_policy();
  pbrl::PbrlReport<Real> untouched;
  untouched.penalty = Real(-3);
  CHECK(ps->step(&untouched) == Status::numerical_failure);
  CHECK(same_rng(ps->rng(), before));
  CHECK(ps->environment_steps() == 0);
  CHECK(ps->iteration() == 0);
  CHECK(ps->oracle_policy() == oracle_before);
  CHECK(ps->x() == Shaping::Params::Zero());
  CHECK(untouched.penalty == Real(-3));
}

TEST_CASE("sampled PBRL with x-dependent transitions lowers the exact penalty") {
  using Solver = pbrl::Pbrl<Mixture>;
  auto problem = std::make_unique<Mixture>(171, Real(0.6));
  auto solver = std::make_unique<Solver>();
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    auto settings = sampled_settings(kind, 21);
    settings.step_x = Real(0.05);
    settings.step_y = Real(0.2);
    settings.lambda_start = settings.lambda_final = Real(2);
    REQUIRE(solver->init(*problem, settings, Mixture::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    Mat<S, A> pi_y;
    solver->policy(pi_y);
    Real gap0, f0, gap1, f1;
    exact_measures(*problem, solver->x(), pi_y, gap0, f0);
    REQUIRE(solver->run(150) == Status::ok);
    solver->policy(pi_y);
    exact_measures(*problem, solver->x(), pi_y, gap1, f1);
    MESSAGE(doctest::String(kind == PenaltyKind::value ? "value" : "Bellman"), " penalty, mixture problem, sampled: gap ", gap0,
            " -> ", gap1, ", f ", f0, " -> ", f1);
    // H = 5 truncates the oracle's and the penalty's returns (0.6^5 = 8%): the sampled iteration
    // settles near the optimum of the truncated problem, not at pi*(x).
    CHECK(gap1 <= Real(0.5) * gap0);
    CHECK(std::isfinite(f1));
  }
}

}  // namespace test_sampling
