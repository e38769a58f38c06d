#pragma once
// Reward shaping (paper, Section 2.2): a task M_tau = {S, A, r, P, tau_f*h} and a shaped MDP
// M_tau(x) = {S, A, r + x, P, tau*h} whose optimal policy should do well on the task:
//   min_{x in X, y} f(x, y) = -V^{pi_y}_{task}(rho)   s.t.  y optimal for M_tau(x).
// x holds one shaping term per (s, a) in a box. The lower level is usually regularized
// (tau > 0) and the task not (tau_f = 0): shaping then sharpens the regularized learner towards
// the task's optimum, which is what the upper level rewards.
// J^T(w, v) = w (flattened): the shaping enters the reward linearly and P does not depend on x;
// per sample (sampled mode), grad_x r_x(s,a) = e_{(s,a)}.

#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/model/data_layout.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/detail/model_digest.hpp"
#include "pbrl/model/problem.hpp"

namespace pbrl {

/// Reward shaping (paper, Section 2.2), a problem of problem.hpp: a task M_tau = {S, A, r, P,
/// tau_f*h} and a shaped MDP M_tau(x) = {S, A, r + x, P, tau*h} whose optimal policy should do
/// well on the task: min_{x in X, y} -V^{pi_y}_{task}(rho) s.t. y optimal for M_tau(x).
/// x holds one shaping term per (s, a) in a box. A complete problem of the interface: the model
/// for writing others (docs/algorithm.md).
/// @tparam Scalar_ float or double
/// @tparam S the number of states
/// @tparam A the number of actions
template <typename Scalar_, int S, int A>
class RewardShaping {
 public:
  /// The floating-point type.
  using Scalar = Scalar_;
  /// The number of states.
  static constexpr int kStates = S;
  /// The number of actions.
  static constexpr int kActions = A;
  /// The dimension of x: one shaping term per (s, a), at [s*A + a].
  static constexpr int kParams = S * A;
  /// Rows of Data::transition, the lower level's P: one per (s, a).
  static constexpr int kTransitionRows = S * A;
  /// The upper-level parameters x.
  using Params = Vector<Scalar, kParams>;
  /// Policies and gradients, S x A.
  using Matrix = StateActionMatrix<Scalar, S, A>;
  /// The shaped MDP M(x) and the task.
  using MdpType = Mdp<Scalar, S, A>;
  /// S, the number of states: an axis of Data's arrays (data_layout.hpp).
  using States = layout::States<S>;
  /// A, the number of actions: an axis of Data's arrays (data_layout.hpp).
  using Actions = layout::Actions<A>;

  /// Caller storage for what build() takes from x.
  struct Model {
    /// r + x.
    Scalar reward[S * A];
  };

  /// What init() takes: the task's arrays (the caller's, read in place, unchanged while used) and
  /// numbers.
  struct Data {
    /// The task reward r(s,a), S x A row-major; finite.
    const Scalar* reward = nullptr;
    /// P(s'|s,a), (S*A) x S row-major; rows are distributions.
    const Scalar* transition = nullptr;
    /// rho > 0, summing to one.
    const Scalar* initial = nullptr;
    /// gamma, of the task and of the shaped MDP, in [0, 1).
    Scalar discount = Scalar(0.9);
    /// tau*h of the shaped MDP (the learner).
    Regularizer<Scalar, S, A> lower{};
    /// tau_f*h of the task in f.
    Regularizer<Scalar, S, A> upper{};
    /// X, the box of the shaping terms x(s,a).
    Box<Scalar> shaping{Scalar(-1), Scalar(1)};

    /// Every field of the model, in order, with its layout (data_layout.hpp).
    template <class Visitor>
    void visit(Visitor& v) const {
      v(reward, layout::Table<States, Actions>{}, "reward");
      v(transition, layout::Transition<States, Actions, States>{}, "transition");
      v(initial, layout::Initial<States>{}, "initial");
      v(discount, "discount");
      v(lower, Actions{}, "lower");
      v(upper, Actions{}, "upper");
      v(shaping, "shaping");
    }
  };
  /// The problem's kind, which a checkpoint records (model_digest.hpp).
  static constexpr ProblemKind kProblemKind = ProblemKind::reward_shaping;

  /// Caller storage of value_at_best_response (bilevel_value.hpp); its model is scratch: r + x.
  using BilevelValueWorkspace = TaskValueWorkspace<Scalar, S, A, Model>;

  /// Validates all data and keeps it (the arrays by pointer).
  /// @return ok; validate(Mdp)'s statuses for the task; the learner's regularizer's
  ///         (null_pointer, not_finite, bad_regularization); bad_setting (an invalid box). On
  ///         error the problem stays as it was.
  Status init(const Data& data) {
    check_sizes<S, A>();
    MdpType task{data.reward, data.transition, data.initial, data.discount, data.upper};
    if (Status st = validate(task); st != Status::ok) return st;
    if (Status st = validate(data.lower); st != Status::ok) return st;
    if (!valid(data.shaping)) return Status::bad_setting;
    task_ = task;
    lower_ = data.lower;
    box_ = data.shaping;
    digest_ = detail::model_digest<Scalar>(data);
    initialized_ = true;
    return Status::ok;
  }

