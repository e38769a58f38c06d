// The paper's Figure 1: the Stackelberg Markov game (Section "Simulation / Stackelberg Markov
// game", appendix "Additional experiment details").
//
// Random games (|S| = 100, |A_l| = |A_f| = 5, rewards uniform in [0, 1] with entries < 0.7 set to
// 0, transition entries uniform then normalized) are solved by
//   PBRL-value   (lambda 2, T 1),
//   PBRL-Bellman (lambda 7, T 10),
//   independent policy gradient,
// all with learning rate 0.1 and softmax policies from x = 0, y = 0 (both players uniform). The
// program records, against environment steps, the leader's value V_l^{pi_x,pi_y}(rho) with the
// solver's current follower y (what the paper plots), the leader's value V_l^{pi_x,pi*(x)}(rho)
// when the follower plays its exact regularized best response pi*(x) (the bilevel answer: what a
// leader meets against a follower that really best-responds; Stackelberg::value_at_best_response)
// and the follower's optimality gap V_f^{pi_x,pi*(x)}(rho) - V_f^{pi_x,pi_y}(rho), all measured
// exactly (policy evaluation and soft value iteration on the model), averaged over the games.
//
// Environment steps. --gradient sampled (the paper's setting): the lower level learns from
// rollouts (B = 16 trajectories of H = 5 steps per estimate) and the count is the solvers' own:
// (T + 2)*B*H per PBRL step, B*H per independent-PG step (its follower gradient is sampled, its
// leader gradient exact, as PBRL's upper level). --gradient exact: every gradient is model-based
// and the axis counts the environment steps the same iterations would take in sampled mode.
// Each method runs until it has used the budget, so the methods compare at equal samples. In
// tolerance mode (--gap-tolerance) PBRL's oracle takes T_k steps at iteration k and the count is
// (T_k + 2)*B*H.
// With exact gradients tolerance mode solves: each PBRL run steps until solve()'s verdict
// (docs/solving.md) or --max-steps, with a PMD oracle of step 1 unless --oracle says otherwise;
// its last checkpoint is taken there, and the outcome, steps and wall time print per game.
//
// The hyperparameters are options (--lambda-start, --inner-steps, ..., --gap-tolerance); their defaults
// are the paper's. --sweep-lambda L1,L2,... runs the PBRL methods at each lambda in both gradient
// modes and once in tolerance mode, and writes the final gap and values against lambda.
//
// Output: DIR/figure1_stackelberg.csv and DIR/figure1_stackelberg.png (gnuplot), a table and
// `summary,figure1,<method>,<metric>,<value>` lines on stdout, progress on stderr; with
// --sweep-lambda DIR/figure1_lambda_sweep.csv and .png instead.

#include "pbrl/pbrl.hpp"

#include "experiment_driver.hpp"
#include "experiment_settings.hpp"
#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace cfg = settings::stackelberg;
using experiment::check;
constexpr int AL = cfg::kLeaderActions;
constexpr int AF = cfg::kFollowerActions;
using Real = double;

enum class Method { pbrl_value, pbrl_bellman, independent_pg };
constexpr Method kMethods[] = {Method::pbrl_value, Method::pbrl_bellman, Method::independent_pg};
constexpr int kMethodCount = 3;
const std::vector<const char*> kNames = {"pbrl_value", "pbrl_bellman", "independent_pg"};

// The command line: a figure's options, and the number of states.
struct Config : experiment::FigureConfig<kMethodCount> {
  int states = cfg::kStates;
};
const experiment::Program kProgram = {
    "games", "sampled", kNames, "--oracle pmd needs --gradient exact (sampled mode learns from rollouts by policy gradient)"};
const experiment::FigureDefaults kDefaults = {cfg::kGames, cfg::kQuickGames, cfg::kBudget, cfg::kQuickBudget,
                                             cfg::kPoints};

const char* name(Method m) { return kNames[static_cast<std::size_t>(m)]; }

bool is_pbrl(Method m) { return m != Method::independent_pg; }

