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
// induced-MDP builds of O(S * A1 * A2 * S) each; nothing else depends on data. lambda_k, the
// steps and T follow the penalty schedule (solver/penalty_schedule.hpp); in tolerance mode T is
// at most inner_steps_max per player and the report's gap_bound = psi-hat + both oracles'
// certified gaps bounds the exact NE gap of pi_k.
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
#include "pbrl/penalty/nikaido_isoda.hpp"
#include "pbrl/policy.hpp"
#include "pbrl/sampling/game_estimators.hpp"
#include "pbrl/solver/oracle_steps.hpp"
#include "pbrl/solver/penalty_schedule.hpp"
#include "pbrl/solver/projected_step.hpp"
#include "pbrl/solver/settings.hpp"

namespace pbrl {

// The shared penalty-solver settings (solver/settings.hpp; policy: the set of y1 and y2, softmax
// the paper's; oracle: the best-response oracle of both players, inner_steps T per player) and
// alpha_pi. In tolerance mode the measured gap is the Nikaido-Isoda gap psi.
template <typename Scalar>
struct PbrlZeroSumSettings : PenaltySolverSettings<Scalar> {
  Scalar step_pi = Scalar(0.1);        // alpha_pi, for both players' parameters

  template <class Visitor>
  void visit(Visitor& v) const {
    PenaltySolverSettings<Scalar>::visit(v);
    v(step_pi, domain::step_size(), "step_pi");
  }
};

// The schedule's part is ScheduleReport's (solver/penalty_schedule.hpp): there oracle_gap sums both
// players' certified gaps and gap_bound = psi + oracle_gap bounds the exact NE gap of pi_k;
// evaluations stopped at max_sweeps are EvaluationOutcome's (evaluation.hpp).
template <typename Scalar>
struct PbrlZeroSumReport : ScheduleReport<Scalar>, EvaluationOutcome {
  std::int64_t iteration = 0;          // k of the iterate (x_k, pi_k) the numbers describe
  Scalar upper_objective = Scalar(0);  // f(x_k, pi_k)
  Scalar penalty = Scalar(0);          // psi(x_k, pi_k) with pi-hat_k: the NE gap estimate
  Scalar objective = Scalar(0);        // F = f + lambda*psi
  Scalar projected_gradient_norm = Scalar(0);  // |G|, separate step sizes for x and pi
  Scalar best_response_value1 = Scalar(0);     // V^{pihat1_k, pi2_k}(rho) (sampled mode: exact diagnostic)
  Scalar best_response_value2 = Scalar(0);     // V^{pi1_k, pihat2_k}(rho)
  std::int64_t environment_steps = 0;  // environment steps taken since init(), this step's included
};

template <typename Scalar>
Status validate(const PbrlZeroSumSettings<Scalar>& s) {
  if (Status st = check_domains(s); st != Status::ok) return st;
  return validate(static_cast<const PenaltySolverSettings<Scalar>&>(s));
}

template <class GameProblem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class PbrlZeroSum {
 public:
  static constexpr bool kSampled = Sources == GradientSources::exact_and_sampled;
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
    if (settings.gradient == GradientMode::sampled && (!kSampled || !has_sample_vjp<GameProblem>::value))
      return Status::bad_setting;
    problem_ = &problem;
    settings_ = settings;
    x_ = x0;
    y1_ = y1;
    y2_ = y2;
    initial_oracle_policy<Scalar, S, A1>(settings.policy, settings.oracle, settings.oracle_policy, y1_,
                                                 pi1_hat_, log_pi1_hat_);
    initial_oracle_policy<Scalar, S, A2>(settings.policy, settings.oracle, settings.oracle_policy, y2_,
                                                 pi2_hat_, log_pi2_hat_);
    value1_.setZero();
    value2_.setZero();
    eval1_ = Evaluation<Scalar, S, A1>{};
    eval2_ = Evaluation<Scalar, S, A2>{};
    eval_upper_ = Evaluation<Scalar, S, A1 * A2>{};
    counts_ = StepCounts{};
    schedule_.reset(settings);
    rng_.reseed(settings.seed);
    return Status::ok;
  }