  /// The task MDP {S, A, r, P, tau_f*h}.
  const MdpType& task() const { return task_; }
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
    return detail::replace_transition<Scalar, S, kTransitionRows>(task_.transition, digest_, transition);
  }

  /// Checks that x is finite and in the box.
  /// @return ok; not_initialized; not_finite; out_of_bounds.
  Status validate_parameters(const Params& x) const {
    if (!initialized_) return Status::not_initialized;
    if (!all_finite(x)) return Status::not_finite;
    return contains(box_, x) ? Status::ok : Status::out_of_bounds;
  }
  /// Projects x onto the box, in place.
  void project_parameters(Params& x) const { project(box_, x); }

  /// M(x) = {S, A, r + x, P, tau*h}: r + x into model, the MDP as a view in mdp.
  /// @return validate_parameters(x)'s statuses; on error model and mdp are unchanged.
  Status build(const Params& x, Model& model, MdpType& mdp) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    Eigen::Map<Params>(model.reward) = Eigen::Map<const Params>(task_.reward) + x;
    mdp = MdpType{model.reward, task_.transition, task_.initial, task_.discount, lower_};
    return Status::ok;
  }

  /// grad += scale * J^T(w, v) = scale * w (flattened): the shaping enters the reward linearly and
  /// P does not depend on x.
  void vjp(const Model& /*model*/, const Matrix& w, const StateVector<Scalar, S>& /*v*/, Scalar scale,
           Params& grad) const {
    grad += scale * Eigen::Map<const Params>(w.data());
  }

  /// Per-sample hook of sampled mode (problem.hpp): grad += reward_weight * e_{(s,a)}, as
  /// grad_x r_x(s,a) = e_{(s,a)}; P does not depend on x, so the transition term is zero.
  void sample_vjp(const Model& /*model*/, const VjpSample<Scalar>& sample, Params& grad) const {
    grad(sample.s * A + sample.a) += sample.reward_weight;
  }

  /// f = -V^{pi}_{task}(rho); grad_x f = 0, grad_pi f = -dV_task/dpi. chain: pi's evaluation on
  /// M(x) made by the last factorization through ws, or nullptr; the task shares its chain (P,
  /// rho, gamma), so V_task is solved with those factors (evaluate_on_chain), the same numbers.
  /// @return ok; not_initialized; evaluate()'s statuses. On error f and the gradients are
  ///         unchanged (scratch is scratch).
  template <EvaluationMethod M>
  Status upper(const Matrix& pi, Model& /*model*/, EvaluationWorkspace<Scalar, S, M>& ws,
               Evaluation<Scalar, S, A>& scratch, Scalar& f, Params& grad_x, Matrix& grad_pi,
               const Evaluation<Scalar, S, A>* chain = nullptr) const {
    if (!initialized_) return Status::not_initialized;
    if (Status st = chain != nullptr ? evaluate_on_chain(task_, pi, ws, *chain, scratch) : evaluate(task_, pi, ws, scratch);
        st != Status::ok)
      return st;
    f = -scratch.value_rho;
    grad_x.setZero();
    policy_gradient(task_, pi, scratch, grad_pi);
    grad_pi = -grad_pi;
    return Status::ok;
  }

  /// The bilevel answer: the task's value V^{pi*(x)}_task(rho) = -f(x, pi*(x)) of the learner's
  /// exact regularized optimum pi*(x) on M_tau(x) (soft value iteration, regularized_best_response),
  /// not of the solver's current y. out.lower_level_gap certifies pi*(x) (optimality_gap_bound),
  /// out.converged = it <= ws.settings.tolerance, out.iterations = sweeps. Work: at most
  /// settings.max_iterations sweeps of O(S*A*S), two S x S LU factorizations.
  /// @return ok; validate_parameters(x)'s statuses; regularized_best_response()'s and evaluate()'s
  ///         statuses. On error out is unchanged (ws is scratch; optimum.value changes only on
  ///         success).
  Status value_at_best_response(const Params& x, BilevelValueWorkspace& ws, BestResponseValue<Scalar>& out) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    MdpType shaped;
    if (Status st = build(x, ws.model, shaped); st != Status::ok) return st;
    return detail::value_on_task(shaped, task_, ws, out);
  }

 private:
  MdpType task_{};
  Regularizer<Scalar, S, A> lower_{};
  Box<Scalar> box_{};
  ModelDigest digest_{};
  bool initialized_ = false;
};

}  // namespace pbrl
