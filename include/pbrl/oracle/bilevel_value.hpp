#pragma once
// The bilevel answer: the upper-level value against the lower level's exact regularized solution
// at x (pi*(x), or for a zero-sum lower level the regularized Nash equilibrium), which is what a
// deployed leader meets; f(x, y) at the solver's relaxed y flatters it. The problems'
// value_at_best_response(x, [task,] ws, out) use what this header holds: BestResponseSettings
// (caps, the certificate's tolerance), BestResponseValue (value, certified lower-level gap,
// iterations, converged), regularized_best_response (certified by optimality_gap_bound) and
// regularized_nash_equilibrium (certified by its Nikaido-Isoda gap psi).
// "Tolerance not met" is an outcome (converged = false), never an error Status; a Status other
// than ok means the inputs were refused (outputs unchanged) or a computation was not finite.
// More: docs/algorithm.md#the-bilevel-value.

#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/game.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/oracle/optimality_gap.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/penalty/nikaido_isoda.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

/// The caps and the certificate's tolerance of a value_at_best_response call
/// (regularized_best_response, regularized_nash_equilibrium).
template <typename Scalar>
struct BestResponseSettings {
  /// Value-iteration sweeps per call: soft value iteration (single agent) or Shapley sweeps (game);
  /// also the cap of each of the two soft value iterations that compute psi. In [1, INT_MAX]
  /// (the oracle's counter).
  std::int64_t max_iterations = 10000;
  /// Game only: damped Newton steps per state and Shapley sweep on the state's matrix game (>= 1).
  std::int64_t max_inner_iterations = 100;
  /// Target of the certificate: converged = (certified lower-level gap <= tolerance). Absolute, in
  /// value units (finite, >= 0). sqrt(eps): about 1.5e-8 in double, 3.5e-4 in float, well above
  /// the rounding of the certificate itself (about S * eps * |V| / (1 - gamma)).
  Scalar tolerance = std::sqrt(std::numeric_limits<Scalar>::epsilon());
};

/// Checks the settings' ranges.
/// @return ok or bad_setting.
template <typename Scalar>
Status validate(const BestResponseSettings<Scalar>& s) {
  if (s.max_iterations < 1 || s.max_iterations > std::numeric_limits<int>::max()) return Status::bad_setting;
  if (s.max_inner_iterations < 1) return Status::bad_setting;
  if (!std::isfinite(s.tolerance) || s.tolerance < Scalar(0)) return Status::bad_setting;
  return Status::ok;
}

/// The outcome of a value_at_best_response call. "Tolerance not met" is an outcome
/// (converged = false), never an error Status.
template <typename Scalar>
struct BestResponseValue {
  /// The upper level's value at the exact lower-level solution, in the experiment's sign (higher
  /// is better): Stackelberg V_l^{pi_x,pi*(x)}(rho) = -f(x, pi*(x)); incentive design the
  /// designer's reward -f(pi_NE(x)); reward shaping the task's value -f(x, pi*(x)); RLHF the true
  /// return of pi*(x) on the caller's task. regularized_best_response: the lower level's own
  /// V^{pi*}(rho).
  Scalar value = Scalar(0);
  /// Certified upper bound on the lower level's gap at the returned solution (exact arithmetic):
  /// single agent max_s V*(s) - V^{pi*}(s) (optimality_gap_bound); game psi plus the bound on
  /// the error of its computation (NashResult).
  Scalar lower_level_gap = Scalar(0);
  std::int64_t iterations = 0;  ///< value-iteration sweeps used (soft VI, or Shapley sweeps)
  bool converged = false;       ///< lower_level_gap <= settings.tolerance
};

