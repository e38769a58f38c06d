// The penalty schedule (solver/penalty_schedule.hpp): in tolerance mode the lower-level gap that
// a fixed lambda leaves above epsilon falls below it, checked against the exact optimum; lambda and
// the inner steps never pass their caps; the certified bound is never below the exact gap; a
// checkpoint taken mid-schedule continues bit for bit; counts never overflow.
#include "game_support.hpp"
#include "support.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include "../bench/random_instances.hpp"  // the instances bench/tolerance.cpp measures

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace test_schedule {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 4, AL = 2, AF = 3;
using Problem = pbrl::Stackelberg<Real, S, AL, AF>;
using Solver = pbrl::Pbrl<Problem>;
using FollowerMatrix = pbrl::StateActionMatrix<Real, S, AF>;

// A small leader-follower game in which the follower's interest is not the leader's.
struct Game {
  Real leader_reward[S * AL * AF], follower_reward[S * AL * AF], transition[S * AL * AF * S], initial[S];
  Problem problem;
  Game() {
    pbrl::Rng rng(3);
    pbrl::random_reward(rng, leader_reward, S * AL * AF, Real(0.7));
    pbrl::random_reward(rng, follower_reward, S * AL * AF, Real(0.7));
    pbrl::random_transition(rng, transition, S * AL * AF, S);
    pbrl::random_distribution(rng, initial, S);
    Problem::Data d;
    d.leader_reward = leader_reward;
    d.follower_reward = follower_reward;
    d.transition = transition;
    d.initial = initial;
    d.follower.tau = Real(0.1);
    REQUIRE(problem.init(d) == Status::ok);
  }
};

// The paper's Figure 1 settings in miniature: lambda 2, one PMD step, softmax follower.
pbrl::PbrlSettings<Real> paper_settings() {
  pbrl::PbrlSettings<Real> s;
  s.policy.parameterization = Parameterization::softmax;
  s.oracle = OracleKind::policy_mirror_descent;
  s.inner_steps = 1;
  s.step_x = s.step_y = Real(0.1);
  s.lambda_start = s.lambda_final = Real(2);
  return s;
}

// paper_settings() that converge on the game: tolerance mode (epsilon 0.01, |G| <= 0.05 over a
// window of 5 steps), steps 0.5.
pbrl::PbrlSettings<Real> converging_settings() {
  auto s = paper_settings();
  s.step_x = s.step_y = Real(0.5);
  s.gap_tolerance = Real(0.01);
  s.lambda_patience = 10;
  s.inner_steps_max = 50;
  s.stationarity_tolerance = Real(0.05);
  s.convergence_window = 5;
  return s;
}

// paper_settings() in sampled mode: the policy-gradient oracle on softmax policies, batches of `batch`.
pbrl::PbrlSettings<Real> sampled_paper_settings(int batch) {
  auto s = paper_settings();
  s.gradient = GradientMode::sampled;
  s.oracle = OracleKind::policy_gradient;
  s.oracle_policy.parameterization = Parameterization::softmax;
  s.sampling.batch = batch;
  return s;
}

constexpr Real kSviTolerance = kDouble ? Real(1e-13) : Real(1e-6);

// The optimal value of an MDP (soft value iteration run to convergence).
template <int NS, int NA>
Real optimal_value(const pbrl::Mdp<Real, NS, NA>& mdp) {
  pbrl::StateVector<Real, NS> v = pbrl::StateVector<Real, NS>::Zero();
  pbrl::StateActionMatrix<Real, NS, NA> q, log_pi, pi;
  REQUIRE(pbrl::soft_value_iteration(mdp, 5000, kSviTolerance, v, q, {log_pi, pi}) == Status::ok);
  WsT<NS> ws;
  pbrl::Evaluation<Real, NS, NA> best;
  REQUIRE(pbrl::evaluate(mdp, pi, ws, best) == Status::ok);
  return best.value_rho;
}

// V*(rho) - V^{pi_y}(rho) on M(x), with V* from soft value iteration run to convergence.
Real exact_gap(const Problem& problem, const Solver& solver) {
  Problem::Model model;
  pbrl::Mdp<Real, S, AF> mdp;
  REQUIRE(problem.build(solver.x(), model, mdp) == Status::ok);
  pbrl::StateVector<Real, S> v = pbrl::StateVector<Real, S>::Zero();
  FollowerMatrix q, log_pi, pi, pi_y;
  REQUIRE(pbrl::soft_value_iteration(mdp, 5000, kSviTolerance, v, q, {log_pi, pi}) == Status::ok);
  WsT<S> ws;
  pbrl::Evaluation<Real, S, AF> best, current;
  solver.policy(pi_y);
  REQUIRE(pbrl::evaluate(mdp, pi, ws, best) == Status::ok);
  REQUIRE(pbrl::evaluate(mdp, pi_y, ws, current) == Status::ok);
  return best.value_rho - current.value_rho;
}

template <class M>
bool same_bits(const M& a, const M& b) {
  return std::memcmp(a.data(), b.data(), sizeof(typename M::Scalar) * std::size_t(a.size())) == 0;
}

// The PbrlZeroSum cases' incentive design: GameData(7), gamma 0.9, tau 0.1, initialized afresh on
// every call (static: it is large for the stack).
constexpr int GS = 4, A1 = 3, A2 = 2;
using Design = pbrl::IncentiveDesign<Real, GS, A1, A2>;
using ZeroSum = pbrl::PbrlZeroSum<Design>;
Design& zero_sum_design() {
  static GameData<GS, A1, A2> data(7);
  static Design problem;
  REQUIRE(problem.init(data.incentive(Real(0.9), Real(0.1))) == Status::ok);
  return problem;
}

}  // namespace

TEST_CASE("tolerance mode meets a lower-level gap that the paper's fixed lambda leaves above it") {
  static Game game;
  static Solver solver;
  constexpr int kSteps = 200;
  const Real epsilon(0.01);

  auto settings = paper_settings();
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.run(kSteps) == Status::ok);
  const Real fixed_gap = exact_gap(game.problem, solver);
  CHECK(fixed_gap > Real(10) * epsilon);  // measured 0.16

  // Tolerance mode with the default stall test: lambda grows only once the gap stops falling, so it
  // takes longer than a rule that grows at every window above epsilon (measured: met after ~230 steps).
  settings.gap_tolerance = epsilon;
  settings.lambda_patience = 10;
  settings.inner_steps_max = 50;
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  Solver::Report r;
  for (int k = 0; k < 2 * kSteps; ++k) {
    REQUIRE(solver.step(&r) == Status::ok);
    CHECK(r.lambda >= settings.lambda_start);
    CHECK(r.lambda <= settings.lambda_max);
    CHECK(r.inner_steps >= settings.inner_steps);
    CHECK(r.inner_steps <= settings.inner_steps_max);
    // The steps follow lambda: lambda * alpha < 1 / L_p.
    CHECK(r.lambda * r.step_x < Real(1) / settings.penalty_smoothness);
    CHECK(r.oracle_gap >= Real(0));
  }
  const Real gap = exact_gap(game.problem, solver);
  CAPTURE(gap);
  CAPTURE(r.lambda);
  CHECK(gap <= epsilon);
  CHECK(r.tolerance_met);
  CHECK(r.lambda > settings.lambda_start);  // lambda had to grow
  // The certified bound of the last step's iterate is never below its exact gap (the report
  // describes x_k, y_k: step once more without moving to compare like with like).
  static Solver probe;
  probe = solver;
  const Real before = exact_gap(game.problem, probe);
  Solver::Report next;
  REQUIRE(probe.step(&next) == Status::ok);
  CHECK(next.gap_bound >= before - (kDouble ? Real(1e-9) : Real(1e-4)));
}

