// Stackelberg Markov game (paper, Section 2.2, appendix lemma "Stackelberg game cast as BM",
// Lemmas "Gradient form in the applications" (b)) and its baseline, independent policy gradient:
// M(x), the vector-Jacobian product, f and its gradients, both penalties against finite
// differences, the cast to BM against the joint chain computed here independently, PBRL and the
// baseline on small games, and the paper's size (100 states, 5 x 5 actions).
#include "support.hpp"
#include "fd_support.hpp"
#include "game_support.hpp"

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>

#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/problems/stackelberg.hpp"

namespace test_stackelberg {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 4, AL = 3, AF = 2;
using Game = pbrl::Stackelberg<Real, S, AL, AF>;
using Params = Game::Params;
using LeaderMat = Mat<S, AL>;
using FollowerMat = Mat<S, AF>;
using Ws = pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>;
using Eval = pbrl::Evaluation<Real, S, AF>;

// A random game whose arrays live in the object (allocate with std::make_unique), with the
// leader's and the follower's references drawn after them.
template <int NS, int NL, int NF>
struct GameData : StackelbergArrays<Real, NS, NL, NF> {
  using Arrays = StackelbergArrays<Real, NS, NL, NF>;
  Real leader_reference[NS * NL];
  Real follower_reference[NS * NF];

  explicit GameData(std::uint32_t seed, Real sparsity = Real(0)) {
    pbrl::Rng rng(seed);
    this->draw(rng, sparsity);
    for (int s = 0; s < NS; ++s) pbrl::random_distribution(rng, leader_reference + s * NL, NL);
    for (int s = 0; s < NS; ++s) pbrl::random_distribution(rng, follower_reference + s * NF, NF);
  }

  typename pbrl::Stackelberg<Real, NS, NL, NF>::Data data(Real gamma, Real tau_l, Real tau_f,
                                                           RegularizerKind leader = RegularizerKind::entropy,
                                                           RegularizerKind follower = RegularizerKind::entropy,
                                                           Real bound = Real(3)) const {
    typename pbrl::Stackelberg<Real, NS, NL, NF>::Data d = Arrays::data();
    d.discount = gamma;
    d.leader = {leader, tau_l, leader_reference};
    d.follower = {follower, tau_f, follower_reference};
    d.logit_bound = bound;
    return d;
  }
};

template <int NS, int NL, int NF>
struct Instance {
  GameData<NS, NL, NF> game;
  pbrl::Stackelberg<Real, NS, NL, NF> problem;
  Instance(std::uint32_t seed, Real gamma, Real tau_l, Real tau_f, RegularizerKind leader = RegularizerKind::entropy,
           RegularizerKind follower = RegularizerKind::entropy, Real sparsity = Real(0))
      : game(seed, sparsity) {
    REQUIRE(problem.init(game.data(gamma, tau_l, tau_f, leader, follower)) == Status::ok);
  }
};
using SmallInstance = Instance<S, AL, AF>;

// The learning runs' game, a TEST_CASE_FIXTURE (the case reads inst and game): gamma 0.8, tau_l
// 0.05, tau_f 0.2 (both entropy), rewards sparse as the paper's (entries below 0.7 set to 0).
template <std::uint32_t Seed>
struct SparseGame {
  std::unique_ptr<SmallInstance> inst = std::make_unique<SmallInstance>(
      Seed, Real(0.8), Real(0.05), Real(0.2), RegularizerKind::entropy, RegularizerKind::entropy, Real(0.7));
  const Game& game = inst->problem;
};

Params random_x(pbrl::Rng& rng, Real scale = Real(1.5)) {
  Params x;
  for (int k = 0; k < Game::kParams; ++k) x(k) = scale * (Real(2) * rng.uniform<Real>() - Real(1));
  return x;
}

LeaderMat softmax_rows(const Params& x) {
  LeaderMat logits, pi;
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < AL; ++a) logits(s, a) = x(s * AL + a);
  pbrl::policy_from_parameters<Real, S, AL>(pbrl::Parameterization::softmax, logits, pi);
  return pi;
}

int joint(int s, int al, int af) { return (s * AL + al) * AF + af; }

// The game's joint chain under (pi_x, pi_y), solved here with Eigen's LU, independently of M(x):
// V_l, V_f per state (each player's own regularizer only).
struct JointValues {
  Vec<S> leader, follower;
};
JointValues joint_values(const Game& game, const LeaderMat& px, const FollowerMat& py) {
  const auto& d = game.data();
  Eigen::Matrix<Real, S, S> A = Eigen::Matrix<Real, S, S>::Identity();
  Vec<S> cl = Vec<S>::Zero(), cf = Vec<S>::Zero();
  for (int s = 0; s < S; ++s) {
    for (int al = 0; al < AL; ++al)
      for (int af = 0; af < AF; ++af) {
        const Real w = px(s, al) * py(s, af);
        cl(s) += w * d.leader_reward[joint(s, al, af)];
        cf(s) += w * d.follower_reward[joint(s, al, af)];
        for (int t = 0; t < S; ++t) A(s, t) -= d.discount * w * d.transition[joint(s, al, af) * S + t];
      }
    cl(s) -= d.leader.tau * d.leader.value(s, px.row(s));
    cf(s) -= d.follower.tau * d.follower.value(s, py.row(s));
  }
  const Eigen::PartialPivLU<Eigen::Matrix<Real, S, S>> lu(A);
  return {lu.solve(cl), lu.solve(cf)};
}

Real rho_dot(const Game& game, const Vec<S>& v) {
  return pbrl::ConstStateMap<Real, S>(game.data().initial).dot(v);
}

// What every probe holds: the game, a model to build M(x) in and an evaluation workspace.
struct Probe {
  const Game& game;
  std::unique_ptr<Game::Model> model = std::make_unique<Game::Model>();
  std::unique_ptr<Ws> ws = std::make_unique<Ws>();
  explicit Probe(const Game& g) : game(g) {}

  pbrl::Mdp<Real, S, AF> built(const Params& x) {
    pbrl::Mdp<Real, S, AF> m;
    REQUIRE(game.build(x, *model, m) == Status::ok);
    return m;
  }
  // The gradients (dx, dpi) into (gx, gpi) where given.
  static void give(const Params& dx, const FollowerMat& dpi, Params* gx, FollowerMat* gpi) {
    if (gx) *gx = dx;
    if (gpi) *gpi = dpi;
  }
};

// f(x, pi) and its gradients through build() + upper().
struct UpperProbe : Probe {
  using Probe::Probe;
  Eval scratch;
  Real operator()(const Params& x, const FollowerMat& pi, Params* gx = nullptr, FollowerMat* gpi = nullptr) {
    built(x);
    Real f(0);
    Params dx;
    FollowerMat dpi;
    REQUIRE(game.upper(pi, *model, *ws, scratch, f, dx, dpi) == Status::ok);
    give(dx, dpi, gx, gpi);
    return f;
  }
};

// p(x, y) with pi-hat = pi*(x) (soft value iteration); adds its gradients into (gx, gpi) when given.
struct PenaltyProbe : Probe {
  using Probe::Probe;
  Real operator()(PenaltyKind kind, const Params& x, const FollowerMat& pi_y, Params* gx = nullptr,
                  FollowerMat* gpi = nullptr) {
    const pbrl::Mdp<Real, S, AF> m = built(x);
    const auto opt = optimum(m);
    Eval ey, eh;
    REQUIRE(pbrl::evaluate(m, pi_y, *ws, ey) == Status::ok);
    REQUIRE(pbrl::evaluate(m, opt.pi, *ws, eh) == Status::ok);
    Params dx = Params::Zero();
    FollowerMat dpi = FollowerMat::Zero(), weights;
    Real p;
    if (kind == PenaltyKind::value) {
      p = pbrl::value_penalty(game, *model, m, pbrl::PolicyY{pi_y, ey}, pbrl::PolicyHat{opt.pi, eh}, Real(1), weights, {dx, dpi});
    } else {
      Vec<S> warm = Vec<S>::Zero();
      FollowerMat start;
      REQUIRE(pbrl::occupancy_from_start(m, {pi_y, opt.pi}, *ws, warm, start, true) == Status::ok);
      p = pbrl::bellman_penalty(game, *model, m, pbrl::PolicyY{pi_y}, pbrl::PolicyHat{opt.pi, eh}, start, Real(1), weights, {dx, dpi});
    }
    give(dx, dpi, gx, gpi);
    return p;
  }
};

// Values of a (x, pi_y) pair through the problem's helpers.
struct ValueProbe : Probe {
  using Probe::Probe;
  std::unique_ptr<Game::FollowerOptimum> opt = std::make_unique<Game::FollowerOptimum>();
  Eval eval;
  Real leader(const Params& x, const FollowerMat& pi) {
    Real v(0);
    REQUIRE(game.leader_value(x, pi, *model, *ws, eval, v) == Status::ok);
    return v;
  }
  Real follower(const Params& x, const FollowerMat& pi) {
    Real v(0);
    REQUIRE(game.follower_value(x, pi, *model, *ws, eval, v) == Status::ok);
    return v;
  }
  Real gap(const Params& x, const FollowerMat& pi) {
    Real g(0);
    REQUIRE(game.follower_gap(x, pi, *model, *ws, eval, *opt, g) == Status::ok);
    return g;
  }
};
}  // namespace

