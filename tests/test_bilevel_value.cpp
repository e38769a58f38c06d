// The bilevel answer (bilevel_value.hpp): the upper-level value against the lower level's exact
// regularized solution at x. The best response really is optimal (its soft-greedy improvement,
// computed here by hand, is ~0 and no random policy does better), the honest value equals the
// problem's upper value when y IS that best response and differs from it for another y, the
// zero-sum equilibrium has psi ~ 0 and each policy is the other's best response (soft value
// iteration on the induced MDPs, independent of the Newton-Shapley solver), "not converged" is an
// outcome within the iteration caps, and refused inputs leave every output unchanged.
#include "game_support.hpp"
#include "support.hpp"

#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/problems/rlhf.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include <climits>

namespace test_bilevel_value {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
using Settings = pbrl::BestResponseSettings<Real>;
using Value = pbrl::BestResponseValue<Real>;

// Accuracy of what the library computes to the precision's limit (values of order 1/(1-gamma)).
constexpr Real kExact = kDouble ? Real(1e-9) : Real(2e-3);
// A gap that counts as "really different" (random policies are far from optimal).
constexpr Real kDifferent = Real(1e-3);

// max_s (T V^pi - V^pi)(s), T the soft Bellman optimality operator, written out here (log-sum-exp
// against the reference) from pi's exact evaluation: what one soft-greedy step would gain.
template <int NS, int NA>
Real improvement(const pbrl::Mdp<Real, NS, NA>& m, const Mat<NS, NA>& pi) {
  auto ws = std::make_unique<WsT<NS>>();
  pbrl::Evaluation<Real, NS, NA> e;
  REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
  Real worst = -std::numeric_limits<Real>::infinity();
  const Real tau = m.tau();
  for (int s = 0; s < NS; ++s) {
    Real top = -std::numeric_limits<Real>::infinity();
    for (int a = 0; a < NA; ++a) top = std::max(top, e.q(s, a) + tau * m.regularizer.log_reference(s, a));
    Real sum(0);
    for (int a = 0; a < NA; ++a) sum += std::exp((e.q(s, a) + tau * m.regularizer.log_reference(s, a) - top) / tau);
    worst = std::max(worst, top + tau * std::log(sum) - e.value(s));
  }
  return worst;
}

template <int NS, int NA>
Real value_of(const pbrl::Mdp<Real, NS, NA>& m, const Mat<NS, NA>& pi) {
  auto ws = std::make_unique<WsT<NS>>();
  pbrl::Evaluation<Real, NS, NA> e;
  REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
  return e.value_rho;
}

template <int K>
pbrl::Vector<Real, K> random_in_box(pbrl::Rng& rng, Real bound) {
  pbrl::Vector<Real, K> x;
  for (int k = 0; k < K; ++k) x(k) = bound * (Real(2) * rng.uniform<Real>() - Real(1));
  return x;
}

// The value at the lower level's best response at x, converged. `truth`: what
// value_at_best_response takes between x and the workspace (RLHF's true model), if anything.
template <class Problem, class Workspace, class... Truth>
Value converged_value(const Problem& problem, const typename Problem::Params& x, Workspace& ws, const Truth&... truth) {
  Value out;
  REQUIRE(problem.value_at_best_response(x, truth..., ws, out) == Status::ok);
  CHECK(out.converged);
  return out;
}

bool same(const Value& a, const Value& b) {
  return a.value == b.value && a.lower_level_gap == b.lower_level_gap && a.iterations == b.iterations &&
         a.converged == b.converged;
}
const Value kSentinel{Real(42.5), Real(3.25), 7, true};

// A random Stackelberg game with its arrays in the object, and a follower reference drawn after them.
template <int NS, int NL, int NF>
struct StackelbergData : StackelbergArrays<Real, NS, NL, NF> {
  using Arrays = StackelbergArrays<Real, NS, NL, NF>;
  Real follower_reference[NS * NF];
  explicit StackelbergData(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    this->draw(rng);
    for (int s = 0; s < NS; ++s) pbrl::random_distribution(rng, follower_reference + s * NF, NF);
  }
  typename pbrl::Stackelberg<Real, NS, NL, NF>::Data data(Real gamma, Real tau_l, Real tau_f, RegularizerKind follower) const {
    typename pbrl::Stackelberg<Real, NS, NL, NF>::Data d = Arrays::data();
    d.discount = gamma;
    d.leader = {RegularizerKind::entropy, tau_l, nullptr};
    d.follower = {follower, tau_f, follower_reference};
    d.logit_bound = Real(3);
    return d;
  }
};

constexpr int S = 5, A = 3;
}  // namespace