// The continuation: a tolerance below continuation_start is approached through targets
// max(epsilon, start), / divisor, ..., each taken once the iterates are stationary at the last
// (|G| <= stationarity_tolerance over convergence_window steps) or, with a positive
// continuation_patience, after that many steps at or below it; lambda grows only toward the
// current target. A model change starts again.
TEST_CASE("tolerance mode: a tight epsilon is approached through targets, each once the iterates settle") {
  pbrl::PenaltySolverSettings<Real> s;
  s.gap_tolerance = Real(1e-4);
  REQUIRE(s.continuation_start == Real(1e-2));  // the documented defaults
  REQUIRE(s.continuation_divisor == Real(10));
  s.continuation_patience = 50;
  s.convergence_window = 5;
  s.stationarity_tolerance = Real(0.01);
  s.lambda_patience = 4;
  pbrl::PenaltySchedule<Real> schedule;
  std::int64_t k = 0;
  auto feed = [&](Real gap, int steps, Real gradient_norm) {
    for (int i = 0; i < steps; ++i, ++k) schedule.observe(s, k, gap, gradient_norm, gap <= s.gap_tolerance);
  };
  schedule.reset(s);
  CHECK(schedule.gap_target() == Real(1e-2));
  feed(Real(0.005), 30, Real(1));  // below the target, far from stationary: no growth, no new target
  CHECK(schedule.gap_target() == Real(1e-2));
  CHECK(schedule.growths() == 0);
  feed(Real(0.005), 5, Real(0.001));  // stationary for the window: the next target
  CHECK(schedule.gap_target() == Real(1e-2) / Real(10));
  feed(Real(0.005), 12, Real(1));  // above it and flat: lambda grows toward it
  CHECK(schedule.growths() == 3);
  feed(Real(0.0005), 49, Real(1));  // below it, not stationary: patience 50 not yet reached
  CHECK(schedule.gap_target() == Real(1e-2) / Real(10));
  feed(Real(0.0005), 1, Real(1));   // the 50th step at or below it: the last target, epsilon
  CHECK(schedule.gap_target() == s.gap_tolerance);
  feed(Real(0.00005), 200, Real(0.001));  // never below epsilon
  CHECK(schedule.gap_target() == s.gap_tolerance);
  schedule.model_changed(s);
  CHECK(schedule.gap_target() == Real(1e-2));
  // The default patience, 0: below the target for any number of steps moves on only once stationary.
  s.continuation_patience = pbrl::PenaltySolverSettings<Real>{}.continuation_patience;
  REQUIRE(s.continuation_patience == 0);
  schedule.reset(s);
  feed(Real(0.005), 100000, Real(1));
  CHECK(schedule.gap_target() == Real(1e-2));
  CHECK(schedule.growths() == 0);
  feed(Real(0.005), 5, Real(0.001));
  CHECK(schedule.gap_target() == Real(1e-2) / Real(10));
  // epsilon at or above the start, or the start 0: epsilon from the start (today's single target).
  s.gap_tolerance = Real(0.05);
  schedule.reset(s);
  CHECK(schedule.gap_target() == Real(0.05));
  s.gap_tolerance = Real(1e-4);
  s.continuation_start = Real(0);
  schedule.reset(s);
  CHECK(schedule.gap_target() == Real(1e-4));
  // Fixed mode: no target.
  s.gap_tolerance = Real(0);
  schedule.reset(s);
  CHECK(schedule.gap_target() == Real(0));
}

TEST_CASE("the growth rule: lambda grows after a window above epsilon only if the gap stopped falling") {
  pbrl::PenaltySolverSettings<Real> s;
  s.gap_tolerance = Real(0.01);
  s.lambda_start = Real(2);
  s.lambda_patience = 4;
  REQUIRE(s.lambda_stall == Real(0.9));  // the documented default
  s.lambda_stall = Real(0.99);
  pbrl::PenaltySchedule<Real> schedule;
  std::int64_t k = 0;
  auto feed = [&](Real gap, int steps, Real factor) {
    for (int i = 0; i < steps; ++i, ++k, gap *= factor) schedule.observe(s, k, gap, Real(1), false);
  };
  schedule.reset(s);
  feed(Real(1), 40, Real(0.95));  // falls 5% a step, far above epsilon: ten windows, no growth
  CHECK(schedule.growths() == 0);
  CHECK(schedule.lambda(s, k) == Real(2));
  const Real flat = std::pow(Real(0.95), Real(39));  // where it ended, 0.135
  feed(flat, 8, Real(1));  // flat: two windows, two growths
  CHECK(schedule.growths() == 2);
  CHECK(schedule.lambda(s, k) == Real(8));
  feed(flat, 4, Real(1.01));  // rising, within twice the best: grows
  CHECK(schedule.growths() == 3);
  feed(Real(0.001), 12, Real(1));  // below epsilon: never grows
  CHECK(schedule.growths() == 3);
  // A window only counts steps above epsilon in a row: a step below starts it again.
  feed(Real(0.0015), 3, Real(1));
  feed(Real(0.001), 1, Real(1));
  feed(Real(0.011), 3, Real(1));
  CHECK(schedule.growths() == 3);
  feed(Real(0.011), 1, Real(1));
  CHECK(schedule.growths() == 4);
  // The default factor grows lambda on a gap that still falls, by less than 10 % a window, and
  // not on one that falls faster.
  s.lambda_stall = Real(0.9);
  schedule.reset(s);
  k = 0;
  feed(Real(1), 8, Real(0.98));  // 0.98^4 = 0.92 a window
  CHECK(schedule.growths() == 2);
  schedule.reset(s);
  k = 0;
  feed(Real(1), 8, Real(0.95));  // 0.95^4 = 0.81 a window
  CHECK(schedule.growths() == 0);
  // A gap that alternates from step to step (steps too long for lambda): a window of even length
  // starts high and ends low. The test reads the smaller of the last two gaps against the previous
  // window's: an alternation that does not fall is a stall, and lambda grows.
  s.lambda_stall = Real(0.8);
  schedule.reset(s);
  k = 0;
  for (int i = 0; i < 12; ++i, ++k) schedule.observe(s, k, i % 2 == 0 ? Real(0.75) : Real(0.54), Real(1), false);
  CHECK(schedule.growths() == 2);  // the first window compares with its first gap (0.75): no growth
  CHECK(schedule.backoffs() == 0);
  // An alternation wider than lambda_backoff backs off at the step that shows it.
  schedule.reset(s);
  k = 0;
  for (int i = 0; i < 3; ++i, ++k) schedule.observe(s, k, i % 2 == 0 ? Real(0.24) : Real(1.69), Real(1), false);
  CHECK(schedule.backoffs() == 1);
  CHECK(schedule.step_scale() == Real(0.5));
  // The oracle's target follows the last measured gap, never below oracle_gap_fraction * epsilon;
  // before the first measurement there is none to follow (the largest Scalar).
  schedule.reset(s);
  k = 0;
  CHECK(schedule.oracle_target(s) == std::numeric_limits<Real>::max());
  feed(Real(0.5), 1, Real(1));
  CHECK(schedule.oracle_target(s) == s.oracle_gap_fraction * Real(0.5));
  feed(Real(0.001), 1, Real(1));
  CHECK(schedule.oracle_target(s) == s.oracle_gap_fraction * s.gap_tolerance);
  // lambda_stall = 0: every window above epsilon grows lambda, falling or not.
  s.lambda_stall = Real(0);
  schedule.reset(s);
  k = 0;
  feed(Real(1), 40, Real(0.95));
  CHECK(schedule.growths() == 9);  // 2 -> 4 -> ... -> 512 -> 1000, the cap, in ten windows
  CHECK(schedule.lambda(s, k) == s.lambda_max);
  // And the setting is validated: a factor outside [0, 1] is refused.
  s.lambda_stall = Real(1.5);
  CHECK(pbrl::validate(s) == Status::bad_setting);
  s.lambda_stall = -Real(0.1);
  CHECK(pbrl::validate(s) == Status::bad_setting);
  s.lambda_stall = std::numeric_limits<Real>::quiet_NaN();
  CHECK(pbrl::validate(s) == Status::bad_setting);
}

