// Bilevel RL with a zero-sum lower level: the induced single-agent MDPs of a Markov game, the
// Nikaido-Isoda penalty (sign, zero at the regularized Nash equilibrium, gradients against finite
// differences, gradient dominance), incentive design and its meta-gradient baseline (exact mixed
// derivative against finite differences), and PbrlZeroSum.
#include "game_support.hpp"
#include "fd_support.hpp"
#include "solver_support.hpp"

#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/model/game.hpp"
#include "pbrl/penalty/nikaido_isoda.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace test_zero_sum {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
// The regularized Nash equilibrium, independently of the library's oracles: Shapley's iteration
// V(s) <- val_tau[Q_V(s)], Q_V(s,a1,a2) = r + gamma <P(.|s,a1,a2), V>, where each entropy-regularized
// matrix game is solved by the regularized extragradient method of Cen, Wei and Chi (2021):
//   log p-bar = (1 - eta tau) log p + eta Q q,      log q-bar = (1 - eta tau) log q - eta Q^T p,
//   log p    <- (1 - eta tau) log p + eta Q q-bar,  log q    <- (1 - eta tau) log q - eta Q^T p-bar.
template <int S, int A1, int A2>
struct Equilibrium {
  Vec<S> value = Vec<S>::Zero();
  Mat<S, A1> pi1;
  Mat<S, A2> pi2;
};

template <int N>
void normalize_log(Eigen::Matrix<Real, N, 1>& l) {
  const Real m = l.maxCoeff();
  l.array() -= m + std::log((l.array() - m).exp().sum());
}

template <int S, int A1, int A2>
Equilibrium<S, A1, A2> regularized_nash(const GameT<S, A1, A2>& g) {
  using V1 = Eigen::Matrix<Real, A1, 1>;
  using V2 = Eigen::Matrix<Real, A2, 1>;
  const Real tau = g.tau();
  REQUIRE(tau > Real(0));
  const Real tol = kDouble ? Real(1e-14) : Real(2e-6);
  Equilibrium<S, A1, A2> e;
  Mat<S, A1> lp = Mat<S, A1>::Constant(-std::log(Real(A1)));
  Mat<S, A2> lq = Mat<S, A2>::Constant(-std::log(Real(A2)));
  for (int outer = 0; outer < 3000; ++outer) {
    Vec<S> next;
    for (int s = 0; s < S; ++s) {
      Eigen::Matrix<Real, A1, A2> Q;
      for (int a1 = 0; a1 < A1; ++a1)
        for (int a2 = 0; a2 < A2; ++a2) {
          const int row = (s * A1 + a1) * A2 + a2;
          Q(a1, a2) = g.r()(s, a1 * A2 + a2) + g.discount * g.P().row(row).dot(e.value);
        }
      const Real eta = Real(1) / (tau + Real(2) * Q.cwiseAbs().maxCoeff());
      const Real keep = Real(1) - eta * tau;
      V1 l1 = lp.row(s).transpose();
      V2 l2 = lq.row(s).transpose();
      for (int it = 0; it < 200000; ++it) {
        const V1 p = l1.array().exp().matrix();
        const V2 q = l2.array().exp().matrix();
        V1 m1 = keep * l1 + eta * Q * q;
        V2 m2 = keep * l2 - eta * Q.transpose() * p;
        normalize_log(m1);
        normalize_log(m2);
        V1 n1 = keep * l1 + eta * Q * m2.array().exp().matrix();
        V2 n2 = keep * l2 - eta * Q.transpose() * m1.array().exp().matrix();
        normalize_log(n1);
        normalize_log(n2);
        const Real change = std::max((n1 - l1).cwiseAbs().maxCoeff(), (n2 - l2).cwiseAbs().maxCoeff());
        l1 = n1;
        l2 = n2;
        if (!(change > tol)) break;
      }
      lp.row(s) = l1.transpose();
      lq.row(s) = l2.transpose();
      const V1 p = l1.array().exp().matrix();
      const V2 q = l2.array().exp().matrix();
      next(s) = p.dot(Q * q) - tau * g.regularizer1.value(s, p) + tau * g.regularizer2.value(s, q);
    }
    const Real change = (next - e.value).cwiseAbs().maxCoeff();
    e.value = next;
    if (!(change > tol)) break;
  }
  e.pi1 = lp.array().exp().matrix();
  e.pi2 = lq.array().exp().matrix();
  for (int s = 0; s < S; ++s) {
    e.pi1.row(s) /= e.pi1.row(s).sum();
    e.pi2.row(s) /= e.pi2.row(s).sum();
  }
  return e;
}

// A player's exact best response in its induced MDP m (soft value iteration), and its evaluation.
template <int S, int A>
struct BestResponse {
  Optimum<S, A> best;
  pbrl::Evaluation<Real, S, A> evaluation;
};
template <int S, int A>
BestResponse<S, A> best_response(const pbrl::Mdp<Real, S, A>& m, WsT<S>& ws) {
  BestResponse<S, A> r{optimum(m), {}};
  REQUIRE(pbrl::evaluate(m, r.best.pi, ws, r.evaluation) == Status::ok);
  return r;
}

// psi(x, pi) with exact best responses (soft value iteration on both induced MDPs) through
// nikaido_isoda_penalty(); its gradients into (gx, g1, g2) when given.
template <class Problem>
struct NiProbe {
  static constexpr int S = Problem::kStates, A1 = Problem::kActions1, A2 = Problem::kActions2;
  const Problem& problem;
  std::unique_ptr<typename Problem::Model> model = std::make_unique<typename Problem::Model>();
  std::unique_ptr<WsT<S>> ws = std::make_unique<WsT<S>>();
  std::unique_ptr<pbrl::InducedModel<Real, S, A1>> m1 = std::make_unique<pbrl::InducedModel<Real, S, A1>>();
  std::unique_ptr<pbrl::InducedModel<Real, S, A2>> m2 = std::make_unique<pbrl::InducedModel<Real, S, A2>>();
  std::unique_ptr<pbrl::NikaidoIsodaScratch<Real, S, A1, A2>> scratch =
      std::make_unique<pbrl::NikaidoIsodaScratch<Real, S, A1, A2>>();

  Real operator()(const typename Problem::Params& x, const Mat<S, A1>& pi1, const Mat<S, A2>& pi2,
                  typename Problem::Params* gx = nullptr, Mat<S, A1>* g1 = nullptr, Mat<S, A2>* g2 = nullptr) {
    GameT<S, A1, A2> g;
    REQUIRE(problem.build(x, *model, g) == Status::ok);
    pbrl::Mdp<Real, S, A1> mdp1;
    pbrl::Mdp<Real, S, A2> mdp2;
    REQUIRE(pbrl::player1_mdp(g, pi2, *m1, mdp1) == Status::ok);
    REQUIRE(pbrl::player2_mdp(g, pi1, *m2, mdp2) == Status::ok);
    const auto [best1, e1] = best_response(mdp1, *ws);
    const auto [best2, e2] = best_response(mdp2, *ws);
    typename Problem::Params dx = Problem::Params::Zero();
    Mat<S, A1> d1 = Mat<S, A1>::Zero();
    Mat<S, A2> d2 = Mat<S, A2>::Zero();
    const Real psi = pbrl::nikaido_isoda_penalty(problem, *model, g, pbrl::PolicyY{pi1}, pbrl::PolicyY{pi2},
                                                 pbrl::PolicyHat{best1.pi, e1}, pbrl::PolicyHat{best2.pi, e2}, Real(1),
                                                 *scratch, dx, d1, d2);
    if (gx) *gx = dx;
    if (g1) *g1 = d1;
    if (g2) *g2 = d2;
    return psi;
  }
};

// A random direction along the simplex (rows sum to 0), entries of size <= scale.
template <int S, int A>
Mat<S, A> tangent(pbrl::Rng& rng, Real scale) {
  Mat<S, A> u = random_logits<S, A>(rng, scale);
  for (int s = 0; s < S; ++s) u.row(s).array() -= u.row(s).mean();
  return u;
}

// Checks grad (direct coordinates) along the simplex and through softmax logits of a function
// fn(pi) of one player's policy, at pi = softmax(y).
template <int S, int A, typename Fn>
void check_policy_gradient(const Mat<S, A>& y, const Mat<S, A>& grad, Fn&& fn) {
  Mat<S, A> pi, gy;
  pbrl::policy_from_parameters<Real, S, A>(Parameterization::softmax, y, pi);
  const Real scale = grad.cwiseAbs().maxCoeff();
  check_simplex_gradient(pi, grad, scale, fn);
  pbrl::chain_policy_gradient<Real, S, A>(Parameterization::softmax, pi, grad, gy);
  check_logit_gradient(y, gy, scale, fn);
}