TEST_CASE("regularized_best_response: pi* is optimal, certified, and warm-starts") {
  pbrl::Rng rng(401);
  const auto model = std::make_unique<RandomModel<S, A>>(402);
  for (RegularizerKind kind : {RegularizerKind::entropy, RegularizerKind::kl_reference}) {
    for (Real tau : {Real(0.3), Real(0.05)}) {
      const pbrl::Mdp<Real, S, A> m = model->mdp(Real(0.8), tau, kind);
      REQUIRE(pbrl::validate(m) == Status::ok);
      const Settings settings;
      auto opt = std::make_unique<pbrl::RegularizedOptimum<Real, S, A>>();
      Value out;
      REQUIRE(pbrl::regularized_best_response(m, settings, *opt, out) == Status::ok);
      CHECK(out.converged);
      CHECK(out.lower_level_gap >= Real(0));
      CHECK(out.lower_level_gap <= settings.tolerance);
      CHECK(out.iterations >= 1);
      CHECK(out.iterations <= settings.max_iterations);
      // The soft-greedy improvement, by hand: ~0 at the optimum, and the library's bound is it / (1 - gamma).
      const Real gain = improvement(m, opt->pi);
      CHECK(std::abs(gain) <= kExact);
      CHECK(out.lower_level_gap <= std::max(gain, Real(0)) / (Real(1) - m.discount) + kExact);
      // The value is V*(rho) of soft value iteration run to the precision's limit.
      const auto best = optimum(m);
      CHECK_CLOSE(out.value, m.rho().dot(best.value), kExact, std::abs(out.value));
      CHECK_CLOSE(out.value, value_of(m, opt->pi), kTight, std::abs(out.value));
      // No random policy does better; each one's certified bound is at least its true gap.
      for (int trial = 0; trial < 20; ++trial) {
        const Mat<S, A> pi = random_policy<S, A>(rng);
        const Real v = value_of(m, pi);
        CHECK(v < out.value);
        auto ws = std::make_unique<WsT<S>>();
        pbrl::Evaluation<Real, S, A> e;
        REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
        const Real bound = pbrl::optimality_gap_bound(m, e);
        CHECK(bound >= out.value - v - kExact);
        CHECK(bound > kDifferent);
      }
      // Warm start from the optimum: one or two sweeps reach the same answer.
      Value again;
      REQUIRE(pbrl::regularized_best_response(m, settings, *opt, again) == Status::ok);
      CHECK(again.iterations <= 2);
      CHECK(again.converged);
      CHECK_CLOSE(again.value, out.value, kTight, std::abs(out.value));
    }
  }
}

TEST_CASE("regularized_best_response: the sweep cap bounds the work; 'not converged' is an outcome") {
  const auto model = std::make_unique<RandomModel<S, A>>(403);
  const pbrl::Mdp<Real, S, A> m = model->mdp(Real(0.9), Real(0.1));
  Settings settings;
  settings.max_iterations = 1;  // the soft-greedy policy's gap shrinks about like gamma^(2k)
  auto opt = std::make_unique<pbrl::RegularizedOptimum<Real, S, A>>();
  Value out;
  REQUIRE(pbrl::regularized_best_response(m, settings, *opt, out) == Status::ok);
  CHECK(out.iterations == 1);
  CHECK_FALSE(out.converged);
  CHECK(out.lower_level_gap > settings.tolerance);
  // The certificate still bounds the true gap of the (poor) policy it returns.
  const auto best = optimum(m);
  CHECK(out.lower_level_gap >= m.rho().dot(best.value) - out.value - kExact);
}

