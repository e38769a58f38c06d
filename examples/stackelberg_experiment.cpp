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
// The hyperparameters are options (--lambda, --inner-steps, ..., --gap-tolerance); their defaults
// are the paper's. --sweep-lambda L1,L2,... runs the PBRL methods at each lambda in both gradient
// modes and once in tolerance mode, and writes the final gap and values against lambda.
//
// Output: DIR/figure1_stackelberg.csv and DIR/figure1_stackelberg.png (gnuplot), a table and
// `summary,figure1,<method>,<metric>,<value>` lines on stdout, progress on stderr; with
// --sweep-lambda DIR/figure1_lambda_sweep.csv and .png instead.

#include "pbrl/pbrl.hpp"

#include "experiment.hpp"
#include "experiment_settings.hpp"
#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace cfg = settings::stackelberg;
constexpr int AL = cfg::kLeaderActions;
constexpr int AF = cfg::kFollowerActions;
using Real = double;

enum class Method { pbrl_value, pbrl_bellman, independent_pg };
constexpr Method kMethods[] = {Method::pbrl_value, Method::pbrl_bellman, Method::independent_pg};
constexpr int kMethodCount = 3;

struct Config {
  int states = cfg::kStates;
  long games = cfg::kGames;
  long seed = 1;
  long budget = cfg::kBudget;
  long points = cfg::kPoints;
  long jobs = 1;
  std::string out = "results";
  bool quiet = false;
  bool quick = false;
  bool sampled = true;
  experiment::Hyperparameters hp;
  bool run[kMethodCount] = {true, true, true};  // which methods run (a sweep runs the PBRL ones)
  std::vector<double> sweep;                    // --sweep-lambda
};

const char* name(Method m) {
  switch (m) {
    case Method::pbrl_value: return "pbrl_value";
    case Method::pbrl_bellman: return "pbrl_bellman";
    case Method::independent_pg: return "independent_pg";
  }
  return "?";
}

bool is_pbrl(Method m) { return m != Method::independent_pg; }

// The settings of a PBRL method: the paper's, then the command line's hyperparameters.
pbrl::PbrlSettings<Real> pbrl_settings(const Config& c, Method m, std::uint32_t seed) {
  const bool value = m == Method::pbrl_value;
  pbrl::PbrlSettings<Real> s;
  s.penalty = value ? pbrl::PenaltyKind::value : pbrl::PenaltyKind::bellman;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = Real(cfg::kLogitBound);
  s.oracle = pbrl::OracleKind::policy_gradient;  // paper: T policy-gradient steps per iteration
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle_policy.logit_bound = Real(cfg::kLogitBound);
  s.inner_steps = value ? cfg::kValueInner : cfg::kBellmanInner;
  s.oracle_step = Real(cfg::kOracleStep);
  s.step_x = s.step_y = Real(cfg::kStep);
  s.penalty_start = s.penalty_final = Real(value ? cfg::kValueLambda : cfg::kBellmanLambda);
  c.hp.apply(s);
  if (c.hp.step) s.step_y = Real(*c.hp.step);
  s.gradient = c.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  c.hp.choose_solve_oracle(s, c.sampled);
  s.sampling.horizon = settings::kHorizon;
  s.sampling.batch = cfg::kBatch;
  s.seed = seed;
  return s;
}

pbrl::IndependentPgSettings<Real> baseline_settings(const Config& c, std::uint32_t seed) {
  pbrl::IndependentPgSettings<Real> s;
  s.step_leader = s.step_follower = Real(c.hp.step ? *c.hp.step : cfg::kStep);
  s.follower_logit_bound = Real(cfg::kLogitBound);
  s.gradient = c.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  s.sampling.horizon = settings::kHorizon;
  s.sampling.batch = cfg::kBatch;
  s.seed = seed;
  return s;
}

