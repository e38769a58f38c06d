#pragma once
// PBRL with a zero-sum lower level (paper, eq. "projected grad update zero sum"). One outer
// iteration k, with z = (x, y1, y2) and pi_i = pi(y_i):
//   1. T oracle steps on player 1's MDP given pi2_k -> pi-hat1_k, and T on player 2's MDP given
//      pi1_k -> pi-hat2_k, each warm-started from the last iteration's pi-hat
//   2. grad F = grad f(x_k, pi_k) + lambda_k * grad psi(x_k, pi_k; pi-hat_k)   (Nikaido-Isoda)
//   3. z_{k+1} = Proj_Z(z_k - alpha grad F), with alpha_x for x and alpha_pi for (y1, y2)
// The report gives f, psi (the NE gap estimate) and |G| = |(z_k - z_{k+1}) / alpha| (the metric
// of Theorem "Convergence of PBRL with zero-sum lower-level", with the step's estimated gradient).
// The solver object is the whole state: sizeof(PbrlZeroSum<...>) is the RAM it needs. step()
// does 2T + 3 policy evaluations (two of them of the oracle policies, one of f) plus two
// induced-MDP builds of O(S * A1 * A2 * S) each; nothing else depends on data.
//
// Sampled mode (settings.gradient = GradientMode::sampled; sampling/game_estimators.hpp): the
// same iteration with the lower level's gradients from rollouts of the game's generative model:
//   1. T sampled policy-gradient steps per player (OracleKind::policy_gradient is required), each
//      from a batch of (pi-hat1, pi2) resp. (pi1, pi-hat2): player 1 ascends V, player 2 descends;
//   2. psi and its gradients from two batches (sampled_nikaido_isoda_penalty), with common random
//      numbers unless settings.sampling says not;
//   3. f and its gradients stay the problem's exact, model-based upper() (the designer's own
//      model); no environment steps.
// (2T + 2)*B*H environment steps per step() (report.environment_steps counts them since init());
// the solver's Rng, seeded by init() from settings.seed, is part of its state and advances only
// with a successful step. The report's penalty and objective are the sampled estimates.
// step() in sampled mode needs GameProblem::sample_vjp over joint actions; init() refuses a
// problem without it (bad_setting).

#include "pbrl/checkpoint.hpp"
#include "pbrl/evaluation.hpp"
#include "pbrl/game.hpp"
#include "pbrl/oracle/pmd.hpp"
#include "pbrl/oracle/policy_gradient.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/penalty/nikaido_isoda.hpp"
#include "pbrl/policy.hpp"
#include "pbrl/sampling/game_estimators.hpp"
#include "pbrl/solver/pbrl.hpp"  // OracleKind, kMaxInnerSteps, GradientMode

