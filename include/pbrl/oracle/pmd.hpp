#pragma once
// Regularized policy mirror descent (paper, appendix "Example algorithms to get pi-hat"),
// with the KL Bregman divergence in closed form (ERRATA item 5), in log space:
//   log pi_{k+1}(.|s) = normalize( (log pi_k(.|s) + eta*Q^{pi_k}(s,.) + eta*tau*log ref(.|s))
//                                  / (1 + eta*tau) )
// With h = entropy the reference is uniform and its term cancels in the normalization.

#include "pbrl/evaluation.hpp"

namespace pbrl {

// One PMD step from (log_pi, pi). eval receives the evaluation of the policy before the step.
// log_pi rows are normalized log-probabilities; pi = exp(log_pi) on return.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status pmd_step(const Mdp<Scalar, S, A>& m, Scalar eta, EvaluationWorkspace<Scalar, S, M>& ws,
                Evaluation<Scalar, S, A>& eval, StateActionMatrix<Scalar, S, A>& log_pi,
                StateActionMatrix<Scalar, S, A>& pi) {
  if (!std::isfinite(eta) || eta <= Scalar(0)) return Status::bad_step_size;
  if (!log_pi.allFinite()) return Status::not_finite;
  if (Status st = evaluate(m, pi, ws, eval); st != Status::ok) return st;
  const Scalar tau = m.tau();
  const Scalar keep = Scalar(1) / (Scalar(1) + eta * tau);
  const bool reference = tau > Scalar(0) && m.regularizer.kind == RegularizerKind::kl_reference;
  for (int s = 0; s < S; ++s) {
    auto row = log_pi.row(s);
    row = keep * (row + eta * eval.q.row(s));
    if (reference)
      for (int a = 0; a < A; ++a) row(a) += keep * eta * tau * m.regularizer.log_reference(s, a);
    normalize_log_row(row);
    row = row.cwiseMax(std::log(log_floor<Scalar>()));  // pi never underflows to an exact 0
    pi.row(s) = row.array().exp().matrix();
  }
  return Status::ok;
}

}  // namespace pbrl