// Legend: the method with the lambda and T it used.
std::string label(const Config& c, Method m) {
  if (!is_pbrl(m)) return "independent PG";
  const auto s = pbrl_settings(c, m, 1);
  char b[160];
  const char* what = m == Method::pbrl_value ? "PBRL-value" : "PBRL-Bellman";
  if (s.tolerance_mode())
    std::snprintf(b, sizeof b, "%s (tolerance ε %g, T %d-%d)", what, double(s.gap_tolerance), s.inner_steps,
                  s.inner_steps_max);
  else if (s.penalty_ramp > 0)
    std::snprintf(b, sizeof b, "%s (λ %g→%g, T %d)", what, double(s.penalty_start), double(s.penalty_final),
                  s.inner_steps);
  else
    std::snprintf(b, sizeof b, "%s (λ %g, T %d)", what, double(s.penalty_final), s.inner_steps);
  return b;
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

std::uint32_t game_seed(const Config& c, long g) {
  return static_cast<std::uint32_t>(c.seed) * 1000u + static_cast<std::uint32_t>(g);
}

// One checkpoint of one run.
struct Point {
  long iteration = 0;
  long env_steps = 0;
  double leader = 0, leader_best_response = 0, gap = 0, lambda = 0;
};

// One game: every method's checkpoints, wall times, the best responses' certificates.
struct GameResult {
  std::vector<Point> points[kMethodCount];
  double seconds[kMethodCount] = {};
  double worst_certificate = 0;
  long not_converged = 0;
  long tolerance_met[kMethodCount] = {};  // PBRL in tolerance mode: the last report's tolerance_met
  experiment::SolveRecord solve[kMethodCount];  // PBRL solving to the verdict (Hyperparameters::solves)
};

// Averaged over games (merged in game order, so --jobs does not change them).
struct Results {
  experiment::Curve iterations[kMethodCount], env_steps[kMethodCount], leader[kMethodCount],
      leader_best_response[kMethodCount], gap[kMethodCount], lambda[kMethodCount];
  std::vector<double> final_gap[kMethodCount];  // per game
  double seconds[kMethodCount] = {};
  double worst_certificate = 0;
  long not_converged = 0;
  long tolerance_met[kMethodCount] = {};
  std::vector<experiment::SolveRecord> solves[kMethodCount];  // per game

  void merge(const GameResult& g) {
    for (int mi = 0; mi < kMethodCount; ++mi) {
      for (std::size_t j = 0; j < g.points[mi].size(); ++j) {
        const Point& p = g.points[mi][j];
        iterations[mi].add(j, double(p.iteration));
        env_steps[mi].add(j, double(p.env_steps));
        leader[mi].add(j, p.leader);
        leader_best_response[mi].add(j, p.leader_best_response);
        gap[mi].add(j, p.gap);
        lambda[mi].add(j, p.lambda);
      }
      if (!g.points[mi].empty()) final_gap[mi].push_back(g.points[mi].back().gap);
      seconds[mi] += g.seconds[mi];
      tolerance_met[mi] += g.tolerance_met[mi];
      solves[mi].push_back(g.solve[mi]);
    }
    worst_certificate = std::max(worst_certificate, g.worst_certificate);
    not_converged += g.not_converged;
  }
  std::size_t last(int mi) const { return leader[mi].values.empty() ? 0 : leader[mi].values.size() - 1; }
};

// The cost axis: environment steps against the budget, or iterations (--iterations).
long total_cost(const Config& c) { return c.hp.iterations ? *c.hp.iterations : c.budget; }

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
  bool run_game(long g, experiment::Progress& progress, GameResult& result) {
    arrays_ = std::make_unique<GameArrays<S>>(game_seed(c_, g));
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
    for (int mi = 0; mi < kMethodCount; ++mi) {
      if (!c_.run[mi]) continue;
      const Method m = kMethods[mi];
      const auto start = std::chrono::steady_clock::now();
      const std::uint32_t seed = game_seed(c_, g) * 4u + static_cast<std::uint32_t>(mi);
      const bool ok = is_pbrl(m) ? run_pbrl(mi, m, seed, progress, result) : run_baseline(mi, seed, progress, result);
      if (!ok) return false;
      result.seconds[mi] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return true;
  }

 private:
  static bool check(pbrl::Status st, const char* what) {
    if (st == pbrl::Status::ok) return true;
    std::fprintf(stderr, "\n%s: %s\n", what, pbrl::to_string(st));
    return false;
  }

  // Exact metrics of (x, pi_y).
  bool measure(const Params& x, const Matrix& pi_y, Point& p, GameResult& result) {
    Real leader(0), gap(0);
    if (!check(game_->leader_value(x, pi_y, *model_, *ws_, *eval_, leader), "leader value")) return false;
    if (!check(game_->follower_gap(x, pi_y, *model_, *ws_, *eval_, *optimum_, gap), "follower gap")) return false;
    pbrl::BestResponseValue<Real> honest;
    if (!check(game_->value_at_best_response(x, *best_response_, honest), "leader value at the best response"))
      return false;
    result.worst_certificate = std::max(result.worst_certificate, static_cast<double>(honest.lower_level_gap));
    if (!honest.converged) ++result.not_converged;
    p.leader = leader;
    p.leader_best_response = honest.value;
    p.gap = gap;
    return true;
  }

  // Steps `solver` (Pbrl or IndependentPolicyGradient) through the checkpoints: at each target of
  // the cost axis, the first iterate whose cost reaches it is measured.
  template <class Run, class Report>
  bool run_checkpoints(int mi, Run& solver, Report& report, experiment::Progress& progress, GameResult& result) {
    const Method m = kMethods[mi];
    optimum_->value.setZero();
    best_response_->optimum.value.setZero();
    long k = 0, steps = 0;
    double lambda = 0;
    const bool by_iterations = c_.hp.iterations.has_value();
    constexpr bool kPbrl = std::is_base_of_v<pbrl::ScheduleReport<Real>, Report>;
    const bool solving = kPbrl && c_.hp.solves(c_.sampled);
    experiment::SolveRecord& record = result.solve[mi];
    const std::vector<long> targets = experiment::checkpoint_targets(total_cost(c_), c_.points);
    for (std::size_t j = 0; j < targets.size(); ++j) {
      while (experiment::steps_on(solving, record, by_iterations ? k : steps, targets, j,
                                  c_.hp.solve_cap(cfg::kSolveSteps))) {
        long cost = kBH;
        if constexpr (kPbrl) {
          // PBRL's report carries the iteration's oracle steps and lambda.
          bool stepped = true;
          if (!check(experiment::pbrl_step(solver, report, solving, record, stepped), "step")) return false;
          if (!stepped) break;  // at its verdict
          cost = steps_of_iteration(m, report.inner_steps);
          lambda = double(report.penalty_constant);
          result.tolerance_met[mi] = report.tolerance_met ? 1 : 0;
        } else {
          // Independent PG: no report, whose follower gap (soft value iteration on M(x_k)) is
          // diagnostics only; the checkpoints measure what the figure shows.
          if (!check(solver.step(), "step")) return false;
        }
        ++k;
        steps += cost;
        progress.add(by_iterations ? 1 : cost);
      }
      if (c_.sampled && solver.environment_steps() != steps) {
        std::fprintf(stderr, "\n%s counted %" PRId64 " environment steps after %ld iterations, expected %ld\n",
                     name(m), solver.environment_steps(), k, steps);
        return false;
      }
      solver.policy(*pi_);
      Point p;
      p.iteration = k;
      p.env_steps = steps;
      p.lambda = lambda;
      if (!measure(solver.x(), *pi_, p, result)) return false;
      result.points[mi].push_back(p);
    }
    return true;
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
  long total = 0;
  for (int mi = 0; mi < kMethodCount; ++mi)
    if (c.run[mi]) total += c.games * total_cost(c);
  experiment::Progress progress(c.hp.iterations ? "figure 1 (iterations, all games and methods)"
                                                : "figure 1 (environment steps, all games and methods)",
                                total, c.quiet);
  std::vector<GameResult> games(static_cast<std::size_t>(c.games));
  const bool ok = experiment::run_instances<Runner<S>>(
      c.games, c.jobs, [&] { return std::make_unique<Runner<S>>(c); },
      [&](Runner<S>& runner, long g) { return runner.run_game(g, progress, games[static_cast<std::size_t>(g)]); });
  seconds = progress.seconds();
  if (!ok) return false;
  for (const auto& g : games) results.merge(g);
  return true;
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
      c.games, c.quick ? "--quick" : "paper: 10", c.seed, c.games - 1, c.states,
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

bool write_csv(const std::string& path, const Config& c, const Results& r) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "%s", experiment::prefixed(settings_text(c), "# ").c_str());
  std::fprintf(f,
               "method,env_steps,leader_value_current_follower_mean,leader_value_current_follower_se,"
               "leader_value_best_response_mean,leader_value_best_response_se,follower_gap_mean,follower_gap_se,"
               "iterations_mean,lambda_mean\n");
  for (int mi = 0; mi < kMethodCount; ++mi)
    for (std::size_t j = 0; j < r.leader[mi].values.size(); ++j)
      std::fprintf(f, "%s,%.10g,%.10g,%.6g,%.10g,%.6g,%.10g,%.6g,%.10g,%.6g\n", name(kMethods[mi]),
                   r.env_steps[mi].mean(j), r.leader[mi].mean(j), r.leader[mi].stderr_of_mean(j),
                   r.leader_best_response[mi].mean(j), r.leader_best_response[mi].stderr_of_mean(j), r.gap[mi].mean(j),
                   r.gap[mi].stderr_of_mean(j), r.iterations[mi].mean(j), r.lambda[mi].mean(j));
  return std::fclose(f) == 0;
}

bool write_plot(const std::string& png, const std::string& csv, const Config& c, const Results& r) {
  std::vector<experiment::Series> series;
  std::vector<double> values;  // both value panels share one y range
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    series.push_back({name(kMethods[mi]), label(c, kMethods[mi])});
    for (const auto* curve : {&r.leader[mi], &r.leader_best_response[mi]})
      for (std::size_t j = 0; j < curve->values.size(); ++j) {
        values.push_back(curve->mean(j) - curve->stderr_of_mean(j));
        values.push_back(curve->mean(j) + curve->stderr_of_mean(j));
      }
  }
  const std::string range = experiment::common_range(values);
  const bool by_iterations = c.hp.iterations.has_value();
  const int x_col = by_iterations ? 9 : 2;
  const double x_scale = by_iterations ? 1 : 1e6;
  const std::string xlabel = by_iterations ? "iterations" : "environment steps (millions)";
  char title[256];
  std::snprintf(title, sizeof title, "Stackelberg Markov game, %d states, %ld games, %s gradients (mean ± standard error)",
                c.states, c.games, c.sampled ? "sampled" : "exact");
  std::string script = experiment::figure_head(title, 3);
  script += experiment::band_panel(csv, series, x_col, x_scale, 3, xlabel, "V_{l}(ρ)",
                                   "leader value, current follower: V_{l}^{π_x,π_y}(ρ) (the paper's metric)", range);
  script += experiment::band_panel(csv, series, x_col, x_scale, 5, xlabel, "V_{l}(ρ)",
                                   "leader value, follower best-responds: V_{l}^{π_x,π^*(x)}(ρ)", range);
  script += experiment::band_panel(csv, series, x_col, x_scale, 7, xlabel, "gap",
                                   "follower gap V_{f}^{π_x,π^*(x)}(ρ) - V_{f}^{π_x,π_y}(ρ)");
  script += "unset multiplot\n";
  return experiment::plot(png, script, 1800, 500);
}

