// The PBRL solver (Algorithm 1): on reward shaping it drives the penalty towards 0 while it
// improves f; its report is consistent; the lambda ramp, the oracle warm start, the two
// evaluation methods and the paper's 100-state size.
#include "support.hpp"
#include "pbrl/problems/reward_shaping.hpp"

namespace {
using pbrl::EvaluationMethod;
using pbrl::PenaltyKind;
using pbrl::Status;

template <int S, int A>
struct ShapingInstance {
  RandomModel<S, A> task;
  pbrl::RewardShaping<Real, S, A> problem;
  explicit ShapingInstance(std::uint32_t seed, Real tau = Real(0.1)) : task(seed, Real(0.7)) {
    typename pbrl::RewardShaping<Real, S, A>::Data data;
    data.reward = task.reward;
    data.transition = task.transition;
    data.initial = task.initial;
    data.discount = Real(0.9);
    data.lower.tau = tau;
    data.shaping = {Real(-1), Real(1)};
    REQUIRE(problem.init(data) == Status::ok);
  }
};

template <int S, int A>
pbrl::PbrlSettings<Real> shaping_settings(PenaltyKind kind, pbrl::Parameterization param) {
  pbrl::PbrlSettings<Real> s;
  s.penalty = kind;
  s.policy.parameterization = param;
  // The direct parameterization's smoothness grows like tau/floor near the floor (the entropy's
  // curvature), so it takes a larger floor and a smaller step (alpha <= 1/(L_f + lambda L_p)).
  s.policy.floor = Real(1e-2);
  s.inner_steps = 5;
  s.oracle_step = Real(1);
  s.step_x = Real(0.05);
  s.step_y = param == pbrl::Parameterization::softmax ? Real(0.5) : Real(0.02);
  s.penalty_start = s.penalty_final = Real(5);
  return s;
}

template <int S, int A>
Mat<S, A> uniform_parameters(pbrl::Parameterization param) {
  return param == pbrl::Parameterization::softmax ? Mat<S, A>(Mat<S, A>::Zero())
                                                  : Mat<S, A>(Mat<S, A>::Constant(Real(1) / A));
}
}  // namespace

TEST_CASE("PBRL on reward shaping drives the penalty towards 0 while it improves f") {
  constexpr int S = 10, A = 5;
  using Solver = pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>>;
  auto inst = std::make_unique<ShapingInstance<S, A>>(51);
  auto solver = std::make_unique<Solver>();
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman})
    for (auto param : {pbrl::Parameterization::softmax, pbrl::Parameterization::direct}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(static_cast<int>(param));
      const auto settings = shaping_settings<S, A>(kind, param);
      REQUIRE(solver->init(inst->problem, settings, Solver::Params::Zero(), uniform_parameters<S, A>(param)) ==
              Status::ok);
      Solver::Report first, last;
      REQUIRE(solver->step(&first) == Status::ok);
      const int iterations = param == pbrl::Parameterization::softmax ? 300 : 600;
      REQUIRE(solver->run(iterations, &last) == Status::ok);
      CHECK(solver->iteration() == iterations + 1);
      CHECK(first.penalty > Real(0));
      CHECK(std::abs(last.penalty) <= Real(0.02) * first.penalty);
      CHECK(std::abs(last.lower_gap) <= Real(0.02) * first.lower_gap);
      CHECK(last.upper_objective <= first.upper_objective - Real(0.2) * std::abs(first.upper_objective));
      CHECK(last.projected_gradient_norm <= Real(0.1) * first.projected_gradient_norm);
      CHECK(inst->problem.validate_parameters(solver->x()) == Status::ok);
      CHECK(pbrl::validate_parameters<Real, S, A>(settings.policy, solver->y()) == Status::ok);
    }
}

