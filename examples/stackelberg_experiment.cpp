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
// Each method runs until it has used the budget, so the methods compare at equal samples.
//
// Output: DIR/figure1_stackelberg.csv and DIR/figure1_stackelberg.png (gnuplot), a table and
// `summary,figure1,<method>,<metric>,<value>` lines on stdout, progress on stderr.

#include "pbrl/pbrl.hpp"

#include "experiment.hpp"
#include "experiment_settings.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace cfg = settings::stackelberg;
constexpr int AL = cfg::kLeaderActions;
constexpr int AF = cfg::kFollowerActions;
using Real = double;

struct Config {
  int states = cfg::kStates;
  long games = cfg::kGames;
  long seed = 1;
  long budget = cfg::kBudget;
  long points = cfg::kPoints;
  std::string out = "results";
  bool quiet = false;
  bool quick = false;
  bool sampled = true;
};

enum class Method { pbrl_value, pbrl_bellman, independent_pg };
constexpr Method kMethods[] = {Method::pbrl_value, Method::pbrl_bellman, Method::independent_pg};
constexpr int kMethodCount = 3;

const char* name(Method m) {
  switch (m) {
    case Method::pbrl_value: return "pbrl_value";
    case Method::pbrl_bellman: return "pbrl_bellman";
    case Method::independent_pg: return "independent_pg";
  }
  return "?";
}
const char* label(Method m) {
  switch (m) {
    case Method::pbrl_value: return "PBRL-value (lambda 2, T 1)";
    case Method::pbrl_bellman: return "PBRL-Bellman (lambda 7, T 10)";
    case Method::independent_pg: return "independent PG";
  }
  return "?";
}

const char* short_label(Method m) {
  switch (m) {
    case Method::pbrl_value: return "PBRL-value";
    case Method::pbrl_bellman: return "PBRL-Bellman";
    case Method::independent_pg: return "independent PG";
  }
  return "?";
}

