#pragma once
// Sampled mode for zero-sum games (game.hpp), the counterparts of sampling/detail/estimators.hpp for
// PbrlZeroSum and the meta-gradient baseline: joint rollouts (H environment steps and exactly
// 3H + 1 uniforms each), both players' policy gradients from one batch, the vector-Jacobian
// product through the game problem's sample_vjp over joint actions j = a1*A2 + a2, the
// Nikaido-Isoda penalty from two batches (with common random numbers psi_hat is exactly 0 at
// pi-hat = pi), and the meta-gradient's mixed derivative for kRewardOnly problems. Formulas:
// docs/algorithm.md#game-estimators.
//
// Contract, as in estimators.hpp: every call validates first and on a validation error changes
// nothing; after that only numerical_failure (a non-finite estimate), with the Rng and `steps`
// unchanged and the outputs and trajectory scratch unspecified. The game must have passed
// validate(game) once (rho and P are read, not re-checked); g and model are M(x) as
// problem.build(x, model, g) wrote them. A batch takes B*H environment steps.

#include <cstdint>

#include "pbrl/model/game.hpp"
#include "pbrl/sampling/detail/estimators.hpp"

namespace pbrl {

template <typename Scalar, int MaxHorizon = kMaxHorizon>
struct GameTrajectory {
  static_assert(MaxHorizon >= 1, "a trajectory holds at least one step");
  static constexpr int kCapacity = MaxHorizon;
  int horizon = 0;                    // H
  int state[MaxHorizon + 1] = {};     // s_0 .. s_H
  int action1[MaxHorizon] = {};       // a1_0 .. a1_{H-1}
  int action2[MaxHorizon] = {};       // a2_0 .. a2_{H-1}
  Scalar value[MaxHorizon + 1] = {};  // V_hat_0 .. V_hat_H (player 1's), V_hat_H = 0
  bool valid = true;                  // every draw had a positive entry (else the values are NaN)
};

// A sampled Nikaido-Isoda penalty: psi_hat and its gradients, grad_y1/2 in the coordinates of the
// players' parameterization.
template <class GameProblem>
struct SampledNikaidoIsoda {
  using Scalar = typename GameProblem::Scalar;
  using Params = typename GameProblem::Params;
  using Matrix1 = StateActionMatrix<Scalar, GameProblem::kStates, GameProblem::kActions1>;
  using Matrix2 = StateActionMatrix<Scalar, GameProblem::kStates, GameProblem::kActions2>;
  Scalar value = Scalar(0);
  Params grad_x = Params::Zero();
  Matrix1 grad_y1 = Matrix1::Zero();
  Matrix2 grad_y2 = Matrix2::Zero();
};

namespace detail {

template <typename Scalar, int S, int A1, int A2, int MaxHorizon>
void game_rollout_unchecked(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                            const StateActionMatrix<Scalar, S, A2>& pi2, int horizon, Rng& rng,
                            GameTrajectory<Scalar, MaxHorizon>& out) {
  const auto P = g.P();
  const int H = horizon < MaxHorizon ? horizon : MaxHorizon;  // validated; the clamp keeps indices in range
  bool valid = true;  // detail::draw: indices in range whatever the arrays hold
  int s = draw(rng, g.rho(), valid);
  out.horizon = H;
  for (int t = 0; t < H; ++t) {
    const int a1 = draw(rng, pi1.row(s), valid);
    const int a2 = draw(rng, pi2.row(s), valid);
    out.state[t] = s;
    out.action1[t] = a1;
    out.action2[t] = a2;
    s = draw(rng, P.row((s * A1 + a1) * A2 + a2), valid);
  }
  out.state[H] = s;
  out.valid = valid;
}

// tau*h1(pi1(s)) and tau*h2(pi2(s)) (0 without regularization).
template <typename Scalar, int S, int A1, int A2>
Scalar game_h1(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1, int s) {
  return g.tau() > Scalar(0) ? g.tau() * g.regularizer1.value(s, pi1.row(s)) : Scalar(0);
}
template <typename Scalar, int S, int A1, int A2>
Scalar game_h2(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A2>& pi2, int s) {
  return g.tau() > Scalar(0) ? g.tau() * g.regularizer2.value(s, pi2.row(s)) : Scalar(0);
}

// Each player's regularizer cache (RegularizerCache, estimators.hpp) for the rollouts of a batch
// of (pi1, pi2) and the policy gradients of the players whose gradient is wanted. Both players'
// tau are the game's (validate(game)).
template <typename Scalar, int S, int A1, int A2>
struct GameRegularizerCache {
  RegularizerCache<Scalar, S, A1> player1{};
  RegularizerCache<Scalar, S, A2> player2{};