constexpr int S = 4, A1 = 2, A2 = 3, K = 3;
using Game = GameT<S, A1, A2>;
using M1 = Mat<S, A1>;
using M2 = Mat<S, A2>;
using Joint = JointT<S, A1, A2>;
using Incentive = pbrl::IncentiveDesign<Real, S, A1, A2>;
using Mixture = MixtureGame<S, A1, A2, K>;

Mixture::Params random_x(pbrl::Rng& rng) { return uniform_vector<Mixture::Params>(rng); }

// The designer's f(x, pi1, pi2) by upper() on M(x) (built into model; scratch: upper()'s
// evaluation); its gradients into (fx, f1, f2) where given.
Real designer_f(const Incentive& problem, const Incentive::Params& x, const M1& pi1, const M2& pi2,
                Incentive::Model& model, WsT<S>& ws, pbrl::Evaluation<Real, S, A1 * A2>& scratch,
                Incentive::Params* fx = nullptr, M1* f1 = nullptr, M2* f2 = nullptr) {
  Game g;
  REQUIRE(problem.build(x, model, g) == Status::ok);
  Real f;
  Incentive::Params dx;
  M1 d1;
  M2 d2;
  REQUIRE(problem.upper(pi1, pi2, model, ws, scratch, f, dx, d1, d2) == Status::ok);
  if (fx) *fx = dx;
  if (f1) *f1 = d1;
  if (f2) *f2 = d2;
  return f;
}

// Random logits y1 then y2 from rng (random_logits), and the players' softmax policies of them.
void random_softmax_policies(pbrl::Rng& rng, M1& y1, M2& y2, M1& pi1, M2& pi2) {
  y1 = random_logits<S, A1>(rng);
  y2 = random_logits<S, A2>(rng);
  pbrl::policy_from_parameters<Real, S, A1>(Parameterization::softmax, y1, pi1);
  pbrl::policy_from_parameters<Real, S, A2>(Parameterization::softmax, y2, pi2);
}
}  // namespace

TEST_CASE("zero-sum game: the induced MDPs give the joint value; best responses by soft value iteration") {
  pbrl::Rng rng(70);
  const auto data = std::make_unique<GameData<S, A1, A2>>(71);
  const Game g = data->game(Real(0.8), Real(0.3));
  REQUIRE(pbrl::validate(g) == Status::ok);
  auto im1 = std::make_unique<pbrl::InducedModel<Real, S, A1>>();
  auto im2 = std::make_unique<pbrl::InducedModel<Real, S, A2>>();
  auto ws = std::make_unique<WsT<S>>();
  for (int trial = 0; trial < 5; ++trial) {
    const M1 pi1 = random_policy<S, A1>(rng);
    const M2 pi2 = random_policy<S, A2>(rng);
    pbrl::Mdp<Real, S, A1> mdp1;
    pbrl::Mdp<Real, S, A2> mdp2;
    REQUIRE(pbrl::player1_mdp(g, pi2, *im1, mdp1) == Status::ok);
    REQUIRE(pbrl::player2_mdp(g, pi1, *im2, mdp2) == Status::ok);
    REQUIRE(pbrl::validate(mdp1) == Status::ok);
    REQUIRE(pbrl::validate(mdp2) == Status::ok);
    pbrl::Evaluation<Real, S, A1> e1;
    pbrl::Evaluation<Real, S, A2> e2;
    REQUIRE(pbrl::evaluate(mdp1, pi1, *ws, e1) == Status::ok);
    REQUIRE(pbrl::evaluate(mdp2, pi2, *ws, e2) == Status::ok);
    // V1 = V = -V2, the same state occupancy, and the joint solve agrees.
    const Vec<S> v = joint_value(g, pi1, pi2);
    const Real vs = v.cwiseAbs().maxCoeff();
    for (int s = 0; s < S; ++s) {
      CHECK_CLOSE(e1.value(s), v(s), kTight, vs);
      CHECK_CLOSE(e2.value(s), -v(s), kTight, vs);
      CHECK_CLOSE(e1.occupancy(s), e2.occupancy(s), kTight, Real(1) / (Real(1) - g.discount));
    }
    CHECK_CLOSE(e1.value_rho, -e2.value_rho, kTight, vs);
    // The game-level policy gradients are the induced MDPs' policy gradients.
    M1 g1 = M1::Zero(), p1;
    M2 g2 = M2::Zero(), p2;
    pbrl::add_game_policy_gradients(g, {pi1, pi2, e1.value, e1.occupancy}, Real(1), &g1, Real(1), &g2);
    pbrl::policy_gradient(mdp1, pi1, e1, p1);
    pbrl::policy_gradient(mdp2, pi2, e2, p2);
    CHECK((g1 - p1).cwiseAbs().maxCoeff() <= kTight * std::max(Real(1), p1.cwiseAbs().maxCoeff()));
    CHECK((g2 + p2).cwiseAbs().maxCoeff() <= kTight * std::max(Real(1), p2.cwiseAbs().maxCoeff()));
    // Two calls in one pass over P (the Nikaido-Isoda penalty's pair): each call's numbers to the
    // bit, with other policies, values, occupancies, scales and logs per call.
    {
      pbrl::Rng other(700 + trial);
      const M1 pi1b = random_policy<S, A1>(other);
      const M2 pi2b = random_policy<S, A2>(other);
      const Vec<S> vb = -Real(0.5) * e1.value;
      const Vec<S> db = e2.occupancy.reverse();
      const M1 log1b = pi1b.unaryExpr([](Real p) { return std::log(p); });
      const M2 log2 = pi2.unaryExpr([](Real p) { return std::log(p); });
      M1 one1 = M1::Constant(Real(0.25)), pair1 = one1;
      M2 one2 = M2::Constant(Real(-0.5)), pair2 = one2;
      pbrl::add_game_policy_gradients(g, {pi1, pi2, e1.value, e1.occupancy, nullptr, &log2}, Real(0),
                                      static_cast<M1*>(nullptr), Real(1.5), &one2);
      pbrl::add_game_policy_gradients(g, {pi1b, pi2b, vb, db, &log1b, nullptr}, Real(-2), &one1, Real(0),
                                      static_cast<M2*>(nullptr));
      const pbrl::GamePoint<Real, S, A1, A2> at_a{pi1, pi2, e1.value, e1.occupancy, nullptr, &log2};
      const pbrl::GamePoint<Real, S, A1, A2> at_b{pi1b, pi2b, vb, db, &log1b, nullptr};
      pbrl::add_game_policy_gradient_pair(g, {at_a, Real(1.5), pair2}, {at_b, Real(-2), pair1});
      CHECK(std::memcmp(pair1.data(), one1.data(), sizeof(Real) * S * A1) == 0);
      CHECK(std::memcmp(pair2.data(), one2.data(), sizeof(Real) * S * A2) == 0);
    }
    // From the policies' logs: std::log's give the same numbers (to the bit unless fused); logs
    // shifted by c are the ones used: log pi1 + c raises dh1/dpi1 and h1 by c, so grad1 and
    // grad2 both fall by tau d(s) c; log pi2 + c raises h2 and dh2/dpi2, so both rise by as much.
    {
      const M1 log1 = pi1.unaryExpr([](Real p) { return std::log(p); });
      const M2 log2 = pi2.unaryExpr([](Real p) { return std::log(p); });
      M1 h1 = M1::Zero();
      M2 h2 = M2::Zero();
      pbrl::add_game_policy_gradients(g, {pi1, pi2, e1.value, e1.occupancy, &log1, &log2}, Real(1), &h1, Real(1), &h2);
      check_same_unless_fused(h1.data(), g1.data(), S * A1, 8);
      check_same_unless_fused(h2.data(), g2.data(), S * A2, 8);
      const Real c = Real(0.5);
      const M1 up1 = (log1.array() + c).matrix();
      const M2 up2 = (log2.array() + c).matrix();
      for (int which = 1; which <= 2; ++which) {
        CAPTURE(which);
        h1.setZero();
        h2.setZero();
        pbrl::add_game_policy_gradients(
            g, {pi1, pi2, e1.value, e1.occupancy, which == 1 ? &up1 : &log1, which == 2 ? &up2 : &log2}, Real(1), &h1,
            Real(1), &h2);
        const Real sign = which == 2 ? Real(1) : Real(-1);
        for (int s = 0; s < S; ++s) {
          const Real move = sign * g.tau() * e1.occupancy(s) * c;
          for (int a = 0; a < A1; ++a) CHECK_CLOSE(h1(s, a), g1(s, a) + move, kTight, Real(10));
          for (int a = 0; a < A2; ++a) CHECK_CLOSE(h2(s, a), g2(s, a) + move, kTight, Real(10));
        }
      }
    }
    // The induced MDPs from the other player's logs: std::log's give the same model; logs shifted
    // by c raise that player's h by c, so each induced reward rises by tau*c and nothing else moves.
    {
      const M1 log1 = pi1.unaryExpr([](Real p) { return std::log(p); });
      const M2 log2 = pi2.unaryExpr([](Real p) { return std::log(p); });
      const Real c = Real(0.5);
      for (const Real shift : {Real(0), c}) {
        CAPTURE(shift);
        const M1 l1 = (log1.array() + shift).matrix();
        const M2 l2 = (log2.array() + shift).matrix();
        auto from_logs1 = std::make_unique<pbrl::InducedModel<Real, S, A1>>();
        auto from_logs2 = std::make_unique<pbrl::InducedModel<Real, S, A2>>();
        pbrl::Mdp<Real, S, A1> m1;
        pbrl::Mdp<Real, S, A2> m2;
        REQUIRE(pbrl::player1_mdp(g, pi2, *from_logs1, m1, &l2) == Status::ok);
        REQUIRE(pbrl::player2_mdp(g, pi1, *from_logs2, m2, &l1) == Status::ok);
        CHECK(std::equal(im1->transition, im1->transition + S * A1 * S, from_logs1->transition));
        CHECK(std::equal(im2->transition, im2->transition + S * A2 * S, from_logs2->transition));
        if (shift == Real(0)) {
          check_same_unless_fused(from_logs1->reward, im1->reward, S * A1, 8);
          check_same_unless_fused(from_logs2->reward, im2->reward, S * A2, 8);
        } else {
          for (int i = 0; i < S * A1; ++i) CHECK_CLOSE(from_logs1->reward[i], im1->reward[i] + g.tau() * c, kTight, Real(10));
          for (int i = 0; i < S * A2; ++i) CHECK_CLOSE(from_logs2->reward[i], im2->reward[i] + g.tau() * c, kTight, Real(10));
        }
      }
      // Non-finite logs are refused and change nothing.
      M2 nan_logs = log2;
      nan_logs(2, 1) = std::numeric_limits<Real>::quiet_NaN();
      auto untouched = std::make_unique<pbrl::InducedModel<Real, S, A1>>(*im1);
      pbrl::Mdp<Real, S, A1> m1;
      CHECK(pbrl::player1_mdp(g, pi2, *untouched, m1, &nan_logs) == Status::not_finite);
      CHECK(std::equal(im1->reward, im1->reward + S * A1, untouched->reward));
      CHECK(m1.reward == nullptr);
      M1 inf_logs = log1;
      inf_logs(0, 0) = -std::numeric_limits<Real>::infinity();
      pbrl::Mdp<Real, S, A2> m2;
      CHECK(pbrl::player2_mdp(g, pi1, *im2, m2, &inf_logs) == Status::not_finite);
      CHECK(m2.reward == nullptr);
    }
    // Best responses: soft value iteration on each induced MDP.
    const auto [best1, b1] = best_response(mdp1, *ws);
    const auto [best2, b2] = best_response(mdp2, *ws);
    CHECK_CLOSE(b1.value_rho, mdp1.rho().dot(best1.value), Real(10) * kTight, vs);
    CHECK_CLOSE(-b2.value_rho, joint_value(g, pi1, best2.pi).dot(mdp1.rho()), Real(10) * kTight, vs);
    for (int other = 0; other < 5; ++other) {
      const M1 q1 = random_policy<S, A1>(rng);
      const M2 q2 = random_policy<S, A2>(rng);
      CHECK(g.rho().dot(joint_value(g, best1.pi, pi2)) >= g.rho().dot(joint_value(g, q1, pi2)) - kTight);
      CHECK(g.rho().dot(joint_value(g, pi1, best2.pi)) <= g.rho().dot(joint_value(g, pi1, q2)) + kTight);
    }
  }

  // Validation: tau must agree; a bad policy leaves the induced storage untouched.
  Game bad = g;
  bad.regularizer2.tau = Real(0.2);
  CHECK(pbrl::validate(bad) == Status::bad_regularization);
  pbrl::Mdp<Real, S, A1> mdp1;
  CHECK(pbrl::player1_mdp(bad, M2(M2::Constant(Real(1) / A2)), *im1, mdp1) == Status::bad_regularization);
  const auto before = std::make_unique<pbrl::InducedModel<Real, S, A1>>(*im1);
  M2 not_a_policy = M2::Constant(Real(1) / A2);
  not_a_policy(1, 0) = Real(0.9);
  CHECK(pbrl::player1_mdp(g, not_a_policy, *im1, mdp1) == Status::bad_policy);
  CHECK(std::equal(im1->reward, im1->reward + S * A1, before->reward));
  CHECK(std::equal(im1->transition, im1->transition + S * A1 * S, before->transition));
  CHECK(mdp1.reward == nullptr);
}