TEST_CASE("Stackelberg: the leader's value at the follower's exact best response") {
  constexpr int NS = 4, NL = 3, NF = 2;
  using Game = pbrl::Stackelberg<Real, NS, NL, NF>;
  pbrl::Rng rng(410);
  const auto data = std::make_unique<StackelbergData<NS, NL, NF>>(411);
  for (RegularizerKind kind : {RegularizerKind::entropy, RegularizerKind::kl_reference}) {
    auto game = std::make_unique<Game>();
    REQUIRE(game->init(data->data(Real(0.8), Real(0.05), Real(0.3), kind)) == Status::ok);
    auto ws = std::make_unique<Game::BilevelValueWorkspace>();
    auto model = std::make_unique<Game::Model>();
    auto ews = std::make_unique<WsT<NS>>();
    auto check_opt = std::make_unique<Game::FollowerOptimum>();
    pbrl::Evaluation<Real, NS, NF> e;
    for (int instance = 0; instance < 3; ++instance) {
      const Game::Params x = random_in_box<Game::kParams>(rng, Real(2.5));
      const Value out = converged_value(*game, x, *ws);
      CHECK(out.lower_level_gap <= ws->settings.tolerance);
      const Mat<NS, NF> best = ws->optimum.pi;

      // pi*(x) is the follower's best response: the class's own gap ~ 0, no random policy better.
      Real gap = -1, v_best = 0;
      REQUIRE(game->follower_gap(x, best, *model, *ews, e, *check_opt, gap) == Status::ok);
      CHECK(std::abs(gap) <= kExact);
      REQUIRE(game->follower_value(x, best, *model, *ews, e, v_best) == Status::ok);
      pbrl::Mdp<Real, NS, NF> mdp;
      REQUIRE(game->build(x, *model, mdp) == Status::ok);
      CHECK(std::abs(improvement(mdp, best)) <= kExact);

      // The honest value is the leader's value when y IS the best response: leader_value, -f of
      // upper(), and the joint chain evaluated here independently.
      Real lv = 0;
      REQUIRE(game->leader_value(x, best, *model, *ews, e, lv) == Status::ok);
      CHECK_CLOSE(out.value, lv, kTight, std::abs(lv));
      Real f = 0;
      Game::Params gx;
      Mat<NS, NF> gpi;
      REQUIRE(game->build(x, *model, mdp) == Status::ok);
      REQUIRE(game->upper(best, *model, *ews, e, f, gx, gpi) == Status::ok);
      CHECK_CLOSE(out.value, -f, kTight, std::abs(f));
      Mat<NS, NL> pi_x;
      REQUIRE(game->leader_policy(x, pi_x) == Status::ok);
      auto joint = std::make_unique<pbrl::JointMatrix<Real, NS, NL, NF>>();
      pbrl::joint_policy(pi_x, best, *joint);
      Real shifted[NS * NL * NF];
      for (int s = 0; s < NS; ++s)
        for (int j = 0; j < NL * NF; ++j) shifted[s * NL * NF + j] = data->leader_reward[s * NL * NF + j];
      for (int s = 0; s < NS; ++s) {
        const Real h = Real(0.05) * pbrl::Regularizer<Real, NS, NL>{}.value(s, pi_x.row(s));
        for (int j = 0; j < NL * NF; ++j) shifted[s * NL * NF + j] -= h;
      }
      const pbrl::Mdp<Real, NS, NL * NF> chain{shifted, data->transition, data->initial, Real(0.8), {}};
      CHECK_CLOSE(out.value, value_of(chain, *joint), kTight, std::abs(out.value));

      // For another y the value with the current y is not the honest one.
      for (int trial = 0; trial < 5; ++trial) {
        const Mat<NS, NF> y = random_policy<NS, NF>(rng);
        Real vy = 0, vf = 0;
        REQUIRE(game->leader_value(x, y, *model, *ews, e, vy) == Status::ok);
        REQUIRE(game->follower_value(x, y, *model, *ews, e, vf) == Status::ok);
        CHECK(vf < v_best);
        CHECK(std::abs(vy - out.value) > kDifferent);
      }
    }
  }
}