  void fill(const MarkovGame<Scalar, S, A1, A2>& g, Parameterization param, const StateActionMatrix<Scalar, S, A1>& pi1,
            const StateActionMatrix<Scalar, S, A2>& pi2, bool gradient1, bool gradient2) {
    player1.fill(g.regularizer1, param, pi1, gradient1);
    player2.fill(g.regularizer2, param, pi2, gradient2);
  }
};

// V_hat_t of a trajectory; tau_h1(s), tau_h2(s) give game_h1, game_h2 at s.
template <typename Scalar, int S, int A1, int A2, int MaxHorizon, typename H1, typename H2>
void game_returns_unchecked(const MarkovGame<Scalar, S, A1, A2>& g, GameTrajectory<Scalar, MaxHorizon>& traj,
                            H1&& tau_h1, H2&& tau_h2) {
  const auto r = g.r();
  const int H = traj.horizon;
  traj.value[H] = Scalar(0);
  for (int t = H - 1; t >= 0; --t) {
    const int s = traj.state[t];
    traj.value[t] = r(s, traj.action1[t] * A2 + traj.action2[t]) + g.discount * traj.value[t + 1] - tau_h1(s) +
                    tau_h2(s);
  }
  if (!traj.valid)  // a draw found no positive entry: the estimators refuse the NaN
    for (int t = 0; t <= H; ++t) traj.value[t] = std::numeric_limits<Scalar>::quiet_NaN();
}

template <typename Scalar, int S, int A1, int A2, int MaxHorizon>
Scalar game_q(const MarkovGame<Scalar, S, A1, A2>& g, const GameTrajectory<Scalar, MaxHorizon>& traj, int t) {
  return g.r()(traj.state[t], traj.action1[t] * A2 + traj.action2[t]) + g.discount * traj.value[t + 1];
}

template <typename Scalar, int S, int A1, int A2>
Status check_game_rollout(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                          const StateActionMatrix<Scalar, S, A2>& pi2, int horizon, int max_horizon) {
  if (Status st = check_game(g); st != Status::ok) return st;
  if (horizon < 1 || horizon > max_horizon) return Status::bad_setting;
  if (Status st = validate_policy(pi1); st != Status::ok) return st;
  return validate_policy(pi2);
}

// grad1 += w * player 1's per-trajectory policy-gradient terms, grad2 likewise (nullptr: skip);
// cache filled for (pi1, pi2) with the players whose gradient is wanted.
template <typename Scalar, int S, int A1, int A2, int MaxHorizon>
void accumulate_game_policy_gradients(const MarkovGame<Scalar, S, A1, A2>& g, Parameterization param,
                                      const StateActionMatrix<Scalar, S, A1>& pi1,
                                      const StateActionMatrix<Scalar, S, A2>& pi2,
                                      const GameRegularizerCache<Scalar, S, A1, A2>& cache,
                                      const GameTrajectory<Scalar, MaxHorizon>& traj, Scalar w,
                                      StateActionMatrix<Scalar, S, A1>* grad1, StateActionMatrix<Scalar, S, A2>* grad2) {
  Scalar d = w;
  for (int t = 0; t < traj.horizon; ++t) {
    const int s = traj.state[t];
    const Scalar q = game_q(g, traj, t);
    if (grad1 != nullptr) {
      add_action_term(param, pi1, s, traj.action1[t], d * (q + cache.player2.values.tau_h(g.regularizer2, s)), *grad1);
      cache.player1.factors.add(g.regularizer1, param, pi1, s, d, *grad1);
    }
    if (grad2 != nullptr) {
      add_action_term(param, pi2, s, traj.action2[t], d * (q - cache.player1.values.tau_h(g.regularizer1, s)), *grad2);
      cache.player2.factors.add(g.regularizer2, param, pi2, s, -d, *grad2);
    }
    d *= g.discount;
  }
}

// grad += w * sum_t gamma^t [grad r(s_t,j_t) + gamma grad log P(s_{t+1}|s_t,j_t) V_hat_{t+1}].
template <class GameProblem, typename Scalar, int MaxHorizon>
void accumulate_game_vjp(const GameProblem& problem, const typename GameProblem::Model& model, Scalar gamma,
                         const GameTrajectory<Scalar, MaxHorizon>& traj, Scalar w,
                         typename GameProblem::Params& grad) {
  constexpr int A2 = GameProblem::kActions2;
  const int H = traj.horizon;
  Scalar d = w;
  for (int t = 0; t < H; ++t) {
    const int j = traj.action1[t] * A2 + traj.action2[t];
    problem.sample_vjp(model, VjpSample<Scalar>{traj.state[t], j, traj.state[t + 1], d, d * gamma * traj.value[t + 1]},
                       grad);
    d *= gamma;
  }
}

// `count` rollouts of (pi1, pi2) with their returns (values1 filled for pi1, values2 for pi2);
// visit(traj) after each.
template <typename Scalar, int S, int A1, int A2, int MaxHorizon, typename Visit>
void run_game_rollouts(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                       const StateActionMatrix<Scalar, S, A2>& pi2, const RegularizerValues<Scalar, S>& values1,
                       const RegularizerValues<Scalar, S>& values2, int horizon, int count, Rng& rng,
                       GameTrajectory<Scalar, MaxHorizon>& traj, Visit&& visit) {
  for (int b = 0; b < count; ++b) {
    game_rollout_unchecked(g, pi1, pi2, horizon, rng, traj);
    game_returns_unchecked(g, traj, [&](int s) { return values1.tau_h(g.regularizer1, s); },
                           [&](int s) { return values2.tau_h(g.regularizer2, s); });
    visit(static_cast<const GameTrajectory<Scalar, MaxHorizon>&>(traj));
  }
}

// B rollouts of (pi1, pi2) with their returns; visit(traj) after each.
template <typename Scalar, int S, int A1, int A2, int MaxHorizon, typename Visit>
void run_game_batch(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                    const StateActionMatrix<Scalar, S, A2>& pi2, const SamplingSettings& settings, Rng& rng,
                    GameTrajectory<Scalar, MaxHorizon>& traj, Visit&& visit) {
  RegularizerValues<Scalar, S> values1, values2;
  values1.fill(g.regularizer1, pi1);
  values2.fill(g.regularizer2, pi2);
  run_game_rollouts(g, pi1, pi2, values1, values2, settings.horizon, settings.batch, rng, traj,
                    static_cast<Visit&&>(visit));
}

template <typename Scalar, int S, int A1, int A2, int MaxHorizon>
Status check_game_call(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                       const StateActionMatrix<Scalar, S, A2>& pi2, const SamplingSettings& settings) {
  if (Status st = validate_sampling<MaxHorizon>(settings); st != Status::ok) return st;
  return check_game_rollout(g, pi1, pi2, settings.horizon, MaxHorizon);
}

}  // namespace detail

// One rollout of (pi1, pi2) of horizon H and its returns; adds H to steps. On error nothing
// changes (out, rng, steps).
template <typename Scalar, int S, int A1, int A2, int MaxHorizon>
Status game_rollout(const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                    const StateActionMatrix<Scalar, S, A2>& pi2, int horizon, Rng& rng,
                    GameTrajectory<Scalar, MaxHorizon>& out, std::int64_t& steps) {
  if (Status st = detail::check_game_rollout(g, pi1, pi2, horizon, MaxHorizon); st != Status::ok) return st;
  Rng local = rng;
  detail::game_rollout_unchecked(g, pi1, pi2, horizon, local, out);
  detail::game_returns_unchecked(g, out, [&](int s) { return detail::game_h1(g, pi1, s); },
                                 [&](int s) { return detail::game_h2(g, pi2, s); });
  if (!std::isfinite(out.value[0])) return Status::numerical_failure;
  rng = local;
  steps += horizon;
  return Status::ok;
}

namespace detail {

// sampled_game_policy_gradient in parts, so that a sliced step can run its batch a few rollouts
// at a time: start() after the checks, rollouts() for b in [0, B) in any chunks (all with the
// same arguments: the first fills the regularizer cache), then finish() (the mean;
// numerical_failure on a non-finite estimate). The whole call is these three.
template <typename Scalar, int S, int A1, int A2, int MaxHorizon>
struct GamePolicyGradientBatch {
  using Matrix1 = StateActionMatrix<Scalar, S, A1>;
  using Matrix2 = StateActionMatrix<Scalar, S, A2>;
  Scalar sum = Scalar(0);
  int done = 0;  // rollouts taken of B
  GameRegularizerCache<Scalar, S, A1, A2> cache{};  // of (pi1, pi2), filled by the first chunk