// Environment steps of one iteration in sampled mode (and on the exact mode's axis).
long steps_per_iteration(Method m) {
  const long bh = static_cast<long>(cfg::kBatch) * settings::kHorizon;
  switch (m) {
    case Method::pbrl_value: return (cfg::kValueInner + 2) * bh;
    case Method::pbrl_bellman: return (cfg::kBellmanInner + 2) * bh;
    case Method::independent_pg: return bh;
  }
  return bh;
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

// Iteration counts at the checkpoints: the first iterate at or past budget * j / (points - 1)
// environment steps (duplicates dropped); the last one has used at least the budget.
std::vector<long> checkpoints(const Config& c, Method m) {
  return experiment::checkpoint_iterations(c.budget, c.points, steps_per_iteration(m));
}

struct Results {
  std::vector<long> iterations[kMethodCount];   // checkpoint iteration counts
  std::vector<long> env_steps[kMethodCount];    // environment steps at the checkpoints
  // Leader's value with the current follower y, and at the follower's exact best response pi*(x).
  experiment::Curve leader[kMethodCount], leader_best_response[kMethodCount], gap[kMethodCount];
  double seconds[kMethodCount] = {};
  // Certificates of pi*(x): the largest certified follower gap, and checkpoints above tolerance.
  double worst_certificate = 0;
  long not_converged = 0;
};

template <int S>
class Runner {
 public:
  using Game = pbrl::Stackelberg<Real, S, AL, AF>;
  using Params = typename Game::Params;
  using Matrix = pbrl::StateActionMatrix<Real, S, AF>;
  using Solver = pbrl::Pbrl<Game>;
  using Baseline = pbrl::IndependentPolicyGradient<Game>;

  Runner(const Config& c, Results& results) : c_(c), results_(results) {}

  // Runs every method on game g; false (after a message) on a library error.
  bool run_game(long g, experiment::Progress& progress, long& done) {
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
      const Method m = kMethods[mi];
      const auto start = std::chrono::steady_clock::now();
      const std::uint32_t seed = game_seed(c_, g) * 4u + static_cast<std::uint32_t>(mi);
      const bool ok = m == Method::independent_pg ? run_baseline(mi, seed, progress, done)
                                                  : run_pbrl(mi, m, seed, progress, done);
      if (!ok) return false;
      results_.seconds[mi] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return true;
  }

 private:
  static bool check(pbrl::Status st, const char* what) {
    if (st == pbrl::Status::ok) return true;
    std::fprintf(stderr, "\n%s: %s\n", what, pbrl::to_string(st));
    return false;
  }

  // Exact metrics of (x, pi_y) at checkpoint j of method mi.
  bool record(int mi, std::size_t j, long k, std::int64_t steps, const Params& x, const Matrix& pi_y,
              typename Game::FollowerOptimum& optimum) {
    Real leader(0), gap(0);
    if (!check(game_->leader_value(x, pi_y, *model_, *ws_, *eval_, leader), "leader value")) return false;
    if (!check(game_->follower_gap(x, pi_y, *model_, *ws_, *eval_, optimum, gap), "follower gap")) return false;
    pbrl::BestResponseValue<Real> honest;
    if (!check(game_->value_at_best_response(x, *best_response_, honest), "leader value at the best response"))
      return false;
    results_.worst_certificate = std::max(results_.worst_certificate, static_cast<double>(honest.lower_level_gap));
    if (!honest.converged) ++results_.not_converged;
    auto& its = results_.iterations[mi];
    auto& env = results_.env_steps[mi];
    if (its.size() <= j) {
      its.push_back(k);
      env.push_back(static_cast<long>(steps));
    } else if (env[j] != static_cast<long>(steps)) {
      std::fprintf(stderr, "\n%s: environment steps differ between games at checkpoint %zu\n", name(kMethods[mi]), j);
      return false;
    }
    results_.leader[mi].add(j, leader);
    results_.leader_best_response[mi].add(j, honest.value);
    results_.gap[mi].add(j, gap);
    return true;
  }

  bool run_pbrl(int mi, Method m, std::uint32_t seed, experiment::Progress& progress, long& done) {
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
    s.gradient = c_.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
    s.sampling.horizon = settings::kHorizon;
    s.sampling.batch = cfg::kBatch;
    s.seed = seed;
    if (!check(solver_->init(*game_, s, Params::Zero(), Matrix::Zero()), "PBRL init")) return false;
    optimum_->value.setZero();
    best_response_->optimum.value.setZero();
    const long per = steps_per_iteration(m);
    const std::vector<long> ks = checkpoints(c_, m);
    long k = 0;
    for (std::size_t j = 0; j < ks.size(); ++j) {
      for (; k < ks[j]; ++k) {
        if (!check(solver_->step(), "PBRL step")) return false;
        done += per;
        progress.update(done);
      }
      const std::int64_t steps = c_.sampled ? solver_->environment_steps() : std::int64_t(k) * per;
      if (steps != std::int64_t(k) * per) {
        std::fprintf(stderr, "\nPBRL counted %" PRId64 " environment steps after %ld iterations, expected %ld\n",
                     steps, k, k * per);
        return false;
      }
      solver_->policy(*pi_);
      if (!record(mi, j, k, steps, solver_->x(), *pi_, *optimum_)) return false;
    }
    return true;
  }

  bool run_baseline(int mi, std::uint32_t seed, experiment::Progress& progress, long& done) {
    pbrl::IndependentPgSettings<Real> s;
    s.step_leader = s.step_follower = Real(cfg::kStep);
    s.follower_logit_bound = Real(cfg::kLogitBound);
    s.gradient = c_.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
    s.sampling.horizon = settings::kHorizon;
    s.sampling.batch = cfg::kBatch;
    s.seed = seed;
    if (!check(baseline_->init(*game_, s, Params::Zero(), Matrix::Zero()), "independent PG init")) return false;
    optimum_->value.setZero();
    best_response_->optimum.value.setZero();
    const long per = steps_per_iteration(Method::independent_pg);
    const std::vector<long> ks = checkpoints(c_, Method::independent_pg);
    long k = 0;
    for (std::size_t j = 0; j < ks.size(); ++j) {
      for (; k < ks[j]; ++k) {
        if (!check(baseline_->step(), "independent PG step")) return false;
        done += per;
        progress.update(done);
      }
      const std::int64_t steps = c_.sampled ? baseline_->environment_steps() : std::int64_t(k) * per;
      if (steps != std::int64_t(k) * per) {
        std::fprintf(stderr, "\nindependent PG counted %" PRId64 " environment steps after %ld iterations\n", steps, k);
        return false;
      }
      baseline_->policy(*pi_);
      if (!record(mi, j, k, steps, baseline_->x(), *pi_, *optimum_)) return false;
    }
    return true;
  }

  const Config& c_;
  Results& results_;
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

// The settings block, written as the CSV's comment header and printed with the results.
std::string settings_text(const Config& c) {
  char b[6144];
  const long bh = static_cast<long>(cfg::kBatch) * settings::kHorizon;
  std::snprintf(
      b, sizeof b,
      "Figure 1, Stackelberg Markov game (paper: Section \"Simulation / Stackelberg Markov game\")\n"
      "games: %ld random games (%s), seeds %ld*1000 + g, g = 0..%ld\n"
      "|S| = %d (%s), |A_l| = %d, |A_f| = %d (paper)\n"
      "rewards r_l, r_f: uniform [0,1], entries < %.2f set to 0 (paper); transitions uniform then normalized (paper)\n"
      "discount gamma = %.2f (choice); rho uniform (choice)\n"
      "follower entropy tau_f = %.3g (choice); leader tau_l = %.3g (choice: scored unregularized)\n"
      "softmax policies for both players, logits in [-%.3g, %.3g] (choice); start x = 0, y = 0 (uniform policies)\n"
      "learning rate %.3g for x and y of every method (paper)\n"
      "PBRL-value: lambda %.3g, T %d (paper); PBRL-Bellman: lambda %.3g, T %d (paper)\n"
      "PBRL oracle: T policy-gradient steps (paper) of step %.3g (choice), softmax\n"
      "independent PG: simultaneous ascent, each player on its own value (paper)\n"
      "gradient mode: %s\n"
      "Monte Carlo: trajectory length H = %d, batch B = %d (paper)\n"
      "environment steps per iteration: PBRL (T+2)*B*H (value %ld, Bellman %ld), independent PG B*H = %ld\n"
      "%s"
      "budget: %ld environment steps per run (%s); %ld checkpoints\n"
      "metrics (exact, model-based): leader value V_l^{pi_x,pi_y}(rho); follower gap "
      "V_f^{pi_x,pi*(x)}(rho) - V_f^{pi_x,pi_y}(rho) (soft value iteration)\n"
      "leader value, two of them: leader_value_current_follower = V_l^{pi_x,pi_y}(rho) with the solver's current "
      "follower y (the paper's Figure 1 plots this one); leader_value_best_response = V_l^{pi_x,pi*(x)}(rho) with "
      "the follower's exact regularized best response on M(x) (soft value iteration, certified follower gap "
      "<= %.1e), what the leader gets against a follower that really best-responds\n"
      "mean and standard error of the mean over games\n",
      c.games, c.quick ? "--quick" : "paper: 10", c.seed, c.games - 1, c.states,
      c.states == cfg::kStates ? "paper" : "--quick, choice", AL, AF, cfg::kRewardSparsity, settings::kDiscount,
      cfg::kFollowerTau, cfg::kLeaderTau, cfg::kLogitBound, cfg::kLogitBound, cfg::kStep, cfg::kValueLambda,
      cfg::kValueInner, cfg::kBellmanLambda, cfg::kBellmanInner, cfg::kOracleStep,
      c.sampled ? "sampled (lower level from rollouts; PBRL's upper level and independent PG's leader gradient exact)"
                : "exact (every gradient model-based)",
      settings::kHorizon, cfg::kBatch, (cfg::kValueInner + 2) * bh, (cfg::kBellmanInner + 2) * bh, bh,
      c.sampled ? "x axis: environment steps counted by the solvers\n"
                : "x axis: environment steps the same iterations would take in sampled mode (none are taken)\n",
      c.budget, c.quick ? "--quick, choice" : "choice", c.points,
      static_cast<double>(pbrl::BestResponseSettings<Real>{}.tolerance));
  return b;
}


bool write_csv(const std::string& path, const Config& c, const Results& r) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "%s", experiment::prefixed(settings_text(c), "# ").c_str());
  std::fprintf(f,
               "method,env_steps,leader_value_current_follower_mean,leader_value_current_follower_se,"
               "leader_value_best_response_mean,leader_value_best_response_se,follower_gap_mean,follower_gap_se\n");
  for (int mi = 0; mi < kMethodCount; ++mi)
    for (std::size_t j = 0; j < r.env_steps[mi].size(); ++j)
      std::fprintf(f, "%s,%ld,%.10g,%.6g,%.10g,%.6g,%.10g,%.6g\n", name(kMethods[mi]), r.env_steps[mi][j],
                   r.leader[mi].mean(j), r.leader[mi].stderr_of_mean(j), r.leader_best_response[mi].mean(j),
                   r.leader_best_response[mi].stderr_of_mean(j), r.gap[mi].mean(j), r.gap[mi].stderr_of_mean(j));
  return std::fclose(f) == 0;
}

