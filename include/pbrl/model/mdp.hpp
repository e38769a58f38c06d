#pragma once
// A tabular regularized MDP M_tau = {S, A, r, P, tau*h} with discount gamma and initial
// distribution rho (paper, Section 2.1). The struct is a view: every array belongs to the
// caller (const data in flash, or a problem's model storage) and is read through fixed-size
// maps, never copied.

#include "pbrl/core/config.hpp"
#include "pbrl/model/regularizer.hpp"
#include "pbrl/core/status.hpp"

namespace pbrl {

/// A tabular regularized MDP M_tau = {S, A, r, P, tau*h} with discount gamma and initial
/// distribution rho, as a view of caller arrays (never copied; validate() checks them once).
template <typename Scalar_, int S, int A>
struct Mdp {
  /// The floating-point type (float or double).
  using Scalar = Scalar_;
  /// The number of states S (>= 2).
  static constexpr int kStates = S;
  /// The number of actions A (>= 2).
  static constexpr int kActions = A;

  const Scalar* reward = nullptr;      ///< r(s,a) at [s*A + a]
  const Scalar* transition = nullptr;  ///< P(s'|s,a) at [(s*A + a)*S + s']
  const Scalar* initial = nullptr;     ///< rho(s)
  /// gamma, in [0, 1).
  Scalar discount = Scalar(0.9);
  /// tau * h: the regularizer's kind, tau >= 0 and, for kl_reference, the reference policy.
  Regularizer<Scalar, S, A> regularizer{};

  /// The reward r as an S x A map.
  ConstStateActionMap<Scalar, S, A> r() const { return ConstStateActionMap<Scalar, S, A>(reward); }
  /// The transition table P as an (S*A) x S map: row s*A + a is P(. | s, a).
  ConstTransitionMap<Scalar, S, A> P() const { return ConstTransitionMap<Scalar, S, A>(transition); }
  /// The initial distribution rho as a map.
  ConstStateMap<Scalar, S> rho() const { return ConstStateMap<Scalar, S>(initial); }
  /// The regularization weight tau.
  Scalar tau() const { return regularizer.tau; }
};

namespace detail {

// The two checks below at runtime sizes: validate_transition and validate_initial are these at
// their template sizes, and a host tool (tools/codegen) runs them on a model whose sizes it reads
// from a file, so the tool and the device accept the same arrays.
template <typename Scalar>
Status check_transition_rows(const Scalar* transition, int rows, int states) {
  return check_distribution_rows(transition, rows, states, Scalar(0), false, distribution_tolerance<Scalar>(states),
                                 Status::bad_transition);
}
template <typename Scalar>
Status check_initial(const Scalar* initial, int states) {
  return check_distribution_rows(initial, 1, states, Scalar(0), true, distribution_tolerance<Scalar>(states),
                                 Status::bad_distribution);
}

}  // namespace detail

/// Checks that the rows of an (S*A) x S transition table are distributions.
/// @return ok; null_pointer; not_finite; bad_transition (a negative entry or a row not summing
///         to one).
template <typename Scalar, int S, int A>
Status validate_transition(const Scalar* transition) {
  if (transition == nullptr) return Status::null_pointer;
  return detail::check_transition_rows(transition, S * A, S);
}

/// Checks that rho > 0 everywhere and sums to one (the paper's standing assumption).
/// @return ok; null_pointer; not_finite; bad_distribution.
template <typename Scalar, int S>
Status validate_initial(const Scalar* initial) {
  if (initial == nullptr) return Status::null_pointer;
  return detail::check_initial(initial, S);
}

/// Checks that the discount gamma is finite and in [0, 1).
/// @return ok or bad_discount.
template <typename Scalar>
Status validate_discount(Scalar gamma) {
  if (!std::isfinite(gamma) || gamma < Scalar(0) || gamma >= Scalar(1)) return Status::bad_discount;
  return Status::ok;
}

/// Checks a whole MDP once, O(S^2 A): every array given, the rewards finite, the transition
/// rows and rho distributions, the discount, the regularizer. Later calls (evaluate() and the
/// oracles) check only the cheap settings.
/// @return ok; null_pointer; not_finite; bad_transition; bad_distribution; bad_discount; or the
///         regularizer's bad_regularization.
template <typename Scalar, int S, int A>
Status validate(const Mdp<Scalar, S, A>& m) {
  check_sizes<S, A>();
  if (m.reward == nullptr) return Status::null_pointer;
  if (!detail::all_finite(m.reward, S * A)) return Status::not_finite;
  if (Status st = validate_transition<Scalar, S, A>(m.transition); st != Status::ok) return st;
  if (Status st = validate_initial<Scalar, S>(m.initial); st != Status::ok) return st;
  if (Status st = validate_discount(m.discount); st != Status::ok) return st;
  return validate(m.regularizer);
}

}  // namespace pbrl