TEST_CASE("Nikaido-Isoda penalty: non-negative, zero exactly at the regularized Nash equilibrium") {
  pbrl::Rng rng(72);
  const Mixture problem(73);
  NiProbe<Mixture> probe{problem};
  auto model = std::make_unique<Mixture::Model>();
  auto bws = std::make_unique<pbrl::BestResponseWorkspace<Real, S, A1, A2>>();
  for (int instance = 0; instance < 3; ++instance) {
    const Mixture::Params x = random_x(rng);
    Game g;
    REQUIRE(problem.build(x, *model, g) == Status::ok);
    REQUIRE(pbrl::validate(g) == Status::ok);
    for (int trial = 0; trial < 5; ++trial) {
      const M1 pi1 = random_policy<S, A1>(rng);
      const M2 pi2 = random_policy<S, A2>(rng);
      const Real psi = probe(x, pi1, pi2);
      Real exact = -1;
      REQUIRE(pbrl::nikaido_isoda_exact(g, pi1, pi2, 20000, Real(0), *bws, exact) == Status::ok);
      CHECK(psi > Real(0));
      CHECK_CLOSE(psi, exact, Real(10) * kTight, Real(1));
    }
    // The equilibrium from Shapley's iteration: each policy is the other's best response, psi = 0.
    const auto ne = regularized_nash(g);
    Real exact = -1;
    REQUIRE(pbrl::nikaido_isoda_exact(g, ne.pi1, ne.pi2, 20000, Real(0), *bws, exact) == Status::ok);
    const Real tol = kDouble ? Real(1e-9) : Real(2e-3);
    CHECK((bws->pi1 - ne.pi1).cwiseAbs().maxCoeff() <= tol);
    CHECK((bws->pi2 - ne.pi2).cwiseAbs().maxCoeff() <= tol);
    CHECK(std::abs(exact) <= tol);
    CHECK(std::abs(probe(x, ne.pi1, ne.pi2)) <= tol);
    // The game's value at the equilibrium is the Shapley value.
    CHECK((joint_value(g, ne.pi1, ne.pi2) - ne.value).cwiseAbs().maxCoeff() <= tol * ne.value.cwiseAbs().maxCoeff());
  }
}

TEST_CASE("nikaido_isoda_exact says whether each player's soft value iteration met its tolerance") {
  auto data = std::make_unique<GameData<S, A1, A2>>(74);
  const Game g = data->game(Real(0.9), Real(0.1));
  pbrl::Rng rng(75);
  const M1 pi1 = random_policy<S, A1>(rng);
  const M2 pi2 = random_policy<S, A2>(rng);
  const Real tolerance = kDouble ? Real(1e-10) : Real(1e-4);
  auto bws = std::make_unique<pbrl::BestResponseWorkspace<Real, S, A1, A2>>();
  Real psi = -1;
  // Three sweeps from V = 0: psi comes back (ok), flagged as not converged.
  CHECK(pbrl::nikaido_isoda_exact(g, pi1, pi2, 3, tolerance, *bws, psi) == Status::ok);
  CHECK(std::isfinite(psi));
  CHECK_FALSE(bws->result1.converged);
  CHECK_FALSE(bws->result2.converged);
  CHECK(bws->result1.iterations == 3);
  CHECK(bws->result2.iterations == 3);
  bws->value1.setZero();
  bws->value2.setZero();
  CHECK(pbrl::nikaido_isoda_exact(g, pi1, pi2, 20000, tolerance, *bws, psi) == Status::ok);
  CHECK(bws->result1.converged);
  CHECK(bws->result2.converged);
  CHECK(bws->result1.iterations < 20000);
  CHECK(bws->result2.iterations < 20000);
}

