#pragma once
// Independent policy gradient on the Stackelberg game (paper, Section "Simulation / Stackelberg
// Markov game", baseline; Daskalakis et al. 2020, Ding et al. 2022): both players ascend their own
// regularized values at once, each holding the other's current policy fixed; softmax policies,
// Y the box |y| <= follower_logit_bound.
// Exact mode: both gradients model-based. Sampled mode: the follower's gradient from B rollouts of
// horizon H (B*H environment steps and B*(2H + 1) Rng draws a step); the leader's stays exact, as
// PBRL's upper level does. A step that fails leaves the Rng and the step count unchanged; the
// report's values and gap are exact. The object is the whole state (sizeof is its RAM); it points
// only at the problem. With Sources = GradientSources::exact, init() refuses GradientMode::sampled.
// The update, and why the comparison is like for like: docs/algorithm.md#the-baselines.

#include "pbrl/baselines/detail/baseline_core.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "pbrl/sampling/detail/estimators.hpp"
#include "pbrl/solver/detail/projected_step.hpp"
#include "pbrl/solver/settings.hpp"

#include <cstdint>

namespace pbrl {

/// IndependentPolicyGradient's settings: GradientSettings (solver/settings.hpp; sampled mode's
/// Monte-Carlo follower gradient) and the two players' steps.
template <typename Scalar>
struct IndependentPgSettings : GradientSettings {
  Scalar step_leader = Scalar(0.1);            ///< alpha_l, the leader's step size (finite, > 0)
  Scalar step_follower = Scalar(0.1);          ///< alpha_f, the follower's step size (finite, > 0)
  Scalar follower_logit_bound = Scalar(50);    ///< Y = [-bound, bound]^(S*A_f) (finite, > 0)

  /// Each field once, with its domain and its name (visitor: v(field, Domain, name)).
  template <class Visitor>
  void visit(Visitor& v) const {
    GradientSettings::visit(v);
    v(step_leader, domain::step_size(), "step_leader");
    v(step_follower, domain::step_size(), "step_follower");
    v(follower_logit_bound, domain::positive(), "follower_logit_bound");
  }
};

/// What one IndependentPolicyGradient step reports: exact values and gap, in sampled mode too.
/// The iteration k (of the iterate (x_k, y_k)), the environment steps and the evaluations stopped
/// at max_sweeps are BaselineReport's (baselines/detail/baseline_core.hpp).
template <typename Scalar>
struct IndependentPgReport : BaselineReport {
  Scalar leader_value = Scalar(0);    ///< V_l^{pi_x_k, pi_y_k}(rho)
  Scalar follower_value = Scalar(0);  ///< V_f^{pi_x_k, pi_y_k}(rho)
  Scalar follower_gap = Scalar(0);    ///< V_f^{pi_x_k, pi*(x_k)}(rho) - V_f^{pi_x_k, pi_y_k}(rho)
  bool follower_gap_converged = false;  ///< pi*(x_k)'s soft value iteration met its tolerance (false:
                                        ///< stopped at follower_optimum().max_iterations)

