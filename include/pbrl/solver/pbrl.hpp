#pragma once
// PBRL, the penalty-based bilevel RL gradient method (paper, Algorithm 1). One outer iteration:
//   1. run T oracle steps on M(x_k) from the last iteration's policy -> pi-hat_k
//   2. grad F = grad f(x_k, y_k) + lambda_k * grad p(x_k, y_k; pi-hat_k)   (value or Bellman p)
//   3. x_{k+1} = Proj_X(x_k - alpha_x grad_x F),  y_{k+1} = Proj_Y(y_k - alpha_y grad_y F)
// The solver object is the whole state: sizeof(Pbrl<...>) is the RAM it needs and it holds
// no pointer into memory it does not own except the problem. step() does exactly one bounded
// iteration: T oracle steps, T + 3 policy evaluations (one more for the Bellman occupancy), no
// other loop that depends on data.
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
#include "pbrl/oracle/pmd.hpp"
#include "pbrl/oracle/policy_gradient.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/penalty/bellman.hpp"
#include "pbrl/penalty/value.hpp"
#include "pbrl/policy.hpp"
#include "pbrl/sampling/estimators.hpp"

#include <cstdint>

namespace pbrl {

enum class PenaltyKind : unsigned char { value, bellman };
enum class OracleKind : unsigned char { policy_mirror_descent, policy_gradient, soft_value_iteration };
// exact: every gradient from the model (policy evaluations). sampled: the lower level's gradients
// from trajectories (see the top of this file).
enum class GradientMode : unsigned char { exact, sampled };

// Largest inner step count accepted: keeps the work of one step() bounded and known.
constexpr int kMaxInnerSteps = 100000;

template <typename Scalar>
struct PbrlSettings {
  PenaltyKind penalty = PenaltyKind::value;
  PolicySet<Scalar> policy{};          // parameterization and set Y of y
  OracleKind oracle = OracleKind::policy_mirror_descent;
  PolicySet<Scalar> oracle_policy{};   // policy-gradient oracle: projected (direct) or softmax
  int inner_steps = 10;                // T
  Scalar oracle_step = Scalar(1);      // eta of PMD or of the policy-gradient oracle
  Scalar step_x = Scalar(0.1);         // alpha for x
  Scalar step_y = Scalar(0.1);         // alpha for y
  Scalar penalty_start = Scalar(1);    // lambda at iteration 0
  Scalar penalty_final = Scalar(1);    // lambda once the ramp is over
  int penalty_ramp = 0;                // iterations of the linear ramp (0: lambda = penalty_final)
  GradientMode gradient = GradientMode::exact;  // sampled: Monte-Carlo lower-level gradients
  SamplingSettings sampling{};         // sampled mode: horizon H <= kMaxHorizon, batch B
  std::uint32_t seed = 1u;             // sampled mode: init() seeds the solver's Rng with it
};

template <typename Scalar>
struct PbrlReport {
  long iteration = 0;                  // k of the iterate (x_k, y_k) the numbers describe
  Scalar upper_objective = Scalar(0);  // f(x_k, y_k)
  Scalar penalty = Scalar(0);          // p(x_k, y_k) with pi-hat_k
  Scalar penalty_constant = Scalar(0); // lambda_k
  Scalar objective = Scalar(0);        // F = f + lambda*p
  Scalar projected_gradient_norm = Scalar(0);  // |G_lambda(x_k, y_k)| with separate step sizes
  Scalar lower_gap = Scalar(0);        // V^{pi-hat_k}(rho) - V^{pi_y_k}(rho) on M(x_k)
  std::int64_t environment_steps = 0;  // environment steps taken since init(), this step's included
};

template <typename Scalar>
Status validate(const PbrlSettings<Scalar>& s, int actions) {
  (void)actions;
  auto positive = [](Scalar v) { return std::isfinite(v) && v > Scalar(0); };
  if (s.penalty != PenaltyKind::value && s.penalty != PenaltyKind::bellman) return Status::bad_setting;
  if (s.oracle != OracleKind::policy_mirror_descent && s.oracle != OracleKind::policy_gradient &&
      s.oracle != OracleKind::soft_value_iteration)
    return Status::bad_setting;
  if (s.inner_steps < 0 || s.inner_steps > kMaxInnerSteps || s.penalty_ramp < 0) return Status::bad_setting;
  if (!positive(s.oracle_step) || !positive(s.step_x) || !positive(s.step_y)) return Status::bad_step_size;
  if (!std::isfinite(s.penalty_start) || !std::isfinite(s.penalty_final) ||
      s.penalty_start < Scalar(0) || s.penalty_final < Scalar(0))
    return Status::bad_setting;
  if (s.gradient != GradientMode::exact && s.gradient != GradientMode::sampled) return Status::bad_setting;
  if (s.gradient == GradientMode::sampled) {
    if (s.oracle != OracleKind::policy_gradient) return Status::bad_setting;
    if (Status st = validate_sampling<kMaxHorizon>(s.sampling); st != Status::ok) return st;
  }
  return Status::ok;
}

template <class Problem, EvaluationMethod Method = EvaluationMethod::direct>
class Pbrl {
 public:
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
    if (settings.gradient == GradientMode::sampled && !has_sample_vjp<Problem>::value) return Status::bad_setting;
    problem_ = &problem;
    settings_ = settings;
    x_ = x0;
    y_ = y0;
    policy_from_parameters<Scalar, S, A>(settings.policy.parameterization, y_, pi_hat_);
    if (settings.oracle == OracleKind::policy_gradient &&
        settings.oracle_policy.parameterization == Parameterization::direct)
      project_policy_set<Scalar, S, A>(settings.oracle_policy, pi_hat_);
    pi_hat_ = pi_hat_.cwiseMax(log_floor<Scalar>());
    for (int s = 0; s < S; ++s) pi_hat_.row(s) /= pi_hat_.row(s).sum();
    log_pi_hat_ = pi_hat_.array().log().matrix();
    oracle_value_.setZero();
    start_warm_.setZero();
    eval_y_ = eval_hat_ = eval_upper_ = Evaluation<Scalar, S, A>{};
    iteration_ = 0;
    rng_.reseed(settings.seed);
    environment_steps_ = 0;
    return Status::ok;
  }

