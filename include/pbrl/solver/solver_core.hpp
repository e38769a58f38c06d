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

#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/detail/model_digest.hpp"
#include "pbrl/core/rng.hpp"
#include "pbrl/solver/penalty_schedule.hpp"
#include "pbrl/solver/detail/oracle_steps.hpp"
#include "pbrl/solver/detail/projected_step.hpp"
#include "pbrl/solver/detail/step_counts.hpp"
#include "pbrl/solver/settings.hpp"
#include "pbrl/solver/solve_outcome.hpp"
#include "pbrl/solver/step_slices.hpp"

#include <cmath>
#include <cstdint>

namespace pbrl {

/// What every penalty solver's report holds beside its own fields: the schedule's part
/// (ScheduleReport, the verdict included), the evaluations stopped at max_sweeps
/// (EvaluationOutcome) and the step's numbers. Every value of a report returned with ok is finite.
template <typename Scalar>
struct PenaltySolverReport : ScheduleReport<Scalar>, EvaluationOutcome {
  std::int64_t iteration = 0;          ///< k of the iterate the numbers describe
  Scalar upper_objective = Scalar(0);  ///< f at the iterate
  Scalar penalty = Scalar(0);          ///< the penalty p (PbrlZeroSum: psi) with the oracle's policies
  Scalar objective = Scalar(0);        ///< F = f + lambda * penalty
  Scalar projected_gradient_norm = Scalar(0);  ///< |G_lambda| with the steps used: the stationarity measure
  std::int64_t environment_steps = 0;  ///< environment steps taken since init(), this step's included
  std::int64_t model_generation = 0;   ///< models swapped in since init() (swap_model): the model it ran on

