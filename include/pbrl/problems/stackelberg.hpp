#pragma once
// Stackelberg Markov game (paper, Section 2.2 "Stackelberg Markov game", appendix lemma
// "Stackelberg game cast as BM"), a problem of pbrl/model/problem.hpp. A leader with softmax logits x
// (the upper level; kParams = S*AL, flat index s*AL + a_l, box [-B, B]) and a follower pi_y (the
// lower level) act simultaneously; each player's value counts its own reward and regularizer:
//   min_{x in X, y} -V_l^{pi_x,pi_y}(rho)   s.t.  y in argmax_y V_f^{pi_x,pi_y}(rho).
// The follower sees M(x) = {S, A_f, r_x, P_x, tau_f*h_f}, its own reward and the transitions
// averaged over pi_x (ERRATA item 1); reward arrays are indexed (s, a_l, a_f) (ERRATA item 10).
// build() takes pi_x and its logs once per x into the Model. The game's arrays are the caller's
// (flash), read in place; Model holds S*A_f*S + 3*S*A_f + 3*S*A_l scalars.
// The vector-Jacobian product and f's gradients, derived: docs/algorithm.md#the-stackelberg-game.

#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/model/data_layout.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/model/detail/model_digest.hpp"
#include "pbrl/model/problem.hpp"

#include <utility>

namespace pbrl {

/// Stackelberg Markov game (paper, Section 2.2), a problem of problem.hpp: a leader with softmax
/// logits x (the upper level, in the box [-B, B]) and a follower pi_y (the lower level) act
/// simultaneously; min_{x, y} -V_l^{pi_x,pi_y}(rho) s.t. y in argmax_y V_f^{pi_x,pi_y}(rho).
/// The game's arrays are the caller's (flash), read in place. More: the comment atop
/// problems/stackelberg.hpp, `docs/algorithm.md#the-stackelberg-game`.
/// @tparam Scalar_ float or double
/// @tparam S the number of states
/// @tparam AL the leader's actions
/// @tparam AF the follower's actions
template <typename Scalar_, int S, int AL, int AF>
class Stackelberg {
 public:
  /// The floating-point type.
  using Scalar = Scalar_;
  /// The number of states.
  static constexpr int kStates = S;
  /// The lower level's actions: the follower's, A_f.
  static constexpr int kActions = AF;
  /// The leader's actions, A_l.
  static constexpr int kLeaderActions = AL;
  /// The dimension of x: leader logits x(s, a_l) at [s*AL + a_l].
  static constexpr int kParams = S * AL;
  /// Rows of Data::transition, the lower level's P: one per (s, a_l, a_f).
  static constexpr int kTransitionRows = S * AL * AF;
  /// The upper-level parameters x.
  using Params = Vector<Scalar, kParams>;
  /// Follower policies and gradients, S x A_f.
  using Matrix = StateActionMatrix<Scalar, S, AF>;
  /// Leader policies, S x A_l.
  using LeaderMatrix = StateActionMatrix<Scalar, S, AL>;
  /// The follower's MDP M(x).
  using MdpType = Mdp<Scalar, S, AF>;
  /// S, the number of states: an axis of Data's arrays (data_layout.hpp).
  using States = layout::States<S>;
  /// AL, the leader's actions: an axis of Data's arrays (data_layout.hpp).
  struct LeaderActions : layout::Axis<1, AL> {
    static constexpr const char* name = "leader_actions";  ///< its key in a pbrl-codegen manifest
  };
  /// AF, the follower's actions: an axis of Data's arrays (data_layout.hpp).
  struct FollowerActions : layout::Axis<2, AF> {
    static constexpr const char* name = "follower_actions";  ///< its key in a pbrl-codegen manifest
  };

