#pragma once
// Monte-Carlo estimators of the gradients the solvers use in sampled mode, from B rollouts of
// horizon H of the generative model (sampling/rollouts.hpp): the policy gradient, the
// vector-Jacobian product (through the problem's sample_vjp), and the value and Bellman penalties.
// Each is the exact quantity of evaluation.hpp / penalty/*.hpp in expectation, up to a truncation
// bias of order gamma^H; the sampled Bellman p_hat estimates V^{pi-hat}(rho), not the exact
// penalty's soft maximum. With common random numbers (the default) a penalty's two batches share
// their uniforms. Formulas, variance and bias: docs/algorithm.md#the-estimators.
//
// Contract: every call validates its inputs first (model settings, policies, horizon in
// [1, MaxHorizon], batch in [1, kMaxBatch]) and on a validation error changes nothing. After that
// the only failure is numerical_failure (a non-finite estimate): the Rng and `steps` are then
// unchanged, and the outputs and the trajectory scratch hold unspecified values. Outputs are
// overwritten, not accumulated. x enters through the model that problem.build(x, model, m) made;
// m must have passed validate(m) once (rho and P are read, not re-checked). A batch adds B*H to
// `steps` and advances the Rng by B*(2H + 1) draws; a penalty with common random numbers, by
// B*(2H + 1) in all.

#include <cstdint>

#include "pbrl/oracle/policy_gradient.hpp"
#include "pbrl/penalty/detail/policies.hpp"
#include "pbrl/penalty/penalty_kind.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/model/problem.hpp"
#include "pbrl/sampling/rollouts.hpp"
#include "pbrl/sampling/sampling_settings.hpp"

namespace pbrl {

// A sampled penalty: p_hat and its gradients, grad_y in the coordinates of y's parameterization.
template <class Problem>
struct SampledPenalty {
  using Scalar = typename Problem::Scalar;
  using Params = typename Problem::Params;
  using Matrix = StateActionMatrix<Scalar, Problem::kStates, Problem::kActions>;
  Scalar value = Scalar(0);
  Params grad_x = Params::Zero();
  Matrix grad_y = Matrix::Zero();
};

namespace detail {

inline bool valid_parameterization(Parameterization p) {
  return p == Parameterization::direct || p == Parameterization::softmax;
}

// grad row s += wq * (direct: e_a / pi(a|s); softmax: e_a - pi(s)). pi(a|s) > 0: a was drawn.
template <typename Scalar, int S, int A>
void add_action_term(Parameterization param, const StateActionMatrix<Scalar, S, A>& pi, int s, int a,
                     Scalar wq, StateActionMatrix<Scalar, S, A>& grad) {
  if (param == Parameterization::direct) {
    grad(s, a) += wq / pi(s, a);
  } else {
    grad.row(s) -= wq * pi.row(s);
    grad(s, a) += wq;
  }
}

// The regularizer's per-state parts of a policy, which a batch of its rollouts holds fixed, taken
// once per batch instead of at every visited state (the logarithms were most of a sampled step).
// Every sum uses them in the order the per-visit formulas did, so the estimates are the same to
// the bit. The values: h[s] = h_s(pi(s)) (unscaled; 0 without regularization), for the returns.
template <typename Scalar, int S>
struct RegularizerValues {
  Scalar h[S] = {};

  template <int A>
  void fill(const Regularizer<Scalar, S, A>& reg, const StateActionMatrix<Scalar, S, A>& pi) {
    const bool on = reg.tau > Scalar(0);
    for (int s = 0; s < S; ++s) h[s] = on ? reg.value(s, pi.row(s)) : Scalar(0);
  }
  // tau * h_s(pi(s)), 0 without regularization.
  template <int A>
  Scalar tau_h(const Regularizer<Scalar, S, A>& reg, int s) const {
    return reg.tau > Scalar(0) ? reg.tau * h[s] : Scalar(0);
  }
};

// The factors, for a policy whose gradient is wanted: the logarithmic factor of its regularizer
// term, reg.derivative(s,a,pi) (direct) or log pi(a|s) - log ref(a|s) - h_s (softmax, where
// pi(a|s) > 0), and add(): grad row s += w * (the regularizer's part of dV/dparam at s),
//   direct: -tau dh(s,.);   softmax: -tau pi(s) .* (l(s,.) - h_s)   (0 where pi(a|s) = 0).
template <typename Scalar, int S, int A>
struct RegularizerFactors {
  StateActionMatrix<Scalar, S, A> factor = StateActionMatrix<Scalar, S, A>::Zero();