TEST_CASE("reward shaping: the task's value at the learner's exact regularized optimum") {
  using Problem = pbrl::RewardShaping<Real, S, A>;
  pbrl::Rng rng(420);
  const auto task = std::make_unique<RandomModel<S, A>>(421);
  Problem::Data d;
  d.reward = task->reward;
  d.transition = task->transition;
  d.initial = task->initial;
  d.discount = Real(0.8);
  d.lower = {RegularizerKind::entropy, Real(0.3), nullptr};
  d.upper = {RegularizerKind::entropy, Real(0), nullptr};
  auto problem = std::make_unique<Problem>();
  REQUIRE(problem->init(d) == Status::ok);
  auto ws = std::make_unique<Problem::BilevelValueWorkspace>();
  auto model = std::make_unique<Problem::Model>();
  auto ews = std::make_unique<WsT<S>>();
  pbrl::Evaluation<Real, S, A> e;
  for (int instance = 0; instance < 3; ++instance) {
    const Problem::Params x = random_in_box<Problem::kParams>(rng, Real(1));
    const Value out = converged_value(*problem, x, *ws);
    const Mat<S, A> best = ws->optimum.pi;
    // pi*(x) is the optimum of M_tau(x) = {r + x, P, tau h}, shaped here by hand.
    Real shaped[S * A];
    for (int i = 0; i < S * A; ++i) shaped[i] = task->reward[i] + x(i);
    const pbrl::Mdp<Real, S, A> lower{shaped, task->transition, task->initial, Real(0.8), d.lower};
    CHECK((best - optimum(lower).pi).cwiseAbs().maxCoeff() <= kExact);
    CHECK(std::abs(improvement(lower, best)) <= kExact);
    // Honest value = -f(x, pi*(x)); with another y, -f(x, y) is something else.
    Real f = 0;
    Problem::Params gx;
    Mat<S, A> gpi;
    REQUIRE(problem->upper(best, *model, *ews, e, f, gx, gpi) == Status::ok);
    CHECK_CLOSE(out.value, -f, kTight, std::abs(f));
    for (int trial = 0; trial < 5; ++trial) {
      const Mat<S, A> y = random_policy<S, A>(rng);
      CHECK(value_of(lower, y) < value_of(lower, best));
      REQUIRE(problem->upper(y, *model, *ews, e, f, gx, gpi) == Status::ok);
      CHECK(std::abs(-f - out.value) > kDifferent);
    }
  }
}

TEST_CASE("RLHF: the true return of the learner's exact regularized optimum") {
  constexpr int L = 3, C = 8;
  using Problem = pbrl::RlhfProblem<Real, S, A, L, C>;
  pbrl::Rng rng(430);
  const auto inst = std::make_unique<RandomModel<S, A>>(431, Real(0.5));
  auto buffer = std::make_unique<pbrl::PreferenceBuffer<S, A, L, C>>();
  Problem::Data d;
  d.transition = inst->transition;
  d.initial = inst->initial;
  d.discount = Real(0.8);
  d.lower = {RegularizerKind::entropy, Real(0.1), nullptr};
  d.preferences = buffer.get();
  auto problem = std::make_unique<Problem>();
  REQUIRE(problem->init(d) == Status::ok);
  const pbrl::Mdp<Real, S, A> truth{inst->reward, inst->transition, inst->initial, Real(0.8), {}};
  auto ws = std::make_unique<Problem::BilevelValueWorkspace>();
  for (int instance = 0; instance < 3; ++instance) {
    const Problem::Params x = random_in_box<Problem::kParams>(rng, Real(1));
    const Value out = converged_value(*problem, x, *ws, truth);
    const Mat<S, A> best = ws->optimum.pi;
    const pbrl::Mdp<Real, S, A> lower{x.data(), inst->transition, inst->initial, Real(0.8), d.lower};
    CHECK((best - optimum(lower).pi).cwiseAbs().maxCoeff() <= kExact);
    CHECK_CLOSE(out.value, value_of(truth, best), kTight, std::abs(out.value));
    for (int trial = 0; trial < 5; ++trial) {
      const Mat<S, A> y = random_policy<S, A>(rng);
      CHECK(value_of(lower, y) < value_of(lower, best));
      CHECK(std::abs(value_of(truth, y) - out.value) > kDifferent);
    }
  }
}