namespace pbrl {

template <typename Scalar>
struct PbrlZeroSumSettings {
  PolicySet<Scalar> policy{};          // parameterization and set of y1 and y2 (softmax: the paper's)
  OracleKind oracle = OracleKind::policy_mirror_descent;  // best-response oracle of both players
  PolicySet<Scalar> oracle_policy{};   // policy-gradient oracle: projected (direct) or softmax
  int inner_steps = 10;                // T per player
  Scalar oracle_step = Scalar(1);      // eta of PMD or of the policy-gradient oracle
  Scalar step_x = Scalar(0.1);         // alpha_x
  Scalar step_pi = Scalar(0.1);        // alpha_pi, for both players' parameters
  Scalar penalty_start = Scalar(1);    // lambda at iteration 0
  Scalar penalty_final = Scalar(1);    // lambda once the ramp is over
  int penalty_ramp = 0;                // iterations of the linear ramp (0: lambda = penalty_final)
  GradientMode gradient = GradientMode::exact;  // sampled: Monte-Carlo lower-level gradients
  SamplingSettings sampling{};         // sampled mode: horizon H <= kMaxHorizon, batch B
  std::uint32_t seed = 1u;             // sampled mode: init() seeds the solver's Rng with it
};

template <typename Scalar>
struct PbrlZeroSumReport {
  long iteration = 0;                  // k of the iterate (x_k, pi_k) the numbers describe
  Scalar upper_objective = Scalar(0);  // f(x_k, pi_k)
  Scalar penalty = Scalar(0);          // psi(x_k, pi_k) with pi-hat_k: the NE gap estimate
  Scalar penalty_constant = Scalar(0); // lambda_k
  Scalar objective = Scalar(0);        // F = f + lambda*psi
  Scalar projected_gradient_norm = Scalar(0);  // |G|, separate step sizes for x and pi
  Scalar best_response_value1 = Scalar(0);     // V^{pihat1_k, pi2_k}(rho)
  Scalar best_response_value2 = Scalar(0);     // V^{pi1_k, pihat2_k}(rho) (exact mode)
  std::int64_t environment_steps = 0;  // environment steps taken since init(), this step's included
};

template <typename Scalar>
Status validate(const PbrlZeroSumSettings<Scalar>& s) {
  auto positive = [](Scalar v) { return std::isfinite(v) && v > Scalar(0); };
  if (s.oracle != OracleKind::policy_mirror_descent && s.oracle != OracleKind::policy_gradient &&
      s.oracle != OracleKind::soft_value_iteration)
    return Status::bad_setting;
  if (s.inner_steps < 0 || s.inner_steps > kMaxInnerSteps || s.penalty_ramp < 0) return Status::bad_setting;
  if (!positive(s.oracle_step) || !positive(s.step_x) || !positive(s.step_pi)) return Status::bad_step_size;
  if (!std::isfinite(s.penalty_start) || !std::isfinite(s.penalty_final) || s.penalty_start < Scalar(0) ||
      s.penalty_final < Scalar(0))
    return Status::bad_setting;
  if (s.gradient != GradientMode::exact && s.gradient != GradientMode::sampled) return Status::bad_setting;
  if (s.gradient == GradientMode::sampled) {
    if (s.oracle != OracleKind::policy_gradient) return Status::bad_setting;
    if (Status st = validate_sampling<kMaxHorizon>(s.sampling); st != Status::ok) return st;
  }
  return Status::ok;
}

namespace detail {

// pi-hat initial value from the policy of y: floored, renormalized, projected for the
// projected policy-gradient oracle.
template <typename Scalar, int S, int A>
void initial_oracle_policy(const PolicySet<Scalar>& param, OracleKind oracle, const PolicySet<Scalar>& oracle_set,
                           const StateActionMatrix<Scalar, S, A>& y, StateActionMatrix<Scalar, S, A>& pi,
                           StateActionMatrix<Scalar, S, A>& log_pi) {
  policy_from_parameters<Scalar, S, A>(param.parameterization, y, pi);
  if (oracle == OracleKind::policy_gradient && oracle_set.parameterization == Parameterization::direct)
    project_policy_set<Scalar, S, A>(oracle_set, pi);
  pi = pi.cwiseMax(log_floor<Scalar>());
  for (int s = 0; s < S; ++s) pi.row(s) /= pi.row(s).sum();
  log_pi = pi.array().log().matrix();
}

// T oracle steps of one player on its induced MDP, in place on (log_pi, pi, value).
template <typename Scalar, int S, int A, EvaluationMethod M>
Status run_best_response_oracle(const PbrlZeroSumSettings<Scalar>& settings, const Mdp<Scalar, S, A>& mdp,
                                EvaluationWorkspace<Scalar, S, M>& ws, Evaluation<Scalar, S, A>& eval,
                                StateActionMatrix<Scalar, S, A>& scratch, StateActionMatrix<Scalar, S, A>& log_pi,
                                StateActionMatrix<Scalar, S, A>& pi, StateVector<Scalar, S>& value) {
  const int T = settings.inner_steps;
  if (T == 0) return Status::ok;
  switch (settings.oracle) {
    case OracleKind::policy_mirror_descent:
      for (int i = 0; i < T; ++i)
        if (Status st = pmd_step(mdp, settings.oracle_step, ws, eval, log_pi, pi); st != Status::ok) return st;
      break;
    case OracleKind::policy_gradient:
      for (int i = 0; i < T; ++i)
        if (Status st = policy_gradient_step(mdp, settings.oracle_policy, settings.oracle_step, ws, eval, scratch,
                                             log_pi, pi);
            st != Status::ok)
          return st;
      break;
    case OracleKind::soft_value_iteration:
      if (Status st = soft_value_iteration(mdp, T, Scalar(0), value, scratch, log_pi, pi); st != Status::ok)
        return st;
      break;
    default:
      return Status::bad_setting;
  }
  // The oracles may return ok with a non-finite policy on overflow: never let one through.
  if (!log_pi.allFinite() || validate_policy(pi) != Status::ok) return Status::numerical_failure;
  return Status::ok;
}

}  // namespace detail

template <class GameProblem, EvaluationMethod Method = EvaluationMethod::direct>
class PbrlZeroSum {
 public:
  using Scalar = typename GameProblem::Scalar;
  static constexpr int S = GameProblem::kStates;
  static constexpr int A1 = GameProblem::kActions1;
  static constexpr int A2 = GameProblem::kActions2;
  using Params = typename GameProblem::Params;
  using Matrix1 = StateActionMatrix<Scalar, S, A1>;
  using Matrix2 = StateActionMatrix<Scalar, S, A2>;
  using GameType = MarkovGame<Scalar, S, A1, A2>;
  using Settings = PbrlZeroSumSettings<Scalar>;
  using Report = PbrlZeroSumReport<Scalar>;
  using Workspace = EvaluationWorkspace<Scalar, S, Method>;