namespace detail {

// Sweep tolerance of soft value iteration that meets `tolerance` on the optimality gap: the last
// change c gives |V - V*| <= gamma c / (1 - gamma), and the soft-greedy policy of such V loses
// at most 2 gamma |V - V*| / (1 - gamma), so c = tolerance (1 - gamma)^2 / (2 gamma^2). Never
// below the rounding floor of the sweeps, 16 eps (1 + |r|) / (1 - gamma) (|V| is about
// |r| / (1 - gamma)), where further sweeps change nothing.
template <typename Scalar, int S, int A>
Scalar soft_sweep_tolerance(const Mdp<Scalar, S, A>& m, Scalar tolerance) {
  const Scalar gamma = m.discount, keep = Scalar(1) - gamma;
  const Scalar wanted = gamma > Scalar(0) ? tolerance * keep * keep / (Scalar(2) * gamma * gamma) : tolerance;
  const Scalar floor =
      Scalar(16) * std::numeric_limits<Scalar>::epsilon() * (Scalar(1) + detail::max_abs(m.reward, S * A)) / keep;
  return wanted > floor ? wanted : floor;
}

}  // namespace detail

namespace detail {

// pi's evaluation on m into eval (direct method), then the certified bound on its optimality gap,
// the evaluation's rounding included (oracle/optimality_gap.hpp, policy_gap_bound): max_s V*(s) -
// V^pi(s) <= max_s (T v - v)(s) / (1 - gamma) + |v - V^pi|, T the soft Bellman optimality
// operator, v the computed values. On error bound is unchanged.
template <typename Scalar, int S, int A>
Status evaluate_and_bound(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& pi,
                          EvaluationWorkspace<Scalar, S, EvaluationMethod::direct>& ws, Evaluation<Scalar, S, A>& eval,
                          Scalar& bound) {
  if (Status st = evaluate(m, pi, ws, eval); st != Status::ok) return st;
  const Scalar b = policy_gap_bound(m, pi, eval);
  if (!std::isfinite(b)) return Status::numerical_failure;
  bound = b;
  return Status::ok;
}

}  // namespace detail

/// Caller storage of regularized_best_response: soft value iteration's warm start and results, and
/// the certificate's evaluation. About 4*S*A + S*S + 7*S scalars.
template <typename Scalar, int S, int A>
struct RegularizedOptimum {
  StateVector<Scalar, S> value = StateVector<Scalar, S>::Zero();  ///< V* (warm start; kept, changed only on success)
  StateVector<Scalar, S> next = StateVector<Scalar, S>::Zero();   ///< scratch
  /// After a success: Q of V*.
  StateActionMatrix<Scalar, S, A> q = StateActionMatrix<Scalar, S, A>::Zero();
  /// After a success: log pi*, pi* the soft-greedy policy of q.
  StateActionMatrix<Scalar, S, A> log_pi = StateActionMatrix<Scalar, S, A>::Zero();
  /// After a success: pi*, the soft-greedy policy of q (probabilities).
  StateActionMatrix<Scalar, S, A> pi = StateActionMatrix<Scalar, S, A>::Zero();
  Evaluation<Scalar, S, A> evaluation{};  ///< V^{pi*}, Q^{pi*}, d^{pi*} on the MDP after a success
  /// Scratch of the certificate's evaluation.
  EvaluationWorkspace<Scalar, S, EvaluationMethod::direct> workspace;
};