  // One outer iteration. On error x, y1, y2, the oracles' warm starts, the schedule, the counts
  // (and in sampled mode the Rng) are unchanged; count_overflow when a count has no room left.
  Status step(Report* report = nullptr) {
    if (problem_ == nullptr) return Status::not_initialized;
    if (Status st = counts_.room_for_step(); st != Status::ok) return st;
    if (Status st = detail::check_workspace(ws_); st != Status::ok) return st;
    const std::int64_t sweeps_hit = max_sweeps_hit_total(ws_);
    const GameProblem& problem = *problem_;
    const Scalar lambda = schedule_.lambda(settings_, counts_.iteration);
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
    std::int64_t steps = 0;
    OracleResult oracle;
    Scalar f(0), psi(0), oracle_gap(0);
    const bool sampled = kSampled && settings_.gradient == GradientMode::sampled;
    // The certificate: exact mode always in tolerance mode; otherwise a diagnostic for the report
    // (sampled mode: exact, model-based, no environment steps, never part of the update).
    const bool certified = settings_.tolerance_mode() || report != nullptr;
    const Status gradients = sampled ? sampled_gradients(game, lambda, f, psi, steps, oracle.steps)
                                     : exact_gradients(game, lambda, certified, f, psi, oracle, oracle_gap);
    if (gradients != Status::ok) return gradients;
    if (sampled && certified)
      if (Status st = best_responses(game, false, true, oracle, oracle_gap); st != Status::ok) return st;
    const Scalar psi_exact = eval1_.value_rho + eval2_.value_rho;  // with pi-hat, from the model

    // 3. Projected step on Z = X x Y1 x Y2.
    const Scalar alpha_x = schedule_.step(settings_, settings_.step_x);
    const Scalar alpha_pi = schedule_.step(settings_, settings_.step_pi);
    const Scalar g2 =
        projected_step(x_, alpha_x, grad_x_, x_next_, [&](Params& x) { problem.project_parameters(x); }) +
        projected_step(y1_, alpha_pi, grad_y1_, y1_next_,
                       [&](Matrix1& y) { project_policy_set<Scalar, S, A1>(settings_.policy, y); }) +
        projected_step(y2_, alpha_pi, grad_y2_, y2_next_,
                       [&](Matrix2& y) { project_policy_set<Scalar, S, A2>(settings_.policy, y); });
    if (!all_finite(x_next_) || !all_finite(y1_next_) || !all_finite(y2_next_) || !std::isfinite(f) ||
        !std::isfinite(psi) || !std::isfinite(g2) || !std::isfinite(oracle_gap))
      return Status::numerical_failure;
    if (Status st = counts_.room_for(steps); st != Status::ok) return st;

    const std::int64_t k = counts_.iteration;
    x_ = x_next_;
    y1_ = y1_next_;
    y2_ = y2_next_;
    log_pi1_hat_ = log_pi1_next_;
    pi1_hat_ = pi1_next_;
    value1_ = value1_next_;
    log_pi2_hat_ = log_pi2_next_;
    pi2_hat_ = pi2_next_;
    value2_ = value2_next_;
    if constexpr (kSampled)
      if (sampled) rng_ = sampled_.rng_next;
    counts_.commit(steps);
    // Exact mode: the certified bound psi + oracle gaps; sampled mode: the sampled psi.
    const Scalar estimate = schedule_.observe(settings_, k, sampled ? psi : psi + oracle_gap);
    if (report != nullptr) {
      static_cast<ScheduleReport<Scalar>&>(*report) =
          schedule_.describe(settings_, lambda, alpha_x, oracle, oracle_gap, psi_exact + oracle_gap, estimate);
      report->max_sweeps_hit = max_sweeps_hit_total(ws_) - sweeps_hit;
      report->iteration = k;
      report->upper_objective = f;
      report->penalty = psi;
      report->objective = f + lambda * psi;
      report->projected_gradient_norm = std::sqrt(g2);
      report->best_response_value1 = eval1_.value_rho;
      report->best_response_value2 = -eval2_.value_rho;
      report->environment_steps = counts_.environment_steps;
    }
    return Status::ok;
  }

  // `iterations` steps (the caller's bound); stops at the first error. `last` gets the last report.
  Status run(std::int64_t iterations, Report* last = nullptr) { return run_steps(*this, iterations, last); }

