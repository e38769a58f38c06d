// Value and Bellman penalties and the upper objective: sign, zeros, strong convexity, and every
// gradient (x through the vector-Jacobian product, y through the policy) against central
// finite differences with the exact lower-level optimum pi*(x); and, at compile time, that a call
// swapping pi_y and pi-hat does not compile.
#include "support.hpp"
#include "fd_support.hpp"
#include "pbrl/problems/reward_shaping.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace test_penalties {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 5, A = 3, K = 3;
using Problem = MixtureProblem<S, A, K>;
using Ws = pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>;

// p(x, y) with pi-hat = pi*(x); adds its gradients into (gx, gpi) when given.
struct PenaltyProbe {
  const Problem& problem;
  std::unique_ptr<Problem::Model> model = std::make_unique<Problem::Model>();
  std::unique_ptr<Ws> ws = std::make_unique<Ws>();

  // log_y: pi_y's logs handed to the penalty (PolicyY{pi_y, log_y}), or nullptr.
  Real operator()(PenaltyKind kind, const Problem::Params& x, const Mat<S, A>& pi_y,
                  Problem::Params* gx = nullptr, Mat<S, A>* gpi = nullptr, const Mat<S, A>* log_y = nullptr) {
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(problem.build(x, *model, m) == Status::ok);
    const auto opt = optimum(m);
    pbrl::Evaluation<Real, S, A> ey, eh;
    REQUIRE(pbrl::evaluate(m, pi_y, *ws, ey) == Status::ok);
    REQUIRE(pbrl::evaluate(m, opt.pi, *ws, eh) == Status::ok);
    Problem::Params dx = Problem::Params::Zero();
    Mat<S, A> dpi = Mat<S, A>::Zero(), weights;
    Real p;
    if (kind == PenaltyKind::value) {
      p = pbrl::value_penalty(problem, *model, m, pbrl::PolicyY{pi_y, ey, log_y}, pbrl::PolicyHat{opt.pi, eh}, Real(1), weights,
                              {dx, dpi});
    } else {
      Vec<S> warm = Vec<S>::Zero();
      Mat<S, A> start;
      REQUIRE(pbrl::occupancy_from_start(m, {pi_y, opt.pi}, *ws, warm, start, true) == Status::ok);
      p = pbrl::bellman_penalty(problem, *model, m, pbrl::PolicyY{pi_y, log_y}, pbrl::PolicyHat{opt.pi, eh}, start, Real(1),
                                weights, {dx, dpi});
    }
    if (gx) *gx = dx;
    if (gpi) *gpi = dpi;
    return p;
  }
};

Problem::Params random_x(pbrl::Rng& rng) { return uniform_vector<Problem::Params>(rng); }
}  // namespace

TEST_CASE("penalties are non-negative and vanish at the lower-level optimum") {
  pbrl::Rng rng(41);
  for (int instance = 0; instance < 5; ++instance) {
    Problem problem(200 + instance);
    PenaltyProbe probe{problem};
    const Problem::Params x = random_x(rng);
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(problem.build(x, *probe.model, m) == Status::ok);
    const auto opt = optimum(m);
    for (int trial = 0; trial < 10; ++trial) {
      const Mat<S, A> pi = random_policy<S, A>(rng);
      const Real pv = probe(PenaltyKind::value, x, pi);
      const Real pb = probe(PenaltyKind::bellman, x, pi);
      CHECK(pv >= -kTight);
      // Bellman penalty: tau-strongly convex in y with minimum 0 at pi* (Lemma "reformulation")
      Real distance(0);
      for (int s = 0; s < S; ++s) distance += m.rho()(s) * (pi.row(s) - opt.pi.row(s)).squaredNorm();
      CHECK(pb >= Real(0.5) * m.tau() * distance - kTight);
      CHECK(pb > Real(0));
    }
    CHECK(std::abs(probe(PenaltyKind::value, x, opt.pi)) <= Real(10) * kTight);
    CHECK(std::abs(probe(PenaltyKind::bellman, x, opt.pi)) <= Real(10) * kTight);
  }
}

TEST_CASE("value and Bellman penalty gradients match finite differences") {
  pbrl::Rng rng(42);
  Problem problem(210);
  PenaltyProbe probe{problem};
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    const Problem::Params x = random_x(rng);
    const Mat<S, A> y = random_logits<S, A>(rng);
    Mat<S, A> pi, gpi, gy;
    pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::softmax, y, pi);
    Problem::Params gx;
    probe(kind, x, pi, &gx, &gpi);
    // x: the envelope terms through J^T, including the transition part
    check_parameter_gradient(x, gx, [&](const Problem::Params& xh) { return probe(kind, xh, pi); });
    // y, softmax logits
    pbrl::chain_policy_gradient<Real, S, A>(pbrl::Parameterization::softmax, pi, gpi, gy);
    check_logit_gradient(y, gy, gy.cwiseAbs().maxCoeff(), [&](const Mat<S, A>& ph) { return probe(kind, x, ph); });
    // y, direct coordinates along the simplex
    check_simplex_gradient(pi, gpi, gpi.cwiseAbs().maxCoeff(), [&](const Mat<S, A>& ph) { return probe(kind, x, ph); });
  }
}