TEST_CASE("Stackelberg build: M(x) averages the follower's reward and the transitions over pi_x") {
  auto inst = std::make_unique<SmallInstance>(301, Real(0.8), Real(0.1), Real(0.3));
  const Game& game = inst->problem;
  const auto& d = game.data();
  auto model = std::make_unique<Game::Model>();
  pbrl::Rng rng(31);
  for (int trial = 0; trial < 3; ++trial) {
    const Params x = random_x(rng, Real(3));
    pbrl::Mdp<Real, S, AF> m;
    REQUIRE(game.build(x, *model, m) == Status::ok);
    CHECK(m.reward == model->reward);
    CHECK(m.transition == model->transition);
    CHECK(m.initial == d.initial);
    CHECK(m.discount == d.discount);
    CHECK(m.tau() == d.follower.tau);
    CHECK(pbrl::validate(m) == Status::ok);
    const LeaderMat px = softmax_rows(x);
    LeaderMat px_helper;
    REQUIRE(game.leader_policy(x, px_helper) == Status::ok);
    CHECK((px_helper - px).cwiseAbs().maxCoeff() <= kTight);
    // pi_x and its logs, taken once here for vjp(), sample_vjp() and upper(): leader_policy's
    // numbers to the bit, and logs within a few eps of log pi_x.
    for (int s = 0; s < S; ++s)
      for (int al = 0; al < AL; ++al) {
        CHECK(model->leader_policy[s * AL + al] == px_helper(s, al));
        CHECK_CLOSE(model->leader_log_policy[s * AL + al], std::log(px_helper(s, al)), kTight, Real(1));
      }
    for (int s = 0; s < S; ++s)
      for (int af = 0; af < AF; ++af) {
        Real r(0);
        for (int al = 0; al < AL; ++al) r += px(s, al) * d.follower_reward[joint(s, al, af)];
        CHECK_CLOSE(m.r()(s, af), r, kTight, Real(1));
        Real sum(0);
        for (int t = 0; t < S; ++t) {
          Real p(0);
          for (int al = 0; al < AL; ++al) p += px(s, al) * d.transition[joint(s, al, af) * S + t];
          CHECK_CLOSE(m.P()(s * AF + af, t), p, kTight, Real(1));
          CHECK(m.P()(s * AF + af, t) >= Real(0));
          sum += m.P()(s * AF + af, t);
        }
        CHECK_CLOSE(sum, Real(1), kTight, Real(1));
      }
  }
  // pi_x uniform (x = 0): plain averages over the leader's actions.
  pbrl::Mdp<Real, S, AF> m;
  REQUIRE(game.build(Params::Zero(), *model, m) == Status::ok);
  Real r(0);
  for (int al = 0; al < AL; ++al) r += d.follower_reward[joint(2, al, 1)] / Real(AL);
  CHECK_CLOSE(m.r()(2, 1), r, kTight, Real(1));
}

namespace {
// build() against the formula it had before it wrote each entry once: per (s, a_f) the row of P_x
// zeroed, then A_l passes row += pi_x(a_l|s) P(.|s,a_l,a_f) (Eigen, a_l = 0..AL-1), and r_x summed
// from 0 in the same order. The same numbers (check_same_unless_fused), in the scalar T whatever the suite's
// scalar.
template <typename T, int NS, int NL, int NF>
void check_build_matches_accumulating_formula(std::uint32_t seed) {
  using G = pbrl::Stackelberg<T, NS, NL, NF>;
  struct Arrays : StackelbergArrays<T, NS, NL, NF> {
    T previous_reward[NS * NF], previous_transition[NS * NF * NS];
  };
  auto a = std::make_unique<Arrays>();
  pbrl::Rng rng(seed);
  a->draw(rng, T(0.3));
  typename G::Data d = a->data();
  d.logit_bound = T(4);
  G game;
  REQUIRE(game.init(d) == Status::ok);
  auto model = std::make_unique<typename G::Model>();
  for (int trial = 0; trial < 3; ++trial) {
    typename G::Params x;
    for (int k = 0; k < G::kParams; ++k) x(k) = T(4) * (T(2) * rng.uniform<T>() - T(1));
    pbrl::StateActionMatrix<T, NS, NL> px;
    REQUIRE(game.leader_policy(x, px) == Status::ok);
    pbrl::Mdp<T, NS, NF> m;
    REQUIRE(game.build(x, *model, m) == Status::ok);
    for (int s = 0; s < NS; ++s)
      for (int af = 0; af < NF; ++af) {
        T r(0);
        Eigen::Map<pbrl::StateVector<T, NS>> row(a->previous_transition + (s * NF + af) * NS);
        row.setZero();
        for (int al = 0; al < NL; ++al) {
          const int j = (s * NL + al) * NF + af;
          r += px(s, al) * a->follower_reward[j];
          row.noalias() += px(s, al) * Eigen::Map<const pbrl::StateVector<T, NS>>(a->transition + j * NS);
        }
        a->previous_reward[s * NF + af] = r;
      }
    // Within rounding where fused: sums of AL products, in max |entry|.
    check_same_unless_fused(model->reward, a->previous_reward, NS * NF, double(NL));
    check_same_unless_fused(model->transition, a->previous_transition, NS * NF * NS, double(NL));
  }
}
}  // namespace

TEST_CASE("Stackelberg build writes each entry of M(x) once, the accumulating formula's numbers (to the bit unless fused)") {
#if PBRL_TEST_EVERY_SIZE
  check_build_matches_accumulating_formula<double, 4, 3, 2>(311);
  check_build_matches_accumulating_formula<float, 4, 3, 2>(312);
  // Rows longer than a vector register, and not a multiple of one (vectorized loop and its tail).
  check_build_matches_accumulating_formula<double, 37, 5, 5>(313);
  check_build_matches_accumulating_formula<float, 37, 5, 5>(314);
  check_build_matches_accumulating_formula<double, 100, 5, 5>(315);
  check_build_matches_accumulating_formula<float, 100, 5, 5>(316);
#else
  check_build_matches_accumulating_formula<Real, 4, 3, 2>(311);
  check_build_matches_accumulating_formula<Real, 37, 5, 5>(313);
#endif
}

TEST_CASE("Stackelberg vjp gives grad_x V^pi(rho) and grad_x E_{rho,sigma} Q^pi on M(x)") {
  for (auto kind : {RegularizerKind::entropy, RegularizerKind::kl_reference}) {
    CAPTURE(static_cast<int>(kind));
    auto inst = std::make_unique<SmallInstance>(302, Real(0.8), Real(0.1), Real(0.3), RegularizerKind::entropy, kind);
    const Game& game = inst->problem;
    pbrl::Rng rng(32);
    const FollowerMat pi = random_policy<S, AF>(rng), sigma = random_policy<S, AF>(rng);
    const Params x = random_x(rng);
    auto model = std::make_unique<Game::Model>();
    auto ws = std::make_unique<Ws>();

    auto values = [&](const Params& xx, Real& v_rho, Real& q_rho_sigma) {
      pbrl::Mdp<Real, S, AF> m;
      REQUIRE(game.build(xx, *model, m) == Status::ok);
      Eval e;
      REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
      v_rho = e.value_rho;
      q_rho_sigma = 0;
      for (int s = 0; s < S; ++s) q_rho_sigma += m.rho()(s) * sigma.row(s).dot(e.q.row(s));
    };

    pbrl::Mdp<Real, S, AF> m;
    REQUIRE(game.build(x, *model, m) == Status::ok);
    Eval e;
    REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
    FollowerMat mu, mu_start;
    pbrl::state_action_occupancy(e, pi, mu);
    Vec<S> warm = Vec<S>::Zero();
    REQUIRE(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu_start) == Status::ok);
    Params gv = Params::Zero(), gq = Params::Zero();
    game.vjp(*model, mu, e.value, Real(1), gv);
    game.vjp(*model, mu_start, e.value, Real(1), gq);
    check_value_pair_gradient(x, gv, gq, values);
    // Softmax invariance: the gradient in each state's logits sums to zero.
    for (int s = 0; s < S; ++s) CHECK(std::abs(gv.segment<AL>(s * AL).sum()) <= kTight * (1 + gv.cwiseAbs().maxCoeff()));
    // Linear in w and scaled by scale; adds to grad.
    Params g2 = gv;
    REQUIRE(game.build(x, *model, m) == Status::ok);  // values() left it built for x - h
    game.vjp(*model, mu, e.value, Real(-2), g2);
    CHECK((g2 + gv).cwiseAbs().maxCoeff() <= kTight * (1 + gv.cwiseAbs().maxCoeff()));
  }
}

