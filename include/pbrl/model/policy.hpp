#pragma once
// Tabular policies pi(a|s) and their parameterizations y (paper, Sections 2-3):
//   direct:  y(s,.) = pi(.|s), the policy set is the simplex with a floor eps on every
//            action (it keeps log pi and the regularizer's gradient finite);
//   softmax: y(s,.) are logits, pi(.|s) = softmax(y(s,.)), the set is the box |y| <= bound.
// Gradients are computed in direct coordinates (d/d pi) and chained to y here, so penalties,
// problems and oracles never depend on the parameterization.

#include "pbrl/core/config.hpp"
#include "pbrl/core/detail/enum_names.hpp"
#include "pbrl/core/detail/exp.hpp"
#include "pbrl/core/detail/log.hpp"
#include "pbrl/core/status.hpp"

namespace pbrl {

/// How parameters y give a policy: direct (y is pi, on the floored simplex) or softmax (y are
/// logits in a box).
enum class Parameterization : unsigned char { direct, softmax };
/// The enumerators' names (enum_names.hpp: settings files read them by name).
constexpr EnumNames<Parameterization, 2> enum_names(Parameterization) { return {{"direct", "softmax"}}; }
static_assert(enum_names(Parameterization{}).size == int(Parameterization::softmax) + 1, "a name per enumerator");

/// A policy set: the parameterization and its bound (validate() checks it against the action count).
template <typename Scalar>
struct PolicySet {
  /// Direct or softmax parameters.
  Parameterization parameterization = Parameterization::softmax;
  Scalar floor = Scalar(1e-6);       ///< direct: minimum probability of every action (> 0, floor * A < 1)
  Scalar logit_bound = Scalar(50);   ///< softmax: box on the logits, |y| <= logit_bound (> 0)
};

/// Checks the policy set for `actions` actions, a runtime count (host tools check settings files
/// with it); validate<Scalar, A> below is the solvers'.
/// @return ok, or bad_setting: direct with a floor not finite, not > 0 or with floor * actions >= 1;
///         softmax with a logit bound not finite or not > 0; another parameterization.
template <typename Scalar>
Status validate(const PolicySet<Scalar>& set, int actions) {
  if (set.parameterization == Parameterization::direct) {
    if (!std::isfinite(set.floor) || set.floor <= Scalar(0) || set.floor * Scalar(actions) >= Scalar(1))
      return Status::bad_setting;
  } else if (set.parameterization == Parameterization::softmax) {
    if (!std::isfinite(set.logit_bound) || set.logit_bound <= Scalar(0)) return Status::bad_setting;
  } else {
    return Status::bad_setting;
  }
  return Status::ok;
}

/// validate(set, A) for a compile-time action count A.
template <typename Scalar, int A>
Status validate(const PolicySet<Scalar>& set) {
  return validate(set, A);
}

/// A policy an oracle updates in place, in the two forms it keeps: log_pi, normalized
/// log-probabilities, and pi = exp(log_pi) (normalize_policy_row forms both). References to the
/// caller's matrices: build it in the call, {log_pi, pi}. Why a struct: the oracles' other matrix
/// arguments (q, grad) have the same Eigen type; one named pair cannot be passed in their place.
template <typename Scalar, int S, int A>
struct PolicyPair {
  StateActionMatrix<Scalar, S, A>& log_pi;  ///< normalized log-probabilities
  StateActionMatrix<Scalar, S, A>& pi;      ///< the probabilities, exp(log_pi)
};

/// The policy of trajectories that take their first action a_0 ~ sigma(s_0) and every later one
/// from pi (the Bellman penalty's mu' and its sampled estimate: sigma = pi_y, pi = pi-hat).
/// References to the caller's matrices: build it in the call, {sigma, pi}. Why a struct: the two
/// are the same Eigen type with different roles, and a positional swap would compile.
template <typename Scalar, int S, int A>
struct SwitchingPolicy {
  const StateActionMatrix<Scalar, S, A>& sigma;  ///< the first action's policy
  const StateActionMatrix<Scalar, S, A>& pi;     ///< every later action's policy
};

/// Euclidean projection of one row onto {p : p_a >= floor, sum_a p_a = 1}, in place.
/// Sort-based (Duchi et al. 2008) on a copy of A numbers; A is an action count, small. A row with
/// a non-finite entry becomes all NaN, so that the caller's finiteness check sees it.
/// Why on row - max(row): the projection is invariant to adding a constant to the row, and the
/// entries that end up above the floor are then within 1 of 0, so the result sums to 1 within a
/// few eps however large the row is (a gradient step pi + eta*g with eta*g ~ 1e9 would otherwise
/// leave the sum off by eps*1e9 and the projected policy would fail validate_policy).
template <typename Row>
void project_simplex(Row&& row, typename std::decay_t<Row>::Scalar floor) {
  using Scalar = typename std::decay_t<Row>::Scalar;
  constexpr int A = std::decay_t<Row>::SizeAtCompileTime;
  static_assert(A > 0, "fixed-size rows only");
  // Shift by the floor: project onto the simplex of mass 1 - A*floor.
  const Scalar mass = Scalar(1) - Scalar(A) * floor;
  // A row with a non-finite entry projects to NaN, so that the caller's finiteness check sees it
  // (a row of -inf used to land on the floor everywhere: finite, summing to A * floor).
  if (!all_finite(row)) {
    row.setConstant(std::numeric_limits<Scalar>::quiet_NaN());
    return;
  }
  const Scalar top = row.maxCoeff();
  Scalar u[A];
  for (int a = 0; a < A; ++a) u[a] = (row(a) - top) - floor;
  for (int i = 1; i < A; ++i) {  // insertion sort, descending
    const Scalar v = u[i];
    int j = i - 1;
    while (j >= 0 && u[j] < v) { u[j + 1] = u[j]; --j; }
    u[j + 1] = v;
  }
  Scalar cumulative(0), theta(0);
  for (int k = 0; k < A; ++k) {
    cumulative += u[k];
    const Scalar t = (cumulative - mass) / Scalar(k + 1);
    if (u[k] - t > Scalar(0)) theta = t;
  }
  for (int a = 0; a < A; ++a) {
    const Scalar shifted = (row(a) - top) - floor - theta;
    row(a) = (shifted > Scalar(0) ? shifted : Scalar(0)) + floor;
  }
}

/// The softmax core of both forms below: pi <- exp(z) divided by its sum, for a row z of A logits
/// already shifted by their max (so the largest term is exp(0) = 1).
/// @return the sum, in [1, A]; pi's logs are z - log(sum), one log a row, taken only by callers
///         that keep them.
/// Why divided by the very sum it has: pi then sums to 1 within A eps however large the logits
/// (exp of a row normalized by log-sum-exp sums to 1 only within eps*|logits|, and logits
/// eta*Q ~ 1e3, as at gamma 0.999, are past validate_policy's 64*A*eps).
// Over pointers to the A entries (a row of a row-major matrix), not Eigen blocks: GCC keeps it
// out of line, and a block passed by reference is built in memory at every call. The exponential
// is exponential_row's (exp.hpp); the sum and division Eigen's on maps of the rows.
template <int A, typename Scalar>
inline Scalar softmax_of_shifted(const Scalar* z, Scalar* pi) {
  exponential_row<A>(z, pi);
  Eigen::Map<Eigen::Matrix<Scalar, 1, A>> p(pi);
  const Scalar total = p.sum();
  p /= total;
  return total;
}

/// One policy row from a row of logits (finite, or -inf for a probability 0), in place:
/// log_pi <- logits - max - log(sum), pi <- softmax_of_shifted, each floored (pi at log_floor,
/// log_pi at its log). So pi = exp(log_pi) up to rounding, pi_a >= log_floor and sum_a pi_a = 1
/// within a few eps. Every oracle that keeps log pi forms (log_pi, pi) here, so its output is
/// always a valid input to the next call.
template <typename LogRow, typename Row>
void normalize_policy_row(LogRow&& log_pi, Row&& pi) {
  using Scalar = typename std::decay_t<LogRow>::Scalar;
  static_assert(detail::contiguous<std::decay_t<LogRow>>() && detail::contiguous<std::decay_t<Row>>(),
                "rows stored one entry after another (rows of a row-major matrix)");
  const Scalar top = log_pi.maxCoeff(), bottom = log_pi.minCoeff();
  log_pi.array() -= top;
  const Scalar log_total = logarithm(softmax_of_shifted<std::decay_t<LogRow>::SizeAtCompileTime>(log_pi.data(), pi.data()));
  log_pi.array() -= log_total;
  // Floor last, so pi never underflows to an exact 0 (log pi and its gradient stay finite);
  // raising an entry to log_floor (1e-292 in double, 1e-31 in float) does not move the sum.
  // (bottom - top) - log_total is the row's smallest log pi as just formed; one above
  // log(floor) + 1 leaves both floors nothing to raise (that pi is e times the floor within a few
  // eps), so they are skipped: the same numbers, two passes fewer for almost every row.
  const Scalar log_floor_value = std::log(log_floor<Scalar>());
  if (!((bottom - top) - log_total > log_floor_value + Scalar(1))) {
    log_pi = log_pi.cwiseMax(log_floor_value);
    pi = pi.cwiseMax(log_floor<Scalar>());
  }
}

/// pi = policy of parameters y: for softmax, softmax_of_shifted of each row less its max.
/// log_pi (when not nullptr) gets pi's logs beside it, as normalize_policy_row forms an oracle's
/// but without its floors (a solver's logits are bounded), so the regularizer's h and dh/dpi of
/// pi take no logarithms (Regularizer::value_from); one log a row, none when log_pi is nullptr.
/// For direct parameters pi = y, and log_pi is left as it was (direct policies may have zero
/// entries): callers that pass logs on pass them only for softmax.
template <typename Scalar, int S, int A>
void policy_from_parameters(Parameterization param, const StateActionMatrix<Scalar, S, A>& y,
                            StateActionMatrix<Scalar, S, A>& pi, StateActionMatrix<Scalar, S, A>* log_pi = nullptr) {
  if (param == Parameterization::direct) {
    pi = y;
    return;
  }
  for (int s = 0; s < S; ++s) {
    const Scalar m = y.row(s).maxCoeff();
    Scalar* shifted = log_pi != nullptr ? log_pi->row(s).data() : pi.row(s).data();
    for (int a = 0; a < A; ++a) shifted[a] = y(s, a) - m;
    const Scalar total = softmax_of_shifted<A>(shifted, pi.row(s).data());
    if (log_pi != nullptr) log_pi->row(s).array() -= logarithm(total);
  }
}

/// grad_y = (d pi / d y)^T grad_pi: the chain rule from direct coordinates to the parameters.
/// For softmax: pi_a * (g_a - <pi, g>) per state; for direct: grad_pi.
template <typename Scalar, int S, int A>
void chain_policy_gradient(Parameterization param, const StateActionMatrix<Scalar, S, A>& pi,
                           const StateActionMatrix<Scalar, S, A>& grad_pi,
                           StateActionMatrix<Scalar, S, A>& grad_y) {
  if (param == Parameterization::direct) {
    grad_y = grad_pi;
    return;
  }
  for (int s = 0; s < S; ++s) {
    const Scalar mean = pi.row(s).dot(grad_pi.row(s));
    grad_y.row(s) = pi.row(s).cwiseProduct((grad_pi.row(s).array() - mean).matrix());
  }
}

/// The natural policy gradient of softmax logits: per state, (g_a - <pi, g>) / d(s), the solution
/// of F_s u = (d pi / d y)^T g with the Fisher block F_s = d(s) (diag(pi) - pi pi^T) that sums to
/// zero under pi. g = dF/dpi, d the state occupancy of pi; d(s) is read as at least 1e-6 of d's
/// total, so that an unvisited state's row stays finite. -u is a descent direction of any
/// objective: its change along it is minus sum_s Var_pi(g(s, .)) / d(s).
template <typename Scalar, int S, int A>
void natural_policy_gradient(const StateActionMatrix<Scalar, S, A>& pi, const StateActionMatrix<Scalar, S, A>& grad_pi,
                             const StateVector<Scalar, S>& occupancy, StateActionMatrix<Scalar, S, A>& grad_y) {
  const Scalar floor = occupancy.sum() * Scalar(1e-6);
  for (int s = 0; s < S; ++s) {
    const Scalar d = occupancy(s) > floor ? occupancy(s) : floor;
    const Scalar mean = pi.row(s).dot(grad_pi.row(s));
    grad_y.row(s) = ((grad_pi.row(s).array() - mean) / d).matrix();
  }
}

/// Euclidean projection of y onto the policy set Y, in place (direct: each row onto the floored
/// simplex; softmax: the logits clamped to the box).
template <typename Scalar, int S, int A>
void project_policy_set(const PolicySet<Scalar>& set, StateActionMatrix<Scalar, S, A>& y) {
  if (set.parameterization == Parameterization::direct) {
    for (int s = 0; s < S; ++s) project_simplex(y.row(s), set.floor);
  } else {
    y = y.cwiseMax(-set.logit_bound).cwiseMin(set.logit_bound);
  }
}

/// y <- the parameters of the uniform policy in set's parameterization: 1/A per action (direct),
/// zero logits (softmax or any other value). In the set whenever validate(set) holds: the usual
/// start of a solve.
template <typename Scalar, int S, int A>
void uniform_parameters(const PolicySet<Scalar>& set, StateActionMatrix<Scalar, S, A>& y) {
  y.setConstant(set.parameterization == Parameterization::direct ? Scalar(1) / Scalar(A) : Scalar(0));
}

/// Checks that y lies in the policy set: direct rows have every entry >= floor and sum to one
/// within tolerance; softmax logits lie in the box.
/// @return ok; validate(set)'s bad_setting; not_finite; bad_policy (y outside the set).
template <typename Scalar, int S, int A>
Status validate_parameters(const PolicySet<Scalar>& set, const StateActionMatrix<Scalar, S, A>& y) {
  if (Status st = validate<Scalar, A>(set); st != Status::ok) return st;
  if (set.parameterization == Parameterization::direct)  // floor: the projection meets it exactly
    return detail::check_distribution_rows(y.data(), S, A, set.floor, false, distribution_tolerance<Scalar>() * A,
                                           Status::bad_policy);
  if (!detail::all_finite(y.data(), S * A)) return Status::not_finite;
  return detail::all_within(y.data(), S * A, -set.logit_bound, set.logit_bound) ? Status::ok : Status::bad_policy;
}

namespace detail {

// validate<Scalar, A>(set) for each action count A in turn: the first error, else ok.
template <typename Scalar, int... A>
Status validate_for_actions(const PolicySet<Scalar>& set) {
  Status st = Status::ok;
  (void)(... && ((st = pbrl::validate<Scalar, A>(set)) == Status::ok));
  return st;
}

// A solver's start point, checked in its init()'s order: x0 by the problem (its box), then each
// player's y in the policy set. The first error, else ok.
template <class Problem, typename Scalar, int S, int... A>
Status validate_start(const Problem& problem, const typename Problem::Params& x0, const PolicySet<Scalar>& set,
                      const StateActionMatrix<Scalar, S, A>&... y) {
  if (Status st = problem.validate_parameters(x0); st != Status::ok) return st;
  Status st = Status::ok;
  (void)(... && ((st = pbrl::validate_parameters<Scalar, S, A>(set, y)) == Status::ok));
  return st;
}

}  // namespace detail

/// Checks that pi (probabilities) has rows that are distributions; zeros allowed.
/// @return ok; not_finite; bad_policy (a negative entry or a row not summing to one).
template <typename Scalar, int S, int A>
Status validate_policy(const StateActionMatrix<Scalar, S, A>& pi) {
  return detail::check_distribution_rows(pi.data(), S, A, Scalar(0), false, distribution_tolerance<Scalar>() * A,
                                         Status::bad_policy);
}

}  // namespace pbrl
