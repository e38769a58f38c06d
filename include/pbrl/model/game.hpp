#pragma once
// Tabular regularized two-player zero-sum Markov games (paper, Section "Bilevel RL with
// Lower-level Zero-sum Games", ERRATA item 8), for PbrlZeroSum, the Nikaido-Isoda penalty and the
// meta-gradient baseline:
//   V^{pi1,pi2}(s) = E[ sum_t gamma^t ( r(s_t,a_t) - tau*h1(pi1(s_t)) + tau*h2(pi2(s_t)) ) | s_0 = s ]
// Player 1 maximizes V, player 2 minimizes it. MarkovGame is a view of caller arrays, like Mdp.
// The functions below write each player's best-response MDP, induced by the other's fixed policy,
// into caller storage, so evaluation, the oracles and policy_gradient() apply unchanged.
//
// A game problem (paper, problem BZ) has a problem's members (problem.hpp) over joint actions
// (a1, a2), index a1*A2 + a2: build(x, model, game), vjp(model, w, v, scale, grad) with w the
// S x A1*A2 joint occupancy, upper(pi1, pi2, model, ws, scratch, f, grad_x, grad_pi1, grad_pi2),
// validate_parameters and project_parameters; optional: box(), sample_vjp (has_game_sample_vjp),
// and kRewardOnly (true when P_x does not depend on x; the meta-gradient baseline requires it).
// Only build() takes x. Signatures and the induced MDPs: docs/algorithm.md#zero-sum-games.

#include "pbrl/core/config.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/model/problem.hpp"
#include "pbrl/model/regularizer.hpp"
#include "pbrl/core/status.hpp"

#include <type_traits>
#include <utility>

namespace pbrl {

/// Whether GameProblem offers the per-sample hook sample_vjp(model, s, j, s_next, rw, tw, grad), j
/// the joint action: the signature has_sample_vjp (problem.hpp) detects.
template <class GameProblem>
struct has_game_sample_vjp : has_sample_vjp<GameProblem> {};

/// Whether GameProblem declares kRewardOnly = true: its transitions do not depend on x, so
/// J^T(w, v) does not read v and is linear in w.
template <class GameProblem, class = void>
struct is_reward_only : std::false_type {};
template <class GameProblem>
struct is_reward_only<GameProblem, std::void_t<decltype(GameProblem::kRewardOnly)>>
    : std::bool_constant<GameProblem::kRewardOnly> {};

/// One row over next states (a transition row being summed).
template <typename Scalar, int S>
using StateRow = Eigen::Matrix<Scalar, 1, S, Eigen::RowMajor>;

/// Joint state-action arrays: row s, column a1*A2 + a2.
template <typename Scalar, int S, int A1, int A2>
using JointMatrix = StateActionMatrix<Scalar, S, A1 * A2>;

/// A tabular regularized two-player zero-sum Markov game, a view of caller arrays like Mdp:
/// V^{pi1,pi2}(s) = E[ sum_t gamma^t ( r - tau*h1(pi1) + tau*h2(pi2) ) ]; player 1 maximizes V,
/// player 2 minimizes it. validate() checks it once.
template <typename Scalar_, int S, int A1, int A2>
struct MarkovGame {
  /// The floating-point type.
  using Scalar = Scalar_;
  /// The number of states.
  static constexpr int kStates = S;
  /// Player 1's actions.
  static constexpr int kActions1 = A1;
  /// Player 2's actions.
  static constexpr int kActions2 = A2;
  /// The joint actions, A1*A2.
  static constexpr int kJointActions = A1 * A2;

  const Scalar* reward = nullptr;      ///< player 1's r(s,a1,a2) at [(s*A1 + a1)*A2 + a2]
  const Scalar* transition = nullptr;  ///< P(s'|s,a1,a2) at [((s*A1 + a1)*A2 + a2)*S + s']
  const Scalar* initial = nullptr;     ///< rho(s)
  /// gamma, in [0, 1).
  Scalar discount = Scalar(0.9);
  Regularizer<Scalar, S, A1> regularizer1{};  ///< tau*h1, enters V with a minus sign
  Regularizer<Scalar, S, A2> regularizer2{};  ///< tau*h2, enters V with a plus sign (same tau)