  // lambda_k (tolerance mode: lambda of the next step, whatever k).
  Scalar penalty_constant(std::int64_t k) const { return schedule_.lambda(settings_, k); }

  const Params& x() const { return x_; }
  const Matrix1& y1() const { return y1_; }
  const Matrix2& y2() const { return y2_; }
  const Matrix1& oracle_policy1() const { return pi1_hat_; }  // pi-hat1, the oracle's warm start
  const Matrix2& oracle_policy2() const { return pi2_hat_; }
  std::int64_t iteration() const { return counts_.iteration; }
  const Settings& settings() const { return settings_; }
  const PenaltySchedule<Scalar>& schedule() const { return schedule_; }
  void policy1(Matrix1& pi) const { policy_from_parameters<Scalar, S, A1>(settings_.policy.parameterization, y1_, pi); }
  void policy2(Matrix2& pi) const { policy_from_parameters<Scalar, S, A2>(settings_.policy.parameterization, y2_, pi); }
  Workspace& evaluation_workspace() { return ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream.
  std::int64_t environment_steps() const { return counts_.environment_steps; }
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
    settings_.visit(v);
    v(ws_, domain::any(), "workspace");  // its sweep settings (EvaluationMethod::sweeps)
  }
  // restore_checkpoint's last check, on copies decoded from the image's payload (whose numbers
  // are known finite): a state this solver could have written at iteration `sequence`. x in the
  // problem's box, y1 and y2 in the policy set, pi-hat1 and pi-hat2 policies, the schedule's
  // state consistent.
  Status validate_checkpoint_state(const unsigned char* payload, std::uint64_t sequence) const {
    return detail::validate_penalty_solver_state(*this, payload, sequence, problem_, settings_, counts_.iteration,
                                                 schedule_, x_, detail::PlayerStateFields<Matrix1>{y1_, pi1_hat_},
                                                 detail::PlayerStateFields<Matrix2>{y2_, pi2_hat_});
  }

 private:
  template <class Self, class Visitor>
  static decltype(auto) state_fields(Self& self, Visitor& v) {
    return v(self.counts_.iteration, self.counts_.environment_steps, self.rng_, self.schedule_, self.x_, self.y1_, self.y2_, self.log_pi1_hat_,
             self.pi1_hat_, self.log_pi2_hat_, self.pi2_hat_, self.value1_, self.value2_,
             warm_start<Method>(self.eval1_), warm_start<Method>(self.eval2_), warm_start<Method>(self.eval_upper_));
  }

  // Exact mode: oracles on the induced MDPs, f and psi from the model; fills grad_x_, grad_y1_,
  // grad_y2_ with grad F, the *_next_ warm starts and the evaluations of pi-hat (best_responses);
  // oracle: the larger player's steps, converged when both oracles met their targets.
  Status exact_gradients(const GameType& game, Scalar lambda, bool certified, Scalar& f, Scalar& psi,
                         OracleResult& oracle, Scalar& oracle_gap) {
    const GameProblem& problem = *problem_;
    if (Status st = best_responses(game, true, certified, oracle, oracle_gap); st != Status::ok) return st;
    if (Status st = problem.upper(x_, pi1_, pi2_, model_, ws_, eval_upper_, f, grad_x_, grad_pi1_, grad_pi2_);
        st != Status::ok)
      return st;
    psi = nikaido_isoda_penalty(problem, x_, game, PolicyY{pi1_}, PolicyY{pi2_}, PolicyHat{pi1_next_, eval1_},
                                PolicyHat{pi2_next_, eval2_}, lambda, ni_scratch_, grad_x_, grad_pi1_, grad_pi2_);
    chain_policy_gradient<Scalar, S, A1>(settings_.policy.parameterization, pi1_, grad_pi1_, grad_y1_);
    chain_policy_gradient<Scalar, S, A2>(settings_.policy.parameterization, pi2_, grad_pi2_, grad_y2_);
    return Status::ok;
  }