// The settings of a PBRL method: the paper's, then the command line's hyperparameters.
pbrl::PbrlSettings<Real> pbrl_settings(const Config& c, Method m, std::uint32_t seed) {
  const bool value = m == Method::pbrl_value;
  pbrl::PbrlSettings<Real> s;
  s.penalty_kind = value ? pbrl::PenaltyKind::value : pbrl::PenaltyKind::bellman;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = Real(cfg::kLogitBound);
  s.oracle = pbrl::OracleKind::policy_gradient;  // paper: T policy-gradient steps per iteration
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle_policy.logit_bound = Real(cfg::kLogitBound);
  s.inner_steps = value ? cfg::kValueInner : cfg::kBellmanInner;
  s.oracle_step = Real(cfg::kOracleStep);
  s.step_x = s.step_y = Real(cfg::kStep);
  s.lambda_start = s.lambda_final = Real(value ? cfg::kValueLambda : cfg::kBellmanLambda);
  c.hp.apply(s);
  if (c.hp.step) s.step_y = Real(*c.hp.step);
  c.hp.choose_solve_oracle(s, c.sampled);
  experiment::set_sampling(s, c.sampled, cfg::kBatch, seed);
  return s;
}

pbrl::IndependentPgSettings<Real> baseline_settings(const Config& c, std::uint32_t seed) {
  pbrl::IndependentPgSettings<Real> s;
  s.step_leader = s.step_follower = Real(c.hp.step ? *c.hp.step : cfg::kStep);
  s.follower_logit_bound = Real(cfg::kLogitBound);
  experiment::set_sampling(s, c.sampled, cfg::kBatch, seed);
  return s;
}

// Legend: the method with the lambda and T it used.
std::string label(const Config& c, Method m) {
  if (!is_pbrl(m)) return "independent PG";
  return experiment::pbrl_label(m == Method::pbrl_value ? "PBRL-value" : "PBRL-Bellman", pbrl_settings(c, m, 1));
}

const long kBH = static_cast<long>(cfg::kBatch) * settings::kHorizon;

// Environment steps of one iteration in sampled mode (and on the exact mode's axis): PBRL's oracle
// took `inner` steps.
long steps_of_iteration(Method m, std::int64_t inner) {
  return is_pbrl(m) ? (static_cast<long>(inner) + 2) * kBH : kBH;
}

// The game's arrays (on a device: flash). Heap here: 100 states are 2 MB of transitions.
template <int S>
struct GameArrays {
  Real leader_reward[S * AL * AF];
  Real follower_reward[S * AL * AF];
  Real transition[S * AL * AF * S];
  Real initial[S];

  explicit GameArrays(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, leader_reward, S * AL * AF, Real(cfg::kRewardSparsity));
    pbrl::random_reward(rng, follower_reward, S * AL * AF, Real(cfg::kRewardSparsity));
    pbrl::random_transition(rng, transition, S * AL * AF, S);
    for (int s = 0; s < S; ++s) initial[s] = Real(1) / Real(S);  // choice: rho uniform
  }
};

using Point = experiment::FigurePoint;  // value_current: V_l(pi_x, pi_y); value: V_l(pi_x, pi*(x))
using Results = experiment::FigureTotals<kMethodCount>;
using GameResult = Results::Record;

template <int S>
class Runner {
 public:
  using Game = pbrl::Stackelberg<Real, S, AL, AF>;
  using Params = typename Game::Params;
  using Matrix = pbrl::StateActionMatrix<Real, S, AF>;
  using Solver = pbrl::Pbrl<Game>;
  using Baseline = pbrl::IndependentPolicyGradient<Game>;

  explicit Runner(const Config& c) : c_(c) {}

  // Runs every selected method on game g; false (after a message) on a library error.
  bool run_instance(long g, experiment::Progress& progress, GameResult& result) {
    arrays_ = std::make_unique<GameArrays<S>>(experiment::instance_seed(c_, g));
    typename Game::Data data;
    data.leader_reward = arrays_->leader_reward;
    data.follower_reward = arrays_->follower_reward;
    data.transition = arrays_->transition;
    data.initial = arrays_->initial;
    data.discount = Real(settings::kDiscount);
    data.leader = {pbrl::RegularizerKind::entropy, Real(cfg::kLeaderTau), nullptr};
    data.follower = {pbrl::RegularizerKind::entropy, Real(cfg::kFollowerTau), nullptr};
    data.logit_bound = Real(cfg::kLogitBound);
    if (!check(game_->init(data), "game init")) return false;
    return experiment::run_methods(c_.run, result, [&](int mi) {
      const Method m = kMethods[mi];
      const std::uint32_t seed = experiment::instance_seed(c_, g) * 4u + static_cast<std::uint32_t>(mi);
      return is_pbrl(m) ? run_pbrl(mi, m, seed, progress, result) : run_baseline(mi, seed, progress, result);
    });
  }