void print_table(const Config& c, const Results& r) {
  std::printf("\n%-42s %9s %10s %8s %20s %20s %20s %20s\n", "method", "iters", "env steps", "wall s",
              "V_l(y) start", "V_l(y) end", "V_l(pi*) end", "gap end");
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    const std::size_t last = r.last(mi);
    const auto& L = r.leader[mi];
    const auto& B = r.leader_best_response[mi];
    const auto& G = r.gap[mi];
    std::printf("%-42s %9.0f %10.0f %8.1f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f\n",
                label(c, kMethods[mi]).c_str(), r.iterations[mi].mean(last), r.env_steps[mi].mean(last), r.seconds[mi],
                L.mean(0), L.stderr_of_mean(0), L.mean(last), L.stderr_of_mean(last), B.mean(last),
                B.stderr_of_mean(last), G.mean(last), G.stderr_of_mean(last));
  }
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    std::printf("%s final follower gap per game:", name(kMethods[mi]));
    for (double g : r.final_gap[mi]) std::printf(" %.4g", g);
    if (is_pbrl(kMethods[mi]) && c.hp.tolerance())
      std::printf("; final lambda %.4g (mean); tolerance met at the end in %ld of %ld games", r.lambda[mi].mean(r.last(mi)),
                  r.tolerance_met[mi], c.games);
    std::printf("\n");
    if (is_pbrl(kMethods[mi]) && c.hp.solves(c.sampled))
      experiment::print_solve_records("figure1", name(kMethods[mi]), r.solves[mi], "game");
  }
  const int first = c.run[0] ? 0 : c.run[1] ? 1 : 2;
  std::printf("(V_l(y): leader value with the current follower y, the paper's metric; V_l(pi*): with the follower's\n"
              " exact best response pi*(x), %.5f at the start; follower gap at the start: %.5f; +- is the standard\n"
              " error over %ld games; wall s: CPU-bound wall time of the method summed over games)\n",
              r.leader_best_response[first].mean(0), r.gap[first].mean(0), c.games);
  std::printf("(best responses certified: largest certified follower gap %.2e; %ld checkpoint(s) above the tolerance)\n",
              r.worst_certificate, r.not_converged);
}

