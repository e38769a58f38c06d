#pragma once
// PBRL, the penalty-based bilevel RL gradient method (paper, Algorithm 1). One outer iteration:
//   1. run T oracle steps on M(x_k) from the last iteration's policy -> pi-hat_k
//   2. grad F = grad f(x_k, y_k) + lambda_k * grad p(x_k, y_k; pi-hat_k)   (value or Bellman p)
//   3. x_{k+1} = Proj_X(x_k - alpha_x grad_x F),  y_{k+1} = Proj_Y(y_k - alpha_y grad_y F)
// The solver object is the whole state: sizeof(Pbrl<...>) is the RAM it needs and it holds
// no pointer into memory it does not own except the problem. step() does exactly one bounded
// iteration: T oracle steps, T + 3 policy evaluations (one more for the Bellman occupancy), no
// other loop that depends on data. lambda_k, the steps and T follow the penalty schedule
// (solver/penalty_schedule.hpp): fixed, or adapted to a lower-level gap tolerance epsilon, where
// T is at most inner_steps_max (the worst case of one step) and the report's gap_bound is a
// certified upper bound on the iterate's lower-level gap V*(rho) - V^{pi_y}(rho).
//
// Sampled mode (settings.gradient = GradientMode::sampled; sampling/estimators.hpp): the lower
// level is learned from trajectories of the generative model (rho, P_x, the policies), as in the
// paper's experiments, and the step counts the environment steps it takes:
//   1. oracle: T sampled policy-gradient steps (OracleKind::policy_gradient is required: PMD and
//      soft value iteration need Q at every (s,a), which trajectories do not give), each from B
//      rollouts of horizon H of the current pi-hat: softmax logits (score function) or projected
//      direct probabilities (importance weights, bounded by 1/oracle_policy.floor: raise the
//      floor from its default 1e-6, e.g. to 1e-2, for a usable variance), as
//      settings.oracle_policy says; the same holds for a direct y (settings.policy.floor);
//   2. the penalty's p and gradients sampled from two batches (sampled_value_penalty or
//      sampled_bellman_penalty), with common random numbers unless settings.sampling says not;
//   3. f and its gradients stay the problem's exact, model-based upper(); no environment steps.
// Environment steps per step(): (T + 2) * B * H, exactly; Rng draws: (T + 2) * B * (2H + 1),
// or (T + 1) * B * (2H + 1) with common random numbers. The Rng lives in the solver (seeded by
// init() from settings.seed; a checkpoint carries it, checkpoint.hpp); a step that fails
// leaves it and the step count unchanged. The report's penalty and objective are the sampled
// p_hat and f + lambda*p_hat the update used; its lower_gap stays exact (two policy evaluations
// on M(x_k), done only when a report is asked for, and never part of the update). The problem
// must offer sample_vjp (problem.hpp), else init() returns bad_setting.

#include "pbrl/checkpoint.hpp"
#include "pbrl/evaluation.hpp"
#include "pbrl/penalty/bellman.hpp"
#include "pbrl/penalty/value.hpp"
#include "pbrl/policy.hpp"
#include "pbrl/sampling/estimators.hpp"
#include "pbrl/solver/oracle_steps.hpp"
#include "pbrl/solver/penalty_schedule.hpp"
#include "pbrl/solver/projected_step.hpp"
#include "pbrl/solver/settings.hpp"

#include <cstdint>

namespace pbrl {

// The shared penalty-solver settings (solver/settings.hpp), the penalty and alpha_y.
template <typename Scalar>
struct PbrlSettings : PenaltySolverSettings<Scalar> {
  PenaltyKind penalty = PenaltyKind::value;
  Scalar step_y = Scalar(0.1);         // alpha for y

