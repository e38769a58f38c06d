// The work of one step() is fixed by the sizes and the settings, never by the data: the number of
// times a step calls into the problem (build M(x), vector-Jacobian products, per-sample VJPs, f)
// is the documented constant at every iteration and on every instance, and the sweep evaluation
// stops at max_sweeps even when its tolerance is out of reach, an outcome each report counts
// (max_sweeps_hit), not an error. (Instructions per step on the
// Cortex-M4 are measured by bench/step_instructions and the firmware example.)
#include "game_support.hpp"
#include "solver_support.hpp"
#include "support.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/reward_shaping.hpp"

#include <limits>
#include <utility>

namespace test_bounded_work {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
// Base with every call the solvers make into a problem counted.
template <class Base>
struct Counting : Base {
  mutable long builds = 0, vjps = 0, sample_vjps = 0, uppers = 0;
  template <class... Args>
  Status build(Args&&... args) const {
    ++builds;
    return Base::build(std::forward<Args>(args)...);
  }
  template <class... Args>
  void vjp(Args&&... args) const {
    ++vjps;
    Base::vjp(std::forward<Args>(args)...);
  }
  template <class... Args>
  void sample_vjp(Args&&... args) const {
    ++sample_vjps;
    Base::sample_vjp(std::forward<Args>(args)...);
  }
  template <class... Args>
  auto upper(Args&&... args) const -> decltype(Base::upper(std::forward<Args>(args)...)) {  // SFINAE: upper_on_chain
    ++uppers;
    return Base::upper(std::forward<Args>(args)...);
  }
  void reset() const { builds = vjps = sample_vjps = uppers = 0; }
};

struct Calls {
  long builds, vjps, sample_vjps, uppers;
};

template <class Problem>
void check_calls(const Problem& problem, const Calls& expected) {
  CHECK(problem.builds == expected.builds);
  CHECK(problem.vjps == expected.vjps);
  CHECK(problem.sample_vjps == expected.sample_vjps);
  CHECK(problem.uppers == expected.uppers);
  problem.reset();
}

template <int S, int A>
struct CountingShaping {
  RandomModel<S, A> task;
  Counting<pbrl::RewardShaping<Real, S, A>> problem;
  explicit CountingShaping(std::uint32_t seed) : task(seed, Real(0.7)) {
    REQUIRE(problem.init(solver_support::shaping_task_data<pbrl::RewardShaping<Real, S, A>>(task)) == Status::ok);
  }
};
// The counted solves' settings: T oracle steps (step 0.1), gradients in `mode`, the policy
// gradient oracle when sampled (batches of B rollouts of H steps), policy mirror descent when exact.
template <class Settings>
void counted_settings(Settings& s, GradientMode mode, int T, int B, int H) {
  solver_support::set_sampled_policy_gradient(s, T, H, B);
  s.gradient = mode;
  if (mode != GradientMode::sampled) s.oracle = pbrl::OracleKind::policy_mirror_descent;
}
}  // namespace

