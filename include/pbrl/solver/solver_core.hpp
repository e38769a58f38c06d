#pragma once
// What the penalty solvers (Pbrl, PbrlZeroSum) share, written once: the problem, the settings,
// the counts, the penalty schedule, the random stream, the evaluation workspace and x; step(),
// step_slice(), run() and solve(); the shared part of init() and of a step's commit; the
// checkpoint hooks' common form. A solver derives from PenaltySolverCore<itself, ...> (CRTP) and
// supplies its step's parts (run_part), abandon_step(), state_fields() and its own iterates.
//
// solve(max_steps) steps until the verdict (solver/penalty_schedule.hpp) says the iterate is the
// answer or more steps cannot change that, and at most max_steps steps (its worst case is
// max_steps times one step's); it returns ok with the outcome in its result. step() keeps
// working after convergence, and a later solve() on a converged solver takes no step.

#include "pbrl/evaluation.hpp"
#include "pbrl/model_digest.hpp"
#include "pbrl/rng.hpp"
#include "pbrl/solver/penalty_schedule.hpp"
#include "pbrl/solver/projected_step.hpp"
#include "pbrl/solver/step_counts.hpp"
#include "pbrl/solver/settings.hpp"
#include "pbrl/solver/solve_outcome.hpp"
#include "pbrl/solver/step_slices.hpp"

#include <cmath>
#include <cstdint>

namespace pbrl {

// What every penalty solver's report holds beside its own fields: the schedule's part
// (ScheduleReport, the verdict included), the evaluations stopped at max_sweeps
// (EvaluationOutcome) and the step's numbers. Every value of a report returned with ok is finite.
template <typename Scalar>
struct PenaltySolverReport : ScheduleReport<Scalar>, EvaluationOutcome {
  std::int64_t iteration = 0;          // k of the iterate the numbers describe
  Scalar upper_objective = Scalar(0);  // f at the iterate
  Scalar penalty = Scalar(0);          // the penalty p (PbrlZeroSum: psi) with the oracle's policies
  Scalar objective = Scalar(0);        // F = f + lambda * penalty
  Scalar projected_gradient_norm = Scalar(0);  // |G_lambda| with the steps used: the stationarity measure
  std::int64_t environment_steps = 0;  // environment steps taken since init(), this step's included
  std::int64_t model_generation = 0;   // models swapped in since init() (swap_model): the model it ran on

  // The fields a firmware reads, with their names and meanings, v(field, name, meaning), in the C
  // interface's order (integers, scalars, flags: no inner padding): the code generator writes the
  // C report struct and its copy from this list. penalty: what the solver's p is; own(v) visits
  // the solver's own scalars.
  template <class Visitor, class Own>
  void visit_fields(Visitor& v, const char* penalty_meaning, Own&& own) const {
    v(iteration, "iteration", "k of the iterate the numbers describe");
    v(this->inner_steps, "inner_steps", "oracle steps taken (a game: per player, the larger)");
    v(environment_steps, "environment_steps", "environment steps since init, this step's included");
    v(max_sweeps_hit, "max_sweeps_hit", "evaluations stopped at max_sweeps (0 with LU)");
    v(this->penalty_growths, "penalty_growths", "tolerance mode: growths of lambda since init");
    v(this->penalty_backoffs, "penalty_backoffs", "tolerance mode: back-offs since init (each halves the steps)");
    v(model_generation, "model_generation", "models swapped in since init (refreshes): the model it ran on");
    v(upper_objective, "upper_objective", "f at the iterate");
    v(penalty, "penalty", penalty_meaning);
    v(objective, "objective", "f + lambda * penalty");
    v(this->penalty_constant, "penalty_constant", "lambda of this step");
    v(this->step_x, "step_x", "the step size of x used");
    v(projected_gradient_norm, "projected_gradient_norm", "|G|, the projected gradient's norm");
    v(this->oracle_gap, "oracle_gap", "certified bound on the oracle policy's own gap");
    v(this->gap_bound, "gap_bound", "certified bound on the iterate's lower-level gap");
    v(this->gap_estimate, "gap_estimate", "the gap the penalty schedule compared with its tolerance");
    v(this->gap_target, "gap_target", "tolerance mode: the gap the schedule works toward (the continuation's)");
    own(v);
    v(this->tolerance_met, "tolerance_met", "tolerance mode and gap_bound <= the tolerance");
    v(this->inner_converged, "inner_converged", "the oracle stopped on its target");
    v(this->converged, "converged", "the verdict: tolerances met over the window (solve's converged)");
  }
};

// The step in progress's fields every penalty solver has; each solver's StepInProgress adds its own.
template <typename Scalar>
struct StepProgress {
  StepPart next = StepPart::begin;  // begin: no step in progress
  std::int64_t slice = 0;           // slices run of this step
  int batch_step = 0;               // sampled oracle: policy-gradient steps taken of T
  bool batch_started = false;       // the current batch has been checked and its sums cleared
  bool sampled = false;
  // Compute the certificate (exact tolerance mode, or the first slice had a report; sampled mode:
  // the report's exact diagnostics).
  bool certified = false;
  std::int64_t sweeps_hit = 0;  // max_sweeps_hit_total(ws_) when the step began
  std::int64_t steps = 0;       // environment steps of this step
  Scalar lambda = Scalar(0), f = Scalar(0);
};

// A step's numbers at its commit, as the solver formed them.
template <typename Scalar>
struct StepNumbers {
  Scalar squared_gradient_norm = Scalar(0);  // |G|^2, summed over the blocks
  Scalar penalty = Scalar(0);                // p (psi) the update used
  Scalar oracle_gap = Scalar(0);             // the oracle's certified gap (0 when not certified)
  Scalar gap_bound = Scalar(0);              // certified bound on the iterate's lower-level gap
  Scalar measured_gap = Scalar(0);           // what the schedule compares with epsilon
  Scalar alpha_x = Scalar(0);
  OracleResult oracle{};
};

template <class Derived, class Problem, class SettingsT, class ReportT, EvaluationMethod Method,
          GradientSources Sources>
class PenaltySolverCore {
 public:
  static constexpr bool kSampled = Sources == GradientSources::exact_and_sampled;
  using Scalar = typename Problem::Scalar;
  static constexpr int S = Problem::kStates;
  using Params = typename Problem::Params;
  using Settings = SettingsT;
  using Report = ReportT;
  using Workspace = EvaluationWorkspace<Scalar, S, Method>;

