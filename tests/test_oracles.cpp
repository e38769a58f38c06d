// Lower-level oracles: soft value iteration is the regularized optimum, PMD converges linearly
// to it, the policy-gradient oracles ascend, and the gradient-dominance inequality holds.
#include "support.hpp"

namespace test_oracles {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 6, A = 3;
using Ws = pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>;

pbrl::Evaluation<Real, S, A> eval_of(const pbrl::Mdp<Real, S, A>& m, const Mat<S, A>& pi) {
  auto ws = std::make_unique<Ws>();
  pbrl::Evaluation<Real, S, A> e;
  REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
  return e;
}
}  // namespace

TEST_CASE("soft value iteration returns the regularized optimum") {
  RandomModel<S, A> model(31);
  pbrl::Rng rng(8);
  for (Real tau : {Real(0), Real(0.5)})
    for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference}) {
      const auto m = model.mdp(Real(0.9), tau, kind);
      const auto opt = optimum(m);
      const auto e = eval_of(m, opt.pi);
      // the soft-greedy policy's value is the fixed point, and no random policy beats it
      CHECK((e.value - opt.value).cwiseAbs().maxCoeff() <= Real(100) * kTight * (Real(1) + opt.value.cwiseAbs().maxCoeff()));
      for (int trial = 0; trial < 20; ++trial) {
        const auto other = eval_of(m, random_policy<S, A>(rng));
        CHECK((other.value.array() <= opt.value.array() + kTight * Real(100)).all());
      }
    }
}

TEST_CASE("soft value iteration: stopping at max_iterations is an outcome (converged = false), not an error") {
  RandomModel<S, A> model(35);
  const auto m = model.mdp(Real(0.9), Real(0.3));
  const Real tolerance = kDouble ? Real(1e-10) : Real(1e-4);
  Vec<S> v = Vec<S>::Zero();
  Mat<S, A> q, log_pi, pi;
  pbrl::SoftValueIterationResult<Real> few, enough, exact;
  CHECK(pbrl::soft_value_iteration(m, 3, tolerance, v, q, {log_pi, pi}, &few) == Status::ok);
  CHECK(few.iterations == 3);
  CHECK_FALSE(few.converged);
  CHECK(few.change > tolerance);
  CHECK(pbrl::validate_policy(pi) == Status::ok);  // a usable policy all the same
  v.setZero();
  CHECK(pbrl::soft_value_iteration(m, 5000, tolerance, v, q, {log_pi, pi}, &enough) == Status::ok);
  CHECK(enough.converged);
  CHECK(enough.iterations < 5000);
  CHECK(enough.change <= tolerance);
  // Exactly the sweeps it needs: it converges on the last one allowed.
  v.setZero();
  CHECK(pbrl::soft_value_iteration(m, enough.iterations, tolerance, v, q, {log_pi, pi}, &exact) == Status::ok);
  CHECK(exact.iterations == enough.iterations);
  CHECK(exact.converged);
}

TEST_CASE("run_oracle says whether it stopped on its target or ran to max_steps") {
  RandomModel<S, A> model(36);
  const auto m = model.mdp(Real(0.9), Real(0.3));
  const Real target = kDouble ? Real(1e-6) : Real(1e-3);
  const pbrl::PolicySet<Real> set{};
  for (auto kind : {pbrl::OracleKind::policy_mirror_descent, pbrl::OracleKind::soft_value_iteration}) {
    CAPTURE(static_cast<int>(kind));
    auto run = [&](int max_steps, Real goal, pbrl::OracleResult& result) {
      auto ws = std::make_unique<Ws>();
      pbrl::Evaluation<Real, S, A> e;
      Mat<S, A> scratch, pi = Mat<S, A>::Constant(Real(1) / A);
      Mat<S, A> log_pi = pi.array().log().matrix();
      Vec<S> value = Vec<S>::Zero();
      REQUIRE(pbrl::run_oracle(pbrl::OracleSpec<Real>{kind, set, Real(10), 1, max_steps, goal}, m, *ws, scratch,
                               {e, log_pi, pi, value}, result) == Status::ok);
    };
    pbrl::OracleResult met, capped, untargeted;
    run(1000, target, met);  // reachable: stops early on the target
    CHECK(met.converged);
    CHECK(met.steps < 1000);
    run(2, target, capped);  // two steps from uniform are not enough: ok, not converged
    CHECK_FALSE(capped.converged);
    CHECK(capped.steps == 2);
    run(5, Real(0), untargeted);  // target 0: exactly max_steps, never "converged"
    CHECK_FALSE(untargeted.converged);
    CHECK(untargeted.steps == 5);
  }
}

