// Sampled mode for zero-sum games: game rollouts follow rho, pi1, pi2 and P; the Monte-Carlo
// policy gradients of both players, the vector-Jacobian product over joint actions, the
// Nikaido-Isoda penalty and the meta-gradient's mixed derivative agree with their exact,
// model-based counterparts within their sampling error (statistics as in test_sampling.cpp);
// the estimators validate their inputs; sampled PbrlZeroSum and MetaGradient count their
// environment steps, are deterministic per seed, change nothing on error, and learn.
#include "game_support.hpp"
#include "fd_support.hpp"
#include "sampling_support.hpp"

#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/penalty/nikaido_isoda.hpp"
#include "pbrl/sampling/detail/game_estimators.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"
#include "pbrl/problems/incentive_design.hpp"

namespace test_game_sampling {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 4, A1 = 2, A2 = 3, K = 3, J = A1 * A2;
constexpr Real kGameGamma = Real(0.6);
constexpr int kLong = 48;  // 0.6^48 = 2.2e-11: no visible truncation bias
using Game = GameT<S, A1, A2>;
using M1 = Mat<S, A1>;
using M2 = Mat<S, A2>;
using Joint = JointT<S, A1, A2>;
using Traj = pbrl::GameTrajectory<Real, 64>;
using Incentive = pbrl::IncentiveDesign<Real, S, A1, A2>;
using Mixture = MixtureGame<S, A1, A2, K>;

template <int A>
Mat<S, A> softmax_policy(pbrl::Rng& rng, Real scale) {
  Mat<S, A> pi;
  pbrl::policy_from_parameters<Real, S, A>(Parameterization::softmax, random_logits<S, A>(rng, scale), pi);
  return pi;
}

// Value, occupancy of (pi1, pi2) through player 1's induced MDP.
struct JointEvaluation {
  pbrl::Evaluation<Real, S, A1> eval;
  pbrl::Mdp<Real, S, A1> mdp1;
  std::unique_ptr<pbrl::InducedModel<Real, S, A1>> storage = std::make_unique<pbrl::InducedModel<Real, S, A1>>();
  std::unique_ptr<WsT<S>> ws = std::make_unique<WsT<S>>();
  JointEvaluation(const Game& g, const M1& pi1, const M2& pi2) {
    REQUIRE(pbrl::player1_mdp(g, pi2, *storage, mdp1) == Status::ok);
    REQUIRE(pbrl::evaluate(mdp1, pi1, *ws, eval) == Status::ok);
  }
};

Real game_bias(const JointEvaluation& e, Real pi_min, Real scale) {
  return bias_bound(kGameGamma, kLong, e.eval.value.cwiseAbs().maxCoeff(), pi_min, scale);
}

Mixture::Params mixture_x(pbrl::Rng& rng) { return uniform_vector<Mixture::Params>(rng); }

Incentive::Params incentive_x(pbrl::Rng& rng) {
  Incentive::Params x;
  for (int i = 0; i < Incentive::kParams; ++i) x(i) = Real(4) * rng.uniform<Real>() - Real(2);
  return x;
}

}  // namespace

TEST_CASE("game rollouts follow rho, pi1, pi2 and P; steps, stream and returns are exact") {
  const auto data = std::make_unique<GameData<S, A1, A2>>(201);
  const Game g = data->game(Real(0.9), Real(0.2));
  REQUIRE(pbrl::validate(g) == Status::ok);
  pbrl::Rng prng(202);
  M1 pi1 = random_policy<S, A1>(prng);
  M2 pi2 = random_policy<S, A2>(prng);
  pi2(1, 2) = Real(0);  // never drawn
  pi2.row(1) /= pi2.row(1).sum();

  // One step from rho: (s0, a1, a2, s1) has probability rho(s0) pi1 pi2 P(s1|s0,a1,a2).
  const int n = kDouble ? 40000 : 10000;
  std::vector<int> count(S * J * S, 0);
  pbrl::Rng rng(203);
  std::int64_t steps = 0;
  auto traj = std::make_unique<pbrl::GameTrajectory<Real, 8>>();
  for (int i = 0; i < n; ++i) {
    pbrl::Rng expected = rng;
    for (int k = 0; k < 3 * 1 + 1; ++k) expected.next();
    REQUIRE(pbrl::game_rollout(g, pi1, pi2, 1, rng, *traj, steps) == Status::ok);
    REQUIRE(same_rng(rng, expected));  // exactly 3H + 1 uniforms
    ++count[((traj->state[0] * A1 + traj->action1[0]) * A2 + traj->action2[0]) * S + traj->state[1]];
  }
  CHECK(steps == n);
  for (int s = 0; s < S; ++s)
    for (int a1 = 0; a1 < A1; ++a1)
      for (int a2 = 0; a2 < A2; ++a2)
        for (int t = 0; t < S; ++t) {
          const int row = (s * A1 + a1) * A2 + a2;
          const Real p = g.rho()(s) * pi1(s, a1) * pi2(s, a2) * g.P()(row, t);
          const Real freq = Real(count[row * S + t]) / Real(n);
          CAPTURE(row);
          CHECK(std::abs(freq - p) <= Real(4) * std::sqrt(p * (1 - p) / n) + Real(1e-6));
          if (p == Real(0)) CHECK(count[row * S + t] == 0);
        }

  // Returns: V_hat_t = r - tau h1 + tau h2 + gamma V_hat_{t+1}, by hand.
  REQUIRE(pbrl::game_rollout(g, pi1, pi2, 8, rng, *traj, steps) == Status::ok);
  Real v(0);
  CHECK(traj->value[8] == Real(0));
  for (int t = 7; t >= 0; --t) {
    const int s = traj->state[t];
    v = g.r()(s, traj->action1[t] * A2 + traj->action2[t]) + g.discount * v -
        g.tau() * g.regularizer1.value(s, pi1.row(s)) + g.tau() * g.regularizer2.value(s, pi2.row(s));
    CHECK(traj->value[t] == doctest::Approx(v).epsilon(kTight));
  }

  // Errors change nothing.
  const auto saved = *traj;
  const pbrl::Rng saved_rng = rng;
  const std::int64_t saved_steps = steps;
  M1 bad = pi1;
  bad(0, 0) += Real(0.2);
  CHECK(pbrl::game_rollout(g, bad, pi2, 4, rng, *traj, steps) == Status::bad_policy);
  CHECK(pbrl::game_rollout(g, pi1, pi2, 0, rng, *traj, steps) == Status::bad_setting);
  CHECK(pbrl::game_rollout(g, pi1, pi2, 9, rng, *traj, steps) == Status::bad_setting);
  Game broken = g;
  broken.regularizer2.tau = Real(0.3);
  CHECK(pbrl::game_rollout(broken, pi1, pi2, 4, rng, *traj, steps) == Status::bad_regularization);
  CHECK(same_bytes(*traj, saved));
  CHECK(same_rng(rng, saved_rng));
  CHECK(steps == saved_steps);
}