// vjp_pair({d1, pi1, v1, c1}, {d2, pi2, v2, c2}) against vjp(d1 pi1, v1, c1) + vjp(d2 pi2, v2, c2): the
// same sum, regrouped (one vector u per follower action against P's rows), so within rounding of
// the terms' magnitude; and exactly zero where the two terms cancel term by term (unless fused).
template <int NS, int NL, int NF>
void check_vjp_pair(std::uint32_t seed, Real value_scale) {
  using G = pbrl::Stackelberg<Real, NS, NL, NF>;
  auto inst = std::make_unique<Instance<NS, NL, NF>>(seed, Real(0.95), Real(0.1), Real(0.3));
  const G& game = inst->problem;
  pbrl::Rng rng(seed + 1);
  typename G::Params x;
  for (int k = 0; k < G::kParams; ++k) x(k) = Real(2) * (Real(2) * rng.uniform<Real>() - Real(1));
  auto model = std::make_unique<typename G::Model>();
  pbrl::Mdp<Real, NS, NF> m;
  REQUIRE(game.build(x, *model, m) == Status::ok);
  const Mat<NS, NF> pi1 = random_policy<NS, NF>(rng), pi2 = random_policy<NS, NF>(rng);
  Vec<NS> d1, d2, v1, v2;
  for (int s = 0; s < NS; ++s) {
    d1(s) = Real(5) * rng.uniform<Real>();
    d2(s) = Real(5) * rng.uniform<Real>();
    v1(s) = value_scale * (Real(2) * rng.uniform<Real>() - Real(1));
    v2(s) = value_scale * (Real(2) * rng.uniform<Real>() - Real(1));
  }
  const Real c1 = Real(3.5), c2 = Real(-3.5);
  Mat<NS, NF> w1 = d1.asDiagonal() * pi1, w2 = d2.asDiagonal() * pi2;
  typename G::Params two = G::Params::Constant(Real(0.25)), pair = two, g1 = G::Params::Zero(), g2 = g1;
  game.vjp(*model, w1, v1, c1, two);
  game.vjp(*model, w2, v2, c2, two);
  game.vjp(*model, w1, v1, c1, g1);
  game.vjp(*model, w2, v2, c2, g2);
  game.vjp_pair(*model, {d1, pi1, v1, c1}, {d2, pi2, v2, c2}, pair);  // adds to grad, as vjp()
  // Each entry is a sum of about NF*(NS + 1) terms of size up to |c| d (|r| + |v|).
  const Real magnitude = std::abs(c1) * Real(5) * (Real(1) + value_scale);
  const Real tol = Real(16) * std::numeric_limits<Real>::epsilon() * Real(NF * (NS + 1)) * magnitude;
  CHECK((pair - two).cwiseAbs().maxCoeff() <= tol);
  CHECK((g1 + g2).cwiseAbs().maxCoeff() > Real(10) * tol);  // the comparison is not of zeros
  // Identical terms of opposite sign: u and the reward weight are exactly 0, so is the sum. Where
  // the compiler fuses w1 v1 + w2 v2 (may_fuse, support.hpp), each entry of u is instead the
  // rounding error of one product, and the sum is within the comparison's rounding.
  typename G::Params cancel = G::Params::Zero();
  game.vjp_pair(*model, {d1, pi1, v1, c1}, {d1, pi1, v1, -c1}, cancel);
  if (!may_fuse<Real>())
    CHECK(cancel.cwiseAbs().maxCoeff() == Real(0));
  else
    CHECK(cancel.cwiseAbs().maxCoeff() <= tol);
  // value_penalty takes the pair where the problem has one.
  static_assert(pbrl::has_vjp_pair<G>::value, "Stackelberg offers vjp_pair");
}

TEST_CASE("Stackelberg vjp_pair is the sum of two vjp() calls, one pass over P") {
  check_vjp_pair<S, AL, AF>(331, Real(1));
  check_vjp_pair<S, AL, AF>(332, Real(1e6));  // large values: the tolerance scales with them
  check_vjp_pair<37, 5, 5>(333, Real(10));    // rows longer than a vector register, with a tail
}

// Whether a problem's vjp() could be given an x (it takes the model build() made instead).
template <class P, class = void>
struct vjp_takes_x : std::false_type {};
template <class P>
struct vjp_takes_x<P, std::void_t<decltype(std::declval<const P&>().vjp(
                          std::declval<const typename P::Params&>(), std::declval<const FollowerMat&>(),
                          std::declval<const Vec<S>&>(), Real(1), std::declval<typename P::Params&>()))>>
    : std::true_type {};
static_assert(!vjp_takes_x<Game>::value, "vjp() reads x's softmax from the model, so it takes no x");

TEST_CASE("Stackelberg upper() leaves what vjp() reads of the model as build() made it") {
  auto inst = std::make_unique<SmallInstance>(305, Real(0.8), Real(0.2), Real(0.3));
  const Game& game = inst->problem;
  auto model = std::make_unique<Game::Model>();
  auto ws = std::make_unique<Ws>();
  pbrl::Rng rng(35);
  const Params x = random_x(rng);
  pbrl::Mdp<Real, S, AF> m;
  REQUIRE(game.build(x, *model, m) == Status::ok);
  const auto built = std::make_unique<Game::Model>(*model);
  const FollowerMat pi = random_policy<S, AF>(rng), w = random_policy<S, AF>(rng);
  Vec<S> v;
  for (int t = 0; t < S; ++t) v(t) = rng.uniform<Real>();
  Params before = Params::Zero(), after = Params::Zero(), gx;
  game.vjp(*model, w, v, Real(1), before);
  Eval e;
  Real f(0);
  FollowerMat gpi;
  REQUIRE(game.upper(pi, *model, *ws, e, f, gx, gpi) == Status::ok);
  CHECK(std::equal(std::begin(built->transition), std::end(built->transition), std::begin(model->transition)));
  CHECK(std::equal(std::begin(built->reward), std::end(built->reward), std::begin(model->reward)));
  CHECK(std::equal(std::begin(built->leader_policy), std::end(built->leader_policy), std::begin(model->leader_policy)));
  CHECK(std::equal(std::begin(built->leader_log_policy), std::end(built->leader_log_policy),
                   std::begin(model->leader_log_policy)));
  game.vjp(*model, w, v, Real(1), after);
  CHECK(after == before);
}

TEST_CASE("Stackelberg sample_vjp: grad_x r_x and grad_x log P_x per sample; its expectation is vjp") {
  static_assert(pbrl::has_sample_vjp<Game>::value, "sampled mode needs the per-sample hook");
  auto inst = std::make_unique<SmallInstance>(310, Real(0.8), Real(0.1), Real(0.3));
  const Game& game = inst->problem;
  auto model = std::make_unique<Game::Model>(), at_x = std::make_unique<Game::Model>();
  pbrl::Rng rng(40);
  const Params x = random_x(rng);
  {
    pbrl::Mdp<Real, S, AF> m;
    REQUIRE(game.build(x, *at_x, m) == Status::ok);
  }
  auto at = [&](const Params& xx, int s, int a, int t, bool log_transition) {
    pbrl::Mdp<Real, S, AF> m;
    REQUIRE(game.build(xx, *model, m) == Status::ok);
    return log_transition ? std::log(m.P()(s * AF + a, t)) : m.r()(s, a);
  };
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < AF; ++a) {
      const int t = (s + 3 * a + 1) % S;
      Params gr = Params::Zero(), gp = Params::Zero();
      game.sample_vjp(*at_x, {s, a, t, Real(1), Real(0)}, gr);
      game.sample_vjp(*at_x, {s, a, t, Real(0), Real(1)}, gp);
      for (int k = 0; k < Game::kParams; ++k) {
        const Real fr = central_difference([&](Real h) {
          Params xh = x;
          xh(k) += h;
          return at(xh, s, a, t, false);
        });
        const Real fp = central_difference([&](Real h) {
          Params xh = x;
          xh(k) += h;
          return at(xh, s, a, t, true);
        });
        CHECK_CLOSE(gr(k), fr, kFdTol, gr.cwiseAbs().maxCoeff());
        CHECK_CLOSE(gp(k), fp, kFdTol, gp.cwiseAbs().maxCoeff());
      }
    }
  // sum_{s,a} w(s,a) [grad r_x(s,a) + gamma sum_s' P_x(s'|s,a) grad log P_x(s'|s,a) v(s')] = J^T(w, v)
  pbrl::Mdp<Real, S, AF> m;
  REQUIRE(game.build(x, *model, m) == Status::ok);
  const FollowerMat w = random_policy<S, AF>(rng);
  Vec<S> v;
  for (int t = 0; t < S; ++t) v(t) = Real(4) * rng.uniform<Real>() - Real(1);
  Params expected = Params::Zero(), sampled = Params::Zero();
  game.vjp(*model, w, v, Real(1), expected);
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < AF; ++a) {
      game.sample_vjp(*model, {s, a, 0, w(s, a), Real(0)}, sampled);
      for (int t = 0; t < S; ++t)
        game.sample_vjp(*model, {s, a, t, Real(0), m.P()(s * AF + a, t) * w(s, a) * m.discount * v(t)}, sampled);
    }
  CHECK((sampled - expected).cwiseAbs().maxCoeff() <= kTight * (1 + expected.cwiseAbs().maxCoeff()));

  // Sampled mode of the solver runs on the game (the paper's Monte-Carlo setting: H = 5, B = 16).
  using Solver = pbrl::Pbrl<Game>;
  auto solver = std::make_unique<Solver>();
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    pbrl::PbrlSettings<Real> st;
    st.penalty_kind = kind;
    st.gradient = pbrl::GradientMode::sampled;
    st.oracle = pbrl::OracleKind::policy_gradient;
    st.inner_steps = kind == PenaltyKind::value ? 1 : 10;
    st.oracle_step = st.step_x = st.step_y = Real(0.1);
    st.lambda_start = st.lambda_final = kind == PenaltyKind::value ? Real(2) : Real(7);
    REQUIRE(solver->init(game, st, Params::Zero(), FollowerMat::Zero()) == Status::ok);
    Solver::Report r;
    REQUIRE(solver->run(20, &r) == Status::ok);
    check_report_finite(r);
    CHECK(r.environment_steps == 20 * (st.inner_steps + 2) * 16 * 5);
    CHECK(game.validate_parameters(solver->x()) == Status::ok);
  }
}

