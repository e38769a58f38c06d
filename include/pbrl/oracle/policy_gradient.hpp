#pragma once
// Policy-gradient oracles (paper, appendix "Example algorithms to get pi-hat"):
//   projected (direct):  pi <- Proj_{floored simplex}(pi + eta * dV(rho)/dpi)
//   softmax:             theta <- theta + eta * dV(rho)/dtheta,   pi = softmax(theta)
// The softmax logits are kept as normalized log-probabilities (log_pi), the same state PMD keeps.

#include "pbrl/model/evaluation.hpp"

namespace pbrl {

/// The ascent update from a gradient g in the set's coordinates (direct: dV/dpi, softmax:
/// dV/dlogits), shared by the exact oracle below and the sampled ones:
///   - direct: pi <- Proj_{floored simplex}(pi + eta g)
///   - softmax: log_pi <- normalize(log_pi + eta g), floored at log_floor (normalize_policy_row)
///
/// In both, pi sums to 1 within a few eps however large eta*g is (the projection works relative
/// to the row's maximum), so the result always passes validate_policy on the next call.
/// g is consumed (it holds the new policy afterwards).
/// @return ok, or numerical_failure (a non-finite result), and then policy is unchanged.
template <typename Scalar, int S, int A>
Status policy_ascent_update(const PolicySet<Scalar>& set, Scalar eta, StateActionMatrix<Scalar, S, A>& g,
                            PolicyPair<Scalar, S, A> policy) {
  StateActionMatrix<Scalar, S, A>& next = g;  // the gradient is consumed row by row
  StateActionMatrix<Scalar, S, A>& log_pi = policy.log_pi;
  StateActionMatrix<Scalar, S, A>& pi = policy.pi;
  if (set.parameterization == Parameterization::direct) {
    next = pi + eta * g;
    if (!all_finite(next)) return Status::numerical_failure;  // before the projection hides it
    project_policy_set<Scalar, S, A>(set, next);
    if (!all_finite(next)) return Status::numerical_failure;
    pi = next;
    log_pi = pi.array().log().matrix();  // pi >= set.floor > 0: finite
  } else {
    next = log_pi + eta * g;
    // Finite logits always give a finite policy row, so checking them first suffices.
    if (!all_finite(next)) return Status::numerical_failure;
    log_pi = next;
    for (int s = 0; s < S; ++s) normalize_policy_row(log_pi.row(s), pi.row(s));
  }
  return Status::ok;
}

namespace detail {
// policy_gradient_step() below; CheckPolicy = false leaves out the O(S*A) checks of (log_pi, pi),
// for a warm start the caller knows valid (a solver's pi-hat: detail::oracle_step,
// solver/detail/oracle_steps.hpp).
template <bool CheckPolicy, typename Scalar, int S, int A, EvaluationMethod M>
Status policy_gradient_step(const Mdp<Scalar, S, A>& m, const PolicySet<Scalar>& set, Scalar eta,
                            EvaluationWorkspace<Scalar, S, M>& ws, Evaluation<Scalar, S, A>& eval,
                            StateActionMatrix<Scalar, S, A>& grad, PolicyPair<Scalar, S, A> policy) {
  if (!std::isfinite(eta) || eta <= Scalar(0)) return Status::bad_step_size;
  if (Status st = pbrl::validate<Scalar, A>(set); st != Status::ok) return st;
  StateActionMatrix<Scalar, S, A>& log_pi = policy.log_pi;
  StateActionMatrix<Scalar, S, A>& pi = policy.pi;
  // h and dh/dpi from log_pi (the log of pi, kept beside it): no logs taken.
  if constexpr (CheckPolicy) {
    if (!pbrl::all_finite(log_pi)) return Status::not_finite;
    if (Status st = pbrl::evaluate(m, pi, ws, eval, &log_pi); st != Status::ok) return st;
  } else if (Status st = evaluate_formed_policy(m, pi, ws, eval, &log_pi); st != Status::ok) {
    return st;
  }
  pbrl::policy_gradient(m, pi, eval, grad, &log_pi);
  if (!pbrl::all_finite(grad)) return Status::numerical_failure;
  if (set.parameterization == Parameterization::softmax)
    pbrl::chain_policy_gradient<Scalar, S, A>(Parameterization::softmax, pi, grad, grad);
  return pbrl::policy_ascent_update<Scalar, S, A>(set, eta, grad, policy);
}
}  // namespace detail

/// One policy-gradient ascent step on V(rho), projected (direct) or softmax by set, with step
/// size eta.
/// eval and grad are workspace: eval receives the evaluation of the policy before the step (on
/// error the contents of both are unspecified).
/// @return ok; bad_step_size (eta); bad_setting (set); not_finite (log_pi); evaluate()'s statuses
///         for (m, pi, ws); numerical_failure. On error log_pi and pi are unchanged: the new policy
///         is formed in grad and copied only once it is finite.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status policy_gradient_step(const Mdp<Scalar, S, A>& m, const PolicySet<Scalar>& set, Scalar eta,
                            EvaluationWorkspace<Scalar, S, M>& ws, Evaluation<Scalar, S, A>& eval,
                            StateActionMatrix<Scalar, S, A>& grad, PolicyPair<Scalar, S, A> policy) {
  return detail::policy_gradient_step<true>(m, set, eta, ws, eval, grad, policy);
}

}  // namespace pbrl