TEST_CASE("PBRL report, lambda ramp and oracle warm start") {
  constexpr int S = 6, A = 3;
  using Solver = pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>>;
  auto inst = std::make_unique<ShapingInstance<S, A>>(52);
  auto solver = std::make_unique<Solver>();
  auto settings = shaping_settings<S, A>(PenaltyKind::value, pbrl::Parameterization::softmax);
  settings.penalty_start = Real(1);
  settings.penalty_final = Real(3);
  settings.penalty_ramp = 4;
  REQUIRE(solver->init(inst->problem, settings, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
  const Real expected[] = {1, 1.5, 2, 2.5, 3, 3, 3};
  for (int k = 0; k < 7; ++k) {
    Solver::Report r;
    REQUIRE(solver->step(&r) == Status::ok);
    CHECK(r.iteration == k);
    CHECK_CLOSE(r.penalty_constant, expected[k], kTight, Real(1));
    CHECK_CLOSE(r.objective, r.upper_objective + r.penalty_constant * r.penalty, kTight, std::abs(r.objective));
    CHECK(r.projected_gradient_norm >= Real(0));
    CHECK_CLOSE(r.penalty, r.lower_gap, kTight, Real(1));  // value penalty = lower-level gap
  }

  // T = 0 keeps the oracle's policy; with T = 1 per iteration and x held still, the warm start
  // accumulates PMD steps across outer iterations into the optimum of the shaped MDP.
  settings.inner_steps = 0;
  REQUIRE(solver->init(inst->problem, settings, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
  const Mat<S, A> initial = solver->oracle_policy();
  REQUIRE(solver->run(5) == Status::ok);
  CHECK(solver->oracle_policy() == initial);
  settings.inner_steps = 1;
  settings.step_x = Real(1e-30);
  REQUIRE(solver->init(inst->problem, settings, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
  REQUIRE(solver->run(200) == Status::ok);
  pbrl::Mdp<Real, S, A> m;
  auto model = std::make_unique<pbrl::RewardShaping<Real, S, A>::Model>();
  REQUIRE(inst->problem.build(solver->x(), *model, m) == Status::ok);
  const auto opt = optimum(m);
  CHECK((solver->oracle_policy() - opt.pi).cwiseAbs().maxCoeff() <= (kDouble ? Real(1e-3) : Real(5e-3)));
}

TEST_CASE("PBRL with x-dependent transitions decreases F with every oracle") {
  constexpr int S = 5, A = 3, K = 3;
  using Problem = MixtureProblem<S, A, K>;
  using Solver = pbrl::Pbrl<Problem>;
  auto problem = std::make_unique<Problem>(61);
  auto solver = std::make_unique<Solver>();
  for (auto oracle : {pbrl::OracleKind::policy_mirror_descent, pbrl::OracleKind::policy_gradient,
                      pbrl::OracleKind::soft_value_iteration})
    for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
      CAPTURE(static_cast<int>(oracle));
      CAPTURE(static_cast<int>(kind));
      pbrl::PbrlSettings<Real> s;
      s.penalty = kind;
      s.oracle = oracle;
      s.inner_steps = oracle == pbrl::OracleKind::policy_gradient ? 20 : 10;
      s.oracle_step = Real(1);
      s.step_x = Real(0.05);
      s.step_y = Real(0.2);
      s.penalty_start = s.penalty_final = Real(2);
      REQUIRE(solver->init(*problem, s, Problem::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
      Solver::Report first, last;
      REQUIRE(solver->step(&first) == Status::ok);
      REQUIRE(solver->run(300, &last) == Status::ok);
      CHECK(last.objective < first.objective);
      CHECK(last.projected_gradient_norm < Real(0.2) * first.projected_gradient_norm);
    }
}

TEST_CASE("sweep evaluation follows the direct solve") {
  constexpr int S = 6, A = 3;
  auto inst = std::make_unique<ShapingInstance<S, A>>(53);
  auto direct = std::make_unique<pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>, EvaluationMethod::direct>>();
  auto swept = std::make_unique<pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>, EvaluationMethod::sweeps>>();
  swept->evaluation_workspace().max_sweeps = 2000;
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    const auto settings = shaping_settings<S, A>(kind, pbrl::Parameterization::softmax);
    REQUIRE(direct->init(inst->problem, settings, pbrl::Vector<Real, S * A>::Zero(), Mat<S, A>::Zero()) == Status::ok);
    REQUIRE(swept->init(inst->problem, settings, pbrl::Vector<Real, S * A>::Zero(), Mat<S, A>::Zero()) == Status::ok);
    REQUIRE(direct->run(30) == Status::ok);
    REQUIRE(swept->run(30) == Status::ok);
    const Real tol = kDouble ? Real(1e-8) : Real(2e-3);
    CHECK((direct->x() - swept->x()).cwiseAbs().maxCoeff() <= tol);
    CHECK((direct->y() - swept->y()).cwiseAbs().maxCoeff() <= tol);
  }
}

TEST_CASE("the paper's size, 100 states and 5 actions, builds and steps") {
  constexpr int S = 100, A = 5;
  using Solver = pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>>;
  using SweepSolver = pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>, EvaluationMethod::sweeps>;
  auto inst = std::make_unique<ShapingInstance<S, A>>(54);
  auto solver = std::make_unique<Solver>();
  auto sweep_solver = std::make_unique<SweepSolver>();
  MESSAGE("sizeof(Pbrl<RewardShaping<Real,100,5>>) with sizeof(Real) = ", sizeof(Real), ": ", sizeof(Solver),
          " bytes direct, ", sizeof(SweepSolver), " bytes sweeps");
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    auto settings = shaping_settings<S, A>(kind, pbrl::Parameterization::softmax);
    settings.inner_steps = 2;
    REQUIRE(solver->init(inst->problem, settings, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    REQUIRE(sweep_solver->init(inst->problem, settings, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    Solver::Report a, b;
    REQUIRE(solver->run(3, &a) == Status::ok);
    REQUIRE(sweep_solver->run(3, &b) == Status::ok);
    CHECK(std::isfinite(a.objective));
    CHECK_CLOSE(a.objective, b.objective, kDouble ? Real(1e-8) : Real(1e-3), std::abs(a.objective));
  }
}