TEST_CASE("Stackelberg upper objective: f = -V_l of the joint chain, gradients match finite differences") {
  for (auto kind : {RegularizerKind::entropy, RegularizerKind::kl_reference}) {
    CAPTURE(static_cast<int>(kind));
    auto inst = std::make_unique<SmallInstance>(303, Real(0.8), Real(0.2), Real(0.3), kind);
    const Game& game = inst->problem;
    UpperProbe probe{game};
    pbrl::Rng rng(33);
    const Params x = random_x(rng);
    const FollowerMat pi = random_policy<S, AF>(rng);
    Params gx;
    FollowerMat gpi;
    const Real f = probe(x, pi, &gx, &gpi);
    const JointValues jv = joint_values(game, softmax_rows(x), pi);
    CHECK_CLOSE(f, -rho_dot(game, jv.leader), kTight, std::abs(f));
    CHECK((probe.scratch.value - jv.leader).cwiseAbs().maxCoeff() <= kTight * (1 + jv.leader.cwiseAbs().maxCoeff()));
    // x: through the softmax, including the leader's regularizer
    check_parameter_gradient(x, gx, [&](const Params& xh) { return probe(xh, pi); });
    // the follower's probabilities, along the simplex
    check_simplex_gradient(pi, gpi, gpi.cwiseAbs().maxCoeff(), [&](const FollowerMat& ph) { return probe(x, ph); });
    // grad_pi is the derivative in free coordinates: d(s) * sum_al pi_x (r_l + gamma P V_l),
    // computed here from the joint chain (no regularizer term of the leader in it).
    {
      const LeaderMat px = softmax_rows(x);
      const auto& d = game.data();
      // occupancy of the joint chain
      Eigen::Matrix<Real, S, S> A = Eigen::Matrix<Real, S, S>::Identity();
      for (int s = 0; s < S; ++s)
        for (int al = 0; al < AL; ++al)
          for (int af = 0; af < AF; ++af)
            for (int t = 0; t < S; ++t)
              A(t, s) -= d.discount * px(s, al) * pi(s, af) * d.transition[joint(s, al, af) * S + t];
      const Vec<S> occ = Eigen::PartialPivLU<Eigen::Matrix<Real, S, S>>(A).solve(Vec<S>(pbrl::ConstStateMap<Real, S>(d.initial)));
      for (int s = 0; s < S; ++s)
        for (int af = 0; af < AF; ++af) {
          Real q(0);
          for (int al = 0; al < AL; ++al) {
            Real next(0);
            for (int t = 0; t < S; ++t) next += d.transition[joint(s, al, af) * S + t] * jv.leader(t);
            q += px(s, al) * (d.leader_reward[joint(s, al, af)] + d.discount * next);
          }
          CHECK_CLOSE(gpi(s, af), -occ(s) * q, kTight * Real(10), std::abs(q) * occ(s));
        }
    }
  }
}

TEST_CASE("Stackelberg value and Bellman penalty gradients match finite differences") {
  auto inst = std::make_unique<SmallInstance>(304, Real(0.8), Real(0.1), Real(0.4));
  const Game& game = inst->problem;
  PenaltyProbe probe{game};
  pbrl::Rng rng(34);
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    const Params x = random_x(rng);
    const FollowerMat y = random_logits<S, AF>(rng);
    FollowerMat pi, gpi, gy;
    pbrl::policy_from_parameters<Real, S, AF>(pbrl::Parameterization::softmax, y, pi);
    Params gx;
    const Real p = probe(kind, x, pi, &gx, &gpi);
    CHECK(p > Real(0));
    // x: the envelope terms through J^T (reward and transition parts)
    check_parameter_gradient(x, gx, [&](const Params& xh) { return probe(kind, xh, pi); });
    // y, softmax logits
    pbrl::chain_policy_gradient<Real, S, AF>(pbrl::Parameterization::softmax, pi, gpi, gy);
    check_logit_gradient(y, gy, gy.cwiseAbs().maxCoeff(), [&](const FollowerMat& ph) { return probe(kind, x, ph); });
    // y, direct coordinates along the simplex
    check_simplex_gradient(pi, gpi, gpi.cwiseAbs().maxCoeff(), [&](const FollowerMat& ph) { return probe(kind, x, ph); });
  }
}

TEST_CASE("Stackelberg cast to BM is exact: V_f of the joint chain = V^{pi_y} on M(x); helpers and gap") {
  for (auto kind : {RegularizerKind::entropy, RegularizerKind::kl_reference}) {
    CAPTURE(static_cast<int>(kind));
    auto inst = std::make_unique<SmallInstance>(305, Real(0.85), Real(0.15), Real(0.25), kind, kind, Real(0.7));
    const Game& game = inst->problem;
    ValueProbe values{game};
    auto model = std::make_unique<Game::Model>();
    auto ws = std::make_unique<Ws>();
    pbrl::Rng rng(35);
    for (int trial = 0; trial < 4; ++trial) {
      const Params x = random_x(rng, Real(3));
      const FollowerMat pi = random_policy<S, AF>(rng);
      const JointValues jv = joint_values(game, softmax_rows(x), pi);
      pbrl::Mdp<Real, S, AF> m;
      REQUIRE(game.build(x, *model, m) == Status::ok);
      Eval e;
      REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
      const Real scale = Real(1) + jv.follower.cwiseAbs().maxCoeff();
      CHECK((e.value - jv.follower).cwiseAbs().maxCoeff() <= kTight * scale);  // every state
      CHECK_CLOSE(values.follower(x, pi), rho_dot(game, jv.follower), kTight, scale);
      CHECK_CLOSE(values.leader(x, pi), rho_dot(game, jv.leader), kTight, Real(1) + jv.leader.cwiseAbs().maxCoeff());
      // the gap: >= 0, and 0 at the follower's best response
      const Real gap = values.gap(x, pi);
      CHECK(gap > Real(0));
      const FollowerMat best = values.opt->pi;
      CHECK(std::abs(values.gap(x, best)) <= Real(10) * kTight * scale);
      CHECK(values.opt->result.iterations >= 1);
      // best response beats every random policy on the joint chain too
      for (int k = 0; k < 3; ++k) {
        const FollowerMat other = random_policy<S, AF>(rng);
        CHECK(rho_dot(game, joint_values(game, softmax_rows(x), other).follower) <=
              rho_dot(game, joint_values(game, softmax_rows(x), best).follower) + kTight * scale);
      }
    }
  }
}

TEST_CASE_FIXTURE(SparseGame<306>,
                  "PBRL on the Stackelberg game closes the follower's gap and raises the leader's value") {
  // At a stationary point of f + lambda*p the follower's gap is O(1/lambda): a larger penalty
  // constant (with steps 1/lambda) leaves a smaller gap, and both close most of the initial one.
  using Solver = pbrl::Pbrl<Game>;
  ValueProbe values{game};
  auto solver = std::make_unique<Solver>();
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    Real gaps[2] = {};
    for (int run = 0; run < 2; ++run) {
      const Real lambda = run == 0 ? Real(10) : Real(40);
      CAPTURE(lambda);
      pbrl::PbrlSettings<Real> s;
      s.penalty_kind = kind;
      s.inner_steps = 10;
      s.oracle_step = Real(1);
      s.step_x = s.step_y = Real(1) / lambda;
      s.lambda_start = s.lambda_final = lambda;
      REQUIRE(solver->init(game, s, Params::Zero(), FollowerMat::Zero()) == Status::ok);
      FollowerMat pi0;
      solver->policy(pi0);
      const Real leader0 = values.leader(Params::Zero(), pi0);
      const Real gap0 = values.gap(Params::Zero(), pi0);
      Solver::Report first, last;
      REQUIRE(solver->step(&first) == Status::ok);
      CHECK_CLOSE(-first.upper_objective, leader0, kTight, std::abs(leader0));
      REQUIRE(solver->run(400, &last) == Status::ok);
      FollowerMat pi;
      solver->policy(pi);
      const Real leader = values.leader(solver->x(), pi);
      gaps[run] = values.gap(solver->x(), pi);
      MESSAGE("PBRL penalty ", static_cast<int>(kind), ", lambda ", lambda, ": V_l ", leader0, " -> ", leader,
              ", follower gap ", gap0, " -> ", gaps[run]);
      CHECK(gap0 > Real(0));
      CHECK(gaps[run] >= -kTight);
      CHECK(gaps[run] <= (run == 0 ? Real(0.25) : Real(0.05)) * gap0);
      CHECK(leader >= leader0 + Real(0.5) * std::abs(leader0));
      CHECK(game.validate_parameters(solver->x()) == Status::ok);
    }
    CHECK(gaps[1] <= Real(0.5) * gaps[0]);
  }
}

