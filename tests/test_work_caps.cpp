// Work caps fixed by the build (include/pbrl/core/config.hpp): this program is built with the firmware
// example's B = 24 and H = 5 and T <= 3 (tests/CMakeLists.txt), so validation refuses more, the
// trajectory buffer shrinks to the cap, and a solver at the caps runs. (libpbrl.a does not depend
// on the caps: its sources include no header that uses them.)
#include "solver_support.hpp"
#include "support.hpp"

#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/solver/pbrl.hpp"

static_assert(PBRL_MAX_BATCH == 24 && PBRL_MAX_HORIZON == 5 && PBRL_MAX_INNER_STEPS == 3,
              "tests/CMakeLists.txt builds this program with these caps");


namespace {
// Sampled PBRL settings with the policy-gradient oracle at the build's caps: T = 3, B = 24, H = 5.
pbrl::PbrlSettings<Real> at_the_caps() {
  pbrl::PbrlSettings<Real> s;
  s.gradient = pbrl::GradientMode::sampled;
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.inner_steps = 3;
  s.sampling.batch = 24;
  s.sampling.horizon = 5;
  return s;
}
}  // namespace

TEST_CASE("the build's caps bound what validation accepts") {
  CHECK(pbrl::kMaxBatch == 24);
  CHECK(pbrl::kMaxHorizon == 5);
  CHECK(pbrl::kMaxInnerSteps == 3);

  pbrl::PbrlSettings<Real> s = at_the_caps();
  CHECK(pbrl::validate(s, 3) == Status::ok);
  auto t = s;
  t.sampling.batch = 25;
  CHECK(pbrl::validate(t, 3) == Status::bad_setting);
  t = s;
  t.sampling.horizon = 6;
  CHECK(pbrl::validate(t, 3) == Status::bad_setting);
  t = s;
  t.inner_steps = 4;
  CHECK(pbrl::validate(t, 3) == Status::bad_setting);
  t = s;
  t.gap_tolerance = Real(0.01);
  t.inner_steps_max = 3;
  CHECK(pbrl::validate(t, 3) == Status::ok);
  t.inner_steps_max = 4;
  CHECK(pbrl::validate(t, 3) == Status::bad_setting);

  pbrl::MetaGradientSettings<Real> meta;
  meta.agent_steps = 3;
  CHECK(pbrl::validate(meta) == Status::ok);
  meta.agent_steps = 4;
  CHECK(pbrl::validate(meta) == Status::bad_setting);
  pbrl::DrlhfSettings<Real> drlhf;
  drlhf.reward_steps = drlhf.policy_steps = 3;
  CHECK(pbrl::validate(drlhf) == Status::ok);
  drlhf.reward_steps = 4;
  CHECK(pbrl::validate(drlhf) == Status::bad_setting);
}

TEST_CASE("the trajectory buffer is sized by the horizon cap") {
  CHECK(sizeof(pbrl::Trajectory<Real>) == sizeof(pbrl::Trajectory<Real, 5>));
  CHECK(sizeof(pbrl::Trajectory<Real>) < sizeof(pbrl::Trajectory<Real, 64>));
}

TEST_CASE("a sampled solver at the caps runs, and its steps are the capped work") {
  constexpr int S = 4, A = 3;
  RandomModel<S, A> task(71, Real(0.7));
  auto problem = std::make_unique<pbrl::RewardShaping<Real, S, A>>();
  REQUIRE(problem->init(solver_support::shaping_task_data<pbrl::RewardShaping<Real, S, A>>(task)) == Status::ok);
  pbrl::PbrlSettings<Real> s = at_the_caps();
  s.lambda_start = s.lambda_final = Real(2);
  using Solver = pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>>;
  auto solver = std::make_unique<Solver>();
  REQUIRE(solver->init(*problem, s, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
  Solver::Report report;
  for (int k = 0; k < 3; ++k) REQUIRE(solver->step(&report) == Status::ok);
  // (T + 2) B H environment steps per step (docs/performance.md, "Work per step").
  CHECK(report.environment_steps == 3 * (3 + 2) * 24 * 5);
  CHECK(solver->x().allFinite());
}