  static Status check(const MarkovGame<Scalar, S, A1, A2>& g, Parameterization param, const Matrix1& pi1,
                      const Matrix2& pi2, const SamplingSettings& settings) {
    if (!valid_parameterization(param)) return Status::bad_setting;
    return check_game_call<Scalar, S, A1, A2, MaxHorizon>(g, pi1, pi2, settings);
  }
  void start(Matrix1* grad1, Matrix2* grad2) {
    sum = Scalar(0);
    done = 0;
    if (grad1 != nullptr) grad1->setZero();
    if (grad2 != nullptr) grad2->setZero();
  }
  void rollouts(const MarkovGame<Scalar, S, A1, A2>& g, Parameterization param, const Matrix1& pi1,
                const Matrix2& pi2, const SamplingSettings& settings, int count, Rng& rng,
                GameTrajectory<Scalar, MaxHorizon>& scratch, Matrix1* grad1, Matrix2* grad2) {
    const Scalar w = Scalar(1) / Scalar(settings.batch);
    if (done == 0) cache.fill(g, param, pi1, pi2, grad1 != nullptr, grad2 != nullptr);
    run_game_rollouts(g, pi1, pi2, cache.player1.values, cache.player2.values, settings.horizon, count, rng, scratch,
                      [&](const GameTrajectory<Scalar, MaxHorizon>& traj) {
                        sum += traj.value[0];
                        accumulate_game_policy_gradients(g, param, pi1, pi2, cache, traj, w, grad1, grad2);
                      });
    done += count;
  }
  Status finish(const SamplingSettings& settings, const Matrix1* grad1, const Matrix2* grad2, Scalar& value) const {
    const Scalar v = sum * (Scalar(1) / Scalar(settings.batch));
    if (!std::isfinite(v) || (grad1 != nullptr && !pbrl::all_finite(*grad1)) || (grad2 != nullptr && !pbrl::all_finite(*grad2)))
      return Status::numerical_failure;
    value = v;
    return Status::ok;
  }
};

}  // namespace detail

// value = V_hat^{pi1,pi2}(rho); grad1 = dV/dy1 and grad2 = dV/dy2 (player 1's value; player 2
// descends it) in the coordinates of `param`, from one batch of (pi1, pi2). nullptr skips a
// gradient. Adds B*H to steps.
template <typename Scalar, int S, int A1, int A2, int MaxHorizon>
Status sampled_game_policy_gradient(const MarkovGame<Scalar, S, A1, A2>& g, Parameterization param,
                                    const StateActionMatrix<Scalar, S, A1>& pi1,
                                    const StateActionMatrix<Scalar, S, A2>& pi2, const SamplingSettings& settings,
                                    Rng& rng, GameTrajectory<Scalar, MaxHorizon>& scratch, std::int64_t& steps,
                                    Scalar& value, StateActionMatrix<Scalar, S, A1>* grad1,
                                    StateActionMatrix<Scalar, S, A2>* grad2) {
  using Batch = detail::GamePolicyGradientBatch<Scalar, S, A1, A2, MaxHorizon>;
  if (Status st = Batch::check(g, param, pi1, pi2, settings); st != Status::ok) return st;
  Rng local = rng;
  Batch batch;
  batch.start(grad1, grad2);
  batch.rollouts(g, param, pi1, pi2, settings, settings.batch, local, scratch, grad1, grad2);
  if (Status st = batch.finish(settings, grad1, grad2, value); st != Status::ok) return st;
  rng = local;
  steps += batch_steps(settings);
  return Status::ok;
}

// grad = J_hat^T(mu^{pi1,pi2}, V^{pi1,pi2}) on g = M(x) (model and g from build(x)), the estimate
// of grad_x V^{pi1,pi2}(rho).
// Adds B*H to steps. Needs the problem's sample_vjp over joint actions.
template <class GameProblem, typename Scalar, int S, int A1, int A2, int MaxHorizon>
Status sampled_game_vjp(const GameProblem& problem, const typename GameProblem::Model& model,
                        const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                        const StateActionMatrix<Scalar, S, A2>& pi2, const SamplingSettings& settings, Rng& rng,
                        GameTrajectory<Scalar, MaxHorizon>& scratch, std::int64_t& steps,
                        typename GameProblem::Params& grad) {
  static_assert(has_game_sample_vjp<GameProblem>::value, "sampled estimators need GameProblem::sample_vjp");
  if (Status st = detail::check_game_call<Scalar, S, A1, A2, MaxHorizon>(g, pi1, pi2, settings); st != Status::ok)
    return st;
  return detail::gradient_batch<Scalar>(settings, rng, steps, grad, [&](Rng& local, Scalar w) {
    detail::run_game_batch(g, pi1, pi2, settings, local, scratch, [&](const GameTrajectory<Scalar, MaxHorizon>& traj) {
      detail::accumulate_game_vjp(problem, model, g.discount, traj, w, grad);
    });
  });
}

namespace detail {

// sampled_nikaido_isoda_penalty in parts, for a sliced step: check(), start(rng), rollouts() of
// batch 1 = (pi-hat1, pi2) then of batch 2 = (pi1, pi-hat2), B each, in any chunks (all with the
// same arguments: the first chunk of each batch fills the regularizer cache), then finish() (the
// estimate; numerical_failure on a non-finite one; rng_out = the stream after both batches). The
// whole call is these.
template <class GameProblem, int MaxHorizon>
struct NikaidoIsodaBatches {
  using Scalar = typename GameProblem::Scalar;
  static constexpr int S = GameProblem::kStates, A1 = GameProblem::kActions1, A2 = GameProblem::kActions2;
  using Matrix1 = StateActionMatrix<Scalar, S, A1>;
  using Matrix2 = StateActionMatrix<Scalar, S, A2>;
  using Game = MarkovGame<Scalar, S, A1, A2>;
  using Traj = GameTrajectory<Scalar, MaxHorizon>;
  Rng first{}, second{};  // the streams of batch 1 and batch 2
  Scalar sum1 = Scalar(0), sum2 = Scalar(0);
  int done1 = 0, done2 = 0;  // rollouts taken of each batch
  GameRegularizerCache<Scalar, S, A1, A2> cache{};  // of the current batch's pair, filled by its first chunk