  // Validates everything; on error the solver keeps its previous state.
  Status init(const GameProblem& problem, const Settings& settings, const Params& x0, const Matrix1& y1,
              const Matrix2& y2) {
    if (Status st = validate(settings); st != Status::ok) return st;
    if (Status st = validate<Scalar, A1>(settings.policy); st != Status::ok) return st;
    if (Status st = validate<Scalar, A2>(settings.policy); st != Status::ok) return st;
    if (Status st = validate<Scalar, A1>(settings.oracle_policy); st != Status::ok) return st;
    if (Status st = validate<Scalar, A2>(settings.oracle_policy); st != Status::ok) return st;
    if (Status st = problem.validate_parameters(x0); st != Status::ok) return st;
    if (Status st = validate_parameters<Scalar, S, A1>(settings.policy, y1); st != Status::ok) return st;
    if (Status st = validate_parameters<Scalar, S, A2>(settings.policy, y2); st != Status::ok) return st;
    if (settings.gradient == GradientMode::sampled && !has_sample_vjp<GameProblem>::value) return Status::bad_setting;
    problem_ = &problem;
    settings_ = settings;
    x_ = x0;
    y1_ = y1;
    y2_ = y2;
    detail::initial_oracle_policy<Scalar, S, A1>(settings.policy, settings.oracle, settings.oracle_policy, y1_,
                                                 pi1_hat_, log_pi1_hat_);
    detail::initial_oracle_policy<Scalar, S, A2>(settings.policy, settings.oracle, settings.oracle_policy, y2_,
                                                 pi2_hat_, log_pi2_hat_);
    value1_.setZero();
    value2_.setZero();
    eval1_ = Evaluation<Scalar, S, A1>{};
    eval2_ = Evaluation<Scalar, S, A2>{};
    eval_upper_ = Evaluation<Scalar, S, A1 * A2>{};
    iteration_ = 0;
    rng_.reseed(settings.seed);
    environment_steps_ = 0;
    return Status::ok;
  }