TEST_CASE("PBRL: calls into the problem per step are the documented constants") {
  constexpr int S = 6, A = 3, T = 4, B = 5, H = 3;
  using Problem = Counting<pbrl::RewardShaping<Real, S, A>>;
  for (std::uint32_t seed : {11u, 12u}) {
    auto inst = std::make_unique<CountingShaping<S, A>>(seed);
    for (auto kind : {PenaltyKind::value, PenaltyKind::bellman})
      for (auto mode : {GradientMode::exact, GradientMode::sampled})
        for (bool tolerance : {false, true}) {
          CAPTURE(seed);
          CAPTURE(static_cast<int>(kind));
          CAPTURE(static_cast<int>(mode));
          CAPTURE(tolerance);
          auto solver = std::make_unique<pbrl::Pbrl<Problem>>();
          pbrl::PbrlSettings<Real> s;
          s.penalty_kind = kind;
          counted_settings(s, mode, T, B, H);
          // Tolerance mode with an unreachable epsilon: lambda grows every step and T runs to its
          // cap, the worst case of one step.
          if (tolerance) {
            s.gap_tolerance = std::numeric_limits<Real>::min();
            s.lambda_patience = 1;
            s.inner_steps_max = 2 * T;
          }
          REQUIRE(solver->init(inst->problem, s, Problem::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
          inst->problem.reset();
          // Exact: one build, one f, and the penalty's x-gradient as J^T products (value: two,
          // Bellman: one of the occupancy difference). Sampled: the penalty's two batches make
          // B trajectories of H per-sample VJPs each; the oracle needs none. T does not change them.
          const Calls expected = mode == GradientMode::exact
                                     ? Calls{1, kind == PenaltyKind::value ? 2 : 1, 0, 1}
                                     : Calls{1, 0, 2L * B * H, 1};
          std::int64_t steps = 0;
          for (int k = 0; k < 6; ++k) {
            typename pbrl::Pbrl<Problem>::Report r;
            const std::int64_t growths = solver->schedule().net_growths();
            REQUIRE(solver->step(&r) == Status::ok);
            // A report adds two exact evaluations in sampled mode, never a call into the problem.
            check_calls(inst->problem, expected);
            CHECK(r.inner_steps >= T);
            CHECK(r.inner_steps <= (tolerance ? 2 * T : T));
            // Sampled: T grows with lambda, T * (1 + growths not taken back), up to the cap.
            if (tolerance && mode == GradientMode::sampled) CHECK(r.inner_steps == std::min<std::int64_t>(T * (1 + growths), 2 * T));
            steps += (r.inner_steps + 2) * B * H;
          }
          if (mode == GradientMode::sampled) CHECK(solver->environment_steps() == steps);
          // solve(): at most its cap of steps, each the same calls.
          pbrl::SolveResult result;
          REQUIRE(solver->solve(3, result) == Status::ok);
          CHECK(result.steps <= 3);
          CHECK(inst->problem.builds == result.steps * expected.builds);
          CHECK(inst->problem.vjps == result.steps * expected.vjps);
          CHECK(inst->problem.sample_vjps == result.steps * expected.sample_vjps);
          CHECK(inst->problem.uppers == result.steps * expected.uppers);
          inst->problem.reset();
        }
  }
}

namespace {
// Incentive design declaring that its transitions depend on x: the Nikaido-Isoda penalty then
// takes one J^T product per player instead of one of the joint occupancies' difference.
template <int S, int A1, int A2>
struct NotRewardOnly : Counting<pbrl::IncentiveDesign<Real, S, A1, A2>> {
  static constexpr bool kRewardOnly = false;
};
}  // namespace

TEST_CASE("PBRL zero-sum: calls into the game problem per step are the documented constants") {
  constexpr int S = 4, A1 = 2, A2 = 3, T = 2, B = 4, H = 3;
  using Problem = Counting<pbrl::IncentiveDesign<Real, S, A1, A2>>;
  using Declared = NotRewardOnly<S, A1, A2>;
  static_assert(pbrl::is_reward_only<Problem>::value && !pbrl::is_reward_only<Declared>::value, "the two branches");
  for (std::uint32_t seed : {21u, 22u}) {
    auto data = std::make_unique<GameData<S, A1, A2>>(seed);
    auto problem = std::make_unique<Problem>();
    auto declared = std::make_unique<Declared>();
    REQUIRE(problem->init(data->incentive(Real(0.9), Real(0.1))) == Status::ok);
    REQUIRE(declared->init(data->incentive(Real(0.9), Real(0.1))) == Status::ok);
    for (auto mode : {GradientMode::exact, GradientMode::sampled}) {
      CAPTURE(seed);
      CAPTURE(static_cast<int>(mode));
      auto solver = std::make_unique<pbrl::PbrlZeroSum<Problem>>();
      auto other = std::make_unique<pbrl::PbrlZeroSum<Declared>>();
      pbrl::PbrlZeroSumSettings<Real> s;
      counted_settings(s, mode, T, B, H);
      REQUIRE(solver->init(*problem, s, Problem::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) ==
              Status::ok);
      REQUIRE(other->init(*declared, s, Problem::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) ==
              Status::ok);
      problem->reset();
      declared->reset();
      // Nikaido-Isoda: one J^T product of the joint occupancies' difference where P_x does not
      // depend on x (exact), else one per player; sampled, two batches of B*H joint samples.
      const Calls expected = mode == GradientMode::exact ? Calls{1, 1, 0, 1} : Calls{1, 0, 2L * B * H, 1};
      const Calls expected_declared = mode == GradientMode::exact ? Calls{1, 2, 0, 1} : expected;
      for (int k = 0; k < 6; ++k) {
        REQUIRE(solver->step() == Status::ok);
        REQUIRE(other->step() == Status::ok);
        check_calls(*problem, expected);
        check_calls(*declared, expected_declared);
        // The same iteration either way, up to rounding.
        CHECK((solver->x() - other->x()).cwiseAbs().maxCoeff() <= kTight * Real(10));
      }
      if (mode == GradientMode::sampled) CHECK(solver->environment_steps() == 6L * (2 * T + 2) * B * H);
    }
  }
}

TEST_CASE("sweep evaluation stops at max_sweeps when the tolerance is out of reach; the report counts it") {
  constexpr int S = 6, A = 3, T = 4;
  using Problem = pbrl::RewardShaping<Real, S, A>;
  auto inst = std::make_unique<CountingShaping<S, A>>(31);
  auto solver = std::make_unique<pbrl::Pbrl<Counting<Problem>, EvaluationMethod::sweeps>>();
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    pbrl::PbrlSettings<Real> s;
    s.penalty_kind = kind;
    s.inner_steps = T;
    REQUIRE(solver->init(inst->problem, s, Problem::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    auto& ws = solver->evaluation_workspace();
    ws.max_sweeps = 3;
    ws.tolerance = Real(0);  // never met: every solve runs to the bound, an outcome and not an error
    // Every evaluation of the step stops at the cap: T oracle steps, pi_y, f, pi-hat (+ the Bellman
    // occupancy).
    const std::int64_t evaluations = T + 3 + (kind == PenaltyKind::bellman ? 1 : 0);
    for (int k = 0; k < 5; ++k) {
      pbrl::PbrlReport<Real> r;
      REQUIRE(solver->step(&r) == Status::ok);
      CHECK(ws.last_sweeps == 3);
      CHECK(ws.max_sweeps_hit);
      CHECK(r.max_sweeps_hit == evaluations);
    }
    // A reachable tolerance within a large cap: no evaluation stops at it.
    ws.max_sweeps = 5000;
    ws.tolerance = kDouble ? Real(1e-10) : Real(1e-4);
    for (int k = 0; k < 3; ++k) {
      pbrl::PbrlReport<Real> r;
      REQUIRE(solver->step(&r) == Status::ok);
      CHECK(r.max_sweeps_hit == 0);
    }
  }
}

namespace {
// Two steps in sweeps mode: the first with 2 sweeps and no tolerance, where `stopped` evaluations
// stop at max_sweeps and the report counts them; the second with room to reach `reachable`, none.
template <class Solver, class Report>
void check_max_sweeps_counted(Solver& solver, Report& r, int stopped, Real reachable) {
  auto& ws = solver.evaluation_workspace();
  ws.max_sweeps = 2;
  ws.tolerance = Real(0);
  REQUIRE(solver.step(&r) == Status::ok);
  CHECK(r.max_sweeps_hit == stopped);
  ws.max_sweeps = 5000;
  ws.tolerance = reachable;
  REQUIRE(solver.step(&r) == Status::ok);
  CHECK(r.max_sweeps_hit == 0);
}
}  // namespace

TEST_CASE("PbrlZeroSum and the meta-gradient count evaluations stopped at max_sweeps in their reports") {
  constexpr int S = 4, A1 = 2, A2 = 3, T = 3;
  using Problem = pbrl::IncentiveDesign<Real, S, A1, A2>;
  auto data = std::make_unique<GameData<S, A1, A2>>(23);
  auto problem = std::make_unique<Problem>();
  REQUIRE(problem->init(data->incentive(Real(0.9), Real(0.1))) == Status::ok);
  const Real reachable = kDouble ? Real(1e-10) : Real(1e-4);

  auto solver = std::make_unique<pbrl::PbrlZeroSum<Problem, EvaluationMethod::sweeps>>();
  pbrl::PbrlZeroSumSettings<Real> s;
  s.inner_steps = T;
  REQUIRE(solver->init(*problem, s, Problem::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) == Status::ok);
  pbrl::PbrlZeroSumReport<Real> r;
  check_max_sweeps_counted(*solver, r, 2 * T + 3, reachable);  // T oracle steps per player, both pi-hats, f

  auto meta = std::make_unique<pbrl::MetaGradient<Problem, EvaluationMethod::sweeps>>();
  pbrl::MetaGradientSettings<Real> ms;
  ms.agent_steps = T;
  REQUIRE(meta->init(*problem, ms, Problem::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) == Status::ok);
  pbrl::MetaGradientReport<Real> m;
  check_max_sweeps_counted(*meta, m, T + 2, reachable);  // T agents' steps, f, the occupancy's directional derivative
}

}  // namespace test_bounded_work