  // The factors, and values (h) for (reg, pi) with them. Softmax: each log pi(a|s) once, not once
  // for h and again for the factor: the factor matrix holds the logs, h is summed from them
  // (Regularizer::value from given logs: the same sums), then the factors replace them.
  void fill(const Regularizer<Scalar, S, A>& reg, Parameterization param, const StateActionMatrix<Scalar, S, A>& pi,
            RegularizerValues<Scalar, S>& values) {
    const bool on = reg.tau > Scalar(0);
    if (!on || param == Parameterization::direct) {
      values.fill(reg, pi);
      if (on)  // off: add() adds nothing
        for (int s = 0; s < S; ++s)
          for (int a = 0; a < A; ++a) factor(s, a) = reg.derivative(s, a, pi(s, a));
      return;
    }
    for (int s = 0; s < S; ++s) {
      for (int a = 0; a < A; ++a) factor(s, a) = pi(s, a) > Scalar(0) ? logarithm(pi(s, a)) : Scalar(0);
      values.h[s] = reg.value(s, pi.row(s), factor.row(s));
      for (int a = 0; a < A; ++a)
        if (pi(s, a) > Scalar(0)) factor(s, a) = factor(s, a) - reg.log_reference(s, a) - values.h[s];
    }
  }
  void add(const Regularizer<Scalar, S, A>& reg, Parameterization param, const StateActionMatrix<Scalar, S, A>& pi,
           int s, Scalar w, StateActionMatrix<Scalar, S, A>& grad) const {
    const Scalar tau = reg.tau;
    if (!(tau > Scalar(0))) return;
    if (param == Parameterization::direct) {
      for (int a = 0; a < A; ++a) grad(s, a) -= w * tau * factor(s, a);
    } else {
      for (int a = 0; a < A; ++a) {
        const Scalar p = pi(s, a);
        if (p > Scalar(0)) grad(s, a) -= w * tau * p * factor(s, a);
      }
    }
  }
};

// Both, for the rollouts of a policy and, where wanted, its policy gradient.
template <typename Scalar, int S, int A>
struct RegularizerCache {
  RegularizerValues<Scalar, S> values{};
  RegularizerFactors<Scalar, S, A> factors{};