TEST_CASE("sampled game policy gradients of both players agree with the exact ones") {
  const auto data = std::make_unique<GameData<S, A1, A2>>(211);
  constexpr int N = S * A1 + S * A2 + 1;
  const int n = 250 * kScale, batch = 4;
  for (auto param : {Parameterization::softmax, Parameterization::direct}) {
    CAPTURE(static_cast<int>(param));
    const Game g = data->game(kGameGamma, Real(0.3));
    pbrl::Rng prng(212);
    const M1 pi1 = param == Parameterization::softmax ? softmax_policy<A1>(prng, Real(1.5)) : random_policy<S, A1>(prng);
    const M2 pi2 = param == Parameterization::softmax ? softmax_policy<A2>(prng, Real(1.5)) : random_policy<S, A2>(prng);
    const JointEvaluation e(g, pi1, pi2);
    M1 g1 = M1::Zero(), y1;
    M2 g2 = M2::Zero(), y2;
    pbrl::add_game_policy_gradients(g, {pi1, pi2, e.eval.value, e.eval.occupancy}, Real(1), &g1, Real(1), &g2);
    pbrl::chain_policy_gradient<Real, S, A1>(param, pi1, g1, y1);
    pbrl::chain_policy_gradient<Real, S, A2>(param, pi2, g2, y2);
    Real exact[N];
    flatten<S * A1>(y1, exact);
    flatten<S * A2>(y2, exact + S * A1);
    exact[N - 1] = e.eval.value_rho;

    auto traj = std::make_unique<Traj>();
    pbrl::Rng rng(213);
    std::int64_t steps = 0;
    auto estimate = [&](int b, Real* out) {
      M1 s1;
      M2 s2;
      Real v;
      REQUIRE(pbrl::sampled_game_policy_gradient(g, param, pi1, pi2, sizes(kLong, b), rng, *traj, steps, v, &s1,
                                                 &s2) == Status::ok);
      flatten<S * A1>(s1, out);
      flatten<S * A2>(s2, out + S * A1);
      out[N - 1] = v;
    };
    const Stats<N> st = replicate<N>(estimate, n, batch, exact);
    CHECK(steps == std::int64_t(n) * batch * kLong);
    const Real scale = std::max(y1.cwiseAbs().maxCoeff(), y2.cwiseAbs().maxCoeff());
    check_within_error(param == Parameterization::softmax ? "game policy gradients (softmax)"
                                                          : "game policy gradients (direct)",
                       st, exact, game_bias(e, std::min(pi1.minCoeff(), pi2.minCoeff()), scale));
  }
}

