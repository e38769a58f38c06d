#pragma once
// RLHF (problems/rlhf.hpp): the bilevel problem, reward model r_x = x in a box, the upper level the
// Bradley-Terry loss of a caller-owned preference buffer, the lower level M_tau(x) with the true P.

#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/model/data_layout.hpp"
#include "pbrl/core/config.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/model/detail/model_digest.hpp"
#include "pbrl/model/problem.hpp"
#include "pbrl/problems/rlhf/preference_buffer.hpp"
#include "pbrl/problems/rlhf/preference_loss.hpp"
#include "pbrl/core/status.hpp"

#include <limits>

namespace pbrl {

/// RLHF, tabular (paper, Section 2.2), a problem of problem.hpp: the reward model r_x = x in a box,
/// the upper level the Bradley-Terry loss of a caller-owned preference buffer, the lower level
/// M_tau(x) with the true P. The buffer is data: grad_pi f = 0 (problems/rlhf.hpp,
/// `docs/algorithm.md#rlhf`).
/// @tparam Scalar_ float or double
/// @tparam S the number of states
/// @tparam A the number of actions
/// @tparam MaxLen the segments' capacity (Segment)
/// @tparam Capacity the preference buffer's pairs (PreferenceBuffer)
template <typename Scalar_, int S, int A, int MaxLen, int Capacity>
class RlhfProblem {
 public:
  /// The floating-point type.
  using Scalar = Scalar_;
  /// The number of states.
  static constexpr int kStates = S;
  /// The number of actions.
  static constexpr int kActions = A;
  /// The dimension of x: the reward model r_x(s,a) = x at [s*A + a].
  static constexpr int kParams = S * A;
  /// Rows of Data::transition, the lower level's P: one per (s, a).
  static constexpr int kTransitionRows = S * A;
  /// The upper-level parameters x.
  using Params = Vector<Scalar, kParams>;
  /// Policies and gradients, S x A.
  using Matrix = StateActionMatrix<Scalar, S, A>;
  /// The learner's MDP M_tau(x).
  using MdpType = Mdp<Scalar, S, A>;
  /// The preference buffer f is the loss of.
  using Buffer = PreferenceBuffer<S, A, MaxLen, Capacity>;
  /// S, the number of states: an axis of Data's arrays (data_layout.hpp).
  using States = layout::States<S>;
  /// A, the number of actions: an axis of Data's arrays (data_layout.hpp).
  using Actions = layout::Actions<A>;

  /// Caller storage for what build() takes from x.
  struct Model {
    /// r_x = x.
    Scalar reward[S * A];
  };

  /// What init() takes: the arrays (the caller's, read in place, unchanged while used), numbers
  /// and the preference buffer.
  struct Data {
    /// The true P(s'|s,a), (S*A) x S row-major; rows are distributions.
    const Scalar* transition = nullptr;
    /// rho > 0, summing to one.
    const Scalar* initial = nullptr;
    /// gamma, in [0, 1).
    Scalar discount = Scalar(0.9);
    /// tau*h of M_tau(x): entropy, or KL to a reference policy.
    Regularizer<Scalar, S, A> lower{};
    /// X = [-B, B]^{S*A}, the reward model's range; |bounds| < max / (4 * MaxLen).
    Box<Scalar> reward{Scalar(-1), Scalar(1)};
    /// Optional weight decay: f += l2/2 |x|^2 (finite, >= 0).
    Scalar l2 = Scalar(0);
    /// The caller-owned buffer (not null), read at every upper() call.
    const Buffer* preferences = nullptr;

    /// Every field of the model, in order, with its layout (data_layout.hpp). Not the
    /// preferences: labels arrive as the solver runs, and the buffer is the caller's state, not
    /// the model.
    template <class Visitor>
    void visit(Visitor& v) const {
      v(transition, layout::Transition<States, Actions, States>{}, "transition");
      v(initial, layout::Initial<States>{}, "initial");
      v(discount, "discount");
      v(lower, Actions{}, "lower");
      v(reward, "reward");
      v(l2, "l2");
    }
  };
  /// The problem's kind, which a checkpoint records (model_digest.hpp).
  static constexpr ProblemKind kProblemKind = ProblemKind::rlhf;