  void fill(const Regularizer<Scalar, S, A>& reg, Parameterization param, const StateActionMatrix<Scalar, S, A>& pi,
            bool gradient) {
    if (gradient)
      factors.fill(reg, param, pi, values);
    else
      values.fill(reg, pi);
  }
};

// grad += w * sum_{t<H} gamma^t [action term with Q_hat_t + regularizer term] of one trajectory of
// pi; factors filled for (m.regularizer, param, pi).
template <typename Scalar, int S, int A, int MaxHorizon>
void accumulate_policy_gradient(const Mdp<Scalar, S, A>& m, Parameterization param,
                                const StateActionMatrix<Scalar, S, A>& pi, const RegularizerFactors<Scalar, S, A>& factors,
                                const Trajectory<Scalar, MaxHorizon>& traj, Scalar w,
                                StateActionMatrix<Scalar, S, A>& grad) {
  Scalar d = w;
  for (int t = 0; t < traj.horizon; ++t) {
    const int s = traj.state[t];
    add_action_term(param, pi, s, traj.action[t], d * sampled_q(m, traj, t), grad);
    factors.add(m.regularizer, param, pi, s, d, grad);
    d *= m.discount;
  }
}

// grad += w * sum_{t<H} gamma^t [grad r(s_t,a_t) + gamma grad log P(s_{t+1}|s_t,a_t) V_hat_{t+1}].
template <class Problem, typename Scalar, int MaxHorizon>
void accumulate_vjp(const Problem& problem, const typename Problem::Model& model, Scalar gamma,
                    const Trajectory<Scalar, MaxHorizon>& traj, Scalar w, typename Problem::Params& grad) {
  Scalar d = w;
  for (int t = 0; t < traj.horizon; ++t) {
    problem.sample_vjp(
        model, VjpSample<Scalar>{traj.state[t], traj.action[t], traj.state[t + 1], d, d * gamma * traj.value[t + 1]},
        grad);
    d *= gamma;
  }
}

// `count` rollouts (a_0 ~ sigma, then pi) with their returns under pi (values filled for pi);
// visit(traj) after each.
template <typename Scalar, int S, int A, int MaxHorizon, typename Visit>
void run_rollouts(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& sigma,
                  const StateActionMatrix<Scalar, S, A>& pi, const RegularizerValues<Scalar, S>& values, int horizon,
                  int count, Rng& rng, Trajectory<Scalar, MaxHorizon>& traj, Visit&& visit) {
  for (int b = 0; b < count; ++b) {
    rollout_unchecked(m, sigma, pi, horizon, rng, traj);
    returns_unchecked(m, traj, [&](int s) { return values.tau_h(m.regularizer, s); });
    visit(static_cast<const Trajectory<Scalar, MaxHorizon>&>(traj));
  }
}

// B rollouts (a_0 ~ sigma, then pi) with their returns under pi; visit(traj) after each.
template <typename Scalar, int S, int A, int MaxHorizon, typename Visit>
void run_batch(const Mdp<Scalar, S, A>& m, const StateActionMatrix<Scalar, S, A>& sigma,
               const StateActionMatrix<Scalar, S, A>& pi, const SamplingSettings& settings, Rng& rng,
               Trajectory<Scalar, MaxHorizon>& traj, Visit&& visit) {
  RegularizerValues<Scalar, S> values;
  values.fill(m.regularizer, pi);
  run_rollouts(m, sigma, pi, values, settings.horizon, settings.batch, rng, traj, static_cast<Visit&&>(visit));
}

// A sampled gradient's whole batch, committed only when finite: on a copy of rng, grad is zeroed
// and draw(local, w) runs the B rollouts, adding each one's term weighted by w = 1/B; then rng
// and steps advance (B*H). On numerical_failure rng and steps are unchanged.
template <typename Scalar, class Grad, class Draw>
Status gradient_batch(const SamplingSettings& settings, Rng& rng, std::int64_t& steps, Grad& grad, Draw&& draw) {
  Rng local = rng;
  const Scalar w = Scalar(1) / Scalar(settings.batch);
  grad.setZero();
  draw(local, w);
  if (!pbrl::all_finite(grad)) return Status::numerical_failure;
  rng = local;
  steps += batch_steps(settings);
  return Status::ok;
}

template <typename Scalar, int S, int A, int MaxHorizon>
Status check_penalty_call(const Mdp<Scalar, S, A>& m, Parameterization param,
                          const StateActionMatrix<Scalar, S, A>& pi_y,
                          const StateActionMatrix<Scalar, S, A>& pi_hat, const SamplingSettings& settings) {
  if (!valid_parameterization(param)) return Status::bad_setting;
  if (Status st = validate_sampling<MaxHorizon>(settings); st != Status::ok) return st;
  return check_rollout(m, pi_y, pi_hat, settings.horizon, MaxHorizon);
}

}  // namespace detail

namespace detail {

// sampled_policy_gradient in parts, so that a sliced step can run its batch a few rollouts at a
// time: start() after the checks, rollouts() for b in [0, B) in any chunks, then finish() (the
// mean; numerical_failure on a non-finite estimate). The whole call is these three.
template <typename Scalar, int S, int A, int MaxHorizon>
struct PolicyGradientBatch {
  using Matrix = StateActionMatrix<Scalar, S, A>;
  Scalar sum = Scalar(0);
  int done = 0;                            // rollouts taken of B
  RegularizerCache<Scalar, S, A> cache{};  // of pi, filled by the first chunk