  // Player 1's MDP given pi2, then player 2's given pi1, one at a time in the one buffer induced_;
  // on each (best_response) the oracle if `oracles` (exact mode; sampled mode's ran on samples),
  // pi-hat's evaluation into eval1_ / eval2_ and, if `certified`, oracle_gap = the sum of the
  // certified gaps (psi <= psi-hat + oracle_gap). oracle is set only with the oracles.
  Status best_responses(const GameType& game, bool oracles, bool certified, OracleResult& oracle, Scalar& oracle_gap) {
    OracleResult used1, used2;
    Scalar gap1(0), gap2(0);
    Mdp<Scalar, S, A1> mdp1;
    if (Status st = player1_mdp(game, pi2_, induced_, mdp1); st != Status::ok) return st;
    if (Status st = best_response(mdp1, oracles, certified, eval1_, grad_y1_, log_pi1_next_, pi1_next_, value1_next_,
                                  used1, gap1);
        st != Status::ok)
      return st;
    Mdp<Scalar, S, A2> mdp2;
    if (Status st = player2_mdp(game, pi1_, induced_, mdp2); st != Status::ok) return st;
    if (Status st = best_response(mdp2, oracles, certified, eval2_, grad_y2_, log_pi2_next_, pi2_next_, value2_next_,
                                  used2, gap2);
        st != Status::ok)
      return st;
    if (oracles) {
      oracle.steps = used1.steps > used2.steps ? used1.steps : used2.steps;
      oracle.converged = used1.converged && used2.converged;
    }
    if (certified) oracle_gap = gap1 + gap2;
    return Status::ok;
  }

  // One player's part of best_responses on its MDP m; scratch is the oracle's (grad_y1_ or
  // grad_y2_, written only after the oracles).
  template <int A>
  Status best_response(const Mdp<Scalar, S, A>& m, bool oracle, bool certified, Evaluation<Scalar, S, A>& eval,
                       StateActionMatrix<Scalar, S, A>& scratch, StateActionMatrix<Scalar, S, A>& log_pi_next,
                       StateActionMatrix<Scalar, S, A>& pi_next, StateVector<Scalar, S>& value_next,
                       OracleResult& used, Scalar& gap) {
    if (oracle) {
      const Scalar target = schedule_.oracle_target(settings_) / Scalar(2);  // each player's half
      if (Status st = run_oracle(settings_.oracle, settings_.oracle_policy, settings_.oracle_step, m,
                                 schedule_.inner_steps_min(settings_), schedule_.inner_steps_max(settings_), target,
                                 ws_, eval, scratch, log_pi_next, pi_next, value_next, used);
          st != Status::ok)
        return st;
    }
    if (Status st = evaluate(m, pi_next, ws_, eval); st != Status::ok) return st;
    if (certified) gap = optimality_gap_bound(m, eval);
    return Status::ok;
  }

  // Sampled mode: T sampled policy-gradient steps per player, the sampled psi, the exact f; the
  // same outputs as exact_gradients plus sampled_.rng_next and the environment steps taken.
  // grad_y1_ and grad_y2_ carry the players' sampled gradients until grad F overwrites them.
  Status sampled_gradients(const GameType& game, Scalar lambda, Scalar& f, Scalar& psi, std::int64_t& steps,
                           std::int64_t& inner) {
    if constexpr (!kSampled || !has_sample_vjp<GameProblem>::value) {
      (void)game, (void)lambda, (void)f, (void)psi, (void)steps, (void)inner;
      return Status::bad_setting;  // init() refuses this already
    } else {
      sampled_.rng_next = rng_;
      const GameProblem& problem = *problem_;
      const PolicySet<Scalar>& set = settings_.oracle_policy;
      const Scalar eta = settings_.oracle_step;
      Scalar value(0);
      const int T = schedule_.inner_steps_max(settings_);
      inner = T;
      for (int i = 0; i < T; ++i) {  // player 1 ascends V against pi2
        if (Status st = sampled_game_policy_gradient(game, set.parameterization, pi1_next_, pi2_, settings_.sampling,
                                                     sampled_.rng_next, sampled_.trajectory, steps, value, &grad_y1_,
                                                     static_cast<Matrix2*>(nullptr));
            st != Status::ok)
          return st;
        if (Status st = policy_ascent_update<Scalar, S, A1>(set, eta, grad_y1_, log_pi1_next_, pi1_next_);
            st != Status::ok)
          return st;
      }
      for (int i = 0; i < T; ++i) {  // player 2 descends V against pi1
        if (Status st = sampled_game_policy_gradient(game, set.parameterization, pi1_, pi2_next_, settings_.sampling,
                                                     sampled_.rng_next, sampled_.trajectory, steps, value,
                                                     static_cast<Matrix1*>(nullptr), &grad_y2_);
            st != Status::ok)
          return st;
        grad_y2_ = -grad_y2_;
        if (Status st = policy_ascent_update<Scalar, S, A2>(set, eta, grad_y2_, log_pi2_next_, pi2_next_);
            st != Status::ok)
          return st;
      }
      if (Status st = sampled_nikaido_isoda_penalty(problem, x_, game, settings_.policy.parameterization, PolicyY{pi1_},
                                                    PolicyY{pi2_}, PolicyHat{pi1_next_}, PolicyHat{pi2_next_},
                                                    settings_.sampling, sampled_.rng_next, sampled_.trajectory,
                                                    steps, sampled_.penalty);
          st != Status::ok)
        return st;
      if (Status st = problem.upper(x_, pi1_, pi2_, model_, ws_, eval_upper_, f, grad_x_, grad_pi1_, grad_pi2_);
          st != Status::ok)
        return st;
      chain_policy_gradient<Scalar, S, A1>(settings_.policy.parameterization, pi1_, grad_pi1_, grad_y1_);
      chain_policy_gradient<Scalar, S, A2>(settings_.policy.parameterization, pi2_, grad_pi2_, grad_y2_);
      grad_x_ += lambda * sampled_.penalty.grad_x;
      grad_y1_ += lambda * sampled_.penalty.grad_y1;
      grad_y2_ += lambda * sampled_.penalty.grad_y2;
      psi = sampled_.penalty.value;
      return Status::ok;
    }
  }