 private:
  // Exact metrics of (x, pi_y).
  bool measure(const Params& x, const Matrix& pi_y, Point& p, GameResult& result) {
    Real leader(0), gap(0);
    if (!check(game_->leader_value(x, pi_y, *model_, *ws_, *eval_, leader), "leader value")) return false;
    if (!check(game_->follower_gap(x, pi_y, *model_, *ws_, *eval_, *optimum_, gap), "follower gap")) return false;
    pbrl::BestResponseValue<Real> honest;
    if (!check(game_->value_at_best_response(x, *best_response_, honest), "leader value at the best response"))
      return false;
    result.certify(honest);
    p.value_current = leader;
    p.value = honest.value;
    p.gap = gap;
    return true;
  }

  // Steps `solver` (Pbrl or IndependentPolicyGradient) through the checkpoints
  // (experiment::step_checkpoints). Independent PG steps without a report: its follower gap (soft
  // value iteration on M(x_k)) is diagnostics only; the checkpoints measure what the figure shows.
  template <class Run, class Report>
  bool run_checkpoints(int mi, Run& solver, Report& report, experiment::Progress& progress, GameResult& result) {
    const Method m = kMethods[mi];
    optimum_->value.setZero();
    best_response_->optimum.value.setZero();
    return experiment::step_checkpoints<Real>(
        c_, solver, report, result.solve[mi], result.tolerance_met[mi], c_.hp.solve_cap(cfg::kSolveSteps), progress,
        "step", name(m), [&] { return solver.step(); },
        [&](std::int64_t inner) { return steps_of_iteration(m, inner); },
        experiment::figure_checkpoint(result.points[mi], [&](Point& p) {
          solver.policy(*pi_);
          return measure(solver.x(), *pi_, p, result);
        }));
  }

  bool run_pbrl(int mi, Method m, std::uint32_t seed, experiment::Progress& progress, GameResult& result) {
    if (!check(solver_->init(*game_, pbrl_settings(c_, m, seed), Params::Zero(), Matrix::Zero()), "PBRL init"))
      return false;
    typename Solver::Report report;
    return run_checkpoints(mi, *solver_, report, progress, result);
  }

  bool run_baseline(int mi, std::uint32_t seed, experiment::Progress& progress, GameResult& result) {
    if (!check(baseline_->init(*game_, baseline_settings(c_, seed), Params::Zero(), Matrix::Zero()),
               "independent PG init"))
      return false;
    typename Baseline::Report report;
    return run_checkpoints(mi, *baseline_, report, progress, result);
  }

  const Config& c_;
  std::unique_ptr<GameArrays<S>> arrays_;
  std::unique_ptr<Game> game_ = std::make_unique<Game>();
  std::unique_ptr<Solver> solver_ = std::make_unique<Solver>();
  std::unique_ptr<Baseline> baseline_ = std::make_unique<Baseline>();
  std::unique_ptr<typename Game::Model> model_ = std::make_unique<typename Game::Model>();
  std::unique_ptr<pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct>> ws_ =
      std::make_unique<pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct>>();
  std::unique_ptr<pbrl::Evaluation<Real, S, AF>> eval_ = std::make_unique<pbrl::Evaluation<Real, S, AF>>();
  std::unique_ptr<typename Game::FollowerOptimum> optimum_ = std::make_unique<typename Game::FollowerOptimum>();
  // The honest metric's own M(x), soft value iteration and evaluations (default settings).
  std::unique_ptr<typename Game::BilevelValueWorkspace> best_response_ =
      std::make_unique<typename Game::BilevelValueWorkspace>();
  std::unique_ptr<Matrix> pi_ = std::make_unique<Matrix>();
};

// Every game on c.jobs threads (one Runner each), merged in game order.
template <int S>
bool run_games(const Config& c, Results& results, double& seconds) {
  return experiment::run_figure_instances<Runner<S>>(c, "figure 1 (iterations, all games and methods)",
                                                     "figure 1 (environment steps, all games and methods)", results,
                                                     seconds);
}