  static Status check(const Mdp<Scalar, S, A>& m, Parameterization param, const Matrix& pi,
                      const SamplingSettings& settings) {
    if (!valid_parameterization(param)) return Status::bad_setting;
    if (Status st = validate_sampling<MaxHorizon>(settings); st != Status::ok) return st;
    return check_rollout(m, pi, pi, settings.horizon, MaxHorizon);
  }
  void start(Matrix& grad) {
    sum = Scalar(0);
    done = 0;
    grad.setZero();
  }
  void rollouts(const Mdp<Scalar, S, A>& m, Parameterization param, const Matrix& pi, const SamplingSettings& settings,
                int count, Rng& rng, Trajectory<Scalar, MaxHorizon>& scratch, Matrix& grad) {
    const Scalar w = Scalar(1) / Scalar(settings.batch);
    if (done == 0) cache.fill(m.regularizer, param, pi, true);
    run_rollouts(m, pi, pi, cache.values, settings.horizon, count, rng, scratch,
                 [&](const Trajectory<Scalar, MaxHorizon>& traj) {
                   sum += traj.value[0];
                   accumulate_policy_gradient(m, param, pi, cache.factors, traj, w, grad);
                 });
    done += count;
  }
  Status finish(const SamplingSettings& settings, const Matrix& grad, Scalar& value) const {
    const Scalar v = sum * (Scalar(1) / Scalar(settings.batch));
    if (!std::isfinite(v) || !pbrl::all_finite(grad)) return Status::numerical_failure;
    value = v;
    return Status::ok;
  }
};

}  // namespace detail

// value = V_hat^pi(rho) and grad = dV^pi(rho)/dparam (softmax logits or direct probabilities),
// from B rollouts of pi. Adds B*H to steps.
template <typename Scalar, int S, int A, int MaxHorizon>
Status sampled_policy_gradient(const Mdp<Scalar, S, A>& m, Parameterization param,
                               const StateActionMatrix<Scalar, S, A>& pi, const SamplingSettings& settings,
                               Rng& rng, Trajectory<Scalar, MaxHorizon>& scratch, std::int64_t& steps,
                               Scalar& value, StateActionMatrix<Scalar, S, A>& grad) {
  using Batch = detail::PolicyGradientBatch<Scalar, S, A, MaxHorizon>;
  if (Status st = Batch::check(m, param, pi, settings); st != Status::ok) return st;
  Rng local = rng;
  Batch batch;
  batch.start(grad);
  batch.rollouts(m, param, pi, settings, settings.batch, local, scratch, grad);
  if (Status st = batch.finish(settings, grad, value); st != Status::ok) return st;
  rng = local;
  steps += batch_steps(settings);
  return Status::ok;
}

// T sampled policy-gradient ascent steps on (log_pi, pi), each from B rollouts of the current
// policy followed by policy_ascent_update (oracle/policy_gradient.hpp) in the set's coordinates:
// the sampled oracle of the solvers. grad is scratch. Adds T*B*H to steps. On error log_pi, pi,
// rng and steps hold the state after the last successful step: callers work on copies.
template <typename Scalar, int S, int A, int MaxHorizon>
Status sampled_policy_gradient_steps(const Mdp<Scalar, S, A>& m, const PolicySet<Scalar>& set, Scalar eta,
                                     int count, const SamplingSettings& settings, Rng& rng,
                                     Trajectory<Scalar, MaxHorizon>& scratch, std::int64_t& steps,
                                     StateActionMatrix<Scalar, S, A>& grad, StateActionMatrix<Scalar, S, A>& log_pi,
                                     StateActionMatrix<Scalar, S, A>& pi) {
  for (int i = 0; i < count; ++i) {
    Scalar value(0);
    if (Status st = sampled_policy_gradient(m, set.parameterization, pi, settings, rng, scratch, steps, value, grad);
        st != Status::ok)
      return st;
    if (Status st = policy_ascent_update<Scalar, S, A>(set, eta, grad, {log_pi, pi}); st != Status::ok) return st;
  }
  return Status::ok;
}

// grad = J_hat^T(mu'_{rho, sigma -> pi}, V^pi), the estimate of grad_x E_{s~rho,a~sigma} Q^pi_{M(x)}(s,a),
// from B rollouts (a_0 ~ sigma, then pi) on m = M(x) (model and m from build(x)). sigma = pi:
// grad_x V^pi(rho). Adds B*H to steps. Needs the problem's sample_vjp hook (problem.hpp).
template <class Problem, typename Scalar, int S, int A, int MaxHorizon>
Status sampled_vjp(const Problem& problem, const typename Problem::Model& model, const Mdp<Scalar, S, A>& m,
                   const StateActionMatrix<Scalar, S, A>& sigma, const StateActionMatrix<Scalar, S, A>& pi,
                   const SamplingSettings& settings, Rng& rng, Trajectory<Scalar, MaxHorizon>& scratch,
                   std::int64_t& steps, typename Problem::Params& grad) {
  static_assert(has_sample_vjp<Problem>::value, "sampled estimators need Problem::sample_vjp (problem.hpp)");
  if (Status st = validate_sampling<MaxHorizon>(settings); st != Status::ok) return st;
  if (Status st = detail::check_rollout(m, sigma, pi, settings.horizon, MaxHorizon); st != Status::ok) return st;
  return detail::gradient_batch<Scalar>(settings, rng, steps, grad, [&](Rng& local, Scalar w) {
    detail::run_batch(m, sigma, pi, settings, local, scratch, [&](const Trajectory<Scalar, MaxHorizon>& traj) {
      detail::accumulate_vjp(problem, model, m.discount, traj, w, grad);
    });
  });
}

namespace detail {

// sampled_penalty in parts, for a sliced step: check(),
// start(kind, rng), rollouts() of batch 1 (pi-hat from rho) then of batch 2 (pi_y from rho
// for the value penalty; a_0 ~ pi_y, then pi-hat for the Bellman penalty), B each, in any chunks,
// then finish() once (the estimate; numerical_failure on a non-finite one; rng_out = the stream
// after both batches). Each whole call is these.
template <class Problem, int MaxHorizon>
struct PenaltyBatches {
  using Scalar = typename Problem::Scalar;
  static constexpr int S = Problem::kStates, A = Problem::kActions;
  using Matrix = StateActionMatrix<Scalar, S, A>;
  using Traj = Trajectory<Scalar, MaxHorizon>;
  Rng first{}, second{};     // the streams of batch 1 and batch 2
  Scalar sum1 = Scalar(0);   // V_hat_0 of batch 1
  Scalar sum2 = Scalar(0);   // V_hat_0 (value) or Q_hat_0 (Bellman) of batch 2
  int done1 = 0, done2 = 0;  // rollouts taken of each batch
  bool bellman = false;
  // pi-hat's values (batch 1's returns, and batch 2's in the Bellman penalty) and pi_y's values and
  // factors (batch 2 of the value penalty; the Bellman penalty's exact regularizer part), filled
  // by each batch's first chunk.
  RegularizerValues<Scalar, S> hat{};
  RegularizerCache<Scalar, S, A> y{};