TEST_CASE("Nikaido-Isoda gradients match finite differences (x in rewards and transitions)") {
  pbrl::Rng rng(74);
  const Mixture problem(75);
  NiProbe<Mixture> probe{problem};
  const Mixture::Params x = random_x(rng);
  M1 y1, pi1, g1;
  M2 y2, pi2, g2;
  random_softmax_policies(rng, y1, y2, pi1, pi2);
  Mixture::Params gx;
  probe(x, pi1, pi2, &gx, &g1, &g2);
  // x: both envelope terms through J^T, with the transition part.
  check_parameter_gradient(x, gx, [&](const Mixture::Params& xh) { return probe(xh, pi1, pi2); });
  // pi1 and pi2: along the simplex (direct) and through softmax logits.
  check_policy_gradient<S, A1>(y1, g1, [&](const M1& p) { return probe(x, p, pi2); });
  check_policy_gradient<S, A2>(y2, g2, [&](const M2& p) { return probe(x, pi1, p); });
}

TEST_CASE("Nikaido-Isoda on a reward-only problem: one x-product of mu1 - mu2, as the two products and finite differences") {
  static_assert(pbrl::is_reward_only<Incentive>::value, "incentive design declares kRewardOnly = true");
  static_assert(!pbrl::is_reward_only<Mixture>::value, "a problem without kRewardOnly takes the two products");
  pbrl::Rng rng(76);
  // joint_occupancy_difference against two joint occupancies.
  {
    const M1 p1a = random_policy<S, A1>(rng), p1b = random_policy<S, A1>(rng);
    const M2 p2a = random_policy<S, A2>(rng), p2b = random_policy<S, A2>(rng);
    pbrl::StateVector<Real, S> da, db;
    for (int s = 0; s < S; ++s) {
      da(s) = Real(3) * rng.uniform<Real>();
      db(s) = Real(3) * rng.uniform<Real>();
    }
    Joint mua, mub, diff;
    pbrl::joint_occupancy(da, p1a, p2a, mua);
    pbrl::joint_occupancy(db, p1b, p2b, mub);
    const pbrl::StateVector<Real, S> unread = pbrl::StateVector<Real, S>::Zero();  // the points' values
    pbrl::joint_occupancy_difference<Real, S, A1, A2>({p1a, p2a, unread, da}, {p1b, p2b, unread, db}, diff);
    for (int i = 0; i < S * A1 * A2; ++i) CHECK_CLOSE(diff.data()[i], mua.data()[i] - mub.data()[i], kTight, Real(3));
  }
  const auto data = std::make_unique<GameData<S, A1, A2>>(77);
  Incentive problem;
  REQUIRE(problem.init(data->incentive(Real(0.8), Real(0.2))) == Status::ok);
  NiProbe<Incentive> probe{problem};
  Incentive::Params x;
  for (int i = 0; i < Incentive::kParams; ++i) x(i) = Real(4) * rng.uniform<Real>() - Real(2);
  M1 y1, pi1;
  M2 y2, pi2;
  random_softmax_policies(rng, y1, y2, pi1, pi2);
  Incentive::Params gx;
  probe(x, pi1, pi2, &gx);
  REQUIRE(gx.cwiseAbs().maxCoeff() > Real(0));
  check_parameter_gradient(x, gx, [&](const Incentive::Params& xh) { return probe(xh, pi1, pi2); });
  // The two products the other problems take, from the same evaluations.
  Game g;
  REQUIRE(problem.build(x, *probe.model, g) == Status::ok);
  pbrl::Mdp<Real, S, A1> mdp1;
  pbrl::Mdp<Real, S, A2> mdp2;
  REQUIRE(pbrl::player1_mdp(g, pi2, *probe.m1, mdp1) == Status::ok);
  const auto [best1, e1] = best_response(mdp1, *probe.ws);
  REQUIRE(pbrl::player2_mdp(g, pi1, *probe.m2, mdp2) == Status::ok);
  const auto [best2, e2] = best_response(mdp2, *probe.ws);
  Joint mu;
  Incentive::Params two = Incentive::Params::Zero();
  pbrl::joint_occupancy(e1.occupancy, best1.pi, pi2, mu);
  problem.vjp(*probe.model, mu, e1.value, Real(1), two);
  pbrl::joint_occupancy(e2.occupancy, pi1, best2.pi, mu);
  problem.vjp(*probe.model, mu, pbrl::StateVector<Real, S>(-e2.value), Real(-1), two);
  for (int k = 0; k < Incentive::kParams; ++k) CHECK_CLOSE(gx(k), two(k), kTight, two.cwiseAbs().maxCoeff());
}

TEST_CASE("Nikaido-Isoda penalty is gradient dominated in pi (Lemma 'Gradient dominance of psi' (b))") {
  // max_{pi' in Pi} <grad_pi psi, pi - pi'> >= (1 - gamma) min_s rho(s) psi, direct coordinates,
  // the max over the simplex per state: <g(s), pi(s)> - min_a g(s, a).
  pbrl::Rng rng(76);
  for (int instance = 0; instance < 3; ++instance) {
    const Mixture problem(77 + instance);
    NiProbe<Mixture> probe{problem};
    const Mixture::Params x = random_x(rng);
    Game g;
    REQUIRE(problem.build(x, *probe.model, g) == Status::ok);
    const Real mu = (Real(1) - g.discount) * g.rho().minCoeff();
    Real worst = std::numeric_limits<Real>::infinity();
    for (int trial = 0; trial < 10; ++trial) {
      const M1 pi1 = random_policy<S, A1>(rng);
      const M2 pi2 = random_policy<S, A2>(rng);
      M1 g1;
      M2 g2;
      Mixture::Params gx;
      const Real psi = probe(x, pi1, pi2, &gx, &g1, &g2);
      Real lhs(0);
      for (int s = 0; s < S; ++s) {
        lhs += g1.row(s).dot(pi1.row(s)) - g1.row(s).minCoeff();
        lhs += g2.row(s).dot(pi2.row(s)) - g2.row(s).minCoeff();
      }
      CHECK(psi > Real(0));
      CHECK(lhs >= mu * psi - kTight);
      worst = std::min(worst, lhs / psi);
    }
    MESSAGE("instance ", instance, ": min over trials of max<grad psi, pi - pi'> / psi = ", worst,
            " >= mu = (1-gamma) min rho = ", mu);
  }
}

// Whether a game problem's vjp() could be given an x (it takes the model build() made instead).
template <class P, class = void>
struct vjp_takes_x : std::false_type {};
template <class P>
struct vjp_takes_x<P, std::void_t<decltype(std::declval<const P&>().vjp(
                          std::declval<const typename P::Params&>(),
                          std::declval<const JointT<P::kStates, P::kActions1, P::kActions2>&>(),
                          std::declval<const Vec<P::kStates>&>(), Real(1), std::declval<typename P::Params&>()))>>
    : std::true_type {};