TEST_CASE("value and Bellman penalties from pi_y's logs: a softmax's logs give the numbers taken from pi; the logs given are used") {
  pbrl::Rng rng(43);
  Problem problem(211);
  PenaltyProbe probe{problem};
  const Real eps = std::numeric_limits<Real>::epsilon();
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    const Problem::Params x = random_x(rng);
    const Mat<S, A> y = random_logits<S, A>(rng);
    Mat<S, A> pi, log_pi;
    pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::softmax, y, pi, &log_pi);
    Problem::Params gx_taken, gx_given;
    Mat<S, A> gpi_taken, gpi_given;
    const Real p_taken = probe(kind, x, pi, &gx_taken, &gpi_taken);
    const Real p_given = probe(kind, x, pi, &gx_given, &gpi_given, &log_pi);
    // The softmax's logs are log pi within a few eps of max |log pi|: h and dh/dpi move by tau times that.
    const Real tol = Real(64) * eps * std::max(Real(1), log_pi.cwiseAbs().maxCoeff());
    CHECK(std::abs(p_given - p_taken) <= tol * std::max(Real(1), std::abs(p_taken)));
    CHECK((gpi_given - gpi_taken).cwiseAbs().maxCoeff() <= tol * std::max(Real(1), gpi_taken.cwiseAbs().maxCoeff()));
    CHECK((gx_given - gx_taken).cwiseAbs().maxCoeff() == Real(0));  // no h in J^T's weights
    // Shifted by c, every dh/dpi is c larger (both penalties' grad_pi rise by tau c times d(s),
    // the value penalty's through -dV^{pi_y}/dpi, or rho(s), the Bellman's) and every h too (the
    // Bellman penalty's p rises by tau c; the value penalty's p reads V^{pi_y} from its evaluation).
    const Real c = Real(0.5);
    const Mat<S, A> shifted = (log_pi.array() + c).matrix();
    const Real p_shifted = probe(kind, x, pi, nullptr, &gpi_given, &shifted);
    pbrl::Mdp<Real, S, A> m;
    auto model = std::make_unique<Problem::Model>();
    REQUIRE(problem.build(x, *model, m) == Status::ok);
    auto ws = std::make_unique<Ws>();
    pbrl::Evaluation<Real, S, A> ey;
    REQUIRE(pbrl::evaluate(m, pi, *ws, ey) == Status::ok);
    const Real tau = m.tau();
    REQUIRE(tau > Real(0));
    CHECK_CLOSE(p_shifted, p_taken + (kind == PenaltyKind::bellman ? tau * c : Real(0)), kTight, Real(10));
    for (int s = 0; s < S; ++s) {
      const Real weight = kind == PenaltyKind::bellman ? m.rho()(s) : ey.occupancy(s);
      for (int a = 0; a < A; ++a) CHECK_CLOSE(gpi_given(s, a), gpi_taken(s, a) + tau * c * weight, kTight, Real(10));
    }
  }
}

TEST_CASE("upper objective gradients match finite differences") {
  pbrl::Rng rng(43);
  Problem problem(220);
  auto model = std::make_unique<Problem::Model>();
  auto ws = std::make_unique<Ws>();
  pbrl::Evaluation<Real, S, A> scratch;
  auto f_at = [&](const Problem::Params& x, const Mat<S, A>& pi, Problem::Params* gx, Mat<S, A>* gpi) {
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(problem.build(x, *model, m) == Status::ok);
    Real f;
    Problem::Params dx;
    Mat<S, A> dpi;
    REQUIRE(problem.upper(pi, *model, *ws, scratch, f, dx, dpi) == Status::ok);
    if (gx) *gx = dx;
    if (gpi) *gpi = dpi;
    return f;
  };
  const Problem::Params x = random_x(rng);
  const Mat<S, A> pi = random_policy<S, A>(rng);
  Problem::Params gx;
  Mat<S, A> gpi;
  f_at(x, pi, &gx, &gpi);
  check_parameter_gradient(x, gx, [&](const Problem::Params& xh) { return f_at(xh, pi, nullptr, nullptr); });
  check_simplex_gradient(pi, gpi, gpi.cwiseAbs().maxCoeff(), [&](const Mat<S, A>& ph) { return f_at(x, ph, nullptr, nullptr); });

  // Reward shaping: f = -V_task(rho), J^T(w, v) = w.
  using Shaping = pbrl::RewardShaping<Real, S, A>;
  RandomModel<S, A> task(44, Real(0.7));
  Shaping shaping;
  Shaping::Data data;
  data.reward = task.reward;
  data.transition = task.transition;
  data.initial = task.initial;
  data.discount = Real(0.9);
  data.lower.tau = Real(0.2);
  REQUIRE(shaping.init(data) == Status::ok);
  Shaping::Model smodel;
  Shaping::Params sx = Shaping::Params::Zero(), sgx;
  pbrl::Mdp<Real, S, A> sm;
  REQUIRE(shaping.build(sx, smodel, sm) == Status::ok);
  Real f;
  Mat<S, A> sgpi;
  REQUIRE(shaping.upper(pi, smodel, *ws, scratch, f, sgx, sgpi) == Status::ok);
  CHECK(sgx.cwiseAbs().maxCoeff() == Real(0));
  for (int s = 0; s < S; ++s)
    for (int a = 1; a < A; ++a) {
      const Real fd = central_difference([&](Real h) {
        Mat<S, A> ph = pi, g;
        ph(s, a) += h;
        ph(s, 0) -= h;
        Real fh;
        Shaping::Params gx2;
        REQUIRE(shaping.upper(ph, smodel, *ws, scratch, fh, gx2, g) == Status::ok);
        return fh;
      });
      CHECK_CLOSE(sgpi(s, a) - sgpi(s, 0), fd, kFdTol, sgpi.cwiseAbs().maxCoeff());
    }
  // the shaping's vector-Jacobian product against finite differences of V^pi(rho) on M(x)
  Shaping::Params g = Shaping::Params::Zero();
  pbrl::Evaluation<Real, S, A> e;
  REQUIRE(pbrl::evaluate(sm, pi, *ws, e) == Status::ok);
  Mat<S, A> mu;
  pbrl::state_action_occupancy(e, pi, mu);
  shaping.vjp(smodel, mu, e.value, Real(1), g);
  for (int i = 0; i < S * A; ++i) {
    const Real fd = central_difference([&](Real h) {
      Shaping::Params xh = sx;
      xh(i) += h;
      pbrl::Mdp<Real, S, A> mh;
      REQUIRE(shaping.build(xh, smodel, mh) == Status::ok);
      pbrl::Evaluation<Real, S, A> eh;
      REQUIRE(pbrl::evaluate(mh, pi, *ws, eh) == Status::ok);
      return eh.value_rho;
    });
    CHECK_CLOSE(g(i), fd, kFdTol, g.cwiseAbs().maxCoeff());
  }
}

