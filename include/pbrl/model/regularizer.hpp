#pragma once
// The regularization tau * h_s(pi(s)) of a regularized MDP (paper, Section 2.1).
// h_s is 1-strongly convex and non-negative on the simplex (ERRATA item 4):
//   entropy:      h_s(p) = sum_a p_a log p_a + log|A|      (KL to the uniform policy)
//   kl_reference: h_s(p) = sum_a p_a log(p_a / ref(a|s))
// Both are evaluated with the same formula off the simplex, so derivatives with respect to
// unnormalized policies (finite-difference checks, direct parameterization) are consistent.
// Also here: the regularizer's conjugate, the soft maximum max_p [<p, q> - tau h_s(p)], and its
// maximizer, which soft value iteration, the Bellman penalty and the optimality certificates share.

#include "pbrl/core/config.hpp"
#include "pbrl/core/detail/enum_names.hpp"
#include "pbrl/core/detail/exp.hpp"
#include "pbrl/core/detail/log.hpp"
#include "pbrl/core/status.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pbrl {

/// h_s: the negative entropy (KL to the uniform policy) or the KL to a reference policy.
enum class RegularizerKind : unsigned char { entropy, kl_reference };
/// RegularizerKind's enumerator names, as settings and model files spell them.
constexpr EnumNames<RegularizerKind, 2> enum_names(RegularizerKind) { return {{"entropy", "kl_reference"}}; }
static_assert(enum_names(RegularizerKind{}).size == int(RegularizerKind::kl_reference) + 1, "a name per enumerator");

/// The regularization tau * h_s(pi(s)) of a regularized MDP: h_s is 1-strongly convex and
/// non-negative on the simplex (the comment atop regularizer.hpp). validate() checks it.
template <typename Scalar, int S, int A>
struct Regularizer {
  /// Which h_s.
  RegularizerKind kind = RegularizerKind::entropy;
  /// tau, finite and >= 0 (0: no regularization).
  Scalar tau = Scalar(0);
  const Scalar* reference = nullptr;  ///< S x A row-major, only for kl_reference (rows positive, summing to one)

  /// log ref(a|s); the uniform reference for the entropy.
  Scalar log_reference(int s, int a) const {
    if (kind == RegularizerKind::kl_reference) return logarithm(reference[s * A + a]);
    return -std::log(Scalar(A));
  }

  /// h_s(p) for one policy row.
  template <typename Row>
  Scalar value(int s, const Row& p) const {
    Scalar h(0);
    for (int a = 0; a < A; ++a) {
      const Scalar pa = p(a);
      if (pa > Scalar(0)) h += pa * (logarithm(pa) - log_reference(s, a));
    }
    return h;
  }
  /// h_s(p) from log_p = log p (entries with p_a <= 0 are not read): a caller that has the logs
  /// without taking them (a softmax's log is its shifted logits minus one log-sum) saves A logs.
  template <typename Row, typename LogRow>
  Scalar value(int s, const Row& p, const LogRow& log_p) const {
    Scalar h(0);
    for (int a = 0; a < A; ++a)
      if (p(a) > Scalar(0)) h += p(a) * (log_p(a) - log_reference(s, a));
    return h;
  }

  /// h_s(p) for row s of a policy, from row s of log_pi when the caller keeps the logs
  /// (log_pi != nullptr), else taking them: the one switch every user of optional logs goes through.
  template <typename Row, typename LogMatrix>
  Scalar value_from(int s, const Row& p, const LogMatrix* log_pi) const {
    return log_pi != nullptr ? value(s, p, log_pi->row(s)) : value(s, p);
  }