/// pi* of the regularized MDP m by soft value iteration warm-started from opt.value, certified by
/// optimality_gap_bound.
/// out.value = V^{pi*}_m(rho), out.lower_level_gap = the bound, out.iterations = sweeps,
/// out.converged = bound <= settings.tolerance. m must have passed validate(m) once (this call
/// checks the O(1) settings of m, as evaluate() does).
/// Work: at most settings.max_iterations sweeps of O(S*A*S), then one S x S LU.
/// @return ok; the model's null_pointer, bad_discount or bad_regularization; bad_setting
///         (settings); not_finite (opt.value); numerical_failure. On error out and opt.value are
///         unchanged (the rest of opt is scratch).
template <typename Scalar, int S, int A>
Status regularized_best_response(const Mdp<Scalar, S, A>& m, const BestResponseSettings<Scalar>& settings,
                                 RegularizedOptimum<Scalar, S, A>& opt, BestResponseValue<Scalar>& out) {
  if (Status st = detail::check_model(m); st != Status::ok) return st;
  if (Status st = validate(settings); st != Status::ok) return st;
  if (!all_finite(opt.value)) return Status::not_finite;
  opt.next = opt.value;
  SoftValueIterationResult<Scalar> sweeps;
  if (Status st = soft_value_iteration(m, static_cast<int>(settings.max_iterations),
                                       detail::soft_sweep_tolerance(m, settings.tolerance), opt.next, opt.q,
                                       {opt.log_pi, opt.pi}, &sweeps);
      st != Status::ok)
    return st;
  Scalar gap(0);
  if (Status st = detail::evaluate_and_bound(m, opt.pi, opt.workspace, opt.evaluation, gap); st != Status::ok)
    return st;
  opt.value = opt.next;
  out.value = opt.evaluation.value_rho;
  out.lower_level_gap = gap;
  out.iterations = sweeps.iterations;
  out.converged = gap <= settings.tolerance;
  return Status::ok;
}

/// Caller storage of value_at_best_response for a problem whose answer is pi*(x) of its learner's
/// MDP M(x) scored on a task MDP (RewardShaping, RlhfProblem: their BilevelValueWorkspace).
/// @tparam Model the problem's Model, build()'s storage for M(x)
template <typename Scalar, int S, int A, class Model>
struct TaskValueWorkspace {
  /// The caps and the certificate's tolerance.
  BestResponseSettings<Scalar> settings{};
  /// Scratch: M(x), as build() writes it.
  Model model;
  /// After a success: pi*(x) in optimum.pi; the warm start.
  RegularizedOptimum<Scalar, S, A> optimum{};
  /// After a success: pi*(x) on the task.
  Evaluation<Scalar, S, A> task_evaluation{};
};

namespace detail {

// value_at_best_response's answer once M(x) is built into learner (a view of ws.model): pi*(x) by
// regularized_best_response, then its V(rho) on task (which the caller has validated). out gets
// the certificate and that value; on error out is unchanged.
template <typename Scalar, int S, int A, class Model>
Status value_on_task(const Mdp<Scalar, S, A>& learner, const Mdp<Scalar, S, A>& task,
                     TaskValueWorkspace<Scalar, S, A, Model>& ws, BestResponseValue<Scalar>& out) {
  BestResponseValue<Scalar> lower;
  if (Status st = regularized_best_response(learner, ws.settings, ws.optimum, lower); st != Status::ok) return st;
  if (Status st = evaluate(task, ws.optimum.pi, ws.optimum.workspace, ws.task_evaluation); st != Status::ok)
    return st;
  out = lower;
  out.value = ws.task_evaluation.value_rho;
  return Status::ok;
}

}  // namespace detail

