#pragma once
// Incentive design (paper, eq. "incentive", Section "Simulation / Incentive design"; ERRATA item 6:
// no designer cost in the experiment), a game problem (game.hpp): two agents play a regularized
// zero-sum Markov game with reward
//   r_x(s,a) = r(s,a) + c_x * sigmoid(x(s,a)),   P_x = P (kRewardOnly),   x in a box of R^{S*A1*A2}
// and the designer, with its own model (P_id, r_id, an optional cost c(s); the agents' discount
// and initial distribution), minimizes f(pi) = -E[sum_t gamma^t (r_id - c)] over the equilibria
// NE(x). f is unregularized and does not depend on x. build() keeps c_x * sigmoid'(x) in the Model
// for vjp() and sample_vjp(). Policy gradients of f: docs/algorithm.md#incentive-design.

#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/model/data_layout.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/game.hpp"
#include "pbrl/model/detail/model_digest.hpp"
#include "pbrl/model/problem.hpp"

namespace pbrl {

/// Incentive design (paper, eq. "incentive"), a game problem (game.hpp): two agents play a
/// regularized zero-sum Markov game with reward r_x(s,a) = r(s,a) + c_x * sigmoid(x(s,a)), and the
/// designer, with its own model, minimizes f(pi) = -E[sum_t gamma^t (r_id - c)] over the
/// equilibria NE(x). More: the comment atop problems/incentive_design.hpp.
/// @tparam Scalar_ float or double
/// @tparam S the number of states
/// @tparam A1 agent 1's (the maximizer's) actions
/// @tparam A2 agent 2's (the minimizer's) actions
template <typename Scalar_, int S, int A1, int A2>
class IncentiveDesign {
 public:
  /// The floating-point type.
  using Scalar = Scalar_;
  /// The number of states.
  static constexpr int kStates = S;
  /// Agent 1's actions.
  static constexpr int kActions1 = A1;
  /// Agent 2's actions.
  static constexpr int kActions2 = A2;
  /// The dimension of x: one incentive per (s, a1, a2).
  static constexpr int kParams = S * A1 * A2;
  /// Rows of Data::transition, the agents' P: one per (s, a1, a2).
  static constexpr int kTransitionRows = S * A1 * A2;
  /// x enters the reward only: P_x = P (game.hpp's is_reward_only).
  static constexpr bool kRewardOnly = true;
  /// The upper-level parameters x.
  using Params = Vector<Scalar, kParams>;
  /// Agent 1's policies, S x A1.
  using Matrix1 = StateActionMatrix<Scalar, S, A1>;
  /// Agent 2's policies, S x A2.
  using Matrix2 = StateActionMatrix<Scalar, S, A2>;
  /// A joint policy or weights, S x (A1*A2).
  using Joint = JointMatrix<Scalar, S, A1, A2>;
  /// The agents' game M(x).
  using GameType = MarkovGame<Scalar, S, A1, A2>;
  /// The designer's MDP over joint actions.
  using DesignerMdp = Mdp<Scalar, S, A1 * A2>;
  /// S, the number of states: an axis of Data's arrays (data_layout.hpp).
  using States = layout::States<S>;
  /// A1, agent 1's actions: an axis of Data's arrays (data_layout.hpp).
  struct Actions1 : layout::Axis<1, A1> {
    static constexpr const char* name = "actions1";  ///< its key in a pbrl-codegen manifest
  };
  /// A2, agent 2's actions: an axis of Data's arrays (data_layout.hpp).
  struct Actions2 : layout::Axis<2, A2> {
    static constexpr const char* name = "actions2";  ///< its key in a pbrl-codegen manifest
  };

  /// Caller storage for what build() takes from x, and upper()'s scratch.
  struct Model {
    /// r_x, read by the game view.
    Scalar reward[S * A1 * A2];
    /// c_x sigmoid'(x), read by vjp() and sample_vjp().
    Scalar slope[S * A1 * A2];
    /// r_id - c (upper()'s scratch).
    Scalar designer_reward[S * A1 * A2];
    /// pi1 x pi2 (upper()'s scratch).
    Joint joint_policy;
  };

