#pragma once
// Trajectories from the generative model of a tabular regularized MDP (rho, P and a policy) and
// their truncated discounted returns, the raw material of sampling/detail/estimators.hpp (the RLHF
// segment sampler walks the same loop, detail::walk, with the same draws):
//   s_0 ~ rho, a_0 ~ sigma(s_0), a_t ~ pi(s_t) for t >= 1, s_{t+1} ~ P(.|s_t, a_t), t < H;
//   V_hat_t = r - tau*h_{s_t}(pi(s_t)) + gamma*V_hat_{t+1},  Q_hat_t = r + gamma*V_hat_{t+1},
//   V_hat_H = 0 (ERRATA item 4: Q has no h at its own step).
// A rollout takes H environment steps and draws exactly 2H + 1 uniforms whatever the policies;
// an index with probability 0 is never drawn, and draws are identical in float and double and on
// every platform. Trajectory is a caller-owned object, the estimators' only scratch.
// Bias and memory: docs/algorithm.md#rollouts.

#include <cstdint>
#include <limits>

#include "pbrl/model/evaluation.hpp"
#include "pbrl/core/rng.hpp"
#include "pbrl/sampling/sampling_settings.hpp"

namespace pbrl {

/// One rollout of horizon H <= MaxHorizon and its returns: caller storage that rollout() fills
/// and compute_returns() completes.
/// @tparam Scalar float or double
/// @tparam MaxHorizon the longest horizon it holds (>= 1)
template <typename Scalar, int MaxHorizon = kMaxHorizon>
struct Trajectory {
  static_assert(MaxHorizon >= 1, "a trajectory holds at least one step");
  /// The longest horizon it holds, MaxHorizon.
  static constexpr int kCapacity = MaxHorizon;
  int horizon = 0;                     ///< H
  int state[MaxHorizon + 1] = {};      ///< s_0 .. s_H
  int action[MaxHorizon] = {};         ///< a_0 .. a_{H-1}
  Scalar value[MaxHorizon + 1] = {};   ///< V_hat_0 .. V_hat_H (compute_returns), V_hat_H = 0
  bool valid = true;                   ///< every draw had a positive entry (else the values are NaN)
};

/// Index drawn from the distribution p (a fixed-size vector or row) by the inverse CDF of one
/// uniform of rng. Requires p's entries >= 0 (callers validate first).
/// @return the index; rounding past the last cumulative sum falls to the last positive entry, so
///         an index of probability 0 is never returned; -1 only if no entry is positive (the
///         rollouts below draw through detail::draw, which never returns it).
// The scan needs no test for zeros (entries are >= 0, validated): a zero entry leaves the sum as
// it was, so u < sum, false at the entry before it (or 0 <= u at the start), stays false there.
template <typename Derived>
int sample_index(Rng& rng, const Eigen::DenseBase<Derived>& p) {
  using Scalar = typename Derived::Scalar;
  const Scalar u = rng.uniform<Scalar>();
  Scalar cumulative(0);
  for (Eigen::Index i = 0; i < p.size(); ++i) {
    cumulative += p.coeff(i);
    if (u < cumulative) return static_cast<int>(i);
  }
  for (Eigen::Index i = p.size() - 1; i >= 0; --i)
    if (p.coeff(i) > Scalar(0)) return static_cast<int>(i);
  return -1;
}

namespace detail {

// sample_index for the rollouts: an index in range whatever p holds. A distribution with no
// positive entry (an array changed behind a problem after its init(): the caller's promise broken)
// draws index 0 and clears `valid`; the rollout's returns are then NaN, which every estimator
// refuses as numerical_failure with nothing changed.
template <typename Derived>
int draw(Rng& rng, const Eigen::DenseBase<Derived>& p, bool& valid) {
  const int i = sample_index(rng, p);
  if (i >= 0) return i;
  valid = false;
  return 0;
}

// The walk every single-agent rollout takes (inputs validated): s_0 ~ rho, then for
// t = 0 .. steps-1: a_t ~ policy_row(t, s_t), visit(t, s_t, a_t), and s_{t+1} ~ P(.|s_t, a_t),
// after the last action only if `final_state` (a trajectory ends at s_H; an RLHF segment ends at
// its last pair and draws no state after it). One uniform per draw, in this order. Returns the
// last state drawn; `valid` is cleared if a draw found no positive entry (detail::draw).
template <typename Scalar, int S, int A, typename PolicyRow, typename Visit>
int walk(const ConstStateMap<Scalar, S>& rho, const ConstTransitionMap<Scalar, S, A>& P, int steps, bool final_state,
         Rng& rng, bool& valid, PolicyRow&& policy_row, Visit&& visit) {
  int s = draw(rng, rho, valid);
  for (int t = 0; t < steps; ++t) {
    const int a = draw(rng, policy_row(t, s), valid);
    visit(t, s, a);
    if (final_state || t + 1 < steps) s = draw(rng, P.row(s * A + a), valid);
  }
  return s;
}

// The rollout without checks (model, policies and horizon already validated).
template <typename Scalar, int S, int A, int MaxHorizon>
void rollout_unchecked(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& sigma,
                       const StateActionMatrix<Scalar, S, A>& pi, int horizon, Rng& rng,
                       Trajectory<Scalar, MaxHorizon>& out) {
  // Callers validated 1 <= horizon <= MaxHorizon; the clamp keeps every index in range by
  // construction (and lets the compiler see it).
  const int H = horizon < MaxHorizon ? horizon : MaxHorizon;
  out.horizon = H;
  bool valid = true;
  out.state[H] = walk<Scalar, S, A>(
      m.rho(), m.P(), H, true, rng, valid, [&](int t, int s) { return t == 0 ? sigma.row(s) : pi.row(s); },
      [&](int t, int s, int a) {
        out.state[t] = s;
        out.action[t] = a;
      });
  out.valid = valid;
}

// V_hat_t for t = H .. 0 (states and actions in range); tau_h(s) gives tau * h_s(pi(s)) of the
// policy followed (called only with tau > 0). A trajectory that is not valid gets NaN values.
template <typename Scalar, int S, int A, int MaxHorizon, typename TauH>
void returns_unchecked(const Mdp<Scalar, S, A>& m, Trajectory<Scalar, MaxHorizon>& traj, TauH&& tau_h) {
  const auto r = m.r();
  const Scalar tau = m.tau();
  const int H = traj.horizon;
  traj.value[H] = Scalar(0);
  for (int t = H - 1; t >= 0; --t) {
    const int s = traj.state[t];
    Scalar v = r(s, traj.action[t]) + m.discount * traj.value[t + 1];
    if (tau > Scalar(0)) v -= tau_h(s);
    traj.value[t] = v;
  }
  if (!traj.valid)
    for (int t = 0; t <= H; ++t) traj.value[t] = std::numeric_limits<Scalar>::quiet_NaN();
}
template <typename Scalar, int S, int A, int MaxHorizon>
void returns_unchecked(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                       Trajectory<Scalar, MaxHorizon>& traj) {
  returns_unchecked(m, traj, [&](int s) { return m.tau() * m.regularizer.value(s, pi.row(s)); });
}

template <typename Scalar, int S, int A>
Status check_rollout(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& sigma,
                     const StateActionMatrix<Scalar, S, A>& pi, int horizon, int max_horizon) {
  if (Status st = check_model(m); st != Status::ok) return st;
  if (horizon < 1 || horizon > max_horizon) return Status::bad_setting;
  if (Status st = validate_policy(sigma); st != Status::ok) return st;
  return validate_policy(pi);
}

}  // namespace detail

/// One rollout of horizon H (1 <= H <= MaxHorizon) into out: s_0 ~ rho, a_0 ~ sigma(s_0), then pi
/// (policy = {sigma, pi});
/// 2H + 1 uniforms of rng. Adds H to `steps`. m must have passed validate(m) once (rho and P are
/// read, not re-checked); sigma and pi are checked (rows distributions).
/// The returns are not computed: call compute_returns() with the policy they should follow.
/// @return ok; null_pointer, bad_discount or bad_regularization (the model's settings);
///         bad_setting (horizon); not_finite or bad_policy (sigma, pi). On error nothing changes
///         (out, rng, steps).
template <typename Scalar, int S, int A, int MaxHorizon>
Status rollout(const Mdp<Scalar, S, A>& m, SwitchingPolicy<Scalar, S, A> policy, int horizon, Rng& rng,
               Trajectory<Scalar, MaxHorizon>& out, std::int64_t& steps) {
  if (Status st = detail::check_rollout(m, policy.sigma, policy.pi, horizon, MaxHorizon); st != Status::ok)
    return st;
  detail::rollout_unchecked(m, policy.sigma, policy.pi, horizon, rng, out);
  steps += horizon;
  return Status::ok;
}

/// traj.value = V_hat_0..V_hat_H under pi (the policy the rollout follows from t = 1; at t = 0 the
/// value subtracts tau*h(pi(s_0)) whatever sigma was). Checks pi and that the trajectory's horizon,
/// states and actions are in range.
/// @return ok; null_pointer, bad_discount or bad_regularization (the model's settings);
///         not_finite or bad_policy (pi); bad_setting (traj's horizon, states or actions out of
///         range); numerical_failure (a return overflows). On error traj is unchanged (the
///         recursion runs once without storing to find out).
template <typename Scalar, int S, int A, int MaxHorizon>
Status compute_returns(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                       Trajectory<Scalar, MaxHorizon>& traj) {
  if (Status st = detail::check_model(m); st != Status::ok) return st;
  if (Status st = validate_policy(pi); st != Status::ok) return st;
  if (traj.horizon < 1 || traj.horizon > MaxHorizon) return Status::bad_setting;
  for (int t = 0; t <= traj.horizon; ++t)
    if (traj.state[t] < 0 || traj.state[t] >= S || (t < traj.horizon && (traj.action[t] < 0 || traj.action[t] >= A)))
      return Status::bad_setting;
  // A non-finite intermediate stays non-finite through the recursion (gamma = 0 turns inf into
  // NaN), so the last value tells.
  Scalar v(0);
  for (int t = traj.horizon - 1; t >= 0; --t) {
    const int s = traj.state[t];
    v = m.r()(s, traj.action[t]) + m.discount * v;
    if (m.tau() > Scalar(0)) v -= m.tau() * m.regularizer.value(s, pi.row(s));
  }
  if (!std::isfinite(v)) return Status::numerical_failure;
  detail::returns_unchecked(m, pi, traj);
  return Status::ok;
}

/// Q_hat_t = r(s_t, a_t) + gamma * V_hat_{t+1} of a trajectory whose returns are computed
/// (0 <= t < H, unchecked).
template <typename Scalar, int S, int A, int MaxHorizon>
Scalar sampled_q(const Mdp<Scalar, S, A>& m, const Trajectory<Scalar, MaxHorizon>& traj, int t) {
  return m.r()(traj.state[t], traj.action[t]) + m.discount * traj.value[t + 1];
}

}  // namespace pbrl