// ---- The regularized Nash equilibrium of a zero-sum Markov game --------------------------------
//
// Method: Shapley's value iteration on the regularized game (ERRATA item 8),
//   V(s) <- val_tau[Q_V(s)],   Q_V(s,a1,a2) = r(s,a1,a2) + gamma <P(.|s,a1,a2), V>,
//   val_tau[Q] = max_p min_q p^T Q q - tau h1(p) + tau h2(q),
// a gamma-contraction in the sup norm (linear rate gamma); its fixed point V* is the value of the
// regularized game and the states' matrix-game equilibria form its regularized NE. Each state's
// matrix game (strongly concave-convex for tau > 0, so its equilibrium is unique) is the fixed
// point z = (p, q) = T(z) of the two best responses
//   T(z) = ( softmax(Q q / tau + log ref1), softmax(-Q^T p / tau + log ref2) ),
// found by damped Newton on F(z) = z - T(z) with an Armijo backtracking line search on |F|^2/2,
// warm-started from the previous sweep's equilibrium. F is defined on all of R^(A1+A2), and
// its Jacobian I - DT, DT = [[0, Sigma1 Q / tau], [-Sigma2 Q^T / tau, 0]] with Sigma = diag(t) - t t^T
// positive semi-definite, has only purely imaginary eigenvalues in DT, so I - DT is never singular
// (and uniformly invertible on the compact set of Sigmas): Newton-Armijo converges globally at a
// linear rate, and quadratically near the equilibrium (one or two steps per sweep once warm).
// Stopping: a sweep whose change c is <= tolerance (1 - gamma)^2 / (8 gamma) (the policies of a
// sweep are the equilibria of Q_V with V the previous sweep's values, and each player's gap is
// then at most 2 gamma c / (1 - gamma)^2, so psi <= tolerance / 2), or the rounding floor
// 16 eps (1 + |V|), or max_iterations sweeps.
// Certificate: psi(pi1, pi2) of the returned pair by nikaido_isoda_exact (soft value iteration on
// both induced MDPs), and the bound (res1 + res2) / (1 - gamma) on the error of that computation
// from the residuals |T V_i - V_i| of its two value functions. converged = psi + error <= tolerance.
// Worst case work: max_iterations sweeps x S states x [O(A1*A2*S) for Q(s) + max_inner_iterations
// x (O((A1+A2)^3) Newton solve + up to kNashLineSearchHalvings + 1 evaluations of T, O(A1*A2)
// each)], then 2 x max_iterations soft value-iteration sweeps of O(S*A*S) for psi.
// tau = 0 has no unique equilibrium and is refused (bad_regularization).

/// Halvings of the Newton step before a state's inner solve stops (at the rounding floor).
constexpr int kNashLineSearchHalvings = 40;

/// Caller storage of regularized_nash_equilibrium: the equilibrium (the warm start of the next
/// call) and the method's scratch.
template <typename Scalar, int S, int A1, int A2>
struct NashWorkspace {
  /// The size of a state's matrix game's unknowns (p, q): A1 + A2.
  static constexpr int N = A1 + A2;
  /// A vector of the unknowns (p, q).
  using Vec = Vector<Scalar, N>;
  // The equilibrium after a success and the warm start of the next call: kept, changed only on
  // success. The defaults (V = 0, uniform policies) are a valid cold start.
  /// V* of the regularized game after a success; the warm start (V = 0 is a valid cold start).
  StateVector<Scalar, S> value = StateVector<Scalar, S>::Zero();  // V* of the regularized game
  /// Player 1's equilibrium policy after a success; the warm start (uniform by default).
  StateActionMatrix<Scalar, S, A1> pi1 = StateActionMatrix<Scalar, S, A1>::Constant(Scalar(1) / Scalar(A1));
  /// Player 2's equilibrium policy after a success; the warm start (uniform by default).
  StateActionMatrix<Scalar, S, A2> pi2 = StateActionMatrix<Scalar, S, A2>::Constant(Scalar(1) / Scalar(A2));
  // Scratch: the sweeps' values and policies, one state's matrix game and Newton system.
  /// @{
  /// Scratch: the sweeps' values and policies, one state's matrix game and Newton system, psi's
  /// best responses.
  StateVector<Scalar, S> sweep_value = StateVector<Scalar, S>::Zero(), sweep_next = StateVector<Scalar, S>::Zero();
  StateActionMatrix<Scalar, S, A1> sweep_pi1 = StateActionMatrix<Scalar, S, A1>::Zero();
  StateActionMatrix<Scalar, S, A2> sweep_pi2 = StateActionMatrix<Scalar, S, A2>::Zero();
  Eigen::Matrix<Scalar, A1, A2, Eigen::RowMajor> payoff;  // Q(s, a1, a2)
  Scalar jacobian[N * N];
  Vec z, t, residual, step, trial, trial_t, trial_residual;
  BestResponseWorkspace<Scalar, S, A1, A2> best;  // psi's best responses (their values warm-start)
  /// @}
};