// The batches keep each policy's regularizer terms per state (detail::GameRegularizerCache): the
// cached values and factors are what the regularizer's own formulas give, to the bit, and a whole
// batch's estimate equals the per-visit formulas written out here; a batch object reused for
// another pair (a new batch, or batch 2 of the penalty) refills its cache.
TEST_CASE("game batches: the regularizer cache is the direct formula, refilled for every batch") {
  const auto data = std::make_unique<GameData<S, A1, A2>>(261);
  Real ref1[S * A1], ref2[S * A2];
  pbrl::Rng prng(262);
  pbrl::random_distribution(prng, ref1, S * A1);  // positive; rows normalized below
  pbrl::random_distribution(prng, ref2, S * A2);
  for (int s = 0; s < S; ++s) {
    Real t1(0), t2(0);
    for (int a = 0; a < A1; ++a) t1 += ref1[s * A1 + a];
    for (int a = 0; a < A2; ++a) t2 += ref2[s * A2 + a];
    for (int a = 0; a < A1; ++a) ref1[s * A1 + a] /= t1;
    for (int a = 0; a < A2; ++a) ref2[s * A2 + a] /= t2;
  }
  for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference})
    for (auto param : {Parameterization::softmax, Parameterization::direct}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(static_cast<int>(param));
      Game g = data->game(kGameGamma, Real(0.3));
      g.regularizer1 = {kind, Real(0.3), ref1};
      g.regularizer2 = {kind, Real(0.3), ref2};
      REQUIRE(pbrl::validate(g) == Status::ok);
      M1 pi1 = random_policy<S, A1>(prng), pi1_hat = random_policy<S, A1>(prng);
      M2 pi2 = random_policy<S, A2>(prng), pi2_hat = random_policy<S, A2>(prng);
      pi1(2, 1) = Real(0);  // a zero entry: no term there (softmax), the floored derivative (direct)
      pi1.row(2) /= pi1.row(2).sum();

      // The cache against the formulas, entry by entry.
      auto cache = std::make_unique<pbrl::detail::GameRegularizerCache<Real, S, A1, A2>>();
      cache->fill(g, param, pi1, pi2, true, true);
      for (int s = 0; s < S; ++s) {
        CHECK(cache->player1.values.h[s] == g.regularizer1.value(s, pi1.row(s)));
        CHECK(cache->player2.values.h[s] == g.regularizer2.value(s, pi2.row(s)));
        CHECK(cache->player1.values.tau_h(g.regularizer1, s) == pbrl::detail::game_h1(g, pi1, s));
        CHECK(cache->player2.values.tau_h(g.regularizer2, s) == pbrl::detail::game_h2(g, pi2, s));
        M1 direct1 = M1::Constant(Real(0.5)), cached1 = direct1;
        M2 direct2 = M2::Constant(Real(0.5)), cached2 = direct2;
        regularizer_term_per_visit(g.regularizer1, param, pi1, s, Real(0.7), direct1);
        cache->player1.factors.add(g.regularizer1, param, pi1, s, Real(0.7), cached1);
        regularizer_term_per_visit(g.regularizer2, param, pi2, s, Real(-0.4), direct2);
        cache->player2.factors.add(g.regularizer2, param, pi2, s, Real(-0.4), cached2);
        CHECK(same_bytes(direct1, cached1));
        CHECK(same_bytes(direct2, cached2));
      }

      // Whole batches against the per-visit formulas (rollouts by game_rollout, whose returns take
      // h from the regularizer directly), one Batch object for two pairs, in uneven chunks.
      const pbrl::SamplingSettings set = sizes(4, 6);
      auto traj = std::make_unique<Traj>();
      auto by_hand = [&](const M1& p1, const M2& p2, pbrl::Rng rng, M1& h1, M2& h2, Real& value) {
        h1.setZero();
        h2.setZero();
        value = Real(0);
        const Real w = Real(1) / Real(set.batch);
        std::int64_t steps = 0;
        for (int b = 0; b < set.batch; ++b) {
          REQUIRE(pbrl::game_rollout(g, p1, p2, set.horizon, rng, *traj, steps) == Status::ok);
          value += traj->value[0];
          Real d = w;
          for (int t = 0; t < set.horizon; ++t) {
            const int s = traj->state[t];
            const Real q = g.r()(s, traj->action1[t] * A2 + traj->action2[t]) + g.discount * traj->value[t + 1];
            pbrl::detail::add_action_term(param, p1, s, traj->action1[t], d * (q + pbrl::detail::game_h2(g, p2, s)), h1);
            regularizer_term_per_visit(g.regularizer1, param, p1, s, d, h1);
            pbrl::detail::add_action_term(param, p2, s, traj->action2[t], d * (q - pbrl::detail::game_h1(g, p1, s)), h2);
            regularizer_term_per_visit(g.regularizer2, param, p2, s, -d, h2);
            d *= g.discount;
          }
        }
        value *= Real(1) / Real(set.batch);
      };
      auto batch = std::make_unique<pbrl::detail::GamePolicyGradientBatch<Real, S, A1, A2, 64>>();
      for (int pair = 0; pair < 2; ++pair) {
        const M1& p1 = pair == 0 ? pi1 : pi1_hat;
        const M2& p2 = pair == 0 ? pi2 : pi2_hat;
        pbrl::Rng rng(263 + pair);
        M1 e1, s1;
        M2 e2, s2;
        Real ev, sv;
        by_hand(p1, p2, rng, e1, e2, ev);
        REQUIRE(batch->check(g, param, p1, p2, set) == Status::ok);
        batch->start(&s1, &s2);
        for (int chunk : {1, 3, 2}) batch->rollouts(g, param, p1, p2, set, chunk, rng, *traj, &s1, &s2);
        REQUIRE(batch->finish(set, &s1, &s2, sv) == Status::ok);
        CHECK(same_bytes(e1, s1));
        CHECK(same_bytes(e2, s2));
        CHECK(sv == ev);
      }

      // The penalty's two batches (pi-hat1, pi2) and (pi1, pi-hat2), each from its own cache: the
      // policy parts by hand, with common random numbers (both batches from the same stream).
      Incentive problem;
      auto inc = data->incentive(kGameGamma, Real(0.3));
      inc.regularizer1 = g.regularizer1;
      inc.regularizer2 = g.regularizer2;
      REQUIRE(problem.init(inc) == Status::ok);
      auto model = std::make_unique<Incentive::Model>();
      Game gx;
      const Incentive::Params x = incentive_x(prng);
      REQUIRE(problem.build(x, *model, gx) == Status::ok);
      g.reward = gx.reward;  // the hand-written sums run on M(x)
      auto out = std::make_unique<pbrl::SampledNikaidoIsoda<Incentive>>();
      pbrl::Rng rng(265);
      std::int64_t steps = 0;
      REQUIRE(pbrl::sampled_nikaido_isoda_penalty(problem, *model, gx, param, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                                  pbrl::PolicyHat{pi1_hat}, pbrl::PolicyHat{pi2_hat}, set, rng,
                                                  *traj, steps, *out) == Status::ok);
      M1 e1, unused1, y1;
      M2 e2, unused2, y2;
      Real v1, v2;
      by_hand(pi1_hat, pi2, pbrl::Rng(265), unused1, e2, v1);
      by_hand(pi1, pi2_hat, pbrl::Rng(265), e1, unused2, v2);
      y1 = -e1;  // batch 2 adds the negated terms: the same numbers up to the sign of zeros
      y2 = e2;
      CHECK((out->grad_y1.array() == y1.array()).all());
      CHECK((out->grad_y2.array() == y2.array()).all());
      CHECK(out->value == doctest::Approx(v1 - v2).epsilon(kTight));  // (sum1 - sum2) / B
    }
}