  /// Caller storage for M(x), pi_x and the scratch of upper(): S*A_f*S + 3*S*A_f + 3*S*A_l
  /// scalars. Plain arrays: the paper's size (S = 100, A_f = 5) is 50,000 transition entries, over
  /// Eigen's fixed-size object limit.
  struct Model {
    /// r_x(s,a_f): the follower's reward averaged over pi_x.
    Scalar reward[S * AF];
    /// P_x(s'|s,a_f) at [(s*AF + a_f)*S + s']: the transitions averaged over pi_x.
    Scalar transition[S * AF * S];
    /// pi_x(a_l|s) at [s*AL + a_l].
    Scalar leader_policy[S * AL];
    /// log pi_x(a_l|s), when the leader is regularized.
    Scalar leader_log_policy[S * AL];
    /// Scratch of upper(): r'_x, the leader's reward seen by the follower.
    Scalar leader_reward[S * AF];
    /// Scratch of upper(): the gradient in x, until known finite.
    Scalar gradient_x[S * AL];
    /// Scratch of upper(): the gradient in pi, until known finite.
    Scalar gradient_pi[S * AF];
  };

  /// What init() takes: the game's arrays (the caller's, read in place, unchanged while used) and
  /// numbers.
  struct Data {
    /// r_l(s,a_l,a_f) at [(s*AL + a_l)*AF + a_f]; finite.
    const Scalar* leader_reward = nullptr;
    /// r_f(s,a_l,a_f), the same layout; finite.
    const Scalar* follower_reward = nullptr;
    /// P(s'|s,a_l,a_f) at [((s*AL + a_l)*AF + a_f)*S + s']; rows are distributions.
    const Scalar* transition = nullptr;
    /// rho(s) > 0, summing to one.
    const Scalar* initial = nullptr;
    /// gamma, of both players' values, in [0, 1).
    Scalar discount = Scalar(0.9);
    /// tau_l*h_l over A_l (enters V_l only).
    Regularizer<Scalar, S, AL> leader{};
    /// tau_f*h_f over A_f (enters V_f and M(x)).
    Regularizer<Scalar, S, AF> follower{};
    /// B: X = [-B, B]^(S*AL); finite, > 0.
    Scalar logit_bound = Scalar(10);

    /// Every field of the model, in order, with its layout (data_layout.hpp).
    template <class Visitor>
    void visit(Visitor& v) const {
      v(leader_reward, layout::Table<States, LeaderActions, FollowerActions>{}, "leader_reward");
      v(follower_reward, layout::Table<States, LeaderActions, FollowerActions>{}, "follower_reward");
      v(transition, layout::Transition<States, LeaderActions, FollowerActions, States>{}, "transition");
      v(initial, layout::Initial<States>{}, "initial");
      v(discount, "discount");
      v(leader, LeaderActions{}, "leader");
      v(follower, FollowerActions{}, "follower");
      v(logit_bound, "logit_bound");
    }
  };
  /// The problem's kind, which a checkpoint records (model_digest.hpp).
  static constexpr ProblemKind kProblemKind = ProblemKind::stackelberg;

  /// Soft value iteration on M(x) for the follower's exact best response (experiments'
  /// optimality gap). `value` is the warm start, kept between calls and changed only on success;
  /// q, log_pi, pi hold the best response after a successful call.
  struct FollowerOptimum {
    /// Sweeps per call (>= 1).
    int max_iterations = 5000;
    /// Stop once a sweep's sup-norm change is at most this (>= 0).
    Scalar tolerance = std::numeric_limits<Scalar>::epsilon() * Scalar(64);
    /// V* (the warm start; changed only on success).
    StateVector<Scalar, S> value = StateVector<Scalar, S>::Zero();
    /// Scratch.
    StateVector<Scalar, S> next = StateVector<Scalar, S>::Zero();
    /// @{
    /// The best response after a success: Q, log pi and pi (scratch otherwise).
    Matrix q = Matrix::Zero(), log_pi = Matrix::Zero(), pi = Matrix::Zero();
    /// @}
    /// The last successful call's sweeps and convergence.
    SoftValueIterationResult<Scalar> result{};
  };

  /// Caller storage of value_at_best_response (bilevel_value.hpp): about S*AF*S + S*S + 8*S*AF +
  /// S*AL scalars, mostly M(x); a member, a static or the heap at the paper's size, not a local.
  struct BilevelValueWorkspace {
    /// The caps and the certificate's tolerance.
    BestResponseSettings<Scalar> settings{};
    /// Scratch: M(x), then r'_x (the leader's reward).
    Model model;
    /// Scratch of the evaluations.
    EvaluationWorkspace<Scalar, S, EvaluationMethod::direct> evaluation_workspace;
    /// After a success: V_l of (pi_x, pi*(x)), the joint occupancy.
    Evaluation<Scalar, S, AF> evaluation{};
    /// Soft value iteration on M(x); after a success optimum.pi = pi*(x) and optimum.value = V*
    /// (the next call's warm start). Its max_iterations and tolerance are set from settings.
    FollowerOptimum optimum{};
  };