TEST_CASE("tolerance mode: lambda and the inner steps stop at their caps when epsilon is out of reach") {
  static Game game;
  static Solver solver;
  auto settings = paper_settings();
  settings.gap_tolerance = std::numeric_limits<Real>::min();  // unreachable
  settings.continuation_start = Real(0);                      // epsilon from the start
  settings.lambda_patience = 2;
  settings.lambda_stall = Real(0);  // grow after every window above epsilon, falling or not
  settings.lambda_max = Real(8);
  settings.inner_steps = 2;
  settings.inner_steps_max = 5;
  settings.penalty_smoothness = Real(0.5);
  settings.oracle_gap_fraction = Real(1e-30);  // the oracle's target, 1e-30 of the last gap, too
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  Solver::Report r;
  Real previous = settings.lambda_start;
  for (int k = 0; k < 40; ++k) {
    REQUIRE(solver.step(&r) == Status::ok);
    CHECK(r.lambda <= settings.lambda_max);
    CHECK(r.lambda >= previous);  // never decreases
    previous = r.lambda;
    if (k == 0) {  // no gap measured yet: no target to miss, inner_steps oracle steps
      CHECK(r.inner_steps == settings.inner_steps);
      CHECK(r.inner_converged);
    } else {
      CHECK(r.inner_steps == settings.inner_steps_max);  // the oracle's target is out of reach
      CHECK_FALSE(r.inner_converged);                    // ... and the report says so
    }
    CHECK(r.step_x == settings.step_x / (Real(1) + settings.step_x * r.lambda * settings.penalty_smoothness));
    CHECK_FALSE(r.tolerance_met);
  }
  CHECK(r.lambda == settings.lambda_max);
  CHECK(solver.schedule().growths() == 2);  // 2 -> 4 -> 8, then the cap

  // Fixed mode ignores the tolerance settings: lambda is the ramp, the steps are as given.
  settings.gap_tolerance = Real(0);
  settings.lambda_start = Real(1);
  settings.lambda_final = Real(3);
  settings.lambda_ramp = 4;
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  const Real ramp[] = {Real(1), Real(1.5), Real(2), Real(2.5), Real(3), Real(3)};
  for (Real expected : ramp) {
    REQUIRE(solver.step(&r) == Status::ok);
    CHECK(r.lambda == expected);
    CHECK(r.step_x == settings.step_x);
    CHECK(r.inner_steps == settings.inner_steps);
    CHECK_FALSE(r.inner_converged);  // fixed mode sets the oracle no target
  }
}

TEST_CASE("tolerance mode: the report says whether the oracle met its own target (inner_converged)") {
  // Reached: PMD with a long step, or soft value iteration, within a generous inner_steps_max.
  // Not reached: one oracle step on a target far below the gap (oracle_gap_fraction 1e-9), at the
  // second step (the first has no measured gap to set a target from: any certified policy meets it).
  static Game game;
  static Solver solver;
  for (auto oracle : {OracleKind::policy_mirror_descent, OracleKind::soft_value_iteration}) {
    CAPTURE(static_cast<int>(oracle));
    auto settings = paper_settings();
    settings.oracle = oracle;
    settings.oracle_step = Real(100);
    settings.gap_tolerance = Real(0.01);
    settings.inner_steps_max = 1000;
    REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
    Solver::Report r;
    REQUIRE(solver.step(&r) == Status::ok);
    CHECK(r.inner_converged);
    CHECK(r.inner_steps < settings.inner_steps_max);
    settings.inner_steps_max = settings.inner_steps = 1;
    settings.oracle_gap_fraction = Real(1e-9);
    REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
    REQUIRE(solver.step(&r) == Status::ok);
    CHECK(r.inner_converged);  // no target yet
    CHECK(r.inner_steps == 1);
    REQUIRE(solver.step(&r) == Status::ok);  // stopping at the cap is not an error
    CHECK_FALSE(r.inner_converged);
    CHECK(r.inner_steps == 1);
  }

  // PbrlZeroSum: converged only when both players' oracles met their targets.
  Design& problem = zero_sum_design();
  static ZeroSum zero_sum;
  for (auto oracle : {OracleKind::policy_mirror_descent, OracleKind::soft_value_iteration}) {
    CAPTURE(static_cast<int>(oracle));
    pbrl::PbrlZeroSumSettings<Real> s;
    s.oracle = oracle;
    s.oracle_step = Real(100);
    s.inner_steps = 1;
    s.gap_tolerance = Real(0.01);
    s.inner_steps_max = 1000;
    REQUIRE(zero_sum.init(problem, s, Design::Params::Zero(), ZeroSum::Matrix1::Zero(), ZeroSum::Matrix2::Zero()) ==
            Status::ok);
    ZeroSum::Report r;
    REQUIRE(zero_sum.step(&r) == Status::ok);
    CHECK(r.inner_converged);
    CHECK(r.inner_steps < s.inner_steps_max);
    s.inner_steps_max = 1;
    s.oracle_gap_fraction = Real(1e-9);
    REQUIRE(zero_sum.init(problem, s, Design::Params::Zero(), ZeroSum::Matrix1::Zero(), ZeroSum::Matrix2::Zero()) ==
            Status::ok);
    REQUIRE(zero_sum.step(&r) == Status::ok);
    REQUIRE(zero_sum.step(&r) == Status::ok);
    CHECK_FALSE(r.inner_converged);
    CHECK(r.inner_steps == 1);
  }
}

