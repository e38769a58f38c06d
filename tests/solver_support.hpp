#pragma once
// Solver checks shared by the PBRL and PbrlZeroSum suites: reward-shaping data on a random task,
// sampled settings, every Pbrl configuration, a step refused with the solver as it was, and a step
// in slices (solver/step_slices.hpp): the settings that reach every part kind, one step run in
// slices, the state both solvers have, the comparison of sliced and whole steps, and the checks
// between slices (a refused argument, a restore, a failed slice).
#include "support.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace solver_support {

// Reward-shaping data of Problem (a RewardShaping, or a type derived from it) on task's reward,
// transition and initial arrays: discount gamma, the learner's entropy weight tau, shaping in
// [-1, 1], the rest at Data's defaults.
template <class Problem, int S, int A>
typename Problem::Data shaping_task_data(const RandomModel<S, A>& task, Real gamma = Real(0.9), Real tau = Real(0.1)) {
  typename Problem::Data data;
  data.reward = task.reward;
  data.transition = task.transition;
  data.initial = task.initial;
  data.discount = gamma;
  data.lower.tau = tau;
  data.shaping = {Real(-1), Real(1)};
  return data;
}

// f(kind, param, oracle) for every Pbrl configuration: both penalty kinds, both policy
// parameterizations and the three oracles, each captured so that a failure names its configuration.
template <class F>
void for_each_pbrl_configuration(F&& f) {
  for (PenaltyKind kind : {PenaltyKind::value, PenaltyKind::bellman})
    for (Parameterization param : {Parameterization::direct, Parameterization::softmax})
      for (OracleKind oracle :
           {OracleKind::policy_mirror_descent, OracleKind::policy_gradient, OracleKind::soft_value_iteration}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(static_cast<int>(param));
        CAPTURE(static_cast<int>(oracle));
        f(kind, param, oracle);
      }
}

// Settings of a short solve in the configuration (kind, param, oracle): both policy sets in param
// (floor 1e-4, logit bound 20), T = 3 oracle steps of 0.5, steps 0.05 for x and 0.02 (direct) or
// 0.3 (softmax) for y, lambda ramped from 1 to 4 over 2 iterations.
inline pbrl::PbrlSettings<Real> configuration_settings(PenaltyKind kind, Parameterization param, OracleKind oracle) {
  pbrl::PbrlSettings<Real> s;
  s.penalty_kind = kind;
  s.policy = {param, Real(1e-4), Real(20)};
  s.oracle = oracle;
  s.oracle_policy = {param, Real(1e-4), Real(20)};
  s.inner_steps = 3;
  s.oracle_step = Real(0.5);
  s.step_x = Real(0.05);
  s.step_y = param == Parameterization::direct ? Real(0.02) : Real(0.3);
  s.lambda_start = Real(1);
  s.lambda_final = Real(4);
  s.lambda_ramp = 2;
  return s;
}

// Sampled gradients with the policy-gradient oracle (step 0.1): T oracle steps, rollouts of
// `horizon` steps in batches of `batch`.
template <class Settings>
void set_sampled_policy_gradient(Settings& s, int inner_steps, int horizon, int batch) {
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.oracle_step = Real(0.1);
  s.inner_steps = inner_steps;
  s.gradient = pbrl::GradientMode::sampled;
  s.sampling.horizon = horizon;
  s.sampling.batch = batch;
}

// A step that must fail (a model broken after init()): refused, with x, the iteration, the
// environment steps and the generator as they were.
template <class Solver>
void check_step_refused(Solver& solver) {
  const auto x = solver.x();
  const auto k = solver.iteration();
  const auto steps = solver.environment_steps();
  const pbrl::Rng rng = solver.rng();
  CHECK(solver.step() != pbrl::Status::ok);
  CHECK(solver.x() == x);
  CHECK(solver.iteration() == k);
  CHECK(solver.environment_steps() == steps);
  CHECK(std::memcmp(solver.rng().state(), rng.state(), 16) == 0);
}

