#pragma once
// Soft value iteration: the exact optimum of a regularized MDP, for reference and as an oracle.
//   V(s) <- tau * log sum_a ref(a|s) exp(Q(s,a)/tau)      (tau > 0; max_a Q(s,a) for tau = 0)
//   Q(s,a) = r(s,a) + gamma * sum_s' P(s'|s,a) V(s')
//   pi*(a|s) = ref(a|s) exp((Q(s,a) - V(s)) / tau)
// A gamma-contraction: after a sweep with sup-norm change c, |V - V*| <= gamma*c/(1-gamma).

#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/regularizer.hpp"

namespace pbrl {

/// What a soft_value_iteration call did.
template <typename Scalar>
struct SoftValueIterationResult {
  /// Sweeps run.
  int iterations = 0;
  bool converged = false;     ///< change <= tolerance; false: stopped at max_iterations (still ok)
  Scalar change = Scalar(0);  ///< sup-norm change of V in the last sweep
};

/// Soft value iteration: at most max_iterations sweeps from the warm start `value` until the
/// sup-norm change is <= tolerance. On return value = V, q = Q of V, and policy = (log_pi, pi)
/// the greedy soft policy. Stopping at max_iterations first is an outcome (result->converged = false), not
/// an error.
/// @return ok; the model's null_pointer, bad_discount or bad_regularization; bad_setting
///         (max_iterations < 1, tolerance not >= 0); not_finite (value); numerical_failure.
///         On error nothing is written. Why: the soft maximum lies between min_a and max_a of Q,
///         so |V_k| <= |r|/(1-gamma) + |V_0|, and checking that bound first means no sweep can
///         overflow.
template <typename Scalar, int S, int A>
Status soft_value_iteration(const Mdp<Scalar, S, A>& m, int max_iterations, Scalar tolerance,
                            StateVector<Scalar, S>& value, StateActionMatrix<Scalar, S, A>& q,
                            PolicyPair<Scalar, S, A> policy, SoftValueIterationResult<Scalar>* result = nullptr) {
  if (Status st = detail::check_model(m); st != Status::ok) return st;
  if (max_iterations < 1 || !(tolerance >= Scalar(0))) return Status::bad_setting;
  if (!all_finite(value)) return Status::not_finite;
  const Scalar bound =
      detail::max_abs(m.reward, S * A) / (Scalar(1) - m.discount) + detail::max_abs(value.data(), S);
  if (!(bound < std::numeric_limits<Scalar>::max() / Scalar(8))) return Status::numerical_failure;
  SoftValueIterationResult<Scalar> res;
  for (; res.iterations < max_iterations;) {
    if (!detail::write_q(m, value, q)) return Status::numerical_failure;
    ++res.iterations;
    res.change = Scalar(0);
    for (int s = 0; s < S; ++s) {
      const Scalar v = detail::soft_max_row(m.regularizer, s, q.row(s));
      res.change = std::max(res.change, std::abs(v - value(s)));
      value(s) = v;
    }
    if (!(res.change > tolerance)) break;
  }
  res.converged = res.change <= tolerance;  // a NaN change is no convergence
  if (!detail::write_q(m, value, q)) return Status::numerical_failure;
  for (int s = 0; s < S; ++s) {
    detail::soft_argmax_logits(m.regularizer, s, q.row(s), policy.log_pi.row(s));
    normalize_policy_row(policy.log_pi.row(s), policy.pi.row(s));
  }
  if (result != nullptr) *result = res;
  return Status::ok;
}

}  // namespace pbrl
