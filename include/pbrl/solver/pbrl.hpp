#pragma once
// PBRL, the penalty-based bilevel RL gradient method (paper, Algorithm 1), for a problem of
// pbrl/model/problem.hpp: per step, T oracle steps on M(x_k) give pi-hat_k, then a projected gradient
// step on f + lambda_k * p (value or Bellman penalty) with separate step sizes for x and y.
// The object is the whole state (sizeof is its RAM; it points at nothing it does not own but the
// problem). step() does one bounded iteration: T oracle steps, T + 3 policy evaluations (one more
// for the Bellman occupancy), no other loop that depends on data. lambda_k, the steps and T follow
// the penalty schedule (solver/penalty_schedule.hpp); in tolerance mode T <= inner_steps_max and
// the report's gap_bound is a certified upper bound on the iterate's lower-level gap.
// step_slice() runs a step in parts (solver/step_slices.hpp) with the same iterates bit for bit.
// Sampled mode (settings.gradient = sampled): (T + 2)*B*H environment steps a step; it requires
// OracleKind::policy_gradient and the problem's sample_vjp, else init() returns bad_setting. A
// step that fails leaves the Rng and the step count unchanged.
// How a step and sampled mode work: docs/algorithm.md#pbrl.

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/penalty/bellman.hpp"
#include "pbrl/penalty/value.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/sampling/detail/estimators.hpp"
#include "pbrl/solver/detail/oracle_steps.hpp"
#include "pbrl/solver/penalty_schedule.hpp"
#include "pbrl/solver/detail/projected_step.hpp"
#include "pbrl/solver/settings.hpp"
#include "pbrl/solver/solver_core.hpp"
#include "pbrl/solver/step_slices.hpp"

#include <cstdint>

namespace pbrl {

/// Pbrl's settings: the shared penalty-solver settings (solver/settings.hpp), the penalty and
/// alpha_y.
template <typename Scalar>
struct PbrlSettings : PenaltySolverSettings<Scalar> {
  /// The penalty p: value or Bellman.
  PenaltyKind penalty_kind = PenaltyKind::value;
  Scalar step_y = Scalar(0.1);                    ///< alpha for y (finite, > 0)

  /// Each field once, with its domain and its name (visitor: v(field, Domain, name)).
  template <class Visitor>
  void visit(Visitor& v) const {
    PenaltySolverSettings<Scalar>::visit(v);
    v(penalty_kind, domain::enumerator(PenaltyKind::bellman), "penalty_kind");
    v(step_y, domain::step_size(), "step_y");
  }
};

/// What one Pbrl step reports. The shared fields (solver/solver_core.hpp) describe (x_k, y_k):
/// f(x_k, y_k), p(x_k, y_k) with pi-hat_k, F, |G_lambda(x_k, y_k)|; the schedule's part (lambda,
/// inner steps, the oracle's gap, the certified gap bound, whether the tolerance holds, the
/// verdict) is ScheduleReport's (solver/penalty_schedule.hpp); evaluations stopped at max_sweeps
/// are EvaluationOutcome's.
template <typename Scalar>
struct PbrlReport : PenaltySolverReport<Scalar> {
  Scalar lower_gap = Scalar(0);  ///< V^{pi-hat_k}(rho) - V^{pi_y_k}(rho) on M(x_k)