TEST_CASE("incentive design: build, vjp, f and its gradients") {
  pbrl::Rng rng(80);
  const auto data = std::make_unique<GameData<S, A1, A2>>(81);
  Incentive problem, with_cost;
  REQUIRE(problem.init(data->incentive(Real(0.8), Real(0.2))) == Status::ok);
  REQUIRE(with_cost.init(data->incentive(Real(0.8), Real(0.2), true)) == Status::ok);
  auto model = std::make_unique<Incentive::Model>();
  auto ws = std::make_unique<WsT<S>>();
  auto im1 = std::make_unique<pbrl::InducedModel<Real, S, A1>>();
  Incentive::Params x;
  for (int i = 0; i < Incentive::kParams; ++i) x(i) = Real(4) * rng.uniform<Real>() - Real(2);
  Game g;
  REQUIRE(problem.build(x, *model, g) == Status::ok);
  for (int i = 0; i < Incentive::kParams; ++i)
    CHECK_CLOSE(g.reward[i], data->reward[i] + Real(0.2) / (Real(1) + std::exp(-x(i))), kTight, Real(1));
  CHECK(g.transition == data->transition);

  const M1 pi1 = random_policy<S, A1>(rng);
  const M2 pi2 = random_policy<S, A2>(rng);
  // vjp: grad_x V^{pi1,pi2}(rho) = J^T(mu, V).
  auto value_at = [&](const Incentive::Params& xh, pbrl::Evaluation<Real, S, A1>& e) {
    Game gh;
    pbrl::Mdp<Real, S, A1> m1;
    REQUIRE(problem.build(xh, *model, gh) == Status::ok);
    REQUIRE(pbrl::player1_mdp(gh, pi2, *im1, m1) == Status::ok);
    REQUIRE(pbrl::evaluate(m1, pi1, *ws, e) == Status::ok);
    return e.value_rho;
  };
  pbrl::Evaluation<Real, S, A1> e;
  value_at(x, e);
  Joint mu;
  pbrl::joint_occupancy(e.occupancy, pi1, pi2, mu);
  Incentive::Params gx = Incentive::Params::Zero();
  problem.vjp(*model, mu, e.value, Real(1), gx);  // value_at(x) built the model at x
  for (int i = 0; i < Incentive::kParams; ++i) {
    const Real fd = central_difference([&](Real h) {
      Incentive::Params xh = x;
      xh(i) += h;
      pbrl::Evaluation<Real, S, A1> eh;
      return value_at(xh, eh);
    });
    CHECK_CLOSE(gx(i), fd, kFdTol, gx.cwiseAbs().maxCoeff());
  }

  // The model keeps c_x sigmoid'(x) for vjp() and sample_vjp(): what the formula gives, to the bit,
  // and the gradients of the x the model was built for (vjp takes no x, so none other can be
  // paired with it): after a rebuild at x2 they are x2's.
  REQUIRE(problem.build(x, *model, g) == Status::ok);
  for (int i = 0; i < Incentive::kParams; ++i) {
    const Real sg = pbrl::sigmoid(x(i));
    CHECK(model->slope[i] == Real(0.2) * sg * (Real(1) - sg));
  }
  Incentive::Params x2 = -x;
  x2(0) = Real(1.5);
  Game g2;
  REQUIRE(problem.build(x2, *model, g2) == Status::ok);
  Incentive::Params at_x2 = Incentive::Params::Constant(Real(0.25)), sampled_x2 = at_x2;
  problem.vjp(*model, mu, e.value, Real(-0.5), at_x2);
  // The same expression as the library's; a compiler may fuse a multiply-add in one and not the other.
  const auto fused = [](Real a, Real b) {
    return std::abs(a - b) <= Real(4) * std::numeric_limits<Real>::epsilon() * std::abs(b);
  };
  for (int i = 0; i < Incentive::kParams; ++i) {
    const Real sg = pbrl::sigmoid(x2(i));
    const Real slope = Real(0.2) * sg * (Real(1) - sg);
    CHECK(model->slope[i] == slope);
    CHECK(fused(at_x2(i), Real(0.25) + Real(-0.5) * mu(i / (A1 * A2), i % (A1 * A2)) * slope));
    problem.sample_vjp(*model, {i / (A1 * A2), i % (A1 * A2), 0, Real(0.7), Real(9)}, sampled_x2);
    CHECK(fused(sampled_x2(i), Real(0.25) + Real(0.7) * slope));
  }
  static_assert(!vjp_takes_x<Incentive>::value, "vjp() reads x's factors from the model only");

  // f = -V_id(rho): no x-gradient, policy gradients against finite differences.
  pbrl::Evaluation<Real, S, A1 * A2> scratch;
  auto f_at = [&](const Incentive& p, const M1& q1, const M2& q2, Incentive::Params* fx, M1* f1, M2* f2) {
    return designer_f(p, x, q1, q2, *model, *ws, scratch, fx, f1, f2);
  };
  M1 y1, q1, f1;
  M2 y2, q2, f2;
  random_softmax_policies(rng, y1, y2, q1, q2);
  Incentive::Params fx;
  const Real f = f_at(problem, q1, q2, &fx, &f1, &f2);
  CHECK(fx.cwiseAbs().maxCoeff() == Real(0));
  check_policy_gradient<S, A1>(y1, f1, [&](const M1& p) { return f_at(problem, p, q2, nullptr, nullptr, nullptr); });
  check_policy_gradient<S, A2>(y2, f2, [&](const M2& p) { return f_at(problem, q1, p, nullptr, nullptr, nullptr); });
  // The designer's cost adds sum_s d_id(s) c(s) to f.
  const Real fc = f_at(with_cost, q1, q2, nullptr, nullptr, nullptr);
  CHECK_CLOSE(fc, f + scratch.occupancy.dot(Eigen::Map<const Vec<S>>(data->cost)), kTight, std::abs(fc));

  // Validation: out-of-box x, bad designer data.
  Incentive::Params outside = x;
  outside(3) = Real(6);
  CHECK(problem.build(outside, *model, g) == Status::out_of_bounds);
  auto bad = data->incentive(Real(0.8), Real(0.2));
  bad.designer_transition = nullptr;
  Incentive fresh;
  CHECK(fresh.init(bad) == Status::null_pointer);
  CHECK(fresh.validate_parameters(x) == Status::not_initialized);
  {
    Real f = Real(-42.5);
    Incentive::Params dx = Incentive::Params::Constant(Real(3.25));
    M1 d1;
    M2 d2;
    CHECK(fresh.upper(M1::Constant(Real(1) / A1), M2::Constant(Real(1) / A2), *model, *ws, scratch, f, dx, d1, d2) ==
          Status::not_initialized);  // upper() takes no x: it checks that the problem is ready
    CHECK(f == Real(-42.5));
    CHECK(dx == Incentive::Params::Constant(Real(3.25)));
  }
  bad = data->incentive(Real(0.8), Real(0.2));
  bad.regularizer2.tau = Real(0.1);
  CHECK(fresh.init(bad) == Status::bad_regularization);
}

TEST_CASE("meta-gradient: occupancy derivative, exact mixed derivative and meta-gradient against finite differences") {
  pbrl::Rng rng(82);
  const auto data = std::make_unique<GameData<S, A1, A2>>(83);
  Incentive problem;
  REQUIRE(problem.init(data->incentive(Real(0.8), Real(0.2))) == Status::ok);
  auto model = std::make_unique<Incentive::Model>();
  auto ws = std::make_unique<WsT<S>>();
  auto im1 = std::make_unique<pbrl::InducedModel<Real, S, A1>>();
  const Incentive::Params x = uniform_vector<Incentive::Params>(rng);
  const M1 pi1 = random_policy<S, A1>(rng);
  const M2 pi2 = random_policy<S, A2>(rng);
  const M1 u1 = tangent<S, A1>(rng, Real(0.5));
  const M2 u2 = tangent<S, A2>(rng, Real(0.5));

  struct At {
    Game g;
    pbrl::Mdp<Real, S, A1> mdp1;
    pbrl::Evaluation<Real, S, A1> e;
  };
  auto at = [&](const Incentive::Params& xh, const M1& p1, const M2& p2) {
    At a;
    REQUIRE(problem.build(xh, *model, a.g) == Status::ok);
    REQUIRE(pbrl::player1_mdp(a.g, p2, *im1, a.mdp1) == Status::ok);
    REQUIRE(pbrl::evaluate(a.mdp1, p1, *ws, a.e) == Status::ok);
    return a;
  };
  // mu' against finite differences of the joint occupancy along (u1, u2).
  At a = at(x, pi1, pi2);
  Joint mu_dot;
  Vec<S> warm = Vec<S>::Zero();
  REQUIRE(pbrl::occupancy_directional_derivative(a.g, a.mdp1, {pi1, pi2, a.e.value, a.e.occupancy}, {u1, u2}, *ws,
                                                  warm, mu_dot, true) == Status::ok);
  for (int s = 0; s < S; ++s)
    for (int j = 0; j < A1 * A2; ++j) {
      const Real fd = central_difference([&](Real h) {
        const M1 p1 = pi1 + h * u1;
        const M2 p2 = pi2 + h * u2;
        const At b = at(x, p1, p2);
        Joint mu;
        pbrl::joint_occupancy(b.e.occupancy, p1, p2, mu);
        return mu(s, j);
      });
      CHECK_CLOSE(mu_dot(s, j), fd, kFdTol, mu_dot.cwiseAbs().maxCoeff());
    }
  // Sweeps give the same derivative (rebuild: the finite differences reused the induced storage).
  a = at(x, pi1, pi2);
  {
    auto sws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps>>();
    sws->max_sweeps = 5000;
    Joint swept;
    Vec<S> w2 = Vec<S>::Zero();
    REQUIRE(pbrl::occupancy_directional_derivative(a.g, a.mdp1, {pi1, pi2, a.e.value, a.e.occupancy}, {u1, u2}, *sws,
                                                    w2, swept) == Status::ok);
    CHECK((swept - mu_dot).cwiseAbs().maxCoeff() <= (kDouble ? Real(1e-9) : Real(1e-3)));
  }

  // grad_x [u . grad_pi V] = J^T(mu', .) against finite differences of the exact directional derivative.
  auto directional = [&](const Incentive::Params& xh) {
    const At b = at(xh, pi1, pi2);
    M1 g1 = M1::Zero();
    M2 g2 = M2::Zero();
    pbrl::add_game_policy_gradients(b.g, {pi1, pi2, b.e.value, b.e.occupancy}, Real(1), &g1, Real(1), &g2);
    return (u1.cwiseProduct(g1)).sum() + (u2.cwiseProduct(g2)).sum();
  };
  Incentive::Params mixed = Incentive::Params::Zero();
  Game gx_game;
  REQUIRE(problem.build(x, *model, gx_game) == Status::ok);  // the model at x (the probes above rebuilt it)
  problem.vjp(*model, mu_dot, a.e.value, Real(1), mixed);
  check_parameter_gradient(x, mixed, [&](const Incentive::Params& xh) { return directional(xh); });

  // The baseline's meta-gradient is d/dx f(pi(y + eta G(x, y))) (T = 1), both parameterizations.
  using Meta = pbrl::MetaGradient<Incentive>;
  auto meta = std::make_unique<Meta>();
  for (auto param : {Parameterization::softmax, Parameterization::direct}) {
    CAPTURE(static_cast<int>(param));
    pbrl::MetaGradientSettings<Real> ms;
    ms.policy.parameterization = param;
    ms.policy.floor = Real(1e-2);
    ms.agent_step = param == Parameterization::softmax ? Real(0.5) : Real(0.05);
    const M1 y1 = param == Parameterization::softmax ? random_logits<S, A1>(rng) : random_policy<S, A1>(rng);
    const M2 y2 = param == Parameterization::softmax ? random_logits<S, A2>(rng) : random_policy<S, A2>(rng);
    REQUIRE(meta->init(problem, ms, x, y1, y2) == Status::ok);
    Meta::Report r;
    REQUIRE(meta->step(&r) == Status::ok);
    const Incentive::Params grad = meta->meta_gradient();
    CHECK(r.meta_gradient_norm > Real(0));
    for (int i = 0; i < Incentive::kParams; ++i) {
      const Real fd = central_difference([&](Real h) {
        Incentive::Params xh = x;
        xh(i) += h;
        Meta::Report rh;
        REQUIRE(meta->init(problem, ms, xh, y1, y2) == Status::ok);
        REQUIRE(meta->step(&rh) == Status::ok);
        return rh.upper_objective;
      });
      CHECK_CLOSE(grad(i), fd, kFdTol, grad.cwiseAbs().maxCoeff());
    }
  }
}