bool write_plot(const std::string& png, const std::string& csv, const Config& c) {
  const char* colors[kMethodCount] = {"#1f77b4", "#d62728", "#2ca02c"};
  auto panel = [&](int mean_col, const char* ylabel, const char* title) {
    std::string s = "set title '" + std::string(title) + "'\nset xlabel 'environment steps (millions)'\nset ylabel '" +
                    ylabel + "'\nplot ";
    for (int mi = 0; mi < kMethodCount; ++mi) {
      const std::string sel = "(strcol(1) eq '" + std::string(name(kMethods[mi])) + "' ? ";
      const std::string m = "$" + std::to_string(mean_col), se = "$" + std::to_string(mean_col + 1);
      s += "'" + csv + "' using ($2/1e6):" + sel + m + "-" + se + " : 1/0):" + sel + m + "+" + se +
           " : 1/0) with filledcurves fc rgb '" + colors[mi] + "' fs transparent solid 0.2 noborder notitle, \\\n     ";
      s += "'" + csv + "' using ($2/1e6):" + sel + m + " : 1/0) with lines lw 2 lc rgb '" + colors[mi] + "' title '" +
           short_label(kMethods[mi]) + "'";
      s += mi + 1 < kMethodCount ? ", \\\n     " : "\n";
    }
    return s;
  };
  char head[512];
  std::snprintf(head, sizeof head,
                "set datafile separator ','\nset grid\nset key below horizontal maxcols 3 samplen 2 reverse Left width -1\n"
                "set multiplot layout 1,3 title 'Stackelberg Markov game, %d states, %ld games, %s gradients "
                "(mean +- standard error)'\n",
                c.states, c.games, c.sampled ? "sampled" : "exact");
  std::string script = head;
  script += panel(3, "V_l(rho)", "leader value, current follower y: V_l^{pi_x,pi_y}(rho) (paper)");
  script += panel(5, "V_l(rho)", "leader value, follower best-responds: V_l^{pi_x,pi*(x)}(rho)");
  script += panel(7, "gap", "follower gap V_f^{pi_x,pi*(x)}(rho) - V_f^{pi_x,pi_y}(rho)");
  script += "unset multiplot\n";
  return experiment::plot(png, script, 1800);
}

