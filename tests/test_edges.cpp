// Every output of the library is a valid input to it, at the edges as well as in the middle:
// gamma up to 0.999, |r| up to 1e6, oracle steps eta up to 1e3, tau down to 1e-8, in the
// suite's precision (float and double). Each oracle is called repeatedly on its own output and
// must keep returning ok with a policy that passes validate_policy, and Pbrl::step must keep
// running. The sizes are tiny: this file also runs in soft float under QEMU on a Cortex-M0+.
#include "support.hpp"
#include "pbrl/problems/reward_shaping.hpp"

namespace test_edges {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 3, A = 3;
using Ws = pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>;
constexpr Real kEps = std::numeric_limits<Real>::epsilon();

// A row's sum may be off 1 by a few roundings per action, not by eps * |logits| (the old error).
// The projection's worst case is (A^2 + 2A + 2) * eps/2 <= 4*A*eps for A <= 5 (the log-space
// rows' is (A - 1/2) * eps); validate_policy allows 64*A*eps, 16 times more.
template <int N>
constexpr Real row_sum_tolerance() { return Real(4) * Real(N) * kEps; }

// (log_pi, pi) as every oracle returns it: a valid policy whose rows sum to 1 within a few eps,
// floored at log_floor, and pi = exp(log_pi) up to the rounding of exp at |log_pi|.
template <int NS, int NA>
void check_policy_pair(const Mat<NS, NA>& log_pi, const Mat<NS, NA>& pi) {
  CHECK(pbrl::validate_policy<Real, NS, NA>(pi) == Status::ok);
  REQUIRE(log_pi.allFinite());
  for (int s = 0; s < NS; ++s) {
    CAPTURE(s);
    CHECK(std::abs(pi.row(s).sum() - Real(1)) <= row_sum_tolerance<NA>());
    for (int a = 0; a < NA; ++a) {
      CHECK(pi(s, a) >= pbrl::log_floor<Real>());
      const Real rounding = (Real(4) + std::abs(log_pi(s, a))) * kEps;
      CHECK(std::abs(std::exp(log_pi(s, a)) - pi(s, a)) <= rounding * pi(s, a));
    }
  }
}

template <int NS, int NA>
Mat<NS, NA> uniform() { return Mat<NS, NA>::Constant(Real(1) / Real(NA)); }

// A random model with rewards times `scale` whose action 1 copies action 0 (reward and
// transitions). The tie keeps two logits equal at the scale of eta*Q, where the normalization's
// rounding shows in the row sum; a near-deterministic policy would hide it (its normalizer is
// the largest logit, exactly).
template <int NS, int NA>
struct TiedModel : RandomModel<NS, NA> {
  TiedModel(std::uint32_t seed, Real scale) : RandomModel<NS, NA>(seed) {
    for (Real& r : this->reward) r *= scale;
    for (int s = 0; s < NS; ++s) {
      this->reward[s * NA + 1] = this->reward[s * NA];
      for (int t = 0; t < NS; ++t) this->transition[(s * NA + 1) * NS + t] = this->transition[s * NA * NS + t];
    }
  }
};

enum class Oracle { pmd, gradient_direct, gradient_softmax, soft_value_iteration };
// Workspace of one oracle run (kept off the stack: it runs on a Cortex-M0+ too).
struct Run {
  Ws ws;
  pbrl::Evaluation<Real, S, A> eval;
  Mat<S, A> grad, q, log_pi, pi;
  Vec<S> value;
};

Status call(Oracle o, const pbrl::Mdp<Real, S, A>& m, Real eta, Run& r) {
  pbrl::PolicySet<Real> set;
  set.parameterization = o == Oracle::gradient_direct ? Parameterization::direct : Parameterization::softmax;
  switch (o) {
    case Oracle::pmd: return pbrl::pmd_step(m, eta, r.ws, r.eval, {r.log_pi, r.pi});
    case Oracle::soft_value_iteration:
      return pbrl::soft_value_iteration(m, 50, Real(0), r.value, r.q, {r.log_pi, r.pi});
    default: return pbrl::policy_gradient_step(m, set, eta, r.ws, r.eval, r.grad, {r.log_pi, r.pi});
  }
}

// Reward shaping on a tied task (above), the learner's tau as given.
template <int NS, int NA>
struct Shaping {
  TiedModel<NS, NA> task;
  pbrl::RewardShaping<Real, NS, NA> problem;
  Shaping(std::uint32_t seed, Real gamma, Real scale, Real tau) : task(seed, scale) {
    typename pbrl::RewardShaping<Real, NS, NA>::Data data;
    data.reward = task.reward;
    data.transition = task.transition;
    data.initial = task.initial;
    data.discount = gamma;
    data.lower.tau = tau;
    REQUIRE(problem.init(data) == Status::ok);
  }
};

// `steps` Pbrl steps (exact mode, PMD oracle, otherwise default settings but for the oracle
// step) with both penalties; every step returns ok and leaves finite, valid iterates.
template <int NS, int NA>
void run_pbrl(const Shaping<NS, NA>& inst, Real oracle_step, int steps) {
  using Solver = pbrl::Pbrl<pbrl::RewardShaping<Real, NS, NA>>;
  auto solver = std::make_unique<Solver>();
  for (auto kind : {pbrl::PenaltyKind::value, pbrl::PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    pbrl::PbrlSettings<Real> settings;
    REQUIRE(settings.gradient == pbrl::GradientMode::exact);
    REQUIRE(settings.oracle == pbrl::OracleKind::policy_mirror_descent);
    settings.penalty_kind = kind;
    settings.oracle_step = oracle_step;
    REQUIRE(solver->init(inst.problem, settings, Solver::Params::Zero(), Mat<NS, NA>::Zero()) == Status::ok);
    pbrl::PbrlReport<Real> report;
    Status st = Status::ok;
    bool valid = true;
    int k = 0;
    for (; k < steps; ++k) {  // stops at the first failure (REQUIRE does not, without exceptions)
      st = solver->step(&report);
      valid = solver->x().allFinite() &&
              pbrl::validate_parameters<Real, NS, NA>(settings.policy, solver->y()) == Status::ok &&
              pbrl::validate_policy<Real, NS, NA>(solver->oracle_policy()) == Status::ok &&
              non_finite_field(report) == nullptr;
      if (st != Status::ok || !valid) break;
    }
    CAPTURE(k);
    CHECK(st == Status::ok);
    CHECK(valid);
    CHECK(k == steps);
  }
}
}  // namespace

TEST_CASE("pmd_step accepts its own output: S = 2, A = 2, gamma 0.999, tau 0.1, eta 1 (regression)") {
  // pmd_step set pi = exp(log pi) after a log-sum-exp normalization whose rounding is
  // eps * |logits|, with logits ~ eta*Q ~ 1e3 here: the rows summed to 1 only within ~5e-14,
  // past validate_policy's 64*A*eps = 2.8e-14 (double), and the second call returned bad_policy
  // (in float the third, after sums off by ~3e-5).
  const auto model = std::make_unique<RandomModel<2, 2>>(7);
  const auto m = model->mdp(Real(0.999), Real(0.1));
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, 2, EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, 2, 2> eval;
  Mat<2, 2> pi = uniform<2, 2>(), log_pi = pi.array().log().matrix();
  for (int k = 0; k < 20; ++k) {
    CAPTURE(k);
    const Status st = pbrl::pmd_step(m, Real(1), *ws, eval, {log_pi, pi});
    CHECK(st == Status::ok);
    if (st != Status::ok) break;
    check_policy_pair<2, 2>(log_pi, pi);
  }
}

TEST_CASE("every oracle accepts its own output at gamma 0.999, |r| 1e6, eta 1e3, tau 1e-8") {
  // Float keeps these cases meaningful, so they must succeed there too: at |r| 1e6 and gamma
  // 0.999, V ~ 1e9 is off by ~3e-5 relative (eps times the conditioning 1/(1-gamma)), while the
  // actions' Q differ by ~1e5 or more; the policies come out as in double.
  auto run = std::make_unique<Run>();
  for (Oracle oracle : {Oracle::pmd, Oracle::gradient_direct, Oracle::gradient_softmax, Oracle::soft_value_iteration})
    for (Real gamma : {Real(0.9), Real(0.999)})
      for (Real scale : {Real(1), Real(1e6)})
        for (Real tau : {Real(1e-8), Real(0.1)})
          for (Real eta : {Real(1), Real(1e3)}) {
            if (oracle == Oracle::soft_value_iteration && eta != Real(1)) continue;  // no step size
            CAPTURE(static_cast<int>(oracle));  // in the order of enum Oracle
            CAPTURE(gamma);
            CAPTURE(scale);
            CAPTURE(tau);
            CAPTURE(eta);
            const auto model = std::make_unique<TiedModel<S, A>>(41, scale);
            const auto m = model->mdp(gamma, tau, pbrl::RegularizerKind::kl_reference);
            run->pi = uniform<S, A>();
            run->log_pi = run->pi.array().log().matrix();
            run->value.setZero();
            for (int k = 0; k < 6; ++k) {
              CAPTURE(k);
              const Status st = call(oracle, m, eta, *run);
              CHECK(st == Status::ok);
              if (st != Status::ok) break;
              check_policy_pair<S, A>(run->log_pi, run->pi);
              if (oracle == Oracle::gradient_direct)  // the projection keeps the set's floor
                CHECK((run->pi.array() >= pbrl::PolicySet<Real>{}.floor).all());
            }
          }
}

TEST_CASE("the projection onto the floored simplex sums to 1 however large the row") {
  // A projected gradient step pi + eta*g can be ~1e15 (eta 1e3, dV/dpi ~ 1e9/(1-gamma)):
  // working relative to the row's maximum keeps the result's rounding at a few eps.
  const Real floor = Real(1e-6);
  for (Real big : {Real(1), Real(1e6), Real(1e15), Real(1e30)}) {
    CAPTURE(big);
    Mat<2, A> rows;  // a tie at the top (-> 1/2, 1/2, floor) and a clear winner
    rows << big, big, -big, big, -big, Real(0.5) * big;
    for (int s = 0; s < 2; ++s) {
      pbrl::project_simplex(rows.row(s), floor);
      CHECK(std::abs(rows.row(s).sum() - Real(1)) <= row_sum_tolerance<A>());
      CHECK((rows.row(s).array() >= floor).all());
    }
  }
  // The middle is unchanged: a row already in the set projects to itself up to rounding.
  Mat<2, A> inside;
  inside << Real(0.2), Real(0.3), Real(0.5), Real(1e-6), Real(0.5), Real(0.5) - Real(1e-6);
  Mat<2, A> projected = inside;
  for (int s = 0; s < 2; ++s) pbrl::project_simplex(projected.row(s), Real(1e-6));
  CHECK((projected - inside).cwiseAbs().maxCoeff() <= Real(4) * kEps);
}

TEST_CASE("Pbrl::step with default settings runs at gamma 0.999") {
  // Failed at the first step: the PMD oracle rejected its own output.
  const auto inst = std::make_unique<Shaping<S, A>>(46, Real(0.999), Real(1), Real(0.1));
  run_pbrl(*inst, Real(1), 100);
}

TEST_CASE("Pbrl::step with default settings runs with rewards times 1e6") {
  // Failed at the first step (gamma 0.9): logits eta*Q ~ 1e7 round the normalizer by ~1e-9.
  const auto inst = std::make_unique<Shaping<S, A>>(46, Real(0.9), Real(1e6), Real(0.1));
  run_pbrl(*inst, Real(1), 100);
}

TEST_CASE("Pbrl::step with default settings runs at oracle steps 50 to 1e3 with tau 0.01") {
  const auto inst = std::make_unique<Shaping<S, A>>(46, Real(0.95), Real(1), Real(0.01));
  for (Real eta : {Real(50), Real(1e3)}) {
    CAPTURE(eta);
    run_pbrl(*inst, eta, 100);
  }
}

}  // namespace test_edges