  /// Validates all data and keeps it (the arrays by pointer).
  /// @return ok; null_pointer; not_finite; bad_transition; bad_distribution; bad_discount;
  ///         bad_regularization (a regularizer); bad_setting (logit_bound not finite or not > 0).
  ///         On error the problem stays as it was.
  Status init(const Data& data) {
    static_assert(S >= 2 && AL >= 2 && AF >= 2, "pbrl needs at least two states and two actions per player");
    if (data.leader_reward == nullptr || data.follower_reward == nullptr) return Status::null_pointer;
    const Eigen::Map<const Vector<Scalar, S * AL * AF>> rl(data.leader_reward), rf(data.follower_reward);
    if (!all_finite(rl) || !all_finite(rf)) return Status::not_finite;
    if (Status st = validate_transition<Scalar, S, AL * AF>(data.transition); st != Status::ok) return st;
    if (Status st = validate_initial<Scalar, S>(data.initial); st != Status::ok) return st;
    if (Status st = validate_discount(data.discount); st != Status::ok) return st;
    if (Status st = validate(data.leader); st != Status::ok) return st;
    if (Status st = validate(data.follower); st != Status::ok) return st;
    if (!std::isfinite(data.logit_bound) || !(data.logit_bound > Scalar(0))) return Status::bad_setting;
    data_ = data;
    box_ = Box<Scalar>{-data.logit_bound, data.logit_bound};
    digest_ = detail::model_digest<Scalar>(data);
    initialized_ = true;
    return Status::ok;
  }

  /// Whether init() has succeeded.
  bool initialized() const { return initialized_; }
  /// The data of init() (with the transition of the last replace_transition()).
  const Data& data() const { return data_; }
  /// X = [-B, B]^(S*AL).
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
    return detail::replace_transition<Scalar, S, kTransitionRows>(data_.transition, digest_, transition);
  }
  /// gamma.
  Scalar discount() const { return data_.discount; }

  /// Checks that x is finite and in the box.
  /// @return ok; not_initialized; not_finite; out_of_bounds.
  Status validate_parameters(const Params& x) const {
    if (!initialized_) return Status::not_initialized;
    if (!all_finite(x)) return Status::not_finite;
    return contains(box_, x) ? Status::ok : Status::out_of_bounds;
  }
  /// Projects x onto the box, in place.
  void project_parameters(Params& x) const { project(box_, x); }