  /// Caller storage of value_at_best_response (bilevel_value.hpp); its model is scratch: r_x = x.
  using BilevelValueWorkspace = TaskValueWorkspace<Scalar, S, A, Model>;

  /// Validates all data and keeps it (the arrays and the buffer by pointer).
  /// @return ok; null_pointer; not_finite; bad_transition; bad_distribution; bad_discount;
  ///         bad_regularization (the regularizer); bad_setting (the box, l2). On error the problem
  ///         stays as it was.
  Status init(const Data& data) {
    check_sizes<S, A>();
    if (Status st = validate_transition<Scalar, S, A>(data.transition); st != Status::ok) return st;
    if (Status st = validate_initial<Scalar, S>(data.initial); st != Status::ok) return st;
    if (Status st = validate_discount(data.discount); st != Status::ok) return st;
    if (Status st = validate(data.lower); st != Status::ok) return st;
    if (!valid(data.reward)) return Status::bad_setting;
    // The box keeps every segment return far from overflow (preference_loss's requirement).
    const Scalar limit = std::numeric_limits<Scalar>::max() / Scalar(4 * MaxLen);
    if (!(std::abs(data.reward.lower) < limit) || !(std::abs(data.reward.upper) < limit))
      return Status::bad_setting;
    if (!std::isfinite(data.l2) || data.l2 < Scalar(0)) return Status::bad_setting;
    if (data.preferences == nullptr) return Status::null_pointer;
    data_ = data;
    digest_ = detail::model_digest<Scalar>(data);
    initialized_ = true;
    return Status::ok;
  }

  /// The data of init() (with the transition of the last replace_transition()).
  const Data& data() const { return data_; }
  /// The preference buffer (requires a successful init()).
  const Buffer& preferences() const { return *data_.preferences; }
  /// The box X on x.
  const Box<Scalar>& box() const { return data_.reward; }
  /// The digest of the data init() took (model_digest.hpp; checkpoints record it).
  const ModelDigest& model_digest() const { return digest_; }
  /// The lower level's transition array alone replaced (Solver::swap_transition, EstimatedModel's
  /// commit): validated as init() validates it, O(kTransitionRows * S), and the model digest's
  /// transition half follows; every other array stays.
  /// @return ok; not_initialized; null_pointer; not_finite; bad_transition. On error nothing
  ///         changes.
  Status replace_transition(const Scalar* transition) {
    if (!initialized_) return Status::not_initialized;
    return detail::replace_transition<Scalar, S, kTransitionRows>(data_.transition, digest_, transition);
  }

  /// Checks that x is finite and in the box.
  /// @return ok; not_initialized; not_finite; out_of_bounds.
  Status validate_parameters(const Params& x) const {
    if (!initialized_) return Status::not_initialized;
    if (!all_finite(x)) return Status::not_finite;
    return contains(data_.reward, x) ? Status::ok : Status::out_of_bounds;
  }
  /// Projects x onto the box, in place.
  void project_parameters(Params& x) const { project(data_.reward, x); }

  /// M_tau(x) = {S, A, r_x = x, P, tau*h}: x into model, the MDP as a view in mdp.
  /// @return validate_parameters(x)'s statuses; on error model and mdp are unchanged.
  Status build(const Params& x, Model& model, MdpType& mdp) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    Eigen::Map<Params>(model.reward) = x;
    mdp = MdpType{model.reward, data_.transition, data_.initial, data_.discount, data_.lower};
    return Status::ok;
  }