/// The certificate of a regularized_nash_equilibrium call.
template <typename Scalar>
struct NashResult {
  Scalar nikaido_isoda = Scalar(0);        ///< psi(pi1, pi2) of the returned pair, by nikaido_isoda_exact
  Scalar nikaido_isoda_error = Scalar(0);  ///< |psi - computed psi| <= this (exact arithmetic)
  Scalar change = Scalar(0);               ///< sup-norm change of V in the last Shapley sweep
  std::int64_t sweeps = 0;                 ///< Shapley sweeps
  std::int64_t inner_iterations = 0;       ///< Newton steps, all states and sweeps
  bool converged = false;                  ///< psi + error <= settings.tolerance
};

namespace detail {

// t = T(z) for the matrix game ws.payoff at state s (see above).
template <typename Scalar, int S, int A1, int A2>
void nash_best_responses(const MarkovGame<Scalar, S, A1, A2>& g, int s, const NashWorkspace<Scalar, S, A1, A2>& ws,
                         const typename NashWorkspace<Scalar, S, A1, A2>::Vec& z,
                         typename NashWorkspace<Scalar, S, A1, A2>::Vec& t) {
  const Scalar tau = g.tau();
  auto t1 = t.template head<A1>();
  auto t2 = t.template tail<A2>();
  t1.noalias() = ws.payoff * z.template tail<A2>();
  t2.noalias() = -(ws.payoff.transpose() * z.template head<A1>());
  for (int a = 0; a < A1; ++a) t1(a) = t1(a) / tau + g.regularizer1.log_reference(s, a);
  for (int a = 0; a < A2; ++a) t2(a) = t2(a) / tau + g.regularizer2.log_reference(s, a);
  t1.array() -= t1.maxCoeff();
  softmax_of_shifted<A1>(t1.data(), t1.data());
  t2.array() -= t2.maxCoeff();
  softmax_of_shifted<A2>(t2.data(), t2.data());
}

// Solves J x = b in place (b becomes x) by Gaussian elimination with partial pivoting; J is
// destroyed. false on a zero or non-finite pivot.
template <typename Scalar, int N>
bool solve_dense(Scalar* J, Vector<Scalar, N>& b) {
  for (int k = 0; k < N; ++k) {
    int pivot = k;
    for (int i = k + 1; i < N; ++i)
      if (std::abs(J[i * N + k]) > std::abs(J[pivot * N + k])) pivot = i;
    if (!(std::abs(J[pivot * N + k]) > Scalar(0)) || !std::isfinite(J[pivot * N + k])) return false;
    if (pivot != k) {
      for (int j = 0; j < N; ++j) std::swap(J[k * N + j], J[pivot * N + j]);
      std::swap(b(k), b(pivot));
    }
    for (int i = k + 1; i < N; ++i) {
      const Scalar l = J[i * N + k] / J[k * N + k];
      if (l == Scalar(0)) continue;
      for (int j = k + 1; j < N; ++j) J[i * N + j] -= l * J[k * N + j];
      b(i) -= l * b(k);
    }
  }
  for (int i = N - 1; i >= 0; --i) {
    Scalar acc = b(i);
    for (int j = i + 1; j < N; ++j) acc -= J[i * N + j] * b(j);
    b(i) = acc / J[i * N + i];
  }
  return pbrl::all_finite(b);
}

// The equilibrium of state s's matrix game ws.payoff by damped Newton from (ws.sweep_pi1(s),
// ws.sweep_pi2(s)), written back there (as T(z): distributions); returns the Newton steps taken.
template <typename Scalar, int S, int A1, int A2>
std::int64_t solve_state_game(const MarkovGame<Scalar, S, A1, A2>& g, int s, std::int64_t max_steps,
                              NashWorkspace<Scalar, S, A1, A2>& ws) {
  constexpr int N = A1 + A2;
  const Scalar tau = g.tau();
  // Rounding floor of |F|: T's exponents are up to span(Q)/tau, each carrying relative error eps.
  const Scalar span = ws.payoff.maxCoeff() - ws.payoff.minCoeff();
  const Scalar floor = Scalar(64) * std::numeric_limits<Scalar>::epsilon() * (Scalar(1) + span / tau);
  ws.z.template head<A1>() = ws.sweep_pi1.row(s).transpose();
  ws.z.template tail<A2>() = ws.sweep_pi2.row(s).transpose();
  nash_best_responses(g, s, ws, ws.z, ws.t);
  ws.residual = ws.z - ws.t;
  Scalar merit = ws.residual.squaredNorm();
  std::int64_t steps = 0;
  while (steps < max_steps && ws.residual.cwiseAbs().maxCoeff() > floor) {
    // J = I - DT at z (DT from the softmax outputs t).
    Eigen::Map<Eigen::Matrix<Scalar, N, N, Eigen::RowMajor>> J(ws.jacobian);
    J.setIdentity();
    for (int i = 0; i < A1; ++i)
      for (int b = 0; b < A2; ++b) {
        Scalar acc = ws.t(i) * ws.payoff(i, b);
        for (int k = 0; k < A1; ++k) acc -= ws.t(i) * ws.t(k) * ws.payoff(k, b);
        J(i, A1 + b) = -acc / tau;
      }
    for (int j = 0; j < A2; ++j)
      for (int a = 0; a < A1; ++a) {
        Scalar acc = ws.t(A1 + j) * ws.payoff(a, j);
        for (int k = 0; k < A2; ++k) acc -= ws.t(A1 + j) * ws.t(A1 + k) * ws.payoff(a, k);
        J(A1 + j, a) = acc / tau;
      }
    ws.step = -ws.residual;
    if (!solve_dense<Scalar, N>(ws.jacobian, ws.step)) break;
    ++steps;
    // Armijo on |F|^2/2: the Newton direction lowers it at rate |F|^2 (J d = -F).
    Scalar alpha(1);
    bool accepted = false;
    for (int h = 0; h <= kNashLineSearchHalvings; ++h, alpha *= Scalar(0.5)) {
      ws.trial = ws.z + alpha * ws.step;
      nash_best_responses(g, s, ws, ws.trial, ws.trial_t);
      ws.trial_residual = ws.trial - ws.trial_t;
      const Scalar trial_merit = ws.trial_residual.squaredNorm();
      if (trial_merit <= (Scalar(1) - Scalar(2e-4) * alpha) * merit) {
        ws.z = ws.trial;
        ws.t = ws.trial_t;
        ws.residual = ws.trial_residual;
        merit = trial_merit;
        accepted = true;
        break;
      }
    }
    if (!accepted) break;  // no decrease left at this precision
  }
  ws.sweep_pi1.row(s) = ws.t.template head<A1>().transpose();
  ws.sweep_pi2.row(s) = ws.t.template tail<A2>().transpose();
  return steps;
}

// max_s |T V - V|(s) of a soft value iteration's final (value, q = Q of value): |V - V*| is at
// most this / (1 - gamma).
template <typename Scalar, int S, int A>
Scalar soft_bellman_residual(const Regularizer<Scalar, S, A>& reg, const StateVector<Scalar, S>& value,
                             const StateActionMatrix<Scalar, S, A>& q) {
  Scalar res(0);
  for (int s = 0; s < S; ++s) res = std::max(res, std::abs(soft_max_row(reg, s, q.row(s)) - value(s)));
  return res;
}

}  // namespace detail

