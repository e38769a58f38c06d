#pragma once
// Value penalty (paper, eq. "value penalty", Lemma "Generic gradient form", appendix
// "Example gradient estimators"), with the oracle's policy pi-hat in place of pi*(x):
//   p(x, y)    = V^{pi-hat}(rho) - V^{pi_y}(rho)
//   grad_pi p  = -dV^{pi_y}(rho)/dpi
//   grad_x p   = J^T(mu^{pi-hat}, V^{pi-hat}) - J^T(mu^{pi_y}, V^{pi_y})
// (one vjp_pair() where the problem has it, else two vjp() calls; problem.hpp)
// Exact when pi-hat is the optimum; then p >= 0 and p = 0 iff pi_y is optimal.

#include "pbrl/model/evaluation.hpp"
#include "pbrl/penalty/detail/policies.hpp"
#include "pbrl/model/problem.hpp"

namespace pbrl {

/// The value penalty p(x, y) = V^{pi-hat}(rho) - V^{pi_y}(rho) and its gradient.
/// Returns p and adds lambda * grad p to grad = {grad_x, grad_pi}. y = {pi_y, its evaluation} and
/// hat = {pi_hat, its evaluation}, both on the same M(x) = mdp, built into model; `weights` is
/// S x A scratch. No checks: the inputs are a solver's, checked where they were formed.
template <class Problem, typename Scalar, int S, int A>
Scalar value_penalty(const Problem& problem, const typename Problem::Model& model, const Mdp<Scalar, S, A>& mdp,
                     const PolicyY<Scalar, S, A, true>& y, const PolicyHat<Scalar, S, A, true>& hat, Scalar lambda,
                     StateActionMatrix<Scalar, S, A>& weights,
                     PenaltyGradient<typename Problem::Params, Scalar, S, A> grad) {
  typename Problem::Params& grad_x = grad.grad_x;
  if constexpr (has_vjp_pair<Problem>::value) {
    problem.vjp_pair(model, {hat.eval.occupancy, hat.pi, hat.eval.value, lambda},
                     {y.eval.occupancy, y.pi, y.eval.value, -lambda}, grad_x);
  } else {
    state_action_occupancy(hat.eval, hat.pi, weights);
    problem.vjp(model, weights, hat.eval.value, lambda, grad_x);
    state_action_occupancy(y.eval, y.pi, weights);
    problem.vjp(model, weights, y.eval.value, -lambda, grad_x);
  }
  policy_gradient(mdp, y.pi, y.eval, weights, y.log_pi);
  grad.grad_pi -= lambda * weights;
  return hat.eval.value_rho - y.eval.value_rho;
}

}  // namespace pbrl