TEST_CASE("zero-sum: the regularized NE is certified by psi, and each policy is the other's best response") {
  constexpr int NS = 4, A1 = 2, A2 = 3;
  using Game = GameT<NS, A1, A2>;
  const auto data = std::make_unique<GameData<NS, A1, A2>>(440);
  Real reference1[NS * A1], reference2[NS * A2];
  pbrl::Rng rng(441);
  for (int s = 0; s < NS; ++s) {
    pbrl::random_distribution(rng, reference1 + s * A1, A1);
    pbrl::random_distribution(rng, reference2 + s * A2, A2);
  }
  struct Case {
    Real gamma, tau;
    bool kl;
  };
  for (const Case c : {Case{Real(0.8), Real(0.3), false}, Case{Real(0.9), Real(0.1), false},
                       Case{Real(0.8), Real(0.2), true}}) {
    Game g = data->game(c.gamma, c.tau);
    if (c.kl) {
      g.regularizer1 = {RegularizerKind::kl_reference, c.tau, reference1};
      g.regularizer2 = {RegularizerKind::kl_reference, c.tau, reference2};
    }
    REQUIRE(pbrl::validate(g) == Status::ok);
    const Settings settings;
    auto ws = std::make_unique<pbrl::NashWorkspace<Real, NS, A1, A2>>();
    pbrl::NashResult<Real> res;
    REQUIRE(pbrl::regularized_nash_equilibrium(g, settings, *ws, res) == Status::ok);
    MESSAGE("gamma ", c.gamma, " tau ", c.tau, doctest::String(c.kl ? " KL" : " entropy"), ": psi ", res.nikaido_isoda, " +- ",
            res.nikaido_isoda_error, ", ", res.sweeps, " sweeps, ", res.inner_iterations, " Newton steps");
    CHECK(res.converged);
    CHECK(res.nikaido_isoda + res.nikaido_isoda_error <= settings.tolerance);
    CHECK(res.nikaido_isoda >= -res.nikaido_isoda_error - kTight);
    CHECK(res.inner_iterations <= res.sweeps * NS * settings.max_inner_iterations);

    // Each policy is the other's best response: soft value iteration on the induced MDPs.
    auto m1 = std::make_unique<pbrl::InducedModel<Real, NS, A1>>();
    auto m2 = std::make_unique<pbrl::InducedModel<Real, NS, A2>>();
    pbrl::Mdp<Real, NS, A1> mdp1;
    pbrl::Mdp<Real, NS, A2> mdp2;
    REQUIRE(pbrl::player1_mdp(g, ws->pi2, *m1, mdp1) == Status::ok);
    REQUIRE(pbrl::player2_mdp(g, ws->pi1, *m2, mdp2) == Status::ok);
    CHECK((optimum(mdp1).pi - ws->pi1).cwiseAbs().maxCoeff() <= kExact);
    CHECK((optimum(mdp2).pi - ws->pi2).cwiseAbs().maxCoeff() <= kExact);
    // psi to the precision's limit, and the game's value at the NE is the Shapley value.
    auto bws = std::make_unique<pbrl::BestResponseWorkspace<Real, NS, A1, A2>>();
    Real psi = -1;
    REQUIRE(pbrl::nikaido_isoda_exact(g, ws->pi1, ws->pi2, 20000, Real(0), *bws, psi) == Status::ok);
    CHECK(std::abs(psi) <= kExact);
    CHECK(std::abs(psi - res.nikaido_isoda) <= res.nikaido_isoda_error + kTight);
    CHECK((joint_value(g, ws->pi1, ws->pi2) - ws->value).cwiseAbs().maxCoeff() <= kExact);
    // A pair off the equilibrium has a clearly positive psi (the certificate discriminates).
    const Mat<NS, A1> off1 = random_policy<NS, A1>(rng);
    REQUIRE(pbrl::nikaido_isoda_exact(g, off1, ws->pi2, 20000, Real(0), *bws, psi) == Status::ok);
    CHECK(psi > kDifferent);

    // Warm-started from the equilibrium: a sweep or two, about a Newton step per state.
    pbrl::NashResult<Real> again;
    const Mat<NS, A1> pi1 = ws->pi1;
    REQUIRE(pbrl::regularized_nash_equilibrium(g, settings, *ws, again) == Status::ok);
    CHECK(again.converged);
    CHECK(again.sweeps <= 2);
    CHECK(again.inner_iterations <= again.sweeps * NS * 2);
    CHECK((ws->pi1 - pi1).cwiseAbs().maxCoeff() <= kExact);
  }
}

