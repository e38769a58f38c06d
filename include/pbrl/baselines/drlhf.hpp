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

#include "pbrl/baselines/detail/baseline_core.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/problems/rlhf.hpp"
#include "pbrl/sampling/detail/estimators.hpp"
#include "pbrl/solver/detail/oracle_steps.hpp"
#include "pbrl/solver/detail/projected_step.hpp"
#include "pbrl/solver/settings.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

/// Drlhf's settings: GradientSettings (solver/settings.hpp; sampled mode's (b) from rollouts, see
/// the comment atop baselines/drlhf.hpp), then those of (a), the reward fitting, and (b), the RL.
template <typename Scalar>
struct DrlhfSettings : GradientSettings {
  int reward_steps = 1;                 ///< (a) Bradley-Terry loss gradient steps per step(), in [0, kMaxInnerSteps]
  Scalar reward_step = Scalar(0.1);     ///< alpha of (a) (finite, > 0)
  /// (b)'s oracle (sampled mode: policy_gradient).
  OracleKind policy_oracle = OracleKind::policy_mirror_descent;
  PolicySet<Scalar> oracle_policy{};    ///< policy-gradient oracle: projected (direct) or softmax
  int policy_steps = 1;                 ///< (b) oracle steps per step() (sweeps for soft VI), in [0, kMaxInnerSteps]
  Scalar policy_step = Scalar(1);       ///< eta of PMD or of the policy gradient (finite, > 0)

  /// Each field once, with its domain and its name (visitor: v(field, Domain, name)).
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

/// What one Drlhf step reports: the iteration k (of the iterate (x_k, pi_k) the first numbers
/// describe), the environment steps and the evaluations stopped at max_sweeps are BaselineReport's
/// (baselines/detail/baseline_core.hpp).
template <typename Scalar>
struct DrlhfReport : BaselineReport {
  Scalar loss = Scalar(0);                  ///< f(x_k) on the buffer as it is at this step
  Scalar reward_gradient_norm = Scalar(0);  ///< |grad_x f(x_k)|
  Scalar fitted_loss = Scalar(0);           ///< f(x_{k+1}) after the reward steps
  bool has_true_return = false;             ///< a true MDP was given to init()
  Scalar true_return = std::numeric_limits<Scalar>::quiet_NaN();  ///< V^{pi_k}_true(rho) (NaN without a true MDP)