TEST_CASE("oracle_step checks its warm start; the solvers' form (checked warm start) gives its numbers") {
  RandomModel<S, A> model(37);
  const auto m = model.mdp(Real(0.9), Real(0.3));
  pbrl::Rng rng(10);
  const pbrl::PolicySet<Real> set{};
  for (auto kind : {pbrl::OracleKind::policy_mirror_descent, pbrl::OracleKind::policy_gradient}) {
    CAPTURE(static_cast<int>(kind));
    struct State {
      Ws ws;
      pbrl::Evaluation<Real, S, A> e;
      Mat<S, A> scratch = Mat<S, A>::Zero(), log_pi, pi;
      Vec<S> value = Vec<S>::Zero();
      pbrl::OracleRun run{};
    };
    auto start = std::make_unique<State>();
    start->pi = random_policy<S, A>(rng);
    start->log_pi = start->pi.array().log().matrix();
    // Two steps each: the second starts from the first's output.
    auto checked = std::make_unique<State>(*start), formed = std::make_unique<State>(*start);
    for (int i = 0; i < 2; ++i) {
      const pbrl::OracleSpec<Real> spec{kind, set, Real(0.5), 1, 2, Real(0)};
      REQUIRE(pbrl::oracle_step(spec, m, checked->ws, checked->scratch,
                                {checked->e, checked->log_pi, checked->pi, checked->value}, checked->run) == Status::ok);
      REQUIRE(pbrl::detail::oracle_step<false>(spec, m, formed->ws, formed->scratch,
                                               {formed->e, formed->log_pi, formed->pi, formed->value},
                                               formed->run) == Status::ok);
    }
    CHECK(checked->run.done);
    CHECK(formed->run.done);
    CHECK(formed->run.result.steps == 2);
    CHECK(formed->pi == checked->pi);  // to the bit
    CHECK(formed->log_pi == checked->log_pi);
    CHECK(formed->e.value == checked->e.value);
    // The public call refuses a warm start that is not a policy, or whose logs are not finite,
    // and leaves it as it was.
    for (int bad = 0; bad < 2; ++bad) {
      auto s = std::make_unique<State>(*start);
      if (bad == 0)
        s->pi(1, 0) += Real(0.5);  // row 1 sums to 1.5
      else
        s->log_pi(2, 1) = std::numeric_limits<Real>::quiet_NaN();
      const Mat<S, A> pi = s->pi, log_pi = s->log_pi;
      CHECK(pbrl::oracle_step(pbrl::OracleSpec<Real>{kind, set, Real(0.5), 1, 2, Real(0)}, m, s->ws, s->scratch,
                              {s->e, s->log_pi, s->pi, s->value}, s->run) == (bad == 0 ? Status::bad_policy : Status::not_finite));
      CHECK(s->pi == pi);
      CHECK(((s->log_pi.array() == log_pi.array()) || (s->log_pi.array().isNaN() && log_pi.array().isNaN())).all());
      CHECK(s->run.result.steps == 0);
    }
  }
}

TEST_CASE("PMD converges linearly to the soft-value-iteration optimum") {
  // Entropy-regularized PMD with step eta is NPG with step eta' = (1-gamma) eta / (1 + eta tau),
  // so (Cen et al. 2021, Theorem 1) |Q* - Q^{t+1}|_inf <= C1 gamma (1 - eta' tau)^t with
  // C1 = |Q* - Q^0|_inf + 2 tau / (1 + eta tau) |log pi* - log pi^0|_inf.
  RandomModel<S, A> model(32);
  pbrl::Rng rng(9);
  const Real gamma = Real(0.9), tau = Real(0.5), eta = Real(10);
  const auto m = model.mdp(gamma, tau);
  const auto opt = optimum(m);
  Mat<S, A> pi = random_policy<S, A>(rng);
  Mat<S, A> log_pi = pi.array().log().matrix();
  const auto e0 = eval_of(m, pi);
  const Real c1 = (opt.q - e0.q).cwiseAbs().maxCoeff() +
                  Real(2) * tau / (Real(1) + eta * tau) * (opt.log_pi - log_pi).cwiseAbs().maxCoeff();
  const Real rate = Real(1) - (Real(1) - gamma) * eta * tau / (Real(1) + eta * tau);
  auto ws = std::make_unique<Ws>();
  pbrl::Evaluation<Real, S, A> e;
  Real bound = c1 * gamma;
  const Real floor_error = kDouble ? Real(1e-11) : Real(1e-4);
  Real last_error = 0;
  for (int t = 0; t < 120; ++t) {
    REQUIRE(pbrl::pmd_step(m, eta, *ws, e, {log_pi, pi}) == Status::ok);
    const Real error = (opt.q - eval_of(m, pi).q).cwiseAbs().maxCoeff();
    CHECK(error <= bound + floor_error);
    bound *= rate;
    last_error = error;
  }
  CHECK(last_error <= (kDouble ? Real(1e-9) : Real(1e-3)));
  CHECK((pi - opt.pi).cwiseAbs().maxCoeff() <= (kDouble ? Real(1e-9) : Real(1e-3)));
}