TEST_CASE("sampled game vector-Jacobian products agree with J^T(mu, V) over joint actions") {
  const int n = 250 * kScale, batch = 4;
  pbrl::Rng prng(221);
  const M1 pi1 = random_policy<S, A1>(prng);
  const M2 pi2 = random_policy<S, A2>(prng);

  SUBCASE("x in rewards and transitions (likelihood ratio through P)") {
    Mixture problem(222, kGameGamma, Real(0.3));
    const Mixture::Params x = mixture_x(prng);
    auto model = std::make_unique<Mixture::Model>();
    Game g;
    REQUIRE(problem.build(x, *model, g) == Status::ok);
    const JointEvaluation e(g, pi1, pi2);
    Joint mu;
    pbrl::joint_occupancy(e.eval.occupancy, pi1, pi2, mu);
    Mixture::Params exact_g = Mixture::Params::Zero();
    problem.vjp(*model, mu, e.eval.value, Real(1), exact_g);
    auto traj = std::make_unique<Traj>();
    auto estimate = params_replicates(exact_g, 223, [&](int b, pbrl::Rng& rng, std::int64_t& steps, Mixture::Params& gs) {
      return pbrl::sampled_game_vjp(problem, *model, g, pi1, pi2, sizes(kLong, b), rng, *traj, steps, gs);
    });
    const Stats<K> st = estimate.run(n, batch);
    CHECK(estimate.steps == std::int64_t(n) * batch * kLong);
    check_within_error("game J^T(mu, V), mixture", st, estimate.exact, game_bias(e, Real(1), exact_g.cwiseAbs().maxCoeff()));
  }

  SUBCASE("incentive design: the reward term only") {
    const auto data = std::make_unique<GameData<S, A1, A2>>(224);
    Incentive problem;
    REQUIRE(problem.init(data->incentive(kGameGamma, Real(0.3))) == Status::ok);
    const Incentive::Params x = incentive_x(prng);
    Incentive::Model model;
    Game g;
    REQUIRE(problem.build(x, model, g) == Status::ok);
    const JointEvaluation e(g, pi1, pi2);
    Joint mu;
    pbrl::joint_occupancy(e.eval.occupancy, pi1, pi2, mu);
    Incentive::Params exact_g = Incentive::Params::Zero();
    problem.vjp(model, mu, e.eval.value, Real(1), exact_g);
    auto traj = std::make_unique<Traj>();
    auto estimate = params_replicates(exact_g, 225, [&](int b, pbrl::Rng& rng, std::int64_t& steps, Incentive::Params& gs) {
      return pbrl::sampled_game_vjp(problem, model, g, pi1, pi2, sizes(kLong, b), rng, *traj, steps, gs);
    });
    const Stats<Incentive::kParams> st = estimate.run(n, batch);
    check_within_error("game J^T(mu, V), incentive design", st, estimate.exact,
                       game_bias(e, Real(1), exact_g.cwiseAbs().maxCoeff()));
  }
}