  template <class Visitor>
  void visit(Visitor& v) const {
    PenaltySolverSettings<Scalar>::visit(v);
    v(penalty, domain::enumerator(PenaltyKind::bellman), "penalty");
    v(step_y, domain::step_size(), "step_y");
  }
};

// The schedule's part (lambda, inner steps, whether the oracle met its target, the oracle's gap, the
// certified gap bound, whether the tolerance holds) is ScheduleReport's (solver/penalty_schedule.hpp);
// evaluations stopped at max_sweeps are EvaluationOutcome's (evaluation.hpp).
template <typename Scalar>
struct PbrlReport : ScheduleReport<Scalar>, EvaluationOutcome {
  std::int64_t iteration = 0;          // k of the iterate (x_k, y_k) the numbers describe
  Scalar upper_objective = Scalar(0);  // f(x_k, y_k)
  Scalar penalty = Scalar(0);          // p(x_k, y_k) with pi-hat_k
  Scalar objective = Scalar(0);        // F = f + lambda*p
  Scalar projected_gradient_norm = Scalar(0);  // |G_lambda(x_k, y_k)| with the steps used
  Scalar lower_gap = Scalar(0);        // V^{pi-hat_k}(rho) - V^{pi_y_k}(rho) on M(x_k)
  std::int64_t environment_steps = 0;  // environment steps taken since init(), this step's included
};

template <typename Scalar>
Status validate(const PbrlSettings<Scalar>& s, int actions) {
  (void)actions;
  if (Status st = check_domains(s); st != Status::ok) return st;
  return validate(static_cast<const PenaltySolverSettings<Scalar>&>(s));
}

template <class Problem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class Pbrl {
 public:
  static constexpr bool kSampled = Sources == GradientSources::exact_and_sampled;
  using Scalar = typename Problem::Scalar;
  static constexpr int S = Problem::kStates;
  static constexpr int A = Problem::kActions;
  using Params = typename Problem::Params;
  using Matrix = StateActionMatrix<Scalar, S, A>;
  using Settings = PbrlSettings<Scalar>;
  using Report = PbrlReport<Scalar>;
  using Workspace = EvaluationWorkspace<Scalar, S, Method>;

  // Validates everything; on error the solver keeps its previous state.
  Status init(const Problem& problem, const Settings& settings, const Params& x0, const Matrix& y0) {
    if (Status st = validate(settings, A); st != Status::ok) return st;
    if (Status st = validate<Scalar, A>(settings.oracle_policy); st != Status::ok) return st;
    if (Status st = problem.validate_parameters(x0); st != Status::ok) return st;
    if (Status st = validate_parameters<Scalar, S, A>(settings.policy, y0); st != Status::ok) return st;
    if (settings.gradient == GradientMode::sampled && (!kSampled || !has_sample_vjp<Problem>::value))
      return Status::bad_setting;
    problem_ = &problem;
    settings_ = settings;
    x_ = x0;
    y_ = y0;
    initial_oracle_policy<Scalar, S, A>(settings.policy, settings.oracle, settings.oracle_policy, y_, pi_hat_,
                                        log_pi_hat_);
    oracle_value_.setZero();
    start_warm_.setZero();
    eval_y_ = eval_hat_ = eval_upper_ = Evaluation<Scalar, S, A>{};
    counts_ = StepCounts{};
    schedule_.reset(settings);
    rng_.reseed(settings.seed);
    return Status::ok;
  }

  // One outer iteration. On error x, y, the oracle's warm start, the schedule and the counts are
  // unchanged; count_overflow when a count has no room for another step.
  Status step(Report* report = nullptr) {
    if (problem_ == nullptr) return Status::not_initialized;
    if (Status st = counts_.room_for_step(); st != Status::ok) return st;
    const std::int64_t sweeps_hit = max_sweeps_hit_total(ws_);
    if constexpr (kSampled)
      if (settings_.gradient == GradientMode::sampled) return step_sampled(report, sweeps_hit);
    const Problem& problem = *problem_;
    const Scalar lambda = schedule_.lambda(settings_, counts_.iteration);
    Mdp<Scalar, S, A> mdp;
    if (Status st = problem.build(x_, model_, mdp); st != Status::ok) return st;

    // 1. Oracle, on copies so that a failure leaves the warm start intact.
    log_pi_next_ = log_pi_hat_;
    pi_next_ = pi_hat_;
    value_next_ = oracle_value_;
    OracleResult oracle;
    if (Status st = run_oracle(settings_.oracle, settings_.oracle_policy, settings_.oracle_step, mdp,
                               schedule_.inner_steps_min(settings_),
                               schedule_.inner_steps_max(settings_), schedule_.oracle_target(settings_), ws_,
                               eval_hat_, weights_, log_pi_next_, pi_next_, value_next_, oracle);
        st != Status::ok)
      return st;

    // 2. Evaluations, f, p and their gradients. pi-hat is evaluated last (after f, which may
    //    evaluate on its own MDP) so that the Bellman occupancy can reuse its factorization.
    policy_from_parameters<Scalar, S, A>(settings_.policy.parameterization, y_, pi_y_);
    if (Status st = evaluate(mdp, pi_y_, ws_, eval_y_); st != Status::ok) return st;
    Scalar f(0);
    if (Status st = problem.upper(x_, pi_y_, model_, ws_, eval_upper_, f, grad_x_, grad_pi_); st != Status::ok)
      return st;
    if (Status st = evaluate(mdp, pi_next_, ws_, eval_hat_); st != Status::ok) return st;
    Scalar p(0);
    if (settings_.penalty == PenaltyKind::value) {
      p = value_penalty(problem, x_, mdp, PolicyY{pi_y_, eval_y_}, PolicyHat{pi_next_, eval_hat_}, lambda,
                        weights_, grad_x_, grad_pi_);
    } else {
      if (Status st = occupancy_from_start(mdp, pi_y_, pi_next_, ws_, start_warm_, start_occupancy_,
                                           Method == EvaluationMethod::direct);
          st != Status::ok)
        return st;
      p = bellman_penalty(problem, x_, mdp, PolicyY{pi_y_}, PolicyHat{pi_next_, eval_hat_}, start_occupancy_,
                          lambda, weights_, grad_x_, grad_pi_);
    }
    chain_policy_gradient<Scalar, S, A>(settings_.policy.parameterization, pi_y_, grad_pi_, grad_y_);
    // The certified gap of y_k: pi-hat's own gap plus how far pi_y trails pi-hat.
    const Scalar lower_gap = eval_hat_.value_rho - eval_y_.value_rho;
    const bool certify = settings_.tolerance_mode() || report != nullptr;
    const Scalar oracle_gap = certify ? optimality_gap_bound(mdp, eval_hat_) : Scalar(0);

    // 3. Projected step.
    const Scalar alpha_x = schedule_.step(settings_, settings_.step_x);
    const Scalar alpha_y = schedule_.step(settings_, settings_.step_y);
    const Scalar g2 = projected_step(x_, alpha_x, grad_x_, x_next_, [&](Params& x) { problem.project_parameters(x); }) +
                      projected_step(y_, alpha_y, grad_y_, y_next_, [&](Matrix& y) {
                        project_policy_set<Scalar, S, A>(settings_.policy, y);
                      });
    if (!all_finite(x_next_) || !all_finite(y_next_) || !std::isfinite(f) || !std::isfinite(p) ||
        !std::isfinite(g2) || !std::isfinite(oracle_gap))
      return Status::numerical_failure;

    const std::int64_t k = counts_.iteration;
    x_ = x_next_;
    y_ = y_next_;
    log_pi_hat_ = log_pi_next_;
    pi_hat_ = pi_next_;
    oracle_value_ = value_next_;
    counts_.commit(0);
    const Scalar estimate = schedule_.observe(settings_, k, lower_gap + oracle_gap);
    if (report != nullptr) {
      fill_report(*report, k, lambda, alpha_x, oracle, f, p, g2, lower_gap, oracle_gap, estimate, sweeps_hit);
    }
    return Status::ok;
  }

  // `iterations` steps (the caller's bound); stops at the first error. `last` gets the last report.
  Status run(std::int64_t iterations, Report* last = nullptr) { return run_steps(*this, iterations, last); }

  // lambda_k (tolerance mode: lambda of the next step, whatever k).
  Scalar penalty_constant(std::int64_t k) const { return schedule_.lambda(settings_, k); }

  const Params& x() const { return x_; }
  const Matrix& y() const { return y_; }
  const Matrix& oracle_policy() const { return pi_hat_; }  // pi-hat, the oracle's warm start
  std::int64_t iteration() const { return counts_.iteration; }
  const Settings& settings() const { return settings_; }
  const PenaltySchedule<Scalar>& schedule() const { return schedule_; }
  // pi_y of the current y.
  void policy(Matrix& pi) const { policy_from_parameters<Scalar, S, A>(settings_.policy.parameterization, y_, pi); }
  // Workspace of the policy evaluations (sweep settings live here in sweep mode).
  Workspace& evaluation_workspace() { return ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream (init() reseeds
  // it from settings.seed; save_checkpoint and restore_checkpoint carry both).
  std::int64_t environment_steps() const { return counts_.environment_steps; }
  Rng& rng() { return rng_; }
  const Rng& rng() const { return rng_; }
  bool initialized() const { return problem_ != nullptr; }

  // Checkpoints (checkpoint.hpp): the type tag; the state, i.e. every field that carries over
  // from one step() to the next, in image order (not the problem, not the per-step scratch);
  // the settings an image must have been saved under, the workspace's sweep settings included.
  static constexpr CheckpointTag checkpoint_tag() {
    return {CheckpointSolver::pbrl, sizeof(Scalar), Method, S, A, 0, Problem::kParams};
  }
  template <class Visitor>
  decltype(auto) visit_state(Visitor& v) { return state_fields(*this, v); }
  template <class Visitor>
  decltype(auto) visit_state(Visitor& v) const { return state_fields(*this, v); }
  template <class Visitor>
  void visit_settings(Visitor& v) const {
    settings_.visit(v);
    v(ws_, domain::any(), "workspace");  // its sweep settings (EvaluationMethod::sweeps)
  }
  // restore_checkpoint's last check, on copies decoded from the image's payload (whose numbers
  // are known finite): a state this solver could have written at iteration `sequence`. x in the
  // problem's box, y in its policy set, pi-hat a policy, the schedule's state consistent.
  Status validate_checkpoint_state(const unsigned char* payload, std::uint64_t sequence) const {
    return detail::validate_penalty_solver_state(*this, payload, sequence, problem_, settings_, counts_.iteration,
                                                 schedule_, x_, detail::PlayerStateFields<Matrix>{y_, pi_hat_});
  }

 private:
  template <class Self, class Visitor>
  static decltype(auto) state_fields(Self& self, Visitor& v) {
    return v(self.counts_.iteration, self.counts_.environment_steps, self.rng_, self.schedule_, self.x_, self.y_,
             self.log_pi_hat_, self.pi_hat_, self.oracle_value_, warm_start<Method>(self.start_warm_),
             warm_start<Method>(self.eval_y_), warm_start<Method>(self.eval_hat_),
             warm_start<Method>(self.eval_upper_));
  }

  // sweeps_hit: max_sweeps_hit_total(ws_) when the step began.
  void fill_report(Report& r, std::int64_t k, Scalar lambda, Scalar alpha_x, const OracleResult& oracle, Scalar f,
                   Scalar p, Scalar g2, Scalar lower_gap, Scalar oracle_gap, Scalar estimate,
                   std::int64_t sweeps_hit) const {
    static_cast<ScheduleReport<Scalar>&>(r) =
        schedule_.describe(settings_, lambda, alpha_x, oracle, oracle_gap, lower_gap + oracle_gap, estimate);
    r.max_sweeps_hit = max_sweeps_hit_total(ws_) - sweeps_hit;
    r.iteration = k;
    r.upper_objective = f;
    r.penalty = p;
    r.objective = f + lambda * p;
    r.projected_gradient_norm = std::sqrt(g2);
    r.lower_gap = lower_gap;
    r.environment_steps = counts_.environment_steps;
  }

  // step() in sampled mode: the same iteration with the lower level's gradients from rollouts.
  // Everything is formed in scratch (sampled_.rng_next, the *_next_ iterates) and committed at the end.
  Status step_sampled(Report* report, std::int64_t sweeps_hit) {
    if constexpr (!kSampled || !has_sample_vjp<Problem>::value) {
      (void)report, (void)sweeps_hit;
      return Status::bad_setting;  // init() refuses this already
    } else {
      const Problem& problem = *problem_;
      const Scalar lambda = schedule_.lambda(settings_, counts_.iteration);
      Mdp<Scalar, S, A> mdp;
      if (Status st = problem.build(x_, model_, mdp); st != Status::ok) return st;
      sampled_.rng_next = rng_;
      std::int64_t steps = 0;

      // 1. Oracle: T_k sampled policy-gradient steps on copies of the warm start.
      log_pi_next_ = log_pi_hat_;
      pi_next_ = pi_hat_;
      const int inner = schedule_.inner_steps_max(settings_);
      if (Status st = sampled_policy_gradient_steps(mdp, settings_.oracle_policy, settings_.oracle_step, inner,
                                                    settings_.sampling, sampled_.rng_next, sampled_.trajectory, steps, weights_,
                                                    log_pi_next_, pi_next_);
          st != Status::ok)
        return st;

      // 2. Sampled penalty and its gradients (before upper(), which may reuse the model storage).
      policy_from_parameters<Scalar, S, A>(settings_.policy.parameterization, y_, pi_y_);
      const Parameterization param = settings_.policy.parameterization;
      if (settings_.penalty == PenaltyKind::value) {
        if (Status st = sampled_value_penalty(problem, x_, mdp, param, PolicyY{pi_y_}, PolicyHat{pi_next_},
                                              settings_.sampling, sampled_.rng_next, sampled_.trajectory, steps,
                                              sampled_.penalty);
            st != Status::ok)
          return st;
      } else {
        if (Status st = sampled_bellman_penalty(problem, x_, mdp, param, PolicyY{pi_y_}, PolicyHat{pi_next_},
                                                settings_.sampling, sampled_.rng_next, sampled_.trajectory, steps,
                                                sampled_.penalty);
            st != Status::ok)
          return st;
      }
      Scalar gap(0), oracle_gap(0);
      if (report != nullptr) {  // diagnostics only: exact, model-based, no environment steps
        if (Status st = evaluate(mdp, pi_y_, ws_, eval_y_); st != Status::ok) return st;
        if (Status st = evaluate(mdp, pi_next_, ws_, eval_hat_); st != Status::ok) return st;
        gap = eval_hat_.value_rho - eval_y_.value_rho;
        oracle_gap = optimality_gap_bound(mdp, eval_hat_);
      }

      // 3. f exact, then grad F = grad f + lambda * (sampled grad p).
      Scalar f(0);
      if (Status st = problem.upper(x_, pi_y_, model_, ws_, eval_upper_, f, grad_x_, grad_pi_); st != Status::ok)
        return st;
      chain_policy_gradient<Scalar, S, A>(param, pi_y_, grad_pi_, grad_y_);
      grad_x_ += lambda * sampled_.penalty.grad_x;
      grad_y_ += lambda * sampled_.penalty.grad_y;
      const Scalar p = sampled_.penalty.value;

      // 4. Projected step, as in exact mode.
      const Scalar alpha_x = schedule_.step(settings_, settings_.step_x);
      const Scalar alpha_y = schedule_.step(settings_, settings_.step_y);
      const Scalar g2 =
          projected_step(x_, alpha_x, grad_x_, x_next_, [&](Params& x) { problem.project_parameters(x); }) +
          projected_step(y_, alpha_y, grad_y_, y_next_,
                         [&](Matrix& y) { project_policy_set<Scalar, S, A>(settings_.policy, y); });
      if (!all_finite(x_next_) || !all_finite(y_next_) || !std::isfinite(f) || !std::isfinite(p) ||
          !std::isfinite(g2) || !std::isfinite(gap) || !std::isfinite(oracle_gap))
        return Status::numerical_failure;
      if (Status st = counts_.room_for(steps); st != Status::ok) return st;

      const std::int64_t k = counts_.iteration;
      x_ = x_next_;
      y_ = y_next_;
      log_pi_hat_ = log_pi_next_;
      pi_hat_ = pi_next_;
      rng_ = sampled_.rng_next;
      counts_.commit(steps);
      const Scalar estimate = schedule_.observe(settings_, k, p);
      // No certificate from samples: the oracle has no target to meet (inner_converged false).
      if (report != nullptr)
        fill_report(*report, k, lambda, alpha_x, OracleResult{inner, false}, f, p, g2, gap, oracle_gap, estimate,
                    sweeps_hit);
      return Status::ok;
    }
  }

  const Problem* problem_ = nullptr;
  Settings settings_{};
  StepCounts counts_{};
  PenaltySchedule<Scalar> schedule_{};
  // Iterates and the oracle's warm start.
  Params x_ = Params::Zero();
  Matrix y_ = Matrix::Zero();
  Matrix log_pi_hat_ = Matrix::Zero(), pi_hat_ = Matrix::Zero();
  StateVector<Scalar, S> oracle_value_ = StateVector<Scalar, S>::Zero();
  // Scratch of one step.
  Params x_next_ = Params::Zero(), grad_x_ = Params::Zero();
  Matrix y_next_ = Matrix::Zero(), log_pi_next_ = Matrix::Zero(), pi_next_ = Matrix::Zero();
  Matrix pi_y_ = Matrix::Zero(), grad_pi_ = Matrix::Zero(), grad_y_ = Matrix::Zero();
  Matrix weights_ = Matrix::Zero(), start_occupancy_ = Matrix::Zero();
  StateVector<Scalar, S> value_next_ = StateVector<Scalar, S>::Zero();
  StateVector<Scalar, S> start_warm_ = StateVector<Scalar, S>::Zero();
  typename Problem::Model model_{};
  Evaluation<Scalar, S, A> eval_y_{}, eval_hat_{}, eval_upper_{};
  Workspace ws_{};
  // Sampled mode: the random stream (state; kept by exact-only types too, so their images are
  // the same) and the scratch (none in an exact-only type).
  Rng rng_{1u};
  struct SampledState {
    Rng rng_next{1u};
    Trajectory<Scalar, kMaxHorizon> trajectory{};
    SampledPenalty<Problem> penalty{};
  };
  SampledScratch<Sources, SampledState> sampled_{};
};

}  // namespace pbrl