TEST_CASE_FIXTURE(SparseGame<307>,
                  "independent policy gradient: finite values, each player's own value improves with small steps") {
  using Baseline = pbrl::IndependentPolicyGradient<Game>;
  ValueProbe values{game};
  auto ipg = std::make_unique<Baseline>();
  pbrl::Rng rng(37);
  const Params x0 = random_x(rng, Real(0.5));
  const FollowerMat y0 = random_logits<S, AF>(rng, Real(0.5));
  pbrl::IndependentPgSettings<Real> s;
  s.step_leader = s.step_follower = Real(0.05);
  REQUIRE(ipg->init(game, s, x0, y0) == Status::ok);
  FollowerMat pi0;
  ipg->policy(pi0);
  Baseline::Report r0;
  REQUIRE(ipg->step(&r0) == Status::ok);
  CHECK(r0.iteration == 0);
  CHECK_CLOSE(r0.leader_value, values.leader(x0, pi0), kTight, std::abs(r0.leader_value));
  CHECK_CLOSE(r0.follower_value, values.follower(x0, pi0), kTight, std::abs(r0.follower_value));
  CHECK_CLOSE(r0.follower_gap, values.gap(x0, pi0), Real(10) * kTight, std::abs(r0.follower_value));
  // Each player's unilateral change improves its own value (ascent step on its own objective).
  const Params x1 = ipg->x();
  FollowerMat pi1;
  ipg->policy(pi1);
  CHECK(values.leader(x1, pi0) > r0.leader_value);
  CHECK(values.follower(x0, pi1) > r0.follower_value);
  // A few more steps: each one still raises the mover's own value against the other's
  // current policy; the reports stay finite and consistent.
  for (int k = 1; k < 5; ++k) {
    const Params xk = ipg->x();
    FollowerMat pk;
    ipg->policy(pk);
    Baseline::Report r;
    REQUIRE(ipg->step(&r) == Status::ok);
    CHECK(r.iteration == k);
    FollowerMat pn;
    ipg->policy(pn);
    CHECK(values.leader(ipg->x(), pk) > r.leader_value);
    CHECK(values.follower(xk, pn) > r.follower_value);
  }
  Baseline::Report last;
  REQUIRE(ipg->run(300, &last) == Status::ok);
  CHECK(ipg->iteration() == 305);
  CHECK(std::isfinite(last.leader_value));
  CHECK(std::isfinite(last.follower_value));
  CHECK(std::isfinite(last.follower_gap));
  CHECK(last.follower_gap >= -kTight);
  CHECK(game.validate_parameters(ipg->x()) == Status::ok);
  MESSAGE("independent PG: V_l ", r0.leader_value, " -> ", last.leader_value, ", V_f ", r0.follower_value, " -> ",
          last.follower_value, ", gap ", r0.follower_gap, " -> ", last.follower_gap);

  // Sweep evaluation follows the direct solve.
  auto swept = std::make_unique<pbrl::IndependentPolicyGradient<Game, EvaluationMethod::sweeps>>();
  swept->evaluation_workspace().max_sweeps = 2000;
  REQUIRE(ipg->init(game, s, x0, y0) == Status::ok);
  REQUIRE(swept->init(game, s, x0, y0) == Status::ok);
  REQUIRE(ipg->run(20) == Status::ok);
  REQUIRE(swept->run(20) == Status::ok);
  check_follows_direct(ipg->x(), swept->x());
  check_follows_direct(ipg->y(), swept->y());
}

TEST_CASE("independent PG reports evaluations stopped at max_sweeps and whether its gap's optimum converged") {
  auto inst = std::make_unique<SmallInstance>(308, Real(0.8), Real(0.05), Real(0.2));
  auto ipg = std::make_unique<pbrl::IndependentPolicyGradient<Game, EvaluationMethod::sweeps>>();
  pbrl::IndependentPgSettings<Real> s;
  REQUIRE(ipg->init(inst->problem, s, Params::Zero(), FollowerMat::Zero()) == Status::ok);
  auto& ws = ipg->evaluation_workspace();
  ws.max_sweeps = 2;
  ws.tolerance = Real(0);  // never met
  pbrl::IndependentPgReport<Real> r;
  REQUIRE(ipg->step(&r) == Status::ok);
  CHECK(r.max_sweeps_hit == 2);  // V_f of pi_y and f, both stopped at the cap
  CHECK(r.follower_gap_converged);  // the gap's soft value iteration has its own, ample, cap
  ws.max_sweeps = 5000;
  ws.tolerance = kDouble ? Real(1e-10) : Real(1e-4);
  REQUIRE(ipg->step(&r) == Status::ok);
  CHECK(r.max_sweeps_hit == 0);
  // Two sweeps from a cold start cannot meet the gap's tolerance: ok, and the report says so.
  ipg->follower_optimum().max_iterations = 2;
  ipg->follower_optimum().value.setZero();
  REQUIRE(ipg->step(&r) == Status::ok);
  CHECK_FALSE(r.follower_gap_converged);
  CHECK_FALSE(ipg->follower_optimum().result.converged);
  CHECK(ipg->follower_optimum().result.iterations == 2);
}

TEST_CASE("Stackelberg and independent PG reject bad input and keep their state") {
  auto data = std::make_unique<GameData<S, AL, AF>>(308);
  const Game::Data good = data->data(Real(0.8), Real(0.1), Real(0.2));
  Game game;
  // Before init
  CHECK(game.validate_parameters(Params::Zero()) == Status::not_initialized);
  {
    auto model = std::make_unique<Game::Model>();
    auto ws = std::make_unique<Ws>();
    Eval e;
    Real f = Real(-42.5);
    Params gx = Params::Constant(Real(3.25));
    FollowerMat gpi = FollowerMat::Constant(Real(1.5));
    CHECK(game.upper(FollowerMat::Constant(Real(1) / AF), *model, *ws, e, f, gx, gpi) == Status::not_initialized);
    CHECK(f == Real(-42.5));
    CHECK(gx == Params::Constant(Real(3.25)));
  }
  struct Case {
    const char* what;
    Game::Data d;
    Status expected;
  };
  auto with = [&](auto edit) {
    Game::Data d = good;
    edit(d);
    return d;
  };
  auto bad = std::make_unique<GameData<S, AL, AF>>(*data);
  bad->transition[5] = Real(-0.5);
  auto nan = std::make_unique<GameData<S, AL, AF>>(*data);
  nan->leader_reward[7] = std::numeric_limits<Real>::quiet_NaN();
  const Case cases[] = {
      {"null leader reward", with([](Game::Data& d) { d.leader_reward = nullptr; }), Status::null_pointer},
      {"null follower reward", with([](Game::Data& d) { d.follower_reward = nullptr; }), Status::null_pointer},
      {"null transition", with([](Game::Data& d) { d.transition = nullptr; }), Status::null_pointer},
      {"null initial", with([](Game::Data& d) { d.initial = nullptr; }), Status::null_pointer},
      {"NaN reward", with([&](Game::Data& d) { d.leader_reward = nan->leader_reward; }), Status::not_finite},
      {"bad transition", with([&](Game::Data& d) { d.transition = bad->transition; }), Status::bad_transition},
      {"discount 1", with([](Game::Data& d) { d.discount = Real(1); }), Status::bad_discount},
      {"negative tau_l", with([](Game::Data& d) { d.leader.tau = Real(-1); }), Status::bad_regularization},
      {"null follower reference",
       with([](Game::Data& d) {
         d.follower.kind = RegularizerKind::kl_reference;
         d.follower.reference = nullptr;
       }),
       Status::null_pointer},
      {"zero bound", with([](Game::Data& d) { d.logit_bound = Real(0); }), Status::bad_setting},
      {"infinite bound", with([](Game::Data& d) { d.logit_bound = std::numeric_limits<Real>::infinity(); }),
       Status::bad_setting},
  };
  for (const Case& c : cases) {
    INFO(doctest::String(c.what));
    CHECK(game.init(c.d) == c.expected);
    CHECK(!game.initialized());
  }
  REQUIRE(game.init(good) == Status::ok);
  for (const Case& c : cases) {
    INFO(doctest::String(c.what));
    CHECK(game.init(c.d) == c.expected);
    CHECK(game.data().transition == good.transition);
    CHECK(game.data().logit_bound == good.logit_bound);
  }

  // x outside the box or not finite: build, upper and the helpers change nothing.
  auto model = std::make_unique<Game::Model>();
  for (auto& v : model->reward) v = Real(1.25);
  for (auto& v : model->leader_reward) v = Real(-2.5);
  const auto model0 = std::make_unique<Game::Model>(*model);
  auto ws = std::make_unique<Ws>();
  Eval e;
  e.value_rho = Real(7);
  const Eval e0 = e;
  Real f = Real(-42.5), v = Real(3.5);
  Params gx = Params::Constant(Real(3.25));
  FollowerMat gpi = FollowerMat::Constant(Real(1.5));
  const FollowerMat uniform = FollowerMat::Constant(Real(1) / AF);
  auto opt = std::make_unique<Game::FollowerOptimum>();
  pbrl::Mdp<Real, S, AF> m;
  auto unchanged = [&]() {
    CHECK(std::memcmp(model.get(), model0.get(), sizeof(Game::Model)) == 0);
    CHECK(e.value_rho == Real(7));
    CHECK(e.value == e0.value);
    CHECK(f == Real(-42.5));
    CHECK(v == Real(3.5));
    CHECK(gx == Params::Constant(Real(3.25)));
    CHECK(gpi == FollowerMat::Constant(Real(1.5)));
    CHECK(m.reward == nullptr);
    CHECK(opt->value == Vec<S>::Zero());
  };
  Params outside = Params::Zero();
  outside(3) = Real(3.5);
  Params not_finite = Params::Zero();
  not_finite(1) = std::numeric_limits<Real>::quiet_NaN();
  for (const auto& [x, expected] : {std::pair<Params, Status>{outside, Status::out_of_bounds},
                                    std::pair<Params, Status>{not_finite, Status::not_finite}}) {
    CHECK(game.build(x, *model, m) == expected);  // upper() takes no x: the model build() made
    CHECK(game.leader_value(x, uniform, *model, *ws, e, v) == expected);
    CHECK(game.follower_value(x, uniform, *model, *ws, e, v) == expected);
    CHECK(game.follower_gap(x, uniform, *model, *ws, e, *opt, v) == expected);
    unchanged();
  }
  // a policy that is not a distribution
  FollowerMat not_policy = uniform;
  not_policy(1, 0) = Real(0.9);
  CHECK(game.upper(not_policy, *model, *ws, e, f, gx, gpi) == Status::bad_policy);
  CHECK(game.leader_value(Params::Zero(), not_policy, *model, *ws, e, v) == Status::bad_policy);
  CHECK(game.follower_gap(Params::Zero(), not_policy, *model, *ws, e, *opt, v) == Status::bad_policy);
  opt->max_iterations = 0;
  CHECK(game.follower_gap(Params::Zero(), uniform, *model, *ws, e, *opt, v) == Status::bad_setting);
  unchanged();

  // Independent PG: settings, x0, y0; step before init; failed init keeps the state.
  using Baseline = pbrl::IndependentPolicyGradient<Game>;
  auto ipg = std::make_unique<Baseline>();
  CHECK(ipg->step() == Status::not_initialized);
  pbrl::IndependentPgSettings<Real> s;
  auto settings_with = [&](auto edit) {
    pbrl::IndependentPgSettings<Real> t = s;
    edit(t);
    return t;
  };
  const FollowerMat y0 = FollowerMat::Constant(Real(0.5));
  CHECK(ipg->init(game, settings_with([](auto& t) { t.step_leader = Real(0); }), Params::Zero(), y0) ==
        Status::bad_step_size);
  CHECK(ipg->init(game, settings_with([](auto& t) { t.step_follower = std::numeric_limits<Real>::quiet_NaN(); }),
                  Params::Zero(), y0) == Status::bad_step_size);
  CHECK(ipg->init(game, settings_with([](auto& t) { t.follower_logit_bound = Real(-1); }), Params::Zero(), y0) ==
        Status::bad_setting);
  CHECK(ipg->init(game, s, outside, y0) == Status::out_of_bounds);
  FollowerMat y_bad = y0;
  y_bad(0, 1) = Real(51);
  CHECK(ipg->init(game, s, Params::Zero(), y_bad) == Status::bad_policy);
  y_bad(0, 1) = std::numeric_limits<Real>::infinity();
  CHECK(ipg->init(game, s, Params::Zero(), y_bad) == Status::not_finite);
  Game fresh;
  CHECK(ipg->init(fresh, s, Params::Zero(), y0) == Status::not_initialized);
  CHECK(ipg->step() == Status::not_initialized);
  REQUIRE(ipg->init(game, s, Params::Zero(), y0) == Status::ok);
  CHECK(ipg->run(-1) == Status::bad_setting);
  // A gap setting out of range fails the step and keeps x, y, the count and the report.
  REQUIRE(ipg->step() == Status::ok);
  const Params x1 = ipg->x();
  const FollowerMat y1 = ipg->y();
  ipg->follower_optimum().max_iterations = 0;
  Baseline::Report r;
  r.leader_value = Real(9.5);
  CHECK(ipg->step(&r) == Status::bad_setting);
  CHECK(ipg->x() == x1);
  CHECK(ipg->y() == y1);
  CHECK(ipg->iteration() == 1);
  CHECK(r.leader_value == Real(9.5));
  ipg->follower_optimum().max_iterations = 100;
  CHECK(ipg->step(&r) == Status::ok);
  CHECK(ipg->iteration() == 2);
}