// The settings block, written as the CSV's comment header and printed with the results: every value
// the run used.
std::string settings_text(const Config& c) {
  std::string methods;
  for (int mi = 0; mi < kMethodCount; ++mi)
    if (c.run[mi] && is_pbrl(kMethods[mi]))
      methods += std::string(name(kMethods[mi])) + ": " + experiment::describe(pbrl_settings(c, kMethods[mi], 1)) +
                 ", step_y " + std::to_string(pbrl_settings(c, kMethods[mi], 1).step_y) + "\n";
  char b[6144];
  std::snprintf(
      b, sizeof b,
      "Figure 1, Stackelberg Markov game (paper: Section \"Simulation / Stackelberg Markov game\")\n"
      "games: %ld random games (%s), seeds %ld*1000 + g, g = 0..%ld\n"
      "|S| = %d (%s), |A_l| = %d, |A_f| = %d (paper)\n"
      "rewards r_l, r_f: uniform [0,1], entries < %.2f set to 0 (paper); transitions uniform then normalized (paper)\n"
      "discount gamma = %.2f (choice); rho uniform (choice)\n"
      "follower entropy tau_f = %.3g (choice); leader tau_l = %.3g (choice: scored unregularized)\n"
      "softmax policies for both players, logits in [-%.3g, %.3g] (choice); start x = 0, y = 0 (uniform policies)\n"
      "paper settings: learning rate %.3g for x and y of every method; PBRL-value lambda %.3g, T %d; PBRL-Bellman "
      "lambda %.3g, T %d; oracle: T policy-gradient steps (paper) of step %.3g (choice), softmax\n"
      "%s"
      "independent PG: simultaneous ascent, each player on its own value (paper), learning rate %.3g; the follower's "
      "gradient sampled in sampled mode, the leader's exact (as PBRL's upper level)\n"
      "gradient mode: %s\n"
      "Monte Carlo: trajectory length H = %d, batch B = %d (paper)\n"
      "environment steps per iteration: PBRL (T_k+2)*B*H with T_k the oracle steps of iteration k, independent PG "
      "B*H = %ld\n"
      "%s"
      "%s; %ld checkpoints\n"
      "metrics (exact, model-based): follower gap V_f^{pi_x,pi*(x)}(rho) - V_f^{pi_x,pi_y}(rho) (soft value "
      "iteration)\n"
      "leader value, two of them: leader_value_current_follower = V_l^{pi_x,pi_y}(rho) with the solver's current "
      "follower y (the paper's Figure 1 plots this one); leader_value_best_response = V_l^{pi_x,pi*(x)}(rho) with "
      "the follower's exact regularized best response on M(x) (soft value iteration, certified follower gap "
      "<= %.1e), what the leader gets against a follower that really best-responds\n"
      "lambda: PBRL's penalty constant at the checkpoint (tolerance mode: as adapted)\n"
      "mean and standard error of the mean over games\n",
      c.instances, c.quick ? "--quick" : "paper: 10", c.seed, c.instances - 1, c.states,
      c.states == cfg::kStates ? "paper" : "--quick, choice", AL, AF, cfg::kRewardSparsity, settings::kDiscount,
      cfg::kFollowerTau, cfg::kLeaderTau, cfg::kLogitBound, cfg::kLogitBound, cfg::kStep, cfg::kValueLambda,
      cfg::kValueInner, cfg::kBellmanLambda, cfg::kBellmanInner, cfg::kOracleStep, methods.c_str(),
      c.hp.step ? *c.hp.step : cfg::kStep,
      c.sampled ? "sampled (lower level from rollouts; PBRL's upper level and independent PG's leader gradient exact)"
                : "exact (every gradient model-based)",
      settings::kHorizon, cfg::kBatch, kBH,
      c.sampled ? "x axis: environment steps counted by the solvers\n"
                : "x axis: environment steps the same iterations would take in sampled mode (none are taken)\n",
      (c.hp.iterations ? "run length: " + std::to_string(*c.hp.iterations) + " iterations per method (--iterations)"
                       : "budget: " + std::to_string(c.budget) + " environment steps per run (" +
                             (c.quick ? "--quick, choice" : "choice") + ")")
          .c_str(),
      c.points, static_cast<double>(pbrl::BestResponseSettings<Real>{}.tolerance));
  return b;
}

const experiment::Figure kFigure = {
    "figure1", "figure1_stackelberg", "figure1_lambda_sweep", kNames, {true, true, false},
    "leader_value_current_follower", "leader_value_best_response", "follower_gap", "game", "games", "follower gap",
    false, 42, false, 8, {"V_l(y) start", "V_l(y) end", "V_l(pi*) end", "gap end"},
    "(V_l(y): leader value with the current follower y, the paper's metric; V_l(pi*): with the follower's\n"
    " exact best response pi*(x), %.5f at the start; follower gap at the start: %.5f; +- is the standard\n"
    " error over %ld games; wall s: CPU-bound wall time of the method summed over games)\n",
    "best responses", "follower gap", false, "V_{l}(ρ)", "gap",
    {"leader value, current follower: V_{l}^{π_x,π_y}(ρ) (the paper's metric)",
     "leader value, follower best-responds: V_{l}^{π_x,π^*(x)}(ρ)",
     "follower gap V_{f}^{π_x,π^*(x)}(ρ) - V_{f}^{π_x,π_y}(ρ)"},
    "follower gap", "V_{l}^{π_x,π^*(x)}(ρ)"};