TEST_CASE("sampled Nikaido-Isoda penalty agrees with the exact one; common random numbers zero it at pi-hat = pi") {
  constexpr int N = 1 + K + S * A1 + S * A2;
  const int n = 250 * kScale, batch = 4;
  Mixture problem(231, kGameGamma, Real(0.3));
  pbrl::Rng prng(232);
  const Mixture::Params x = mixture_x(prng);
  auto model = std::make_unique<Mixture::Model>();
  Game g;
  REQUIRE(problem.build(x, *model, g) == Status::ok);
  const M1 pi1 = softmax_policy<A1>(prng, Real(1)), pi1_hat = softmax_policy<A1>(prng, Real(1));
  const M2 pi2 = softmax_policy<A2>(prng, Real(1)), pi2_hat = softmax_policy<A2>(prng, Real(1));

  for (auto param : {Parameterization::softmax, Parameterization::direct}) {
    CAPTURE(static_cast<int>(param));
    // Exact: evaluations of pi-hat1 on player 1's MDP given pi2 and pi-hat2 on player 2's given pi1.
    auto s1 = std::make_unique<pbrl::InducedModel<Real, S, A1>>();
    auto s2 = std::make_unique<pbrl::InducedModel<Real, S, A2>>();
    auto ws = std::make_unique<WsT<S>>();
    pbrl::Mdp<Real, S, A1> m1;
    pbrl::Mdp<Real, S, A2> m2;
    REQUIRE(pbrl::player1_mdp(g, pi2, *s1, m1) == Status::ok);
    REQUIRE(pbrl::player2_mdp(g, pi1, *s2, m2) == Status::ok);
    pbrl::Evaluation<Real, S, A1> e1;
    pbrl::Evaluation<Real, S, A2> e2;
    REQUIRE(pbrl::evaluate(m1, pi1_hat, *ws, e1) == Status::ok);
    REQUIRE(pbrl::evaluate(m2, pi2_hat, *ws, e2) == Status::ok);
    pbrl::NikaidoIsodaScratch<Real, S, A1, A2> scratch;
    Mixture::Params gx = Mixture::Params::Zero();
    M1 gp1 = M1::Zero(), gy1;
    M2 gp2 = M2::Zero(), gy2;
    const Real psi = pbrl::nikaido_isoda_penalty(problem, *model, g, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                                 pbrl::PolicyHat{pi1_hat, e1}, pbrl::PolicyHat{pi2_hat, e2}, Real(1),
                                                 scratch, gx, gp1, gp2);
    pbrl::chain_policy_gradient<Real, S, A1>(param, pi1, gp1, gy1);
    pbrl::chain_policy_gradient<Real, S, A2>(param, pi2, gp2, gy2);
    Real exact[N];
    exact[0] = psi;
    flatten<K>(gx, exact + 1);
    flatten<S * A1>(gy1, exact + 1 + K);
    flatten<S * A2>(gy2, exact + 1 + K + S * A1);

    auto traj = std::make_unique<Traj>();
    pbrl::Rng rng(233);
    std::int64_t steps = 0;
    pbrl::SampledNikaidoIsoda<Mixture> out;
    auto estimate = [&](int b, Real* o) {
      REQUIRE(pbrl::sampled_nikaido_isoda_penalty(problem, *model, g, param, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                                  pbrl::PolicyHat{pi1_hat}, pbrl::PolicyHat{pi2_hat},
                                                  sizes(kLong, b), rng, *traj, steps, out) == Status::ok);
      o[0] = out.value;
      flatten<K>(out.grad_x, o + 1);
      flatten<S * A1>(out.grad_y1, o + 1 + K);
      flatten<S * A2>(out.grad_y2, o + 1 + K + S * A1);
    };
    const Stats<N> st = replicate<N>(estimate, n, batch, exact);
    CHECK(steps == 2 * std::int64_t(n) * batch * kLong);
    const JointEvaluation e(g, pi1, pi2);
    check_within_error(param == Parameterization::softmax ? "Nikaido-Isoda (softmax)" : "Nikaido-Isoda (direct)", st,
                       exact, game_bias(e, std::min(pi1.minCoeff(), pi2.minCoeff()), gx.cwiseAbs().maxCoeff() + 1));
  }

  // At pi-hat = pi both batches replay the same trajectories: psi_hat = 0 exactly, grad_x ~ 0.
  auto traj = std::make_unique<Traj>();
  pbrl::Rng rng(234);
  std::int64_t steps = 0;
  pbrl::SampledNikaidoIsoda<Mixture> out;
  REQUIRE(pbrl::sampled_nikaido_isoda_penalty(problem, *model, g, Parameterization::softmax, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                              pbrl::PolicyHat{pi1}, pbrl::PolicyHat{pi2},
                                              sizes(5, 16), rng, *traj, steps, out) == Status::ok);
  CHECK(out.value == Real(0));
  CHECK(out.grad_x.cwiseAbs().maxCoeff() <= kTight);
  pbrl::SamplingSettings independent = sizes(5, 16);
  independent.common_random_numbers = false;
  REQUIRE(pbrl::sampled_nikaido_isoda_penalty(problem, *model, g, Parameterization::softmax, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                              pbrl::PolicyHat{pi1}, pbrl::PolicyHat{pi2},
                                              independent, rng, *traj, steps, out) == Status::ok);
  CHECK(out.value != Real(0));
}

