#pragma once
// The DRLHF-style baseline (Christiano et al. 2017; the paper's Section "Simulation / Deep RL from
// human feedback"), tabular, for RlhfProblem: two learners alternate without a coupling term,
// (a) reward fitting, a projected step of x on the Bradley-Terry loss over the preference buffer,
// and (b) policy_steps oracle steps on M_tau(x), warm-started from the last policy (PBRL's x also
// follows lambda * grad_x p). An optional true MDP gives every report the policy's true return.
// The object is the whole state (sizeof is its RAM); the problem and its buffer are the caller's,
// who redraws segments between steps.
// Sampled mode: (b) is policy_steps sampled policy-gradient steps (OracleKind::policy_gradient is
// required), policy_steps*B*H environment steps a step; (a) stays exact. A step that fails leaves
// the Rng and the step count unchanged. More: docs/algorithm.md#the-baselines.

#include "pbrl/evaluation.hpp"
#include "pbrl/policy.hpp"
#include "pbrl/problems/rlhf.hpp"
#include "pbrl/sampling/estimators.hpp"
#include "pbrl/solver/oracle_steps.hpp"
#include "pbrl/solver/projected_step.hpp"
#include "pbrl/solver/step_counts.hpp"
#include "pbrl/solver/settings.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

// GradientSettings (solver/settings.hpp): sampled mode's (b) from rollouts (see the top of this file).
template <typename Scalar>
struct DrlhfSettings : GradientSettings {
  int reward_steps = 1;                 // (a) gradient steps on the Bradley-Terry loss per step()
  Scalar reward_step = Scalar(0.1);     // alpha of (a)
  OracleKind policy_oracle = OracleKind::policy_mirror_descent;  // (b)
  PolicySet<Scalar> oracle_policy{};    // policy-gradient oracle: projected (direct) or softmax
  int policy_steps = 1;                 // (b) oracle steps per step() (sweeps for soft VI)
  Scalar policy_step = Scalar(1);       // eta of PMD or of the policy gradient

  template <class Visitor>
  void visit(Visitor& v) const {
    using namespace domain;
    GradientSettings::visit(v);
    v(reward_steps, range(0, kMaxInnerSteps), "reward_steps");
    v(reward_step, step_size(), "reward_step");
    v(policy_oracle, enumerator(OracleKind::soft_value_iteration), "policy_oracle");
    v(oracle_policy.parameterization, policy_set(), "oracle_policy.parameterization");
    v(oracle_policy.floor, policy_set(), "oracle_policy.floor");
    v(oracle_policy.logit_bound, policy_set(), "oracle_policy.logit_bound");
    v(policy_steps, range(0, kMaxInnerSteps), "policy_steps");
    v(policy_step, step_size(), "policy_step");
  }
};

// Evaluations stopped at max_sweeps are EvaluationOutcome's (evaluation.hpp).
template <typename Scalar>
struct DrlhfReport : EvaluationOutcome {
  std::int64_t iteration = 0;               // k of the iterate (x_k, pi_k) the first numbers describe
  Scalar loss = Scalar(0);                  // f(x_k) on the buffer as it is at this step
  Scalar reward_gradient_norm = Scalar(0);  // |grad_x f(x_k)|
  Scalar fitted_loss = Scalar(0);           // f(x_{k+1}) after the reward steps
  bool has_true_return = false;             // a true MDP was given to init()
  Scalar true_return = std::numeric_limits<Scalar>::quiet_NaN();  // V^{pi_k}_true(rho)
  std::int64_t environment_steps = 0;       // sampled mode: steps taken since init(), this step's included
};

template <typename Scalar>
Status validate(const DrlhfSettings<Scalar>& s) {
  if (Status st = check_domains(s); st != Status::ok) return st;
  if (s.gradient == GradientMode::sampled && s.policy_oracle != OracleKind::policy_gradient) return Status::bad_setting;
  return Status::ok;
}