  /// The fields a firmware reads, with their names and meanings, v(field, name, meaning), in the C
  /// interface's order (integers, scalars, flags: no inner padding): the code generator writes the
  /// C report struct and its copy from this list. penalty_meaning: what the solver's p is; own(v)
  /// visits the solver's own scalars.
  template <class Visitor, class Own>
  void visit_fields(Visitor& v, const char* penalty_meaning, Own&& own) const {
    v(iteration, "iteration", "k of the iterate the numbers describe");
    v(this->inner_steps, "inner_steps", "oracle steps taken (a game: per player, the larger)");
    v(environment_steps, "environment_steps", "environment steps since init, this step's included");
    v(max_sweeps_hit, "max_sweeps_hit", "evaluations stopped at max_sweeps (0 with LU)");
    v(this->lambda_growths, "lambda_growths", "tolerance mode: growths of lambda since init");
    v(this->lambda_backoffs, "lambda_backoffs", "tolerance mode: back-offs since init (each halves the steps)");
    v(model_generation, "model_generation", "models swapped in since init (refreshes): the model it ran on");
    v(upper_objective, "upper_objective", "f at the iterate");
    v(penalty, "penalty", penalty_meaning);
    v(objective, "objective", "f + lambda * penalty");
    v(this->lambda, "lambda", "the penalty constant of this step");
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

/// @cond internal
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
/// @endcond

/// What the penalty solvers (Pbrl, PbrlZeroSum) share: stepping (step(), step_slice(), run(),
/// solve()), model swaps, and the accessors of x, the counts, the settings, the schedule, the
/// workspace and the random stream.
/// A solver derives from PenaltySolverCore<itself, ...> (CRTP) and adds init() and its own
/// iterates. Before a successful init() a call that would step or swap a model returns
/// not_initialized, and the accessors return the defaults.
template <class Derived, class Problem, class SettingsT, class ReportT, EvaluationMethod Method,
          GradientSources Sources>
class PenaltySolverCore {
 public:
  /// Whether the type carries sampled mode (GradientSources::exact_and_sampled).
  static constexpr bool kSampled = Sources == GradientSources::exact_and_sampled;
  /// The problem's floating-point type.
  using Scalar = typename Problem::Scalar;
  /// The number of states.
  static constexpr int S = Problem::kStates;
  /// The upper-level parameters x.
  using Params = typename Problem::Params;
  /// The solver's settings (PbrlSettings, PbrlZeroSumSettings).
  using Settings = SettingsT;
  /// The solver's step report (PbrlReport, PbrlZeroSumReport).
  using Report = ReportT;
  /// The policy evaluations' workspace (EvaluationMethod Method).
  using Workspace = EvaluationWorkspace<Scalar, S, Method>;

  /// One outer iteration: a fresh step, all its slices (a step in progress is abandoned first).
  /// @param report if not null, filled with the step's numbers (and the certificate's, which a
  ///        report asks for)
  /// @return ok; not_initialized; count_overflow when a count has no room for another step;
  ///         numerical_failure; bad_setting (the workspace's sweep settings); a status of the
  ///         problem's build() or upper(). On error the iterates, the oracles' warm starts, the
  ///         schedule, the counts (and in sampled mode the Rng) are unchanged.
  Status step(Report* report = nullptr) { return step_by_slices(self(), report); }

  /// The next slice of the step in progress, or the first slice of a new step
  /// (solver/step_slices.hpp): the same iterates as step(), bit for bit, whatever the slicing.
  /// @param max_rollouts >= 1 (else bad_setting, nothing changed): the most rollouts of a sampled
  ///        batch one slice runs
  /// @param out what the slice did (written on ok)
  /// @param report filled by the slice that completes the step; whether the step computes its
  ///        diagnostics (the certificate; in sampled mode the exact evaluations) is decided by its
  ///        first slice, as step(report) decides it
  /// @return ok, or step()'s statuses. On error the step in progress is abandoned and the last
  ///         completed step is intact.
  Status step_slice(int max_rollouts, SliceResult& out, Report* report = nullptr) {
    return run_slice(self(), self().part_, problem_ != nullptr, max_rollouts, out, report);
  }
  /// Whether a step has slices run but is not yet committed.
  bool step_in_progress() const { return self().part_.slice > 0; }

  /// `iterations` steps (the caller's bound, >= 0, else bad_setting); stops at the first error
  /// (the steps before it stay done). `last` gets the last report.
  /// @return ok, bad_setting, or the failed step's status.
  Status run(std::int64_t iterations, Report* last = nullptr) { return run_steps(self(), iterations, last); }

  /// Steps until an outcome other than step_cap holds (SolveOutcome), at most max_steps (>= 0,
  /// else bad_setting). The outcome is judged before each step too, so a solver already converged
  /// takes no step. Its worst case is max_steps times one step's.
  /// @param max_steps the most steps to take (>= 0)
  /// @param result the outcome and the steps taken
  /// @param last gets the last step's report (untouched when no step ran)
  /// @return ok with the outcome in result (an outcome, not an error); bad_setting (max_steps <
  ///         0) or not_initialized, with nothing changed; or the failed step's status: it stops at
  ///         the first error, the steps before it stay done and result holds them.
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

  /// Hands the solver a new model between steps: `data` replaces the problem's as
  /// problem.init(data) would, e.g. a transition array a TransitionEstimate wrote
  /// (estimate/transition_estimate.hpp).
  /// Validated in full on a copy of the problem, with the current x in the new box. On success a
  /// step in progress is abandoned (it read the old model); x, the lower-level iterates and the
  /// oracles' warm starts are kept, so the solve goes on warm; the schedule's window, best gap and
  /// verdict start again (PenaltySchedule::model_changed: lambda and the step scale are kept), and
  /// model_generation() counts the swap. Work: the problem's init(), O(its arrays); the arrays
  /// stay the caller's (unchanged while the solver uses them).
  /// (A template so that a problem type without Data has no swap_model, and nothing else changes.)
  /// @param problem the solver's own problem (else bad_setting)
  /// @param data the new data, as the problem's init() takes it
  /// @return ok; not_initialized; bad_setting; count_overflow; a status of problem.init(data) or
  ///         of validate_parameters(x) on the new problem (out_of_bounds: x is outside the new
  ///         box). On error nothing changed, the problem included.
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
  /// swap_model for a new lower-level transition array alone (`transition`: the problem's
  /// Data::transition layout), e.g. an estimate's mean: the problem validates only that array
  /// (Problem::replace_transition, O(rows * S) instead of init()'s every array), and the rest is
  /// swap_model's: on success a step in progress is abandoned, the solve goes on warm, the verdict
  /// restarts and model_generation() counts it.
  /// @return ok; not_initialized; bad_setting (not the solver's problem); count_overflow;
  ///         replace_transition's null_pointer, not_finite or bad_transition. On error nothing
  ///         changed.
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
  /// Models swapped in since init() (a checkpoint carries it).
  std::int64_t model_generation() const { return counts_.model_generation; }
  /// What a checkpoint records of the problem: its kind (model_digest.hpp).
  static constexpr ProblemKind problem_kind() { return detail::ProblemIdentity<Problem>::kind; }
  /// What a checkpoint records of the model: the digest of the problem's current data
  /// (model_digest.hpp; zeros before init() and for a problem class without one).
  ModelDigest model_digest() const {
    return problem_ != nullptr ? detail::ProblemIdentity<Problem>::digest(*problem_) : ModelDigest{};
  }

  /// lambda_k (tolerance mode: lambda of the next step, whatever k).
  Scalar lambda(std::int64_t k) const { return schedule_.lambda(settings_, k); }
  /// The verdict after the last step: the iterate is the answer (SolveOutcome::converged).
  bool converged() const { return schedule_.converged(settings_); }

  /// The upper-level iterate x_k.
  const Params& x() const { return x_; }
  /// k: the steps committed since init().
  std::int64_t iteration() const { return counts_.iteration; }
  /// The settings of init().
  const Settings& settings() const { return settings_; }
  /// The penalty schedule's state (lambda, growths, the verdict's counts).
  const PenaltySchedule<Scalar>& schedule() const { return schedule_; }
  /// Workspace of the policy evaluations (sweep settings live here in sweep mode).
  Workspace& evaluation_workspace() { return ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream (init() reseeds it
  // from settings.seed; save_checkpoint and restore_checkpoint carry both).
  /// Sampled mode: environment steps taken since init() (a checkpoint carries it).
  std::int64_t environment_steps() const { return counts_.environment_steps; }
  /// The random stream of sampled mode (init() reseeds it from settings.seed; a checkpoint
  /// carries it).
  Rng& rng() { return rng_; }
  /// The random stream of sampled mode, read-only.
  const Rng& rng() const { return rng_; }
  /// Whether init() has succeeded.
  bool initialized() const { return problem_ != nullptr; }
  /// The problem the solver was init()'d with (null before).
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
  /// @cond internal
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

  // An exact oracle run at the schedule's current step counts, toward `target` (the schedule's
  // oracle_target(), or a player's share of it).
  OracleSpec<Scalar> oracle_spec(Scalar target) const {
    return {settings_.oracle,
            settings_.oracle_policy,
            settings_.oracle_step,
            schedule_.inner_steps_min(settings_),
            schedule_.inner_steps_max(settings_),
            target};
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
      ScheduleReport<Scalar>& measured = r;
      measured = ScheduleReport<Scalar>{};
      measured.lambda = p.lambda;
      measured.step_x = n.alpha_x;
      measured.inner_steps = n.oracle.steps;
      measured.inner_converged = n.oracle.converged;
      measured.oracle_gap = n.oracle_gap;
      measured.gap_bound = n.gap_bound;
      measured.gap_estimate = estimate;
      schedule_.describe(settings_, measured);
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
      if (s.lambda_ramp > 0 && counts_.iteration < s.lambda_ramp) return false;  // lambda still moves
      outcome = SolveOutcome::stalled;
      return true;
    }
    if (s.gradient == GradientMode::sampled) {
      outcome = SolveOutcome::stalled;
      return true;
    }
    if (schedule_.lambda(s, counts_.iteration) >= s.lambda_max) {
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
  /// @endcond
};

}  // namespace pbrl