// Steps `solver` once per entry of `expected` with a report: step k's report has iteration k,
// lambda expected[k] and objective upper_objective + lambda * penalty; more(report) checks what
// the solver's report has besides.
template <class Solver, std::size_t N, class More>
void check_lambda_ramp(Solver& solver, const Real (&expected)[N], More&& more) {
  for (int k = 0; k < int(N); ++k) {
    typename Solver::Report r;
    REQUIRE(solver.step(&r) == pbrl::Status::ok);
    CHECK(r.iteration == k);
    CHECK_CLOSE(r.lambda, expected[k], kTight, Real(1));
    CHECK_CLOSE(r.objective, r.upper_objective + r.lambda * r.penalty, kTight, std::abs(r.objective));
    more(r);
  }
}

// Appends to `all` the settings past the exact fixed-step ones: tolerance mode (the oracle stops
// on its target), then sampled batches with common random numbers (T = 2, B = 5) and without
// (no oracle steps), each from `base`.
template <class Settings>
void push_tolerance_and_sampled(std::vector<Settings>& all, const Settings& base) {
  auto s = base;
  s.gap_tolerance = Real(0.05);
  s.inner_steps = 1;
  s.inner_steps_max = 6;
  all.push_back(s);  // tolerance mode: the oracle stops on its target
  s = base;
  set_sampled_policy_gradient(s, 2, 4, 5);
  all.push_back(s);  // sampled, T = 2, B = 5, common random numbers
  s.sampling.common_random_numbers = false;
  s.inner_steps = 0;
  all.push_back(s);  // sampled, no oracle steps, independent batches
}

// Runs one step in slices of at most max_rollouts rollouts; the parts in order; report to every slice.
template <class Solver>
pbrl::Status sliced_step(Solver& solver, int max_rollouts, typename Solver::Report* report,
                         std::vector<pbrl::StepPart>* parts = nullptr) {
  pbrl::SliceResult slice;
  std::int64_t index = 0;
  do {
    if (pbrl::Status st = solver.step_slice(max_rollouts, slice, report); st != pbrl::Status::ok) return st;
    CHECK(slice.slice == index++);
    if (parts != nullptr) parts->push_back(slice.part);
  } while (!slice.step_done);
  return pbrl::Status::ok;
}

// The state every solver has: iteration, environment steps, x and the generator.
template <class Solver>
void same_common_state(const Solver& a, const Solver& b) {
  CHECK(a.iteration() == b.iteration());
  CHECK(a.environment_steps() == b.environment_steps());
  CHECK(a.x() == b.x());
  CHECK(std::memcmp(a.rng().state(), b.rng().state(), 16) == 0);
}

// Three solvers from make(): one stepping whole (a report every other step), one never given a
// report (the diagnostics change no iterate), one in slices of at most m rollouts. Four steps: the
// states and reports equal, and the parts the step's structure, no more slices than its work
// needs: begin first, projection last, one begin and one upper; check_parts(count, k) checks the
// rest, count(part) the number of slices of that part in step k.
template <class Make, class Same, class SameReport, class CheckParts>
void check_sliced_steps(Make&& make, int m, Same&& same, SameReport&& same_report, CheckParts&& check_parts) {
  auto whole = make();
  auto sliced = make();
  auto bare = make();  // never a report: the diagnostics change no iterate
  using Solver = typename std::decay<decltype(*whole)>::type;
  for (int k = 0; k < 4; ++k) {
    typename Solver::Report a, b;
    typename Solver::Report* ra = k % 2 == 0 ? &a : nullptr;  // with and without the report's diagnostics
    typename Solver::Report* rb = k % 2 == 0 ? &b : nullptr;
    REQUIRE(whole->step(ra) == pbrl::Status::ok);
    REQUIRE(bare->step() == pbrl::Status::ok);
    same(*whole, *bare);
    std::vector<pbrl::StepPart> parts;
    REQUIRE(sliced_step(*sliced, m, rb, &parts) == pbrl::Status::ok);
    CHECK_FALSE(sliced->step_in_progress());
    same(*whole, *sliced);
    if (k % 2 == 0) same_report(a, b);
    REQUIRE(parts.size() >= 2);
    CHECK(parts.front() == pbrl::StepPart::begin);
    CHECK(parts.back() == pbrl::StepPart::projection);
    const auto count = [&](pbrl::StepPart p) { return std::count(parts.begin(), parts.end(), p); };
    check_parts(count, k);
    CHECK(count(pbrl::StepPart::upper) == 1);
    CHECK(count(pbrl::StepPart::begin) == 1);
  }
}