TEST_CASE("the paper's Stackelberg size, 100 states and 5 x 5 actions, builds and steps") {
  constexpr int NS = 100, NL = 5, NF = 5;
  using Big = pbrl::Stackelberg<Real, NS, NL, NF>;
  using BigSolver = pbrl::Pbrl<Big>;
  using BigBaseline = pbrl::IndependentPolicyGradient<Big>;
  auto game = std::make_unique<GameData<NS, NL, NF>>(309, Real(0.7));
  auto problem = std::make_unique<Big>();
  REQUIRE(problem->init(game->data(Real(0.9), Real(0.01), Real(0.1))) == Status::ok);
  auto model = std::make_unique<Big::Model>();
  pbrl::Mdp<Real, NS, NF> m;
  REQUIRE(problem->build(Big::Params::Zero(), *model, m) == Status::ok);
  CHECK(pbrl::validate(m) == Status::ok);
  auto solver = std::make_unique<BigSolver>();
  auto baseline = std::make_unique<BigBaseline>();
  MESSAGE("sizeof with sizeof(Real) = ", sizeof(Real), ": Stackelberg<100,5,5>::Model ", sizeof(Big::Model),
          ", Pbrl ", sizeof(BigSolver), ", IndependentPolicyGradient ", sizeof(BigBaseline), " bytes");
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    pbrl::PbrlSettings<Real> s;
    s.penalty_kind = kind;
    s.oracle = pbrl::OracleKind::policy_gradient;  // the paper's inner solver
    s.inner_steps = kind == PenaltyKind::value ? 1 : 2;
    s.oracle_step = Real(0.1);
    s.step_x = s.step_y = Real(0.1);
    s.lambda_start = s.lambda_final = kind == PenaltyKind::value ? Real(2) : Real(7);
    REQUIRE(solver->init(*problem, s, Big::Params::Zero(), Mat<NS, NF>::Zero()) == Status::ok);
    BigSolver::Report a, b;
    REQUIRE(solver->step(&a) == Status::ok);
    REQUIRE(solver->step(&b) == Status::ok);
    CHECK(std::isfinite(b.objective));
    CHECK(std::isfinite(b.lower_gap));
    CHECK(problem->validate_parameters(solver->x()) == Status::ok);
  }
  pbrl::IndependentPgSettings<Real> s;
  REQUIRE(baseline->init(*problem, s, Big::Params::Zero(), Mat<NS, NF>::Zero()) == Status::ok);
  BigBaseline::Report a, b;
  REQUIRE(baseline->step(&a) == Status::ok);
  REQUIRE(baseline->step(&b) == Status::ok);
  CHECK(std::isfinite(b.leader_value));
  CHECK(b.follower_gap >= Real(0));
  CHECK(b.follower_gap < a.follower_gap);
  MESSAGE("independent PG at the paper's size: V_l ", a.leader_value, " -> ", b.leader_value, ", gap ",
          a.follower_gap, " -> ", b.follower_gap);
}

// ---- independent PG, sampled mode ------------------------------------------------------------

namespace {
bool same_rng(const pbrl::Rng& a, const pbrl::Rng& b) { return std::memcmp(a.state(), b.state(), 16) == 0; }

pbrl::IndependentPgSettings<Real> sampled_pg_settings(int horizon, int batch, std::uint32_t seed) {
  pbrl::IndependentPgSettings<Real> s;
  s.gradient = pbrl::GradientMode::sampled;
  s.sampling.horizon = horizon;
  s.sampling.batch = batch;
  s.seed = seed;
  return s;
}
}  // namespace

TEST_CASE("independent PG sampled mode: the follower's gradient agrees with the exact one within its sampling error") {
  // One step from (x0, y0) gives grad_y = (y1 - y0) / alpha_f (no clipping at these sizes). The
  // mean of n sampled steps (fresh seeds) must lie within 4 standard errors (plus a bound on the
  // horizon's truncation bias, gamma^H = 0.6^48 = 2e-11, and float rounding) of the exact step's,
  // coordinate by coordinate; the leader's step is exact in both modes, so x1 is the same.
  using Baseline = pbrl::IndependentPolicyGradient<Game>;
  auto inst = std::make_unique<SmallInstance>(320, Real(0.6), Real(0.05), Real(0.2));
  const Game& game = inst->problem;
  pbrl::Rng prng(50);
  const Params x0 = random_x(prng, Real(0.5));
  const FollowerMat y0 = random_logits<S, AF>(prng, Real(0.5));
  auto ipg = std::make_unique<Baseline>();
  pbrl::IndependentPgSettings<Real> exact_settings;
  const Real alpha = exact_settings.step_follower;
  REQUIRE(ipg->init(game, exact_settings, x0, y0) == Status::ok);
  REQUIRE(ipg->step() == Status::ok);
  CHECK(ipg->environment_steps() == 0);  // exact mode takes no environment steps
  const Params x1 = ipg->x();
  const FollowerMat exact = (ipg->y() - y0) / alpha;
  FollowerMat pi0;
  pbrl::policy_from_parameters<Real, S, AF>(pbrl::Parameterization::softmax, y0, pi0);

  constexpr int kHorizon = 48, kBatch = 4;
  const int n = kDouble ? 2000 : 500;
  constexpr int N = S * AF;
  Real mean[N] = {}, m2[N] = {};
  for (int r = 0; r < n; ++r) {
    REQUIRE(ipg->init(game, sampled_pg_settings(kHorizon, kBatch, 1000u + std::uint32_t(r)), x0, y0) == Status::ok);
    REQUIRE(ipg->step() == Status::ok);
    if (r == 0) {
      CHECK((ipg->x() - x1).cwiseAbs().maxCoeff() <= kTight * (Real(1) + x1.cwiseAbs().maxCoeff()));
      CHECK(ipg->environment_steps() == std::int64_t(kBatch) * kHorizon);
    }
    const FollowerMat g = (ipg->y() - y0) / alpha;
    for (int i = 0; i < N; ++i) {
      const Real d = g.data()[i] - mean[i];
      mean[i] += d / Real(r + 1);
      m2[i] += d * (g.data()[i] - mean[i]);
    }
  }
  const Real vmax = (Real(1) + Real(0.2) * std::log(Real(AF))) / (Real(1) - Real(0.6));
  const Real bias = std::pow(Real(0.6), Real(kHorizon)) * (Real(kHorizon) + Real(2.5)) * Real(100) *
                        (Real(1) + vmax + Real(10)) / pi0.minCoeff() +
                    (kDouble ? Real(1e-10) : Real(2e-4) * (Real(1) + exact.cwiseAbs().maxCoeff()));
  Real worst(0);
  for (int i = 0; i < N; ++i) {
    const Real se = std::sqrt(m2[i] / Real(n - 1) / Real(n));
    CAPTURE(i);
    CAPTURE(mean[i]);
    CAPTURE(exact.data()[i]);
    CAPTURE(se);
    CHECK(se > Real(0));  // sampled, not exact
    CHECK(std::abs(mean[i] - exact.data()[i]) <= Real(4) * se + bias);
    worst = std::max(worst, std::abs(mean[i] - exact.data()[i]) / se);
  }
  MESSAGE("independent PG sampled follower gradient: ", N, " coordinates, ", n, " steps; max |err|/SE = ", worst,
          ", bias bound = ", bias);
}

