#pragma once
// The meta-gradient baseline of the incentive-design experiment (paper, Section "Simulation /
// Incentive design"; Yang et al. 2021), for a game problem (game.hpp) whose transitions do not
// depend on x (kRewardOnly, checked at compile time). Per step the agents take T policy-gradient
// steps under r_{x_k} (player 1 ascends V, player 2 descends it), then the designer steps x along
// the exact gradient of its objective through the agents' last step (with T = 1, the paper's
// setting, the exact gradient of x -> f(x, pi(y_k + eta*G(x, y_k)))). learn_incentive = false
// holds x constant (the paper's "start line").
// Sampled mode: the agents' gradients and the mixed derivative from rollouts
// (sampling/detail/game_estimators.hpp), (T + 1)*B*H environment steps a step (T*B*H with the incentive
// held); the Rng advances only with a successful step.
// The update and the mixed derivative, derived: docs/algorithm.md#the-baselines.

#include "pbrl/baselines/detail/baseline_core.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/game.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/sampling/detail/game_estimators.hpp"
#include "pbrl/solver/detail/projected_step.hpp"
#include "pbrl/solver/settings.hpp"

namespace pbrl {

/// A direction (u1, u2) of a joint policy (pi1, pi2): references to the caller's matrices.
template <typename Scalar, int S, int A1, int A2>
struct JointDirection {
  const StateActionMatrix<Scalar, S, A1>& u1;  ///< player 1's
  const StateActionMatrix<Scalar, S, A2>& u2;  ///< player 2's
};

/// mu_dot = d/d eps mu_{(pi1 + eps u1) x (pi2 + eps u2)}, the joint occupancy's directional
/// derivative at the point `at` (its policies pi1, pi2 and d, their state occupancy; its value
/// and logs are not read) along u. mdp1 = player1_mdp(game, pi2) (its chain under pi1 is the joint
/// chain). `warm` is the sweeps' warm start of d' (kept by the caller).
/// Pass factors_current = true only right after evaluate(mdp1, pi1, ws, ...): the direct method
/// then reuses that factorization.
/// @return ok; null_pointer, bad_discount or bad_regularization (the settings of game and mdp1);
///         bad_setting (the sweeps settings); not_finite or bad_policy (pi1, pi2); not_finite (d,
///         u1, u2, warm); numerical_failure. On error mu_dot and warm are unchanged (ws is
///         scratch).
template <typename Scalar, int S, int A1, int A2, EvaluationMethod M>
Status occupancy_directional_derivative(const MarkovGame<Scalar, S, A1, A2>& game, const Mdp<Scalar, S, A1>& mdp1,
                                        const GamePoint<Scalar, S, A1, A2>& at,
                                        const JointDirection<Scalar, S, A1, A2>& u,
                                        EvaluationWorkspace<Scalar, S, M>& ws, StateVector<Scalar, S>& warm,
                                        JointMatrix<Scalar, S, A1, A2>& mu_dot, bool factors_current = false) {
  const StateActionMatrix<Scalar, S, A1>& pi1 = at.pi1;
  const StateActionMatrix<Scalar, S, A2>& pi2 = at.pi2;
  const StateVector<Scalar, S>& d = at.occupancy;
  const StateActionMatrix<Scalar, S, A1>& u1 = u.u1;
  const StateActionMatrix<Scalar, S, A2>& u2 = u.u2;
  if (Status st = detail::check_game(game); st != Status::ok) return st;
  if (Status st = detail::check_call(mdp1, pi1, ws); st != Status::ok) return st;
  if (Status st = validate_policy(pi2); st != Status::ok) return st;
  if (!all_finite(d) || !all_finite(u1) || !all_finite(u2) || !all_finite(warm)) return Status::not_finite;
  const auto P = game.P();
  ws.rhs.setZero();
  for (int s = 0; s < S; ++s)
    for (int a1 = 0; a1 < A1; ++a1)
      for (int a2 = 0; a2 < A2; ++a2) {
        const Scalar w = d(s) * (u1(s, a1) * pi2(s, a2) + pi1(s, a1) * u2(s, a2));
        if (w != Scalar(0)) ws.rhs.noalias() += w * P.row((s * A1 + a1) * A2 + a2).transpose();
      }
  ws.rhs *= game.discount;
  if (Status st = detail::solve_occupancy(mdp1, pi1, ws, warm, factors_current); st != Status::ok) return st;
  for (int s = 0; s < S; ++s)
    for (int a1 = 0; a1 < A1; ++a1)
      mu_dot.row(s).segment(a1 * A2, A2) = (ws.occupancy(s) * pi1(s, a1) + d(s) * u1(s, a1)) * pi2.row(s) +
                                           (d(s) * pi1(s, a1)) * u2.row(s);
  return Status::ok;
}

/// MetaGradient's settings: GradientSettings (solver/settings.hpp; sampled mode's Monte-Carlo
/// agents' and mixed gradients), the agents' policies and steps, and the designer's.
template <typename Scalar>
struct MetaGradientSettings : GradientSettings {
  PolicySet<Scalar> policy{};          ///< agents' parameterization and set (softmax: the paper's)
  int agent_steps = 1;                 ///< T, agents' policy-gradient steps per iteration, in [1, kMaxInnerSteps]
  Scalar agent_step = Scalar(0.1);     ///< eta, the agents' step size (finite, > 0)
  Scalar designer_step = Scalar(0.1);  ///< beta, the designer's step size (finite, > 0)
  bool learn_incentive = true;         ///< false: x held constant (the start line)