// A refused argument (no rollout allowed) changes nothing: the step goes on where it was.
template <class Solver>
void check_refused_slice(Solver& solver, typename Solver::Report* report) {
  pbrl::SliceResult untouched;
  untouched.slice = -5;
  CHECK(solver.step_slice(0, untouched, report) == pbrl::Status::bad_setting);
  CHECK(untouched.slice == -5);
  CHECK(solver.step_in_progress());
}

// Restored between slices (before: the image of the last completed step, at `iteration`): the
// step in progress is dropped, the next slice begins that step again, and the run goes on as if
// never interrupted (reference has taken that step); a fresh solver from make(), as a rebooted
// device, restores the image and steps to the same state.
template <class Solver, class Make, class Same>
void check_restore_between_slices(Solver& solver, const Solver& reference, const std::vector<unsigned char>& before,
                                  std::int64_t iteration, Make&& make, Same&& same) {
  pbrl::SliceResult slice;
  REQUIRE(solver.step_slice(1, slice) == pbrl::Status::ok);
  REQUIRE(solver.step_slice(1, slice) == pbrl::Status::ok);
  REQUIRE(pbrl::restore_checkpoint(solver, before.data(), before.size()) == pbrl::Status::ok);
  CHECK_FALSE(solver.step_in_progress());
  CHECK(solver.iteration() == iteration);
  REQUIRE(solver.step_slice(1, slice) == pbrl::Status::ok);
  CHECK(slice.part == pbrl::StepPart::begin);
  CHECK(slice.slice == 0);
  do {
    REQUIRE(solver.step_slice(1, slice) == pbrl::Status::ok);
  } while (!slice.step_done);
  same(reference, solver);
  auto fresh = make();  // a rebooted device restores the image mid-step too
  REQUIRE(pbrl::restore_checkpoint(*fresh, before.data(), before.size()) == pbrl::Status::ok);
  REQUIRE(fresh->step() == pbrl::Status::ok);
  same(reference, *fresh);
}

// A slice that fails (an evaluation with no sweep allowed, after `first` slices that succeed)
// abandons the step and leaves the last completed step intact; the next slice begins that step
// again, and in slices it ends where the reference's step does. max_sweeps: the sweeps the solver
// was set up with (part of the settings an image is saved under).
template <class Solver, class Same>
void check_failed_slice_abandons_step(Solver& solver, Solver& reference, int first, int max_sweeps, Same&& same) {
  constexpr std::size_t kImage = pbrl::checkpoint_size<Solver>();
  std::vector<unsigned char> before(kImage), during(kImage);
  pbrl::SliceResult slice;
  REQUIRE(pbrl::save_checkpoint(solver, before.data(), kImage) == pbrl::Status::ok);
  for (int i = 0; i < first; ++i) REQUIRE(solver.step_slice(1, slice) == pbrl::Status::ok);
  solver.evaluation_workspace().max_sweeps = 0;
  pbrl::Status failed = pbrl::Status::ok;
  while (failed == pbrl::Status::ok) {
    failed = solver.step_slice(1, slice);
    REQUIRE_FALSE((failed == pbrl::Status::ok && slice.step_done));  // some slice evaluates (f, at the latest)
  }
  CHECK(failed == pbrl::Status::bad_setting);
  CHECK_FALSE(solver.step_in_progress());
  solver.evaluation_workspace().max_sweeps = max_sweeps;
  REQUIRE(pbrl::save_checkpoint(solver, during.data(), kImage) == pbrl::Status::ok);
  CHECK(during == before);
  REQUIRE(sliced_step(solver, 3, nullptr) == pbrl::Status::ok);
  REQUIRE(reference.step() == pbrl::Status::ok);
  same(reference, solver);
}

}  // namespace solver_support