namespace {
template <int S_, int A1_, int A2_>
struct IncentiveInstance {
  GameData<S_, A1_, A2_> data;
  pbrl::IncentiveDesign<Real, S_, A1_, A2_> problem;
  IncentiveInstance(std::uint32_t seed, Real gamma, Real tau) : data(seed) {
    REQUIRE(problem.init(data.incentive(gamma, tau)) == Status::ok);
  }
};

pbrl::PbrlZeroSumSettings<Real> zero_sum_settings() {
  // Incentive design, S = 4, A1 = 2, A2 = 3, gamma = 0.8, tau = 0.1 (choices of this test, ERRATA 7):
  // exact gradients, softmax policies, PMD oracle T = 10 (eta = 1), lambda = 20.
  pbrl::PbrlZeroSumSettings<Real> s;
  s.inner_steps = 10;
  s.oracle_step = Real(1);
  s.step_x = Real(0.5);
  s.step_pi = Real(0.05);
  s.lambda_start = s.lambda_final = Real(20);
  return s;
}
}  // namespace

TEST_CASE("PbrlZeroSum on incentive design drives psi towards 0 and beats the start line; so does meta-gradient") {
  using Solver = pbrl::PbrlZeroSum<Incentive>;
  using Meta = pbrl::MetaGradient<Incentive>;
  auto inst = std::make_unique<IncentiveInstance<S, A1, A2>>(1, Real(0.8), Real(0.1));
  const Incentive& problem = inst->problem;
  auto model = std::make_unique<Incentive::Model>();
  auto ws = std::make_unique<WsT<S>>();
  auto bws = std::make_unique<pbrl::BestResponseWorkspace<Real, S, A1, A2>>();
  pbrl::Evaluation<Real, S, A1 * A2> scratch;
  auto f_of = [&](const Incentive::Params& x, const M1& p1, const M2& p2) {
    return designer_f(problem, x, p1, p2, *model, *ws, scratch);
  };
  auto psi_of = [&](const Incentive::Params& x, const M1& p1, const M2& p2) {
    Game g;
    REQUIRE(problem.build(x, *model, g) == Status::ok);
    Real psi = -1;
    REQUIRE(pbrl::nikaido_isoda_exact(g, p1, p2, 20000, Real(0), *bws, psi) == Status::ok);
    return psi;
  };

  // Start line: f at the Nash equilibrium without incentive (x = 0: sigmoid constant), and the
  // agents' policy-gradient learning with x held, which should reach it.
  const Incentive::Params x0 = Incentive::Params::Zero();
  Game g0;
  REQUIRE(problem.build(x0, *model, g0) == Status::ok);
  const auto ne = regularized_nash(g0);
  const Real start_line = f_of(x0, ne.pi1, ne.pi2);
  const int K = 300;
  auto meta = std::make_unique<Meta>();
  pbrl::MetaGradientSettings<Real> ms;
  ms.agent_step = Real(0.5);
  ms.designer_step = Real(20);
  ms.learn_incentive = false;
  REQUIRE(meta->init(problem, ms, x0, M1::Zero(), M2::Zero()) == Status::ok);
  Meta::Report held;
  REQUIRE(meta->run(K, &held) == Status::ok);
  CHECK(meta->x() == x0);
  CHECK(meta->meta_gradient().cwiseAbs().maxCoeff() == Real(0));
  CHECK_CLOSE(held.upper_objective, start_line, Real(1e-2), std::abs(start_line));

  // PBRL: psi -> 0 while f goes well below the start line.
  auto solver = std::make_unique<Solver>();
  const auto settings = zero_sum_settings();
  REQUIRE(solver->init(problem, settings, x0, M1::Zero(), M2::Zero()) == Status::ok);
  Solver::Report first, last;
  REQUIRE(solver->step(&first) == Status::ok);
  REQUIRE(solver->run(K, &last) == Status::ok);
  M1 p1;
  M2 p2;
  solver->policy1(p1);
  solver->policy2(p2);
  const Real psi_end = psi_of(solver->x(), p1, p2);
  MESSAGE("PBRL zero-sum: f ", first.upper_objective, " -> ", last.upper_objective, " (start line ", start_line,
          "), psi ", first.penalty, " -> ", last.penalty, " (exact at the end ", psi_end, "), |G| ",
          first.projected_gradient_norm, " -> ", last.projected_gradient_norm);
  CHECK(first.penalty > Real(0.1));
  CHECK(last.penalty <= Real(0.01) * first.penalty);
  CHECK(psi_end <= Real(0.01) * first.penalty);
  CHECK_CLOSE(last.penalty, psi_end, Real(1e-3), Real(1));  // warm-started PMD is near exact
  CHECK(last.upper_objective <= start_line - Real(0.2) * std::abs(start_line));
  CHECK(last.projected_gradient_norm <= Real(0.05) * first.projected_gradient_norm);
  CHECK(problem.validate_parameters(solver->x()) == Status::ok);

  // Meta-gradient: f improves over the start line and over its own start.
  ms.learn_incentive = true;
  REQUIRE(meta->init(problem, ms, x0, M1::Zero(), M2::Zero()) == Status::ok);
  Meta::Report mfirst, mlast;
  REQUIRE(meta->step(&mfirst) == Status::ok);
  REQUIRE(meta->run(K, &mlast) == Status::ok);
  meta->policy1(p1);
  meta->policy2(p2);
  const Real meta_psi = psi_of(meta->x(), p1, p2);
  MESSAGE("meta-gradient: f ", mfirst.upper_objective, " -> ", mlast.upper_objective, ", psi at the end ", meta_psi);
  CHECK(mlast.upper_objective < start_line - Real(0.1) * std::abs(start_line));
  CHECK(mlast.upper_objective < mfirst.upper_objective);
  CHECK(meta_psi <= Real(0.01));
  CHECK(problem.validate_parameters(meta->x()) == Status::ok);
}

namespace {
// An incentive design whose upper() puts a NaN into one gradient: the step's new x (the box's
// projection keeps a NaN) or new y1 is then not finite, which the solver must refuse.
struct NanGradientIncentive : Incentive {
  int block = 0;  // 0: grad_x, 1: grad_pi1
  template <EvaluationMethod M>
  Status upper(const M1& pi1, const M2& pi2, Model& model, pbrl::EvaluationWorkspace<Real, S, M>& ws,
               pbrl::Evaluation<Real, S, A1 * A2>& scratch, Real& f, Params& grad_x, M1& grad_pi1,
               M2& grad_pi2) const {
    const Status st = Incentive::upper(pi1, pi2, model, ws, scratch, f, grad_x, grad_pi1, grad_pi2);
    (block == 0 ? grad_x(3) : grad_pi1(1, 0)) = std::numeric_limits<Real>::quiet_NaN();
    return st;
  }
};
}  // namespace