TEST_CASE("sampled mixed derivative of the meta-gradient agrees with J^T(mu'_u, .)") {
  const int n = 250 * kScale, batch = 4;
  const auto data = std::make_unique<GameData<S, A1, A2>>(241);
  Incentive problem;
  REQUIRE(problem.init(data->incentive(kGameGamma, Real(0.3))) == Status::ok);
  pbrl::Rng prng(242);
  const Incentive::Params x = incentive_x(prng);
  Incentive::Model model;
  Game g;
  REQUIRE(problem.build(x, model, g) == Status::ok);
  const M1 pi1 = softmax_policy<A1>(prng, Real(1));
  const M2 pi2 = softmax_policy<A2>(prng, Real(1));
  M1 u1 = random_logits<S, A1>(prng, Real(1));
  M2 u2 = random_logits<S, A2>(prng, Real(1));
  for (int s = 0; s < S; ++s) {
    u1.row(s).array() -= u1.row(s).mean();
    u2.row(s).array() -= u2.row(s).mean();
  }
  JointEvaluation e(g, pi1, pi2);
  Vec<S> warm = Vec<S>::Zero();
  Joint mu_dot;
  REQUIRE(pbrl::occupancy_directional_derivative(g, e.mdp1, {pi1, pi2, e.eval.value, e.eval.occupancy}, {u1, u2},
                                                 *e.ws, warm, mu_dot, true) == Status::ok);
  Incentive::Params exact_g = Incentive::Params::Zero();
  problem.vjp(model, mu_dot, e.eval.value, Real(1), exact_g);
  auto traj = std::make_unique<Traj>();
  auto estimate = params_replicates(exact_g, 243, [&](int b, pbrl::Rng& rng, std::int64_t& steps, Incentive::Params& gs) {
    return pbrl::sampled_directional_vjp(problem, model, g, pi1, pi2, u1, u2, sizes(kLong, b), rng, *traj, steps, gs);
  });
  const Stats<Incentive::kParams> st = estimate.run(n, batch);
  CHECK(estimate.steps == std::int64_t(n) * batch * kLong);
  check_within_error("meta-gradient mixed derivative", st, estimate.exact,
                     game_bias(e, std::min(pi1.minCoeff(), pi2.minCoeff()), exact_g.cwiseAbs().maxCoeff()));
}

TEST_CASE("game estimators validate their inputs; on error the stream and the step count stay") {
  Mixture problem(251, kGameGamma, Real(0.3));
  pbrl::Rng prng(252);
  const Mixture::Params x = mixture_x(prng), outside = Mixture::Params::Constant(Real(3));
  auto model = std::make_unique<Mixture::Model>();
  Game g;
  REQUIRE(problem.build(x, *model, g) == Status::ok);
  const M1 pi1 = random_policy<S, A1>(prng);
  const M2 pi2 = random_policy<S, A2>(prng);
  M2 bad = pi2;
  bad(3, 0) = Real(-0.1);
  auto traj = std::make_unique<Traj>();
  pbrl::Rng rng(253);
  const pbrl::Rng saved = rng;
  std::int64_t steps = 7;
  Real v(0);
  M1 g1;
  M2 g2;
  Mixture::Params gx;
  pbrl::SampledNikaidoIsoda<Mixture> out;
  const auto nonsense = static_cast<Parameterization>(9);
  auto unchanged = [&] { return same_rng(rng, saved) && steps == 7; };
  for (const auto& size : {sizes(0, 4), sizes(65, 4), sizes(5, 0)}) {
    CHECK(pbrl::sampled_game_policy_gradient(g, Parameterization::softmax, pi1, pi2, size, rng, *traj, steps, v, &g1,
                                             &g2) == Status::bad_setting);
    CHECK(pbrl::sampled_game_vjp(problem, *model, g, pi1, pi2, size, rng, *traj, steps, gx) == Status::bad_setting);
    CHECK(pbrl::sampled_nikaido_isoda_penalty(problem, *model, g, Parameterization::softmax, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                              pbrl::PolicyHat{pi1}, pbrl::PolicyHat{pi2}, size, rng,
                                              *traj, steps, out) == Status::bad_setting);
    CHECK(unchanged());
  }
  CHECK(pbrl::sampled_game_policy_gradient(g, nonsense, pi1, pi2, sizes(5, 4), rng, *traj, steps, v, &g1, &g2) ==
        Status::bad_setting);
  CHECK(pbrl::sampled_game_policy_gradient(g, Parameterization::direct, pi1, bad, sizes(5, 4), rng, *traj, steps, v,
                                           &g1, &g2) == Status::bad_policy);
  // x comes in through the model, and build() refuses an x outside X: no model exists for it.
  auto outside_model = std::make_unique<Mixture::Model>();
  Game outside_game;
  CHECK(problem.build(outside, *outside_model, outside_game) == Status::out_of_bounds);
  CHECK(pbrl::sampled_nikaido_isoda_penalty(problem, *model, g, Parameterization::softmax, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                            pbrl::PolicyHat{pi1}, pbrl::PolicyHat{bad},
                                            sizes(5, 4), rng, *traj, steps, out) == Status::bad_policy);
  CHECK(pbrl::sampled_nikaido_isoda_penalty(problem, *model, g, nonsense, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                            pbrl::PolicyHat{pi1}, pbrl::PolicyHat{pi2}, sizes(5, 4), rng, *traj,
                                            steps, out) == Status::bad_setting);
  CHECK(unchanged());
}

