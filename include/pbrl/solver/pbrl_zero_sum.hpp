#pragma once
// PBRL with a zero-sum lower level (paper, eq. "projected grad update zero sum"), for a game
// problem (game.hpp): per step, T oracle steps for each player on its induced MDP, then a
// projected step of z = (x, y1, y2) on f + lambda_k * psi (the Nikaido-Isoda penalty). The report
// gives f, psi and |G| = |(z_k - z_{k+1}) / alpha|.
// The object is the whole state (sizeof is its RAM). step() does 2T + 3 policy evaluations and two
// induced-MDP builds, no other loop that depends on data. lambda_k, the steps and T follow the
// penalty schedule; in tolerance mode T <= inner_steps_max per player and the report's gap_bound
// (psi-hat plus both oracles' certified gaps) bounds the exact NE gap of pi_k.
// Sampled mode: (2T + 2)*B*H environment steps a step; it requires OracleKind::policy_gradient and
// the problem's sample_vjp over joint actions, else init() returns bad_setting. A step that fails
// leaves the Rng unchanged. More: docs/algorithm.md#pbrl-with-a-zero-sum-lower-level.

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/game.hpp"
#include "pbrl/penalty/nikaido_isoda.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/sampling/detail/game_estimators.hpp"
#include "pbrl/solver/detail/oracle_steps.hpp"
#include "pbrl/solver/penalty_schedule.hpp"
#include "pbrl/solver/detail/projected_step.hpp"
#include "pbrl/solver/settings.hpp"
#include "pbrl/solver/solver_core.hpp"
#include "pbrl/solver/step_slices.hpp"

namespace pbrl {

/// PbrlZeroSum's settings: the shared penalty-solver settings (solver/settings.hpp; policy: the
/// set of y1 and y2, softmax the paper's; oracle: the best-response oracle of both players,
/// inner_steps T per player) and alpha_pi. In tolerance mode the measured gap is the
/// Nikaido-Isoda gap psi.
template <typename Scalar>
struct PbrlZeroSumSettings : PenaltySolverSettings<Scalar> {
  Scalar step_pi = Scalar(0.1);        ///< alpha_pi, for both players' parameters (finite, > 0)

  /// Each field once, with its domain and its name (visitor: v(field, Domain, name)).
  template <class Visitor>
  void visit(Visitor& v) const {
    PenaltySolverSettings<Scalar>::visit(v);
    v(step_pi, domain::step_size(), "step_pi");
  }
};

/// What one PbrlZeroSum step reports. The shared fields (solver/solver_core.hpp) describe
/// (x_k, pi_k): f(x_k, pi_k), psi(x_k, pi_k) with pi-hat_k (the NE gap estimate),
/// F = f + lambda*psi, |G| with separate step sizes for x and pi; the schedule's part is
/// ScheduleReport's (solver/penalty_schedule.hpp): there oracle_gap sums both players' certified
/// gaps and gap_bound = psi + oracle_gap bounds the exact NE gap of pi_k.
template <typename Scalar>
struct PbrlZeroSumReport : PenaltySolverReport<Scalar> {
  Scalar best_response_value1 = Scalar(0);  ///< V^{pihat1_k, pi2_k}(rho) (sampled mode: exact diagnostic)
  Scalar best_response_value2 = Scalar(0);  ///< V^{pi1_k, pihat2_k}(rho)