TEST_CASE("independent PG sampled mode: environment steps, the random stream, determinism, bad settings") {
  using Baseline = pbrl::IndependentPolicyGradient<Game>;
  auto inst = std::make_unique<SmallInstance>(321, Real(0.8), Real(0.05), Real(0.2));
  const Game& game = inst->problem;
  auto ipg = std::make_unique<Baseline>();
  auto twin = std::make_unique<Baseline>();
  constexpr int H = 5, B = 16;  // the paper's
  const auto s = sampled_pg_settings(H, B, 77u);
  REQUIRE(ipg->init(game, s, Params::Zero(), FollowerMat::Zero()) == Status::ok);
  CHECK(ipg->environment_steps() == 0);
  CHECK(same_rng(ipg->rng(), pbrl::Rng(77u)));
  Baseline::Report r;
  for (int k = 1; k <= 3; ++k) {
    REQUIRE(ipg->step(k == 3 ? &r : nullptr) == Status::ok);
    CHECK(ipg->environment_steps() == std::int64_t(k) * B * H);
  }
  CHECK(r.environment_steps == 3 * B * H);
  CHECK(r.iteration == 2);
  // B rollouts of 2H + 1 uniforms per step.
  pbrl::Rng expected(77u);
  for (int i = 0; i < 3 * B * (2 * H + 1); ++i) expected.next();
  CHECK(same_rng(ipg->rng(), expected));
  // The report's values are exact, on (x_2, y_2).
  ValueProbe values{game};
  REQUIRE(twin->init(game, s, Params::Zero(), FollowerMat::Zero()) == Status::ok);
  REQUIRE(twin->run(2) == Status::ok);
  FollowerMat pi2;
  twin->policy(pi2);
  CHECK_CLOSE(r.leader_value, values.leader(twin->x(), pi2), kTight, std::abs(r.leader_value));
  CHECK_CLOSE(r.follower_value, values.follower(twin->x(), pi2), kTight, std::abs(r.follower_value));
  CHECK_CLOSE(r.follower_gap, values.gap(twin->x(), pi2), Real(10) * kTight, std::abs(r.follower_value));
  // Same seed, same run (with or without reports); another seed, another run.
  REQUIRE(twin->step() == Status::ok);
  CHECK(twin->x() == ipg->x());
  CHECK(twin->y() == ipg->y());
  CHECK(same_rng(twin->rng(), ipg->rng()));
  REQUIRE(twin->init(game, sampled_pg_settings(H, B, 78u), Params::Zero(), FollowerMat::Zero()) == Status::ok);
  REQUIRE(twin->run(3) == Status::ok);
  CHECK(twin->y() != ipg->y());

  // Bad settings are refused and leave the state (iterate, count, stream) as it was.
  const Params x = ipg->x();
  const FollowerMat y = ipg->y();
  const pbrl::Rng rng = ipg->rng();
  auto unchanged = [&] {
    CHECK(ipg->x() == x);
    CHECK(ipg->y() == y);
    CHECK(ipg->iteration() == 3);
    CHECK(ipg->environment_steps() == 3 * B * H);
    CHECK(same_rng(ipg->rng(), rng));
  };
  auto with = [&](auto edit) {
    auto t = s;
    edit(t);
    return t;
  };
  CHECK(ipg->init(game, with([](auto& t) { t.sampling.horizon = 0; }), Params::Zero(), FollowerMat::Zero()) ==
        Status::bad_setting);
  CHECK(ipg->init(game, with([](auto& t) { t.sampling.horizon = pbrl::kMaxHorizon + 1; }), Params::Zero(),
                  FollowerMat::Zero()) == Status::bad_setting);
  CHECK(ipg->init(game, with([](auto& t) { t.sampling.batch = 0; }), Params::Zero(), FollowerMat::Zero()) ==
        Status::bad_setting);
  CHECK(ipg->init(game, with([](auto& t) { t.sampling.batch = pbrl::kMaxBatch + 1; }), Params::Zero(),
                  FollowerMat::Zero()) == Status::bad_setting);
  CHECK(ipg->init(game, with([](auto& t) { t.gradient = static_cast<pbrl::GradientMode>(7); }), Params::Zero(),
                  FollowerMat::Zero()) == Status::bad_setting);
  CHECK(ipg->init(game, with([](auto& t) { t.step_follower = Real(0); }), Params::Zero(), FollowerMat::Zero()) ==
        Status::bad_step_size);
  unchanged();
  // The sampling sizes are checked in sampled mode only (as in Pbrl).
  CHECK(pbrl::validate(with([](auto& t) {
          t.gradient = pbrl::GradientMode::exact;
          t.sampling.batch = 0;
        })) == Status::ok);
  // A step that fails (here: the gap's settings) leaves the stream and the count too.
  ipg->follower_optimum().max_iterations = 0;
  Baseline::Report failed;
  failed.environment_steps = 12345;
  CHECK(ipg->step(&failed) == Status::bad_setting);
  CHECK(failed.environment_steps == 12345);
  unchanged();
  ipg->follower_optimum().max_iterations = 5000;
  REQUIRE(ipg->step(&failed) == Status::ok);
  CHECK(ipg->environment_steps() == 4 * B * H);
}

TEST_CASE_FIXTURE(SparseGame<322>,
                  "independent PG sampled mode with the paper's H = 5, B = 16: the follower closes most of its gap") {
  // With H = 5 the follower ascends a truncated-horizon surrogate of V_f (estimators.hpp), so its
  // gap need not reach 0, but it falls well below the start's; the leader's value rises.
  using Baseline = pbrl::IndependentPolicyGradient<Game>;
  auto ipg = std::make_unique<Baseline>();
  auto s = sampled_pg_settings(5, 16, 5u);
  s.step_leader = s.step_follower = Real(0.1);
  s.follower_logit_bound = Real(10);
  REQUIRE(ipg->init(game, s, Params::Zero(), FollowerMat::Zero()) == Status::ok);
  Baseline::Report first, last;
  REQUIRE(ipg->step(&first) == Status::ok);
  constexpr int K = 600;
  REQUIRE(ipg->run(K - 1, &last) == Status::ok);
  CHECK(last.environment_steps == std::int64_t(K) * 16 * 5);
  CHECK(ipg->environment_steps() == std::int64_t(K) * 16 * 5);
  CHECK(std::isfinite(last.leader_value));
  CHECK(std::isfinite(last.follower_value));
  CHECK(last.follower_gap >= -kTight);
  CHECK(last.follower_gap <= Real(0.5) * first.follower_gap);
  CHECK(last.leader_value > first.leader_value);
  CHECK(game.validate_parameters(ipg->x()) == Status::ok);
  CHECK(ipg->y().cwiseAbs().maxCoeff() <= Real(10));
  MESSAGE("sampled independent PG (H 5, B 16): V_l ", first.leader_value, " -> ", last.leader_value, ", gap ",
          first.follower_gap, " -> ", last.follower_gap);
}

TEST_CASE("an exact-only IndependentPolicyGradient steps like the default type and refuses sampled mode") {
  auto inst = std::make_unique<SmallInstance>(311, Real(0.8), Real(0.05), Real(0.2));
  pbrl::Rng rng(41);
  const Params x0 = random_x(rng, Real(0.5));
  const FollowerMat y0 = random_logits<S, AF>(rng, Real(0.5));
  auto init = [&](auto& baseline, pbrl::GradientMode mode) {
    pbrl::IndependentPgSettings<Real> s;
    s.gradient = mode;
    s.sampling.horizon = 5;
    s.sampling.batch = 3;
    return baseline.init(inst->problem, s, x0, y0);
  };
  auto same = [](const auto& a, const auto& b) { CHECK(a.y() == b.y()); };
  check_exact_only_baseline<pbrl::IndependentPolicyGradient, Game>(init, same);
}