  /// Every field, with its name and meaning (visitor: v(field, name, meaning)).
  template <class Visitor>
  void visit(Visitor& v) const {
    visit_counts(v);
    v(leader_value, "leader_value", "the leader's value V_l(rho) at (x_k, y_k)");
    v(follower_value, "follower_value", "the follower's value V_f(rho) at (x_k, y_k)");
    v(follower_gap, "follower_gap", "V_f(rho) with the follower's best response pi*(x_k) minus V_f(rho) with y_k");
    v(follower_gap_converged, "follower_gap_converged", "pi*(x_k)'s soft value iteration met its tolerance");
  }
};

/// Checks IndependentPolicyGradient's settings: every field's domain.
/// @return ok, bad_step_size or bad_setting.
template <typename Scalar>
Status validate(const IndependentPgSettings<Scalar>& s) {
  return check_domains(s);
}

/// Independent policy gradient on the Stackelberg game, the paper's baseline: both players ascend
/// their own regularized values at once, each holding the other's current policy fixed. Softmax
/// policies, Y the box |y| <= follower_logit_bound; after Daskalakis et al. 2020 and Ding et al.
/// 2022. The object is the whole state (sizeof is its RAM); it points only at the problem.
/// run() and the accessors of x, the counts, the settings, the workspace and the
/// Rng are the core's (baselines/detail/baseline_core.hpp). More: the comment atop
/// baselines/independent_pg.hpp, `docs/algorithm.md#the-baselines`.
/// @tparam Problem a Stackelberg problem (problems/stackelberg.hpp)
/// @tparam Method how policies are evaluated (direct LU or sweeps)
/// @tparam Sources exact_and_sampled, or exact for a type without sampled mode (init() refuses
///         GradientMode::sampled)
template <class Problem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class IndependentPolicyGradient
    : public BaselineCore<IndependentPolicyGradient<Problem, Method, Sources>, Problem,
                          IndependentPgSettings<typename Problem::Scalar>,
                          IndependentPgReport<typename Problem::Scalar>, Method, Sources> {
  using Core = BaselineCore<IndependentPolicyGradient, Problem, IndependentPgSettings<typename Problem::Scalar>,
                            IndependentPgReport<typename Problem::Scalar>, Method, Sources>;
  friend Core;

 public:
  /// Whether the type carries sampled mode.
  using Core::kSampled;
  /// The problem's floating-point type.
  using typename Core::Scalar;
  /// The number of states.
  static constexpr int S = Problem::kStates;
  /// The follower's actions, A_f.
  static constexpr int AF = Problem::kActions;
  /// The leader's actions, A_l.
  static constexpr int AL = Problem::kLeaderActions;
  /// The upper-level parameters x: the leader's logits.
  using typename Core::Params;
  /// An S x A_f matrix: y, the follower's logits, or its policy.
  using Matrix = StateActionMatrix<Scalar, S, AF>;
  /// IndependentPgSettings of the problem's Scalar.
  using Settings = IndependentPgSettings<Scalar>;
  /// IndependentPgReport of the problem's Scalar.
  using Report = IndependentPgReport<Scalar>;
  /// The policy evaluations' workspace.
  using typename Core::Workspace;
  /// The problem's FollowerOptimum: the follower's best response, for the report's gap.
  using Optimum = typename Problem::FollowerOptimum;

  /// Starts at (x0, y0): validates everything, then sets x, y, the counts and the random stream
  /// (from settings.seed), and zeroes the follower optimum's warm start. x0: leader logits in the
  /// problem's box; y0: follower logits within the settings' bound.
  /// @return ok; bad_setting or bad_step_size (settings; sampled mode in an exact-only type);
  ///         not_initialized, not_finite or out_of_bounds (x0, the problem); not_finite or
  ///         bad_policy (y0). On error the object keeps its previous state.
  Status init(const Problem& problem, const Settings& settings, const Params& x0, const Matrix& y0) {
    if (Status st = validate(settings); st != Status::ok) return st;
    if (Status st = problem.validate_parameters(x0); st != Status::ok) return st;
    if (!all_finite(y0)) return Status::not_finite;
    if (!detail::all_within(y0.data(), int(y0.size()), -settings.follower_logit_bound, settings.follower_logit_bound))
      return Status::bad_policy;
    if (Status st = Core::check_mode(settings); st != Status::ok) return st;
    this->start(problem, settings, x0);
    y_ = y0;
    eval_f_ = eval_l_ = Evaluation<Scalar, S, AF>{};
    optimum_.value.setZero();
    return Status::ok;
  }

  /// One simultaneous update. With a report, also the follower's exact optimality gap (soft value
  /// iteration on M(x_k), warm-started; its settings are in follower_optimum()).
  /// @return ok; not_initialized; count_overflow (a count has no room left); bad_setting (the
  ///         workspace's sweep settings); the statuses of the problem's build() and upper(), of
  ///         evaluate(), of the sampled gradient and (with a report) of optimal_value();
  ///         numerical_failure. On error x, y, the counts and the Rng are unchanged.
  Status step(Report* report = nullptr) {
    BaselineStep b;
    if (Status st = this->begin_step(b); st != Status::ok) return st;
    forget_factorization(ws_);  // factors of the last step's M(x) are no chain of this one's
    const Problem& problem = *problem_;
    Mdp<Scalar, S, AF> mdp;
    if (Status st = problem.build(x_, model_, mdp); st != Status::ok) return st;
    policy_from_parameters<Scalar, S, AF>(Parameterization::softmax, y_, pi_y_);

    // Follower: grad_y V_f^{pi_x, pi_y}(rho) = grad_y V^{pi_y}_{M(x)}(rho), exact or sampled.
    if (b.sampled) {
      if (Status st = sampled_follower_gradient(mdp, b.steps); st != Status::ok) return st;
      // The report's V_f is exact (diagnostics only, not part of the update).
      if (report != nullptr)
        if (Status st = evaluate(mdp, pi_y_, ws_, eval_f_); st != Status::ok) return st;
    } else {
      if (Status st = evaluate(mdp, pi_y_, ws_, eval_f_); st != Status::ok) return st;
      policy_gradient(mdp, pi_y_, eval_f_, grad_pi_);
      chain_policy_gradient<Scalar, S, AF>(Parameterization::softmax, pi_y_, grad_pi_, grad_y_);
    }

    // Leader: grad_x V_l = -grad_x f.
    Scalar f(0);
    // pi_y's evaluation on M(x_k), if made, was the last one: f's evaluation reuses its factors.
    const bool evaluated = !b.sampled || report != nullptr;
    if (Status st = upper_on_chain(problem, evaluated ? &eval_f_ : nullptr, pi_y_, model_, ws_, eval_l_, f,
                                   grad_x_, grad_pi_);
        st != Status::ok)
      return st;

    // The leader descends f = -V_l, the follower ascends V_f.
    const Scalar bound = settings_.follower_logit_bound;
    parameter_step(problem, x_, settings_.step_leader, grad_x_, x_next_);
    projected_step(y_, settings_.step_follower, -grad_y_, y_next_,
                   [&](Matrix& y) { y = y.cwiseMax(-bound).cwiseMin(bound); });
    if (!all_finite(x_next_) || !all_finite(y_next_) || !std::isfinite(f)) return Status::numerical_failure;
    if (Status st = counts_.room_for(b.steps); st != Status::ok) return st;

    // Last, so that only a successful step moves the optimum's warm start.
    Scalar gap(0);
    if (report != nullptr) {
      Scalar optimal(0);
      if (Status st = Problem::optimal_value(mdp, optimum_, optimal); st != Status::ok) return st;
      gap = optimal - eval_f_.value_rho;
      if (!std::isfinite(gap)) return Status::numerical_failure;
    }

    if (Status st = this->commit_step(b, report); st != Status::ok) return st;
    y_ = y_next_;
    if (report != nullptr) {
      report->leader_value = -f;
      report->follower_value = eval_f_.value_rho;
      report->follower_gap = gap;
      report->follower_gap_converged = optimum_.result.converged;
    }
    return Status::ok;
  }

  /// The follower's logits y_k.
  const Matrix& y() const { return y_; }
  /// Writes pi_y of the current y into pi.
  void policy(Matrix& pi) const { policy_from_parameters<Scalar, S, AF>(Parameterization::softmax, y_, pi); }
  /// Soft value iteration settings and warm start of the reported gap.
  Optimum& follower_optimum() { return optimum_; }

 private:
  // Sampled mode: grad_y_ = the follower's sampled gradient, drawn from sampled_.rng_next (the
  // core's copy of rng_).
  Status sampled_follower_gradient(const Mdp<Scalar, S, AF>& mdp, std::int64_t& steps) {
    if constexpr (!kSampled) {
      (void)mdp, (void)steps;
      return Status::bad_setting;  // init() refuses this already
    } else {
      Scalar sampled_value(0);
      return sampled_policy_gradient(mdp, Parameterization::softmax, pi_y_, settings_.sampling, sampled_.rng_next,
                                     sampled_.trajectory, steps, sampled_value, grad_y_);
    }
  }

  const Problem* problem_ = nullptr;
  Settings settings_{};
  StepCounts counts_{};
  Params x_ = Params::Zero(), x_next_ = Params::Zero(), grad_x_ = Params::Zero();
  Matrix y_ = Matrix::Zero(), y_next_ = Matrix::Zero(), grad_y_ = Matrix::Zero();
  Matrix pi_y_ = Matrix::Zero(), grad_pi_ = Matrix::Zero();
  typename Problem::Model model_{};
  Evaluation<Scalar, S, AF> eval_f_{}, eval_l_{};
  Optimum optimum_{};
  Workspace ws_{};
  // Sampled mode: the random stream (state) and its scratch (none in an exact-only type).
  Rng rng_{1u};
  SampledScratch<Sources, BaselineRollouts<Trajectory<Scalar, kMaxHorizon>>> sampled_{};
};

}  // namespace pbrl