  /// What init() takes: the arrays (the caller's, read in place, unchanged while used) and numbers.
  struct Data {
    /// The agents' r(s,a1,a2) at [(s*A1 + a1)*A2 + a2].
    const Scalar* reward = nullptr;
    /// The agents' P(s'|s,a1,a2); rows are distributions.
    const Scalar* transition = nullptr;
    /// rho > 0, summing to one (the designer's too).
    const Scalar* initial = nullptr;
    /// gamma, of the agents' game and of the designer's MDP, in [0, 1).
    Scalar discount = Scalar(0.9);
    /// Agent 1's tau*h1 (one tau for both agents).
    Regularizer<Scalar, S, A1> regularizer1{};
    /// Agent 2's tau*h2.
    Regularizer<Scalar, S, A2> regularizer2{};
    /// The designer's r_id(s,a1,a2); finite.
    const Scalar* designer_reward = nullptr;
    /// The designer's P_id(s'|s,a1,a2); rows are distributions.
    const Scalar* designer_transition = nullptr;
    /// The designer's cost c(s), finite; nullptr: no cost (the paper's experiment).
    const Scalar* designer_cost = nullptr;
    /// c_x, the incentive's scale; finite.
    Scalar incentive_scale = Scalar(0.2);
    /// The box X on x.
    Box<Scalar> incentive{Scalar(-5), Scalar(5)};

    /// Every field of the model, in order, with its layout (data_layout.hpp). The agents'
    /// transition is the lower level's.
    template <class Visitor>
    void visit(Visitor& v) const {
      v(reward, layout::Table<States, Actions1, Actions2>{}, "reward");
      v(transition, layout::Transition<States, Actions1, Actions2, States>{}, "transition");
      v(initial, layout::Initial<States>{}, "initial");
      v(discount, "discount");
      v(regularizer1, Actions1{}, "regularizer1");
      v(regularizer2, Actions2{}, "regularizer2");
      v(designer_reward, layout::Table<States, Actions1, Actions2>{}, "designer_reward");
      v(designer_transition, layout::Transition<States, Actions1, Actions2, States>{}, "designer_transition");
      v(designer_cost, layout::OptionalTable<States>{}, "designer_cost");
      v(incentive_scale, "incentive_scale");
      v(incentive, "incentive");
    }
  };
  /// The problem's kind, which a checkpoint records (model_digest.hpp).
  static constexpr ProblemKind kProblemKind = ProblemKind::incentive_design;

  /// Caller storage of value_at_best_response (bilevel_value.hpp).
  struct BilevelValueWorkspace {
    /// The caps and the certificate's tolerance.
    BestResponseSettings<Scalar> settings{};
    /// Scratch: r_x, then upper()'s scratch.
    Model model;
    /// After a success: the regularized NE of M(x) in nash.pi1, nash.pi2 (and nash.value, the
    /// game's value), warm start of the next call.
    NashWorkspace<Scalar, S, A1, A2> nash{};
    /// After a success: the equilibrium's certificate.
    NashResult<Scalar> equilibrium{};
    /// Scratch of the designer's evaluation.
    EvaluationWorkspace<Scalar, S, EvaluationMethod::direct> evaluation_workspace;
    /// The designer's evaluation of the NE.
    Evaluation<Scalar, S, A1 * A2> evaluation{};
    /// @{
    /// upper()'s gradients (scratch, not used).
    Params grad_x;
    Matrix1 grad_pi1;
    Matrix2 grad_pi2;
    /// @}
  };

  /// Validates all data and keeps it (the arrays by pointer).
  /// @return ok; the game's validate() statuses; null_pointer; not_finite; bad_transition (the
  ///         designer's); bad_setting (incentive_scale not finite, an invalid box). On error the
  ///         problem stays as it was.
  Status init(const Data& data) {
    GameType base{data.reward, data.transition, data.initial, data.discount, data.regularizer1, data.regularizer2};
    if (Status st = validate(base); st != Status::ok) return st;
    if (data.designer_reward == nullptr) return Status::null_pointer;
    if (!detail::all_finite(data.designer_reward, int(Params::SizeAtCompileTime))) return Status::not_finite;
    if (Status st = validate_transition<Scalar, S, A1 * A2>(data.designer_transition); st != Status::ok) return st;
    if (data.designer_cost != nullptr && !detail::all_finite(data.designer_cost, S))
      return Status::not_finite;
    if (!std::isfinite(data.incentive_scale)) return Status::bad_setting;
    if (!valid(data.incentive)) return Status::bad_setting;
    base_ = base;
    designer_reward_ = data.designer_reward;
    designer_transition_ = data.designer_transition;
    designer_cost_ = data.designer_cost;
    scale_ = data.incentive_scale;
    box_ = data.incentive;
    digest_ = detail::model_digest<Scalar>(data);
    initialized_ = true;
    return Status::ok;
  }