  const GameProblem* problem_ = nullptr;
  Settings settings_{};
  StepCounts counts_{};
  PenaltySchedule<Scalar> schedule_{};
  // Iterates and the oracles' warm starts.
  Params x_ = Params::Zero();
  Matrix1 y1_ = Matrix1::Zero(), log_pi1_hat_ = Matrix1::Zero(), pi1_hat_ = Matrix1::Zero();
  Matrix2 y2_ = Matrix2::Zero(), log_pi2_hat_ = Matrix2::Zero(), pi2_hat_ = Matrix2::Zero();
  StateVector<Scalar, S> value1_ = StateVector<Scalar, S>::Zero(), value2_ = StateVector<Scalar, S>::Zero();
  // Scratch of one step.
  Params x_next_ = Params::Zero(), grad_x_ = Params::Zero();
  Matrix1 y1_next_ = Matrix1::Zero(), log_pi1_next_ = Matrix1::Zero(), pi1_next_ = Matrix1::Zero();
  Matrix1 pi1_ = Matrix1::Zero(), grad_pi1_ = Matrix1::Zero(), grad_y1_ = Matrix1::Zero();
  Matrix2 y2_next_ = Matrix2::Zero(), log_pi2_next_ = Matrix2::Zero(), pi2_next_ = Matrix2::Zero();
  Matrix2 pi2_ = Matrix2::Zero(), grad_pi2_ = Matrix2::Zero(), grad_y2_ = Matrix2::Zero();
  StateVector<Scalar, S> value1_next_ = StateVector<Scalar, S>::Zero();
  StateVector<Scalar, S> value2_next_ = StateVector<Scalar, S>::Zero();
  SharedInducedModel<Scalar, S, A1, A2> induced_{};  // player 1's MDP given pi2, then player 2's given pi1
  NikaidoIsodaScratch<Scalar, S, A1, A2> ni_scratch_{};
  typename GameProblem::Model model_{};
  Evaluation<Scalar, S, A1> eval1_{};
  Evaluation<Scalar, S, A2> eval2_{};
  Evaluation<Scalar, S, A1 * A2> eval_upper_{};
  Workspace ws_{};
  // Sampled mode: the random stream (state; kept by exact-only types too, so their images are the
  // same) and the scratch (none in an exact-only type).
  Rng rng_{};
  struct SampledState {
    Rng rng_next{};
    GameTrajectory<Scalar, kMaxHorizon> trajectory{};
    SampledNikaidoIsoda<GameProblem> penalty{};
  };
  SampledScratch<Sources, SampledState> sampled_{};
};

}  // namespace pbrl