  // One outer iteration. On error x, y1, y2, the oracles' warm starts, the count (and in sampled
  // mode the Rng and the step count) are unchanged.
  Status step(Report* report = nullptr) {
    if (problem_ == nullptr) return Status::not_initialized;
    if (Status st = detail::check_workspace(ws_); st != Status::ok) return st;
    const GameProblem& problem = *problem_;
    const Scalar lambda = penalty_constant(iteration_);
    GameType game;
    if (Status st = problem.build(x_, model_, game); st != Status::ok) return st;
    policy_from_parameters<Scalar, S, A1>(settings_.policy.parameterization, y1_, pi1_);
    policy_from_parameters<Scalar, S, A2>(settings_.policy.parameterization, y2_, pi2_);
    // 1.-2. Oracles on copies (a failure leaves the warm starts intact), f, psi and grad F.
    log_pi1_next_ = log_pi1_hat_;
    pi1_next_ = pi1_hat_;
    value1_next_ = value1_;
    log_pi2_next_ = log_pi2_hat_;
    pi2_next_ = pi2_hat_;
    value2_next_ = value2_;
    rng_next_ = rng_;
    std::int64_t steps = 0;
    Scalar f(0), psi(0);
    const Status gradients = settings_.gradient == GradientMode::sampled ? sampled_gradients(game, lambda, f, psi, steps)
                                                                         : exact_gradients(game, lambda, f, psi);
    if (gradients != Status::ok) return gradients;

    // 3. Projected step on Z = X x Y1 x Y2.
    x_next_ = x_ - settings_.step_x * grad_x_;
    problem.project_parameters(x_next_);
    y1_next_ = y1_ - settings_.step_pi * grad_y1_;
    project_policy_set<Scalar, S, A1>(settings_.policy, y1_next_);
    y2_next_ = y2_ - settings_.step_pi * grad_y2_;
    project_policy_set<Scalar, S, A2>(settings_.policy, y2_next_);
    const Scalar g2 = ((x_ - x_next_) / settings_.step_x).squaredNorm() +
                      ((y1_ - y1_next_) / settings_.step_pi).squaredNorm() +
                      ((y2_ - y2_next_) / settings_.step_pi).squaredNorm();
    if (!x_next_.allFinite() || !y1_next_.allFinite() || !y2_next_.allFinite() || !std::isfinite(f) ||
        !std::isfinite(psi) || !std::isfinite(g2))
      return Status::numerical_failure;

    if (report != nullptr) {
      report->iteration = iteration_;
      report->upper_objective = f;
      report->penalty = psi;
      report->penalty_constant = lambda;
      report->objective = f + lambda * psi;
      report->projected_gradient_norm = std::sqrt(g2);
      report->best_response_value1 = settings_.gradient == GradientMode::exact ? eval1_.value_rho : Scalar(0);
      report->best_response_value2 = settings_.gradient == GradientMode::exact ? -eval2_.value_rho : Scalar(0);
      report->environment_steps = environment_steps_ + steps;
    }
    x_ = x_next_;
    y1_ = y1_next_;
    y2_ = y2_next_;
    log_pi1_hat_ = log_pi1_next_;
    pi1_hat_ = pi1_next_;
    value1_ = value1_next_;
    log_pi2_hat_ = log_pi2_next_;
    pi2_hat_ = pi2_next_;
    value2_ = value2_next_;
    rng_ = rng_next_;
    environment_steps_ += steps;
    ++iteration_;
    return Status::ok;
  }

  // `iterations` steps (the caller's bound); stops at the first error. `last` gets the last report.
  Status run(long iterations, Report* last = nullptr) {
    if (iterations < 0) return Status::bad_setting;
    for (long k = 0; k < iterations; ++k)
      if (Status st = step(last); st != Status::ok) return st;
    return Status::ok;
  }

  // lambda_k: linear ramp from penalty_start to penalty_final over penalty_ramp iterations.
  Scalar penalty_constant(long k) const {
    if (settings_.penalty_ramp <= 0 || k >= settings_.penalty_ramp) return settings_.penalty_final;
    const Scalar t = Scalar(k) / Scalar(settings_.penalty_ramp);
    return settings_.penalty_start + t * (settings_.penalty_final - settings_.penalty_start);
  }

