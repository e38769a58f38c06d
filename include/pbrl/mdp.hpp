#pragma once
// A tabular regularized MDP M_tau = {S, A, r, P, tau*h} with discount gamma and initial
// distribution rho (paper, Section 2.1). The struct is a view: every array belongs to the
// caller (const data in flash, or a problem's model storage) and is read through fixed-size
// maps, never copied.

#include "pbrl/config.hpp"
#include "pbrl/regularizer.hpp"
#include "pbrl/status.hpp"

namespace pbrl {

template <typename Scalar_, int S, int A>
struct Mdp {
  using Scalar = Scalar_;
  static constexpr int kStates = S;
  static constexpr int kActions = A;

  const Scalar* reward = nullptr;      // r(s,a) at [s*A + a]
  const Scalar* transition = nullptr;  // P(s'|s,a) at [(s*A + a)*S + s']
  const Scalar* initial = nullptr;     // rho(s)
  Scalar discount = Scalar(0.9);
  Regularizer<Scalar, S, A> regularizer{};

  ConstStateActionMap<Scalar, S, A> r() const { return ConstStateActionMap<Scalar, S, A>(reward); }
  ConstTransitionMap<Scalar, S, A> P() const { return ConstTransitionMap<Scalar, S, A>(transition); }
  ConstStateMap<Scalar, S> rho() const { return ConstStateMap<Scalar, S>(initial); }
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

// Rows of a transition table are distributions.
template <typename Scalar, int S, int A>
Status validate_transition(const Scalar* transition) {
  if (transition == nullptr) return Status::null_pointer;
  return detail::check_transition_rows(transition, S * A, S);
}

// rho > 0 everywhere and sums to one (the paper's standing assumption).
template <typename Scalar, int S>
Status validate_initial(const Scalar* initial) {
  if (initial == nullptr) return Status::null_pointer;
  return detail::check_initial(initial, S);
}

template <typename Scalar>
Status validate_discount(Scalar gamma) {
  if (!std::isfinite(gamma) || gamma < Scalar(0) || gamma >= Scalar(1)) return Status::bad_discount;
  return Status::ok;
}

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