  /// Every field, with its name and meaning (visitor: v(field, name, meaning)).
  template <class Visitor>
  void visit(Visitor& v) const {
    visit_counts(v);
    v(loss, "loss", "f(x_k) on the buffer as it is at this step");
    v(reward_gradient_norm, "reward_gradient_norm", "|grad_x f(x_k)|");
    v(fitted_loss, "fitted_loss", "f(x_{k+1}) after the reward steps");
    v(true_return, "true_return", "V(rho) of pi_k on the true MDP (NaN without one)");
    v(has_true_return, "has_true_return", "a true MDP was given to init");
  }
};

/// Checks Drlhf's settings: every field's domain, and policy_oracle = policy_gradient in sampled
/// mode (the policy set is checked by init(), against the action count).
/// @return ok, bad_step_size or bad_setting.
template <typename Scalar>
Status validate(const DrlhfSettings<Scalar>& s) {
  if (Status st = check_domains(s); st != Status::ok) return st;
  if (s.gradient == GradientMode::sampled && s.policy_oracle != OracleKind::policy_gradient) return Status::bad_setting;
  return Status::ok;
}

/// The DRLHF-style baseline for RlhfProblem, tabular: reward fitting and RL alternate, with no
/// coupling term. Per step, (a) projected gradient steps of x on the Bradley-Terry loss over the
/// preference buffer, then (b) policy_steps oracle steps on M_tau(x), warm-started from the last
/// policy (after Christiano et al. 2017). The object is the whole state (sizeof is its RAM); the
/// problem and its buffer are the caller's. run() and the accessors of x (the fitted reward
/// r_x = x), the counts, the settings, the workspace and the Rng are the core's
/// (baselines/detail/baseline_core.hpp). More: the comment atop baselines/drlhf.hpp,
/// `docs/algorithm.md#the-baselines`.
/// @tparam Problem an RlhfProblem (uses its loss(), build(), validate_parameters(),
///         project_parameters())
/// @tparam Method how policies are evaluated (direct LU or sweeps)
/// @tparam Sources exact_and_sampled, or exact (solver/settings.hpp): the type holds no
///         sampled-mode scratch (second random stream, trajectory buffer) and has no sampled code;
///         init() refuses GradientMode::sampled
template <class Problem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class Drlhf : public BaselineCore<Drlhf<Problem, Method, Sources>, Problem, DrlhfSettings<typename Problem::Scalar>,
                                  DrlhfReport<typename Problem::Scalar>, Method, Sources> {
  using Core = BaselineCore<Drlhf, Problem, DrlhfSettings<typename Problem::Scalar>,
                            DrlhfReport<typename Problem::Scalar>, Method, Sources>;
  friend Core;

 public:
  /// Whether the type carries sampled mode.
  using Core::kSampled;
  /// The problem's floating-point type.
  using typename Core::Scalar;
  /// The number of states.
  static constexpr int S = Problem::kStates;
  /// The number of actions.
  static constexpr int A = Problem::kActions;
  /// The upper-level parameters x, the fitted reward r_x = x.
  using typename Core::Params;
  /// An S x A matrix: a policy.
  using Matrix = StateActionMatrix<Scalar, S, A>;
  /// An MDP of the problem's sizes: M_tau(x), or the true MDP.
  using MdpType = Mdp<Scalar, S, A>;
  /// DrlhfSettings of the problem's Scalar.
  using Settings = DrlhfSettings<Scalar>;
  /// DrlhfReport of the problem's Scalar.
  using Report = DrlhfReport<Scalar>;
  /// The policy evaluations' workspace.
  using typename Core::Workspace;

  /// Starts at (x0, pi0): validates everything, then sets x, the policy and the oracle's warm
  /// start, the counts and the random stream (from settings.seed). x0 in X, pi0 a policy (rows
  /// distributions; floored to keep its log finite), truth optional (validated in full when
  /// given; it is a view: its arrays must outlive the solver).
  /// @return ok; bad_setting or bad_step_size (settings, the policy set; sampled mode in an
  ///         exact-only type); not_initialized, not_finite or out_of_bounds (x0, the problem);
  ///         not_finite or bad_policy (pi0); validate(truth)'s statuses. On error the solver keeps
  ///         its previous state.
  Status init(const Problem& problem, const Settings& settings, const Params& x0, const Matrix& pi0,
              const MdpType* truth = nullptr) {
    if (Status st = validate(settings); st != Status::ok) return st;
    if (Status st = validate<Scalar, A>(settings.oracle_policy); st != Status::ok) return st;
    if (Status st = problem.validate_parameters(x0); st != Status::ok) return st;
    if (Status st = validate_policy(pi0); st != Status::ok) return st;
    if (truth != nullptr)
      if (Status st = validate(*truth); st != Status::ok) return st;
    if (Status st = Core::check_mode(settings); st != Status::ok) return st;
    this->start(problem, settings, x0);
    // pi0 as direct parameters: projected, floored and renormalized as Pbrl's pi-hat.
    initial_oracle_policy<Scalar, S, A>(PolicySet<Scalar>{Parameterization::direct}, settings.policy_oracle,
                                        settings.oracle_policy, pi0, pi_, log_pi_);
    value_.setZero();
    has_truth_ = truth != nullptr;
    truth_ = has_truth_ ? *truth : MdpType{};
    eval_ = eval_truth_ = Evaluation<Scalar, S, A>{};
    return Status::ok;
  }

  /// One alternation: (a) reward fitting, then (b) RL on the fitted reward.
  /// @return ok; not_initialized; count_overflow (a count has no room for another step);
  ///         bad_setting (the workspace's sweep settings); the statuses of the problem's loss() and
  ///         build(), of evaluate() and of the oracle; numerical_failure. On error x, the policy,
  ///         the warm start, the counts and (sampled mode) the Rng are unchanged.
  Status step(Report* report = nullptr) {
    BaselineStep b;
    if (Status st = this->begin_step(b); st != Status::ok) return st;
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
    if (Status st = b.sampled ? run_sampled_oracle(mdp, b.steps) : run_oracle(mdp); st != Status::ok) return st;
    if (!all_finite(pi_next_) || !all_finite(log_pi_next_) || !std::isfinite(loss) || !std::isfinite(fitted) ||
        !std::isfinite(gradient_norm))
      return Status::numerical_failure;
    if (Status st = this->commit_step(b, report); st != Status::ok) return st;

    log_pi_ = log_pi_next_;
    pi_ = pi_next_;
    value_ = value_next_;
    if (report != nullptr) {
      report->loss = loss;
      report->reward_gradient_norm = gradient_norm;
      report->fitted_loss = fitted;
      report->has_true_return = has_truth_;
      report->true_return = true_return;
    }
    return Status::ok;
  }

  /// V^pi_true(rho) of the current policy into value.
  /// @return ok; not_initialized (before init() or without a true MDP); evaluate()'s statuses.
  ///         On error value is unchanged.
  Status true_return(Scalar& value) {
    if (problem_ == nullptr || !has_truth_) return Status::not_initialized;
    if (Status st = evaluate(truth_, pi_, ws_, eval_truth_); st != Status::ok) return st;
    value = eval_truth_.value_rho;
    return Status::ok;
  }

  /// pi_k, the current policy.
  const Matrix& policy() const { return pi_; }
  /// log pi_k, entrywise, as the oracle keeps it beside pi_k.
  const Matrix& log_policy() const { return log_pi_; }

 private:
  // (b) in sampled mode: policy_steps sampled policy-gradient ascent steps on (log_pi_next_,
  // pi_next_) with sampled_.rng_next (the core's copy of rng_), the same update as Pbrl's sampled
  // oracle; the estimate goes through weights_. Adds policy_steps * B * H to steps.
  Status run_sampled_oracle(const MdpType& mdp, std::int64_t& steps) {
    if constexpr (!kSampled) {
      (void)mdp, (void)steps;
      return Status::bad_setting;  // init() refuses this already
    } else {
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
  SampledScratch<Sources, BaselineRollouts<Trajectory<Scalar, kMaxHorizon>>> sampled_{};
};

}  // namespace pbrl