  /// pi_x(.|s) = softmax(x(s,.)) into pi_x.
  /// @return validate_parameters(x)'s statuses; on error pi_x is unchanged.
  Status leader_policy(const Params& x, LeaderMatrix& pi_x) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    for (int s = 0; s < S; ++s) leader_row(x, s, pi_x.row(s).data());
    return Status::ok;
  }

  /// M(x) and pi_x (with its logs if the leader is regularized) into model; M(x) as a view in mdp.
  /// @return validate_parameters(x)'s statuses; on error model and mdp are unchanged.
  Status build(const Params& x, Model& model, MdpType& mdp) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    const bool logs = data_.leader.tau > Scalar(0);
    for (int s = 0; s < S; ++s) {
      Scalar* const policy = model.leader_policy + s * AL;
      if (logs)
        leader_row(x, s, model.leader_log_policy + s * AL, policy);
      else
        leader_row(x, s, policy);
      const Vector<Scalar, AL> p = Eigen::Map<const Vector<Scalar, AL>>(policy);
      for (int af = 0; af < AF; ++af) {
        Scalar r(0);
        for (int al = 0; al < AL; ++al) r += p(al) * data_.follower_reward[joint(s, al, af)];
        model.reward[s * AF + af] = r;
        weighted_rows(p, data_.transition + joint(s, 0, af) * S, model.transition + (s * AF + af) * S,
                      std::make_integer_sequence<int, AL>{});
      }
    }
    mdp = follower_mdp(model);
    return Status::ok;
  }

  /// grad += scale * J^T(w, v) at the x model was built for (`docs/algorithm.md#the-stackelberg-game`),
  /// per state as J^T(w, v)(s,b) = pi_x(b|s) (G(b) - <pi_x(s), G>),
  /// G(a_l) = sum_{a_f} w(s,a_f) z(s,a_l,a_f).
  void vjp(const Model& model, const Matrix& w, const StateVector<Scalar, S>& v, Scalar scale, Params& grad) const {
    for (int s = 0; s < S; ++s) {
      const Vector<Scalar, AL> p = leader_row(model, s);
      const Vector<Scalar, AL> g = joint_values(data_.follower_reward, s, v) * w.row(s).transpose();
      grad.template segment<AL>(s * AL) += scale * p.cwiseProduct((g.array() - p.dot(g)).matrix());
    }
  }

  /// grad += scale1 * J^T(mu1, v1) + scale2 * J^T(mu2, v2), mu_i(s,a_f) = d_i(s) pi_i(a_f|s), the
  /// two VjpTerm (the value penalty's two products; problem.hpp).
  /// Why one pass: both G's are sums over the same rows of P, so per state and follower action
  /// one vector u = gamma (c1 v1 + c2 v2), c_i = scale_i mu_i(s,a_f), meets the A_l rows once,
  /// G(b) = sum_{a_f} (c1 + c2) r_f(s,b,a_f) + <P(.|s,b,a_f), u>:
  /// 2*A_f*S + A_l*A_f*S multiply-adds a state where two vjp() calls take 2*A_l*A_f*S.
  void vjp_pair(const Model& model, const VjpTerm<Scalar, S, AF>& first, const VjpTerm<Scalar, S, AF>& second,
                Params& grad) const {
    const StateVector<Scalar, S>& d1 = first.occupancy;
    const StateVector<Scalar, S>& d2 = second.occupancy;
    const StateVector<Scalar, S>& v1 = first.value;
    const StateVector<Scalar, S>& v2 = second.value;
    const Matrix& pi1 = first.pi;
    const Matrix& pi2 = second.pi;
    const Scalar scale1 = first.scale, scale2 = second.scale;
    const Scalar gamma = data_.discount;
#ifdef EIGEN_VECTORIZE
    StateVector<Scalar, S> u;
#endif
    for (int s = 0; s < S; ++s) {
      Scalar g[AL] = {};
      for (int af = 0; af < AF; ++af) {
        const Scalar c1 = scale1 * (d1(s) * pi1(s, af)), c2 = scale2 * (d2(s) * pi2(s, af));
        const Scalar w1 = gamma * c1, w2 = gamma * c2, c = c1 + c2;
        const Scalar* rows = data_.transition + joint(s, 0, af) * S;  // row a_l at rows + a_l*AF*S
        for (int al = 0; al < AL; ++al) g[al] += c * data_.follower_reward[joint(s, al, af)];
#ifdef EIGEN_VECTORIZE  // u whole, then SIMD dot products with it
        u = w1 * v1 + w2 * v2;
        for (int al = 0; al < AL; ++al) g[al] += detail::row_dot(rows + al * AF * S, u);
#else  // one entry of u at a time, met by the A_l rows at once: G and the two weights stay in registers
        for (int k = 0; k < S; ++k) {
          const Scalar uk = w1 * v1(k) + w2 * v2(k);
          for (int al = 0; al < AL; ++al) g[al] += rows[al * AF * S + k] * uk;
        }
#endif
      }
      const Vector<Scalar, AL> p = leader_row(model, s);
      const Eigen::Map<const Vector<Scalar, AL>> G(g);
      grad.template segment<AL>(s * AL) += p.cwiseProduct((G.array() - p.dot(G)).matrix());
    }
  }

  /// Per-sample hook of sampled mode (problem.hpp): grad += reward_weight * grad_x r_x(s,a) +
  /// transition_weight * grad_x log P_x(s'|s,a), with r_x, P_x linear in pi_x(.|s):
  ///   - grad_x r_x(s,a)(s,b) = pi_x(b|s) (r_f(s,b,a) - r_x(s,a)),
  ///   - grad_x log P_x(s'|s,a)(s,b) = pi_x(b|s) (P(s'|s,b,a) - P_x(s'|s,a)) / P_x(s'|s,a),
  ///
  /// zero in every other state's logits. pi_x > 0 (bounded logits), so the support of P_x(.|s,a)
  /// is that of sum_b P(.|s,b,a) for every x, as the likelihood ratio requires; s' was drawn from
  /// P_x(.|s,a), so P_x(s'|s,a) > 0 (a zero is skipped rather than divided by).
  void sample_vjp(const Model& model, const VjpSample<Scalar>& sample, Params& grad) const {
    const auto [s, a, s_next, reward_weight, transition_weight] = sample;
    const Vector<Scalar, AL> p = leader_row(model, s);
    Vector<Scalar, AL> g = Vector<Scalar, AL>::Zero();
    if (reward_weight != Scalar(0)) {
      Vector<Scalar, AL> r;
      for (int al = 0; al < AL; ++al) r(al) = data_.follower_reward[joint(s, al, a)];
      g += reward_weight * (r.array() - p.dot(r)).matrix();
    }
    if (transition_weight != Scalar(0)) {
      Vector<Scalar, AL> q;
      for (int al = 0; al < AL; ++al) q(al) = data_.transition[joint(s, al, a) * S + s_next];
      const Scalar px = p.dot(q);
      if (px > Scalar(0)) g += (transition_weight / px) * (q.array() - px).matrix();
    }
    grad.template segment<AL>(s * AL) += p.cwiseProduct(g);
  }

  /// f(x, pi) = -V_l^{pi_x,pi}(rho) and its gradients (`docs/algorithm.md#the-stackelberg-game`).
  /// Needs model built for x; writes model.leader_reward (scratch) and scratch (its value is the
  /// warm start of sweeps).
  /// chain: pi's evaluation on M(x) made by the last factorization through ws, or nullptr; the
  /// leader's MDP shares its chain (P_x, rho, gamma), so V_l is solved with those factors
  /// (evaluate_on_chain), the same numbers.
  /// @return ok; not_initialized; validate_policy(pi)'s and evaluate()'s statuses;
  ///         numerical_failure. Rejected inputs change nothing; on a numerical failure f and the
  ///         gradients are unchanged.
  template <EvaluationMethod M>
  Status upper(const Matrix& pi, Model& model, EvaluationWorkspace<Scalar, S, M>& ws,
               Evaluation<Scalar, S, AF>& scratch, Scalar& f, Params& grad_x, Matrix& grad_pi,
               const Evaluation<Scalar, S, AF>* chain = nullptr) const {
    if (!initialized_) return Status::not_initialized;
    if (Status st = validate_policy(pi); st != Status::ok) return st;
    if (Status st = evaluate_leader(pi, model, ws, scratch, chain); st != Status::ok) return st;
    const Regularizer<Scalar, S, AL>& reg = data_.leader;
    const bool regularized = reg.tau > Scalar(0);
    const auto& v = scratch.value;
    Eigen::Map<Params> gx(model.gradient_x);
    Eigen::Map<Matrix> gpi(model.gradient_pi);
    for (int s = 0; s < S; ++s) {
      const Vector<Scalar, AL> p = leader_row(model, s);
      const Scalar d = scratch.occupancy(s);
      const Scalar h = regularized ? reg.tau * reg.value(s, p, leader_log_row(model, s)) : Scalar(0);
      gpi.row(s) = -d * (scratch.q.row(s).array() + h).matrix();
      // Q_l(s,.) = sum_{a_f} pi(a_f|s) (r_l + gamma <P, V_l>)(s,.,a_f)
      Vector<Scalar, AL> g = joint_values(data_.leader_reward, s, v) * pi.row(s).transpose();
      if (regularized) {
        const Vector<Scalar, AL> log_p = leader_log_row(model, s);
        for (int al = 0; al < AL; ++al) g(al) -= reg.tau * reg.derivative_at_log(s, al, log_p(al));
      }
      g *= d;
      gx.template segment<AL>(s * AL) = -p.cwiseProduct((g.array() - p.dot(g)).matrix());
    }
    if (!all_finite(gx) || !all_finite(gpi)) return Status::numerical_failure;
    grad_x = gx;
    grad_pi = gpi;
    f = -scratch.value_rho;
    return Status::ok;
  }

  // ---- helpers for experiments: each builds M(x) into model itself -------------------------

  /// V_l^{pi_x,pi_y}(rho), the leader's value with its own regularizer, into value; eval gets V_l
  /// and the joint occupancy. Builds M(x) into model.
  /// @return ok, or the statuses of validate_parameters(x), validate_policy(pi_y) and evaluate();
  ///         on error value is unchanged.
  template <EvaluationMethod M>
  Status leader_value(const Params& x, const Matrix& pi_y, Model& model, EvaluationWorkspace<Scalar, S, M>& ws,
                      Evaluation<Scalar, S, AF>& eval, Scalar& value) const {
    return value_on_built(x, pi_y, model, eval, value,
                          [&](const MdpType&) { return evaluate_leader(pi_y, model, ws, eval); });
  }

  /// V_f^{pi_x,pi_y}(rho) = V^{pi_y}_{M(x)}(rho), the follower's value with its own regularizer,
  /// into value. Builds M(x) into model.
  /// @return ok, or the statuses of validate_parameters(x), validate_policy(pi_y) and evaluate();
  ///         on error value is unchanged.
  template <EvaluationMethod M>
  Status follower_value(const Params& x, const Matrix& pi_y, Model& model, EvaluationWorkspace<Scalar, S, M>& ws,
                        Evaluation<Scalar, S, AF>& eval, Scalar& value) const {
    return value_on_built(x, pi_y, model, eval, value,
                          [&](const MdpType& mdp) { return evaluate(mdp, pi_y, ws, eval); });
  }

  /// The follower's optimality gap V_f^{pi_x,pi*(x)}(rho) - V_f^{pi_x,pi_y}(rho) >= 0 (up to the
  /// accuracy of soft value iteration), with pi*(x) from soft value iteration on M(x) into opt.
  /// @return ok, or the statuses of validate_parameters(x), validate_policy(pi_y),
  ///         validate_optimum(opt), optimal_value() and evaluate(); on error gap is unchanged.
  template <EvaluationMethod M>
  Status follower_gap(const Params& x, const Matrix& pi_y, Model& model, EvaluationWorkspace<Scalar, S, M>& ws,
                      Evaluation<Scalar, S, AF>& eval, FollowerOptimum& opt, Scalar& gap) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    if (Status st = validate_policy(pi_y); st != Status::ok) return st;
    if (Status st = validate_optimum(opt); st != Status::ok) return st;
    MdpType mdp;
    if (Status st = build(x, model, mdp); st != Status::ok) return st;
    Scalar optimal(0);
    if (Status st = optimal_value(mdp, opt, optimal); st != Status::ok) return st;
    if (Status st = evaluate(mdp, pi_y, ws, eval); st != Status::ok) return st;
    gap = optimal - eval.value_rho;
    return Status::ok;
  }

  /// The bilevel answer: the leader's value V_l^{pi_x,pi*(x)}(rho) = -f(x, pi*(x)) when the
  /// follower plays its exact regularized best response pi*(x) on M(x) (the soft-greedy policy of
  /// the converged soft Q, by optimal_value), not the solver's current y. out.lower_level_gap
  /// certifies pi*(x): max_s V*(s) - V^{pi*}(s) on M(x) is at most it (optimality_gap_bound);
  /// out.converged = it <= ws.settings.tolerance; out.iterations = soft value-iteration sweeps.
  /// Work: at most settings.max_iterations sweeps of O(S*AF*S), building M(x) (O(S*AL*AF*S)), two
  /// S x S LU factorizations.
  /// @return ok; validate_parameters(x)'s statuses; bad_setting (ws.settings); not_finite (the
  ///         warm start); soft value iteration's and evaluate()'s statuses; numerical_failure.
  ///         On error out is unchanged (ws is scratch; optimum.value changes only on success).
  Status value_at_best_response(const Params& x, BilevelValueWorkspace& ws, BestResponseValue<Scalar>& out) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    if (Status st = validate(ws.settings); st != Status::ok) return st;
    if (!all_finite(ws.optimum.value)) return Status::not_finite;
    MdpType mdp;
    if (Status st = build(x, ws.model, mdp); st != Status::ok) return st;
    ws.optimum.max_iterations = static_cast<int>(ws.settings.max_iterations);
    ws.optimum.tolerance = detail::soft_sweep_tolerance(mdp, ws.settings.tolerance);
    Scalar optimal(0), gap(0);
    if (Status st = optimal_value(mdp, ws.optimum, optimal); st != Status::ok) return st;
    if (Status st = detail::evaluate_and_bound(mdp, ws.optimum.pi, ws.evaluation_workspace, ws.evaluation, gap);
        st != Status::ok)
      return st;
    if (Status st = evaluate_leader(ws.optimum.pi, ws.model, ws.evaluation_workspace, ws.evaluation);
        st != Status::ok)
      return st;
    out.value = ws.evaluation.value_rho;
    out.lower_level_gap = gap;
    out.iterations = ws.optimum.result.iterations;
    out.converged = gap <= ws.settings.tolerance;
    return Status::ok;
  }

  /// V*(rho) of an MDP (M(x) from build(), say) by soft value iteration warm-started from
  /// opt.value. opt.value and opt.result change only on success; q, log_pi and pi hold the
  /// optimum after a success and are scratch otherwise.
  /// @return ok; validate_optimum(opt)'s statuses; null_pointer; soft_value_iteration()'s
  ///         statuses. On error value_rho is unchanged.
  static Status optimal_value(const MdpType& mdp, FollowerOptimum& opt, Scalar& value_rho) {
    if (Status st = validate_optimum(opt); st != Status::ok) return st;
    if (mdp.initial == nullptr) return Status::null_pointer;
    opt.next = opt.value;
    SoftValueIterationResult<Scalar> result;
    if (Status st = soft_value_iteration(mdp, opt.max_iterations, opt.tolerance, opt.next, opt.q,
                                         {opt.log_pi, opt.pi}, &result);
        st != Status::ok)
      return st;
    opt.value = opt.next;
    opt.result = result;
    value_rho = mdp.rho().dot(opt.value);
    return Status::ok;
  }

  /// Checks opt's settings and warm start.
  /// @return ok; bad_setting (max_iterations < 1, tolerance not >= 0); not_finite (value).
  static Status validate_optimum(const FollowerOptimum& opt) {
    if (opt.max_iterations < 1 || !(opt.tolerance >= Scalar(0))) return Status::bad_setting;
    if (!all_finite(opt.value)) return Status::not_finite;
    return Status::ok;
  }

 private:
  static int joint(int s, int al, int af) { return (s * AL + al) * AF + af; }

  // out = sum_{a_l} p(a_l) P(.|s,a_l,a_f), first = P(.|s,0,a_f) (the rows lie AF*S apart). One pass:
  // each entry written once, not accumulated over A_l passes through the row. The left fold keeps
  // the sum's order, ((0 + p(0) P_0) + p(1) P_1) + ..., so P_x is the same to the bit as with those
  // passes; one Eigen expression, so it is vectorized wherever Eigen vectorizes.
  template <int... al>
  static void weighted_rows(const Vector<Scalar, AL>& p, const Scalar* first, Scalar* out,
                            std::integer_sequence<int, al...>) {
    using Row = Eigen::Map<const Vector<Scalar, S>>;
    Eigen::Map<Vector<Scalar, S>> row(out);
    row = (Vector<Scalar, S>::Zero() + ... + (p(al) * Row(first + al * AF * S)));
  }

  using JointBlock = Eigen::Matrix<Scalar, AL, AF, Eigen::RowMajor>;

  // z(a_l,a_f) = reward(s,a_l,a_f) + gamma * <P(.|s,a_l,a_f), v> for one state s. Its A_l*A_f
  // rows of P lie one after another, so the A_l*A_f dot products are one matrix-vector product
  // (no per-row setup: at S = 10 that setup cost as much as the products).
  JointBlock joint_values(const Scalar* reward, int s, const StateVector<Scalar, S>& v) const {
    using Rows = Eigen::Map<const Eigen::Matrix<Scalar, AL * AF, S, Eigen::RowMajor>>;
    Vector<Scalar, AL * AF> z;
    z.noalias() = Rows(data_.transition + joint(s, 0, 0) * S).lazyProduct(v);
    return Eigen::Map<const JointBlock>(reward + joint(s, 0, 0)) +
           data_.discount * Eigen::Map<const JointBlock>(z.data());
  }

  // p = softmax of row s of x (log-sum-exp shift; |x| <= B keeps every probability > 0).
  static void leader_row(const Params& x, int s, Scalar* p) {
    const auto logits = x.template segment<AL>(s * AL);
    Eigen::Map<Vector<Scalar, AL>> shifted(p);
    shifted = (logits.array() - logits.maxCoeff()).matrix();
    softmax_of_shifted<AL>(p, p);
  }
  // The same, and its logs: the shifted logits minus log of their exponentials' sum (one log,
  // not A_l; within a few eps of log p).
  static void leader_row(const Params& x, int s, Scalar* log_p, Scalar* p) {
    const auto logits = x.template segment<AL>(s * AL);
    Eigen::Map<Vector<Scalar, AL>> logs(log_p);
    logs = (logits.array() - logits.maxCoeff()).matrix();
    logs.array() -= logarithm(softmax_of_shifted<AL>(log_p, p));
  }
  // pi_x(.|s) and its logs as build() left them in model.
  static Vector<Scalar, AL> leader_row(const Model& model, int s) {
    return Eigen::Map<const Vector<Scalar, AL>>(model.leader_policy + s * AL);
  }
  static Vector<Scalar, AL> leader_log_row(const Model& model, int s) {
    return Eigen::Map<const Vector<Scalar, AL>>(model.leader_log_policy + s * AL);
  }

  // leader_value's and follower_value's common part: x and pi_y checked, M(x) built into model,
  // then evaluate_on(M(x)) fills eval, whose V(rho) becomes value (unchanged on error).
  template <class EvaluateOn>
  Status value_on_built(const Params& x, const Matrix& pi_y, Model& model, const Evaluation<Scalar, S, AF>& eval,
                        Scalar& value, EvaluateOn&& evaluate_on) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    if (Status st = validate_policy(pi_y); st != Status::ok) return st;
    MdpType mdp;
    if (Status st = build(x, model, mdp); st != Status::ok) return st;
    if (Status st = evaluate_on(mdp); st != Status::ok) return st;
    value = eval.value_rho;
    return Status::ok;
  }

  MdpType follower_mdp(const Model& model) const {
    return MdpType{model.reward, model.transition, data_.initial, data_.discount, data_.follower};
  }

  // V_l of pi_y: pi_y's value on {r'_x, P_x (model, built for x), no regularizer}. Inputs valid.
  template <EvaluationMethod M>
  Status evaluate_leader(const Matrix& pi_y, Model& model, EvaluationWorkspace<Scalar, S, M>& ws,
                         Evaluation<Scalar, S, AF>& eval, const Evaluation<Scalar, S, AF>* chain = nullptr) const {
    const Regularizer<Scalar, S, AL>& reg = data_.leader;
    const bool regularized = reg.tau > Scalar(0);
    for (int s = 0; s < S; ++s) {
      const Vector<Scalar, AL> p = leader_row(model, s);
      const Scalar h = regularized ? reg.tau * reg.value(s, p, leader_log_row(model, s)) : Scalar(0);
      for (int af = 0; af < AF; ++af) {
        Scalar r(0);
        for (int al = 0; al < AL; ++al) r += p(al) * data_.leader_reward[joint(s, al, af)];
        model.leader_reward[s * AF + af] = r - h;
      }
    }
    const MdpType leader{model.leader_reward, model.transition, data_.initial, data_.discount,
                         Regularizer<Scalar, S, AF>{RegularizerKind::entropy, Scalar(0), nullptr}};
    return chain != nullptr ? evaluate_on_chain(leader, pi_y, ws, *chain, eval) : evaluate(leader, pi_y, ws, eval);
  }

  Data data_{};
  Box<Scalar> box_{};
  ModelDigest digest_{};
  bool initialized_ = false;
};

}  // namespace pbrl