  const Params& x() const { return x_; }
  const Matrix1& y1() const { return y1_; }
  const Matrix2& y2() const { return y2_; }
  const Matrix1& oracle_policy1() const { return pi1_hat_; }  // pi-hat1, the oracle's warm start
  const Matrix2& oracle_policy2() const { return pi2_hat_; }
  long iteration() const { return iteration_; }
  const Settings& settings() const { return settings_; }
  void policy1(Matrix1& pi) const { policy_from_parameters<Scalar, S, A1>(settings_.policy.parameterization, y1_, pi); }
  void policy2(Matrix2& pi) const { policy_from_parameters<Scalar, S, A2>(settings_.policy.parameterization, y2_, pi); }
  Workspace& evaluation_workspace() { return ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream.
  std::int64_t environment_steps() const { return environment_steps_; }
  const Rng& rng() const { return rng_; }
  bool initialized() const { return problem_ != nullptr; }

  // Checkpoints (checkpoint.hpp): the type tag; the state, i.e. every field that carries over
  // from one step() to the next, in image order (not the problem, not the per-step scratch);
  // the settings an image must have been saved under, the workspace's sweep settings included.
  static constexpr CheckpointTag checkpoint_tag() {
    return {CheckpointSolver::pbrl_zero_sum, sizeof(Scalar), Method, S, A1, A2, GameProblem::kParams};
  }
  template <class Visitor>
  decltype(auto) visit_state(Visitor& v) { return state_fields(*this, v); }
  template <class Visitor>
  decltype(auto) visit_state(Visitor& v) const { return state_fields(*this, v); }
  template <class Visitor>
  void visit_settings(Visitor& v) const {
    const Settings& s = settings_;
    v(s.policy.parameterization, s.policy.floor, s.policy.logit_bound, s.oracle, s.oracle_policy.parameterization,
      s.oracle_policy.floor, s.oracle_policy.logit_bound, s.inner_steps, s.oracle_step, s.step_x, s.step_pi,
      s.penalty_start, s.penalty_final, s.penalty_ramp, s.gradient, s.sampling.horizon, s.sampling.batch,
      s.sampling.common_random_numbers, s.seed, ws_);
  }

 private:
  template <class Self, class Visitor>
  static decltype(auto) state_fields(Self& self, Visitor& v) {
    return v(self.iteration_, self.environment_steps_, self.rng_, self.x_, self.y1_, self.y2_, self.log_pi1_hat_,
             self.pi1_hat_, self.log_pi2_hat_, self.pi2_hat_, self.value1_, self.value2_,
             warm_start<Method>(self.eval1_), warm_start<Method>(self.eval2_), warm_start<Method>(self.eval_upper_));
  }

  // Exact mode: oracles on the induced MDPs, f and psi from the model; fills grad_x_, grad_y1_,
  // grad_y2_ with grad F and the *_next_ warm starts.
  Status exact_gradients(const GameType& game, Scalar lambda, Scalar& f, Scalar& psi) {
    const GameProblem& problem = *problem_;
    Mdp<Scalar, S, A1> mdp1;  // player 1's MDP given pi2
    Mdp<Scalar, S, A2> mdp2;  // player 2's MDP given pi1
    if (Status st = player1_mdp(game, pi2_, induced1_, mdp1); st != Status::ok) return st;
    if (Status st = player2_mdp(game, pi1_, induced2_, mdp2); st != Status::ok) return st;
    if (Status st = detail::run_best_response_oracle(settings_, mdp1, ws_, eval1_, scratch1_, log_pi1_next_,
                                                     pi1_next_, value1_next_);
        st != Status::ok)
      return st;
    if (Status st = detail::run_best_response_oracle(settings_, mdp2, ws_, eval2_, scratch2_, log_pi2_next_,
                                                     pi2_next_, value2_next_);
        st != Status::ok)
      return st;
    if (Status st = evaluate(mdp1, pi1_next_, ws_, eval1_); st != Status::ok) return st;
    if (Status st = evaluate(mdp2, pi2_next_, ws_, eval2_); st != Status::ok) return st;
    if (Status st = problem.upper(x_, pi1_, pi2_, model_, ws_, eval_upper_, f, grad_x_, grad_pi1_, grad_pi2_);
        st != Status::ok)
      return st;
    psi = nikaido_isoda_penalty(problem, x_, game, pi1_, pi2_, pi1_next_, eval1_, pi2_next_, eval2_, lambda,
                                ni_scratch_, grad_x_, grad_pi1_, grad_pi2_);
    chain_policy_gradient<Scalar, S, A1>(settings_.policy.parameterization, pi1_, grad_pi1_, grad_y1_);
    chain_policy_gradient<Scalar, S, A2>(settings_.policy.parameterization, pi2_, grad_pi2_, grad_y2_);
    return Status::ok;
  }

  // Sampled mode: T sampled policy-gradient steps per player, the sampled psi, the exact f; the
  // same outputs as exact_gradients plus rng_next_ and the environment steps taken.
  Status sampled_gradients(const GameType& game, Scalar lambda, Scalar& f, Scalar& psi, std::int64_t& steps) {
    if constexpr (!has_sample_vjp<GameProblem>::value) {
      (void)game, (void)lambda, (void)f, (void)psi, (void)steps;
      return Status::bad_setting;  // init() refuses this already
    } else {
      const GameProblem& problem = *problem_;
      const PolicySet<Scalar>& set = settings_.oracle_policy;
      const Scalar eta = settings_.oracle_step;
      Scalar value(0);
      for (int i = 0; i < settings_.inner_steps; ++i) {  // player 1 ascends V against pi2
        if (Status st = sampled_game_policy_gradient(game, set.parameterization, pi1_next_, pi2_, settings_.sampling,
                                                     rng_next_, trajectory_, steps, value, &scratch1_,
                                                     static_cast<Matrix2*>(nullptr));
            st != Status::ok)
          return st;
        if (Status st = policy_ascent_update<Scalar, S, A1>(set, eta, scratch1_, log_pi1_next_, pi1_next_);
            st != Status::ok)
          return st;
      }
      for (int i = 0; i < settings_.inner_steps; ++i) {  // player 2 descends V against pi1
        if (Status st = sampled_game_policy_gradient(game, set.parameterization, pi1_, pi2_next_, settings_.sampling,
                                                     rng_next_, trajectory_, steps, value,
                                                     static_cast<Matrix1*>(nullptr), &scratch2_);
            st != Status::ok)
          return st;
        scratch2_ = -scratch2_;
        if (Status st = policy_ascent_update<Scalar, S, A2>(set, eta, scratch2_, log_pi2_next_, pi2_next_);
            st != Status::ok)
          return st;
      }
      if (Status st = sampled_nikaido_isoda_penalty(problem, x_, game, settings_.policy.parameterization, pi1_, pi2_,
                                                    pi1_next_, pi2_next_, settings_.sampling, rng_next_, trajectory_,
                                                    steps, sampled_penalty_);
          st != Status::ok)
        return st;
      if (Status st = problem.upper(x_, pi1_, pi2_, model_, ws_, eval_upper_, f, grad_x_, grad_pi1_, grad_pi2_);
          st != Status::ok)
        return st;
      chain_policy_gradient<Scalar, S, A1>(settings_.policy.parameterization, pi1_, grad_pi1_, grad_y1_);
      chain_policy_gradient<Scalar, S, A2>(settings_.policy.parameterization, pi2_, grad_pi2_, grad_y2_);
      grad_x_ += lambda * sampled_penalty_.grad_x;
      grad_y1_ += lambda * sampled_penalty_.grad_y1;
      grad_y2_ += lambda * sampled_penalty_.grad_y2;
      psi = sampled_penalty_.value;
      return Status::ok;
    }
  }

  const GameProblem* problem_ = nullptr;
  Settings settings_{};
  long iteration_ = 0;
  // Iterates and the oracles' warm starts.
  Params x_ = Params::Zero();
  Matrix1 y1_ = Matrix1::Zero(), log_pi1_hat_ = Matrix1::Zero(), pi1_hat_ = Matrix1::Zero();
  Matrix2 y2_ = Matrix2::Zero(), log_pi2_hat_ = Matrix2::Zero(), pi2_hat_ = Matrix2::Zero();
  StateVector<Scalar, S> value1_ = StateVector<Scalar, S>::Zero(), value2_ = StateVector<Scalar, S>::Zero();
  // Scratch of one step.
  Params x_next_ = Params::Zero(), grad_x_ = Params::Zero();
  Matrix1 y1_next_ = Matrix1::Zero(), log_pi1_next_ = Matrix1::Zero(), pi1_next_ = Matrix1::Zero();
  Matrix1 pi1_ = Matrix1::Zero(), grad_pi1_ = Matrix1::Zero(), grad_y1_ = Matrix1::Zero(), scratch1_ = Matrix1::Zero();
  Matrix2 y2_next_ = Matrix2::Zero(), log_pi2_next_ = Matrix2::Zero(), pi2_next_ = Matrix2::Zero();
  Matrix2 pi2_ = Matrix2::Zero(), grad_pi2_ = Matrix2::Zero(), grad_y2_ = Matrix2::Zero(), scratch2_ = Matrix2::Zero();
  StateVector<Scalar, S> value1_next_ = StateVector<Scalar, S>::Zero();
  StateVector<Scalar, S> value2_next_ = StateVector<Scalar, S>::Zero();
  InducedModel<Scalar, S, A1> induced1_{};
  InducedModel<Scalar, S, A2> induced2_{};
  NikaidoIsodaScratch<Scalar, S, A1, A2> ni_scratch_{};
  typename GameProblem::Model model_{};
  Evaluation<Scalar, S, A1> eval1_{};
  Evaluation<Scalar, S, A2> eval2_{};
  Evaluation<Scalar, S, A1 * A2> eval_upper_{};
  Workspace ws_{};
  // Sampled mode: the random stream and the step count (state), and their scratch.
  Rng rng_{}, rng_next_{};
  std::int64_t environment_steps_ = 0;
  GameTrajectory<Scalar, kMaxHorizon> trajectory_{};
  SampledNikaidoIsoda<GameProblem> sampled_penalty_{};
};

}  // namespace pbrl