TEST_CASE("PMD improves the value at every state and handles a reference policy and tau = 0") {
  RandomModel<S, A> model(33);
  pbrl::Rng rng(10);
  for (Real tau : {Real(0), Real(0.3)}) {
    const auto m = model.mdp(Real(0.8), tau, pbrl::RegularizerKind::kl_reference);
    const auto opt = optimum(m);
    Mat<S, A> pi = random_policy<S, A>(rng);
    Mat<S, A> log_pi = pi.array().log().matrix();
    auto ws = std::make_unique<Ws>();
    pbrl::Evaluation<Real, S, A> e;
    Vec<S> previous = eval_of(m, pi).value;
    const Real gap0 = (opt.value - previous).cwiseAbs().maxCoeff();
    for (int t = 0; t < 60; ++t) {
      REQUIRE(pbrl::pmd_step(m, Real(2), *ws, e, {log_pi, pi}) == Status::ok);
      const Vec<S> v = eval_of(m, pi).value;
      CHECK((v.array() >= previous.array() - Real(10) * kTight).all());
      previous = v;
    }
    const Real gap = (opt.value - previous).cwiseAbs().maxCoeff();
    if (tau > 0) CHECK(gap <= (kDouble ? Real(1e-6) : Real(1e-3)));  // linear rate
    else CHECK(gap <= Real(0.05) * gap0);  // unregularized: sublinear, still converging
  }
}

TEST_CASE("policy-gradient oracles ascend towards the optimum") {
  RandomModel<S, A> model(34);
  pbrl::Rng rng(11);
  const auto m = model.mdp(Real(0.8), Real(0.2));
  const auto opt = optimum(m);
  const Real v_star = m.rho().dot(opt.value);
  for (auto param : {pbrl::Parameterization::direct, pbrl::Parameterization::softmax}) {
    CAPTURE(static_cast<int>(param));
    pbrl::PolicySet<Real> set;
    set.parameterization = param;
    set.floor = Real(1e-4);
    Mat<S, A> pi = random_policy<S, A>(rng), grad;
    Mat<S, A> log_pi = pi.array().log().matrix();
    auto ws = std::make_unique<Ws>();
    pbrl::Evaluation<Real, S, A> e;
    const Real gap0 = v_star - eval_of(m, pi).value_rho;
    Real previous = eval_of(m, pi).value_rho;
    const Real eta = param == pbrl::Parameterization::direct ? Real(0.05) : Real(0.5);
    for (int t = 0; t < 400; ++t) {
      REQUIRE(pbrl::policy_gradient_step(m, set, eta, *ws, e, grad, {log_pi, pi}) == Status::ok);
      const Real v = eval_of(m, pi).value_rho;
      CHECK(v >= previous - Real(10) * kTight);
      previous = v;
    }
    CHECK(v_star - previous <= Real(0.05) * gap0);
    CHECK(pbrl::validate_policy(pi) == Status::ok);
  }
}

TEST_CASE("gradient dominance: max_pi' <grad V, pi' - pi> >= (1-gamma) min rho (V* - V^pi)") {
  // The lemma's proof gives this constant (its statement prints the reciprocal).
  pbrl::Rng rng(12);
  for (int instance = 0; instance < 10; ++instance) {
    RandomModel<S, A> model(100 + instance);
    for (Real tau : {Real(0), Real(0.3)}) {
      const auto m = model.mdp(Real(0.85), tau);
      const auto opt = optimum(m);
      const Real v_star = m.rho().dot(opt.value);
      const Real mu = (Real(1) - m.discount) * m.rho().minCoeff();
      for (int trial = 0; trial < 10; ++trial) {
        const Mat<S, A> pi = random_policy<S, A>(rng);
        const auto e = eval_of(m, pi);
        Mat<S, A> g;
        pbrl::policy_gradient(m, pi, e, g);
        Real lhs(0);  // the maximum over the simplex picks the best action per state
        for (int s = 0; s < S; ++s) lhs += g.row(s).maxCoeff() - g.row(s).dot(pi.row(s));
        const Real gap = v_star - e.value_rho;
        CHECK(gap >= -kTight);
        CHECK(lhs >= mu * gap - kTight);
      }
    }
  }
}

}  // namespace test_oracles