  // One outer iteration: a fresh step, all its slices (a step in progress is abandoned first).
  // On error the iterates, the oracles' warm starts, the schedule, the counts (and in sampled mode
  // the Rng) are unchanged; count_overflow when a count has no room for another step.
  Status step(Report* report = nullptr) { return step_by_slices(self(), report); }

  // The next slice of the step in progress, or the first slice of a new step
  // (solver/step_slices.hpp). max_rollouts >= 1 (else bad_setting, nothing changed): the most
  // rollouts of a sampled batch one slice runs. report: filled by the slice that completes the
  // step; whether the step computes its diagnostics (the certificate; in sampled mode the exact
  // evaluations) is decided by its first slice, as step(report) decides it. On error the step in
  // progress is abandoned and the last completed step is intact.
  Status step_slice(int max_rollouts, SliceResult& out, Report* report = nullptr) {
    return run_slice(self(), self().part_, problem_ != nullptr, max_rollouts, out, report);
  }
  bool step_in_progress() const { return self().part_.slice > 0; }

  // `iterations` steps (the caller's bound); stops at the first error. `last` gets the last report.
  Status run(std::int64_t iterations, Report* last = nullptr) { return run_steps(self(), iterations, last); }

  // Steps until an outcome other than step_cap holds (SolveOutcome), at most max_steps (>= 0, else
  // bad_setting). The outcome is judged before each step too, so a solver already converged takes
  // no step. Stops at the first error (the steps before it stay done; result then holds them).
  // `last` gets the last step's report (untouched when no step ran).
  Status solve(std::int64_t max_steps, SolveResult& result, Report* last = nullptr) {
    if (max_steps < 0) return Status::bad_setting;
    if (problem_ == nullptr) return Status::not_initialized;
    SolveResult r;
    bool oracle_capped = false;
    for (;;) {
      if (verdict_outcome(r.outcome)) break;
      if (r.steps >= max_steps) {
        r.outcome = oracle_capped ? SolveOutcome::oracle_cap : SolveOutcome::step_cap;
        break;
      }
      const Status st = step(last);
      if (st != Status::ok) {
        result = r;
        return st;
      }
      ++r.steps;
      oracle_capped = last_oracle_capped_;
    }
    result = r;
    return Status::ok;
  }