namespace {
struct NoHookIncentive : Incentive {
  void sample_vjp() const {}  // hides the hook: the sampled solvers must refuse this problem
};
static_assert(!pbrl::has_game_sample_vjp<NoHookIncentive>::value, "hook hidden");
static_assert(pbrl::has_game_sample_vjp<Incentive>::value, "incentive design offers the hook");
static_assert(pbrl::has_game_sample_vjp<Mixture>::value, "the mixture game offers the hook");

struct FailingUpper : Incentive {
  template <pbrl::EvaluationMethod M>
  Status upper(const M1&, const M2&, Model&, pbrl::EvaluationWorkspace<Real, S, M>&,
               pbrl::Evaluation<Real, S, J>&, Real&, Params&, M1&, M2&) const {
    return Status::numerical_failure;
  }
};

// The sampled solvers' start, a TEST_CASE_FIXTURE (the case reads these members): the incentive
// design on GameData(Seed) with gamma 0.8, tau 0.3; x0 = 0; logits y1, y2 drawn with scale
// LogitScale from prng (seeded Seed + 1).
template <std::uint32_t Seed, int LogitScale>
struct SampledStart {
  std::unique_ptr<GameData<S, A1, A2>> data = std::make_unique<GameData<S, A1, A2>>(Seed);
  Incentive problem;
  const Incentive::Params x0 = Incentive::Params::Zero();
  pbrl::Rng prng{Seed + 1u};
  const M1 y1 = random_logits<S, A1>(prng, Real(LogitScale));
  const M2 y2 = random_logits<S, A2>(prng, Real(LogitScale));
  SampledStart() { REQUIRE(problem.init(data->incentive(Real(0.8), Real(0.3))) == Status::ok); }
};

pbrl::PbrlZeroSumSettings<Real> zero_sum_sampled(std::uint32_t seed) {
  pbrl::PbrlZeroSumSettings<Real> s;
  s.policy.parameterization = Parameterization::softmax;
  s.policy.logit_bound = Real(10);
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.oracle_policy.parameterization = Parameterization::softmax;
  s.inner_steps = 1;
  s.oracle_step = Real(0.5);
  s.step_x = Real(0.5);
  s.step_pi = Real(0.5);
  s.lambda_final = Real(4);
  s.gradient = GradientMode::sampled;
  s.sampling = sizes(5, 24);
  s.seed = seed;
  return s;
}
}  // namespace

using ZeroSumStart = SampledStart<261, 2>;
TEST_CASE_FIXTURE(ZeroSumStart,
                  "sampled PbrlZeroSum: steps counted, deterministic per seed, all-or-nothing, lowers the NE gap") {
  using Solver = pbrl::PbrlZeroSum<Incentive>;

  // Refusals: PMD oracle, a bad horizon, a problem without the hook.
  auto solver = std::make_unique<Solver>();
  auto settings = zero_sum_sampled(5);
  settings.oracle = pbrl::OracleKind::policy_mirror_descent;
  CHECK(solver->init(problem, settings, x0, y1, y2) == Status::bad_setting);
  settings = zero_sum_sampled(5);
  settings.sampling.horizon = pbrl::kMaxHorizon + 1;
  CHECK(solver->init(problem, settings, x0, y1, y2) == Status::bad_setting);
  NoHookIncentive no_hook;
  REQUIRE(no_hook.init(data->incentive(Real(0.8), Real(0.3))) == Status::ok);
  auto no_hook_solver = std::make_unique<pbrl::PbrlZeroSum<NoHookIncentive>>();
  CHECK(no_hook_solver->init(no_hook, zero_sum_sampled(5), x0, y1, y2) == Status::bad_setting);

  // The exact NE gap psi at the solver's current policies.
  auto ws = std::make_unique<pbrl::BestResponseWorkspace<Real, S, A1, A2>>();
  auto gap = [&](const Solver& s) {
    Incentive::Model model;
    Game g;
    REQUIRE(problem.build(s.x(), model, g) == Status::ok);
    M1 p1;
    M2 p2;
    s.policy1(p1);
    s.policy2(p2);
    Real psi(0);
    REQUIRE(pbrl::nikaido_isoda_exact(g, p1, p2, 5000, Real(0), *ws, psi) == Status::ok);
    return psi;
  };

  REQUIRE(solver->init(problem, zero_sum_sampled(5), x0, y1, y2) == Status::ok);
  const Real gap0 = gap(*solver);
  Solver::Report r;
  const int iterations = 300;
  for (int k = 0; k < iterations; ++k) REQUIRE(solver->step(&r) == Status::ok);
  const std::int64_t per_step = (2 * 1 + 2) * 24 * 5;
  CHECK(solver->environment_steps() == iterations * per_step);
  CHECK(r.environment_steps == iterations * per_step);
  const Real gap1 = gap(*solver);
  MESSAGE("sampled PbrlZeroSum: exact NE gap ", gap0, " -> ", gap1, " after ", iterations, " steps");
  CHECK(gap1 < Real(0.5) * gap0);

  // Same seed, same run; another seed, another run.
  auto twin = std::make_unique<Solver>();
  REQUIRE(twin->init(problem, zero_sum_sampled(5), x0, y1, y2) == Status::ok);
  REQUIRE(twin->run(iterations) == Status::ok);
  CHECK(twin->x() == solver->x());
  CHECK(twin->y1() == solver->y1());
  auto other = std::make_unique<Solver>();
  REQUIRE(other->init(problem, zero_sum_sampled(6), x0, y1, y2) == Status::ok);
  REQUIRE(other->run(3) == Status::ok);
  REQUIRE(twin->init(problem, zero_sum_sampled(5), x0, y1, y2) == Status::ok);
  REQUIRE(twin->run(3) == Status::ok);
  CHECK(!(other->y1() == twin->y1()));

  // A step that fails late (upper() refuses, after the oracles and the penalty sampled) leaves
  // everything as it was, the stream and the count included.
  FailingUpper failing;
  REQUIRE(failing.init(data->incentive(Real(0.8), Real(0.3))) == Status::ok);
  auto broken = std::make_unique<pbrl::PbrlZeroSum<FailingUpper>>();
  REQUIRE(broken->init(failing, zero_sum_sampled(5), x0, y1, y2) == Status::ok);
  const auto before = std::make_unique<pbrl::PbrlZeroSum<FailingUpper>>(*broken);
  CHECK(broken->step() == Status::numerical_failure);
  CHECK(broken->x() == before->x());
  CHECK(broken->y1() == before->y1());
  CHECK(broken->y2() == before->y2());
  CHECK(broken->oracle_policy1() == before->oracle_policy1());
  CHECK(broken->oracle_policy2() == before->oracle_policy2());
  CHECK(same_rng(broken->rng(), before->rng()));
  CHECK(broken->environment_steps() == 0);
  CHECK(broken->iteration() == 0);
}

