#pragma once
// Bellman penalty (paper, eq. "bellman penalty", Lemma "Generic gradient form" for it,
// appendix "Example gradient estimators"), with the oracle's Q^{pi-hat} in place of Q*:
//   g(x, y) = E_{s~rho}[ -<pi_y(s), Q(s,.)> + tau*h_s(pi_y(s)) ],   v(x) = min_y g(x, y)
//   p(x, y) = E_{s~rho}[ softmax_tau Q(s,.) - <pi_y(s), Q(s,.)> + tau*h_s(pi_y(s)) ] >= 0
//             (softmax_tau q = tau*log sum_a ref(a) exp(q_a/tau), max_a q_a for tau = 0)
//   grad_pi p(s,a) = rho(s) * (tau*dh_s/dpi(a|s) - Q(s,a))
//   grad_x p = J^T(mu^{pi-hat}, V^{pi-hat}) - J^T(mu'_{rho, pi_y -> pi-hat}, V^{pi-hat})
// where mu' starts with a_0 ~ pi_y(s_0) and follows pi-hat (ERRATA item 3). At pi-hat = pi*
// this is the paper's penalty and gradient exactly.

#include "pbrl/model/evaluation.hpp"
#include "pbrl/penalty/detail/policies.hpp"
#include "pbrl/model/regularizer.hpp"

namespace pbrl {

/// The Bellman penalty p(x, y) (with the oracle's Q^{pi-hat} in place of Q*) and its gradient.
/// Returns p and adds lambda * grad p to grad = {grad_x, grad_pi}. y = {pi_y}, hat = {pi_hat, its
/// evaluation} on M(x) = mdp (built into model), and start_occupancy = mu' from
/// occupancy_from_start(mdp, {pi_y, pi_hat}, ...). weights: scratch. No checks: the inputs are a
/// solver's, checked where they were formed.
template <class Problem, typename Scalar, int S, int A>
Scalar bellman_penalty(const Problem& problem, const typename Problem::Model& model, const Mdp<Scalar, S, A>& mdp,
                       const PolicyY<Scalar, S, A, false>& y, const PolicyHat<Scalar, S, A, true>& hat,
                       const StateActionMatrix<Scalar, S, A>& start_occupancy, Scalar lambda,
                       StateActionMatrix<Scalar, S, A>& weights,
                       PenaltyGradient<typename Problem::Params, Scalar, S, A> grad) {
  StateActionMatrix<Scalar, S, A>& grad_pi = grad.grad_pi;
  const StateActionMatrix<Scalar, S, A>& pi_y = y.pi;
  const Evaluation<Scalar, S, A>& eval_hat = hat.eval;
  const auto rho = mdp.rho();
  const Scalar tau = mdp.tau();
  Scalar p(0);
  for (int s = 0; s < S; ++s) {
    Scalar gap = detail::soft_max_row(mdp.regularizer, s, eval_hat.q.row(s)) -
                 pi_y.row(s).dot(eval_hat.q.row(s));
    if (tau > Scalar(0)) gap += tau * mdp.regularizer.value_from(s, pi_y.row(s), y.log_pi);
    p += rho(s) * gap;
    for (int a = 0; a < A; ++a) {
      Scalar g = -eval_hat.q(s, a);
      if (tau > Scalar(0)) g += tau * mdp.regularizer.derivative_from(s, a, pi_y, y.log_pi);
      grad_pi(s, a) += lambda * rho(s) * g;
    }
  }
  state_action_occupancy(eval_hat, hat.pi, weights);
  weights -= start_occupancy;
  problem.vjp(model, weights, eval_hat.value, lambda, grad.grad_x);
  return p;
}

}  // namespace pbrl
