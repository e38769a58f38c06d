#pragma once
// Nikaido-Isoda penalty of a zero-sum game (paper, eq. "ni-fun", Lemma "Gradient dominance of
// psi" (a)), with the oracles' approximate best responses pi-hat1, pi-hat2 in place of the exact
// ones:
//   psi(x, pi)    = V^{pihat1,pi2}(rho) - V^{pi1,pihat2}(rho)                (>= 0 when exact)
//   grad_x psi    = J^T(mu^{pihat1,pi2}, V^{pihat1,pi2}) - J^T(mu^{pi1,pihat2}, V^{pi1,pihat2})
//   grad_pi1 psi  = -dV^{pi1,pihat2}(rho)/dpi1
//   grad_pi2 psi  =  dV^{pihat1,pi2}(rho)/dpi2
// mu is the joint state-action occupancy. pi-hat1 is evaluated on player 1's MDP given pi2 and
// pi-hat2 on player 2's MDP given pi1 (game.hpp): there V1 = V^{pihat1,pi2}, V2 = -V^{pi1,pihat2}.
// psi is 0 exactly at the regularized Nash equilibrium of M_tau(x); it is the NE gap.

#include "pbrl/model/game.hpp"
#include "pbrl/penalty/detail/policies.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"

namespace pbrl {

/// Caller scratch of nikaido_isoda_penalty.
template <typename Scalar, int S, int A1, int A2>
struct NikaidoIsodaScratch {
  /// The joint occupancy weights of the x-products.
  JointMatrix<Scalar, S, A1, A2> weights = JointMatrix<Scalar, S, A1, A2>::Zero();
  /// Player 2's values as the joint game's (-V).
  StateVector<Scalar, S> value = StateVector<Scalar, S>::Zero();
};

/// The Nikaido-Isoda penalty psi(x, pi) of a zero-sum game and its gradient.
/// Returns psi and adds lambda * grad psi to (grad_x, grad_pi1, grad_pi2). y1 = {pi1}, y2 = {pi2};
/// hat1 = {pi1_hat, its evaluation on player1_mdp(game, pi2)}, hat2 = {pi2_hat, its evaluation on
/// player2_mdp(game, pi1)}; game = M(x) and model as problem.build(x, model, game) wrote them.
/// No checks: the inputs are a solver's, checked where they were formed.
// The (pi-hat1, pi2) terms take value and occupancy straight from player 1's MDP, the
// (pi1, pi-hat2) terms from player 2's, whose value is -V; the two policy gradients are one pass
// over P (add_game_policy_gradient_pair), and where P_x does not depend on x (is_reward_only) the
// two x-products are one, of the difference of the joint occupancies.
template <class GameProblem, typename Scalar, int S, int A1, int A2>
Scalar nikaido_isoda_penalty(const GameProblem& problem, const typename GameProblem::Model& model,
                             const MarkovGame<Scalar, S, A1, A2>& game, const PolicyY<Scalar, S, A1, false>& y1,
                             const PolicyY<Scalar, S, A2, false>& y2, const PolicyHat<Scalar, S, A1, true>& hat1,
                             const PolicyHat<Scalar, S, A2, true>& hat2, Scalar lambda,
                             NikaidoIsodaScratch<Scalar, S, A1, A2>& scratch,
                             typename GameProblem::Params& grad_x,
                             StateActionMatrix<Scalar, S, A1>& grad_pi1,
                             StateActionMatrix<Scalar, S, A2>& grad_pi2) {
  scratch.value = -hat2.eval.value;
  // The penalty's two points: (pi-hat1, pi2) on player 1's MDP and (pi1, pi-hat2) on player 2's.
  const GamePoint<Scalar, S, A1, A2> first{hat1.pi, y2.pi, hat1.eval.value, hat1.eval.occupancy, hat1.log_pi,
                                           y2.log_pi};
  const GamePoint<Scalar, S, A1, A2> second{y1.pi, hat2.pi, scratch.value, hat2.eval.occupancy, y1.log_pi,
                                            hat2.log_pi};
  if constexpr (is_reward_only<GameProblem>::value) {  // one product, with mu1 - mu2
    joint_occupancy_difference(first, second, scratch.weights);
    problem.vjp(model, scratch.weights, hat1.eval.value, lambda, grad_x);
  } else {
    joint_occupancy(hat1.eval.occupancy, hat1.pi, y2.pi, scratch.weights);
    problem.vjp(model, scratch.weights, hat1.eval.value, lambda, grad_x);
    joint_occupancy(hat2.eval.occupancy, y1.pi, hat2.pi, scratch.weights);
    problem.vjp(model, scratch.weights, scratch.value, -lambda, grad_x);
  }
  add_game_policy_gradient_pair(game, {first, lambda, grad_pi2}, {second, -lambda, grad_pi1});
  return hat1.eval.value_rho + hat2.eval.value_rho;
}

/// Caller storage of nikaido_isoda_exact: exact best responses by soft value iteration on both
/// induced MDPs, and the exact psi (for reports, tests and baselines that do not run oracles of
/// their own).
template <typename Scalar, int S, int A1, int A2>
struct BestResponseWorkspace {
  SharedInducedModel<Scalar, S, A1, A2> model;  ///< player 1's induced MDP, then player 2's
  StateVector<Scalar, S> value1 = StateVector<Scalar, S>::Zero();  ///< V*_1 (warm start, kept)
  StateVector<Scalar, S> value2 = StateVector<Scalar, S>::Zero();  ///< V*_2 = -min_pi2 V (kept)
  /// @{
  /// Player 1's best response BR1(pi2): Q, log pi1 and pi1.
  StateActionMatrix<Scalar, S, A1> q1, log_pi1, pi1;               // pi1 = BR1(pi2)
  /// @}
  /// @{
  /// Player 2's best response BR2(pi1): Q, log pi2 and pi2.
  StateActionMatrix<Scalar, S, A2> q2, log_pi2, pi2;               // pi2 = BR2(pi1)
  /// @}
  /// @{
  /// Each player's soft value iteration: whether it met the tolerance.
  SoftValueIterationResult<Scalar> result1{}, result2{};            // each player's soft value iteration
  /// @}
};

/// psi(pi1, pi2) = max_pi1' V^{pi1',pi2}(rho) - min_pi2' V^{pi1,pi2'}(rho) = rho.V*_1 + rho.V*_2,
/// from at most max_iterations sweeps per player (warm-started from ws.value1/2) to the sup-norm
/// change `tolerance`. ws holds the best responses afterwards, and in result1/2 whether each
/// player's sweeps met the tolerance (psi is ok either way: stopping at max_iterations is an
/// outcome).
/// @return ok; the statuses of player1_mdp / player2_mdp and soft_value_iteration;
///         numerical_failure. On error psi is unchanged (ws is scratch).
template <typename Scalar, int S, int A1, int A2>
Status nikaido_isoda_exact(const MarkovGame<Scalar, S, A1, A2>& game, const StateActionMatrix<Scalar, S, A1>& pi1,
                           const StateActionMatrix<Scalar, S, A2>& pi2, int max_iterations, Scalar tolerance,
                           BestResponseWorkspace<Scalar, S, A1, A2>& ws, Scalar& psi) {
  Mdp<Scalar, S, A1> m1;
  Mdp<Scalar, S, A2> m2;
  if (Status st = player1_mdp(game, pi2, ws.model, m1); st != Status::ok) return st;
  if (Status st = soft_value_iteration(m1, max_iterations, tolerance, ws.value1, ws.q1, {ws.log_pi1, ws.pi1},
                                       &ws.result1);
      st != Status::ok)
    return st;
  if (Status st = player2_mdp(game, pi1, ws.model, m2); st != Status::ok) return st;
  if (Status st = soft_value_iteration(m2, max_iterations, tolerance, ws.value2, ws.q2, {ws.log_pi2, ws.pi2},
                                       &ws.result2);
      st != Status::ok)
    return st;
  const Scalar p = game.rho().dot(ws.value1) + game.rho().dot(ws.value2);
  if (!std::isfinite(p)) return Status::numerical_failure;
  psi = p;
  return Status::ok;
}

}  // namespace pbrl