  // Hands the solver a new model between steps: `data` replaces the problem's (`problem` must be
  // the solver's own, else bad_setting) as problem.init(data) would, e.g. a transition array a
  // TransitionEstimate wrote (estimate/transition_estimate.hpp). Validated in full on a copy of
  // the problem, with the current x in the new box; on error nothing changed, the problem
  // included. On success a step in progress is abandoned (it read the old model); x, the
  // lower-level iterates and the oracles' warm starts are kept, so the solve goes on warm; the
  // schedule's window, best gap and verdict start again (PenaltySchedule::model_changed: lambda
  // and the step scale are kept), and model_generation() counts the swap. Work: the problem's
  // init(), O(its arrays); the arrays stay the caller's (unchanged while the solver uses them).
  // (A template so that a problem type without Data has no swap_model, and nothing else changes.)
  template <class P = Problem>
  Status swap_model(P& problem, const typename P::Data& data) {
    static_assert(std::is_same<P, Problem>::value, "the solver's own problem type");
    static_assert(sizeof(Problem) <= 1024, "swap_model copies the problem on the stack: a view of pointers");
    if (problem_ == nullptr) return Status::not_initialized;
    if (&problem != problem_) return Status::bad_setting;
    if (counts_.model_generation == StepCounts::kMax) return Status::count_overflow;
    Problem candidate = problem;
    if (Status st = candidate.init(data); st != Status::ok) return st;
    if (Status st = candidate.validate_parameters(x_); st != Status::ok) return st;
    problem = candidate;
    self().abandon_step();
    schedule_.model_changed(settings_);
    ++counts_.model_generation;
    return Status::ok;
  }
  // swap_model for a new lower-level transition array alone (`transition`: the problem's
  // Data::transition layout), e.g. an estimate's mean: the problem validates only that array
  // (Problem::replace_transition, O(rows * S) instead of init()'s every array), and the rest is
  // swap_model's: on error nothing changed; on success a step in progress is abandoned, the solve
  // goes on warm, the verdict restarts and model_generation() counts it.
  template <class P = Problem>
  Status swap_transition(P& problem, const Scalar* transition) {
    static_assert(std::is_same<P, Problem>::value, "the solver's own problem type");
    if (problem_ == nullptr) return Status::not_initialized;
    if (&problem != problem_) return Status::bad_setting;
    if (counts_.model_generation == StepCounts::kMax) return Status::count_overflow;
    if (Status st = problem.replace_transition(transition); st != Status::ok) return st;
    self().abandon_step();
    schedule_.model_changed(settings_);
    ++counts_.model_generation;
    return Status::ok;
  }
  // Models swapped in since init() (a checkpoint carries it).
  std::int64_t model_generation() const { return counts_.model_generation; }
  // What a checkpoint records of the model: the problem's kind and the digest of its current data
  // (model_digest.hpp; zeros before init() and for a problem class without one).
  static constexpr ProblemKind problem_kind() { return detail::ProblemIdentity<Problem>::kind; }
  ModelDigest model_digest() const {
    return problem_ != nullptr ? detail::ProblemIdentity<Problem>::digest(*problem_) : ModelDigest{};
  }

  // lambda_k (tolerance mode: lambda of the next step, whatever k).
  Scalar penalty_constant(std::int64_t k) const { return schedule_.lambda(settings_, k); }
  // The verdict after the last step: the iterate is the answer (SolveOutcome::converged).
  bool converged() const { return schedule_.converged(settings_); }