  /// Each field once, with its domain and its name (visitor: v(field, Domain, name)).
  template <class Visitor>
  void visit(Visitor& v) const {
    using namespace domain;
    GradientSettings::visit(v);
    v(policy.parameterization, policy_set(), "policy.parameterization");
    v(policy.floor, policy_set(), "policy.floor");
    v(policy.logit_bound, policy_set(), "policy.logit_bound");
    v(agent_steps, range(1, kMaxInnerSteps), "agent_steps");
    v(agent_step, step_size(), "agent_step");
    v(designer_step, step_size(), "designer_step");
    v(learn_incentive, any(), "learn_incentive");
  }
};

/// What one MetaGradient step reports: the iteration k (of x_k), the environment steps and the
/// evaluations stopped at max_sweeps are BaselineReport's (baselines/detail/baseline_core.hpp).
template <typename Scalar>
struct MetaGradientReport : BaselineReport {
  Scalar upper_objective = Scalar(0);     ///< f(x_k, pi_{k+1}), the agents' policy after their step(s)
  Scalar agents_value = Scalar(0);        ///< V^{pi_k}(rho) on M(x_k), before the agents' steps (sampled mode: V_hat)
  Scalar meta_gradient_norm = Scalar(0);  ///< |d f / dx| (0 with the incentive held)