TEST_CASE("zero-sum: the caps bound the work; 'not converged' is an outcome") {
  constexpr int NS = 4, A1 = 2, A2 = 3;
  const auto data = std::make_unique<GameData<NS, A1, A2>>(450);
  const GameT<NS, A1, A2> g = data->game(Real(0.9), Real(0.1));
  Settings settings;
  settings.max_iterations = 3;
  settings.max_inner_iterations = 1;
  auto ws = std::make_unique<pbrl::NashWorkspace<Real, NS, A1, A2>>();
  pbrl::NashResult<Real> res;
  REQUIRE(pbrl::regularized_nash_equilibrium(g, settings, *ws, res) == Status::ok);
  CHECK(res.sweeps == 3);
  CHECK(res.inner_iterations <= 3 * NS);
  CHECK_FALSE(res.converged);
  CHECK(res.nikaido_isoda > settings.tolerance);
  // The certificate is honest about the poor pair it returns.
  auto bws = std::make_unique<pbrl::BestResponseWorkspace<Real, NS, A1, A2>>();
  Real psi = -1;
  REQUIRE(pbrl::nikaido_isoda_exact(g, ws->pi1, ws->pi2, 20000, Real(0), *bws, psi) == Status::ok);
  CHECK(std::abs(psi - res.nikaido_isoda) <= res.nikaido_isoda_error + kTight);
}

TEST_CASE("incentive design: the designer's reward at the exact regularized NE") {
  constexpr int NS = 4, A1 = 2, A2 = 3;
  using Problem = pbrl::IncentiveDesign<Real, NS, A1, A2>;
  pbrl::Rng rng(460);
  const auto data = std::make_unique<GameData<NS, A1, A2>>(461);
  auto problem = std::make_unique<Problem>();
  REQUIRE(problem->init(data->incentive(Real(0.8), Real(0.2))) == Status::ok);
  auto ws = std::make_unique<Problem::BilevelValueWorkspace>();
  auto model = std::make_unique<Problem::Model>();
  auto ews = std::make_unique<WsT<NS>>();
  auto bws = std::make_unique<pbrl::BestResponseWorkspace<Real, NS, A1, A2>>();
  pbrl::Evaluation<Real, NS, A1 * A2> e;
  for (int instance = 0; instance < 3; ++instance) {
    const Problem::Params x = random_in_box<Problem::kParams>(rng, Real(4));
    const Value out = converged_value(*problem, x, *ws);
    CHECK(out.lower_level_gap <= ws->settings.tolerance);
    CHECK(out.iterations == ws->equilibrium.sweeps);
    // The pair is the NE of M(x): psi to the precision's limit ~ 0.
    GameT<NS, A1, A2> g;
    REQUIRE(problem->build(x, *model, g) == Status::ok);
    Real psi = -1;
    REQUIRE(pbrl::nikaido_isoda_exact(g, ws->nash.pi1, ws->nash.pi2, 20000, Real(0), *bws, psi) == Status::ok);
    CHECK(std::abs(psi) <= kExact);
    // Honest value = -f at the NE; at other policies -f is something else.
    Real f = 0;
    Problem::Params gx;
    Mat<NS, A1> g1;
    Mat<NS, A2> g2;
    REQUIRE(problem->upper(ws->nash.pi1, ws->nash.pi2, *model, *ews, e, f, gx, g1, g2) == Status::ok);
    CHECK_CLOSE(out.value, -f, kTight, std::abs(f));
    for (int trial = 0; trial < 5; ++trial) {
      REQUIRE(problem->upper(random_policy<NS, A1>(rng), random_policy<NS, A2>(rng), *model, *ews, e, f, gx, g1,
                             g2) == Status::ok);
      CHECK(std::abs(-f - out.value) > kDifferent);
    }
  }
}