template <int S>
int run(Config c) {
  c.states = S;
  if (!experiment::make_directories(c.out)) return 1;
  if (!c.sweep.empty()) {
    // Fixed lambda for each value of the list, both gradient modes; then the tolerance mode.
    std::vector<experiment::SweepRow> rows;
    const double tolerance = experiment::sweep_tolerance(c.hp);
    for (int mi = 0; mi < kMethodCount; ++mi) c.run[mi] = is_pbrl(kMethods[mi]);
    for (const Config& run : experiment::sweep_configs(c)) {
      Results r;
      double seconds = 0;
      if (!run_games<S>(run, r, seconds)) return 1;
      for (int mi = 0; mi < kMethodCount; ++mi) {
        if (!run.run[mi]) continue;
        const std::size_t last = r.last(mi);
        experiment::SweepRow row;
        row.method = name(kMethods[mi]);
        row.label = kMethods[mi] == Method::pbrl_value ? "PBRL-value" : "PBRL-Bellman";
        row.sampled = run.sampled;
        row.tolerance = run.hp.gap_tolerance.has_value();
        row.lambda = row.tolerance ? r.lambda[mi].mean(last) : *run.hp.lambda;
        row.paper_lambda = kMethods[mi] == Method::pbrl_value ? cfg::kValueLambda : cfg::kBellmanLambda;
        row.gap = r.gap[mi].mean(last), row.gap_se = r.gap[mi].stderr_of_mean(last);
        row.value = r.leader_best_response[mi].mean(last);
        row.value_se = r.leader_best_response[mi].stderr_of_mean(last);
        row.value_current = r.leader[mi].mean(last), row.value_current_se = r.leader[mi].stderr_of_mean(last);
        row.seconds = r.seconds[mi];
        rows.push_back(row);
        std::printf("sweep,figure1,%s,%s,%s,lambda=%.4g,gap=%.6g,leader_value_best_response=%.6f,"
                    "leader_value_current_follower=%.6f,seconds=%.1f\n",
                    row.method.c_str(), run.sampled ? "sampled" : "exact", row.tolerance ? "tolerance" : "fixed",
                    row.lambda, row.gap, row.value, row.value_current, row.seconds);
        std::fflush(stdout);
      }
    }
    char title[160];
    std::snprintf(title, sizeof title, "Stackelberg Markov game, %d states, %ld games: λ sweep, tolerance ε = %g", S,
                  c.games, tolerance);
    Config described = c;
    described.hp.lambda.reset();
    bool plotted = false;
    if (!experiment::write_sweep(c.out, "figure1_lambda_sweep",
                                 settings_text(described) + "sweep: lambda in {" + [&] {
                                   std::string l;
                                   for (double v : c.sweep) l += (l.empty() ? "" : ", ") + std::to_string(v);
                                   return l;
                                 }() + "}, exact and sampled; tolerance mode at epsilon " + std::to_string(tolerance) +
                                     (c.hp.oracle && *c.hp.oracle == "pmd"
                                          ? "\nthe settings above are exact mode's; sampled runs use the paper's "
                                            "policy-gradient oracle (step " + std::to_string(cfg::kOracleStep) + ")\n"
                                          : "\n"),
                                 rows, title, "follower gap", "V_{l}^{π_x,π^*(x)}(ρ)", plotted)) {
      std::fprintf(stderr, "cannot write %s/figure1_lambda_sweep.csv\n", c.out.c_str());
      return 1;
    }
    for (int mi = 0; mi < 2; ++mi)
      for (int sampled = 0; sampled < 2; ++sampled)
        std::printf("summary,figure1_sweep,%s,gap_slope_%s,%.4f\n", name(kMethods[mi]), sampled ? "sampled" : "exact",
                    experiment::gap_slope(rows, name(kMethods[mi]), sampled != 0));
    std::printf("wrote %s/figure1_lambda_sweep.csv%s\n", c.out.c_str(), plotted ? " and .png" : "");
    return 0;
  }

  Results results;
  double seconds = 0;
  if (!run_games<S>(c, results, seconds)) return 1;
  const std::string csv = c.out + "/figure1_stackelberg.csv", png = c.out + "/figure1_stackelberg.png";
  if (!write_csv(csv, c, results)) {
    std::fprintf(stderr, "cannot write %s\n", csv.c_str());
    return 1;
  }
  const bool plotted = write_plot(png, csv, c, results);
  std::printf("%s", experiment::prefixed(settings_text(c), "  ").c_str());
  print_table(c, results);
  std::printf("wrote %s%s%s (%.1f s)\n", csv.c_str(), plotted ? " and " : "", plotted ? png.c_str() : "", seconds);
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    const std::size_t last = results.last(mi);
    std::printf("summary,figure1,%s,leader_value_current_follower_start,%.6f\n", name(kMethods[mi]),
                results.leader[mi].mean(0));
    std::printf("summary,figure1,%s,leader_value_current_follower_end,%.6f\n", name(kMethods[mi]),
                results.leader[mi].mean(last));
    std::printf("summary,figure1,%s,leader_value_best_response_start,%.6f\n", name(kMethods[mi]),
                results.leader_best_response[mi].mean(0));
    std::printf("summary,figure1,%s,leader_value_best_response_end,%.6f\n", name(kMethods[mi]),
                results.leader_best_response[mi].mean(last));
    std::printf("summary,figure1,%s,follower_gap_end,%.6f\n", name(kMethods[mi]), results.gap[mi].mean(last));
  }
  return 0;
}