  /// Every field, with its name and meaning (visitor: v(field, name, meaning)).
  template <class Visitor>
  void visit(Visitor& v) const {
    visit_counts(v);
    v(upper_objective, "upper_objective", "f(x_k, pi_{k+1}), the agents' policy after their step(s)");
    v(agents_value, "agents_value", "V(rho) of pi_k on M(x_k), before the agents' steps (sampled mode: estimated)");
    v(meta_gradient_norm, "meta_gradient_norm", "|df/dx| (0 with the incentive held)");
  }
};

/// Checks MetaGradient's settings: every field's domain (the policy set is checked by init(),
/// against the action counts).
/// @return ok, bad_step_size or bad_setting.
template <typename Scalar>
Status validate(const MetaGradientSettings<Scalar>& s) {
  return check_domains(s);
}

namespace detail {

// w <- Jproj^T w for the projection onto the policy set taken at the point z (y = Proj(z)).
//   softmax (box on logits): zero where z was clipped;
//   direct (floored simplex): with F = {a : y(s,a) > floor}, w_a - mean_F(w) on F, 0 elsewhere.
template <typename Scalar, int S, int A>
void projection_vjp(const PolicySet<Scalar>& set, const StateActionMatrix<Scalar, S, A>& z,
                    const StateActionMatrix<Scalar, S, A>& y, StateActionMatrix<Scalar, S, A>& w) {
  if (set.parameterization == Parameterization::softmax) {
    for (int s = 0; s < S; ++s)
      for (int a = 0; a < A; ++a)
        if (std::abs(z(s, a)) > set.logit_bound) w(s, a) = Scalar(0);
    return;
  }
  for (int s = 0; s < S; ++s) {
    Scalar sum(0);
    int free = 0;
    for (int a = 0; a < A; ++a)
      if (y(s, a) > set.floor) {
        sum += w(s, a);
        ++free;
      }
    const Scalar mean = free > 0 ? sum / Scalar(free) : Scalar(0);
    for (int a = 0; a < A; ++a) w(s, a) = y(s, a) > set.floor ? w(s, a) - mean : Scalar(0);
  }
}

}  // namespace detail

/// The meta-gradient baseline of the incentive-design experiment, for a game problem (game.hpp)
/// whose transitions do not depend on x. Per step the agents take T policy-gradient steps under
/// r_{x_k} (player 1 ascends V, player 2 descends it), then the designer steps x along the exact
/// gradient of its objective through the agents' last step (after Yang et al. 2021);
/// learn_incentive = false holds x constant. run() and the accessors of x, the counts, the
/// settings, the workspace and the Rng are the core's (baselines/detail/baseline_core.hpp). More:
/// the comment atop baselines/meta_gradient.hpp, `docs/algorithm.md#the-baselines`.
/// @tparam GameProblem a class of the game problem interface (game.hpp) with kRewardOnly (checked
///         at compile time); sampled mode needs its sample_vjp
/// @tparam Method how policies are evaluated (direct LU or sweeps)
/// @tparam Sources exact_and_sampled, or exact (solver/settings.hpp): the type holds no
///         sampled-mode scratch (second random stream, trajectory buffer, sampled product) and has
///         no sampled code; init() refuses GradientMode::sampled
template <class GameProblem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class MetaGradient : public BaselineCore<MetaGradient<GameProblem, Method, Sources>, GameProblem,
                                         MetaGradientSettings<typename GameProblem::Scalar>,
                                         MetaGradientReport<typename GameProblem::Scalar>, Method, Sources> {
  static_assert(GameProblem::kRewardOnly,
                "the exact meta-gradient needs transitions that do not depend on x (kRewardOnly)");
  using Core = BaselineCore<MetaGradient, GameProblem, MetaGradientSettings<typename GameProblem::Scalar>,
                            MetaGradientReport<typename GameProblem::Scalar>, Method, Sources>;
  friend Core;

 public:
  /// Whether the type carries sampled mode.
  using Core::kSampled;
  /// The problem's floating-point type.
  using typename Core::Scalar;
  /// The number of states.
  static constexpr int S = GameProblem::kStates;
  /// Player 1's (the maximizer's) number of actions.
  static constexpr int A1 = GameProblem::kActions1;
  /// Player 2's (the minimizer's) number of actions.
  static constexpr int A2 = GameProblem::kActions2;
  /// The upper-level parameters x, the designer's.
  using typename Core::Params;
  /// An S x A1 matrix: y1, player 1's parameters, or its policy.
  using Matrix1 = StateActionMatrix<Scalar, S, A1>;
  /// An S x A2 matrix: y2, player 2's parameters, or its policy.
  using Matrix2 = StateActionMatrix<Scalar, S, A2>;
  /// The agents' zero-sum Markov game M(x).
  using GameType = MarkovGame<Scalar, S, A1, A2>;
  /// MetaGradientSettings of the problem's Scalar.
  using Settings = MetaGradientSettings<Scalar>;
  /// MetaGradientReport of the problem's Scalar.
  using Report = MetaGradientReport<Scalar>;
  /// The policy evaluations' workspace.
  using typename Core::Workspace;

  /// Starts at (x0, y1, y2): validates everything, then sets the iterates, the counts and the
  /// random stream (from settings.seed).
  /// @return ok; bad_setting or bad_step_size (settings, the policy set; sampled mode in an
  ///         exact-only type or without the problem's sample_vjp); not_initialized, not_finite or
  ///         out_of_bounds (x0, the problem); not_finite or bad_policy (y1, y2). On error the
  ///         baseline keeps its previous state.
  Status init(const GameProblem& problem, const Settings& settings, const Params& x0, const Matrix1& y1,
              const Matrix2& y2) {
    if (Status st = validate(settings); st != Status::ok) return st;
    if (Status st = detail::validate_for_actions<Scalar, A1, A2>(settings.policy); st != Status::ok) return st;
    if (Status st = detail::validate_start(problem, x0, settings.policy, y1, y2); st != Status::ok) return st;
    if (Status st = Core::check_mode(settings, has_game_sample_vjp<GameProblem>::value); st != Status::ok) return st;
    this->start(problem, settings, x0);
    y1_ = y1;
    y2_ = y2;
    warm_.setZero();
    meta_.setZero();
    eval1_ = Evaluation<Scalar, S, A1>{};
    eval_upper_ = Evaluation<Scalar, S, A1 * A2>{};
    return Status::ok;
  }

  /// One iteration: the agents' steps, then (learn_incentive) the designer's.
  /// @return ok; not_initialized; count_overflow (a count has no room for another step);
  ///         bad_setting (the workspace's sweep settings); the statuses of the problem's build()
  ///         and upper(), of player1_mdp(), evaluate() and occupancy_directional_derivative(), and
  ///         of the sampled estimators; numerical_failure. On error x, y1, y2, the meta-gradient,
  ///         the counts (and in sampled mode the Rng) are unchanged.
  Status step(Report* report = nullptr) {
    BaselineStep b;
    if (Status st = this->begin_step(b); st != Status::ok) return st;
    const GameProblem& problem = *problem_;
    const Parameterization param = settings_.policy.parameterization;
    const Scalar eta = settings_.agent_step;
    GameType game;
    if (Status st = problem.build(x_, model_, game); st != Status::ok) return st;

    // 1. The agents' policy-gradient steps.
    Mdp<Scalar, S, A1> mdp1;
    y1_next_ = y1_;
    y2_next_ = y2_;
    Scalar value_before(0);
    for (int t = 0; t < settings_.agent_steps; ++t) {
      policy_from_parameters<Scalar, S, A1>(param, y1_next_, pi1_);
      policy_from_parameters<Scalar, S, A2>(param, y2_next_, pi2_);
      Scalar value(0);
      if (b.sampled) {
        if constexpr (kSampled) {
          if (Status st = sampled_game_policy_gradient(game, param, pi1_, pi2_, settings_.sampling, sampled_.rng_next,
                                                       sampled_.trajectory, b.steps, value, &w1_, &w2_);
              st != Status::ok)
            return st;
          w2_ = -w2_;
        }
      } else {
        if (Status st = player1_mdp(game, pi2_, induced1_, mdp1); st != Status::ok) return st;
        if (Status st = evaluate(mdp1, pi1_, ws_, eval1_); st != Status::ok) return st;
        value = eval1_.value_rho;
        g1_.setZero();
        g2_.setZero();
        add_game_policy_gradients(game, {pi1_, pi2_, eval1_.value, eval1_.occupancy}, Scalar(1), &g1_, Scalar(-1),
                                  &g2_);
        chain_policy_gradient<Scalar, S, A1>(param, pi1_, g1_, w1_);
        chain_policy_gradient<Scalar, S, A2>(param, pi2_, g2_, w2_);
      }
      if (t == 0) value_before = value;
      z1_ = y1_next_ + eta * w1_;
      z2_ = y2_next_ + eta * w2_;
      if (!all_finite(z1_) || !all_finite(z2_)) return Status::numerical_failure;
      y1_next_ = z1_;
      y2_next_ = z2_;
      project_policy_set<Scalar, S, A1>(settings_.policy, y1_next_);
      project_policy_set<Scalar, S, A2>(settings_.policy, y2_next_);
    }
    // pi1_, pi2_, z1_, z2_ (exact mode: eval1_, mdp1 too) now describe the last agents' step.

    // 2. The designer's objective at the agents' new policy, and its meta-gradient.
    policy_from_parameters<Scalar, S, A1>(param, y1_next_, pi1_next_);
    policy_from_parameters<Scalar, S, A2>(param, y2_next_, pi2_next_);
    Scalar f(0);
    if (Status st = problem.upper(pi1_next_, pi2_next_, model_, ws_, eval_upper_, f, meta_next_, f1_, f2_);
        st != Status::ok)
      return st;
    x_next_ = x_;
    Scalar norm(0);
    if (settings_.learn_incentive) {
      chain_policy_gradient<Scalar, S, A1>(param, pi1_next_, f1_, w1_);  // grad_{y'} f
      chain_policy_gradient<Scalar, S, A2>(param, pi2_next_, f2_, w2_);
      detail::projection_vjp<Scalar, S, A1>(settings_.policy, z1_, y1_next_, w1_);
      detail::projection_vjp<Scalar, S, A2>(settings_.policy, z2_, y2_next_, w2_);
      chain_policy_gradient<Scalar, S, A1>(param, pi1_, w1_, u1_);  // u = Jpi w (Jpi symmetric)
      chain_policy_gradient<Scalar, S, A2>(param, pi2_, w2_, u2_);
      u2_ = -u2_;  // player 2 descends V
      warm_next_ = warm_;
      if (b.sampled) {
        if constexpr (kSampled && has_game_sample_vjp<GameProblem>::value) {  // init() refuses sampled mode otherwise
          if (Status st = sampled_directional_vjp(problem, model_, game, pi1_, pi2_, u1_, u2_, settings_.sampling,
                                                  sampled_.rng_next, sampled_.trajectory, b.steps, sampled_.mixed);
              st != Status::ok)
            return st;
          meta_next_ += eta * sampled_.mixed;
        }
      } else {
        if (Status st = occupancy_directional_derivative(game, mdp1, {pi1_, pi2_, eval1_.value, eval1_.occupancy},
                                                         {u1_, u2_}, ws_, warm_next_, mu_dot_, false);
            st != Status::ok)
          return st;
        problem.vjp(model_, mu_dot_, eval1_.value, eta, meta_next_);
      }
      norm = meta_next_.norm();
      parameter_step(problem, x_, settings_.designer_step, meta_next_, x_next_);
    } else {
      meta_next_.setZero();
      warm_next_ = warm_;
    }
    if (!all_finite(x_next_) || !all_finite(y1_next_) || !all_finite(y2_next_) || !std::isfinite(f) ||
        !std::isfinite(norm))
      return Status::numerical_failure;
    if (Status st = this->commit_step(b, report); st != Status::ok) return st;

    y1_ = y1_next_;
    y2_ = y2_next_;
    meta_ = meta_next_;
    warm_ = warm_next_;
    if (report != nullptr) {
      report->upper_objective = f;
      report->agents_value = value_before;
      report->meta_gradient_norm = norm;
    }
    return Status::ok;
  }

  /// Player 1's parameters y1_k.
  const Matrix1& y1() const { return y1_; }
  /// Player 2's parameters y2_k.
  const Matrix2& y2() const { return y2_; }
  /// d f / dx of the last successful step (0 with the incentive held).
  const Params& meta_gradient() const { return meta_; }
  /// Writes player 1's policy of the current y1 into pi.
  void policy1(Matrix1& pi) const { policy_from_parameters<Scalar, S, A1>(settings_.policy.parameterization, y1_, pi); }
  /// Writes player 2's policy of the current y2 into pi.
  void policy2(Matrix2& pi) const { policy_from_parameters<Scalar, S, A2>(settings_.policy.parameterization, y2_, pi); }

 private:
  const GameProblem* problem_ = nullptr;
  Settings settings_{};
  StepCounts counts_{};
  Params x_ = Params::Zero(), meta_ = Params::Zero();
  Matrix1 y1_ = Matrix1::Zero();
  Matrix2 y2_ = Matrix2::Zero();
  StateVector<Scalar, S> warm_ = StateVector<Scalar, S>::Zero();
  // Scratch of one step.
  Params x_next_ = Params::Zero(), meta_next_ = Params::Zero();
  Matrix1 y1_next_ = Matrix1::Zero(), z1_ = Matrix1::Zero(), pi1_ = Matrix1::Zero(), pi1_next_ = Matrix1::Zero();
  Matrix1 g1_ = Matrix1::Zero(), w1_ = Matrix1::Zero(), u1_ = Matrix1::Zero(), f1_ = Matrix1::Zero();
  Matrix2 y2_next_ = Matrix2::Zero(), z2_ = Matrix2::Zero(), pi2_ = Matrix2::Zero(), pi2_next_ = Matrix2::Zero();
  Matrix2 g2_ = Matrix2::Zero(), w2_ = Matrix2::Zero(), u2_ = Matrix2::Zero(), f2_ = Matrix2::Zero();
  StateVector<Scalar, S> warm_next_ = StateVector<Scalar, S>::Zero();
  JointMatrix<Scalar, S, A1, A2> mu_dot_ = JointMatrix<Scalar, S, A1, A2>::Zero();
  InducedModel<Scalar, S, A1> induced1_{};
  typename GameProblem::Model model_{};
  Evaluation<Scalar, S, A1> eval1_{};
  Evaluation<Scalar, S, A1 * A2> eval_upper_{};
  Workspace ws_{};
  // Sampled mode: the random stream (state) and its scratch (none in an exact-only type).
  Rng rng_{};
  struct SampledState {
    Rng rng_next{};
    GameTrajectory<Scalar, kMaxHorizon> trajectory{};
    Params mixed = Params::Zero();  // the sampled mixed derivative grad_x D_u V(rho)
  };
  SampledScratch<Sources, SampledState> sampled_{};
};

}  // namespace pbrl