TEST_CASE("PbrlZeroSum: a step whose new x or y is not finite is a numerical failure and changes nothing") {
  using Solver = pbrl::PbrlZeroSum<NanGradientIncentive>;
  GameData<S, A1, A2> data(3);
  for (int block : {0, 1}) {
    CAPTURE(block);
    NanGradientIncentive problem;
    REQUIRE(problem.init(data.incentive(Real(0.8), Real(0.1))) == Status::ok);
    problem.block = block;
    auto solver = std::make_unique<Solver>();
    REQUIRE(solver->init(problem, zero_sum_settings(), Incentive::Params::Constant(Real(0.5)), M1::Zero(),
                         M2::Zero()) == Status::ok);
    const auto before = std::make_unique<Solver>(*solver);
    Solver::Report report;
    report.iteration = -7;
    CHECK(solver->step(&report) == Status::numerical_failure);
    CHECK(report.iteration == -7);
    CHECK(solver->iteration() == 0);
    CHECK(solver->x() == before->x());
    CHECK(solver->y1() == before->y1());
    CHECK(solver->y2() == before->y2());
    CHECK(solver->oracle_policy1() == before->oracle_policy1());
  }
}

TEST_CASE("PbrlZeroSum: report, lambda ramp, oracles, sweeps and error paths") {
  using Solver = pbrl::PbrlZeroSum<Incentive>;
  auto inst = std::make_unique<IncentiveInstance<S, A1, A2>>(2, Real(0.8), Real(0.1));
  const Incentive& problem = inst->problem;
  auto solver = std::make_unique<Solver>();
  const Incentive::Params x0 = Incentive::Params::Zero();

  // Before init and failed inits: nothing changes.
  CHECK(solver->step() == Status::not_initialized);
  auto settings = zero_sum_settings();
  settings.lambda_start = Real(1);
  settings.lambda_final = Real(3);
  settings.lambda_ramp = 4;
  auto bad = settings;
  bad.step_pi = Real(0);
  CHECK(solver->init(problem, bad, x0, M1::Zero(), M2::Zero()) == Status::bad_step_size);
  bad = settings;
  bad.inner_steps = -1;
  CHECK(solver->init(problem, bad, x0, M1::Zero(), M2::Zero()) == Status::bad_setting);
  CHECK(solver->init(problem, settings, Incentive::Params::Constant(Real(9)), M1::Zero(), M2::Zero()) ==
        Status::out_of_bounds);
  CHECK(solver->init(problem, settings, x0, M1::Constant(Real(99)), M2::Zero()) == Status::bad_policy);
  CHECK(solver->step() == Status::not_initialized);

  REQUIRE(solver->init(problem, settings, x0, M1::Zero(), M2::Zero()) == Status::ok);
  const Real expected[] = {1, 1.5, 2, 2.5, 3, 3};
  solver_support::check_lambda_ramp(*solver, expected, [](const Solver::Report& r) {
    CHECK_CLOSE(r.penalty, r.best_response_value1 - r.best_response_value2, kTight, Real(1));
    CHECK(r.projected_gradient_norm > Real(0));
  });
  CHECK(solver->iteration() == 6);

  // A failing step (sweeps budget of 0 is rejected) keeps x, y, the warm starts and the count.
  auto swept = std::make_unique<pbrl::PbrlZeroSum<Incentive, EvaluationMethod::sweeps>>();
  REQUIRE(swept->init(problem, settings, x0, M1::Zero(), M2::Zero()) == Status::ok);
  REQUIRE(swept->run(3) == Status::ok);
  const Incentive::Params x_before = swept->x();
  const M1 y1_before = swept->y1(), hat1_before = swept->oracle_policy1();
  const M2 y2_before = swept->y2(), hat2_before = swept->oracle_policy2();
  swept->evaluation_workspace().max_sweeps = 0;
  Solver::Report untouched;
  untouched.iteration = -7;
  CHECK(swept->step(&untouched) == Status::bad_setting);
  CHECK(untouched.iteration == -7);
  CHECK(swept->x() == x_before);
  CHECK(swept->y1() == y1_before);
  CHECK(swept->y2() == y2_before);
  CHECK(swept->oracle_policy1() == hat1_before);
  CHECK(swept->oracle_policy2() == hat2_before);
  CHECK(swept->iteration() == 3);

  // Sweeps follow the direct solve.
  swept->evaluation_workspace().max_sweeps = 3000;
  REQUIRE(solver->init(problem, settings, x0, M1::Zero(), M2::Zero()) == Status::ok);
  REQUIRE(swept->init(problem, settings, x0, M1::Zero(), M2::Zero()) == Status::ok);
  REQUIRE(solver->run(20) == Status::ok);
  REQUIRE(swept->run(20) == Status::ok);
  check_follows_direct(solver->x(), swept->x());
  check_follows_direct(solver->y1(), swept->y1());
  check_follows_direct(solver->y2(), swept->y2());

  // Every oracle and both parameterizations decrease F = f + lambda psi.
  for (auto oracle : {pbrl::OracleKind::policy_mirror_descent, pbrl::OracleKind::policy_gradient,
                      pbrl::OracleKind::soft_value_iteration})
    for (auto param : {Parameterization::softmax, Parameterization::direct}) {
      CAPTURE(static_cast<int>(oracle));
      CAPTURE(static_cast<int>(param));
      auto s = zero_sum_settings();
      s.oracle = oracle;
      s.inner_steps = oracle == pbrl::OracleKind::policy_gradient ? 20 : 10;
      s.policy.parameterization = param;
      s.policy.floor = Real(1e-2);
      s.step_pi = param == Parameterization::softmax ? Real(0.05) : Real(0.005);
      const M1 y1 = param == Parameterization::softmax ? M1(M1::Zero()) : M1(M1::Constant(Real(1) / A1));
      const M2 y2 = param == Parameterization::softmax ? M2(M2::Zero()) : M2(M2::Constant(Real(1) / A2));
      REQUIRE(solver->init(problem, s, x0, y1, y2) == Status::ok);
      Solver::Report first, last;
      REQUIRE(solver->step(&first) == Status::ok);
      REQUIRE(solver->run(150, &last) == Status::ok);
      CHECK(last.objective < first.objective);
      CHECK(last.penalty < Real(0.1) * first.penalty);
      CHECK(pbrl::validate_parameters<Real, S, A1>(s.policy, solver->y1()) == Status::ok);
      CHECK(pbrl::validate_parameters<Real, S, A2>(s.policy, solver->y2()) == Status::ok);
    }
}

TEST_CASE("the paper's incentive-design size (S = 10, A1 = A2 = 5) builds and steps") {
  constexpr int Sp = 10, Ap = 5;
  using Problem = pbrl::IncentiveDesign<Real, Sp, Ap, Ap>;
  using Solver = pbrl::PbrlZeroSum<Problem>;
  using SweepSolver = pbrl::PbrlZeroSum<Problem, EvaluationMethod::sweeps>;
  using Meta = pbrl::MetaGradient<Problem>;
  auto inst = std::make_unique<IncentiveInstance<Sp, Ap, Ap>>(90, Real(0.9), Real(0.1));
  auto solver = std::make_unique<Solver>();
  auto sweep_solver = std::make_unique<SweepSolver>();
  auto meta = std::make_unique<Meta>();
  MESSAGE("sizeof with sizeof(Real) = ", sizeof(Real), ": PbrlZeroSum<IncentiveDesign<Real,10,5,5>> ", sizeof(Solver),
          " bytes direct, ", sizeof(SweepSolver), " bytes sweeps; MetaGradient ", sizeof(Meta),
          " bytes; problem data ", sizeof(inst->data), " bytes");
  sweep_solver->evaluation_workspace().max_sweeps = 3000;
  auto settings = zero_sum_settings();
  settings.inner_steps = 3;
  using Y = pbrl::StateActionMatrix<Real, Sp, Ap>;
  REQUIRE(solver->init(inst->problem, settings, Problem::Params::Zero(), Y::Zero(), Y::Zero()) == Status::ok);
  REQUIRE(sweep_solver->init(inst->problem, settings, Problem::Params::Zero(), Y::Zero(), Y::Zero()) == Status::ok);
  Solver::Report a, b, first;
  REQUIRE(solver->step(&first) == Status::ok);
  REQUIRE(solver->run(9, &a) == Status::ok);
  REQUIRE(sweep_solver->run(10, &b) == Status::ok);
  CHECK(std::isfinite(a.objective));
  CHECK(a.penalty < first.penalty);
  CHECK_CLOSE(a.objective, b.objective, kDouble ? Real(1e-7) : Real(1e-3), std::abs(a.objective));
  pbrl::MetaGradientSettings<Real> ms;
  ms.agent_step = Real(0.5);
  ms.designer_step = Real(20);
  REQUIRE(meta->init(inst->problem, ms, Problem::Params::Zero(), Y::Zero(), Y::Zero()) == Status::ok);
  Meta::Report m;
  REQUIRE(meta->run(10, &m) == Status::ok);
  CHECK(std::isfinite(m.upper_objective));
  CHECK(m.meta_gradient_norm > Real(0));
}