  // r as S x (A1*A2) and P as (S*A1*A2) x S: row s*A1*A2 + a1*A2 + a2 = (s*A1 + a1)*A2 + a2.
  /// r as S x (A1*A2): column a1*A2 + a2.
  ConstStateActionMap<Scalar, S, A1 * A2> r() const { return ConstStateActionMap<Scalar, S, A1 * A2>(reward); }
  /// P as (S*A1*A2) x S: row s*A1*A2 + a1*A2 + a2 = (s*A1 + a1)*A2 + a2.
  ConstTransitionMap<Scalar, S, A1 * A2> P() const { return ConstTransitionMap<Scalar, S, A1 * A2>(transition); }
  /// rho as a map.
  ConstStateMap<Scalar, S> rho() const { return ConstStateMap<Scalar, S>(initial); }
  /// tau (both players').
  Scalar tau() const { return regularizer1.tau; }
};

/// Checks a whole game once, O(S*A1*A2*S): the arrays, the discount, both regularizers and that
/// their tau agree.
/// @return ok; null_pointer; not_finite; bad_transition; bad_distribution; bad_discount;
///         bad_regularization (a regularizer, or two different tau).
template <typename Scalar, int S, int A1, int A2>
Status validate(const MarkovGame<Scalar, S, A1, A2>& g) {
  check_sizes<S, A1>();
  check_sizes<S, A2>();
  if (g.reward == nullptr) return Status::null_pointer;
  if (!detail::all_finite(g.reward, S * A1 * A2)) return Status::not_finite;
  if (Status st = validate_transition<Scalar, S, A1 * A2>(g.transition); st != Status::ok) return st;
  if (Status st = validate_initial<Scalar, S>(g.initial); st != Status::ok) return st;
  if (Status st = validate_discount(g.discount); st != Status::ok) return st;
  if (Status st = validate(g.regularizer1); st != Status::ok) return st;
  if (Status st = validate(g.regularizer2); st != Status::ok) return st;
  if (g.regularizer1.tau != g.regularizer2.tau) return Status::bad_regularization;
  return Status::ok;
}

/// Storage of one induced single-agent MDP (S x A reward, (S*A) x S transition). Storage for A
/// actions also holds the MDP of a player with fewer (in its leading entries), so the two players'
/// MDPs, when needed one at a time, share one buffer (SharedInducedModel).
template <typename Scalar, int S, int A>
struct InducedModel {
  /// The induced reward, S x A.
  Scalar reward[S * A];
  /// The induced transition, (S*A) x S.
  Scalar transition[S * A * S];
};

/// Storage for either player's induced MDP, one at a time.
template <typename Scalar, int S, int A1, int A2>
using SharedInducedModel = InducedModel<Scalar, S, (A1 > A2 ? A1 : A2)>;

namespace detail {

// The per-call checks of a game (O(1)); the full model is checked once by validate(game).
template <typename Scalar, int S, int A1, int A2>
Status check_game(const MarkovGame<Scalar, S, A1, A2>& g) {
  if (g.reward == nullptr || g.transition == nullptr || g.initial == nullptr) return Status::null_pointer;
  if (Status st = validate_discount(g.discount); st != Status::ok) return st;
  const Scalar t1 = g.regularizer1.tau, t2 = g.regularizer2.tau;
  if (!std::isfinite(t1) || t1 < Scalar(0) || t1 != t2) return Status::bad_regularization;
  if (t1 > Scalar(0)) {
    if (g.regularizer1.kind == RegularizerKind::kl_reference && g.regularizer1.reference == nullptr)
      return Status::null_pointer;
    if (g.regularizer2.kind == RegularizerKind::kl_reference && g.regularizer2.reference == nullptr)
      return Status::null_pointer;
  }
  return Status::ok;
}

}  // namespace detail

namespace detail {
// player1_mdp() and player2_mdp() below for a policy the calling solver formed itself from its
// checked parameters (its pi_y, with logs formed beside it): their O(S*A) checks of the other
// player's policy and logs are left out; the game's settings are checked, and the numbers are
// the public calls'.
template <typename Scalar, int S, int A1, int A2, int C>
Status player1_mdp_formed(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A2>& pi2,
                          InducedModel<Scalar, S, C>& storage, Mdp<Scalar, S, A1>& mdp,
                          const StateActionMatrix<Scalar, S, A2>* log_pi2 = nullptr) {
  static_assert(C >= A1, "storage for at least player 1's actions");
  if (Status st = check_game(g); st != Status::ok) return st;
  const auto r = g.r();
  const auto P = g.P();
  Eigen::Map<Eigen::Matrix<Scalar, S * A1, S, Eigen::RowMajor>> P1(storage.transition);
  for (int s = 0; s < S; ++s) {
    const Scalar bonus = g.tau() > Scalar(0) ? g.tau() * g.regularizer2.value_from(s, pi2.row(s), log_pi2) : Scalar(0);
    for (int a1 = 0; a1 < A1; ++a1) {
      const int row = s * A1 + a1;
      storage.reward[row] = r.row(s).segment(a1 * A2, A2).dot(pi2.row(s)) + bonus;
      // Summed in a local row (registers) and stored once; the same sums in the same order, the
      // first term a product rather than added to zeros.
      StateRow<Scalar, S> acc = pi2(s, 0) * P.row(row * A2);
      for (int a2 = 1; a2 < A2; ++a2) acc.noalias() += pi2(s, a2) * P.row(row * A2 + a2);
      P1.row(row) = acc;
    }
  }
  mdp = Mdp<Scalar, S, A1>{storage.reward, storage.transition, g.initial, g.discount, g.regularizer1};
  return Status::ok;
}

template <typename Scalar, int S, int A1, int A2, int C>
Status player2_mdp_formed(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                          InducedModel<Scalar, S, C>& storage, Mdp<Scalar, S, A2>& mdp,
                          const StateActionMatrix<Scalar, S, A1>* log_pi1 = nullptr) {
  static_assert(C >= A2, "storage for at least player 2's actions");
  if (Status st = check_game(g); st != Status::ok) return st;
  const auto r = g.r();
  const auto P = g.P();
  Eigen::Map<Eigen::Matrix<Scalar, S * A2, S, Eigen::RowMajor>> P2(storage.transition);
  for (int s = 0; s < S; ++s) {
    const Scalar bonus = g.tau() > Scalar(0) ? g.tau() * g.regularizer1.value_from(s, pi1.row(s), log_pi1) : Scalar(0);
    for (int a2 = 0; a2 < A2; ++a2) {
      Scalar acc(0);
      for (int a1 = 0; a1 < A1; ++a1) acc += pi1(s, a1) * r(s, a1 * A2 + a2);
      storage.reward[s * A2 + a2] = bonus - acc;
      // As player1_mdp: a local row, stored once.
      StateRow<Scalar, S> row = pi1(s, 0) * P.row(a2 + s * A1 * A2);
      for (int a1 = 1; a1 < A1; ++a1) row.noalias() += pi1(s, a1) * P.row((s * A1 + a1) * A2 + a2);
      P2.row(s * A2 + a2) = row;
    }
  }
  mdp = Mdp<Scalar, S, A2>{storage.reward, storage.transition, g.initial, g.discount, g.regularizer2};
  return Status::ok;
}
}  // namespace detail

/// Player 1's MDP given pi2, written into `storage` (for C >= A1 actions); `mdp` views it (with
/// the game's rho). log_pi2: pi2's logs where the caller keeps them (finite; as evaluate()'s), so
/// h2 takes no logarithms, or nullptr.
/// @return ok; null_pointer, bad_discount or bad_regularization (the game's settings);
///         not_finite or bad_policy (pi2, log_pi2). On error neither storage nor mdp changes.
template <typename Scalar, int S, int A1, int A2, int C>
Status player1_mdp(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A2>& pi2,
                   InducedModel<Scalar, S, C>& storage, Mdp<Scalar, S, A1>& mdp,
                   const StateActionMatrix<Scalar, S, A2>* log_pi2 = nullptr) {
  if (Status st = detail::check_game(g); st != Status::ok) return st;
  if (Status st = validate_policy(pi2); st != Status::ok) return st;
  if (log_pi2 != nullptr && !all_finite(*log_pi2)) return Status::not_finite;
  return detail::player1_mdp_formed(g, pi2, storage, mdp, log_pi2);
}

/// Player 2's MDP given pi1 (player 2 maximizes -V), written into `storage` (for C >= A2 actions).
/// log_pi1 as player1_mdp's log_pi2.
/// @return player1_mdp()'s statuses, for pi1; on error neither storage nor mdp changes.
template <typename Scalar, int S, int A1, int A2, int C>
Status player2_mdp(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                   InducedModel<Scalar, S, C>& storage, Mdp<Scalar, S, A2>& mdp,
                   const StateActionMatrix<Scalar, S, A1>* log_pi1 = nullptr) {
  if (Status st = detail::check_game(g); st != Status::ok) return st;
  if (Status st = validate_policy(pi1); st != Status::ok) return st;
  if (log_pi1 != nullptr && !all_finite(*log_pi1)) return Status::not_finite;
  return detail::player2_mdp_formed(g, pi1, storage, mdp, log_pi1);
}

/// The joint policy pi(s, a1*A2 + a2) = pi1(a1|s) pi2(a2|s).
template <typename Scalar, int S, int A1, int A2>
void joint_policy(const StateActionMatrix<Scalar, S, A1>& pi1, const StateActionMatrix<Scalar, S, A2>& pi2,
                  JointMatrix<Scalar, S, A1, A2>& pi) {
  for (int s = 0; s < S; ++s)
    for (int a1 = 0; a1 < A1; ++a1) pi.row(s).segment(a1 * A2, A2) = pi1(s, a1) * pi2.row(s);
}

/// Joint state-action occupancy mu(s,a1,a2) = d(s) pi1(a1|s) pi2(a2|s), the weights of J^T for
/// grad_x V^{pi1,pi2}(rho) (d from the evaluation of either induced MDP).
template <typename Scalar, int S, int A1, int A2>
void joint_occupancy(const StateVector<Scalar, S>& d, const StateActionMatrix<Scalar, S, A1>& pi1,
                     const StateActionMatrix<Scalar, S, A2>& pi2, JointMatrix<Scalar, S, A1, A2>& mu) {
  for (int s = 0; s < S; ++s)
    for (int a1 = 0; a1 < A1; ++a1) mu.row(s).segment(a1 * A2, A2) = (d(s) * pi1(s, a1)) * pi2.row(s);
}

namespace detail {
// Q(s, j) = r(s, j) + gamma <P(.|s, j), v> of the game at joint action j = a1*A2 + a2.
template <typename Scalar, int S, int A1, int A2>
Scalar game_q(const MarkovGame<Scalar, S, A1, A2>& g, int s, int j, const StateVector<Scalar, S>& v) {
  return g.reward[s * A1 * A2 + j] + g.discount * row_dot(g.transition + (s * A1 * A2 + j) * S, v);
}

// The per-state end of add_game_policy_gradients for one player ("own", its marginal q of Q over
// the other's actions): grad(s,.) += scale * (q + tau*h_other - tau*dh_own/dpi) for player 1, who
// ascends V, and scale * (q - tau*h_other + tau*dh_own/dpi) for player 2 (V counts h1 with -, h2
// with +); scale = the call's scale times d(s).
template <bool First, typename Scalar, int S, int A, int B>
void add_player_gradient_row(const Regularizer<Scalar, S, A>& own, const Regularizer<Scalar, S, B>& other,
                             Scalar tau, int s, const Scalar (&q)[A], const StateActionMatrix<Scalar, S, A>& pi,
                             const StateActionMatrix<Scalar, S, B>& pi_other,
                             const StateActionMatrix<Scalar, S, A>* log_pi,
                             const StateActionMatrix<Scalar, S, B>* log_other, Scalar scale,
                             StateActionMatrix<Scalar, S, A>& grad) {
  const Scalar h = tau > Scalar(0) ? tau * other.value_from(s, pi_other.row(s), log_other) : Scalar(0);
  for (int a = 0; a < A; ++a) {
    Scalar gr = First ? q[a] + h : q[a] - h;
    if (tau > Scalar(0)) {
      const Scalar dh = tau * own.derivative_from(s, a, pi, log_pi);
      gr = First ? gr - dh : gr + dh;
    }
    grad(s, a) += scale * gr;
  }
}
}  // namespace detail

/// A joint policy (pi1, pi2) and what the policy gradients read at it: the joint value v =
/// V^{pi1,pi2} and state occupancy d of (pi1, pi2), and the policies' logs where the caller keeps
/// them (an oracle's pi-hat), so that h and dh/dpi take no logarithms (Regularizer::value_from), or
/// nullptr. References to the caller's objects.
template <typename Scalar, int S, int A1, int A2>
struct GamePoint {
  /// Player 1's policy.
  const StateActionMatrix<Scalar, S, A1>& pi1;
  /// Player 2's policy.
  const StateActionMatrix<Scalar, S, A2>& pi2;
  /// The joint value V^{pi1,pi2}.
  const StateVector<Scalar, S>& value;
  /// The state occupancy d of (pi1, pi2).
  const StateVector<Scalar, S>& occupancy;
  /// pi1's logs, or nullptr.
  const StateActionMatrix<Scalar, S, A1>* log_pi1 = nullptr;
  /// pi2's logs, or nullptr.
  const StateActionMatrix<Scalar, S, A2>* log_pi2 = nullptr;
};

/// mu = mu_a - mu_b, the joint occupancies (joint_occupancy) of points a and b, in one pass: the
/// weights of a single J^T product where J^T(w, v) is linear in w alone (is_reward_only). Reads
/// each point's occupancy and policies only.
template <typename Scalar, int S, int A1, int A2>
void joint_occupancy_difference(const GamePoint<Scalar, S, A1, A2>& a, const GamePoint<Scalar, S, A1, A2>& b,
                                JointMatrix<Scalar, S, A1, A2>& mu) {
  const StateVector<Scalar, S>& da = a.occupancy;
  const StateVector<Scalar, S>& db = b.occupancy;
  for (int s = 0; s < S; ++s)
    for (int a1 = 0; a1 < A1; ++a1) {
      const Scalar ua = da(s) * a.pi1(s, a1), ub = db(s) * b.pi1(s, a1);
      for (int a2 = 0; a2 < A2; ++a2) mu(s, a1 * A2 + a2) = ua * a.pi2(s, a2) - ub * b.pi2(s, a2);
    }
}

/// Policy gradients of V^{pi1,pi2}(rho) in direct coordinates at the point p, with
/// Q(s,a1,a2) = r(s,a1,a2) + gamma*<P(.|s,a1,a2), v>:
///   - grad1(s,a1) += scale1 * d(s) ( sum_a2 pi2 Q + tau*h2_s(pi2(s)) - tau*dh1_s/dpi1(a1|s) )
///   - grad2(s,a2) += scale2 * d(s) ( sum_a1 pi1 Q - tau*h1_s(pi1(s)) + tau*dh2_s/dpi2(a2|s) )
///
/// grad1 equals policy_gradient() on player1_mdp(pi2) at pi1, grad2 equals minus policy_gradient()
/// on player2_mdp(pi1) at pi2. The per-state constants (the other player's h) do not matter along
/// the simplex, for softmax logits or for projections onto the simplex. Pass nullptr to skip one.
/// Work O(S * A1 * A2 * S), no storage.
template <typename Scalar, int S, int A1, int A2>
void add_game_policy_gradients(const MarkovGame<Scalar, S, A1, A2>& g, const GamePoint<Scalar, S, A1, A2>& p,
                               Scalar scale1, StateActionMatrix<Scalar, S, A1>* grad1, Scalar scale2,
                               StateActionMatrix<Scalar, S, A2>* grad2) {
  const auto& pi1 = p.pi1;
  const auto& pi2 = p.pi2;
  const auto& v = p.value;
  const auto& d = p.occupancy;
  const auto* log_pi1 = p.log_pi1;
  const auto* log_pi2 = p.log_pi2;
  for (int s = 0; s < S; ++s) {
    // q1 = sum_a2 pi2 Q and q2 = sum_a1 pi1 Q, each summed in the same order whichever is asked
    // for; one alone is summed in a register, with the loop over the other player's actions inside.
    const auto q = [&](int a1, int a2) { return detail::game_q(g, s, a1 * A2 + a2, v); };
    Scalar q1[A1];
    Scalar q2[A2];
    if (grad1 != nullptr) {
      for (int a2 = 0; a2 < A2; ++a2) q2[a2] = Scalar(0);
      for (int a1 = 0; a1 < A1; ++a1) {
        Scalar sum1(0);
        for (int a2 = 0; a2 < A2; ++a2) {
          const Scalar qa = q(a1, a2);
          sum1 += pi2(s, a2) * qa;
          if (grad2 != nullptr) q2[a2] += pi1(s, a1) * qa;
        }
        q1[a1] = sum1;
      }
    } else {
      for (int a2 = 0; a2 < A2; ++a2) {
        Scalar sum2(0);
        for (int a1 = 0; a1 < A1; ++a1) sum2 += pi1(s, a1) * q(a1, a2);
        q2[a2] = sum2;
      }
    }
    if (grad1 != nullptr)
      detail::add_player_gradient_row<true>(g.regularizer1, g.regularizer2, g.tau(), s, q1, pi1, pi2, log_pi1, log_pi2,
                                            scale1 * d(s), *grad1);
    if (grad2 != nullptr)
      detail::add_player_gradient_row<false>(g.regularizer2, g.regularizer1, g.tau(), s, q2, pi2, pi1, log_pi2, log_pi1,
                                             scale2 * d(s), *grad2);
  }
}

/// One term of add_game_policy_gradient_pair: scale times one player's policy gradient (the
/// player with A actions) at the point `at`, added to grad. References to the caller's objects.
template <typename Scalar, int S, int A1, int A2, int A>
struct PlayerGradientTerm {
  const GamePoint<Scalar, S, A1, A2>& at;  ///< where the gradient is taken
  Scalar scale;                            ///< its factor
  StateActionMatrix<Scalar, S, A>& grad;   ///< += scale * the player's policy gradient at `at`
};

/// Two calls of add_game_policy_gradients in one pass over P, each row read once for both values:
/// player 2's term {a, scale_a, grad2} and player 1's term {b, scale_b, grad1} (the two terms of
/// the Nikaido-Isoda penalty's policy gradient). The numbers of the two calls, to the bit.
template <typename Scalar, int S, int A1, int A2>
void add_game_policy_gradient_pair(const MarkovGame<Scalar, S, A1, A2>& g,
                                   PlayerGradientTerm<Scalar, S, A1, A2, A2> player2,
                                   PlayerGradientTerm<Scalar, S, A1, A2, A1> player1) {
  const GamePoint<Scalar, S, A1, A2>& a = player2.at;
  const GamePoint<Scalar, S, A1, A2>& b = player1.at;
  const Scalar scale_a = player2.scale, scale_b = player1.scale;
  StateActionMatrix<Scalar, S, A2>& grad2 = player2.grad;
  StateActionMatrix<Scalar, S, A1>& grad1 = player1.grad;
  const auto &pi1a = a.pi1, &pi1b = b.pi1;
  const auto &pi2a = a.pi2, &pi2b = b.pi2;
  const auto &va = a.value, &vb = b.value, &da = a.occupancy, &db = b.occupancy;
  const auto *log_pi1a = a.log_pi1, *log_pi1b = b.log_pi1;
  const auto *log_pi2a = a.log_pi2, *log_pi2b = b.log_pi2;
  for (int s = 0; s < S; ++s) {
    Scalar q2[A2];  // sum_a1 pi1a Q_a, over a1 in order as the single call sums it
    Scalar q1[A1];  // sum_a2 pi2b Q_b
    for (int a2 = 0; a2 < A2; ++a2) q2[a2] = Scalar(0);
    for (int a1 = 0; a1 < A1; ++a1) {
      Scalar sum1(0);
      for (int a2 = 0; a2 < A2; ++a2) {  // both values' products with one row of P, back to back
        q2[a2] += pi1a(s, a1) * detail::game_q(g, s, a1 * A2 + a2, va);
        sum1 += pi2b(s, a2) * detail::game_q(g, s, a1 * A2 + a2, vb);
      }
      q1[a1] = sum1;
    }
    detail::add_player_gradient_row<false>(g.regularizer2, g.regularizer1, g.tau(), s, q2, pi2a, pi1a, log_pi2a,
                                           log_pi1a, scale_a * da(s), grad2);
    detail::add_player_gradient_row<true>(g.regularizer1, g.regularizer2, g.tau(), s, q1, pi1b, pi2b, log_pi1b,
                                          log_pi2b, scale_b * db(s), grad1);
  }
}

}  // namespace pbrl