  /// Every field a firmware reads (PenaltySolverReport::visit_fields).
  template <class Visitor>
  void visit(Visitor& v) const {
    this->visit_fields(v, "p, the penalty", [this](Visitor& w) {
      w(lower_gap, "lower_gap", "V(rho) of pi-hat minus V(rho) of the iterate's policy");
    });
  }
};

/// Checks Pbrl's settings: every field's domain and what relates fields (the policy sets are
/// checked by init(), against the action count).
/// @return ok, bad_step_size or bad_setting.
template <typename Scalar>
Status validate(const PbrlSettings<Scalar>& s, int actions) {
  (void)actions;
  if (Status st = check_domains(s); st != Status::ok) return st;
  return validate(static_cast<const PenaltySolverSettings<Scalar>&>(s));
}

/// PBRL, the penalty-based bilevel RL gradient method (paper, Algorithm 1), for a problem of
/// problem.hpp. Per step: T oracle steps on M(x_k) give pi-hat_k, then a projected gradient step
/// on f + lambda_k * p (value or Bellman penalty) with separate step sizes for x and y.
/// The object is the whole state (sizeof is its RAM; it points at nothing it does not own but the
/// problem). step() does one bounded iteration; the stepping, the accessors and solve() are
/// PenaltySolverCore's. More: the comment atop solver/pbrl.hpp, `docs/algorithm.md#pbrl`.
/// @tparam Problem a class of the problem interface (problem.hpp)
/// @tparam Method how policies are evaluated (direct LU or sweeps)
/// @tparam Sources exact_and_sampled, or exact for a type without sampled mode
template <class Problem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class Pbrl : public PenaltySolverCore<Pbrl<Problem, Method, Sources>, Problem, PbrlSettings<typename Problem::Scalar>,
                                      PbrlReport<typename Problem::Scalar>, Method, Sources> {
  using Core = PenaltySolverCore<Pbrl, Problem, PbrlSettings<typename Problem::Scalar>,
                                 PbrlReport<typename Problem::Scalar>, Method, Sources>;
  friend Core;

 public:
  /// Whether the type carries sampled mode.
  using Core::kSampled;
  /// The problem's floating-point type.
  using typename Core::Scalar;
  /// The number of states.
  using Core::S;
  /// The number of actions.
  static constexpr int A = Problem::kActions;
  /// The upper-level parameters x.
  using typename Core::Params;
  /// An S x A matrix: y, a policy.
  using Matrix = StateActionMatrix<Scalar, S, A>;
  /// PbrlSettings of the problem's Scalar.
  using typename Core::Settings;
  /// PbrlReport of the problem's Scalar.
  using typename Core::Report;
  /// The policy evaluations' workspace.
  using typename Core::Workspace;

  /// Starts a solve at (x0, y0): validates everything, then sets the iterates, the oracle's warm
  /// start, the counts, the schedule and the random stream (from settings.seed).
  /// @param problem the problem, init()'d; the solver keeps a pointer to it (it must outlive the
  ///        solver's use)
  /// @param settings the settings (validate(PbrlSettings, int))
  /// @param x0 the first x, in the problem's box
  /// @param y0 the first y, in settings.policy's set
  /// @return ok; bad_setting or bad_step_size (settings, policy sets; sampled mode without
  ///         OracleKind::policy_gradient, without the problem's sample_vjp or in an exact-only
  ///         type); not_initialized, not_finite or out_of_bounds (x0, the problem);
  ///         not_finite or bad_policy (y0). On error the solver keeps its previous state.
  Status init(const Problem& problem, const Settings& settings, const Params& x0, const Matrix& y0) {
    if (Status st = validate(settings, A); st != Status::ok) return st;
    if (Status st = validate<Scalar, A>(settings.oracle_policy); st != Status::ok) return st;
    if (Status st = detail::validate_start(problem, x0, settings.policy, y0); st != Status::ok) return st;
    if (settings.gradient == GradientMode::sampled && (!kSampled || !has_sample_vjp<Problem>::value))
      return Status::bad_setting;
    this->start(problem, settings, x0);
    y_ = y0;
    initial_oracle_policy<Scalar, S, A>(settings.policy, settings.oracle, settings.oracle_policy, y_, pi_hat_,
                                        log_pi_hat_);
    oracle_value_.setZero();
    start_warm_.setZero();
    eval_y_ = eval_hat_ = eval_upper_ = Evaluation<Scalar, S, A>{};
    start_warm_kept_.setZero();
    warm_y_ = warm_hat_ = warm_upper_ = EvaluationWarmStart<Scalar, kWarm>{};
    abandon_step();
    return Status::ok;
  }

  // step(), step_slice(), run(), solve() and the accessors of x, the counts, the settings, the
  // schedule, the workspace and the Rng are the core's (solver/solver_core.hpp).

  /// Drops the step in progress, if any: the next slice begins a new step from the last completed
  /// one (sweeps mode: with its evaluations' warm starts).
  void abandon_step() {
    part_ = StepInProgress{};
    if constexpr (Method == EvaluationMethod::sweeps) {
      start_warm_ = start_warm_kept_;
      warm_y_.put_back(eval_y_);
      warm_hat_.put_back(eval_hat_);
      warm_upper_.put_back(eval_upper_);
    }
  }

  /// The lower-level parameters y_k.
  const Matrix& y() const { return y_; }
  const Matrix& oracle_policy() const { return pi_hat_; }  ///< pi-hat, the oracle's warm start
  /// Writes pi_y of the current y into pi.
  void policy(Matrix& pi) const { policy_from_parameters<Scalar, S, A>(settings_.policy.parameterization, y_, pi); }

 private:
  // Checkpoints (checkpoint.hpp, through CheckpointAccess): the type tag; the state and settings
  // are the core's hooks (visit_state, visit_settings) over state_fields below.
  friend struct CheckpointAccess;
  static constexpr CheckpointTag checkpoint_tag() {
    return {CheckpointSolver::pbrl, sizeof(Scalar), Method, S, A, 0, Problem::kParams};
  }
  // restore_checkpoint's last check, on copies decoded from the image's payload (whose numbers
  // are known finite): a state this solver could have written at iteration `sequence`. x in the
  // problem's box, y in its policy set, pi-hat a policy, the schedule's state consistent.
  Status validate_checkpoint_state(const unsigned char* payload, std::uint64_t sequence) const {
    return detail::validate_penalty_solver_state(*this, payload, sequence, problem_, settings_, counts_.iteration,
                                                 counts_.model_generation, schedule_, x_, detail::PlayerStateFields<Matrix>{y_, pi_hat_});
  }

  template <class Solver, class Part, class R>
  friend Status run_slice(Solver&, Part&, bool, int, SliceResult&, R*);
  template <class Self, class Visitor>
  static decltype(auto) state_fields(Self& self, Visitor& v) {
    return v(self.counts_.iteration, self.counts_.environment_steps, self.counts_.model_generation, self.rng_, self.schedule_, self.x_, self.y_,
             self.log_pi_hat_, self.pi_hat_, self.oracle_value_, warm_start<Method>(self.start_warm_kept_),
             warm_start<Method>(self.warm_y_), warm_start<Method>(self.warm_hat_),
             warm_start<Method>(self.warm_upper_));
  }

  using Core::counts_;
  using Core::grad_x_;
  using Core::problem_;
  using Core::rng_;
  using Core::schedule_;
  using Core::settings_;
  using Core::ws_;
  using Core::x_;
  using Core::x_next_;

  // The step in progress: the part its next slice runs and step()'s locals beside the shared ones
  // (StepProgress). Exact mode: certified computes the certificate (tolerance mode, or the first
  // slice had a report); sampled mode: the report's exact diagnostics (the first slice had a report).
  enum class Batch : unsigned char { oracle, penalty };  // sampled mode's batches, in order
  struct StepInProgress : StepProgress<Scalar> {
    int evaluations = 0;          // evaluations done: pi_y, pi-hat (sweeps, Bellman: the start occupancy)
    Batch batch = Batch::oracle;  // sampled mode: the batch the next rollouts belong to
    Scalar p = Scalar(0), lower_gap = Scalar(0), oracle_gap = Scalar(0), gap_bound = Scalar(0);
    OracleRun run{};
    Mdp<Scalar, S, A> mdp{};  // M(x_k), a view of model_
  };

  // pi_y_'s logs, formed beside it (policy_from_parameters) in an exact step with softmax
  // parameters; none for direct ones (their entries may be 0) or in a sampled step (whose
  // estimators keep per-state h of their own).
  Matrix* logs_of_pi_y() {
    return settings_.policy.parameterization == Parameterization::softmax && !part_.sampled ? &log_pi_y_ : nullptr;
  }

  // One part of the step, the one part_.next names; sets the part after it. done: the step is committed.
  Status run_part(int max_rollouts, Report* report, bool& done) {
    StepInProgress& p = part_;
    const Problem& problem = *problem_;
    switch (p.next) {
      case StepPart::begin: {
        if (Status st = this->begin_step(p); st != Status::ok) return st;
        forget_factorization(ws_);  // factors of the last step's M(x) are no chain of this one's
        if (Status st = problem.build(x_, model_, p.mdp); st != Status::ok) return st;
        policy_from_parameters<Scalar, S, A>(settings_.policy.parameterization, y_, pi_y_, logs_of_pi_y());
        // The oracle runs on copies (a failure leaves the warm start intact).
        detail::copy_matrix(log_pi_next_, log_pi_hat_);
        detail::copy_matrix(pi_next_, pi_hat_);
        detail::copy_matrix(value_next_, oracle_value_);
        p.certified = report != nullptr || (!p.sampled && settings_.tolerance_mode());
        if constexpr (kSampled)
          if (p.sampled) sampled_.rng_next = rng_;
        p.next = p.sampled ? StepPart::rollouts : StepPart::oracle_step;
        return Status::ok;
      }
      case StepPart::oracle_step:
        // pi-hat was checked by init(), the last oracle run or restore_checkpoint().
        if (Status st = detail::oracle_step<false>(this->oracle_spec(schedule_.oracle_target(settings_)), p.mdp, ws_,
                                                   weights_, {eval_hat_, log_pi_next_, pi_next_, value_next_}, p.run);
            st != Status::ok)
          return st;
        if (p.run.done) p.next = StepPart::evaluation;
        return Status::ok;
      case StepPart::evaluation:
        return evaluation();
      case StepPart::rollouts:
        return rollouts(max_rollouts);
      case StepPart::upper:
        // f and its gradient; exact mode: pi-hat is evaluated after f (which may evaluate on its
        // own MDP) so that the Bellman start occupancy can reuse its factorization.
        // Exact mode: pi_y's evaluation on M(x_k) was the last one, its factors reusable by f's.
        if (Status st = upper_on_chain(problem, p.sampled ? nullptr : &eval_y_, pi_y_, model_, ws_, eval_upper_,
                                       p.f, grad_x_, grad_pi_);
            st != Status::ok)
          return st;
        if (p.sampled) {
          add_sampled_penalty();
          p.next = StepPart::projection;
        } else {
          p.next = StepPart::evaluation;
        }
        return Status::ok;
      case StepPart::penalty:
        if (settings_.penalty_kind == PenaltyKind::value)
          p.p = value_penalty(problem, model_, p.mdp, PolicyY{pi_y_, eval_y_, logs_of_pi_y()},
                              PolicyHat{pi_next_, eval_hat_}, p.lambda, weights_, {grad_x_, grad_pi_});
        else
          p.p = bellman_penalty(problem, model_, p.mdp, PolicyY{pi_y_, logs_of_pi_y()}, PolicyHat{pi_next_, eval_hat_},
                                start_occupancy_, p.lambda, weights_, {grad_x_, grad_pi_});
        // Exact mode: eval_y_ is pi_y's, on M(x_k).
        lower_step_direction<Scalar, S, A>(settings_, pi_y_, grad_pi_, eval_y_.occupancy, grad_y_);
        p.next = StepPart::projection;
        return Status::ok;
      case StepPart::projection:
        if (Status st = project_and_commit(report); st != Status::ok) return st;
        done = true;
        return Status::ok;
      case StepPart::lower_model:
        break;  // a zero-sum part
    }
    return Status::bad_setting;  // unreachable: no part leads to another solver's part
  }

  // The step's evaluations on M(x_k), one per slice: pi_y, then pi-hat (lower_gap, and if
  // certified its certified gap), then for the Bellman penalty the start occupancy. Direct mode
  // solves the occupancy in pi-hat's slice with pi-hat's factorization (a few triangular solves),
  // sweeps mode in a slice of its own (a sweep solve, as long as half an evaluation).
  Status evaluation() {
    StepInProgress& p = part_;
    const bool bellman = !p.sampled && settings_.penalty_kind == PenaltyKind::bellman;
    constexpr bool direct = Method == EvaluationMethod::direct;
    switch (p.evaluations) {
      case 0:
        if (Status st = detail::evaluate_formed_policy(p.mdp, pi_y_, ws_, eval_y_, logs_of_pi_y()); st != Status::ok)
          return st;
        p.next = p.sampled ? StepPart::evaluation : StepPart::upper;
        break;
      case 1: {
        // pi-hat's Q only for the certificate and the Bellman penalty: the value penalty reads V and d.
        const bool with_q = p.certified || bellman;
        if (Status st = detail::evaluate_formed_policy(p.mdp, pi_next_, ws_, eval_hat_, &log_pi_next_, with_q);
            st != Status::ok)
          return st;
        // The certified gap of y_k: pi-hat's own gap plus how far pi_y trails pi-hat, with the
        // rounding of both evaluations (oracle/optimality_gap.hpp).
        p.lower_gap = eval_hat_.value_rho - eval_y_.value_rho;
        if (p.certified) {
          p.oracle_gap = optimality_gap_bound(p.mdp, eval_hat_);
          p.gap_bound = lower_level_gap_bound(p.mdp, p.oracle_gap, eval_hat_, pi_y_, eval_y_, logs_of_pi_y());
        }
        if (bellman && direct)
          if (Status st = start_occupancy(true); st != Status::ok) return st;
        p.next = p.sampled ? StepPart::upper : bellman && !direct ? StepPart::evaluation : StepPart::penalty;
        break;
      }
      default:
        if (Status st = start_occupancy(false); st != Status::ok) return st;
        p.next = StepPart::penalty;
        break;
    }
    ++p.evaluations;
    return Status::ok;
  }
  // The Bellman penalty's mu' (start_occupancy_; start_warm_ is the warm start of sweeps).
  Status start_occupancy(bool factors_current) {
    return occupancy_from_start(part_.mdp, {pi_y_, pi_next_}, ws_, start_warm_, start_occupancy_, factors_current);
  }

  // The projected step, then the core's checks, commit and report (commit_step).
  Status project_and_commit(Report* report) {
    const StepInProgress& p = part_;
    StepNumbers<Scalar> n;
    n.alpha_x = schedule_.step(settings_, settings_.step_x);
    const Scalar alpha_y = schedule_.step(settings_, settings_.step_y);
    const Scalar y_part = lower_step<Scalar, S, A>(settings_, y_, alpha_y, pi_y_, grad_pi_, grad_y_, y_next_);
    n.squared_gradient_norm = parameter_step(*problem_, x_, n.alpha_x, grad_x_, x_next_) + y_part;
    n.penalty = p.p;
    n.oracle_gap = p.oracle_gap;
    n.gap_bound = p.gap_bound;
    // Exact mode: the certified bound; sampled mode: the sampled p.
    n.measured_gap = p.sampled ? p.p : n.gap_bound;
    // No certificate from samples: the sampled oracle has no target to meet (converged false).
    n.oracle = p.sampled ? OracleResult{schedule_.inner_steps_max(settings_), false} : p.run.result;
    const Status st = this->commit_step(p, n, report, [&] {
      detail::copy_matrix(y_, y_next_);
      detail::copy_matrix(log_pi_hat_, log_pi_next_);
      detail::copy_matrix(pi_hat_, pi_next_);
      detail::copy_matrix(oracle_value_, value_next_);
      if constexpr (kSampled)
        if (p.sampled) rng_ = sampled_.rng_next;
      if constexpr (Method == EvaluationMethod::sweeps) {
        start_warm_kept_ = start_warm_;
        warm_y_.keep(eval_y_);
        warm_hat_.keep(eval_hat_);
        warm_upper_.keep(eval_upper_);
      }
    });
    if (st == Status::ok && report != nullptr) report->lower_gap = p.lower_gap;
    return st;
  }

  // Sampled mode's rollouts, at most max_rollouts of one batch: the T sampled policy-gradient
  // steps of the oracle (each a batch of the current pi-hat, then its ascent update), then the two
  // batches of the sampled penalty. weights_ carries the oracle's sampled gradient.
  Status rollouts(int max_rollouts) {
    if constexpr (!kSampled || !has_sample_vjp<Problem>::value) {
      (void)max_rollouts;
      return Status::bad_setting;  // init() refuses this already
    } else {
      StepInProgress& p = part_;
      const SamplingSettings& sampling = settings_.sampling;
      if (p.batch == Batch::oracle && p.batch_step >= schedule_.inner_steps_max(settings_))  // done (or T = 0)
        p.batch = Batch::penalty;
      if (p.batch == Batch::penalty) return penalty_rollouts(max_rollouts);
      const PolicySet<Scalar>& set = settings_.oracle_policy;
      auto& batch = sampled_.oracle;
      if (!p.batch_started) {
        if (Status st = batch.check(p.mdp, set.parameterization, pi_next_, sampling); st != Status::ok) return st;
        batch.start(weights_);
        p.batch_started = true;
      }
      const int left = sampling.batch - batch.done;
      batch.rollouts(p.mdp, set.parameterization, pi_next_, sampling, left < max_rollouts ? left : max_rollouts,
                     sampled_.rng_next, sampled_.trajectory, weights_);
      if (batch.done < sampling.batch) return Status::ok;
      Scalar value(0);
      if (Status st = batch.finish(sampling, weights_, value); st != Status::ok) return st;
      p.steps += batch_steps(sampling);
      p.batch_started = false;
      ++p.batch_step;
      return policy_ascent_update<Scalar, S, A>(set, settings_.oracle_step, weights_, {log_pi_next_, pi_next_});
    }
  }

  // The sampled penalty's two batches (sampled_penalty's parts), before
  // f (upper() may reuse the model storage); then the report's exact evaluations, if any.
  Status penalty_rollouts(int max_rollouts) {
    if constexpr (kSampled && has_sample_vjp<Problem>::value) {
      StepInProgress& p = part_;
      const SamplingSettings& sampling = settings_.sampling;
      const Parameterization param = settings_.policy.parameterization;
      auto& batches = sampled_.batches;
      if (!p.batch_started) {
        if (Status st = batches.check(p.mdp, param, pi_y_, pi_next_, sampling); st != Status::ok)
          return st;
        batches.start(settings_.penalty_kind, sampled_.rng_next, sampled_.penalty);
        p.batch_started = true;
      }
      const int left = batches.left(sampling);
      batches.rollouts(*problem_, model_, p.mdp, param, pi_y_, pi_next_, sampling,
                       left < max_rollouts ? left : max_rollouts, sampled_.trajectory, sampled_.penalty);
      if (batches.done2 < sampling.batch) return Status::ok;
      if (Status st = batches.finish(p.mdp, param, pi_y_, sampling, sampled_.penalty, sampled_.rng_next);
          st != Status::ok)
        return st;
      p.steps += 2 * batch_steps(sampling);
      p.batch_started = false;
      p.next = p.certified ? StepPart::evaluation : StepPart::upper;
    }
    (void)max_rollouts;
    return Status::ok;
  }

  // Sampled mode, after f: grad F = grad f + lambda * (the sampled p's gradients).
  void add_sampled_penalty() {
    if constexpr (kSampled && has_sample_vjp<Problem>::value) {
      chain_policy_gradient<Scalar, S, A>(settings_.policy.parameterization, pi_y_, grad_pi_, grad_y_);
      grad_x_ += part_.lambda * sampled_.penalty.grad_x;
      grad_y_ += part_.lambda * sampled_.penalty.grad_y;
      part_.p = sampled_.penalty.value;
    }
  }

  // Iterates and the oracle's warm start (x is the core's).
  Matrix y_ = Matrix::Zero();
  Matrix log_pi_hat_ = Matrix::Zero(), pi_hat_ = Matrix::Zero();
  StateVector<Scalar, S> oracle_value_ = StateVector<Scalar, S>::Zero();
  // Scratch of one step.
  Matrix y_next_ = Matrix::Zero(), log_pi_next_ = Matrix::Zero(), pi_next_ = Matrix::Zero();
  Matrix pi_y_ = Matrix::Zero(), log_pi_y_ = Matrix::Zero(), grad_pi_ = Matrix::Zero(), grad_y_ = Matrix::Zero();
  Matrix weights_ = Matrix::Zero(), start_occupancy_ = Matrix::Zero();
  StateVector<Scalar, S> value_next_ = StateVector<Scalar, S>::Zero();
  StateVector<Scalar, S> start_warm_ = StateVector<Scalar, S>::Zero();
  typename Problem::Model model_{};
  Evaluation<Scalar, S, A> eval_y_{}, eval_hat_{}, eval_upper_{};
  // Sweeps mode: the evaluations' warm starts of the last completed step (checkpoint.hpp).
  static constexpr int kWarm = Method == EvaluationMethod::sweeps ? S : 0;
  StateVector<Scalar, kWarm> start_warm_kept_ = StateVector<Scalar, kWarm>::Zero();
  EvaluationWarmStart<Scalar, kWarm> warm_y_{}, warm_hat_{}, warm_upper_{};
  // Sampled mode's scratch (none in an exact-only type); the random stream is the core's.
  struct SampledState {
    Rng rng_next{1u};
    Trajectory<Scalar, kMaxHorizon> trajectory{};
    SampledPenalty<Problem> penalty{};
    detail::PolicyGradientBatch<Scalar, S, A, kMaxHorizon> oracle{};
    detail::PenaltyBatches<Problem, kMaxHorizon> batches{};
  };
  SampledScratch<Sources, SampledState> sampled_{};
  StepInProgress part_{};
};

}  // namespace pbrl