/// The regularized NE of the game by Shapley's value iteration with damped Newton per state (the
/// method above), warm-started from (ws.value, ws.pi1, ws.pi2).
/// After a success ws.value, ws.pi1, ws.pi2 hold the equilibrium and result its certificate. The
/// game is validated in full (O(S*A1*A2*S)); tau must be > 0.
/// @return ok; the game's validate() statuses; bad_regularization (tau = 0: no unique
///         equilibrium); bad_setting (settings); not_finite or bad_policy (the warm start);
///         numerical_failure. On error ws.value, ws.pi1, ws.pi2 and result are unchanged (the
///         rest of ws is scratch).
template <typename Scalar, int S, int A1, int A2>
Status regularized_nash_equilibrium(const MarkovGame<Scalar, S, A1, A2>& g, const BestResponseSettings<Scalar>& settings,
                                    NashWorkspace<Scalar, S, A1, A2>& ws, NashResult<Scalar>& result) {
  if (Status st = validate(g); st != Status::ok) return st;
  if (!(g.tau() > Scalar(0))) return Status::bad_regularization;
  if (Status st = validate(settings); st != Status::ok) return st;
  if (!all_finite(ws.value)) return Status::not_finite;
  if (Status st = validate_policy(ws.pi1); st != Status::ok) return st;
  if (Status st = validate_policy(ws.pi2); st != Status::ok) return st;
  constexpr int J = A1 * A2;
  const Scalar gamma = g.discount, keep = Scalar(1) - gamma;
  const Scalar eps = std::numeric_limits<Scalar>::epsilon();
  const Scalar wanted =
      gamma > Scalar(0) ? settings.tolerance * keep * keep / (Scalar(8) * gamma) : settings.tolerance;
  const auto r = g.r();
  const auto P = g.P();
  ws.sweep_value = ws.value;
  ws.sweep_pi1 = ws.pi1;
  ws.sweep_pi2 = ws.pi2;
  NashResult<Scalar> res;
  while (res.sweeps < settings.max_iterations) {
    for (int s = 0; s < S; ++s) {
      for (int a1 = 0; a1 < A1; ++a1)
        for (int a2 = 0; a2 < A2; ++a2) {
          const int j = a1 * A2 + a2;
          ws.payoff(a1, a2) = r(s, j) + gamma * P.row(s * J + j).dot(ws.sweep_value);
        }
      if (!all_finite(ws.payoff)) return Status::numerical_failure;
      res.inner_iterations += detail::solve_state_game(g, s, settings.max_inner_iterations, ws);
      const auto p = ws.sweep_pi1.row(s);
      const auto q = ws.sweep_pi2.row(s);
      ws.sweep_next(s) = (p * ws.payoff * q.transpose()).value() - g.tau() * g.regularizer1.value(s, p) +
                         g.tau() * g.regularizer2.value(s, q);
    }
    if (!all_finite(ws.sweep_next)) return Status::numerical_failure;
    ++res.sweeps;
    res.change = (ws.sweep_next - ws.sweep_value).cwiseAbs().maxCoeff();
    ws.sweep_value = ws.sweep_next;
    const Scalar floor = Scalar(16) * eps * (Scalar(1) + ws.sweep_value.cwiseAbs().maxCoeff());
    if (!(res.change > (wanted > floor ? wanted : floor))) break;
  }
  // Certificate: psi of the pair by exact best responses, psi's own sweeps held to a tenth of the
  // tolerance (the residual bound below says how well they did).
  const Scalar floor = Scalar(16) * eps * (Scalar(1) + ws.sweep_value.cwiseAbs().maxCoeff());
  const Scalar psi_wanted = gamma > Scalar(0) ? settings.tolerance * keep / (Scalar(20) * gamma) : settings.tolerance;
  Scalar psi(0);
  if (Status st = nikaido_isoda_exact(g, ws.sweep_pi1, ws.sweep_pi2, static_cast<int>(settings.max_iterations),
                                      psi_wanted > floor ? psi_wanted : floor, ws.best, psi);
      st != Status::ok)
    return st;
  const Scalar error = (detail::soft_bellman_residual(g.regularizer1, ws.best.value1, ws.best.q1) +
                        detail::soft_bellman_residual(g.regularizer2, ws.best.value2, ws.best.q2)) /
                       keep;
  if (!std::isfinite(error)) return Status::numerical_failure;
  res.nikaido_isoda = psi;
  res.nikaido_isoda_error = error;
  res.converged = psi + error <= settings.tolerance;
  ws.value = ws.sweep_value;
  ws.pi1 = ws.sweep_pi1;
  ws.pi2 = ws.sweep_pi2;
  result = res;
  return Status::ok;
}

}  // namespace pbrl