  /// Every field a firmware reads (PenaltySolverReport::visit_fields).
  template <class Visitor>
  void visit(Visitor& v) const {
    this->visit_fields(v, "psi, the Nikaido-Isoda NE gap estimate", [this](Visitor& w) {
      w(best_response_value1, "best_response_value1", "V(rho) of (pi-hat1, pi2)");
      w(best_response_value2, "best_response_value2", "V(rho) of (pi1, pi-hat2)");
    });
  }
};

/// Checks PbrlZeroSum's settings: every field's domain and what relates fields (the policy sets
/// are checked by init(), against the action counts).
/// @return ok, bad_step_size or bad_setting.
template <typename Scalar>
Status validate(const PbrlZeroSumSettings<Scalar>& s) {
  if (Status st = check_domains(s); st != Status::ok) return st;
  return validate(static_cast<const PenaltySolverSettings<Scalar>&>(s));
}

/// PBRL with a zero-sum lower level (paper, eq. "projected grad update zero sum"), for a game
/// problem (game.hpp). Per step: T oracle steps for each player on its induced MDP, then a
/// projected step of z = (x, y1, y2) on f + lambda_k * psi (the Nikaido-Isoda penalty).
/// The object is the whole state (sizeof is its RAM). The stepping, the accessors and solve() are
/// PenaltySolverCore's. More: the comment atop solver/pbrl_zero_sum.hpp,
/// `docs/algorithm.md#pbrl-with-a-zero-sum-lower-level`.
/// @tparam GameProblem a class of the game problem interface (game.hpp)
/// @tparam Method how policies are evaluated (direct LU or sweeps)
/// @tparam Sources exact_and_sampled, or exact for a type without sampled mode
template <class GameProblem, EvaluationMethod Method = EvaluationMethod::direct,
          GradientSources Sources = GradientSources::exact_and_sampled>
class PbrlZeroSum
    : public PenaltySolverCore<PbrlZeroSum<GameProblem, Method, Sources>, GameProblem,
                               PbrlZeroSumSettings<typename GameProblem::Scalar>,
                               PbrlZeroSumReport<typename GameProblem::Scalar>, Method, Sources> {
  using Core = PenaltySolverCore<PbrlZeroSum, GameProblem, PbrlZeroSumSettings<typename GameProblem::Scalar>,
                                 PbrlZeroSumReport<typename GameProblem::Scalar>, Method, Sources>;
  friend Core;

 public:
  /// Whether the type carries sampled mode.
  using Core::kSampled;
  /// The problem's floating-point type.
  using typename Core::Scalar;
  /// The number of states.
  using Core::S;
  /// Player 1's (the maximizer's) number of actions.
  static constexpr int A1 = GameProblem::kActions1;
  /// Player 2's (the minimizer's) number of actions.
  static constexpr int A2 = GameProblem::kActions2;
  /// The upper-level parameters x.
  using typename Core::Params;
  /// An S x A1 matrix: y1, player 1's policy.
  using Matrix1 = StateActionMatrix<Scalar, S, A1>;
  /// An S x A2 matrix: y2, player 2's policy.
  using Matrix2 = StateActionMatrix<Scalar, S, A2>;
  /// The lower level's zero-sum Markov game.
  using GameType = MarkovGame<Scalar, S, A1, A2>;
  /// PbrlZeroSumSettings of the problem's Scalar.
  using typename Core::Settings;
  /// PbrlZeroSumReport of the problem's Scalar.
  using typename Core::Report;
  /// The policy evaluations' workspace.
  using typename Core::Workspace;

  /// Starts a solve at (x0, y1, y2): validates everything, then sets the iterates, the oracles'
  /// warm starts, the counts, the schedule and the random stream (from settings.seed).
  /// @param problem the game problem, init()'d; the solver keeps a pointer to it
  /// @param settings the settings (validate(PbrlZeroSumSettings))
  /// @param x0 the first x, in the problem's box
  /// @param y1 player 1's first parameters, in settings.policy's set
  /// @param y2 player 2's first parameters, in settings.policy's set
  /// @return ok; bad_setting or bad_step_size (settings, policy sets; sampled mode without
  ///         OracleKind::policy_gradient, without the problem's sample_vjp or in an exact-only
  ///         type); not_initialized, not_finite or out_of_bounds (x0, the problem);
  ///         not_finite or bad_policy (y1, y2). On error the solver keeps its previous state.
  Status init(const GameProblem& problem, const Settings& settings, const Params& x0, const Matrix1& y1,
              const Matrix2& y2) {
    if (Status st = validate(settings); st != Status::ok) return st;
    if (Status st = detail::validate_for_actions<Scalar, A1, A2>(settings.policy); st != Status::ok) return st;
    if (Status st = detail::validate_for_actions<Scalar, A1, A2>(settings.oracle_policy); st != Status::ok) return st;
    if (Status st = detail::validate_start(problem, x0, settings.policy, y1, y2); st != Status::ok) return st;
    if (settings.gradient == GradientMode::sampled && (!kSampled || !has_game_sample_vjp<GameProblem>::value))
      return Status::bad_setting;
    this->start(problem, settings, x0);
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
    warm1_ = warm2_ = warm_upper_ = EvaluationWarmStart<Scalar, kWarm>{};
    abandon_step();
    return Status::ok;
  }

  // step(), step_slice(), run(), solve() and the accessors of x, the counts, the settings, the
  // schedule, the workspace and the Rng are the core's (solver/solver_core.hpp).

  /// Drops the step in progress, if any: the next slice begins a new step from the last completed
  /// one (sweeps mode: with its evaluations' warm starts).
  void abandon_step() {
    part_ = StepInProgress{};
    if constexpr (Method == EvaluationMethod::sweeps) {
      warm1_.put_back(eval1_);
      warm2_.put_back(eval2_);
      warm_upper_.put_back(eval_upper_);
    }
  }

  /// Player 1's parameters y1_k.
  const Matrix1& y1() const { return y1_; }
  /// Player 2's parameters y2_k.
  const Matrix2& y2() const { return y2_; }
  const Matrix1& oracle_policy1() const { return pi1_hat_; }  ///< pi-hat1, the oracle's warm start
  /// pi-hat2, player 2's oracle's warm start.
  const Matrix2& oracle_policy2() const { return pi2_hat_; }
  /// Writes player 1's policy of the current y1 into pi.
  void policy1(Matrix1& pi) const { policy_from_parameters<Scalar, S, A1>(settings_.policy.parameterization, y1_, pi); }
  /// Writes player 2's policy of the current y2 into pi.
  void policy2(Matrix2& pi) const { policy_from_parameters<Scalar, S, A2>(settings_.policy.parameterization, y2_, pi); }

 private:
  // Checkpoints (checkpoint.hpp, through CheckpointAccess): the type tag; the state and settings
  // are the core's hooks (visit_state, visit_settings) over state_fields below.
  friend struct CheckpointAccess;
  static constexpr CheckpointTag checkpoint_tag() {
    return {CheckpointSolver::pbrl_zero_sum, sizeof(Scalar), Method, S, A1, A2, GameProblem::kParams};
  }
  // restore_checkpoint's last check, on copies decoded from the image's payload (whose numbers
  // are known finite): a state this solver could have written at iteration `sequence`. x in the
  // problem's box, y1 and y2 in the policy set, pi-hat1 and pi-hat2 policies, the schedule's
  // state consistent.
  Status validate_checkpoint_state(const unsigned char* payload, std::uint64_t sequence) const {
    return detail::validate_penalty_solver_state(*this, payload, sequence, problem_, settings_, counts_.iteration,
                                                 counts_.model_generation, schedule_, x_, detail::PlayerStateFields<Matrix1>{y1_, pi1_hat_},
                                                 detail::PlayerStateFields<Matrix2>{y2_, pi2_hat_});
  }

  template <class Solver, class Part, class R>
  friend Status run_slice(Solver&, Part&, bool, int, SliceResult&, R*);
  template <class Self, class Visitor>
  static decltype(auto) state_fields(Self& self, Visitor& v) {
    return v(self.counts_.iteration, self.counts_.environment_steps, self.counts_.model_generation, self.rng_, self.schedule_, self.x_, self.y1_, self.y2_, self.log_pi1_hat_,
             self.pi1_hat_, self.log_pi2_hat_, self.pi2_hat_, self.value1_, self.value2_,
             warm_start<Method>(self.warm1_), warm_start<Method>(self.warm2_), warm_start<Method>(self.warm_upper_));
  }

  using Core::counts_;
  using Core::grad_x_;
  using Core::problem_;
  using Core::rng_;
  using Core::schedule_;
  using Core::settings_;
  using Core::ws_;
  using Core::x_;
  using Core::x_next_;

  // The step in progress: the part its next slice runs and step()'s locals beside the shared ones
  // (StepProgress; certified: compute the certificate, in tolerance mode or when the first slice
  // had a report).
  enum class Batch : unsigned char { oracle1, oracle2, penalty };  // sampled mode's batches, in order
  struct StepInProgress : StepProgress<Scalar> {
    int player = 1;                // whose induced model, oracle or evaluation is next
    Batch batch = Batch::oracle1;  // sampled mode: the batch the next rollouts belong to
    Scalar psi = Scalar(0), gap1 = Scalar(0), gap2 = Scalar(0);
    OracleRun run1{}, run2{};
    GameType game{};
    Mdp<Scalar, S, A1> mdp1{};
    Mdp<Scalar, S, A2> mdp2{};
  };

  // pi1_'s and pi2_'s logs, formed beside them (policy_from_parameters) in an exact step with
  // softmax parameters; none for direct ones (their entries may be 0) or in a sampled step (whose
  // estimators keep per-state h of their own).
  bool keeps_logs() const {
    return settings_.policy.parameterization == Parameterization::softmax && !part_.sampled;
  }
  Matrix1* logs_of_pi1() { return keeps_logs() ? &log_pi1_ : nullptr; }
  Matrix2* logs_of_pi2() { return keeps_logs() ? &log_pi2_ : nullptr; }

  // Both players' oracle states (log pi-hat, pi-hat, the values): into the working copies the
  // oracles run on (to_working), or back from them once the step commits.
  void copy_oracle_states(bool to_working) {
    auto copy = [to_working](auto& kept, auto& working) {
      if (to_working)
        detail::copy_matrix(working, kept);
      else
        detail::copy_matrix(kept, working);
    };
    copy(log_pi1_hat_, log_pi1_next_);
    copy(pi1_hat_, pi1_next_);
    copy(value1_, value1_next_);
    copy(log_pi2_hat_, log_pi2_next_);
    copy(pi2_hat_, pi2_next_);
    copy(value2_, value2_next_);
  }

  // One part of the step, the one part_.next names; sets the part after it. done: the step is committed.
  Status run_part(int max_rollouts, Report* report, bool& done) {
    StepInProgress& p = part_;
    const GameProblem& problem = *problem_;
    switch (p.next) {
      case StepPart::begin: {
        if (Status st = this->begin_step(p); st != Status::ok) return st;
        if (Status st = problem.build(x_, model_, p.game); st != Status::ok) return st;
        policy_from_parameters<Scalar, S, A1>(settings_.policy.parameterization, y1_, pi1_, logs_of_pi1());
        policy_from_parameters<Scalar, S, A2>(settings_.policy.parameterization, y2_, pi2_, logs_of_pi2());
        // The oracles run on copies (a failure leaves the warm starts intact).
        copy_oracle_states(true);
        // The certificate: exact mode always in tolerance mode; otherwise a diagnostic for the report
        // (sampled mode: exact, model-based, no environment steps, never part of the update).
        p.certified = settings_.tolerance_mode() || report != nullptr;
        if constexpr (kSampled)
          if (p.sampled) sampled_.rng_next = rng_;
        p.next = p.sampled ? StepPart::rollouts : StepPart::lower_model;
        return Status::ok;
      }
      case StepPart::lower_model:
        // pi1_ and pi2_ (and their logs) are formed from the checked y1_, y2_ in begin.
        if (Status st = p.player == 1 ? detail::player1_mdp_formed(p.game, pi2_, induced_, p.mdp1, logs_of_pi2())
                                      : detail::player2_mdp_formed(p.game, pi1_, induced_, p.mdp2, logs_of_pi1());
            st != Status::ok)
          return st;
        p.next = p.sampled ? StepPart::evaluation : StepPart::oracle_step;
        return Status::ok;
      case StepPart::oracle_step: {
        const bool first = p.player == 1;
        const Status st = first ? oracle_step_of(p.mdp1, eval1_, grad_y1_, log_pi1_next_, pi1_next_, value1_next_, p.run1)
                                : oracle_step_of(p.mdp2, eval2_, grad_y2_, log_pi2_next_, pi2_next_, value2_next_, p.run2);
        if (st != Status::ok) return st;
        if ((first ? p.run1 : p.run2).done) p.next = StepPart::evaluation;
        return Status::ok;
      }
      case StepPart::evaluation: {
        // pi-hat's evaluation (into eval1_ / eval2_) and, if certified, its certified gap
        // (psi <= psi-hat + gap1 + gap2). Its Q only for the certificate: the penalty reads V and d.
        const bool first = p.player == 1;
        if (Status st = first ? detail::evaluate_formed_policy(p.mdp1, pi1_next_, ws_, eval1_, &log_pi1_next_, p.certified)
                              : detail::evaluate_formed_policy(p.mdp2, pi2_next_, ws_, eval2_, &log_pi2_next_, p.certified);
            st != Status::ok)
          return st;
        if (p.certified)
          (first ? p.gap1 : p.gap2) = first ? optimality_gap_bound(p.mdp1, eval1_) : optimality_gap_bound(p.mdp2, eval2_);
        p.player = 2;
        p.next = first ? StepPart::lower_model : p.sampled ? StepPart::projection : StepPart::upper;
        return Status::ok;
      }
      case StepPart::rollouts:
        return rollouts(max_rollouts);
      case StepPart::upper:
        if (Status st = problem.upper(pi1_, pi2_, model_, ws_, eval_upper_, p.f, grad_x_, grad_pi1_, grad_pi2_);
            st != Status::ok)
          return st;
        if (p.sampled) {
          add_sampled_penalty();
          p.player = 1;  // the certificate's induced models and evaluations, player 1 first
          p.next = p.certified ? StepPart::lower_model : StepPart::projection;
        } else {
          p.next = StepPart::penalty;
        }
        return Status::ok;
      case StepPart::penalty:  // psi and its gradient (nikaido_isoda_penalty)
        p.psi = nikaido_isoda_penalty(problem, model_, p.game, PolicyY{pi1_, logs_of_pi1()},
                                      PolicyY{pi2_, logs_of_pi2()}, PolicyHat{pi1_next_, eval1_, &log_pi1_next_},
                                      PolicyHat{pi2_next_, eval2_, &log_pi2_next_}, p.lambda, ni_scratch_, grad_x_,
                                      grad_pi1_, grad_pi2_);
        // A natural step reads each agent's rows over the occupancy its psi term weighs them by:
        // pi1's against pi2-hat (eval2_), pi2's against pi1-hat (eval1_), on M(x_k).
        lower_step_direction<Scalar, S, A1>(settings_, pi1_, grad_pi1_, eval2_.occupancy, grad_y1_);
        lower_step_direction<Scalar, S, A2>(settings_, pi2_, grad_pi2_, eval1_.occupancy, grad_y2_);
        p.next = StepPart::projection;
        return Status::ok;
      case StepPart::projection:
        if (Status st = project_and_commit(report); st != Status::ok) return st;
        done = true;
        return Status::ok;
    }
    return Status::bad_setting;  // unreachable: every part is handled
  }

  // 3. The projected step on Z = X x Y1 x Y2, then the core's checks, commit and report (commit_step).
  Status project_and_commit(Report* report) {
    const StepInProgress& p = part_;
    StepNumbers<Scalar> n;
    if (p.sampled) {
      n.oracle.steps = schedule_.inner_steps_max(settings_);  // no certificate from samples: converged false
    } else {
      n.oracle.steps = p.run1.result.steps > p.run2.result.steps ? p.run1.result.steps : p.run2.result.steps;
      n.oracle.converged = p.run1.result.converged && p.run2.result.converged;
    }
    n.oracle_gap = p.certified ? p.gap1 + p.gap2 : Scalar(0);
    // psi with pi-hat, from the model, plus both players' certified gaps, rounded up.
    n.gap_bound = nikaido_isoda_gap_bound(eval1_.value_rho, eval2_.value_rho, p.certified ? p.gap1 : Scalar(0),
                                          p.certified ? p.gap2 : Scalar(0));
    n.alpha_x = schedule_.step(settings_, settings_.step_x);
    const Scalar alpha_pi = schedule_.step(settings_, settings_.step_pi);
    const Scalar y1_part = lower_step<Scalar, S, A1>(settings_, y1_, alpha_pi, pi1_, grad_pi1_, grad_y1_, y1_next_);
    const Scalar y2_part = lower_step<Scalar, S, A2>(settings_, y2_, alpha_pi, pi2_, grad_pi2_, grad_y2_, y2_next_);
    n.squared_gradient_norm = parameter_step(*problem_, x_, n.alpha_x, grad_x_, x_next_) + y1_part + y2_part;
    n.penalty = p.psi;
    // Exact mode: the certified bound psi + oracle gaps; sampled mode: the sampled psi.
    n.measured_gap = p.sampled ? p.psi : n.gap_bound;
    const Status st = this->commit_step(p, n, report, [&] {
      detail::copy_matrix(y1_, y1_next_);
      detail::copy_matrix(y2_, y2_next_);
      copy_oracle_states(false);
      if constexpr (kSampled)
        if (p.sampled) rng_ = sampled_.rng_next;
      if constexpr (Method == EvaluationMethod::sweeps) {
        warm1_.keep(eval1_);
        warm2_.keep(eval2_);
        warm_upper_.keep(eval_upper_);
      }
    });
    if (st == Status::ok && report != nullptr) {
      report->best_response_value1 = eval1_.value_rho;
      report->best_response_value2 = -eval2_.value_rho;
    }
    return st;
  }

  // One exact oracle step of one player on its induced MDP m; scratch is the oracle's (grad_y1_
  // or grad_y2_, written only after the oracles). Each player has half the oracle target. The
  // warm start pi-hat was checked by init(), the last oracle run or restore_checkpoint().
  template <int A>
  Status oracle_step_of(const Mdp<Scalar, S, A>& m, Evaluation<Scalar, S, A>& eval, StateActionMatrix<Scalar, S, A>& scratch,
                        StateActionMatrix<Scalar, S, A>& log_pi_next, StateActionMatrix<Scalar, S, A>& pi_next,
                        StateVector<Scalar, S>& value_next, OracleRun& run) {
    return detail::oracle_step<false>(this->oracle_spec(schedule_.oracle_target(settings_) / Scalar(2)), m, ws_,
                                      scratch, {eval, log_pi_next, pi_next, value_next}, run);
  }

  // Sampled mode's rollouts, at most max_rollouts of one batch: T sampled policy-gradient steps
  // of player 1 (ascending V against pi2), T of player 2 (descending it against pi1), then the
  // two batches of the sampled psi. grad_y1_ and grad_y2_ carry the players' sampled gradients
  // until grad F overwrites them.
  Status rollouts(int max_rollouts) {
    if constexpr (!kSampled || !has_game_sample_vjp<GameProblem>::value) {
      (void)max_rollouts;
      return Status::bad_setting;  // init() refuses this already
    } else {
      StepInProgress& p = part_;
      const SamplingSettings& sampling = settings_.sampling;
      const int T = schedule_.inner_steps_max(settings_);
      if (p.batch != Batch::penalty && p.batch_step >= T) {  // this player's oracle is done (or T = 0)
        p.batch = p.batch == Batch::oracle1 ? Batch::oracle2 : Batch::penalty;
        p.batch_step = 0;
        if (p.batch != Batch::penalty && p.batch_step >= T) p.batch = Batch::penalty;
      }
      if (p.batch == Batch::penalty) return penalty_rollouts(max_rollouts);
      const bool first = p.batch == Batch::oracle1;
      const PolicySet<Scalar>& set = settings_.oracle_policy;
      Matrix1* grad1 = first ? &grad_y1_ : nullptr;
      Matrix2* grad2 = first ? nullptr : &grad_y2_;
      const Matrix1& pi1 = first ? pi1_next_ : pi1_;
      const Matrix2& pi2 = first ? pi2_ : pi2_next_;
      auto& batch = sampled_.oracle;
      if (!p.batch_started) {
        if (Status st = batch.check(p.game, set.parameterization, pi1, pi2, sampling); st != Status::ok) return st;
        batch.start(grad1, grad2);
        p.batch_started = true;
      }
      const int left = sampling.batch - batch.done;
      batch.rollouts(p.game, set.parameterization, pi1, pi2, sampling, left < max_rollouts ? left : max_rollouts,
                     sampled_.rng_next, sampled_.trajectory, grad1, grad2);
      if (batch.done < sampling.batch) return Status::ok;
      Scalar value(0);
      if (Status st = batch.finish(sampling, grad1, grad2, value); st != Status::ok) return st;
      p.steps += batch_steps(sampling);
      p.batch_started = false;
      ++p.batch_step;
      const Scalar eta = settings_.oracle_step;
      if (first) return policy_ascent_update<Scalar, S, A1>(set, eta, grad_y1_, {log_pi1_next_, pi1_next_});
      grad_y2_ = -grad_y2_;
      return policy_ascent_update<Scalar, S, A2>(set, eta, grad_y2_, {log_pi2_next_, pi2_next_});
    }
  }

  // The sampled psi's two batches (sampled_nikaido_isoda_penalty), then f.
  Status penalty_rollouts(int max_rollouts) {
    if constexpr (kSampled && has_game_sample_vjp<GameProblem>::value) {
      StepInProgress& p = part_;
      const SamplingSettings& sampling = settings_.sampling;
      const Parameterization param = settings_.policy.parameterization;
      auto& batches = sampled_.batches;
      if (!p.batch_started) {
        if (Status st = batches.check(p.game, param, pi1_, pi2_, pi1_next_, pi2_next_, sampling);
            st != Status::ok)
          return st;
        batches.start(sampled_.rng_next, sampled_.penalty);
        p.batch_started = true;
      }
      const int left = batches.left(sampling);
      batches.rollouts(*problem_, model_, p.game, param, pi1_, pi2_, pi1_next_, pi2_next_, sampling,
                       left < max_rollouts ? left : max_rollouts, sampled_.trajectory, sampled_.penalty);
      if (batches.done2 < sampling.batch) return Status::ok;
      if (Status st = batches.finish(sampling, sampled_.penalty, sampled_.rng_next); st != Status::ok) return st;
      p.steps += 2 * batch_steps(sampling);
      p.batch_started = false;
      p.next = StepPart::upper;
    }
    (void)max_rollouts;
    return Status::ok;
  }

  // Sampled mode, after f: grad F = grad f + lambda * (the sampled psi's gradients).
  void add_sampled_penalty() {
    if constexpr (kSampled && has_game_sample_vjp<GameProblem>::value) {
      const Scalar lambda = part_.lambda;
      chain_policy_gradient<Scalar, S, A1>(settings_.policy.parameterization, pi1_, grad_pi1_, grad_y1_);
      chain_policy_gradient<Scalar, S, A2>(settings_.policy.parameterization, pi2_, grad_pi2_, grad_y2_);
      grad_x_ += lambda * sampled_.penalty.grad_x;
      grad_y1_ += lambda * sampled_.penalty.grad_y1;
      grad_y2_ += lambda * sampled_.penalty.grad_y2;
      part_.psi = sampled_.penalty.value;
    }
  }

  // Iterates and the oracles' warm starts (x is the core's).
  Matrix1 y1_ = Matrix1::Zero(), log_pi1_hat_ = Matrix1::Zero(), pi1_hat_ = Matrix1::Zero();
  Matrix2 y2_ = Matrix2::Zero(), log_pi2_hat_ = Matrix2::Zero(), pi2_hat_ = Matrix2::Zero();
  StateVector<Scalar, S> value1_ = StateVector<Scalar, S>::Zero(), value2_ = StateVector<Scalar, S>::Zero();
  // Scratch of one step.
  Matrix1 y1_next_ = Matrix1::Zero(), log_pi1_next_ = Matrix1::Zero(), pi1_next_ = Matrix1::Zero();
  Matrix1 pi1_ = Matrix1::Zero(), log_pi1_ = Matrix1::Zero(), grad_pi1_ = Matrix1::Zero(), grad_y1_ = Matrix1::Zero();
  Matrix2 y2_next_ = Matrix2::Zero(), log_pi2_next_ = Matrix2::Zero(), pi2_next_ = Matrix2::Zero();
  Matrix2 pi2_ = Matrix2::Zero(), log_pi2_ = Matrix2::Zero(), grad_pi2_ = Matrix2::Zero(), grad_y2_ = Matrix2::Zero();
  StateVector<Scalar, S> value1_next_ = StateVector<Scalar, S>::Zero();
  StateVector<Scalar, S> value2_next_ = StateVector<Scalar, S>::Zero();
  SharedInducedModel<Scalar, S, A1, A2> induced_{};  // player 1's MDP given pi2, then player 2's given pi1
  NikaidoIsodaScratch<Scalar, S, A1, A2> ni_scratch_{};
  typename GameProblem::Model model_{};
  Evaluation<Scalar, S, A1> eval1_{};
  Evaluation<Scalar, S, A2> eval2_{};
  Evaluation<Scalar, S, A1 * A2> eval_upper_{};
  // Sweeps mode: the evaluations' warm starts of the last completed step (checkpoint.hpp).
  static constexpr int kWarm = Method == EvaluationMethod::sweeps ? S : 0;
  EvaluationWarmStart<Scalar, kWarm> warm1_{}, warm2_{}, warm_upper_{};
  // Sampled mode's scratch (none in an exact-only type); the random stream is the core's.
  struct SampledState {
    Rng rng_next{};
    GameTrajectory<Scalar, kMaxHorizon> trajectory{};
    SampledNikaidoIsoda<GameProblem> penalty{};
    detail::GamePolicyGradientBatch<Scalar, S, A1, A2, kMaxHorizon> oracle{};
    detail::NikaidoIsodaBatches<GameProblem, kMaxHorizon> batches{};
  };
  SampledScratch<Sources, SampledState> sampled_{};
  StepInProgress part_{};
};

}  // namespace pbrl