namespace {
// The game whose upper() drops the chain when use_chain is off: its f then evaluates from scratch.
// The solvers compared run one instantiation, the same machine code, and differ only in the chain:
// two instantiations (a type with the chain argument, one without) may fuse multiply-adds
// differently (GCC's default -ffp-contract=fast; the Cortex-M4F tree did) and part in the last bit.
struct GameChainSwitch : Game {
  bool use_chain = true;
  template <EvaluationMethod M>
  Status upper(const FollowerMat& pi, Model& model, pbrl::EvaluationWorkspace<Real, S, M>& ws,
               Eval& scratch, Real& f, Params& grad_x, FollowerMat& grad_pi, const Eval* chain = nullptr) const {
    return Game::upper(pi, model, ws, scratch, f, grad_x, grad_pi, use_chain ? chain : nullptr);
  }
};

// Two Solvers, on `game` (with the chain) and on `plain` (without), set up alike with s from
// (x0, y0), take five steps, each with a report to both (`reports`; same_report(ra, rb) compares
// them) or to neither: the iterates end the same, to the bit.
template <class Solver, class Settings, class SameReport>
void check_steps_as_without_chain(const GameChainSwitch& game, const GameChainSwitch& plain, const Settings& s,
                                  const Params& x0, const FollowerMat& y0, bool reports, SameReport&& same_report) {
  auto a = std::make_unique<Solver>();
  auto b = std::make_unique<Solver>();
  REQUIRE(a->init(game, s, x0, y0) == Status::ok);
  REQUIRE(b->init(plain, s, x0, y0) == Status::ok);
  for (int k = 0; k < 5; ++k) {
    typename Solver::Report ra, rb;
    REQUIRE(a->step(reports ? &ra : nullptr) == Status::ok);
    REQUIRE(b->step(reports ? &rb : nullptr) == Status::ok);
    if (reports) same_report(ra, rb);
  }
  CHECK(std::memcmp(a->x().data(), b->x().data(), sizeof(Real) * Game::kParams) == 0);
  CHECK(std::memcmp(a->y().data(), b->y().data(), sizeof(Real) * S * AF) == 0);
}
}  // namespace

TEST_CASE("f's evaluation on pi_y's chain (evaluate_on_chain): Pbrl and independent PG step bit for bit as without it") {
  const auto data = std::make_unique<GameData<S, AL, AF>>(321, Real(0.5));
  GameChainSwitch game, plain;
  plain.use_chain = false;
  REQUIRE(game.init(data->data(Real(0.9), Real(0.05), Real(0.1))) == Status::ok);
  REQUIRE(plain.init(data->data(Real(0.9), Real(0.05), Real(0.1))) == Status::ok);
  pbrl::Rng rng(322);
  const Params x0 = random_x(rng);
  const FollowerMat y0 = random_logits<S, AF>(rng);

  // upper() with the chain: the numbers of upper() without it, and no chain after ws factored
  // another evaluation (a stale chain is not used).
  {
    auto model = std::make_unique<Game::Model>();
    auto ws = std::make_unique<Ws>();
    Game::MdpType mdp;
    REQUIRE(game.build(x0, *model, mdp) == Status::ok);
    FollowerMat pi, other;
    pbrl::policy_from_parameters<Real, S, AF>(pbrl::Parameterization::softmax, y0, pi);
    pbrl::policy_from_parameters<Real, S, AF>(pbrl::Parameterization::softmax, FollowerMat::Zero(), other);
    Eval chain, e1, e2, e3;
    Real f1 = 0, f2 = 0, f3 = 0;
    Params g1, g2, g3;
    FollowerMat p1, p2, p3;
    REQUIRE(game.upper(pi, *model, *ws, e1, f1, g1, p1) == Status::ok);
    REQUIRE(pbrl::evaluate(mdp, pi, *ws, chain) == Status::ok);
    REQUIRE(game.upper(pi, *model, *ws, e2, f2, g2, p2, &chain) == Status::ok);
    CHECK(f2 == f1);
    CHECK(std::memcmp(g1.data(), g2.data(), sizeof g1) == 0);
    CHECK(std::memcmp(p1.data(), p2.data(), sizeof p1) == 0);
    CHECK(std::memcmp(e1.value.data(), e2.value.data(), sizeof(Real) * S) == 0);
    CHECK(std::memcmp(e1.occupancy.data(), e2.occupancy.data(), sizeof(Real) * S) == 0);
    Eval elsewhere;
    REQUIRE(pbrl::evaluate(mdp, other, *ws, elsewhere) == Status::ok);  // ws now holds other's factors
    REQUIRE(game.upper(pi, *model, *ws, e3, f3, g3, p3, &chain) == Status::ok);
    CHECK(f3 == f1);
    CHECK(std::memcmp(g1.data(), g3.data(), sizeof g1) == 0);
    pbrl::forget_factorization(*ws);
    REQUIRE(pbrl::evaluate(mdp, pi, *ws, chain) == Status::ok);
    pbrl::forget_factorization(*ws);
    REQUIRE(game.upper(pi, *model, *ws, e3, f3, g3, p3, &chain) == Status::ok);
    CHECK(f3 == f1);
  }

  for (const PenaltyKind kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    for (const pbrl::GradientMode mode : {pbrl::GradientMode::exact, pbrl::GradientMode::sampled}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(static_cast<int>(mode));
      pbrl::PbrlSettings<Real> s;
      s.penalty_kind = kind;
      s.gradient = mode;
      s.oracle = mode == pbrl::GradientMode::exact ? pbrl::OracleKind::policy_mirror_descent
                                                   : pbrl::OracleKind::policy_gradient;
      s.inner_steps = 2;
      s.sampling.horizon = 3;
      s.sampling.batch = 2;
      check_steps_as_without_chain<pbrl::Pbrl<GameChainSwitch>>(game, plain, s, x0, y0, true,
                                                                same_report<pbrl::PbrlReport<Real>>);
    }
  }
  for (const pbrl::GradientMode mode : {pbrl::GradientMode::exact, pbrl::GradientMode::sampled}) {
    for (const bool reports : {false, true}) {
      pbrl::IndependentPgSettings<Real> s;
      s.gradient = mode;
      s.sampling.horizon = 3;
      s.sampling.batch = 2;
      check_steps_as_without_chain<pbrl::IndependentPolicyGradient<GameChainSwitch>>(
          game, plain, s, x0, y0, reports, same_report<pbrl::IndependentPgReport<Real>>);
    }
  }
}

TEST_CASE("a normal-form game posed as two identical absorbing states (docs/algorithm.md's recipe)") {
  // A 2 x 3 bimatrix game (leader rows, follower columns). Two states that each loop to themselves
  // with the same rewards, rho uniform: each state is the one-shot game repeated, so V_l(rho) is
  // the one-shot value / (1 - gamma), and both states' iterates stay equal.
  constexpr int N = 2, L = 2, F = 3;
  using NormalForm = pbrl::Stackelberg<Real, N, L, F>;
  const Real rl[L * F] = {Real(1), Real(0), Real(3), Real(2), Real(1), Real(0)};
  const Real rf[L * F] = {Real(0), Real(1), Real(0.5), Real(1), Real(0), Real(0.2)};
  Real leader[N * L * F], follower[N * L * F], transition[N * L * F * N];
  for (int s = 0; s < N; ++s)
    for (int j = 0; j < L * F; ++j) {
      leader[s * L * F + j] = rl[j];
      follower[s * L * F + j] = rf[j];
      for (int t = 0; t < N; ++t) transition[(s * L * F + j) * N + t] = t == s ? Real(1) : Real(0);
    }
  const Real initial[N] = {Real(0.5), Real(0.5)};
  const Real gamma = Real(0.5), tau = Real(0.1);
  NormalForm::Data d;
  d.leader_reward = leader;
  d.follower_reward = follower;
  d.transition = transition;
  d.initial = initial;
  d.discount = gamma;
  d.follower.tau = tau;
  d.logit_bound = Real(5);
  NormalForm game;
  REQUIRE(game.init(d) == Status::ok);
  pbrl::PbrlSettings<Real> s;
  s.gap_tolerance = Real(kDouble ? 1e-4 : 1e-2);
  auto solver = std::make_unique<pbrl::Pbrl<NormalForm>>();
  REQUIRE(solver->init(game, s, NormalForm::Params::Zero(), Mat<N, F>::Zero()) == Status::ok);
  pbrl::SolveResult result;
  REQUIRE(solver->solve(20000, result) == Status::ok);
  const auto& x = solver->x();
  for (int a = 0; a < L; ++a) CHECK(std::abs(x[a] - x[L + a]) <= Real(kDouble ? 1e-9 : 1e-4));

  // The one-shot game at state 0's leader policy: the follower's regularized best response, the
  // leader's expected reward.
  Real p[L], m = x[0];
  for (int a = 1; a < L; ++a) m = std::max(m, x[a]);
  Real z(0);
  for (int a = 0; a < L; ++a) z += p[a] = std::exp(x[a] - m);
  for (Real& v : p) v /= z;
  Real u[F], q[F], um = -std::numeric_limits<Real>::infinity(), zq(0);
  for (int f = 0; f < F; ++f) {
    u[f] = Real(0);
    for (int a = 0; a < L; ++a) u[f] += p[a] * rf[a * F + f];
    um = std::max(um, u[f] / tau);
  }
  for (int f = 0; f < F; ++f) zq += q[f] = std::exp(u[f] / tau - um);
  Real one_shot(0);
  for (int f = 0; f < F; ++f)
    for (int a = 0; a < L; ++a) one_shot += p[a] * (q[f] / zq) * rl[a * F + f];
  auto ws = std::make_unique<NormalForm::BilevelValueWorkspace>();
  pbrl::BestResponseValue<Real> v;
  REQUIRE(game.value_at_best_response(x, *ws, v) == Status::ok);
  CHECK(v.value == doctest::Approx(double(one_shot / (Real(1) - gamma))).epsilon(kDouble ? 1e-6 : 1e-3));
  // And the solve improved on the uniform leader.
  REQUIRE(game.value_at_best_response(NormalForm::Params::Zero(), *ws, v) == Status::ok);
  CHECK(one_shot / (Real(1) - gamma) > v.value);
}

}  // namespace test_stackelberg