  const Params& x() const { return x_; }
  std::int64_t iteration() const { return counts_.iteration; }
  const Settings& settings() const { return settings_; }
  const PenaltySchedule<Scalar>& schedule() const { return schedule_; }
  // Workspace of the policy evaluations (sweep settings live here in sweep mode).
  Workspace& evaluation_workspace() { return ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream (init() reseeds it
  // from settings.seed; save_checkpoint and restore_checkpoint carry both).
  std::int64_t environment_steps() const { return counts_.environment_steps; }
  Rng& rng() { return rng_; }
  const Rng& rng() const { return rng_; }
  bool initialized() const { return problem_ != nullptr; }
  // The problem the solver was init()'d with (null before).
  const Problem* problem() const { return problem_; }


 private:
  // Checkpoints (checkpoint.hpp, through CheckpointAccess): the state, i.e. every field that
  // carries over from one step() to the next, in image order (Derived::state_fields; not the
  // problem, not the per-step scratch); the settings an image must have been saved under, the
  // workspace's sweep settings included.
  friend struct CheckpointAccess;
  template <class Visitor>
  void visit_state(Visitor& v) {  // writes the state (restore): a step in progress is void
    Derived::state_fields(self(), v);
    self().abandon_step();
  }
  template <class Visitor>
  decltype(auto) visit_state(Visitor& v) const {
    return Derived::state_fields(self(), v);
  }
  template <class Visitor>
  void visit_settings(Visitor& v) const {
    settings_.visit(v);
    v(ws_, domain::any(), "workspace");  // its sweep settings (EvaluationMethod::sweeps)
  }

 protected:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }

  // init()'s shared part, once its checks passed: the problem, the settings, x, the counts, the
  // schedule and the random stream.
  void start(const Problem& problem, const Settings& settings, const Params& x0) {
    problem_ = &problem;
    settings_ = settings;
    x_ = x0;
    counts_ = StepCounts{};
    schedule_.reset(settings);
    rng_.reseed(settings.seed);
    last_oracle_capped_ = false;
  }

  // The first slice's shared part: room for a step, the workspace, the sweeps counter, the mode
  // and lambda_k.
  template <class Part>
  Status begin_step(Part& p) {
    if (Status st = counts_.room_for_step(); st != Status::ok) return st;
    if (Status st = detail::check_workspace(ws_); st != Status::ok) return st;
    p.sweeps_hit = max_sweeps_hit_total(ws_);
    p.sampled = kSampled && settings_.gradient == GradientMode::sampled;
    p.lambda = schedule_.lambda(settings_, counts_.iteration);
    return Status::ok;
  }

  // The commit's shared part. Checks that every number the report would return is finite
  // (numerical_failure) and that the counts have room (count_overflow); only then commits x,
  // commit_iterates() (the solver's own iterates, warm starts and random stream), the counts and
  // the schedule, and fills the report's shared part. On error nothing has changed.
  template <class Part, class CommitIterates>
  Status commit_step(const Part& p, const StepNumbers<Scalar>& n, Report* report, CommitIterates&& commit_iterates) {
    const Scalar objective = p.f + p.lambda * n.penalty;
    const Scalar gradient_norm = std::sqrt(n.squared_gradient_norm);
    // The schedule's next state, formed on a copy so that a refusal leaves it.
    PenaltySchedule<Scalar> schedule = schedule_;
    const bool certified_met = !p.sampled && settings_.tolerance_mode() && n.gap_bound <= settings_.gap_tolerance;
    const Scalar estimate =
        schedule.observe(settings_, counts_.iteration, n.measured_gap, gradient_norm, certified_met);
    if (!std::isfinite(n.squared_gradient_norm) || !std::isfinite(p.f) || !std::isfinite(n.penalty) ||
        !std::isfinite(objective) || !std::isfinite(n.oracle_gap) || !std::isfinite(n.gap_bound) ||
        !std::isfinite(estimate))
      return Status::numerical_failure;
    if (Status st = counts_.room_for(p.steps); st != Status::ok) return st;

    const std::int64_t k = counts_.iteration;
    detail::copy_matrix(x_, x_next_);
    commit_iterates();
    counts_.commit(p.steps);
    schedule_ = schedule;
    last_oracle_capped_ = !p.sampled && settings_.tolerance_mode() && !n.oracle.converged &&
                          n.oracle.steps >= schedule_.inner_steps_max(settings_);
    if (report != nullptr) {
      Report& r = *report;
      static_cast<ScheduleReport<Scalar>&>(r) =
          schedule_.describe(settings_, p.lambda, n.alpha_x, n.oracle, n.oracle_gap, n.gap_bound, estimate);
      r.max_sweeps_hit = max_sweeps_hit_total(ws_) - p.sweeps_hit;
      r.iteration = k;
      r.upper_objective = p.f;
      r.penalty = n.penalty;
      r.objective = objective;
      r.projected_gradient_norm = gradient_norm;
      r.environment_steps = counts_.environment_steps;
      r.model_generation = counts_.model_generation;
    }
    return Status::ok;
  }

  // Whether the state after the last step decides solve()'s outcome (other than the step cap).
  bool verdict_outcome(SolveOutcome& outcome) const {
    const Settings& s = settings_;
    if (schedule_.converged(s)) {
      outcome = SolveOutcome::converged;
      return true;
    }
    if (!schedule_.stationary(s)) return false;
    if (!s.tolerance_mode()) {
      if (s.penalty_ramp > 0 && counts_.iteration < s.penalty_ramp) return false;  // lambda still moves
      outcome = SolveOutcome::stalled;
      return true;
    }
    if (s.gradient == GradientMode::sampled) {
      outcome = SolveOutcome::stalled;
      return true;
    }
    if (schedule_.lambda(s, counts_.iteration) >= s.penalty_max) {
      outcome = SolveOutcome::penalty_cap;
      return true;
    }
    return false;
  }

  const Problem* problem_ = nullptr;
  Settings settings_{};
  StepCounts counts_{};
  PenaltySchedule<Scalar> schedule_{};
  Params x_ = Params::Zero();
  Params x_next_ = Params::Zero(), grad_x_ = Params::Zero();  // scratch of one step
  Workspace ws_{};
  // The random stream of sampled mode (state; kept by exact-only types too, so their images are
  // the same).
  Rng rng_{1u};
  bool last_oracle_capped_ = false;  // the last step's oracle ran to its cap without its target
};

}  // namespace pbrl