TEST_CASE("tolerance mode in sampled mode: T grows with lambda up to its cap, work stays (T_k + 2) B H") {
  static Game game;
  // Where Eigen vectorizes, a reduction over an unaligned array peels to the next aligned address,
  // so the last bits of a result follow the object's address modulo the vector size: two solvers
  // compared bit for bit are placed alike (alignas(64); as `again` below).
  alignas(64) static Solver solver;
  auto settings = sampled_paper_settings(4);
  settings.oracle_step = Real(0.1);
  settings.sampling.horizon = 3;
  settings.gap_tolerance = std::numeric_limits<Real>::min();
  settings.continuation_start = Real(0);  // epsilon from the start
  settings.lambda_patience = 1;
  settings.lambda_max = Real(64);
  settings.inner_steps_max = 3;
  // No back-off here (the reference is epsilon = min, so the factor must be the largest finite):
  // lambda runs to its cap.
  settings.lambda_backoff = std::numeric_limits<Real>::max();
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  Solver::Report r;
  std::int64_t steps = 0;
  std::vector<Real> lambdas;
  for (int k = 0; k < 12; ++k) {
    const std::int64_t growths = solver.schedule().net_growths();
    REQUIRE(solver.step(&r) == Status::ok);
    const std::int64_t expected_inner = std::min<std::int64_t>(settings.inner_steps * (growths + 1), 3);
    CHECK(r.inner_steps == expected_inner);
    CHECK_FALSE(r.inner_converged);  // samples give no certificate: no target to meet
    steps += (r.inner_steps + 2) * settings.sampling.batch * settings.sampling.horizon;
    CHECK(r.environment_steps == steps);
    CHECK(r.lambda <= settings.lambda_max);
    lambdas.push_back(r.lambda);
  }
  CHECK(lambdas.back() == settings.lambda_max);
  // The schedule is part of the deterministic state: the same seed gives the same run.
  alignas(64) static Solver again;
  REQUIRE(again.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(again.run(12) == Status::ok);
  CHECK(same_bits(again.x(), solver.x()));
  CHECK(same_bits(again.y(), solver.y()));
}

TEST_CASE("PbrlZeroSum in tolerance mode: the certified bound holds and the NE gap falls below epsilon") {
  Design& problem = zero_sum_design();
  pbrl::PbrlZeroSumSettings<Real> s;
  s.policy.parameterization = Parameterization::softmax;
  s.inner_steps = 1;
  s.lambda_start = s.lambda_final = Real(1);
  s.gap_tolerance = Real(0.005);
  s.continuation_start = Real(0);  // epsilon from the start
  s.lambda_patience = 5;  // the default stall test: measured, psi below epsilon after ~400 steps
  static ZeroSum solver;
  REQUIRE(solver.init(problem, s, Design::Params::Zero(), ZeroSum::Matrix1::Zero(), ZeroSum::Matrix2::Zero()) ==
          Status::ok);
  // The exact NE gap psi(x, pi) = max V(., pi2) - min V(pi1, .) from both players' exact best
  // responses on M(x) (player 2's MDP maximizes -V).
  auto exact_psi = [&] {
    static Design::Model model;
    static pbrl::InducedModel<Real, GS, A1> induced1;
    static pbrl::InducedModel<Real, GS, A2> induced2;
    pbrl::MarkovGame<Real, GS, A1, A2> g;
    REQUIRE(problem.build(solver.x(), model, g) == Status::ok);
    ZeroSum::Matrix1 pi1;
    ZeroSum::Matrix2 pi2;
    solver.policy1(pi1);
    solver.policy2(pi2);
    pbrl::Mdp<Real, GS, A1> mdp1;
    pbrl::Mdp<Real, GS, A2> mdp2;
    REQUIRE(pbrl::player1_mdp(g, pi2, induced1, mdp1) == Status::ok);
    REQUIRE(pbrl::player2_mdp(g, pi1, induced2, mdp2) == Status::ok);
    return optimal_value(mdp1) + optimal_value(mdp2);
  };
  ZeroSum::Report r;
  Real psi(0);
  for (int k = 0; k < 450; ++k) {
    if (k % 10 == 0) psi = exact_psi();
    REQUIRE(solver.step(&r) == Status::ok);
    // The report describes (x_k, pi_k): its bound is never below their exact NE gap.
    if (k % 10 == 0) CHECK(r.gap_bound >= psi - (kDouble ? Real(1e-9) : Real(1e-4)));
    CHECK(r.inner_steps <= s.inner_steps_max);
  }
  CHECK(exact_psi() <= s.gap_tolerance);
  CAPTURE(r.gap_bound);
  CAPTURE(r.lambda);
  CHECK(r.tolerance_met);
  CHECK(r.gap_bound <= s.gap_tolerance);
}

TEST_CASE("a checkpoint taken mid-schedule continues bit for bit") {
  static Game game;
  static Solver solver;
  auto settings = paper_settings();
  settings.gap_tolerance = Real(0.01);
  settings.lambda_patience = 3;
  settings.lambda_stall = Real(0);  // lambda grows within the first 25 steps
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.run(25) == Status::ok);
  REQUIRE(solver.schedule().growths() > 0);
  std::vector<unsigned char> image(pbrl::checkpoint_size<Solver>());
  REQUIRE(pbrl::save_checkpoint(solver, image.data(), image.size()) == Status::ok);
  REQUIRE(solver.run(20) == Status::ok);
  const Problem::Params x = solver.x();
  const FollowerMatrix y = solver.y(), pi_hat = solver.oracle_policy();
  const Real lambda = solver.lambda(solver.iteration());

  // The same object (same addresses, so the same vectorized reductions), from a fresh init().
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(pbrl::restore_checkpoint(solver, image.data(), image.size()) == Status::ok);
  CHECK(solver.iteration() == 25);
  REQUIRE(solver.run(20) == Status::ok);
  CHECK(same_bits(solver.x(), x));
  CHECK(same_bits(solver.y(), y));
  CHECK(same_bits(solver.oracle_policy(), pi_hat));
  CHECK(solver.lambda(solver.iteration()) == lambda);
}

TEST_CASE("the verdict: converged once the certified gap and |G| met their tolerances over the window") {
  static Game game;
  alignas(64) static Solver solver, stepped;  // placed alike: compared bit for bit (see above)
  const auto settings = converging_settings();
  constexpr std::int64_t kCap = 2000;  // measured in double: converged after 143 steps

  // The definition, step by step: the first step after which the window's every step met both.
  REQUIRE(stepped.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  Solver::Report r;
  std::int64_t run = 0, expected = -1;
  for (std::int64_t k = 0; k < kCap && expected < 0; ++k) {
    REQUIRE(stepped.step(&r) == Status::ok);
    run = r.tolerance_met && r.projected_gradient_norm <= settings.stationarity_tolerance ? run + 1 : 0;
    CHECK(r.converged == (run >= settings.convergence_window));
    CHECK(stepped.converged() == r.converged);
    if (r.converged) expected = k + 1;
  }
  REQUIRE(expected > settings.convergence_window);  // not at once: the verdict waits for the tolerances

  // solve() stops there, with or without a report, and says why.
  pbrl::SolveResult result;
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.solve(kCap, result) == Status::ok);
  CHECK(result.outcome == pbrl::SolveOutcome::converged);
  CHECK(result.steps == expected);
  CHECK(solver.iteration() == expected);
  CHECK(same_bits(solver.x(), stepped.x()));
  CHECK(same_bits(solver.y(), stepped.y()));
  Solver::Report last;
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.solve(kCap, result, &last) == Status::ok);
  CHECK(result.steps == expected);
  CHECK(last.converged);
  CHECK(last.iteration == expected - 1);
  CHECK(last.tolerance_met);
  CHECK(last.projected_gradient_norm <= settings.stationarity_tolerance);
  // The certificate is sound: the exact gap of the iterate the report describes is within it
  // (the solver holds the step after it, |G| * alpha away; step once more without moving).
  static Solver probe;
  probe = solver;
  const Real exact = exact_gap(game.problem, probe);
  CHECK(exact <= settings.gap_tolerance + Real(1e-3));

  // A converged solver: solve() takes no step; step() keeps working and the verdict follows it.
  REQUIRE(solver.solve(kCap, result) == Status::ok);
  CHECK(result.outcome == pbrl::SolveOutcome::converged);
  CHECK(result.steps == 0);
  REQUIRE(solver.step(&r) == Status::ok);
  CHECK(solver.iteration() == expected + 1);

  // Refusals change nothing.
  const Problem::Params x = solver.x();
  CHECK(solver.solve(-1, result) == Status::bad_setting);
  CHECK(solver.iteration() == expected + 1);
  CHECK(same_bits(solver.x(), x));
  static Solver fresh;
  CHECK(fresh.solve(10, result) == Status::not_initialized);
}