  /// The agents' game without incentive (r, not r_x).
  const GameType& base_game() const { return base_; }
  /// The box X on x.
  const Box<Scalar>& box() const { return box_; }
  /// The digest of the data init() took (model_digest.hpp; checkpoints record it).
  const ModelDigest& model_digest() const { return digest_; }
  /// The lower level's transition array alone replaced (Solver::swap_transition, EstimatedModel's
  /// commit): validated as init() validates it, O(kTransitionRows * S), and the model digest's
  /// transition half follows; every other array stays.
  /// @return ok; not_initialized; null_pointer; not_finite; bad_transition. On error nothing
  ///         changes.
  Status replace_transition(const Scalar* transition) {
    if (!initialized_) return Status::not_initialized;
    return detail::replace_transition<Scalar, S, kTransitionRows>(base_.transition, digest_, transition);
  }
  /// c_x.
  Scalar incentive_scale() const { return scale_; }

  /// Checks that x is finite and in the box.
  /// @return ok; not_initialized; not_finite (before out_of_bounds); out_of_bounds.
  // One pass when x is in the box: the box is finite (init), so that x is finite too.
  Status validate_parameters(const Params& x) const {
    if (!initialized_) return Status::not_initialized;
    if (contains(box_, x)) return Status::ok;
    return all_finite(x) ? Status::out_of_bounds : Status::not_finite;
  }
  /// Projects x onto the box, in place.
  void project_parameters(Params& x) const { project(box_, x); }

  /// M(x), the agents' game with reward r_x, into model and (as a view) game; keeps
  /// c_x sigmoid'(x) in model for vjp() and sample_vjp().
  /// @return validate_parameters(x)'s statuses; on error model and game are unchanged.
  Status build(const Params& x, Model& model, GameType& game) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    for (int i = 0; i < kParams; ++i) {
      const Scalar sg = sigmoid(x(i));
      model.reward[i] = base_.reward[i] + scale_ * sg;
      model.slope[i] = scale_ * sg * (Scalar(1) - sg);
    }
    game = base_;
    game.reward = model.reward;
    return Status::ok;
  }

  /// grad += scale * J^T(w, v) = scale * w .* c_x sigmoid'(x) at the x model was built for;
  /// v does not enter (P_x = P).
  void vjp(const Model& model, const Joint& w, const StateVector<Scalar, S>& /*v*/, Scalar scale, Params& grad) const {
    const Eigen::Map<const Params> flat(w.data());
    for (int i = 0; i < kParams; ++i) grad(i) += scale * flat(i) * model.slope[i];
  }

  /// Per-sample form of vjp() for sampled mode (game.hpp; a = a1*A2 + a2, the joint action):
  /// grad += reward_weight * grad_x r_x(s,a); P does not depend on x, so the transition term is 0.
  void sample_vjp(const Model& model, const VjpSample<Scalar>& sample, Params& grad) const {
    const int i = sample.s * A1 * A2 + sample.a;
    grad(i) += sample.reward_weight * model.slope[i];
  }

  /// The designer's MDP over joint actions (unregularized); reads model.designer_reward, which
  /// upper() fills (r_id - c).
  DesignerMdp designer_mdp(const Model& model) const {
    return DesignerMdp{designer_cost_ != nullptr ? model.designer_reward : designer_reward_, designer_transition_,
                       base_.initial, base_.discount, Regularizer<Scalar, S, A1 * A2>{}};
  }