  static Status check(const Mdp<Scalar, S, A>& m, Parameterization param, const Matrix& pi_y, const Matrix& pi_hat,
                      const SamplingSettings& settings) {
    return check_penalty_call<Scalar, S, A, MaxHorizon>(m, param, pi_y, pi_hat, settings);
  }
  void start(PenaltyKind kind, const Rng& rng, SampledPenalty<Problem>& out) {
    bellman = kind == PenaltyKind::bellman;
    first = second = rng;
    sum1 = sum2 = Scalar(0);
    done1 = done2 = 0;
    out.grad_x.setZero();
    out.grad_y.setZero();
  }
  // The next `count` rollouts, of batch 1 until it has B, then of batch 2 (count within one batch).
  void rollouts(const Problem& problem, const typename Problem::Model& model, const Mdp<Scalar, S, A>& m,
                Parameterization param, const Matrix& pi_y, const Matrix& pi_hat, const SamplingSettings& settings,
                int count, Traj& scratch, SampledPenalty<Problem>& out) {
    const Scalar w = Scalar(1) / Scalar(settings.batch);
    const Scalar gamma = m.discount;
    if (done1 < settings.batch) {
      if (done1 == 0) hat.fill(m.regularizer, pi_hat);
      run_rollouts(m, pi_hat, pi_hat, hat, settings.horizon, count, first, scratch, [&](const Traj& traj) {
        sum1 += traj.value[0];
        accumulate_vjp(problem, model, gamma, traj, w, out.grad_x);
      });
      done1 += count;
      if (done1 == settings.batch && !settings.common_random_numbers) second = first;
      return;
    }
    if (done2 == 0) y.fill(m.regularizer, param, pi_y, true);
    if (bellman) {
      run_rollouts(m, pi_y, pi_hat, hat, settings.horizon, count, second, scratch, [&](const Traj& traj) {
        const Scalar q0 = sampled_q(m, traj, 0);
        sum2 += q0;
        accumulate_vjp(problem, model, gamma, traj, -w, out.grad_x);
        add_action_term(param, pi_y, traj.state[0], traj.action[0], -w * q0, out.grad_y);
      });
    } else {
      run_rollouts(m, pi_y, pi_y, y.values, settings.horizon, count, second, scratch, [&](const Traj& traj) {
        sum2 += traj.value[0];
        accumulate_vjp(problem, model, gamma, traj, -w, out.grad_x);
        accumulate_policy_gradient(m, param, pi_y, y.factors, traj, -w, out.grad_y);
      });
    }
    done2 += count;
  }
  // Rollouts left in the current batch.
  int left(const SamplingSettings& settings) const {
    return done1 < settings.batch ? settings.batch - done1 : settings.batch - done2;
  }
  // After both batches; adds the Bellman penalty's exact regularizer part to out.grad_y.
  Status finish(const Mdp<Scalar, S, A>& m, Parameterization param, const Matrix& pi_y,
                const SamplingSettings& settings, SampledPenalty<Problem>& out, Rng& rng_out) const {
    const Scalar w = Scalar(1) / Scalar(settings.batch);
    if (bellman) {
      // The regularizer's parts are known functions of pi_y under s ~ rho: exact, no sampling noise.
      const auto rho = m.rho();
      Scalar regularization(0);
      if (m.tau() > Scalar(0))
        for (int s = 0; s < S; ++s) {
          regularization += rho(s) * y.values.h[s];
          y.factors.add(m.regularizer, param, pi_y, s, -rho(s), out.grad_y);
        }
      out.value = (sum1 - sum2) * w + m.tau() * regularization;
    } else {
      out.value = (sum1 - sum2) * w;
    }
    if (!std::isfinite(out.value) || !pbrl::all_finite(out.grad_x) || !pbrl::all_finite(out.grad_y))
      return Status::numerical_failure;
    rng_out = second;  // with common random numbers both copies stopped at the same state
    return Status::ok;
  }
};

}  // namespace detail

// The value penalty p = V^{pi-hat}(rho) - V^{pi_y}(rho) (kind value) or the Bellman penalty
// (kind bellman, with V^{pi-hat}(rho) for v(x): docs/algorithm.md#the-estimators) and its
// gradients (x, and y in the parameterization `param`), from a batch of pi-hat and a batch of
// pi_y (value) or that starts with a_0 ~ pi_y and follows pi-hat (Bellman, ERRATA item 3).
// Adds 2*B*H to steps. Returns bad_setting for a kind out of range, the batches' check
// statuses, or numerical_failure (a non-finite estimate); on error rng and steps are unchanged
// (out is then scratch).
template <class Problem, typename Scalar, int S, int A, int MaxHorizon>
Status sampled_penalty(PenaltyKind kind, const Problem& problem, const typename Problem::Model& model,
                       const Mdp<Scalar, S, A>& m, Parameterization param, const PolicyY<Scalar, S, A, false>& y,
                       const PolicyHat<Scalar, S, A, false>& hat, const SamplingSettings& settings, Rng& rng,
                       Trajectory<Scalar, MaxHorizon>& scratch, std::int64_t& steps, SampledPenalty<Problem>& out) {
  static_assert(has_sample_vjp<Problem>::value, "sampled estimators need Problem::sample_vjp (problem.hpp)");
  if (kind != PenaltyKind::value && kind != PenaltyKind::bellman) return Status::bad_setting;
  using Batches = detail::PenaltyBatches<Problem, MaxHorizon>;
  if (Status st = Batches::check(m, param, y.pi, hat.pi, settings); st != Status::ok) return st;
  Batches batches;
  batches.start(kind, rng, out);
  for (int batch = 0; batch < 2; ++batch)
    batches.rollouts(problem, model, m, param, y.pi, hat.pi, settings, settings.batch, scratch, out);
  Rng after;
  if (Status st = batches.finish(m, param, y.pi, settings, out, after); st != Status::ok) return st;
  rng = after;
  steps += 2 * batch_steps(settings);
  return Status::ok;
}

}  // namespace pbrl