TEST_CASE("solve(): every outcome, each where its definition says, at most max_steps steps") {
  static Game game;
  static Solver solver;
  pbrl::SolveResult result;
  auto solve = [&](const pbrl::PbrlSettings<Real>& settings, std::int64_t max_steps) {
    REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
    REQUIRE(solver.solve(max_steps, result) == Status::ok);
    CHECK(result.steps <= max_steps);
    CHECK(solver.iteration() == result.steps);
  };
  // solve(), then the outcome and the number of steps it took.
  auto expect = [&](const pbrl::PbrlSettings<Real>& settings, std::int64_t max_steps, pbrl::SolveOutcome outcome,
                    std::int64_t steps) {
    solve(settings, max_steps);
    CHECK(result.outcome == outcome);
    CHECK(result.steps == steps);
  };
  // epsilon out of reach (and the oracle's target, 1e-30 of the last gap).
  auto out_of_reach = [] {
    auto s = paper_settings();
    s.gap_tolerance = std::numeric_limits<Real>::min();
    s.continuation_start = Real(0);
    s.oracle_gap_fraction = Real(1e-30);
    return s;
  };
  // step_cap: fixed mode, never stationary (|G| > 0 at the start).
  auto fixed = paper_settings();
  fixed.stationarity_tolerance = Real(0);
  expect(fixed, 3, pbrl::SolveOutcome::step_cap, 3);
  expect(fixed, 0, pbrl::SolveOutcome::step_cap, 0);

  // stalled: fixed mode, stationary over the window, and only once the ramp is over.
  fixed.stationarity_tolerance = Real(1e30);
  fixed.convergence_window = 4;
  expect(fixed, 100, pbrl::SolveOutcome::stalled, 4);
  fixed.lambda_final = Real(4);
  fixed.lambda_ramp = 9;
  expect(fixed, 100, pbrl::SolveOutcome::stalled, 9);

  // penalty_cap: lambda at lambda_max from the start, stationary, epsilon out of reach.
  auto capped = out_of_reach();
  capped.lambda_max = capped.lambda_start;
  capped.inner_steps_max = 3;
  capped.stationarity_tolerance = Real(1e30);
  capped.convergence_window = 3;
  expect(capped, 100, pbrl::SolveOutcome::penalty_cap, 3);
  // ... not while lambda may still grow: then the oracle's cap is what the step cap ends on.
  capped.lambda_max = Real(1e6);
  expect(capped, 7, pbrl::SolveOutcome::oracle_cap, 7);

  // oracle_cap: at the step cap, the last step's oracle ran to inner_steps_max without its target.
  auto oracle = out_of_reach();
  oracle.inner_steps_max = 2;
  oracle.stationarity_tolerance = Real(0);
  expect(oracle, 5, pbrl::SolveOutcome::oracle_cap, 5);
  // With a reachable target the same cap is a plain step cap.
  oracle.gap_tolerance = Real(1e6);
  oracle.oracle_gap_fraction = Real(0.1);
  oracle.inner_steps = 1;
  oracle.inner_steps_max = 100;
  solve(oracle, 5);
  CHECK(result.outcome == pbrl::SolveOutcome::step_cap);

  // Sampled tolerance mode has no certificate: never converged; stationary over the window is stalled.
  auto sampled = sampled_paper_settings(2);
  sampled.gap_tolerance = Real(1e6);
  sampled.stationarity_tolerance = Real(1e30);
  sampled.convergence_window = 2;
  expect(sampled, 10, pbrl::SolveOutcome::stalled, 2);
  CHECK_FALSE(solver.converged());
}

TEST_CASE("a checkpoint taken mid-solve continues bit for bit, outcome and step count included") {
  static Game game;
  static Solver solver;
  const auto settings = converging_settings();
  pbrl::SolveResult whole, first, rest;
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.solve(2000, whole) == Status::ok);
  REQUIRE(whole.outcome == pbrl::SolveOutcome::converged);
  const Problem::Params x = solver.x();
  const FollowerMatrix y = solver.y();

  // Stop two steps before the verdict (inside its window), save, restore into a fresh init().
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.solve(whole.steps - 2, first) == Status::ok);
  CHECK(first.outcome == pbrl::SolveOutcome::step_cap);
  std::vector<unsigned char> image(pbrl::checkpoint_size<Solver>());
  REQUIRE(pbrl::save_checkpoint(solver, image.data(), image.size()) == Status::ok);
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(pbrl::restore_checkpoint(solver, image.data(), image.size()) == Status::ok);
  REQUIRE(solver.solve(2000, rest) == Status::ok);
  CHECK(rest.outcome == pbrl::SolveOutcome::converged);
  CHECK(first.steps + rest.steps == whole.steps);
  CHECK(same_bits(solver.x(), x));
  CHECK(same_bits(solver.y(), y));
}

