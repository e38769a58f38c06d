// The PBRL solver (Algorithm 1): on reward shaping it drives the penalty towards 0 while it
// improves f; its report is consistent; the lambda ramp, the oracle warm start, the two
// evaluation methods and the paper's 100-state size; a step in slices.
#include "support.hpp"
#include "solver_support.hpp"
#include "pbrl/problems/reward_shaping.hpp"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace test_solver {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
template <int S, int A>
struct ShapingInstance {
  RandomModel<S, A> task;
  pbrl::RewardShaping<Real, S, A> problem;
  explicit ShapingInstance(std::uint32_t seed, Real tau = Real(0.1)) : task(seed, Real(0.7)) {
    REQUIRE(problem.init(solver_support::shaping_task_data<pbrl::RewardShaping<Real, S, A>>(task, Real(0.9), tau)) ==
            Status::ok);
  }
};

template <int S, int A>
pbrl::PbrlSettings<Real> shaping_settings(PenaltyKind kind, pbrl::Parameterization param) {
  pbrl::PbrlSettings<Real> s;
  s.penalty_kind = kind;
  s.policy.parameterization = param;
  // The direct parameterization's smoothness grows like tau/floor near the floor (the entropy's
  // curvature), so it takes a larger floor and a smaller step (alpha <= 1/(L_f + lambda L_p)).
  s.policy.floor = Real(1e-2);
  s.inner_steps = 5;
  s.oracle_step = Real(1);
  s.step_x = Real(0.05);
  s.step_y = param == pbrl::Parameterization::softmax ? Real(0.5) : Real(0.02);
  s.lambda_start = s.lambda_final = Real(5);
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
  settings.lambda_start = Real(1);
  settings.lambda_final = Real(3);
  settings.lambda_ramp = 4;
  REQUIRE(solver->init(inst->problem, settings, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
  const Real expected[] = {1, 1.5, 2, 2.5, 3, 3, 3};
  solver_support::check_lambda_ramp(*solver, expected, [](const Solver::Report& r) {
    CHECK(r.projected_gradient_norm >= Real(0));
    CHECK_CLOSE(r.penalty, r.lower_gap, kTight, Real(1));  // value penalty = lower-level gap
  });

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
      s.penalty_kind = kind;
      s.oracle = oracle;
      s.inner_steps = oracle == pbrl::OracleKind::policy_gradient ? 20 : 10;
      s.oracle_step = Real(1);
      s.step_x = Real(0.05);
      s.step_y = Real(0.2);
      s.lambda_start = s.lambda_final = Real(2);
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
    check_follows_direct(direct->x(), swept->x());
    check_follows_direct(direct->y(), swept->y());
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
    // Two steps: the second report describes an iterate a step made, where the direct solve and
    // the sweeps must agree (each step at this size costs seconds under QEMU and at -O0).
    Solver::Report a, b;
    REQUIRE(solver->run(2, &a) == Status::ok);
    REQUIRE(sweep_solver->run(2, &b) == Status::ok);
    CHECK(std::isfinite(a.objective));
    CHECK_CLOSE(a.objective, b.objective, kDouble ? Real(1e-8) : Real(1e-3), std::abs(a.objective));
  }
}

// ---- A step in slices (solver/step_slices.hpp) ------------------------------------------------

namespace {
constexpr int kSliceS = 4, kSliceA = 3;
using SliceProblem = pbrl::RewardShaping<Real, kSliceS, kSliceA>;
using DirectSlices = pbrl::Pbrl<SliceProblem>;
using SweepSlices = pbrl::Pbrl<SliceProblem, EvaluationMethod::sweeps>;  // sweeps: a slice can be made to fail

template <class Solver>
void same_state(const Solver& a, const Solver& b) {
  solver_support::same_common_state(a, b);
  CHECK(a.y() == b.y());
  CHECK(a.oracle_policy() == b.oracle_policy());
}

// The settings the slice tests run, each with the value and the Bellman penalty: every part kind
// (oracle kinds, T = 0, tolerance mode, sampled batches with and without common random numbers).
std::vector<pbrl::PbrlSettings<Real>> slice_settings() {
  std::vector<pbrl::PbrlSettings<Real>> all;
  for (auto kind : {PenaltyKind::value, PenaltyKind::bellman}) {
    const auto base = shaping_settings<kSliceS, kSliceA>(kind, pbrl::Parameterization::softmax);
    auto s = base;
    s.inner_steps = 3;
    all.push_back(s);  // PMD, T = 3
    s.oracle = pbrl::OracleKind::policy_gradient;
    s.inner_steps = 2;
    all.push_back(s);  // exact policy gradient, T = 2
    s.oracle = pbrl::OracleKind::soft_value_iteration;
    all.push_back(s);  // soft value iteration: one slice of sweeps
    s = base;
    s.inner_steps = 0;
    all.push_back(s);  // T = 0: the oracle's slice does nothing
    solver_support::push_tolerance_and_sampled(all, base);
  }
  return all;
}

template <class Solver>
std::unique_ptr<Solver> slice_solver(const SliceProblem& problem, const pbrl::PbrlSettings<Real>& s) {
  auto solver = std::make_unique<Solver>();
  if constexpr (std::is_same<Solver, SweepSlices>::value) {
    solver->evaluation_workspace().max_sweeps = 400;
    solver->evaluation_workspace().tolerance = Real(1e-5);
  }
  REQUIRE(solver->init(problem, s, Solver::Params::Zero(), Mat<kSliceS, kSliceA>::Zero()) == Status::ok);
  return solver;
}

// Slices of every size against step(), four steps per setting, with and without a report.
template <class Solver>
void check_slices_equal_step(const SliceProblem& problem) {
  constexpr bool sweeps = std::is_same<Solver, SweepSlices>::value;
  for (const auto& s : slice_settings()) {
    const bool sampled = s.gradient == pbrl::GradientMode::sampled;
    const bool bellman = s.penalty_kind == PenaltyKind::bellman;
    for (int m : {1, 2, 3, pbrl::kAllRollouts}) {
      CAPTURE(sweeps);
      CAPTURE(static_cast<int>(s.penalty_kind));
      CAPTURE(static_cast<int>(s.oracle));
      CAPTURE(static_cast<int>(s.gradient));
      CAPTURE(s.inner_steps);
      CAPTURE(m);
      const auto make = [&] { return slice_solver<Solver>(problem, s); };
      const auto same = [](const Solver& a, const Solver& b) { same_state(a, b); };
      const auto same_reports = same_report<typename Solver::Report>;
      solver_support::check_sliced_steps(make, m, same, same_reports, [&](const auto& count, int k) {
        const int B = s.sampling.batch, per_batch = m >= B ? 1 : (B + m - 1) / m;
        if (sampled) {
          CHECK(count(pbrl::StepPart::rollouts) == (s.inner_steps + 2) * per_batch);
          CHECK(count(pbrl::StepPart::oracle_step) == 0);
          CHECK(count(pbrl::StepPart::evaluation) == (k % 2 == 0 ? 2 : 0));  // the report's exact evaluations
          CHECK(count(pbrl::StepPart::penalty) == 0);
        } else {
          CHECK(count(pbrl::StepPart::rollouts) == 0);
          // pi_y, pi-hat and, for the Bellman penalty in sweeps mode, its start occupancy
          CHECK(count(pbrl::StepPart::evaluation) == (bellman && sweeps ? 3 : 2));
          CHECK(count(pbrl::StepPart::penalty) == 1);
          const long oracle = count(pbrl::StepPart::oracle_step);
          if (s.oracle == pbrl::OracleKind::soft_value_iteration || s.inner_steps == 0) CHECK(oracle == 1);
          else if (s.tolerance_mode()) CHECK((oracle >= 1 && oracle <= s.inner_steps_max));
          else CHECK(oracle == s.inner_steps);
        }
        CHECK(count(pbrl::StepPart::lower_model) == 0);
      });
    }
  }
}
}  // namespace

TEST_CASE("PBRL, a step in slices: the iterates and reports of step() bit for bit, whatever the slicing") {
  auto inst = std::make_unique<ShapingInstance<kSliceS, kSliceA>>(55);
  check_slices_equal_step<DirectSlices>(inst->problem);
  check_slices_equal_step<SweepSlices>(inst->problem);
}

TEST_CASE("PBRL, a step in slices: checkpoints between slices, restore and failure abandon the step in progress") {
  auto inst = std::make_unique<ShapingInstance<kSliceS, kSliceA>>(56);
  constexpr std::size_t kImage = pbrl::checkpoint_size<SweepSlices>();
  pbrl::SliceResult slice;
  SweepSlices idle;
  CHECK(idle.step_slice(1, slice) == Status::not_initialized);
  CHECK_FALSE(idle.step_in_progress());
  for (const auto& s : slice_settings()) {
    CAPTURE(static_cast<int>(s.penalty_kind));
    CAPTURE(static_cast<int>(s.oracle));
    CAPTURE(static_cast<int>(s.gradient));
    CAPTURE(s.inner_steps);
    auto reference = slice_solver<SweepSlices>(inst->problem, s);
    auto solver = slice_solver<SweepSlices>(inst->problem, s);
    REQUIRE(reference->run(2) == Status::ok);
    REQUIRE(solver->run(2) == Status::ok);
    std::vector<unsigned char> before(kImage), during(kImage);
    REQUIRE(pbrl::save_checkpoint(*solver, before.data(), kImage) == Status::ok);

    // Every slice of step 2 (with a report: the sampled mode's exact evaluations too) leaves the
    // image of the last completed step, the evaluations' warm starts included.
    SweepSlices::Report r, reference_report;
    REQUIRE(reference->step(&reference_report) == Status::ok);
    int slices = 0;
    do {
      REQUIRE(solver->step_slice(1, slice, &r) == Status::ok);
      ++slices;
      if (slice.step_done) break;
      CHECK(solver->step_in_progress());
      CHECK(solver->iteration() == 2);
      REQUIRE(pbrl::save_checkpoint(*solver, during.data(), kImage) == Status::ok);
      CHECK(during == before);
      solver_support::check_refused_slice(*solver, &r);
    } while (true);
    CHECK(slices >= 5);
    same_state(*reference, *solver);
    same_report(reference_report, r);

    // Restored between slices (the image before step 2): the step in progress is dropped.
    const auto same = [](const SweepSlices& a, const SweepSlices& b) { same_state(a, b); };
    solver_support::check_restore_between_slices(
        *solver, *reference, before, 2, [&] { return slice_solver<SweepSlices>(inst->problem, s); }, same);

    // step() amid a step's slices begins a fresh step.
    REQUIRE(solver->step_slice(2, slice) == Status::ok);
    REQUIRE(solver->step_slice(2, slice) == Status::ok);
    REQUIRE(solver->step() == Status::ok);
    REQUIRE(reference->step() == Status::ok);
    same_state(*reference, *solver);

    // A slice that fails abandons the step (two slices in: sampled, some rollouts; PMD, an evaluation).
    solver_support::check_failed_slice_abandons_step(*solver, *reference, 2, 400, same);
  }
}

TEST_CASE("PBRL, sweeps mode: a step starts its evaluations from the last completed step's, after a restore too") {
  // Nothing moves (T = 0, steps too small to change a bit): a warm-started solve stops after one sweep.
  auto inst = std::make_unique<ShapingInstance<kSliceS, kSliceA>>(57);
  auto s = shaping_settings<kSliceS, kSliceA>(PenaltyKind::bellman, pbrl::Parameterization::softmax);
  s.inner_steps = 0;
  s.step_x = s.step_y = Real(1e-30);
  auto solver = slice_solver<SweepSlices>(inst->problem, s);
  REQUIRE(solver->step() == Status::ok);
  CHECK(solver->evaluation_workspace().last_sweeps > 10);  // from zero
  REQUIRE(solver->step() == Status::ok);
  CHECK(solver->evaluation_workspace().last_sweeps == 1);

  // Slices abandoned, a failed slice, a restored image: each next step still starts warm.
  constexpr std::size_t kImage = pbrl::checkpoint_size<SweepSlices>();
  std::vector<unsigned char> image(kImage);
  REQUIRE(pbrl::save_checkpoint(*solver, image.data(), kImage) == Status::ok);
  pbrl::SliceResult slice;
  for (int i = 0; i < 4; ++i) REQUIRE(solver->step_slice(1, slice) == Status::ok);
  solver->abandon_step();
  REQUIRE(solver->step() == Status::ok);
  CHECK(solver->evaluation_workspace().last_sweeps == 1);
  for (int i = 0; i < 3; ++i) REQUIRE(solver->step_slice(1, slice) == Status::ok);
  solver->evaluation_workspace().max_sweeps = 0;
  CHECK(solver->step_slice(1, slice) == Status::bad_setting);
  solver->evaluation_workspace().max_sweeps = 400;
  REQUIRE(solver->step() == Status::ok);
  CHECK(solver->evaluation_workspace().last_sweeps == 1);
  auto fresh = slice_solver<SweepSlices>(inst->problem, s);
  REQUIRE(pbrl::restore_checkpoint(*fresh, image.data(), kImage) == Status::ok);
  REQUIRE(fresh->step() == Status::ok);
  CHECK(fresh->evaluation_workspace().last_sweeps == 1);
}

// The projected step's box form (one pass: step, clamp, sum) against the general one (the step,
// project(), then the sum): the same new iterate to the bit, a NaN still a NaN (so the solvers'
// finiteness check of the sum still sees it), the same sum within rounding; parameter_step takes a
// problem's box() where it has one and its project_parameters() otherwise.
TEST_CASE("the projected step in one pass over a box: the general step's iterate to the bit") {
  constexpr int N = 37;  // not a multiple of any unrolling
  using V = Eigen::Matrix<Real, N, 1>;
  pbrl::Rng rng(7u);
  const pbrl::Box<Real> box{Real(-0.5), Real(0.75)};
  for (int trial = 0; trial < 20; ++trial) {
    V z, g;
    for (int i = 0; i < N; ++i) {
      z(i) = box.lower + (box.upper - box.lower) * rng.uniform<Real>();
      g(i) = Real(4) * (rng.uniform<Real>() - Real(0.5));
    }
    const Real alpha = trial == 0 ? Real(1e-30) : Real(0.05) * Real(trial);  // a tiny step too
    V general, fused;
    const Real g2 = pbrl::projected_step(z, alpha, g, general, [&](V& x) { pbrl::project(box, x); });
    const Real f2 = pbrl::box_projected_step(z, alpha, g, fused, box);
    for (int i = 0; i < N; ++i) REQUIRE(fused(i) == general(i));
    CHECK(f2 == doctest::Approx(g2).epsilon(double(64 * std::numeric_limits<Real>::epsilon())));
    CHECK(fused.minCoeff() >= box.lower);
    CHECK(fused.maxCoeff() <= box.upper);
  }
  V z = V::Zero(), g = V::Zero(), next;
  g(3) = std::numeric_limits<Real>::quiet_NaN();
  CHECK_FALSE(std::isfinite(pbrl::box_projected_step(z, Real(0.1), g, next, box)));
  CHECK(std::isnan(next(3)));
  g(3) = std::numeric_limits<Real>::infinity();  // a step to -inf lands on the box, as project() puts it
  V general;
  const Real g2 = pbrl::projected_step(z, Real(0.1), g, general, [&](V& x) { pbrl::project(box, x); });
  CHECK(pbrl::box_projected_step(z, Real(0.1), g, next, box) == doctest::Approx(double(g2)));
  CHECK(next(3) == box.lower);
  CHECK(next == general);
}

namespace {
// A problem whose X is no box: parameter_step must call its projection. Its box() is something
// else (not a Box), so it does not count as one.
struct HalfProjection {
  using Scalar = Real;
  using Params = Eigen::Matrix<Real, 3, 1>;
  void project_parameters(Params& x) const { x *= Real(0.5); }
  int box() const { return 0; }
};
}  // namespace

TEST_CASE("parameter_step: a problem's box() where it has one, its project_parameters() otherwise") {
  static_assert(pbrl::has_parameter_box<pbrl::RewardShaping<Real, 4, 2>>::value, "the library's problems have box()");
  static_assert(!pbrl::has_parameter_box<HalfProjection>::value, "");
  const HalfProjection half;
  const HalfProjection::Params z(Real(1), Real(2), Real(4)), g = HalfProjection::Params::Zero();
  HalfProjection::Params next;
  const Real g2 = pbrl::parameter_step(half, z, Real(0.5), g, next);
  CHECK(next == z * Real(0.5));
  CHECK(g2 == doctest::Approx(double((z - next).squaredNorm() / Real(0.25))));
  ShapingInstance<4, 2> inst(3);
  using Params = pbrl::RewardShaping<Real, 4, 2>::Params;
  const Params x = Params::Zero(), grad = Params::Constant(Real(100));  // the step leaves the box
  Params stepped;
  pbrl::parameter_step(inst.problem, x, Real(1), grad, stepped);
  CHECK(stepped == Params::Constant(inst.problem.box().lower));
}


TEST_CASE("sampled mode: a model changed after init() to rows with no mass is refused, never read out of bounds") {
  // The arrays behind a problem are the caller's promise: unchanged after init(). A caller who
  // breaks it with a zero transition row or a zero rho gets a status from step() (the rollouts draw
  // through detail::draw, whose index is always in range), and the solver is as it was.
  constexpr int S = 4, A = 3;
  using Solver = pbrl::Pbrl<pbrl::RewardShaping<Real, S, A>>;
  for (int broken = 0; broken < 2; ++broken) {
    CAPTURE(broken);
    auto inst = std::make_unique<ShapingInstance<S, A>>(11);
    auto s = shaping_settings<S, A>(PenaltyKind::value, pbrl::Parameterization::softmax);
    solver_support::set_sampled_policy_gradient(s, 1, 6, 8);
    auto solver = std::make_unique<Solver>();
    REQUIRE(solver->init(inst->problem, s, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    REQUIRE(solver->step() == Status::ok);
    // Every row of P (and rho) emptied: whatever the draws, one of them meets the empty row.
    if (broken == 0)
      for (Real& p : inst->task.transition) p = Real(0);
    else
      for (Real& p : inst->task.initial) p = Real(0);
    const auto y = solver->y();
    solver_support::check_step_refused(*solver);
    CHECK(solver->y() == y);
  }
}


TEST_CASE("swap_model: a new model between steps, validated, the solve going on warm") {
  constexpr int S = 4, A = 3;
  using Problem = pbrl::RewardShaping<Real, S, A>;
  using Solver = pbrl::Pbrl<Problem>;
  auto inst = std::make_unique<ShapingInstance<S, A>>(21);
  auto other = std::make_unique<ShapingInstance<S, A>>(22);  // another model of the same sizes
  auto data_of = [](RandomModel<S, A>& m, const Real* transition) {
    Problem::Data d;
    d.reward = m.reward;
    d.transition = transition;
    d.initial = m.initial;
    d.discount = Real(0.9);
    d.lower.tau = Real(0.1);
    d.shaping = {Real(-1), Real(1)};
    return d;
  };
  auto s = shaping_settings<S, A>(PenaltyKind::value, pbrl::Parameterization::softmax);
  auto a = std::make_unique<Solver>();
  CHECK(a->swap_model(inst->problem, data_of(inst->task, inst->task.transition)) == Status::not_initialized);
  REQUIRE(a->init(inst->problem, s, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
  REQUIRE(a->run(3) == Status::ok);

  SUBCASE("refused: another problem, invalid data, x outside the new box; nothing changed") {
    std::vector<Real> doubled(inst->task.transition, inst->task.transition + S * A * S);
    doubled[0] += Real(1);  // a row summing to 2
    auto narrow = data_of(inst->task, inst->task.transition);
    narrow.shaping = {Real(-1e-9), Real(1e-9)};  // x after three steps lies outside
    REQUIRE(a->x().cwiseAbs().maxCoeff() > Real(1e-9));
    const auto x = a->x();
    const auto y = a->y();
    unsigned char before[sizeof(Problem)];
    std::memcpy(before, &inst->problem, sizeof(Problem));
    CHECK(a->swap_model(other->problem, data_of(other->task, other->task.transition)) == Status::bad_setting);
    CHECK(a->swap_model(inst->problem, data_of(inst->task, doubled.data())) == Status::bad_transition);
    CHECK(a->swap_model(inst->problem, narrow) == Status::out_of_bounds);
    CHECK(std::memcmp(before, &inst->problem, sizeof(Problem)) == 0);
    CHECK(a->x() == x);
    CHECK(a->y() == y);
    CHECK(a->model_generation() == 0);
  }

  SUBCASE("fixed mode: the same numbers in another array continue bit for bit; a step in progress is abandoned") {
    auto b = std::make_unique<Solver>();
    REQUIRE(b->init(inst->problem, s, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    REQUIRE(b->run(3) == Status::ok);
    std::vector<Real> copy(inst->task.transition, inst->task.transition + S * A * S);
    pbrl::SliceResult slice;
    REQUIRE(a->step_slice(1, slice) == Status::ok);
    REQUIRE(a->step_in_progress());
    REQUIRE(a->swap_model(inst->problem, data_of(inst->task, copy.data())) == Status::ok);
    CHECK_FALSE(a->step_in_progress());
    CHECK(inst->problem.task().transition == copy.data());
    CHECK(a->model_generation() == 1);
    Solver::Report ra, rb;
    REQUIRE(a->run(3, &ra) == Status::ok);
    REQUIRE(b->run(3, &rb) == Status::ok);
    CHECK(a->x() == b->x());
    CHECK(a->y() == b->y());
    CHECK(ra.objective == rb.objective);
    CHECK(ra.model_generation == 1);
    CHECK(rb.model_generation == 0);
  }

  SUBCASE("tolerance mode: converged, swapped, no longer converged, converged again on the new model") {
    s.gap_tolerance = Real(kDouble ? 1e-3 : 1e-2);
    s.stationarity_tolerance = Real(kDouble ? 1e-3 : 1e-2);
    REQUIRE(a->init(inst->problem, s, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    pbrl::SolveResult result;
    Solver::Report report;
    REQUIRE(a->solve(20000, result, &report) == Status::ok);
    REQUIRE(result.outcome == pbrl::SolveOutcome::converged);
    const Real lambda = a->lambda(a->iteration());
    const auto x = a->x();
    const auto y = a->y();
    // The plant's transitions become the other instance's.
    REQUIRE(a->swap_model(inst->problem, data_of(inst->task, other->task.transition)) == Status::ok);
    CHECK_FALSE(a->converged());
    CHECK(a->x() == x);
    CHECK(a->y() == y);
    CHECK(a->lambda(a->iteration()) == lambda);
    // A checkpoint carries the generation.
    std::vector<unsigned char> image(pbrl::checkpoint_size<Solver>());
    REQUIRE(pbrl::save_checkpoint(*a, image.data(), image.size()) == Status::ok);
    auto restored = std::make_unique<Solver>();
    REQUIRE(restored->init(inst->problem, s, Solver::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    REQUIRE(pbrl::restore_checkpoint(*restored, image.data(), image.size()) == Status::ok);
    CHECK(restored->model_generation() == 1);
    REQUIRE(a->solve(20000, result, &report) == Status::ok);
    CHECK(result.outcome == pbrl::SolveOutcome::converged);
    CHECK(result.steps >= s.convergence_window);
    CHECK(report.model_generation == 1);
    CHECK(report.gap_bound <= s.gap_tolerance);
  }
}

}  // namespace test_solver