template <int S>
int run(Config c) {
  c.states = S;
  Results results;
  Runner<S> runner(c, results);
  long total = 0;
  for (Method m : kMethods) total += c.games * checkpoints(c, m).back() * steps_per_iteration(m);
  experiment::Progress progress("figure 1 (environment steps, all games and methods)", total, c.quiet);
  long done = 0;
  for (long g = 0; g < c.games; ++g)
    if (!runner.run_game(g, progress, done)) return 1;
  const double seconds = progress.seconds();

  if (!experiment::make_directories(c.out)) return 1;
  const std::string csv = c.out + "/figure1_stackelberg.csv", png = c.out + "/figure1_stackelberg.png";
  if (!write_csv(csv, c, results)) {
    std::fprintf(stderr, "cannot write %s\n", csv.c_str());
    return 1;
  }
  const bool plotted = write_plot(png, csv, c);

  std::printf("%s", experiment::prefixed(settings_text(c), "  ").c_str());
  std::printf("\n%-30s %9s %10s %9s %20s %20s %20s %20s\n", "method", "iters", "env steps", "wall s",
              "V_l(y) start", "V_l(y) end", "V_l(pi*) end", "gap end");
  for (int mi = 0; mi < kMethodCount; ++mi) {
    const std::size_t last = results.env_steps[mi].size() - 1;
    const auto& L = results.leader[mi];
    const auto& B = results.leader_best_response[mi];
    const auto& G = results.gap[mi];
    std::printf("%-30s %9ld %10ld %9.1f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f\n",
                label(kMethods[mi]), results.iterations[mi][last], results.env_steps[mi][last], results.seconds[mi],
                L.mean(0), L.stderr_of_mean(0), L.mean(last), L.stderr_of_mean(last), B.mean(last),
                B.stderr_of_mean(last), G.mean(last), G.stderr_of_mean(last));
  }
  std::printf("(V_l(y): leader value with the current follower y, the paper's metric; V_l(pi*): with the follower's\n"
              " exact best response pi*(x), %.5f at the start; follower gap at the start: %.5f; +- is the standard\n"
              " error over %ld games)\n",
              results.leader_best_response[0].mean(0), results.gap[0].mean(0), c.games);
  std::printf("(best responses certified: largest certified follower gap %.2e; %ld checkpoint(s) above the tolerance)\n",
              results.worst_certificate, results.not_converged);
  std::printf("wrote %s%s%s (%.1f s)\n", csv.c_str(), plotted ? " and " : "", plotted ? png.c_str() : "", seconds);
  for (int mi = 0; mi < kMethodCount; ++mi) {
    const std::size_t last = results.env_steps[mi].size() - 1;
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
  char b[4096];
  const long bh = static_cast<long>(cfg::kBatch) * settings::kHorizon;
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
      "                            same iterations would take in sampled mode: (T+2)*B*H = %ld (value)\n"
      "                            and %ld (Bellman) per PBRL iteration, B*H = %ld per independent-PG one.\n"
      "                            In both modes the metrics are exact (model-based).\n"
      "  --games N                 random games (default %d)\n"
      "  --seed N                  game g uses seed N*1000 + g (default 1)\n"
      "  --budget STEPS            environment steps per run; every method runs until it used them\n"
      "                            (default %ld)\n"
      "  --points N                checkpoints on the environment-step axis (default %d)\n"
      "  --out DIR                 output directory, created if needed (default results):\n"
      "                            DIR/figure1_stackelberg.csv and DIR/figure1_stackelberg.png\n"
      "  --quick                   demo size: %d states, %d games, budget %ld (options above override)\n"
      "  --quiet                   no progress on stderr\n"
      "  --help                    this text\n",
      cfg::kValueLambda, cfg::kValueInner, cfg::kBellmanLambda, cfg::kBellmanInner, cfg::kBatch, settings::kHorizon,
      (cfg::kValueInner + 2) * bh, (cfg::kBellmanInner + 2) * bh, bh, cfg::kGames, cfg::kBudget, cfg::kPoints,
      cfg::kQuickStates, cfg::kQuickGames, cfg::kQuickBudget);
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
  c.out = opt.text("out", "results");
  if (const int code = opt.finish(); code >= 0) return code;
  if (c.out.empty()) {
    std::fprintf(stderr, "error: --out needs a directory\n");
    return 2;
  }
  if (c.seed > 4000000L) {
    std::fprintf(stderr, "error: --seed must be at most 4000000\n");
    return 2;
  }
  return c.quick ? run<cfg::kQuickStates>(c) : run<cfg::kStates>(c);
}