TEST_CASE("bilevel value: refused inputs leave the outputs unchanged") {
  const auto model = std::make_unique<RandomModel<S, A>>(470);
  const pbrl::Mdp<Real, S, A> m = model->mdp(Real(0.8), Real(0.3));
  auto opt = std::make_unique<pbrl::RegularizedOptimum<Real, S, A>>();
  opt->value.setConstant(Real(0.5));
  Value out = kSentinel;

  // Settings.
  Settings bad;
  bad.max_iterations = 0;
  CHECK(pbrl::regularized_best_response(m, bad, *opt, out) == Status::bad_setting);
  bad.max_iterations = std::int64_t(INT_MAX) + 1;
  CHECK(pbrl::regularized_best_response(m, bad, *opt, out) == Status::bad_setting);
  bad = Settings{};
  bad.max_inner_iterations = 0;
  CHECK(pbrl::regularized_best_response(m, bad, *opt, out) == Status::bad_setting);
  bad = Settings{};
  bad.tolerance = std::numeric_limits<Real>::quiet_NaN();
  CHECK(pbrl::regularized_best_response(m, bad, *opt, out) == Status::bad_setting);
  bad.tolerance = Real(-1);
  CHECK(pbrl::regularized_best_response(m, bad, *opt, out) == Status::bad_setting);
  // The MDP's cheap settings.
  pbrl::Mdp<Real, S, A> broken = m;
  broken.reward = nullptr;
  CHECK(pbrl::regularized_best_response(broken, Settings{}, *opt, out) == Status::null_pointer);
  broken = m;
  broken.discount = Real(1);
  CHECK(pbrl::regularized_best_response(broken, Settings{}, *opt, out) == Status::bad_discount);
  CHECK(same(out, kSentinel));
  CHECK(opt->value == Vec<S>::Constant(Real(0.5)));
  // A non-finite warm start.
  opt->value(2) = std::numeric_limits<Real>::infinity();
  CHECK(pbrl::regularized_best_response(m, Settings{}, *opt, out) == Status::not_finite);
  CHECK(same(out, kSentinel));

  // Stackelberg.
  {
    constexpr int NS = 4, NL = 3, NF = 2;
    using Game = pbrl::Stackelberg<Real, NS, NL, NF>;
    auto game = std::make_unique<Game>();
    auto ws = std::make_unique<Game::BilevelValueWorkspace>();
    CHECK(game->value_at_best_response(Game::Params::Zero(), *ws, out) == Status::not_initialized);
    const auto data = std::make_unique<StackelbergData<NS, NL, NF>>(471);
    REQUIRE(game->init(data->data(Real(0.8), Real(0), Real(0.3), RegularizerKind::entropy)) == Status::ok);
    ws->optimum.value.setConstant(Real(0.25));
    Game::Params outside = Game::Params::Zero();
    outside(2) = Real(3.5);
    Game::Params nan = Game::Params::Zero();
    nan(1) = std::numeric_limits<Real>::quiet_NaN();
    CHECK(game->value_at_best_response(outside, *ws, out) == Status::out_of_bounds);
    CHECK(game->value_at_best_response(nan, *ws, out) == Status::not_finite);
    ws->settings.max_iterations = 0;
    CHECK(game->value_at_best_response(Game::Params::Zero(), *ws, out) == Status::bad_setting);
    CHECK(ws->optimum.value == Vec<NS>::Constant(Real(0.25)));
    ws->settings = Settings{};
    ws->optimum.value(0) = std::numeric_limits<Real>::quiet_NaN();
    CHECK(game->value_at_best_response(Game::Params::Zero(), *ws, out) == Status::not_finite);
    CHECK(same(out, kSentinel));
  }

  // Reward shaping and RLHF.
  {
    using Problem = pbrl::RewardShaping<Real, S, A>;
    Problem::Data d;
    d.reward = model->reward;
    d.transition = model->transition;
    d.initial = model->initial;
    d.lower.tau = Real(0.3);
    auto problem = std::make_unique<Problem>();
    auto ws = std::make_unique<Problem::BilevelValueWorkspace>();
    CHECK(problem->value_at_best_response(Problem::Params::Zero(), *ws, out) == Status::not_initialized);
    REQUIRE(problem->init(d) == Status::ok);
    ws->optimum.value.setConstant(Real(0.75));
    CHECK(problem->value_at_best_response(Problem::Params::Constant(Real(2)), *ws, out) == Status::out_of_bounds);
    ws->settings.tolerance = Real(-1);
    CHECK(problem->value_at_best_response(Problem::Params::Zero(), *ws, out) == Status::bad_setting);
    CHECK(ws->optimum.value == Vec<S>::Constant(Real(0.75)));
    CHECK(same(out, kSentinel));
  }
  {
    constexpr int L = 3, C = 8;
    using Problem = pbrl::RlhfProblem<Real, S, A, L, C>;
    auto buffer = std::make_unique<pbrl::PreferenceBuffer<S, A, L, C>>();
    Problem::Data d;
    d.transition = model->transition;
    d.initial = model->initial;
    d.lower.tau = Real(0.1);
    d.preferences = buffer.get();
    auto problem = std::make_unique<Problem>();
    REQUIRE(problem->init(d) == Status::ok);
    auto ws = std::make_unique<Problem::BilevelValueWorkspace>();
    ws->optimum.value.setConstant(Real(0.125));
    pbrl::Mdp<Real, S, A> truth{model->reward, model->transition, model->initial, Real(0.8), {}};
    CHECK(problem->value_at_best_response(Problem::Params::Constant(Real(-3)), truth, *ws, out) ==
          Status::out_of_bounds);
    pbrl::Mdp<Real, S, A> no_transition = truth;
    no_transition.transition = nullptr;
    CHECK(problem->value_at_best_response(Problem::Params::Zero(), no_transition, *ws, out) == Status::null_pointer);
    pbrl::Mdp<Real, S, A> bad_discount = truth;
    bad_discount.discount = Real(-0.5);
    CHECK(problem->value_at_best_response(Problem::Params::Zero(), bad_discount, *ws, out) == Status::bad_discount);
    CHECK(ws->optimum.value == Vec<S>::Constant(Real(0.125)));
    CHECK(same(out, kSentinel));
  }

  // The zero-sum solver and incentive design.
  {
    constexpr int NS = 4, A1 = 2, A2 = 3;
    using Problem = pbrl::IncentiveDesign<Real, NS, A1, A2>;
    const auto data = std::make_unique<GameData<NS, A1, A2>>(472);
    auto ws = std::make_unique<pbrl::NashWorkspace<Real, NS, A1, A2>>();
    ws->value.setConstant(Real(1.5));
    const Mat<NS, A1> pi1 = ws->pi1;
    const Mat<NS, A2> pi2 = ws->pi2;
    const pbrl::NashResult<Real> sentinel{Real(1), Real(2), Real(3), 4, 5, true};
    pbrl::NashResult<Real> res = sentinel;
    auto unchanged = [&]() {
      CHECK(ws->value == Vec<NS>::Constant(Real(1.5)));
      CHECK(ws->pi1 == pi1);
      CHECK(ws->pi2 == pi2);
      CHECK(res.nikaido_isoda == sentinel.nikaido_isoda);
      CHECK(res.nikaido_isoda_error == sentinel.nikaido_isoda_error);
      CHECK(res.change == sentinel.change);
      CHECK(res.sweeps == sentinel.sweeps);
      CHECK(res.inner_iterations == sentinel.inner_iterations);
      CHECK(res.converged == sentinel.converged);
    };
    // tau = 0: no unique equilibrium; taus that differ; a missing array; bad settings.
    CHECK(pbrl::regularized_nash_equilibrium(data->game(Real(0.8), Real(0)), Settings{}, *ws, res) ==
          Status::bad_regularization);
    GameT<NS, A1, A2> g = data->game(Real(0.8), Real(0.2));
    g.regularizer2.tau = Real(0.3);
    CHECK(pbrl::regularized_nash_equilibrium(g, Settings{}, *ws, res) == Status::bad_regularization);
    g = data->game(Real(0.8), Real(0.2));
    g.transition = nullptr;
    CHECK(pbrl::regularized_nash_equilibrium(g, Settings{}, *ws, res) == Status::null_pointer);
    g = data->game(Real(0.8), Real(0.2));
    Settings bad_inner;
    bad_inner.max_inner_iterations = -1;
    CHECK(pbrl::regularized_nash_equilibrium(g, bad_inner, *ws, res) == Status::bad_setting);
    unchanged();
    // A warm start that is not a pair of policies.
    ws->pi1(0, 0) = Real(0.9);
    CHECK(pbrl::regularized_nash_equilibrium(g, Settings{}, *ws, res) == Status::bad_policy);
    ws->pi1 = pi1;
    unchanged();

    auto problem = std::make_unique<Problem>();
    auto pws = std::make_unique<Problem::BilevelValueWorkspace>();
    CHECK(problem->value_at_best_response(Problem::Params::Zero(), *pws, out) == Status::not_initialized);
    REQUIRE(problem->init(data->incentive(Real(0.8), Real(0.2))) == Status::ok);
    pws->nash.value.setConstant(Real(2.5));
    CHECK(problem->value_at_best_response(Problem::Params::Constant(Real(6)), *pws, out) == Status::out_of_bounds);
    pws->settings.max_iterations = 0;
    CHECK(problem->value_at_best_response(Problem::Params::Zero(), *pws, out) == Status::bad_setting);
    pws->settings = Settings{};
    pws->nash.value(1) = std::numeric_limits<Real>::quiet_NaN();
    CHECK(problem->value_at_best_response(Problem::Params::Zero(), *pws, out) == Status::not_finite);
    CHECK(pws->nash.value(0) == Real(2.5));
    CHECK(same(out, kSentinel));
  }
}

}  // namespace test_bilevel_value
