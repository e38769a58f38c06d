#pragma once
// Certified bounds on the optimality gaps of a regularized MDP from one evaluation, sound under
// the rounding of the evaluation and of the bounds themselves:
//   optimality_gap_bound: V* - v <= max_s (T v - v)(s)^+ / (1 - gamma R) for the values v the
//                         caller holds (T the soft Bellman optimality operator, R a bound on P's
//                         row sums);
//   value_rounding_bound: |V^pi - v|_inf <= |res|_inf / (1 - gamma |P_pi|_inf), res the Bellman
//                         residual of v, formed from eval.q.
// The MDP is m's numbers taken as exact reals; it must have passed validate(m). The exponential
// and logarithm are assumed within 2 units in the last place (tests/test_exp.cpp asserts it).
// Derivations and the rounding constants: docs/algorithm.md#certified-gaps.

#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/regularizer.hpp"

#include <cmath>
#include <limits>

namespace pbrl {

namespace detail {

template <typename Scalar>
constexpr Scalar unit_roundoff() {
  return std::numeric_limits<Scalar>::epsilon() / Scalar(2);
}

// gamma_n = n u / (1 - n u).
template <typename Scalar>
Scalar rounding_gamma(int n) {
  const Scalar nu = Scalar(n) * unit_roundoff<Scalar>();
  return nu / (Scalar(1) - nu);
}

// 1 + a bound on the relative rounding of a bound of S states and A actions computed from
// nonnegative terms (depth at most 2S + 2A + 34 roundings), applied once to the result.
template <typename Scalar, int S, int A>
Scalar bound_inflation() {
  return Scalar(1) + Scalar(2) * rounding_gamma<Scalar>(2 * S + 2 * A + 34);
}

// An upper bound on the exact row sums of P of a model that passed validate(m): the computed sum
// is within distribution_tolerance(S) of 1 and within gamma_{S-1} of the exact sum.
template <typename Scalar, int S>
Scalar transition_row_sum_bound() {
  return (Scalar(1) + distribution_tolerance<Scalar>(S)) * (Scalar(1) + Scalar(2) * rounding_gamma<Scalar>(S + 2));
}

// A lower bound on 1 - gamma * k for gamma, k >= 0 (k the bound on a row sum of a transition
// matrix): the product rounds by at most u * gamma * k and the difference by u of itself. Not
// positive when the contraction is not certain in Scalar.
template <typename Scalar>
Scalar contraction_margin(Scalar gamma, Scalar k) {
  const Scalar u = unit_roundoff<Scalar>();
  const Scalar gk = gamma * k;
  return (Scalar(1) - gk) * (Scalar(1) - Scalar(2) * u) - Scalar(2) * u * gk;
}

// The result when no bound can be formed (contraction margin not positive): finite, so that a sum
// of a few of them stays finite, and larger than any tolerance.
template <typename Scalar>
constexpr Scalar no_bound() {
  return std::numeric_limits<Scalar>::max() / Scalar(16);
}

// max_s |v(s)|; NaN if an entry is NaN.
template <typename Scalar, int S>
Scalar max_abs_value(const StateVector<Scalar, S>& v) {
  return max_abs(v.data(), S);
}

// detail::soft_max_row's number (the same expressions in the same order, each q_a + tau log ref_a
// formed once, so the largest shifted exponent is exactly 0), and into err an upper bound on its
// distance from the exact soft maximum of the same q:
//   6 u (max_a |q_a + tau lr_a| + tau max_a |lr_a| + tau (A + 2)),
// which covers the rounding of tau lr_a and q_a + tau lr_a (and of lr_a, 2 ulp), of the shifted
// exponents (2 roundings: each term moves by at most 2u/e absolutely, the sum is >= 1), of the
// exponentials (2 ulp), of the sum of A positive terms (gamma_{A-1}), of its logarithm (2 ulp,
// the sum is at most A), of tau log and of the final sum. tau = 0: the maximum, exact.
template <typename Scalar, int S, int A, typename Row>
Scalar soft_max_row_with_error(const Regularizer<Scalar, S, A>& reg, int s, const Row& q, Scalar& err) {
  if (!(reg.tau > Scalar(0))) {
    err = Scalar(0);
    return q.maxCoeff();
  }
  Scalar w[A];  // q_a + tau log ref_a, each formed once
  Scalar m = -std::numeric_limits<Scalar>::infinity();
  Scalar wmax(0), lmax(0);
  for (int a = 0; a < A; ++a) {
    const Scalar lr = reg.log_reference(s, a);
    w[a] = q(a) + reg.tau * lr;
    m = std::max(m, w[a]);
    wmax = std::max(wmax, std::abs(w[a]));
    lmax = std::max(lmax, std::abs(lr));
  }
  Scalar sum(0);
  for (int a = 0; a < A; ++a) sum += exponential((w[a] - m) / reg.tau);
  err = Scalar(6) * unit_roundoff<Scalar>() * (wmax + reg.tau * (lmax + Scalar(A + 2)));
  return m + reg.tau * logarithm(sum);
}

// Bound on max_a |eval.q(s,a) - Q[v](s,a)| for every s is gamma_{S+2} (max_a |r(s,a)| + gamma R vmax),
// R = transition_row_sum_bound: the rounding of write_q (a dot product of S terms, then
// gamma times it plus r).
template <typename Scalar, int S, int A>
Scalar q_rounding(const Mdp<Scalar, S, A>& m, int s, Scalar gamma_r_vmax) {
  Scalar rmax(0);
  for (int a = 0; a < A; ++a) rmax = std::max(rmax, std::abs(m.reward[s * A + a]));
  return rounding_gamma<Scalar>(S + 2) * (rmax + gamma_r_vmax);
}

// From a bound b on max_s |x(s) - v(s)| (or on max_s x(s) - v(s)), a bound on the same at rho,
// rho . x - fl(rho . v): b sum_s rho(s) + gamma_S sum_s rho(s) |v(s)| (eval.value_rho is Eigen's
// dot of rho and v), and b itself; rho >= 0 (validate(m)).
template <typename Scalar, int S, int A>
Scalar with_rho(const Mdp<Scalar, S, A>& m, Scalar b, Scalar vmax) {
  const Scalar rho_sum = m.rho().sum() * (Scalar(1) + Scalar(2) * rounding_gamma<Scalar>(S));
  const Scalar at_rho = rho_sum * (b + rounding_gamma<Scalar>(S) * vmax);
  return at_rho > b ? at_rho : b;
}

}  // namespace detail

/// A certified upper bound, >= 0, on V*(s) - eval.value(s) for every s and on
/// V*(rho) - eval.value_rho: max_s (T v - v)(s)^+ / (1 - gamma R) with v = eval.value (see above),
/// rounded up for the rounding of eval.q, of the soft maximum and of its own arithmetic. With
/// exact arithmetic it is max_s [soft max of Q^pi(s,.) - V^pi(s)] / (1 - gamma), the optimality
/// certificate of pi; V*(rho) - V^pi(rho) itself is at most it plus value_rounding_bound.
/// Preconditions: m passed validate(m) (then its transition rows sum to 1 within
/// distribution_tolerance); eval.value, eval.q and eval.value_rho are one evaluate() (or
/// evaluate_formed_policy, evaluate_on_chain) call's, made with Q (with_q = true): eval.q is
/// write_q's Q of eval.value. eval.occupancy is not read; the policy is not needed.
/// NaN when m's settings fail check_model or an input is NaN; no_bound() (max/16) when
/// 1 - gamma R is not certainly positive in Scalar. No allocation.
/// Work: O(S*A) (one soft maximum a state, as the formula without rounding, plus a pass over r).
template <typename Scalar, int S, int A>
Scalar optimality_gap_bound(const Mdp<Scalar, S, A>& m, const Evaluation<Scalar, S, A>& eval) {
  if (detail::check_model(m) != Status::ok) return std::numeric_limits<Scalar>::quiet_NaN();
  const Scalar u = detail::unit_roundoff<Scalar>();
  const Scalar row_sum = detail::transition_row_sum_bound<Scalar, S>();
  const Scalar margin = detail::contraction_margin(m.discount, row_sum);
  const Scalar vmax = detail::max_abs_value(eval.value);
  const Scalar gamma_r_vmax = m.discount * row_sum * vmax;
  // Per-state error sums are nonnegative terms, raised by this before they meet g's sign.
  const Scalar up = Scalar(1) + Scalar(2) * detail::rounding_gamma<Scalar>(12);
  Scalar worst(0);
  for (int s = 0; s < S; ++s) {
    Scalar soft_err(0);
    const Scalar soft = detail::soft_max_row_with_error(m.regularizer, s, eval.q.row(s), soft_err);
    const Scalar g = soft - eval.value(s);
    const Scalar err = (detail::q_rounding(m, s, gamma_r_vmax) + soft_err + Scalar(2) * u * std::abs(g)) * up;
    const Scalar g_up = g + err;
    if (!(g_up <= worst) && !std::isnan(worst)) worst = g_up;  // a NaN stays
  }
  if (std::isnan(worst) || std::isnan(vmax)) return std::numeric_limits<Scalar>::quiet_NaN();
  if (!(margin > Scalar(0))) return detail::no_bound<Scalar>();
  const Scalar b = detail::with_rho(m, worst / margin, vmax) * detail::bound_inflation<Scalar, S, A>();
  return b < detail::no_bound<Scalar>() ? b : detail::no_bound<Scalar>();
}

/// A certified upper bound, >= 0, on |eval.value(s) - V^pi(s)| for every s and on
/// |eval.value_rho - V^pi(rho)|: the evaluation's error, whatever the method (LU, sweeps stopped
/// at their tolerance or at max_sweeps), from the residual of eval.value (see above):
///   max_s [|res_c(s)| + E(s)] / (1 - gamma R max_s sum_a |pi(s,a)|),
/// res_c(s) = sum_a pi(s,a) eval.q(s,a) - tau h_s - eval.value(s) as computed here and E(s) its
/// rounding: gamma_{A+2} times its magnitudes, sum_a |pi(s,a)| times eval.q's rounding, and tau
/// times h_s's (its logs within 2 ulp, or log_pi's within 4u (2 + log A + |log_pi|) of log pi,
/// which normalize_policy_row and policy_from_parameters keep: exp, the division and the log
/// of the sum round once each).
/// Preconditions: m passed validate(m); eval is pi's evaluation on m made with Q (with_q = true:
/// eval.q is write_q's Q of eval.value, eval.value_rho Eigen's dot of rho and eval.value). pi
/// finite (rows need not sum to 1 exactly: their sums enter the contraction); log_pi as
/// evaluate()'s (log pi where pi > 0, entries where pi <= 0 not read), or nullptr: then h takes
/// S*A logarithms here. NaN when m's settings fail check_model or an input is not finite;
/// no_bound() when the contraction is not certain in Scalar. No allocation.
/// Work: O(S*A): about 8 multiply-adds or comparisons an entry, no logarithm with log_pi and the
/// entropy (A with kl_reference: log ref).
template <typename Scalar, int S, int A>
Scalar value_rounding_bound(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                            const Evaluation<Scalar, S, A>& eval,
                            const StateActionMatrix<Scalar, S, A>* log_pi = nullptr) {
  if (detail::check_model(m) != Status::ok) return std::numeric_limits<Scalar>::quiet_NaN();
  const Scalar u = detail::unit_roundoff<Scalar>();
  const Scalar tau = m.tau();
  const Scalar row_sum = detail::transition_row_sum_bound<Scalar, S>();
  const Scalar vmax = detail::max_abs_value(eval.value);
  const Scalar gamma_r_vmax = m.discount * row_sum * vmax;
  const Scalar g_dot = detail::rounding_gamma<Scalar>(A + 2);
  const Scalar g_h = detail::rounding_gamma<Scalar>(A + 1) + Scalar(4) * u;
  const Scalar h_const = Scalar(4) * u * (Scalar(2) + std::log(Scalar(A)));
  Scalar worst(0), policy_sum(0);
  for (int s = 0; s < S; ++s) {
    Scalar pq(0), pq_abs(0), p_abs(0);
    for (int a = 0; a < A; ++a) {
      const Scalar p = pi(s, a), qa = eval.q(s, a);
      pq += p * qa;
      pq_abs += std::abs(p) * std::abs(qa);
      p_abs += std::abs(p);
    }
    Scalar h(0), h_mag(0), p_pos(0);
    if (tau > Scalar(0)) {
      for (int a = 0; a < A; ++a) {
        const Scalar p = pi(s, a);
        if (p > Scalar(0)) {
          const Scalar lp = log_pi != nullptr ? (*log_pi)(s, a) : logarithm(p);
          const Scalar lr = m.regularizer.log_reference(s, a);
          h += p * (lp - lr);
          h_mag += p * (std::abs(lp) + std::abs(lr));
          p_pos += p;
        }
      }
    }
    const Scalar res = pq - tau * h - eval.value(s);
    const Scalar err = g_dot * (pq_abs + tau * std::abs(h) + std::abs(eval.value(s))) +
                       p_abs * detail::q_rounding(m, s, gamma_r_vmax) + tau * (g_h * h_mag + h_const * p_pos);
    const Scalar r_up = std::abs(res) + err;
    if (!(r_up <= worst) && !std::isnan(worst)) worst = r_up;  // a NaN stays
    if (!(p_abs <= policy_sum) && !std::isnan(policy_sum)) policy_sum = p_abs;
  }
  if (!std::isfinite(worst) || !std::isfinite(vmax) || !std::isfinite(policy_sum))
    return std::numeric_limits<Scalar>::quiet_NaN();
  // The exact row sums of |P_pi| are at most R * sum_a |pi(s,a)|; that sum rounded by gamma_A.
  const Scalar k = row_sum * policy_sum * (Scalar(1) + Scalar(2) * detail::rounding_gamma<Scalar>(A + 1));
  const Scalar margin = detail::contraction_margin(m.discount, k);
  if (!(margin > Scalar(0))) return detail::no_bound<Scalar>();
  const Scalar b = detail::with_rho(m, worst / margin, vmax) * detail::bound_inflation<Scalar, S, A>();
  return b < detail::no_bound<Scalar>() ? b : detail::no_bound<Scalar>();
}

/// A certified upper bound, >= 0, on pi's own gap V*(s) - V^pi(s) for every s and
/// V*(rho) - V^pi(rho): optimality_gap_bound + value_rounding_bound, rounded up. Preconditions
/// and NaN / no_bound() results as value_rounding_bound's. Work: the two.
template <typename Scalar, int S, int A>
Scalar policy_gap_bound(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                        const Evaluation<Scalar, S, A>& eval, const StateActionMatrix<Scalar, S, A>* log_pi = nullptr) {
  const Scalar b = (optimality_gap_bound(m, eval) + value_rounding_bound(m, pi, eval, log_pi)) *
                   (Scalar(1) + Scalar(2) * detail::unit_roundoff<Scalar>());
  return b < detail::no_bound<Scalar>() || std::isnan(b) ? b : detail::no_bound<Scalar>();
}

/// A certified upper bound, >= 0, on V*(rho) - V^{pi_y}(rho), the lower-level gap of a solver's
/// pi_y, from pi-hat's evaluation (any policy's: only its numbers v enter) and pi_y's:
///   optimality_gap_bound(m, eval_hat)          >= V*(rho) - eval_hat.value_rho
///   + (eval_hat.value_rho - eval_y.value_rho)   computed, plus its rounding
///   + value_rounding_bound(m, pi_y, eval_y)     >= eval_y.value_rho - V^{pi_y}(rho).
/// pi-hat's own evaluation error does not enter. Preconditions: optimality_gap_bound's for
/// eval_hat, value_rounding_bound's for (pi_y, eval_y, log_pi_y), on the same m. NaN and
/// no_bound() as theirs. Work: the two.
/// This overload takes hat = optimality_gap_bound(m, eval_hat), computed once by a caller that
/// reports it.
template <typename Scalar, int S, int A>
Scalar lower_level_gap_bound(const Mdp<Scalar, S, A>& m, Scalar hat, const Evaluation<Scalar, S, A>& eval_hat,
                             const StateActionMatrix<Scalar, S, A>& pi_y, const Evaluation<Scalar, S, A>& eval_y,
                             const StateActionMatrix<Scalar, S, A>* log_pi_y = nullptr) {
  const Scalar u = detail::unit_roundoff<Scalar>();
  const Scalar y = value_rounding_bound(m, pi_y, eval_y, log_pi_y);
  if (std::isnan(hat) || std::isnan(y)) return std::numeric_limits<Scalar>::quiet_NaN();
  if (!(hat < detail::no_bound<Scalar>() && y < detail::no_bound<Scalar>())) return detail::no_bound<Scalar>();
  const Scalar d = eval_hat.value_rho - eval_y.value_rho;
  const Scalar positive = (hat + y + Scalar(2) * u * std::abs(d)) * (Scalar(1) + Scalar(4) * u);
  const Scalar b = (d + positive) * (Scalar(1) + Scalar(2) * u);
  return b > Scalar(0) ? b : Scalar(0);
}
/// lower_level_gap_bound(m, hat, eval_hat, pi_y, eval_y, log_pi_y) with
/// hat = optimality_gap_bound(m, eval_hat).
template <typename Scalar, int S, int A>
Scalar lower_level_gap_bound(const Mdp<Scalar, S, A>& m, const Evaluation<Scalar, S, A>& eval_hat,
                             const StateActionMatrix<Scalar, S, A>& pi_y, const Evaluation<Scalar, S, A>& eval_y,
                             const StateActionMatrix<Scalar, S, A>* log_pi_y = nullptr) {
  return lower_level_gap_bound(m, optimality_gap_bound(m, eval_hat), eval_hat, pi_y, eval_y, log_pi_y);
}

/// A certified upper bound, >= 0, on the Nikaido-Isoda gap of a zero-sum game's (pi1, pi2),
/// V1*(rho) + V2*(rho) on the two players' induced MDPs (player 2's maximizes -V), from each
/// player's evaluation of any policy there (value1, value2: their V(rho)) and its
/// optimality_gap_bound (gap1, gap2): the sum, rounded up. Not negative.
template <typename Scalar>
Scalar nikaido_isoda_gap_bound(Scalar value1, Scalar value2, Scalar gap1, Scalar gap2) {
  const Scalar u = detail::unit_roundoff<Scalar>();
  const Scalar sum = value1 + value2 + (gap1 + gap2);
  const Scalar b = sum + Scalar(4) * u * (std::abs(value1) + std::abs(value2) + gap1 + gap2 + std::abs(sum));
  return b > Scalar(0) ? b : Scalar(0);
}

}  // namespace pbrl
