#pragma once
// Regularized policy mirror descent (paper, appendix "Example algorithms to get pi-hat"),
// with the KL Bregman divergence in closed form (ERRATA item 5), in log space:
//   log pi_{k+1}(.|s) = normalize( (log pi_k(.|s) + eta*Q^{pi_k}(s,.) + eta*tau*log ref(.|s))
//                                  / (1 + eta*tau) )
// With h = entropy the reference is uniform and its term cancels in the normalization.

#include "pbrl/model/evaluation.hpp"

namespace pbrl {

namespace detail {

// The new log-policy row of state s before normalization (A scalars on the stack).
template <typename Scalar, int S, int A>
Eigen::Matrix<Scalar, 1, A> pmd_logits(const Mdp<Scalar, S, A>& m, Scalar eta,
                                       const Evaluation<Scalar, S, A>& eval,
                                       const StateActionMatrix<Scalar, S, A>& log_pi, int s) {
  const Scalar tau = m.tau();
  const Scalar keep = Scalar(1) / (Scalar(1) + eta * tau);
  Eigen::Matrix<Scalar, 1, A> row = keep * (log_pi.row(s) + eta * eval.q.row(s));
  if (tau > Scalar(0) && m.regularizer.kind == RegularizerKind::kl_reference)
    for (int a = 0; a < A; ++a) row(a) += keep * eta * tau * m.regularizer.log_reference(s, a);
  return row;
}

}  // namespace detail

namespace detail {
// pmd_step() below; CheckPolicy = false leaves out the O(S*A) checks of (log_pi, pi), for a warm
// start the caller knows valid (a solver's pi-hat: detail::oracle_step, solver/detail/oracle_steps.hpp).
template <bool CheckPolicy, typename Scalar, int S, int A, EvaluationMethod M>
Status pmd_step(const Mdp<Scalar, S, A>& m, Scalar eta, EvaluationWorkspace<Scalar, S, M>& ws,
                Evaluation<Scalar, S, A>& eval, PolicyPair<Scalar, S, A> policy) {
  if (!std::isfinite(eta) || eta <= Scalar(0)) return Status::bad_step_size;
  StateActionMatrix<Scalar, S, A>& log_pi = policy.log_pi;
  StateActionMatrix<Scalar, S, A>& pi = policy.pi;
  if constexpr (CheckPolicy) {
    if (!pbrl::all_finite(log_pi)) return Status::not_finite;
    if (Status st = pbrl::evaluate(m, pi, ws, eval, &log_pi); st != Status::ok) return st;  // h from log_pi
  } else if (Status st = evaluate_formed_policy(m, pi, ws, eval, &log_pi); st != Status::ok) {
    return st;
  }
  // Two passes over O(S*A) numbers, so that a step that overflows (a huge eta) writes nothing;
  // finite logits always normalize to a finite policy row.
  for (int s = 0; s < S; ++s)
    if (!pmd_logits(m, eta, eval, log_pi, s).allFinite()) return Status::numerical_failure;
  for (int s = 0; s < S; ++s) {
    log_pi.row(s) = pmd_logits(m, eta, eval, log_pi, s);
    normalize_policy_row(log_pi.row(s), pi.row(s));
  }
  return Status::ok;
}
}  // namespace detail

/// One regularized policy mirror descent step from policy = (log_pi, pi), with step size eta.
/// eval is workspace: it receives the evaluation of the policy before the step (on error its
/// contents are unspecified). log_pi rows are normalized log-probabilities and pi = exp(log_pi) on
/// return, both formed by normalize_policy_row (so the output is always a valid input).
/// @return ok; bad_step_size (eta not finite or not > 0); not_finite (log_pi); evaluate()'s
///         statuses for (m, pi, ws); numerical_failure (a step that overflows). On error log_pi
///         and pi are unchanged.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status pmd_step(const Mdp<Scalar, S, A>& m, Scalar eta, EvaluationWorkspace<Scalar, S, M>& ws,
                Evaluation<Scalar, S, A>& eval, PolicyPair<Scalar, S, A> policy) {
  return detail::pmd_step<true>(m, eta, ws, eval, policy);
}

}  // namespace pbrl
