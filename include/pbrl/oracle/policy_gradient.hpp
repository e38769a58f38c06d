#pragma once
// Policy-gradient oracles (paper, appendix "Example algorithms to get pi-hat"):
//   projected (direct):  pi <- Proj_{floored simplex}(pi + eta * dV(rho)/dpi)
//   softmax:             theta <- theta + eta * dV(rho)/dtheta,   pi = softmax(theta)
// The softmax logits are kept as normalized log-probabilities (log_pi), the same state PMD keeps.

#include "pbrl/evaluation.hpp"

namespace pbrl {

// One ascent step. eval receives the evaluation of the policy before the step; grad is scratch.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status policy_gradient_step(const Mdp<Scalar, S, A>& m, const PolicySet<Scalar>& set, Scalar eta,
                            EvaluationWorkspace<Scalar, S, M>& ws, Evaluation<Scalar, S, A>& eval,
                            StateActionMatrix<Scalar, S, A>& grad,
                            StateActionMatrix<Scalar, S, A>& log_pi,
                            StateActionMatrix<Scalar, S, A>& pi) {
  if (!std::isfinite(eta) || eta <= Scalar(0)) return Status::bad_step_size;
  if (Status st = validate<Scalar, A>(set); st != Status::ok) return st;
  if (!log_pi.allFinite()) return Status::not_finite;
  if (Status st = evaluate(m, pi, ws, eval); st != Status::ok) return st;
  policy_gradient(m, pi, eval, grad);
  if (!grad.allFinite()) return Status::numerical_failure;
  const Scalar floor = std::log(log_floor<Scalar>());
  if (set.parameterization == Parameterization::direct) {
    pi += eta * grad;
    project_policy_set<Scalar, S, A>(set, pi);
    log_pi = pi.array().log().matrix();
  } else {
    chain_policy_gradient<Scalar, S, A>(Parameterization::softmax, pi, grad, grad);
    log_pi += eta * grad;
    for (int s = 0; s < S; ++s) {
      normalize_log_row(log_pi.row(s));
      log_pi.row(s) = log_pi.row(s).cwiseMax(floor);
    }
    pi = log_pi.array().exp().matrix();
  }
  return Status::ok;
}

}  // namespace pbrl