  /// f(pi) = -V_id^{pi}(rho) of the joint policy pi1 x pi2, and its gradients; grad_x f = 0.
  /// @return ok; not_initialized; validate_policy()'s statuses (pi1, pi2); the evaluation's
  ///         statuses. On error f and the gradients are unchanged (model and scratch are scratch).
  template <EvaluationMethod M>
  Status upper(const Matrix1& pi1, const Matrix2& pi2, Model& model, EvaluationWorkspace<Scalar, S, M>& ws,
               Evaluation<Scalar, S, A1 * A2>& scratch, Scalar& f, Params& grad_x, Matrix1& grad_pi1,
               Matrix2& grad_pi2) const {
    if (!initialized_) return Status::not_initialized;
    if (Status st = validate_policy(pi1); st != Status::ok) return st;
    if (Status st = validate_policy(pi2); st != Status::ok) return st;
    if (designer_cost_ != nullptr)
      for (int s = 0; s < S; ++s)
        for (int j = 0; j < A1 * A2; ++j)
          model.designer_reward[s * A1 * A2 + j] = designer_reward_[s * A1 * A2 + j] - designer_cost_[s];
    joint_policy(pi1, pi2, model.joint_policy);
    const DesignerMdp designer = designer_mdp(model);
    if (Status st = detail::evaluate_formed_policy(designer, model.joint_policy, ws, scratch); st != Status::ok)
      return st;
    f = -scratch.value_rho;
    grad_x.setZero();
    // The two marginals of Q_id in registers, then scaled by -d_id(s) once.
    for (int s = 0; s < S; ++s) {
      Scalar q2[A2];
      for (int a2 = 0; a2 < A2; ++a2) q2[a2] = Scalar(0);
      for (int a1 = 0; a1 < A1; ++a1) {
        Scalar q1(0);
        for (int a2 = 0; a2 < A2; ++a2) {
          const Scalar q = scratch.q(s, a1 * A2 + a2);
          q1 += pi2(s, a2) * q;
          q2[a2] += pi1(s, a1) * q;
        }
        grad_pi1(s, a1) = -scratch.occupancy(s) * q1;
      }
      for (int a2 = 0; a2 < A2; ++a2) grad_pi2(s, a2) = -scratch.occupancy(s) * q2[a2];
    }
    return Status::ok;
  }

  /// The bilevel answer: the designer's reward -f(pi_NE(x)) = V_id^{pi_NE}(rho) at the exact
  /// regularized Nash equilibrium of M_tau(x) (regularized_nash_equilibrium, warm-started from
  /// ws.nash), not at the agents' current policies. out.lower_level_gap = psi + the bound on its
  /// computation error (ws.equilibrium has both), out.converged = it <= ws.settings.tolerance,
  /// out.iterations = Shapley sweeps. Work: regularized_nash_equilibrium's, and one S x S LU.
  /// @return ok; validate_parameters(x)'s statuses; bad_setting (ws.settings);
  ///         regularized_nash_equilibrium's and upper()'s statuses. On error out is unchanged (ws
  ///         is scratch; the equilibrium in ws.nash changes only when regularized_nash_equilibrium
  ///         succeeds).
  Status value_at_best_response(const Params& x, BilevelValueWorkspace& ws, BestResponseValue<Scalar>& out) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    if (Status st = validate(ws.settings); st != Status::ok) return st;
    GameType game;
    if (Status st = build(x, ws.model, game); st != Status::ok) return st;
    NashResult<Scalar> equilibrium;
    if (Status st = regularized_nash_equilibrium(game, ws.settings, ws.nash, equilibrium); st != Status::ok)
      return st;
    ws.equilibrium = equilibrium;
    Scalar f(0);
    if (Status st = upper(ws.nash.pi1, ws.nash.pi2, ws.model, ws.evaluation_workspace, ws.evaluation, f,
                          ws.grad_x, ws.grad_pi1, ws.grad_pi2);
        st != Status::ok)
      return st;
    const Scalar gap = equilibrium.nikaido_isoda + equilibrium.nikaido_isoda_error;
    out.value = -f;
    out.lower_level_gap = gap;
    out.iterations = equilibrium.sweeps;
    out.converged = equilibrium.converged;
    return Status::ok;
  }

 private:
  GameType base_{};
  const Scalar* designer_reward_ = nullptr;
  const Scalar* designer_transition_ = nullptr;
  const Scalar* designer_cost_ = nullptr;
  Scalar scale_ = Scalar(0.2);
  Box<Scalar> box_{};
  ModelDigest digest_{};
  bool initialized_ = false;
};

}  // namespace pbrl