using MetaGradientStart = SampledStart<271, 1>;
TEST_CASE_FIXTURE(MetaGradientStart,
                  "sampled meta-gradient: steps counted, deterministic per seed, refuses what it cannot do") {
  using Baseline = pbrl::MetaGradient<Incentive>;
  pbrl::MetaGradientSettings<Real> settings;
  settings.policy.parameterization = Parameterization::softmax;
  settings.agent_steps = 2;
  settings.gradient = GradientMode::sampled;
  settings.sampling = sizes(5, 24);
  settings.seed = 9;

  auto exact = std::make_unique<Baseline>();
  auto sampled = std::make_unique<Baseline>();
  auto twin = std::make_unique<Baseline>();
  REQUIRE(sampled->init(problem, settings, x0, y1, y2) == Status::ok);
  REQUIRE(twin->init(problem, settings, x0, y1, y2) == Status::ok);
  Baseline::Report r;
  REQUIRE(sampled->run(10, &r) == Status::ok);
  REQUIRE(twin->run(10) == Status::ok);
  CHECK(r.environment_steps == 10 * (2 + 1) * 24 * 5);
  CHECK(sampled->x() == twin->x());
  CHECK(sampled->y2() == twin->y2());
  CHECK(sampled->meta_gradient().norm() > Real(0));

  // The start line samples only the agents' steps.
  settings.learn_incentive = false;
  REQUIRE(sampled->init(problem, settings, x0, y1, y2) == Status::ok);
  REQUIRE(sampled->run(4, &r) == Status::ok);
  CHECK(r.environment_steps == 4 * 2 * 24 * 5);
  CHECK(sampled->x() == x0);

  // Bad sampling settings and a problem without the hook are refused; the object keeps its state.
  const auto before_x = sampled->x();
  settings.sampling.batch = 0;
  CHECK(sampled->init(problem, settings, x0, y1, y2) == Status::bad_setting);
  CHECK(sampled->iteration() == 4);
  CHECK(sampled->x() == before_x);
  settings.sampling.batch = 24;
  NoHookIncentive no_hook;
  REQUIRE(no_hook.init(data->incentive(Real(0.8), Real(0.3))) == Status::ok);
  auto no_hook_baseline = std::make_unique<pbrl::MetaGradient<NoHookIncentive>>();
  CHECK(no_hook_baseline->init(no_hook, settings, x0, y1, y2) == Status::bad_setting);

  // Sampled and exact agents' steps agree on average: one step is linear in the agents' gradient
  // (no logit reaches the box), so the mean over seeds of y1 after one sampled step is the exact
  // step's, within its sampling error (long horizon: no visible truncation bias).
  settings.learn_incentive = true;
  settings.agent_steps = 1;
  settings.sampling = sizes(kLong, 8);
  pbrl::MetaGradientSettings<Real> exact_settings = settings;
  exact_settings.gradient = GradientMode::exact;
  REQUIRE(exact->init(problem, exact_settings, x0, y1, y2) == Status::ok);
  REQUIRE(exact->step() == Status::ok);
  Real target[S * A1];
  flatten<S * A1>(exact->y1(), target);
  std::uint32_t seed = 100;
  auto estimate = [&](int, Real* out) {
    settings.seed = seed++;
    REQUIRE(sampled->init(problem, settings, x0, y1, y2) == Status::ok);
    REQUIRE(sampled->step() == Status::ok);
    flatten<S * A1>(sampled->y1(), out);
  };
  const Stats<S * A1> st = replicate<S * A1>(estimate, 100 * kScale, 8, target);
  check_within_error("agents' sampled step (meta-gradient baseline)", st, target, kDouble ? Real(1e-6) : Real(1e-3));
}

}  // namespace test_game_sampling