// Problem: an RlhfProblem (uses its loss(), build(), validate_parameters(), project_parameters()).
// Sources = GradientSources::exact (solver/settings.hpp): the type holds no sampled-mode scratch
// (second random stream, trajectory buffer) and has no sampled code; init() refuses
// GradientMode::sampled.
template <class Problem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class Drlhf {
 public:
  static constexpr bool kSampled = Sources == GradientSources::exact_and_sampled;
  using Scalar = typename Problem::Scalar;
  static constexpr int S = Problem::kStates;
  static constexpr int A = Problem::kActions;
  using Params = typename Problem::Params;
  using Matrix = StateActionMatrix<Scalar, S, A>;
  using MdpType = Mdp<Scalar, S, A>;
  using Settings = DrlhfSettings<Scalar>;
  using Report = DrlhfReport<Scalar>;
  using Workspace = EvaluationWorkspace<Scalar, S, Method>;

  // x0 in X, pi0 a policy (rows distributions; floored to keep its log finite), truth optional
  // (validated in full when given; it is a view: its arrays must outlive the solver).
  // On error the solver keeps its previous state.
  Status init(const Problem& problem, const Settings& settings, const Params& x0, const Matrix& pi0,
              const MdpType* truth = nullptr) {
    if (Status st = validate(settings); st != Status::ok) return st;
    if (Status st = validate<Scalar, A>(settings.oracle_policy); st != Status::ok) return st;
    if (Status st = problem.validate_parameters(x0); st != Status::ok) return st;
    if (Status st = validate_policy(pi0); st != Status::ok) return st;
    if (truth != nullptr)
      if (Status st = validate(*truth); st != Status::ok) return st;
    if (settings.gradient == GradientMode::sampled && !kSampled) return Status::bad_setting;
    problem_ = &problem;
    settings_ = settings;
    x_ = x0;
    pi_ = pi0;
    if (settings.policy_oracle == OracleKind::policy_gradient &&
        settings.oracle_policy.parameterization == Parameterization::direct)
      project_policy_set<Scalar, S, A>(settings.oracle_policy, pi_);
    pi_ = pi_.cwiseMax(log_floor<Scalar>());
    for (int s = 0; s < S; ++s) pi_.row(s) /= pi_.row(s).sum();
    log_pi_ = pi_.array().log().matrix();
    value_.setZero();
    has_truth_ = truth != nullptr;
    truth_ = has_truth_ ? *truth : MdpType{};
    eval_ = eval_truth_ = Evaluation<Scalar, S, A>{};
    counts_ = StepCounts{};
    rng_.reseed(settings.seed);
    return Status::ok;
  }

  // One alternation: (a) then (b). On error x, the policy, the warm start, the counts and (sampled
  // mode) the Rng are unchanged; count_overflow when a count has no room for another step.
  Status step(Report* report = nullptr) {
    if (problem_ == nullptr) return Status::not_initialized;
    if (Status st = counts_.room_for_step(); st != Status::ok) return st;
    const std::int64_t sweeps_hit = max_sweeps_hit_total(ws_);
    const Problem& problem = *problem_;
    Scalar true_return = std::numeric_limits<Scalar>::quiet_NaN();
    if (has_truth_) {
      if (Status st = evaluate(truth_, pi_, ws_, eval_truth_); st != Status::ok) return st;
      true_return = eval_truth_.value_rho;
    }

    // (a) Reward fitting on x alone.
    Scalar loss(0), fitted(0);
    if (Status st = problem.loss(x_, loss, grad_); st != Status::ok) return st;
    const Scalar gradient_norm = grad_.norm();
    x_next_ = x_;
    fitted = loss;
    for (int i = 0; i < settings_.reward_steps; ++i) {
      x_next_ -= settings_.reward_step * grad_;
      problem.project_parameters(x_next_);
      if (!all_finite(x_next_)) return Status::numerical_failure;
      if (Status st = problem.loss(x_next_, fitted, grad_); st != Status::ok) return st;
    }

    // (b) RL on the fitted reward, on copies of the warm start.
    MdpType mdp;
    if (Status st = problem.build(x_next_, model_, mdp); st != Status::ok) return st;
    log_pi_next_ = log_pi_;
    pi_next_ = pi_;
    value_next_ = value_;
    std::int64_t steps = 0;
    const bool sampled = kSampled && settings_.gradient == GradientMode::sampled;
    if (Status st = sampled ? run_sampled_oracle(mdp, steps) : run_oracle(mdp); st != Status::ok)
      return st;
    if (!all_finite(pi_next_) || !all_finite(log_pi_next_) || !std::isfinite(loss) || !std::isfinite(fitted) ||
        !std::isfinite(gradient_norm))
      return Status::numerical_failure;
    if (Status st = counts_.room_for(steps); st != Status::ok) return st;

    if (report != nullptr) {
      report->iteration = counts_.iteration;
      report->loss = loss;
      report->reward_gradient_norm = gradient_norm;
      report->fitted_loss = fitted;
      report->has_true_return = has_truth_;
      report->true_return = true_return;
      report->environment_steps = counts_.environment_steps + steps;
      report->max_sweeps_hit = max_sweeps_hit_total(ws_) - sweeps_hit;
    }
    x_ = x_next_;
    log_pi_ = log_pi_next_;
    pi_ = pi_next_;
    value_ = value_next_;
    if constexpr (kSampled)
      if (sampled) rng_ = sampled_.rng_next;
    counts_.commit(steps);
    return Status::ok;
  }

  // `iterations` steps (the caller's bound); stops at the first error. `last` gets the last report.
  Status run(std::int64_t iterations, Report* last = nullptr) { return run_steps(*this, iterations, last); }

  // V^pi_true(rho) of the current policy (not_initialized without a true MDP); value unchanged on error.
  Status true_return(Scalar& value) {
    if (problem_ == nullptr || !has_truth_) return Status::not_initialized;
    if (Status st = evaluate(truth_, pi_, ws_, eval_truth_); st != Status::ok) return st;
    value = eval_truth_.value_rho;
    return Status::ok;
  }

  const Params& x() const { return x_; }              // the fitted reward r_x = x
  const Matrix& policy() const { return pi_; }
  const Matrix& log_policy() const { return log_pi_; }
  std::int64_t iteration() const { return counts_.iteration; }
  const Settings& settings() const { return settings_; }
  Workspace& evaluation_workspace() { return ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream (copy it to
  // checkpoint, assign it to restore; init() reseeds it from settings.seed).
  std::int64_t environment_steps() const { return counts_.environment_steps; }
  Rng& rng() { return rng_; }
  const Rng& rng() const { return rng_; }

 private:
  // (b) in sampled mode: policy_steps sampled policy-gradient ascent steps on (log_pi_next_,
  // pi_next_) with sampled_.rng_next (a copy of rng_, committed by step()), the same update as
  // Pbrl's sampled oracle; the estimate goes through weights_. Adds policy_steps * B * H to steps.
  Status run_sampled_oracle(const MdpType& mdp, std::int64_t& steps) {
    if constexpr (!kSampled) {
      (void)mdp, (void)steps;
      return Status::bad_setting;  // init() refuses this already
    } else {
      sampled_.rng_next = rng_;
      return sampled_policy_gradient_steps(mdp, settings_.oracle_policy, settings_.policy_step,
                                           settings_.policy_steps, settings_.sampling, sampled_.rng_next,
                                           sampled_.trajectory, steps, weights_, log_pi_next_, pi_next_);
    }
  }

  Status run_oracle(const MdpType& mdp) {
    OracleResult used;  // no target: exactly T steps
    const int T = settings_.policy_steps;
    const OracleSpec<Scalar> spec{settings_.policy_oracle, settings_.oracle_policy, settings_.policy_step, T, T, Scalar(0)};
    return pbrl::run_oracle(spec, mdp, ws_, weights_, {eval_, log_pi_next_, pi_next_, value_next_}, used);
  }

  const Problem* problem_ = nullptr;
  Settings settings_{};
  StepCounts counts_{};
  bool has_truth_ = false;
  MdpType truth_{};
  // Iterates and the oracle's warm start.
  Params x_ = Params::Zero();
  Matrix log_pi_ = Matrix::Zero(), pi_ = Matrix::Zero();
  StateVector<Scalar, S> value_ = StateVector<Scalar, S>::Zero();
  // Scratch of one step.
  Params x_next_ = Params::Zero(), grad_ = Params::Zero();
  Matrix log_pi_next_ = Matrix::Zero(), pi_next_ = Matrix::Zero(), weights_ = Matrix::Zero();
  StateVector<Scalar, S> value_next_ = StateVector<Scalar, S>::Zero();
  typename Problem::Model model_{};
  Evaluation<Scalar, S, A> eval_{}, eval_truth_{};
  Workspace ws_{};
  // Sampled mode: the random stream (state) and its scratch (none in an exact-only type).
  Rng rng_{1u};
  struct SampledState {
    Rng rng_next{1u};
    Trajectory<Scalar, kMaxHorizon> trajectory{};
  };
  SampledScratch<Sources, SampledState> sampled_{};
};

}  // namespace pbrl