// The penalties take pi_y and pi-hat in role bundles (penalty/detail/policies.hpp), so a call that swaps
// them is not a call at all: checked here at compile time, for the exact and the sampled forms.
namespace {
template <class Y, class Hat, class = void>
struct ValuePenaltyTakes : std::false_type {};
template <class Y, class Hat>
struct ValuePenaltyTakes<Y, Hat,
                         std::void_t<decltype(pbrl::value_penalty(
                             std::declval<const Problem&>(), std::declval<const Problem::Model&>(),
                             std::declval<const pbrl::Mdp<Real, S, A>&>(), std::declval<Y>(), std::declval<Hat>(),
                             Real(1), std::declval<Mat<S, A>&>(),
                             std::declval<pbrl::PenaltyGradient<Problem::Params, Real, S, A>>()))>> : std::true_type {};
template <class Y, class Hat, class = void>
struct SampledPenaltyTakes : std::false_type {};
template <class Y, class Hat>
struct SampledPenaltyTakes<
    Y, Hat,
    std::void_t<decltype(pbrl::sampled_penalty(
        pbrl::PenaltyKind::value, std::declval<const Problem&>(), std::declval<const Problem::Model&>(),
        std::declval<const pbrl::Mdp<Real, S, A>&>(), pbrl::Parameterization::softmax, std::declval<Y>(),
        std::declval<Hat>(), std::declval<const pbrl::SamplingSettings&>(), std::declval<pbrl::Rng&>(),
        std::declval<pbrl::Trajectory<Real>&>(), std::declval<std::int64_t&>(),
        std::declval<pbrl::SampledPenalty<Problem>&>()))>> : std::true_type {};
using Evaluated = pbrl::Evaluation<Real, S, A>;
using YE = decltype(pbrl::PolicyY{std::declval<const Mat<S, A>&>(), std::declval<const Evaluated&>()});
using HatE = decltype(pbrl::PolicyHat{std::declval<const Mat<S, A>&>(), std::declval<const Evaluated&>()});
using Y = decltype(pbrl::PolicyY{std::declval<const Mat<S, A>&>()});
using Hat = decltype(pbrl::PolicyHat{std::declval<const Mat<S, A>&>()});
// Reward shaping has no vjp_pair (problem.hpp): value_penalty calls its vjp() twice.
static_assert(!pbrl::has_vjp_pair<pbrl::RewardShaping<Real, 4, 2>>::value, "no vjp_pair: two vjp() calls");
static_assert(ValuePenaltyTakes<YE, HatE>::value, "value_penalty(y, hat) compiles");
static_assert(!ValuePenaltyTakes<HatE, YE>::value, "value_penalty(hat, y) must not compile");
static_assert(!ValuePenaltyTakes<const Mat<S, A>&, const Mat<S, A>&>::value, "bare matrices must not compile");
static_assert(SampledPenaltyTakes<Y, Hat>::value, "sampled_penalty(kind, y, hat) compiles");
static_assert(!SampledPenaltyTakes<Hat, Y>::value, "sampled_penalty(kind, hat, y) must not compile");
}  // namespace

}  // namespace test_penalties