  // One outer iteration. On error x, y, the oracle's warm start and the count are unchanged.
  Status step(Report* report = nullptr) {
    if (problem_ == nullptr) return Status::not_initialized;
    if (settings_.gradient == GradientMode::sampled) return step_sampled(report);
    const Problem& problem = *problem_;
    const Scalar lambda = penalty_constant(iteration_);
    Mdp<Scalar, S, A> mdp;
    if (Status st = problem.build(x_, model_, mdp); st != Status::ok) return st;

    // 1. Oracle, on copies so that a failure leaves the warm start intact.
    log_pi_next_ = log_pi_hat_;
    pi_next_ = pi_hat_;
    value_next_ = oracle_value_;
    if (Status st = run_oracle(mdp); st != Status::ok) return st;

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
      p = value_penalty(problem, x_, mdp, pi_y_, eval_y_, pi_next_, eval_hat_, lambda, weights_,
                        grad_x_, grad_pi_);
    } else {
      if (Status st = occupancy_from_start(mdp, pi_y_, pi_next_, ws_, start_warm_, start_occupancy_,
                                           Method == EvaluationMethod::direct);
          st != Status::ok)
        return st;
      p = bellman_penalty(problem, x_, mdp, pi_y_, pi_next_, eval_hat_, start_occupancy_, lambda,
                          weights_, grad_x_, grad_pi_);
    }
    chain_policy_gradient<Scalar, S, A>(settings_.policy.parameterization, pi_y_, grad_pi_, grad_y_);

    // 3. Projected step.
    x_next_ = x_ - settings_.step_x * grad_x_;
    problem.project_parameters(x_next_);
    y_next_ = y_ - settings_.step_y * grad_y_;
    project_policy_set<Scalar, S, A>(settings_.policy, y_next_);
    const Scalar g2 = ((x_ - x_next_) / settings_.step_x).squaredNorm() +
                      ((y_ - y_next_) / settings_.step_y).squaredNorm();
    if (!x_next_.allFinite() || !y_next_.allFinite() || !std::isfinite(f) || !std::isfinite(p) ||
        !std::isfinite(g2))
      return Status::numerical_failure;