std::string usage() {
  char b[6144];
  std::snprintf(
      b, sizeof b,
      "usage: stackelberg_experiment [options]\n"
      "The paper's Figure 1: leader value and follower optimality gap against environment steps for\n"
      "PBRL-value (lambda %g, T %d), PBRL-Bellman (lambda %g, T %d) and independent policy gradient on\n"
      "random Stackelberg Markov games (settings in examples/experiment_settings.hpp). The leader's value\n"
      "is reported twice: with the solver's current follower y (the paper's metric) and with the\n"
      "follower's exact regularized best response pi*(x) (the bilevel answer).\n\n"
      "  --gradient exact|sampled  sampled (default): the lower level learns from Monte-Carlo rollouts\n"
      "                            (B = %d, H = %d); the x axis is the solvers' own environment-step\n"
      "                            count. exact: model-based gradients; the x axis counts the steps the\n"
      "                            same iterations would take in sampled mode: (T_k+2)*B*H per PBRL\n"
      "                            iteration, B*H = %ld per independent-PG one.\n"
      "                            In both modes the metrics are exact (model-based).\n"
      "  --games N                 random games (default %d)\n"
      "  --seed N                  game g uses seed N*1000 + g (default 1)\n"
      "  --budget STEPS            environment steps per run; every method runs until it used them\n"
      "                            (default %ld)\n"
      "  --points N                checkpoints on the environment-step axis (default %d)\n"
      "  --methods LIST            comma-separated subset of pbrl_value,pbrl_bellman,independent_pg\n"
      "Hyperparameters (PBRL-value and PBRL-Bellman alike; --step also independent PG's):\n"
      "%s"
      "  --sweep-lambda L1,L2,...  the PBRL methods at each fixed lambda, exact and sampled, and in\n"
      "                            tolerance mode (--gap-tolerance, default 0.01): final gap and leader\n"
      "                            values against lambda in DIR/figure1_lambda_sweep.csv and .png\n"
      "  --jobs N                  games run on N threads (default 1; results do not depend on it)\n"
      "  --out DIR                 output directory, created if needed (default results):\n"
      "                            DIR/figure1_stackelberg.csv and DIR/figure1_stackelberg.png\n"
      "  --quick                   demo size: %d states, %d games, budget %ld (options above override)\n"
      "  --quiet                   no progress on stderr\n"
      "  --help                    this text\n",
      cfg::kValueLambda, cfg::kValueInner, cfg::kBellmanLambda, cfg::kBellmanInner, cfg::kBatch, settings::kHorizon,
      kBH, cfg::kGames, cfg::kBudget, cfg::kPoints, experiment::Hyperparameters::usage(), cfg::kQuickStates,
      cfg::kQuickGames, cfg::kQuickBudget);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  experiment::Options opt(argc, argv, usage());
  Config c;
  c.quick = opt.flag("quick");
  c.quiet = opt.flag("quiet");
  c.sampled = opt.choice("gradient", "sampled", {"exact", "sampled"}) == "sampled";
  c.states = c.quick ? cfg::kQuickStates : cfg::kStates;
  c.games = opt.integer("games", c.quick ? cfg::kQuickGames : cfg::kGames, 1);
  c.seed = opt.integer("seed", 1, 0);
  c.budget = opt.integer("budget", c.quick ? cfg::kQuickBudget : cfg::kBudget, 1);
  c.points = opt.integer("points", cfg::kPoints, 2);
  c.jobs = opt.integer("jobs", 1, 1);
  c.out = opt.text("out", "results");
  c.hp.read(opt);
  const std::string methods = opt.text("methods", "");
  const std::string sweep = opt.text("sweep-lambda", "");
  if (const int code = opt.finish(); code >= 0) return code;
  auto fail = [](const char* message) {
    std::fprintf(stderr, "error: %s\n", message);
    return 2;
  };
  if (c.out.empty()) return fail("--out needs a directory");
  if (c.seed > 4000000L) return fail("--seed must be at most 4000000");
  if (!methods.empty()) {
    for (bool& r : c.run) r = false;
    std::size_t start = 0;
    while (start <= methods.size()) {
      const std::size_t end = std::min(methods.find(',', start), methods.size());
      const std::string m = methods.substr(start, end - start);
      bool found = false;
      for (int mi = 0; mi < kMethodCount; ++mi)
        if (m == name(kMethods[mi])) c.run[mi] = found = true;
      if (!found) return fail("--methods takes a list of pbrl_value, pbrl_bellman, independent_pg");
      start = end + 1;
    }
  }
  if (!sweep.empty() && (c.sweep = experiment::parse_positive_list(sweep)).empty())
    return fail("--sweep-lambda takes a comma-separated list of positive numbers");
  if (c.hp.oracle && *c.hp.oracle == "pmd" && c.sampled && c.sweep.empty())
    return fail("--oracle pmd needs --gradient exact (sampled mode learns from rollouts by policy gradient)");
  // Every PBRL setting the options make is checked by the library before anything runs.
  // A sweep checks each of its runs (its sampled runs use the paper's oracle).
  const std::vector<Config> checked = c.sweep.empty() ? std::vector<Config>{c} : experiment::sweep_configs(c);
  for (const Config& run : checked)
    for (Method m : {Method::pbrl_value, Method::pbrl_bellman})
      if (pbrl::validate(static_cast<const pbrl::PenaltySolverSettings<Real>&>(pbrl_settings(run, m, 1))) !=
          pbrl::Status::ok)
        return fail("these hyperparameters are not valid PBRL settings (see --help and solver/settings.hpp)");
  return c.quick ? run<cfg::kQuickStates>(c) : run<cfg::kStates>(c);
}