template <int S>
int run(Config c) {
  c.states = S;
  if (!experiment::make_directories(c.out)) return 1;
  // --sweep-lambda: the PBRL methods at each fixed lambda, exact and sampled, then tolerance mode.
  if (!c.sweep.empty())
    return experiment::run_figure_sweep<kMethodCount>(
        kFigure, c, "Stackelberg Markov game", S, [](int mi) { return is_pbrl(kMethods[mi]); }, settings_text,
        [&](double tolerance, bool pmd) {
          return "sweep: lambda in {" + experiment::lambda_list(c.sweep, "%f") +
                 "}, exact and sampled; tolerance mode at epsilon " + std::to_string(tolerance) +
                 (pmd ? "\nthe settings above are exact mode's; sampled runs use the paper's policy-gradient oracle "
                        "(step " + std::to_string(cfg::kOracleStep) + ")\n"
                      : "\n");
        },
        run_games<S>, [](int mi) { return mi == 0 ? "PBRL-value" : "PBRL-Bellman"; },
        [](int mi) { return mi == 0 ? cfg::kValueLambda : cfg::kBellmanLambda; });

  return experiment::run_figure<kMethodCount>(
      kFigure, c, run_games<S>, settings_text, [&](int mi) { return label(c, kMethods[mi]); },
      "Stackelberg Markov game", c.states, "games");
}

std::string usage() {
  char head[1024], exact_steps[256];
  std::snprintf(
      head, sizeof head,
      "usage: stackelberg_experiment [options]\n"
      "The paper's Figure 1: leader value and follower optimality gap against environment steps for\n"
      "PBRL-value (lambda %g, T %d), PBRL-Bellman (lambda %g, T %d) and independent policy gradient on\n"
      "random Stackelberg Markov games (settings in examples/experiment_settings.hpp). The leader's value\n"
      "is reported twice: with the solver's current follower y (the paper's metric) and with the\n"
      "follower's exact regularized best response pi*(x) (the bilevel answer).\n\n",
      cfg::kValueLambda, cfg::kValueInner, cfg::kBellmanLambda, cfg::kBellmanInner);
  std::snprintf(exact_steps, sizeof exact_steps,
                "(T_k+2)*B*H per PBRL\n"
                "                            iteration, B*H = %ld per independent-PG one.\n",
                kBH);
  return head +
         experiment::figure_gradient_usage("the lower level learns", cfg::kBatch, settings::kHorizon, exact_steps) +
         experiment::figure_run_usage(kProgram, kFigure, kDefaults) +
         "Hyperparameters (PBRL-value and PBRL-Bellman alike; --step also independent PG's):\n" +
         experiment::Hyperparameters::usage() +
         "  --sweep-lambda L1,L2,...  the PBRL methods at each fixed lambda, exact and sampled, and in\n"
         "                            tolerance mode (--gap-tolerance, default 0.01): final gap and leader\n"
         "                            values against lambda in DIR/figure1_lambda_sweep.csv and .png\n" +
         experiment::figure_output_usage(kFigure, kDefaults,
                                         std::to_string(cfg::kQuickStates) + " states, " +
                                             std::to_string(kDefaults.quick_instances) + " games");
}

}  // namespace

int main(int argc, char** argv) {
  experiment::Options opt(argc, argv, usage());
  Config c;
  const experiment::OptionTexts texts = experiment::read_figure_options(opt, c, kProgram, kDefaults);
  c.states = c.quick ? cfg::kQuickStates : cfg::kStates;
  // A sweep checks each of its runs (its sampled runs use the paper's oracle).
  const int code = experiment::check_figure_options(opt, c, texts, kProgram, [](const Config& run) -> std::string {
    for (Method m : {Method::pbrl_value, Method::pbrl_bellman})
      if (pbrl::validate(static_cast<const pbrl::PenaltySolverSettings<Real>&>(pbrl_settings(run, m, 1))) !=
          pbrl::Status::ok)
        return "these hyperparameters are not valid PBRL settings (see --help and solver/settings.hpp)";
    return {};
  });
  if (code >= 0) return code;
  return c.quick ? run<cfg::kQuickStates>(c) : run<cfg::kStates>(c);
}