  static Status check(const Game& g, Parameterization param, const Matrix1& pi1, const Matrix2& pi2,
                      const Matrix1& pi1_hat, const Matrix2& pi2_hat, const SamplingSettings& settings) {
    if (!valid_parameterization(param)) return Status::bad_setting;
    if (Status st = check_game_call<Scalar, S, A1, A2, MaxHorizon>(g, pi1, pi2, settings); st != Status::ok) return st;
    return check_game_call<Scalar, S, A1, A2, MaxHorizon>(g, pi1_hat, pi2_hat, settings);
  }
  void start(const Rng& rng, SampledNikaidoIsoda<GameProblem>& out) {
    first = second = rng;
    sum1 = sum2 = Scalar(0);
    done1 = done2 = 0;
    out.grad_x.setZero();
    out.grad_y1.setZero();
    out.grad_y2.setZero();
  }
  // The next `count` rollouts, of batch 1 until it has B, then of batch 2 (count within one batch).
  void rollouts(const GameProblem& problem, const typename GameProblem::Model& model, const Game& g,
                Parameterization param, const Matrix1& pi1, const Matrix2& pi2, const Matrix1& pi1_hat,
                const Matrix2& pi2_hat, const SamplingSettings& settings, int count, Traj& scratch,
                SampledNikaidoIsoda<GameProblem>& out) {
    const Scalar w = Scalar(1) / Scalar(settings.batch);
    if (done1 < settings.batch) {
      if (done1 == 0) cache.fill(g, param, pi1_hat, pi2, false, true);
      run_game_rollouts(g, pi1_hat, pi2, cache.player1.values, cache.player2.values, settings.horizon, count, first,
                        scratch, [&](const Traj& traj) {
                          sum1 += traj.value[0];
                          accumulate_game_vjp(problem, model, g.discount, traj, w, out.grad_x);
                          accumulate_game_policy_gradients(g, param, pi1_hat, pi2, cache, traj, w,
                                                           static_cast<Matrix1*>(nullptr), &out.grad_y2);
                        });
      done1 += count;
      if (done1 == settings.batch && !settings.common_random_numbers) second = first;
      return;
    }
    if (done2 == 0) cache.fill(g, param, pi1, pi2_hat, true, false);
    run_game_rollouts(g, pi1, pi2_hat, cache.player1.values, cache.player2.values, settings.horizon, count, second,
                      scratch, [&](const Traj& traj) {
                        sum2 += traj.value[0];
                        accumulate_game_vjp(problem, model, g.discount, traj, -w, out.grad_x);
                        accumulate_game_policy_gradients(g, param, pi1, pi2_hat, cache, traj, -w, &out.grad_y1,
                                                         static_cast<Matrix2*>(nullptr));
                      });
    done2 += count;
  }
  // Rollouts left in the current batch.
  int left(const SamplingSettings& settings) const {
    return done1 < settings.batch ? settings.batch - done1 : settings.batch - done2;
  }
  Status finish(const SamplingSettings& settings, SampledNikaidoIsoda<GameProblem>& out, Rng& rng_out) const {
    out.value = (sum1 - sum2) * (Scalar(1) / Scalar(settings.batch));
    if (!std::isfinite(out.value) || !pbrl::all_finite(out.grad_x) || !pbrl::all_finite(out.grad_y1) || !pbrl::all_finite(out.grad_y2))
      return Status::numerical_failure;
    rng_out = second;  // with common random numbers both copies stopped at the same state
    return Status::ok;
  }
};

}  // namespace detail

// The Nikaido-Isoda penalty psi and its gradients (x, and y1, y2 in `param`), from a batch of
// (pi-hat1, pi2) and a batch of (pi1, pi-hat2). Adds 2*B*H to steps.
template <class GameProblem, typename Scalar, int S, int A1, int A2, int MaxHorizon>
Status sampled_nikaido_isoda_penalty(const GameProblem& problem, const typename GameProblem::Model& model,
                                     const MarkovGame<Scalar, S, A1, A2>& g, Parameterization param,
                                     const PolicyY<Scalar, S, A1, false>& y1,
                                     const PolicyY<Scalar, S, A2, false>& y2,
                                     const PolicyHat<Scalar, S, A1, false>& hat1,
                                     const PolicyHat<Scalar, S, A2, false>& hat2,
                                     const SamplingSettings& settings, Rng& rng,
                                     GameTrajectory<Scalar, MaxHorizon>& scratch, std::int64_t& steps,
                                     SampledNikaidoIsoda<GameProblem>& out) {
  static_assert(has_game_sample_vjp<GameProblem>::value, "sampled estimators need GameProblem::sample_vjp");
  using Batches = detail::NikaidoIsodaBatches<GameProblem, MaxHorizon>;
  if (Status st = Batches::check(g, param, y1.pi, y2.pi, hat1.pi, hat2.pi, settings); st != Status::ok)
    return st;
  Batches batches;
  batches.start(rng, out);
  for (int batch = 0; batch < 2; ++batch)
    batches.rollouts(problem, model, g, param, y1.pi, y2.pi, hat1.pi, hat2.pi, settings, settings.batch, scratch, out);
  Rng after;
  if (Status st = batches.finish(settings, out, after); st != Status::ok) return st;
  rng = after;
  steps += 2 * batch_steps(settings);
  return Status::ok;
}

// grad = the estimate of grad_x D_u V^{pi1,pi2}(rho) = J^T(mu'_u, .) along the policy direction
// u = (u1, u2) (rows summing to 0), from one batch of (pi1, pi2); x must enter the rewards only
// (GameProblem::kRewardOnly). Adds B*H to steps.
template <class GameProblem, typename Scalar, int S, int A1, int A2, int MaxHorizon>
Status sampled_directional_vjp(const GameProblem& problem, const typename GameProblem::Model& model,
                               const MarkovGame<Scalar, S, A1, A2>& g, const StateActionMatrix<Scalar, S, A1>& pi1,
                               const StateActionMatrix<Scalar, S, A2>& pi2, const StateActionMatrix<Scalar, S, A1>& u1,
                               const StateActionMatrix<Scalar, S, A2>& u2, const SamplingSettings& settings, Rng& rng,
                               GameTrajectory<Scalar, MaxHorizon>& scratch, std::int64_t& steps,
                               typename GameProblem::Params& grad) {
  static_assert(has_game_sample_vjp<GameProblem>::value, "sampled estimators need GameProblem::sample_vjp");
  static_assert(GameProblem::kRewardOnly, "the sampled mixed derivative needs transitions free of x");
  if (Status st = detail::check_game_call<Scalar, S, A1, A2, MaxHorizon>(g, pi1, pi2, settings); st != Status::ok)
    return st;
  if (!all_finite(u1) || !all_finite(u2)) return Status::not_finite;
  return detail::gradient_batch<Scalar>(settings, rng, steps, grad, [&](Rng& local, Scalar w) {
    detail::run_game_batch(g, pi1, pi2, settings, local, scratch, [&](const GameTrajectory<Scalar, MaxHorizon>& traj) {
      Scalar d = w, c(0);
      for (int t = 0; t < traj.horizon; ++t) {
        const int s = traj.state[t], a1 = traj.action1[t], a2 = traj.action2[t];
        c += u1(s, a1) / pi1(s, a1) + u2(s, a2) / pi2(s, a2);  // drawn actions: pi > 0
        problem.sample_vjp(model, VjpSample<Scalar>{s, a1 * A2 + a2, traj.state[t + 1], d * c, Scalar(0)}, grad);
        d *= g.discount;
      }
    });
  });
}

}  // namespace pbrl