TEST_CASE("an exact-only MetaGradient steps like the default type and refuses sampled mode") {
  auto inst = std::make_unique<IncentiveInstance<S, A1, A2>>(5, Real(0.8), Real(0.3));
  pbrl::Rng rng(43);
  const M1 y1 = random_logits<S, A1>(rng);
  const M2 y2 = random_logits<S, A2>(rng);
  auto init = [&](auto& baseline, pbrl::GradientMode mode) {
    pbrl::MetaGradientSettings<Real> s;
    s.agent_steps = 2;
    s.gradient = mode;
    s.sampling.horizon = 5;
    s.sampling.batch = 3;
    return baseline.init(inst->problem, s, Incentive::Params::Zero(), y1, y2);
  };
  auto same = [](const auto& a, const auto& b) {
    CHECK(a.y1() == b.y1());
    CHECK(a.y2() == b.y2());
    CHECK(a.meta_gradient() == b.meta_gradient());
  };
  check_exact_only_baseline<pbrl::MetaGradient, Incentive>(init, same);
}

// ---- A step in slices (solver/step_slices.hpp) ------------------------------------------------

namespace {
using SliceSolver = pbrl::PbrlZeroSum<Incentive, EvaluationMethod::sweeps>;  // sweeps: a slice can be made to fail

void same_state(const SliceSolver& a, const SliceSolver& b) {
  solver_support::same_common_state(a, b);
  CHECK(a.y1() == b.y1());
  CHECK(a.y2() == b.y2());
  CHECK(a.oracle_policy1() == b.oracle_policy1());
  CHECK(a.oracle_policy2() == b.oracle_policy2());
}

// The settings the slice tests run: every part kind (oracle kinds, tolerance mode, sampled batches).
std::vector<pbrl::PbrlZeroSumSettings<Real>> slice_settings() {
  std::vector<pbrl::PbrlZeroSumSettings<Real>> all;
  auto s = zero_sum_settings();
  s.inner_steps = 3;
  all.push_back(s);  // exact, PMD, T = 3
  s.oracle = pbrl::OracleKind::soft_value_iteration;
  all.push_back(s);  // exact, soft value iteration (one slice of sweeps)
  solver_support::push_tolerance_and_sampled(all, zero_sum_settings());
  return all;
}

std::unique_ptr<SliceSolver> slice_solver(const Incentive& problem, const pbrl::PbrlZeroSumSettings<Real>& s) {
  auto solver = std::make_unique<SliceSolver>();
  solver->evaluation_workspace().max_sweeps = 3000;
  REQUIRE(solver->init(problem, s, Incentive::Params::Zero(), M1::Zero(), M2::Zero()) == Status::ok);
  return solver;
}
}  // namespace

TEST_CASE("a step in slices: the iterates and reports of step() bit for bit, whatever the slicing") {
  auto inst = std::make_unique<IncentiveInstance<S, A1, A2>>(7, Real(0.8), Real(0.1));
  for (const auto& s : slice_settings()) {
    const bool sampled = s.gradient == pbrl::GradientMode::sampled;
    for (int m : {1, 2, 3, pbrl::kAllRollouts}) {
      CAPTURE(static_cast<int>(s.oracle));
      CAPTURE(s.inner_steps);
      CAPTURE(m);
      const auto make = [&] { return slice_solver(inst->problem, s); };
      const auto same_reports = same_report<SliceSolver::Report>;
      solver_support::check_sliced_steps(make, m, same_state, same_reports, [&](const auto& count, int k) {
        const int B = s.sampling.batch, per_batch = m >= B ? 1 : (B + m - 1) / m;
        if (sampled) {
          CHECK(count(pbrl::StepPart::rollouts) == (2 * s.inner_steps + 2) * per_batch);
          CHECK(count(pbrl::StepPart::oracle_step) == 0);
          const long certificate = k % 2 == 0 ? 2 : 0;  // the report's exact evaluations of pi-hat
          CHECK(count(pbrl::StepPart::evaluation) == certificate);
          CHECK(count(pbrl::StepPart::lower_model) == certificate);
          CHECK(count(pbrl::StepPart::penalty) == 0);
        } else {
          CHECK(count(pbrl::StepPart::rollouts) == 0);
          CHECK(count(pbrl::StepPart::lower_model) == 2);
          CHECK(count(pbrl::StepPart::evaluation) == 2);
          CHECK(count(pbrl::StepPart::penalty) == 1);
          const long oracle = count(pbrl::StepPart::oracle_step);
          if (s.oracle == pbrl::OracleKind::soft_value_iteration) CHECK(oracle == 2);
          else if (s.tolerance_mode()) CHECK((oracle >= 2 && oracle <= 2 * s.inner_steps_max));
          else CHECK(oracle == 2 * s.inner_steps);
        }
      });
    }
  }
}

TEST_CASE("a step in slices: checkpoints between slices, restore and failure abandon the step in progress") {
  auto inst = std::make_unique<IncentiveInstance<S, A1, A2>>(8, Real(0.8), Real(0.1));
  constexpr std::size_t kImage = pbrl::checkpoint_size<SliceSolver>();
  for (const auto& s : slice_settings()) {
    CAPTURE(static_cast<int>(s.oracle));
    CAPTURE(static_cast<int>(s.gradient));
    auto reference = slice_solver(inst->problem, s);
    auto solver = slice_solver(inst->problem, s);
    REQUIRE(reference->run(2) == Status::ok);
    REQUIRE(solver->run(2) == Status::ok);
    std::vector<unsigned char> before(kImage), during(kImage);
    REQUIRE(pbrl::save_checkpoint(*solver, before.data(), kImage) == Status::ok);

    // Three slices into step 2: the solver is at iteration 2 and its image is the one before the step.
    pbrl::SliceResult slice;
    for (int i = 0; i < 3; ++i) REQUIRE(solver->step_slice(1, slice) == Status::ok);
    REQUIRE_FALSE(slice.step_done);
    CHECK(solver->step_in_progress());
    CHECK(solver->iteration() == 2);
    REQUIRE(pbrl::save_checkpoint(*solver, during.data(), kImage) == Status::ok);
    CHECK(during == before);

    solver_support::check_refused_slice(*solver, nullptr);

    // Finishing the step in slices: the reference's step 2.
    REQUIRE(reference->step() == Status::ok);
    do {
      REQUIRE(solver->step_slice(2, slice) == Status::ok);
    } while (!slice.step_done);
    same_state(*reference, *solver);

    // Restored between slices (the image before step 2): the step in progress is dropped.
    solver_support::check_restore_between_slices(
        *solver, *reference, before, 2, [&] { return slice_solver(inst->problem, s); }, same_state);

    // A slice that fails abandons the step (one slice in).
    solver_support::check_failed_slice_abandons_step(*solver, *reference, 1, 3000, same_state);
  }
}


TEST_CASE("sampled PbrlZeroSum: a model changed after init() to rows with no mass is refused, never read out of bounds") {
  // The caller's promise (arrays unchanged after init()) broken with a zero transition table or a
  // zero rho: the rollouts draw in range (detail::draw) and step() returns a status with the
  // solver as it was.
  for (int broken = 0; broken < 2; ++broken) {
    CAPTURE(broken);
    auto inst = std::make_unique<IncentiveInstance<S, A1, A2>>(7, Real(0.8), Real(0.1));
    auto s = zero_sum_settings();
    solver_support::set_sampled_policy_gradient(s, 1, 6, 8);
    auto solver = std::make_unique<SliceSolver>();
    REQUIRE(solver->init(inst->problem, s, Incentive::Params::Zero(), M1::Zero(), M2::Zero()) == Status::ok);
    REQUIRE(solver->step() == Status::ok);
    if (broken == 0)
      for (Real& p : inst->data.transition) p = Real(0);
    else
      for (Real& p : inst->data.initial) p = Real(0);
    solver_support::check_step_refused(*solver);
  }
}

}  // namespace test_zero_sum