  /// d h_s / d p_a = log p_a + 1 - log ref(a|s); the floor keeps it finite at p_a = 0.
  Scalar derivative(int s, int a, Scalar pa) const {
    const Scalar floored = pa > log_floor<Scalar>() ? pa : log_floor<Scalar>();
    return logarithm(floored) + Scalar(1) - log_reference(s, a);
  }
  /// d h_s / d p_a from log_pa = log p_a, floored alike.
  Scalar derivative_at_log(int s, int a, Scalar log_pa) const {
    const Scalar floor = std::log(log_floor<Scalar>());
    return (log_pa > floor ? log_pa : floor) + Scalar(1) - log_reference(s, a);
  }
  /// d h_s / d p_a at entry (s, a) of a policy pi, from log_pi when given (as value_from).
  template <typename Matrix>
  Scalar derivative_from(int s, int a, const Matrix& pi, const Matrix* log_pi) const {
    return log_pi != nullptr ? derivative_at_log(s, a, (*log_pi)(s, a)) : derivative(s, a, pi(s, a));
  }
};

namespace detail {

// The soft maximum, the regularizer's conjugate at one state:
//   max_p [<p, q> - tau h_s(p)] = tau * log sum_a ref(a|s) exp(q_a / tau),   or max_a q_a when tau = 0.
// Written as M + tau * log sum_a exp((q_a + tau log ref_a - M) / tau) with M the largest
// q_a + tau log ref_a, so no exponent is positive and q/tau never overflows, however small tau is.
template <typename Scalar, int S, int A, typename Row>
Scalar soft_max_row(const Regularizer<Scalar, S, A>& reg, int s, const Row& q) {
  if (!(reg.tau > Scalar(0))) return q.maxCoeff();
  Scalar m = -std::numeric_limits<Scalar>::infinity();
  for (int a = 0; a < A; ++a) m = std::max(m, q(a) + reg.tau * reg.log_reference(s, a));
  Scalar sum(0);
  for (int a = 0; a < A; ++a) sum += exponential((q(a) + reg.tau * reg.log_reference(s, a) - m) / reg.tau);
  return m + reg.tau * logarithm(sum);
}

// The maximizer of the soft maximum (its gradient in q), as unnormalized log-probabilities:
// log ref(a|s) + (q_a - max q) / tau, shifted so no entry overflows for a tiny tau; for tau = 0
// the greedy row, 0 at the first largest q_a and log(log_floor) elsewhere. The caller normalizes
// (normalize_policy_row, policy.hpp).
template <typename Scalar, int S, int A, typename Row, typename LogRow>
void soft_argmax_logits(const Regularizer<Scalar, S, A>& reg, int s, const Row& q, LogRow&& logits) {
  if (reg.tau > Scalar(0)) {
    const Scalar top = q.maxCoeff();
    for (int a = 0; a < A; ++a) logits(a) = reg.log_reference(s, a) + (q(a) - top) / reg.tau;
  } else {
    int best = 0;
    q.maxCoeff(&best);
    logits.setConstant(std::log(log_floor<Scalar>()));
    logits(best) = Scalar(0);
  }
}

}  // namespace detail

namespace detail {

// validate(Regularizer)'s checks at runtime sizes (as detail::check_transition_rows, mdp.hpp, for
// host tools): tau finite and >= 0; reference rows (rows of A) positive and summing to one.
template <typename Scalar>
Status check_tau(Scalar tau) {
  return std::isfinite(tau) && tau >= Scalar(0) ? Status::ok : Status::bad_regularization;
}
template <typename Scalar>
Status check_reference_rows(const Scalar* reference, int rows, int actions) {
  return check_distribution_rows(reference, rows, actions, Scalar(0), true, distribution_tolerance<Scalar>(actions),
                                 Status::bad_regularization);
}

}  // namespace detail

/// Checks a regularizer: tau finite and >= 0; for kl_reference, the reference's rows positive and
/// summing to one.
/// @return ok; bad_regularization (tau, a reference row, an unknown kind); null_pointer (no
///         reference); not_finite (a reference entry).
template <typename Scalar, int S, int A>
Status validate(const Regularizer<Scalar, S, A>& reg) {
  if (Status st = detail::check_tau(reg.tau); st != Status::ok) return st;
  if (reg.kind == RegularizerKind::kl_reference) {
    if (reg.reference == nullptr) return Status::null_pointer;
    if (Status st = detail::check_reference_rows(reg.reference, S, A); st != Status::ok) return st;
  } else if (reg.kind != RegularizerKind::entropy) {
    return Status::bad_regularization;
  }
  return Status::ok;
}

}  // namespace pbrl