    if (report != nullptr) {
      report->iteration = iteration_;
      report->upper_objective = f;
      report->penalty = p;
      report->penalty_constant = lambda;
      report->objective = f + lambda * p;
      report->projected_gradient_norm = std::sqrt(g2);
      report->lower_gap = eval_hat_.value_rho - eval_y_.value_rho;
      report->environment_steps = environment_steps_;
    }
    x_ = x_next_;
    y_ = y_next_;
    log_pi_hat_ = log_pi_next_;
    pi_hat_ = pi_next_;
    oracle_value_ = value_next_;
    ++iteration_;
    return Status::ok;
  }

  // `iterations` steps (the caller's bound); stops at the first error. `last` gets the last report.
  Status run(long iterations, Report* last = nullptr) {
    if (iterations < 0) return Status::bad_setting;
    for (long k = 0; k < iterations; ++k)
      if (Status st = step(last); st != Status::ok) return st;
    return Status::ok;
  }

  // lambda_k: linear ramp from penalty_start to penalty_final over penalty_ramp iterations.
  Scalar penalty_constant(long k) const {
    if (settings_.penalty_ramp <= 0 || k >= settings_.penalty_ramp) return settings_.penalty_final;
    const Scalar t = Scalar(k) / Scalar(settings_.penalty_ramp);
    return settings_.penalty_start + t * (settings_.penalty_final - settings_.penalty_start);
  }

  const Params& x() const { return x_; }
  const Matrix& y() const { return y_; }
  const Matrix& oracle_policy() const { return pi_hat_; }  // pi-hat, the oracle's warm start
  long iteration() const { return iteration_; }
  const Settings& settings() const { return settings_; }
  // pi_y of the current y.
  void policy(Matrix& pi) const { policy_from_parameters<Scalar, S, A>(settings_.policy.parameterization, y_, pi); }
  // Workspace of the policy evaluations (sweep settings live here in sweep mode).
  Workspace& evaluation_workspace() { return ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream (init() reseeds
  // it from settings.seed; save_checkpoint and restore_checkpoint carry both).
  std::int64_t environment_steps() const { return environment_steps_; }
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
    const Settings& s = settings_;
    v(s.penalty, s.policy.parameterization, s.policy.floor, s.policy.logit_bound, s.oracle,
      s.oracle_policy.parameterization, s.oracle_policy.floor, s.oracle_policy.logit_bound, s.inner_steps,
      s.oracle_step, s.step_x, s.step_y, s.penalty_start, s.penalty_final, s.penalty_ramp, s.gradient,
      s.sampling.horizon, s.sampling.batch, s.sampling.common_random_numbers, s.seed, ws_);
  }

 private:
  template <class Self, class Visitor>
  static decltype(auto) state_fields(Self& self, Visitor& v) {
    return v(self.iteration_, self.environment_steps_, self.rng_, self.x_, self.y_, self.log_pi_hat_,
             self.pi_hat_, self.oracle_value_, warm_start<Method>(self.start_warm_),
             warm_start<Method>(self.eval_y_), warm_start<Method>(self.eval_hat_),
             warm_start<Method>(self.eval_upper_));
  }

  // step() in sampled mode: the same iteration with the lower level's gradients from rollouts.
  // Everything is formed in scratch (rng_next_, the *_next_ iterates) and committed at the end.
  Status step_sampled(Report* report) {
    if constexpr (!has_sample_vjp<Problem>::value) {
      (void)report;
      return Status::bad_setting;  // init() refuses this already
    } else {
      const Problem& problem = *problem_;
      const Scalar lambda = penalty_constant(iteration_);
      Mdp<Scalar, S, A> mdp;
      if (Status st = problem.build(x_, model_, mdp); st != Status::ok) return st;
      rng_next_ = rng_;
      std::int64_t steps = 0;

      // 1. Oracle: T sampled policy-gradient steps on copies of the warm start.
      log_pi_next_ = log_pi_hat_;
      pi_next_ = pi_hat_;
      if (Status st = run_sampled_oracle(mdp, steps); st != Status::ok) return st;

      // 2. Sampled penalty and its gradients (before upper(), which may reuse the model storage).
      policy_from_parameters<Scalar, S, A>(settings_.policy.parameterization, y_, pi_y_);
      const Parameterization param = settings_.policy.parameterization;
      if (settings_.penalty == PenaltyKind::value) {
        if (Status st = sampled_value_penalty(problem, x_, mdp, param, pi_y_, pi_next_, settings_.sampling,
                                              rng_next_, trajectory_, steps, sampled_penalty_);
            st != Status::ok)
          return st;
      } else {
        if (Status st = sampled_bellman_penalty(problem, x_, mdp, param, pi_y_, pi_next_, settings_.sampling,
                                                rng_next_, trajectory_, steps, sampled_penalty_);
            st != Status::ok)
          return st;
      }
      Scalar gap(0);
      if (report != nullptr) {  // diagnostics only: exact, model-based, no environment steps
        if (Status st = evaluate(mdp, pi_y_, ws_, eval_y_); st != Status::ok) return st;
        if (Status st = evaluate(mdp, pi_next_, ws_, eval_hat_); st != Status::ok) return st;
        gap = eval_hat_.value_rho - eval_y_.value_rho;
      }

      // 3. f exact, then grad F = grad f + lambda * (sampled grad p).
      Scalar f(0);
      if (Status st = problem.upper(x_, pi_y_, model_, ws_, eval_upper_, f, grad_x_, grad_pi_); st != Status::ok)
        return st;
      chain_policy_gradient<Scalar, S, A>(param, pi_y_, grad_pi_, grad_y_);
      grad_x_ += lambda * sampled_penalty_.grad_x;
      grad_y_ += lambda * sampled_penalty_.grad_y;
      const Scalar p = sampled_penalty_.value;

      // 4. Projected step, as in exact mode.
      x_next_ = x_ - settings_.step_x * grad_x_;
      problem.project_parameters(x_next_);
      y_next_ = y_ - settings_.step_y * grad_y_;
      project_policy_set<Scalar, S, A>(settings_.policy, y_next_);
      const Scalar g2 = ((x_ - x_next_) / settings_.step_x).squaredNorm() +
                        ((y_ - y_next_) / settings_.step_y).squaredNorm();
      if (!x_next_.allFinite() || !y_next_.allFinite() || !std::isfinite(f) || !std::isfinite(p) ||
          !std::isfinite(g2) || !std::isfinite(gap))
        return Status::numerical_failure;

      x_ = x_next_;
      y_ = y_next_;
      log_pi_hat_ = log_pi_next_;
      pi_hat_ = pi_next_;
      rng_ = rng_next_;
      environment_steps_ += steps;
      if (report != nullptr) {
        report->iteration = iteration_;
        report->upper_objective = f;
        report->penalty = p;
        report->penalty_constant = lambda;
        report->objective = f + lambda * p;
        report->projected_gradient_norm = std::sqrt(g2);
        report->lower_gap = gap;
        report->environment_steps = environment_steps_;
      }
      ++iteration_;
      return Status::ok;
    }
  }

  // T sampled policy-gradient ascent steps on (log_pi_next_, pi_next_) with rng_next_; the
  // gradient estimate goes through weights_.
  Status run_sampled_oracle(const Mdp<Scalar, S, A>& mdp, std::int64_t& steps) {
    return sampled_policy_gradient_steps(mdp, settings_.oracle_policy, settings_.oracle_step, settings_.inner_steps,
                                         settings_.sampling, rng_next_, trajectory_, steps, weights_, log_pi_next_,
                                         pi_next_);
  }

  Status run_oracle(const Mdp<Scalar, S, A>& mdp) {
    const int T = settings_.inner_steps;
    if (T == 0) return Status::ok;
    switch (settings_.oracle) {
      case OracleKind::policy_mirror_descent:
        for (int i = 0; i < T; ++i)
          if (Status st = pmd_step(mdp, settings_.oracle_step, ws_, eval_hat_, log_pi_next_, pi_next_);
              st != Status::ok)
            return st;
        return Status::ok;
      case OracleKind::policy_gradient:
        for (int i = 0; i < T; ++i)
          if (Status st = policy_gradient_step(mdp, settings_.oracle_policy, settings_.oracle_step, ws_,
                                               eval_hat_, weights_, log_pi_next_, pi_next_);
              st != Status::ok)
            return st;
        return Status::ok;
      case OracleKind::soft_value_iteration:
        return soft_value_iteration(mdp, T, Scalar(0), value_next_, weights_, log_pi_next_, pi_next_);
    }
    return Status::bad_setting;
  }

  const Problem* problem_ = nullptr;
  Settings settings_{};
  long iteration_ = 0;
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
  // Sampled mode: the random stream and the step count (state), and their scratch.
  Rng rng_{1u}, rng_next_{1u};
  std::int64_t environment_steps_ = 0;
  Trajectory<Scalar, kMaxHorizon> trajectory_{};
  SampledPenalty<Problem> sampled_penalty_{};
};

}  // namespace pbrl