// The continuation's default (continuation_patience 0) tightens only once the upper level is
// stationary, so until then a solve at a tighter epsilon is the solve at continuation_start, bit
// for bit: a tighter epsilon costs steps, not a different path. A positive patience departs.
TEST_CASE("tolerance mode: until the upper level settles, a solve at 1e-4 is the solve at 1e-2, bit for bit") {
  static Game game;
  static Solver loose, tight;
  auto settings = converging_settings();
  settings.stationarity_tolerance = Real(1e-30);  // never stationary on this run
  settings.step_x = settings.step_y = Real(0.1);
  REQUIRE(settings.continuation_patience == 0);  // the default
  REQUIRE(settings.continuation_start == Real(0.01));
  auto tighter = settings;
  tighter.gap_tolerance = Real(1e-4);
  auto run = [&](const pbrl::PbrlSettings<Real>& t, int steps) {
    REQUIRE(loose.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
    REQUIRE(tight.init(game.problem, t, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
    bool same = true;
    for (int k = 0; k < steps; ++k) {
      Solver::Report a, b;
      REQUIRE(loose.step(&a) == Status::ok);
      REQUIRE(tight.step(&b) == Status::ok);
      same = same && same_bits(loose.x(), tight.x()) && same_bits(loose.y(), tight.y()) && a.lambda == b.lambda;
    }
    return same;
  };
  CHECK(run(tighter, 600));
  CHECK(tight.schedule().gap_target() == Real(0.01));
  auto impatient = tighter;  // the gap stays at or below 0.01 for 50 steps, then the target is 1e-3
  impatient.continuation_patience = 50;
  CHECK_FALSE(run(impatient, 600));
  CHECK(tight.schedule().gap_target() < Real(0.01));
}

// The report carries the continuation's target: the schedule's after the step, in [epsilon,
// max(epsilon, continuation_start)], falling to epsilon over a run; 0 in fixed mode.
TEST_CASE("the report's gap_target is the schedule's, from the continuation's start down to epsilon") {
  static Game game;
  static Solver solver;
  auto settings = paper_settings();
  settings.gap_tolerance = Real(1e-4);
  settings.continuation_start = Real(1e-2);
  settings.continuation_patience = 20;  // a new target every 20 steps at or below the current one
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  Real first = 0, last = 0;
  for (int k = 0; k < 400; ++k) {
    Solver::Report r;
    REQUIRE(solver.step(&r) == Status::ok);
    CHECK(r.gap_target == solver.schedule().gap_target());
    CHECK(r.gap_target >= settings.gap_tolerance);
    CHECK(r.gap_target <= settings.continuation_start);
    if (k == 0) first = r.gap_target;
    last = r.gap_target;
  }
  CHECK(first == settings.continuation_start);
  CHECK(last < first);  // the continuation moved on
  settings.gap_tolerance = Real(0);  // fixed mode: no target
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  Solver::Report r;
  REQUIRE(solver.step(&r) == Status::ok);
  CHECK(r.gap_target == Real(0));
}

TEST_CASE("sampled mode: a step whose objective F = f + lambda p would overflow is refused, nothing changed") {
  static Game game;
  static Solver solver;
  auto settings = sampled_paper_settings(2);
  // lambda at the top of its domain: every gradient step is clamped to the box, so x and |G| stay
  // finite while lambda * p_hat does not.
  settings.lambda_start = settings.lambda_final = std::numeric_limits<Real>::max();
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  int refused = 0;
  for (int k = 0; k < 40; ++k) {
    const Problem::Params x = solver.x();
    const FollowerMatrix y = solver.y();
    const pbrl::Rng rng = solver.rng();
    const std::int64_t iteration = solver.iteration();
    Solver::Report r;
    const Status st = solver.step(&r);
    if (st == Status::ok) {  // every value of a report returned with ok is finite
      check_report_finite(r);
      continue;
    }
    CHECK(st == Status::numerical_failure);
    ++refused;
    CHECK(solver.iteration() == iteration);
    CHECK(same_bits(solver.x(), x));
    CHECK(same_bits(solver.y(), y));
    CHECK(std::memcmp(solver.rng().state(), rng.state(), sizeof(std::uint32_t) * 4) == 0);
  }
  CHECK(refused > 0);  // |p_hat| > 1 in some steps: lambda * p_hat overflows there
}

// bench/tolerance.cpp's incentive design run `run` of `seed` at its smallest size, S = 3 and
// 2 x 2 actions (runs 0, 4, 8, ...), in this tree's scalar.
struct SmallDesign {
  static constexpr int GS = 3, A1 = 2, A2 = 2;
  using Instance = bench::IncentiveInstance<GS, A1, A2>;
  using Design = pbrl::IncentiveDesign<Real, GS, A1, A2>;
  using ZeroSum = pbrl::PbrlZeroSum<Design>;
  Instance instance;
  Real reward[Instance::kJoint], transition[Instance::kJoint * GS], designer_reward[Instance::kJoint],
      designer_transition[Instance::kJoint * GS], initial[GS];
  Design problem;
  explicit SmallDesign(int run, unsigned seed = 1u) : instance(bench::instance_spec(seed, run, 4)) {
    REQUIRE(run % 4 == 0);
    for (int i = 0; i < Instance::kJoint; ++i) {
      reward[i] = Real(instance.reward[i]);
      designer_reward[i] = Real(instance.designer_reward[i]);
    }
    for (int i = 0; i < Instance::kJoint * GS; ++i) {
      transition[i] = Real(instance.transition[i]);
      designer_transition[i] = Real(instance.designer_transition[i]);
    }
    for (int s = 0; s < GS; ++s) initial[s] = Real(instance.initial[s]);
    Design::Data d;
    d.reward = reward;
    d.transition = transition;
    d.initial = initial;
    d.discount = Real(instance.discount);
    d.regularizer1 = {pbrl::RegularizerKind::entropy, Real(instance.tau), nullptr};
    d.regularizer2 = {pbrl::RegularizerKind::entropy, Real(instance.tau), nullptr};
    d.designer_reward = designer_reward;
    d.designer_transition = designer_transition;
    d.designer_cost = nullptr;
    d.incentive_scale = Real(0.2);
    d.incentive = {Real(-10), Real(10)};
    // Row sums drawn in double and rounded to float stay within the validation's tolerance.
    REQUIRE(problem.init(d) == Status::ok);
  }

  // A tolerance-mode solve (epsilon 0.01) from the start under s, `steps` steps, each report
  // passed to each(r): the first step that meets epsilon (-1: none), the smallest gap bound and
  // the last report.
  struct Run {
    int first = -1;
    Real smallest = std::numeric_limits<Real>::infinity();
    ZeroSum::Report report;
  };
  template <class Each>
  Run run(ZeroSum& solver, pbrl::PbrlZeroSumSettings<Real> s, int steps, Each&& each) const {
    s.gap_tolerance = Real(0.01);
    REQUIRE(solver.init(problem, s, Design::Params::Zero(), ZeroSum::Matrix1::Zero(), ZeroSum::Matrix2::Zero()) ==
            Status::ok);
    Run out;
    for (int k = 1; k <= steps; ++k) {
      REQUIRE(solver.step(&out.report) == Status::ok);
      out.smallest = std::min(out.smallest, out.report.gap_bound);
      if (out.report.tolerance_met && out.first < 0) out.first = k;
      each(out.report);
    }
    return out;
  }
  Run run(ZeroSum& solver, const pbrl::PbrlZeroSumSettings<Real>& s, int steps) const {
    return run(solver, s, steps, [](const ZeroSum::Report&) {});
  }
};

TEST_CASE("tolerance mode: a growth after which the gap gets worse is taken back (a runaway the generator found)") {
  // bench/tolerance.cpp's incentive-design run 32 under the user tuning (T 1, eta 0.7, step_x 0.3,
  // step_pi 0.2, lambda_start 5): S = 3, 2 x 2 actions, gamma 0.9. A schedule that grows lambda on
  // a rising gap met epsilon there, then lost it: lambda ran to 320 and the gap ended at 0.67, 50
  // times the smallest it had reached (docs/tolerance.md).
  static SmallDesign design(32);
  REQUIRE(design.instance.discount == 0.9);
  pbrl::PbrlZeroSumSettings<Real> s;
  s.gap_tolerance = Real(0.01);
  s.inner_steps = 1;
  s.oracle_step = Real(0.7);
  s.step_x = Real(0.3);
  s.step_pi = Real(0.2);
  s.lambda_start = Real(5);
  static SmallDesign::ZeroSum solver;
  const SmallDesign::Run run = design.run(solver, s, 2000, [&](const SmallDesign::ZeroSum::Report& r) {
    CHECK(r.lambda_growths == solver.schedule().growths());
    CHECK(r.lambda_backoffs == solver.schedule().backoffs());
  });
  const auto& r = run.report;
  CAPTURE(r.gap_bound);
  CAPTURE(run.smallest);
  CAPTURE(r.lambda);
  CAPTURE(r.lambda_backoffs);
  CHECK(run.first > 0);  // met epsilon at some step
  CHECK(r.gap_bound <= std::max(s.gap_tolerance, Real(2) * run.smallest));  // it does not run away
  CHECK(r.lambda < s.lambda_max);
}

TEST_CASE("the back-off: a gap above lambda_backoff times the best halves the steps, takes lambda back") {
  pbrl::PenaltySolverSettings<Real> s;
  s.gap_tolerance = Real(0.01);
  s.lambda_start = Real(2);
  s.lambda_patience = 4;
  s.lambda_stall = Real(0.99);
  REQUIRE(s.lambda_backoff == Real(2));  // the documented default
  pbrl::PenaltySchedule<Real> schedule;
  std::int64_t k = 0;
  auto feed = [&](Real gap, int steps) {
    for (int i = 0; i < steps; ++i, ++k) schedule.observe(s, k, gap, Real(1), false);
  };
  schedule.reset(s);
  const Real alpha = Real(0.1);
  const Real step0 = schedule.step(s, alpha);
  feed(Real(0.5), 4);  // flat: grows
  REQUIRE(schedule.growths() == 1);
  REQUIRE(schedule.lambda(s, k) == Real(4));
  feed(Real(0.9), 4);  // worse, but within twice the best (0.5): a stall, grows again
  CHECK(schedule.growths() == 2);
  CHECK(schedule.backoffs() == 0);
  feed(Real(1.2), 4);  // above twice the best: backs off at its first step, starts a new window
  CHECK(schedule.growths() == 2);
  CHECK(schedule.backoffs() == 1);
  CHECK(schedule.lambda(s, k) == Real(4));  // the last growth taken back
  CHECK(schedule.step_scale() == Real(0.5));
  CHECK(schedule.step(s, alpha) < step0 / Real(2) * Real(1.001));
  // The best starts again from the back-off's gap: the same gap is now a stall, and lambda grows
  // when the window the back-off started closes.
  feed(Real(1.2), 4);
  CHECK(schedule.growths() == 3);
  CHECK(schedule.backoffs() == 1);
  // A second back-off right after a growth takes that growth back; the halvings stop at 30.
  feed(Real(3), 4);
  CHECK(schedule.backoffs() == 2);
  CHECK(schedule.lambda(s, k) == Real(4));
  for (int i = 0; i < 40; ++i) feed(Real(10) * std::pow(Real(3), Real(i)), 4);  // each window 3x the last
  CHECK(schedule.backoffs() == 42);
  CHECK(schedule.step_scale() == std::ldexp(Real(1), -30));
  CHECK(schedule.lambda(s, k) >= s.lambda_start);
  // Below epsilon nothing moves.
  const std::int64_t backoffs = schedule.backoffs();
  feed(Real(0.001), 12);
  CHECK(schedule.backoffs() == backoffs);
  // The setting is validated: a factor of at most 1 is refused in tolerance mode.
  s.lambda_backoff = Real(1);
  CHECK(pbrl::validate(s) == Status::bad_setting);
}

TEST_CASE("the start: a large lambda_start starts with the steps scaled to lambda_step_limit") {
  pbrl::PenaltySolverSettings<Real> s;
  s.gap_tolerance = Real(0.01);
  REQUIRE(s.lambda_step_limit == Real(0.75));  // the documented default
  REQUIRE(s.step_x == Real(0.1));
  pbrl::PenaltySchedule<Real> schedule;
  const Real alpha = Real(0.1);
  // The defaults: step_x * lambda_start = 0.1, below the limit: the full steps.
  schedule.reset(s);
  CHECK(schedule.step_scale() == Real(1));
  // lambda_start 50: step_x * lambda_start = 5, the scale starts at 0.75 / 5.
  s.lambda_start = Real(50);
  schedule.reset(s);
  CHECK(schedule.step_scale() == doctest::Approx(Real(0.15)));
  CHECK(schedule.step(s, alpha) ==
        doctest::Approx(Real(0.15) * alpha / (Real(1) + alpha * Real(50) * s.penalty_smoothness)));
  CHECK(s.step_x * s.lambda_start * schedule.step_scale() <= s.lambda_step_limit * Real(1.0001));
  // A back-off halves the start's scale as it halves 1.
  const Real start = schedule.step_scale();
  std::int64_t k = 0;
  schedule.observe(s, k++, Real(1), Real(1), false);
  schedule.observe(s, k++, Real(3), Real(1), false);  // above twice the best: a back-off
  CHECK(schedule.backoffs() == 1);
  CHECK(schedule.step_scale() == start / Real(2));
  CHECK(schedule.validate_state(s, k) == Status::ok);
  // 0: the full steps at any start; fixed mode: the steps as given, the state reset()'s.
  s.lambda_step_limit = Real(0);
  schedule.reset(s);
  CHECK(schedule.step_scale() == Real(1));
  s.lambda_step_limit = Real(0.75);
  s.gap_tolerance = Real(0);
  schedule.reset(s);
  CHECK(schedule.step_scale() == Real(1));
  CHECK(schedule.step(s, alpha) == alpha);
  CHECK(schedule.validate_state(s, 0) == Status::ok);
  // The setting is validated in tolerance mode: negative or not finite is refused.
  s.gap_tolerance = Real(0.01);
  s.lambda_step_limit = Real(-1);
  CHECK(pbrl::validate(s) == Status::bad_setting);
  s.lambda_step_limit = std::numeric_limits<Real>::infinity();
  CHECK(pbrl::validate(s) == Status::bad_setting);
  s.gap_tolerance = Real(0);  // fixed mode: not used, any value passes
  CHECK(pbrl::validate(s) == Status::ok);
}

TEST_CASE("the start: lambda_start 50 meets epsilon where the full first steps lost the lower level") {
  // bench/tolerance.cpp's incentive-design run 12 under large-lambda-start (lambda_start 50, the
  // defaults otherwise): S = 3, 2 x 2 actions, gamma 0.99. With the full steps at lambda 50 the
  // gap was smallest at step 7 (2.1) and ended at 3.1 after 2000 steps with lambda at its cap
  // (docs/tolerance.md); with the start's scale it meets epsilon at step 13 (double). The euclidean
  // step's case: the natural step (the default) does not push the logits there.
  static SmallDesign design(12);
  REQUIRE(design.instance.discount == 0.99);
  static SmallDesign::ZeroSum solver;
  auto run = [&](Real limit) {
    pbrl::PbrlZeroSumSettings<Real> s;
    s.lambda_start = Real(50);
    s.lambda_step_limit = limit;
    s.lower_geometry = pbrl::LowerGeometry::euclidean;
    return design.run(solver, s, 300);
  };
  const SmallDesign::Run scaled = run(Real(0.75));
  CAPTURE(scaled.smallest);
  CAPTURE(scaled.report.gap_bound);
  CHECK(scaled.first > 0);
  CHECK(scaled.first <= 100);
  CHECK(scaled.report.gap_bound <= std::max(Real(0.01), Real(2) * scaled.smallest));  // it does not run away
  if (std::is_same<Real, double>::value) {  // the contrast, in double (float's path may differ)
    const SmallDesign::Run full = run(Real(0));
    CHECK(full.first < 0);
    CHECK(full.smallest > Real(1));
  }
}

TEST_CASE("the natural lower-level step meets epsilon where the euclidean one settles at a gap of 2") {
  // bench/tolerance.cpp's incentive-design run 12 of seed 2 with the defaults: S = 3, 2 x 2
  // actions, gamma 0.99. With the euclidean step the iterates settled at a stationary point of the
  // penalized problem with the gap near 2.35 and lambda at its cap; with the natural step (the
  // default in tolerance mode) they meet epsilon at step 77 with lambda 8 (double;
  // docs/tolerance.md).
  static SmallDesign design(12, 2u);
  REQUIRE(design.instance.discount == 0.99);
  static SmallDesign::ZeroSum solver;
  auto run = [&](pbrl::LowerGeometry geometry, int steps) {
    pbrl::PbrlZeroSumSettings<Real> s;
    s.lower_geometry = geometry;
    return design.run(solver, s, steps);
  };
  const SmallDesign::Run natural = run(pbrl::LowerGeometry::automatic, 400);
  CAPTURE(natural.smallest);
  CAPTURE(natural.report.gap_bound);
  CHECK(natural.first > 0);
  CHECK(natural.first <= 200);
  CHECK(natural.report.gap_bound <= Real(0.01));
  CHECK(natural.report.lambda < Real(100));
  if (std::is_same<Real, double>::value) {  // the contrast, in double (float's path may differ)
    const SmallDesign::Run euclidean = run(pbrl::LowerGeometry::euclidean, 2000);
    CHECK(euclidean.first < 0);
    CHECK(euclidean.smallest > Real(1));
    CHECK(euclidean.report.lambda == Real(1000));
  }
}

TEST_CASE("counts never overflow: a count with no room is refused, step() says count_overflow") {
  static Game game;
  static Solver solver;
  auto settings = sampled_paper_settings(2);
  REQUIRE(solver.init(game.problem, settings, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.run(3) == Status::ok);
  std::vector<unsigned char> image(pbrl::checkpoint_size<Solver>());
  REQUIRE(pbrl::save_checkpoint(solver, image.data(), image.size()) == Status::ok);
  pbrl::detail::CheckpointHeader header;
  REQUIRE(pbrl::detail::read_checkpoint_header(image.data(), image.size(), header) == Status::ok);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // The payload starts with the iteration count, then the environment-step count.
  auto forge = [&](std::int64_t iteration, std::int64_t environment_steps) {
    std::vector<unsigned char> forged = image;
    pbrl::detail::put_le(forged.data() + pbrl::kCheckpointHeaderSize, std::uint64_t(iteration), 8);
    pbrl::detail::put_le(forged.data() + pbrl::kCheckpointHeaderSize + 8, std::uint64_t(environment_steps), 8);
    pbrl::detail::CheckpointHeader h = header;
    h.sequence = std::uint64_t(iteration);
    pbrl::detail::seal_checkpoint(h, forged.data());
    return forged;
  };
  const Problem::Params x = solver.x();
  const std::int64_t steps = solver.environment_steps();

  // No room for one more iteration: refused, the solver untouched.
  auto full = forge(kMax, steps);
  CHECK(pbrl::restore_checkpoint(solver, full.data(), full.size()) == Status::checkpoint_corrupt);
  CHECK(solver.iteration() == 3);
  CHECK(same_bits(solver.x(), x));

  // Room for exactly one: that step runs, the next is refused and changes nothing.
  auto last = forge(kMax - 1, steps);
  REQUIRE(pbrl::restore_checkpoint(solver, last.data(), last.size()) == Status::ok);
  REQUIRE(solver.step() == Status::ok);
  CHECK(solver.iteration() == kMax);
  const Problem::Params x_last = solver.x();
  CHECK(solver.step() == Status::count_overflow);
  CHECK(solver.iteration() == kMax);
  CHECK(same_bits(solver.x(), x_last));

  // Environment steps with no room for this step's: count_overflow, nothing changes.
  auto busy = forge(3, kMax - 1);
  REQUIRE(pbrl::restore_checkpoint(solver, busy.data(), busy.size()) == Status::ok);
  const pbrl::Rng rng = solver.rng();
  CHECK(solver.step() == Status::count_overflow);
  CHECK(solver.iteration() == 3);
  CHECK(solver.environment_steps() == kMax - 1);
  CHECK(same_bits(solver.x(), x));
  CHECK(std::memcmp(solver.rng().state(), rng.state(), sizeof(std::uint32_t) * 4) == 0);
}

TEST_CASE("tolerance settings are validated; a refused init() leaves the solver as it was") {
  static Game game;
  static Solver solver;
  const auto good = paper_settings();
  REQUIRE(solver.init(game.problem, good, Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
  REQUIRE(solver.run(2) == Status::ok);
  const Problem::Params x = solver.x();
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  auto tolerance = [&] {
    auto s = good;
    s.gap_tolerance = Real(0.01);
    return s;
  };
  std::vector<pbrl::PbrlSettings<Real>> bad;
  { auto s = good; s.gap_tolerance = nan; bad.push_back(s); }
  { auto s = good; s.gap_tolerance = Real(-1); bad.push_back(s); }
  { auto s = tolerance(); s.lambda_growth = Real(1); bad.push_back(s); }
  { auto s = tolerance(); s.lambda_growth = nan; bad.push_back(s); }
  { auto s = tolerance(); s.lambda_patience = 0; bad.push_back(s); }
  { auto s = tolerance(); s.lambda_stall = Real(2); bad.push_back(s); }
  { auto s = tolerance(); s.lambda_max = Real(1); bad.push_back(s); }  // below lambda_start = 2
  { auto s = tolerance(); s.lambda_start = Real(0); bad.push_back(s); }  // lambda could never grow
  { auto s = tolerance(); s.penalty_smoothness = Real(-1); bad.push_back(s); }
  { auto s = tolerance(); s.lambda_step_limit = Real(-1); bad.push_back(s); }
  { auto s = tolerance(); s.inner_steps_max = 0; bad.push_back(s); }
  { auto s = tolerance(); s.inner_steps = 3; s.inner_steps_max = 2; bad.push_back(s); }
  { auto s = tolerance(); s.inner_steps_max = pbrl::kMaxInnerSteps + 1; bad.push_back(s); }
  { auto s = tolerance(); s.oracle_gap_fraction = Real(0); bad.push_back(s); }
  { auto s = tolerance(); s.oracle_gap_fraction = Real(1.5); bad.push_back(s); }
  for (std::size_t i = 0; i < bad.size(); ++i) {
    CAPTURE(i);
    CHECK(solver.init(game.problem, bad[i], Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::bad_setting);
    CHECK(solver.iteration() == 2);
    CHECK(same_bits(solver.x(), x));
  }
  CHECK(solver.init(game.problem, tolerance(), Problem::Params::Zero(), FollowerMatrix::Zero()) == Status::ok);
}

}  // namespace test_schedule
