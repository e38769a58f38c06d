#pragma once
// Value penalty (paper, eq. "value penalty", Lemma "Generic gradient form", appendix
// "Example gradient estimators"), with the oracle's policy pi-hat in place of pi*(x):
//   p(x, y)    = V^{pi-hat}(rho) - V^{pi_y}(rho)
//   grad_pi p  = -dV^{pi_y}(rho)/dpi
//   grad_x p   = J^T(mu^{pi-hat}, V^{pi-hat}) - J^T(mu^{pi_y}, V^{pi_y})
// Exact when pi-hat is the optimum; then p >= 0 and p = 0 iff pi_y is optimal.

#include "pbrl/evaluation.hpp"

namespace pbrl {

// Returns p and adds scale * grad p to (grad_x, grad_pi). The evaluations are of pi_y and
// pi_hat on the same M(x) = mdp; `weights` is S x A scratch.
template <class Problem, typename Scalar, int S, int A>
Scalar value_penalty(const Problem& problem, const typename Problem::Params& x,
                     const Mdp<Scalar, S, A>& mdp, const StateActionMatrix<Scalar, S, A>& pi_y,
                     const Evaluation<Scalar, S, A>& eval_y,
                     const StateActionMatrix<Scalar, S, A>& pi_hat,
                     const Evaluation<Scalar, S, A>& eval_hat, Scalar scale,
                     StateActionMatrix<Scalar, S, A>& weights, typename Problem::Params& grad_x,
                     StateActionMatrix<Scalar, S, A>& grad_pi) {
  state_action_occupancy(eval_hat, pi_hat, weights);
  problem.vjp(x, weights, eval_hat.value, scale, grad_x);
  state_action_occupancy(eval_y, pi_y, weights);
  problem.vjp(x, weights, eval_y.value, -scale, grad_x);
  policy_gradient(mdp, pi_y, eval_y, weights);
  grad_pi -= scale * weights;
  return eval_hat.value_rho - eval_y.value_rho;
}

}  // namespace pbrl