  /// grad += scale * J^T(w, v) = scale * w: r_x = x, P independent of x.
  void vjp(const Model& /*model*/, const Matrix& w, const StateVector<Scalar, S>& /*v*/, Scalar scale,
           Params& grad) const {
    grad += scale * Eigen::Map<const Params>(w.data());
  }

  /// Per-sample form of vjp() for a sampled lower level (the optional hook of problem.hpp):
  /// grad += reward_weight * e_{(s,a)}; P does not depend on x, so the transition term is zero.
  void sample_vjp(const Model& /*model*/, const VjpSample<Scalar>& sample, Params& grad) const {
    grad(sample.s * A + sample.a) += sample.reward_weight;
  }

  /// f(x) = mean Bradley-Terry NLL of the buffer under r_x (+ l2/2 |x|^2) and grad_x f.
  /// @return ok; validate_parameters(x)'s statuses; numerical_failure. On error f and grad_x are
  ///         unchanged.
  Status loss(const Params& x, Scalar& f, Params& grad_x) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    return loss_at(Eigen::Map<const Params>(x.data()), f, grad_x);
  }

  /// f(x, pi) and its gradients at the x model was built for: grad_x f as loss(); grad_pi f = 0
  /// (the buffer is data: `docs/algorithm.md#rlhf`).
  /// @return ok; not_initialized; numerical_failure. On error f and the gradients are unchanged.
  template <EvaluationMethod M>
  Status upper(const Matrix& /*pi*/, Model& model, EvaluationWorkspace<Scalar, S, M>& /*ws*/,
               Evaluation<Scalar, S, A>& /*scratch*/, Scalar& f, Params& grad_x, Matrix& grad_pi) const {
    if (!initialized_) return Status::not_initialized;
    if (Status st = loss_at(Eigen::Map<const Params>(model.reward), f, grad_x); st != Status::ok) return st;
    grad_pi.setZero();
    return Status::ok;
  }

  /// The bilevel answer: the true return V^{pi*(x)}_task(rho) of the learner's exact regularized
  /// optimum pi*(x) on M_tau(x) (soft value iteration, regularized_best_response), not of the
  /// solver's current y. `task` is the task as scored, usually {r_true, P, rho, gamma, tau = 0}
  /// (the hidden reward the problem never sees); it is validated in full. out.lower_level_gap
  /// certifies pi*(x) on M_tau(x) (optimality_gap_bound), out.converged = it <=
  /// ws.settings.tolerance, out.iterations = sweeps. Work: at most settings.max_iterations sweeps
  /// of O(S*A*S), two S x S LU factorizations.
  /// @return ok; validate_parameters(x)'s statuses; validate(task)'s; regularized_best_response()'s
  ///         and evaluate()'s statuses. On error out is unchanged (ws is scratch; optimum.value
  ///         changes only on success).
  Status value_at_best_response(const Params& x, const MdpType& task, BilevelValueWorkspace& ws,
                                BestResponseValue<Scalar>& out) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    if (Status st = validate(task); st != Status::ok) return st;
    MdpType learner;
    if (Status st = build(x, ws.model, learner); st != Status::ok) return st;
    return detail::value_on_task(learner, task, ws, out);
  }

 private:
  // loss() at an x in the box (build() checked it).
  Status loss_at(const Eigen::Map<const Params>& x, Scalar& f, Params& grad_x) const {
    const Scalar decay = Scalar(0.5) * data_.l2 * x.squaredNorm();
    if (!(decay < std::numeric_limits<Scalar>::max() / Scalar(4))) return Status::numerical_failure;
    // From here nothing can fail: the box bounds every return (init) and the decay term.
    Scalar value(0);
    if (Status st = preference_loss(x.data(), *data_.preferences, value, grad_x.data()); st != Status::ok)
      return st;
    if (data_.l2 > Scalar(0)) grad_x += data_.l2 * x;
    f = value + decay;
    return Status::ok;
  }

  Data data_{};
  ModelDigest digest_{};
  bool initialized_ = false;
};

}  // namespace pbrl
