// The paper's Figure 3: incentive design (Section "Simulation / Incentive design", appendix
// "Additional experiment details / Incentive design", ERRATA 6-8).
//
// Random environments (|S| = 10, |A_1| = |A_2| = 5; the agents' reward r and the designer's
// reward r_id uniform in [0, 1]; the agents' P and the designer's P_id uniform then normalized;
// no designer cost) in which two entropy-regularized agents play a zero-sum Markov game on
// r_x = r + 0.2 sigmoid(x), x in a box of R^{S*A1*A2}, are solved by
//   PBRL-NI        (PBRL with the Nikaido-Isoda penalty, lambda 4, T 1 policy-gradient oracle step),
//   meta-gradient  (Yang et al. 2021: one agents' step, the designer differentiates through it),
//   start line     (the agents learn with x held at 0: no incentive design),
// all with learning rate 0.1 and softmax agents from x = 0, y1 = y2 = 0 (uniform policies). The
// program records, against environment steps, the designer's reward V_id^{pi}(rho) (the
// expected discounted return of the agents' current policies on (P_id, r_id), that is -f(pi): what
// the paper plots), the designer's reward at the exact regularized Nash equilibrium of M(x) (the
// bilevel answer: what the designer gets from agents that really play the equilibrium of the game
// it set; IncentiveDesign::value_at_best_response) and the NE gap psi(x, pi) (the Nikaido-Isoda
// function of the game M(x) at the current x and policies, exact best responses by soft value
// iteration), all measured exactly on the model and averaged over the environments.
//
// Environment steps. --gradient sampled (the paper's setting): the lower level learns from
// rollouts (B = 24 trajectories of H = 5 steps per estimate) and the count is the solvers' own:
// (2T + 2)*B*H per PBRL-NI step, (T + 1)*B*H per meta-gradient step, T*B*H per start-line step
// (the designer's own gradient is model-based in every method). --gradient exact: every gradient
// is model-based and the axis counts the environment steps the same iterations would take in
// sampled mode. Each method runs until it has used the budget, so the methods compare at equal
// samples.
//
// Output: DIR/figure3_incentive.csv and DIR/figure3_incentive.png (gnuplot), a table and
// `summary,figure3,<method>,<metric>,<value>` lines on stdout, progress on stderr.

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

namespace cfg = settings::incentive;
constexpr int S = cfg::kStates;
constexpr int A1 = cfg::kActions1;
constexpr int A2 = cfg::kActions2;
constexpr int J = A1 * A2;
using Real = double;

// The NE-gap measurement: soft value iteration per player, warm-started along each run.
constexpr int kGapSweeps = 2000;
constexpr Real kGapTolerance = 1e-10;

struct Config {
  long games = cfg::kGames;
  long seed = 1;
  long budget = cfg::kBudget;
  long points = cfg::kPoints;
  std::string out = "results";
  bool quiet = false;
  bool quick = false;
  bool sampled = true;
};

enum class Method { pbrl_ni, meta_gradient, start_line };
constexpr Method kMethods[] = {Method::pbrl_ni, Method::meta_gradient, Method::start_line};
constexpr int kMethodCount = 3;

const char* name(Method m) {
  switch (m) {
    case Method::pbrl_ni: return "pbrl_ni";
    case Method::meta_gradient: return "meta_gradient";
    case Method::start_line: return "start_line";
  }
  return "?";
}
const char* label(Method m) {
  switch (m) {
    case Method::pbrl_ni: return "PBRL-NI (lambda 4, T 1)";
    case Method::meta_gradient: return "meta-gradient (T 1)";
    case Method::start_line: return "start line (x held at 0)";
  }
  return "?";
}
const char* short_label(Method m) {
  switch (m) {
    case Method::pbrl_ni: return "PBRL-NI";
    case Method::meta_gradient: return "meta-gradient";
    case Method::start_line: return "start line";
  }
  return "?";
}

// Environment steps of one iteration in sampled mode (and on the exact mode's axis).
long steps_per_iteration(Method m) {
  const long bh = static_cast<long>(cfg::kBatch) * settings::kHorizon;
  switch (m) {
    case Method::pbrl_ni: return (2 * cfg::kInner + 2) * bh;
    case Method::meta_gradient: return (cfg::kInner + 1) * bh;
    case Method::start_line: return cfg::kInner * bh;
  }
  return bh;
}

// One environment's arrays (on a device: flash).
struct EnvironmentArrays {
  Real reward[S * J];                    // agents' r(s,a1,a2)
  Real transition[S * J * S];            // agents' P(s'|s,a1,a2)
  Real designer_reward[S * J];           // r_id(s,a1,a2)
  Real designer_transition[S * J * S];   // P_id(s'|s,a1,a2)
  Real initial[S];

  explicit EnvironmentArrays(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward, S * J);  // paper: uniform [0,1], dense
    pbrl::random_transition(rng, transition, S * J, S);
    pbrl::random_reward(rng, designer_reward, S * J);
    pbrl::random_transition(rng, designer_transition, S * J, S);
    for (int s = 0; s < S; ++s) initial[s] = Real(1) / Real(S);  // choice: rho uniform
  }
};

std::uint32_t environment_seed(const Config& c, long g) {
  return static_cast<std::uint32_t>(c.seed) * 1000u + static_cast<std::uint32_t>(g);
}

// Iteration counts at the checkpoints: the first iterate at or past budget * j / (points - 1)
// environment steps (duplicates dropped); the last one has used at least the budget.
std::vector<long> checkpoints(const Config& c, Method m) {
  return experiment::checkpoint_iterations(c.budget, c.points, steps_per_iteration(m));
}

struct Results {
  std::vector<long> iterations[kMethodCount];  // checkpoint iteration counts
  std::vector<long> env_steps[kMethodCount];   // environment steps at the checkpoints
  // Designer's reward at the agents' current policies, and at the exact regularized NE of M(x).
  experiment::Curve designer[kMethodCount], designer_equilibrium[kMethodCount], gap[kMethodCount];
  double seconds[kMethodCount] = {};
  // Certificates of the equilibria: the largest certified psi, and checkpoints above tolerance.
  double worst_certificate = 0;
  long not_converged = 0;
};

class Runner {
 public:
  using Problem = pbrl::IncentiveDesign<Real, S, A1, A2>;
  using Params = Problem::Params;
  using Matrix1 = Problem::Matrix1;
  using Matrix2 = Problem::Matrix2;
  using Solver = pbrl::PbrlZeroSum<Problem>;
  using Baseline = pbrl::MetaGradient<Problem>;

  Runner(const Config& c, Results& results) : c_(c), results_(results) {}

  // Runs every method on environment g; false (after a message) on a library error.
  bool run_environment(long g, experiment::Progress& progress, long& done) {
    arrays_ = std::make_unique<EnvironmentArrays>(environment_seed(c_, g));
    Problem::Data data;
    data.reward = arrays_->reward;
    data.transition = arrays_->transition;
    data.initial = arrays_->initial;
    data.discount = Real(settings::kDiscount);
    data.regularizer1 = {pbrl::RegularizerKind::entropy, Real(cfg::kTau), nullptr};
    data.regularizer2 = {pbrl::RegularizerKind::entropy, Real(cfg::kTau), nullptr};
    data.designer_reward = arrays_->designer_reward;
    data.designer_transition = arrays_->designer_transition;
    data.designer_cost = nullptr;  // ERRATA 6: the experiment has no designer cost
    data.incentive_scale = Real(cfg::kIncentiveScale);
    data.incentive = {Real(-cfg::kIncentiveBound), Real(cfg::kIncentiveBound)};
    if (!check(problem_->init(data), "problem init")) return false;
    for (int mi = 0; mi < kMethodCount; ++mi) {
      const Method m = kMethods[mi];
      const auto start = std::chrono::steady_clock::now();
      const std::uint32_t seed = environment_seed(c_, g) * 4u + static_cast<std::uint32_t>(mi);
      const bool ok = m == Method::pbrl_ni ? run_pbrl(mi, seed, progress, done)
                                           : run_meta_gradient(mi, m, seed, progress, done);
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

  // Exact metrics of (x, pi1, pi2) at checkpoint j of method mi: V_id^{pi}(rho) = -f(pi) and
  // psi(x, pi) on M(x) (best responses warm-started from the run's previous checkpoint).
  bool record(int mi, std::size_t j, long k, std::int64_t steps, const Params& x) {
    typename Problem::GameType game;
    if (!check(problem_->build(x, *model_, game), "build M(x)")) return false;
    Real f(0), gap(0);
    if (!check(problem_->upper(x, *pi1_, *pi2_, *model_, *ws_, *eval_, f, *grad_x_, *grad1_, *grad2_),
               "designer value"))
      return false;
    if (!check(pbrl::nikaido_isoda_exact(game, *pi1_, *pi2_, kGapSweeps, kGapTolerance, *best_, gap), "NE gap"))
      return false;
    pbrl::BestResponseValue<Real> honest;
    if (!check(problem_->value_at_best_response(x, *equilibrium_, honest), "designer reward at the NE")) return false;
    results_.worst_certificate = std::max(results_.worst_certificate, static_cast<double>(honest.lower_level_gap));
    if (!honest.converged) ++results_.not_converged;
    auto& its = results_.iterations[mi];
    auto& env = results_.env_steps[mi];
    if (its.size() <= j) {
      its.push_back(k);
      env.push_back(static_cast<long>(steps));
    } else if (env[j] != static_cast<long>(steps)) {
      std::fprintf(stderr, "\n%s: environment steps differ between environments at checkpoint %zu\n",
                   name(kMethods[mi]), j);
      return false;
    }
    results_.designer[mi].add(j, -f);
    results_.designer_equilibrium[mi].add(j, honest.value);
    results_.gap[mi].add(j, gap);
    return true;
  }

  void reset_gap_warm_start() {
    best_->value1.setZero();
    best_->value2.setZero();
    // The equilibrium's cold start: V = 0, uniform policies.
    equilibrium_->nash.value.setZero();
    equilibrium_->nash.pi1.setConstant(Real(1) / A1);
    equilibrium_->nash.pi2.setConstant(Real(1) / A2);
    equilibrium_->nash.best.value1.setZero();
    equilibrium_->nash.best.value2.setZero();
  }

  bool run_pbrl(int mi, std::uint32_t seed, experiment::Progress& progress, long& done) {
    pbrl::PbrlZeroSumSettings<Real> s;
    s.policy.parameterization = pbrl::Parameterization::softmax;
    s.policy.logit_bound = Real(cfg::kLogitBound);
    s.oracle = pbrl::OracleKind::policy_gradient;  // paper: T policy-gradient steps per player
    s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
    s.oracle_policy.logit_bound = Real(cfg::kLogitBound);
    s.inner_steps = cfg::kInner;
    s.oracle_step = Real(cfg::kOracleStep);
    s.step_x = s.step_pi = Real(cfg::kStep);
    s.penalty_start = s.penalty_final = Real(cfg::kLambda);
    s.gradient = c_.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
    s.sampling.horizon = settings::kHorizon;
    s.sampling.batch = cfg::kBatch;
    s.seed = seed;
    if (!check(solver_->init(*problem_, s, Params::Zero(), Matrix1::Zero(), Matrix2::Zero()), "PBRL-NI init"))
      return false;
    reset_gap_warm_start();
    const long per = steps_per_iteration(Method::pbrl_ni);
    const std::vector<long> ks = checkpoints(c_, Method::pbrl_ni);
    long k = 0;
    for (std::size_t j = 0; j < ks.size(); ++j) {
      for (; k < ks[j]; ++k) {
        if (!check(solver_->step(), "PBRL-NI step")) return false;
        done += per;
        progress.update(done);
      }
      const std::int64_t steps = c_.sampled ? solver_->environment_steps() : std::int64_t(k) * per;
      if (steps != std::int64_t(k) * per) {
        std::fprintf(stderr, "\nPBRL-NI counted %" PRId64 " environment steps after %ld iterations, expected %ld\n",
                     steps, k, k * per);
        return false;
      }
      solver_->policy1(*pi1_);
      solver_->policy2(*pi2_);
      if (!record(mi, j, k, steps, solver_->x())) return false;
    }
    return true;
  }

  bool run_meta_gradient(int mi, Method m, std::uint32_t seed, experiment::Progress& progress, long& done) {
    pbrl::MetaGradientSettings<Real> s;
    s.policy.parameterization = pbrl::Parameterization::softmax;
    s.policy.logit_bound = Real(cfg::kLogitBound);
    s.agent_steps = cfg::kInner;
    s.agent_step = Real(cfg::kStep);
    s.designer_step = Real(cfg::kStep);
    s.learn_incentive = m == Method::meta_gradient;  // start line: x held at 0
    s.gradient = c_.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
    s.sampling.horizon = settings::kHorizon;
    s.sampling.batch = cfg::kBatch;
    s.seed = seed;
    const char* what = m == Method::meta_gradient ? "meta-gradient" : "start line";
    if (!check(baseline_->init(*problem_, s, Params::Zero(), Matrix1::Zero(), Matrix2::Zero()), what)) return false;
    reset_gap_warm_start();
    const long per = steps_per_iteration(m);
    const std::vector<long> ks = checkpoints(c_, m);
    long k = 0;
    for (std::size_t j = 0; j < ks.size(); ++j) {
      for (; k < ks[j]; ++k) {
        if (!check(baseline_->step(), what)) return false;
        done += per;
        progress.update(done);
      }
      const std::int64_t steps = c_.sampled ? baseline_->environment_steps() : std::int64_t(k) * per;
      if (steps != std::int64_t(k) * per) {
        std::fprintf(stderr, "\n%s counted %" PRId64 " environment steps after %ld iterations, expected %ld\n", what,
                     steps, k, k * per);
        return false;
      }
      baseline_->policy1(*pi1_);
      baseline_->policy2(*pi2_);
      if (!record(mi, j, k, steps, baseline_->x())) return false;
    }
    return true;
  }

  const Config& c_;
  Results& results_;
  std::unique_ptr<EnvironmentArrays> arrays_;
  std::unique_ptr<Problem> problem_ = std::make_unique<Problem>();
  std::unique_ptr<Solver> solver_ = std::make_unique<Solver>();
  std::unique_ptr<Baseline> baseline_ = std::make_unique<Baseline>();
  std::unique_ptr<typename Problem::Model> model_ = std::make_unique<typename Problem::Model>();
  std::unique_ptr<pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct>> ws_ =
      std::make_unique<pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct>>();
  std::unique_ptr<pbrl::Evaluation<Real, S, J>> eval_ = std::make_unique<pbrl::Evaluation<Real, S, J>>();
  std::unique_ptr<pbrl::BestResponseWorkspace<Real, S, A1, A2>> best_ =
      std::make_unique<pbrl::BestResponseWorkspace<Real, S, A1, A2>>();
  std::unique_ptr<Params> grad_x_ = std::make_unique<Params>();
  std::unique_ptr<Matrix1> pi1_ = std::make_unique<Matrix1>(), grad1_ = std::make_unique<Matrix1>();
  std::unique_ptr<Matrix2> pi2_ = std::make_unique<Matrix2>(), grad2_ = std::make_unique<Matrix2>();
  // The honest metric's own M(x), equilibrium solver and evaluation (default settings).
  std::unique_ptr<Problem::BilevelValueWorkspace> equilibrium_ = std::make_unique<Problem::BilevelValueWorkspace>();
};

// The settings block, written as the CSV's comment header and printed with the results.
std::string settings_text(const Config& c) {
  char b[6144];
  const long bh = static_cast<long>(cfg::kBatch) * settings::kHorizon;
  std::snprintf(
      b, sizeof b,
      "Figure 3, incentive design (paper: Section \"Simulation / Incentive design\")\n"
      "environments: %ld random environments (%s), seeds %ld*1000 + g, g = 0..%ld\n"
      "|S| = %d, |A_1| = %d, |A_2| = %d (paper)\n"
      "rewards r, r_id: uniform [0,1] (paper); transitions P, P_id uniform then normalized (paper); "
      "no designer cost (paper, ERRATA 6)\n"
      "discount gamma = %.2f (choice); rho uniform (choice)\n"
      "agents: zero-sum on r_x = r + %.2g sigmoid(x) (paper), entropy tau = %.3g for both (choice)\n"
      "x in [-%.3g, %.3g]^(S*A1*A2) (choice); softmax agents (paper), logits in [-%.3g, %.3g] (choice); "
      "start x = 0, y1 = y2 = 0 (uniform policies)\n"
      "learning rate %.3g for x, y1, y2 of every method (paper)\n"
      "PBRL-NI: lambda %.3g (paper, constant); oracle: T = %d policy-gradient step(s) per player of step %.3g "
      "(paper), softmax\n"
      "meta-gradient: T = %d agents' step(s) of %.3g, designer step %.3g (paper); start line: the same agents "
      "with x held at 0\n"
      "gradient mode: %s\n"
      "Monte Carlo: trajectory length H = %d, batch B = %d (paper)\n"
      "environment steps per iteration: PBRL-NI (2T+2)*B*H = %ld, meta-gradient (T+1)*B*H = %ld, "
      "start line T*B*H = %ld\n"
      "%s"
      "budget: %ld environment steps per run (%s); %ld checkpoints\n"
      "metrics (exact, model-based): designer reward V_id^{pi}(rho) = -f(pi) on (P_id, r_id); NE gap psi(x, pi) "
      "on M(x) (soft value iteration, <= %d sweeps, tolerance %.0e)\n"
      "designer reward, two of them: designer_reward_current_agents = V_id^{pi}(rho) at the agents' current "
      "policies (the paper's Figure 3 plots this one); designer_reward_equilibrium = V_id^{pi_NE(x)}(rho) at the "
      "exact regularized Nash equilibrium of M(x) (Shapley iteration with Newton on each state's matrix game, "
      "certified psi <= %.1e), what the designer gets from agents that really play the equilibrium\n"
      "mean and standard error of the mean over environments\n",
      c.games, c.quick ? "--quick" : "paper: 5", c.seed, c.games - 1, S, A1, A2, settings::kDiscount,
      cfg::kIncentiveScale, cfg::kTau, cfg::kIncentiveBound, cfg::kIncentiveBound, cfg::kLogitBound,
      cfg::kLogitBound, cfg::kStep, cfg::kLambda, cfg::kInner, cfg::kOracleStep, cfg::kInner, cfg::kStep, cfg::kStep,
      c.sampled ? "sampled (agents' and penalty gradients from rollouts; the designer's gradients exact)"
                : "exact (every gradient model-based)",
      settings::kHorizon, cfg::kBatch, (2 * cfg::kInner + 2) * bh, (cfg::kInner + 1) * bh, cfg::kInner * bh,
      c.sampled ? "x axis: environment steps counted by the solvers\n"
                : "x axis: environment steps the same iterations would take in sampled mode (none are taken)\n",
      c.budget, c.quick ? "--quick, choice" : "choice", c.points, kGapSweeps, kGapTolerance,
      static_cast<double>(pbrl::BestResponseSettings<Real>{}.tolerance));
  return b;
}


bool write_csv(const std::string& path, const Config& c, const Results& r) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "%s", experiment::prefixed(settings_text(c), "# ").c_str());
  std::fprintf(f,
               "method,env_steps,designer_reward_current_agents_mean,designer_reward_current_agents_se,"
               "designer_reward_equilibrium_mean,designer_reward_equilibrium_se,ne_gap_mean,ne_gap_se\n");
  for (int mi = 0; mi < kMethodCount; ++mi)
    for (std::size_t j = 0; j < r.env_steps[mi].size(); ++j)
      std::fprintf(f, "%s,%ld,%.10g,%.6g,%.10g,%.6g,%.10g,%.6g\n", name(kMethods[mi]), r.env_steps[mi][j],
                   r.designer[mi].mean(j), r.designer[mi].stderr_of_mean(j), r.designer_equilibrium[mi].mean(j),
                   r.designer_equilibrium[mi].stderr_of_mean(j), r.gap[mi].mean(j), r.gap[mi].stderr_of_mean(j));
  return std::fclose(f) == 0;
}

bool write_plot(const std::string& png, const std::string& csv, const Config& c) {
  const char* colors[kMethodCount] = {"#1f77b4", "#d62728", "#2ca02c"};  // start line green, as the paper's
  const bool millions = c.budget >= 1000000;
  const std::string scale = millions ? "1e6" : "1e3";
  const std::string unit = millions ? "millions" : "thousands";
  auto panel = [&](int mean_col, const char* ylabel, const char* title) {
    std::string s = "set title '" + std::string(title) + "'\nset xlabel 'environment steps (" + unit +
                    ")'\nset ylabel '" + ylabel + "'\nplot ";
    for (int mi = 0; mi < kMethodCount; ++mi) {
      const std::string sel = "(strcol(1) eq '" + std::string(name(kMethods[mi])) + "' ? ";
      const std::string m = "$" + std::to_string(mean_col), se = "$" + std::to_string(mean_col + 1);
      const std::string x = "($2/" + scale + ")";
      s += "'" + csv + "' using " + x + ":" + sel + m + "-" + se + " : 1/0):" + sel + m + "+" + se +
           " : 1/0) with filledcurves fc rgb '" + colors[mi] + "' fs transparent solid 0.2 noborder notitle, \\\n     ";
      s += "'" + csv + "' using " + x + ":" + sel + m + " : 1/0) with lines lw 2 lc rgb '" + colors[mi] +
           "' title '" + short_label(kMethods[mi]) + "'";
      s += mi + 1 < kMethodCount ? ", \\\n     " : "\n";
    }
    return s;
  };
  char head[512];
  std::snprintf(head, sizeof head,
                "set datafile separator ','\nset grid\nset key below horizontal maxcols 3 samplen 2 reverse Left width -1\n"
                "set multiplot layout 1,3 title 'Incentive design, %d states, %ld environments, %s gradients "
                "(mean +- standard error)'\n",
                S, c.games, c.sampled ? "sampled" : "exact");
  std::string script = head;
  script += panel(3, "V_id(rho)", "designer reward, current agents: V_id^{pi}(rho) = -f(pi) (paper)");
  script += panel(5, "V_id(rho)", "designer reward at the exact NE of M(x): V_id^{pi_NE(x)}(rho)");
  script += panel(7, "psi", "NE gap psi(x, pi) on M(x)");
  script += "unset multiplot\n";
  return experiment::plot(png, script, 1800);
}

int run(const Config& c) {
  Results results;
  auto runner = std::make_unique<Runner>(c, results);
  long total = 0;
  for (Method m : kMethods) total += c.games * checkpoints(c, m).back() * steps_per_iteration(m);
  experiment::Progress progress("figure 3 (environment steps, all environments and methods)", total, c.quiet);
  long done = 0;
  for (long g = 0; g < c.games; ++g)
    if (!runner->run_environment(g, progress, done)) return 1;
  const double seconds = progress.seconds();

  if (!experiment::make_directories(c.out)) return 1;
  const std::string csv = c.out + "/figure3_incentive.csv", png = c.out + "/figure3_incentive.png";
  if (!write_csv(csv, c, results)) {
    std::fprintf(stderr, "cannot write %s\n", csv.c_str());
    return 1;
  }
  const bool plotted = write_plot(png, csv, c);

  std::printf("%s", experiment::prefixed(settings_text(c), "  ").c_str());
  std::printf("\n%-26s %9s %10s %9s %20s %20s %20s %20s\n", "method", "iters", "env steps", "wall s",
              "V_id(pi) start", "V_id(pi) end", "V_id(NE) end", "NE gap end");
  for (int mi = 0; mi < kMethodCount; ++mi) {
    const std::size_t last = results.env_steps[mi].size() - 1;
    const auto& D = results.designer[mi];
    const auto& E = results.designer_equilibrium[mi];
    const auto& G = results.gap[mi];
    std::printf("%-26s %9ld %10ld %9.1f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f\n",
                label(kMethods[mi]), results.iterations[mi][last], results.env_steps[mi][last], results.seconds[mi],
                D.mean(0), D.stderr_of_mean(0), D.mean(last), D.stderr_of_mean(last), E.mean(last),
                E.stderr_of_mean(last), G.mean(last), G.stderr_of_mean(last));
  }
  std::printf("(V_id(pi): designer reward at the agents' current policies, the paper's metric; V_id(NE): at the exact\n"
              " regularized NE of M(x), %.5f at the start; NE gap at the start: %.5f; +- is the standard error over\n"
              " %ld environments)\n",
              results.designer_equilibrium[0].mean(0), results.gap[0].mean(0), c.games);
  std::printf("(equilibria certified: largest certified psi %.2e; %ld checkpoint(s) above the tolerance)\n",
              results.worst_certificate, results.not_converged);
  std::printf("wrote %s%s%s (%.1f s)\n", csv.c_str(), plotted ? " and " : "", plotted ? png.c_str() : "", seconds);
  for (int mi = 0; mi < kMethodCount; ++mi) {
    const std::size_t last = results.env_steps[mi].size() - 1;
    std::printf("summary,figure3,%s,designer_reward_current_agents_start,%.6f\n", name(kMethods[mi]),
                results.designer[mi].mean(0));
    std::printf("summary,figure3,%s,designer_reward_current_agents_end,%.6f\n", name(kMethods[mi]),
                results.designer[mi].mean(last));
    std::printf("summary,figure3,%s,designer_reward_equilibrium_start,%.6f\n", name(kMethods[mi]),
                results.designer_equilibrium[mi].mean(0));
    std::printf("summary,figure3,%s,designer_reward_equilibrium_end,%.6f\n", name(kMethods[mi]),
                results.designer_equilibrium[mi].mean(last));
    std::printf("summary,figure3,%s,ne_gap_end,%.6f\n", name(kMethods[mi]), results.gap[mi].mean(last));
  }
  return 0;
}

std::string usage() {
  char b[4096];
  const long bh = static_cast<long>(cfg::kBatch) * settings::kHorizon;
  std::snprintf(
      b, sizeof b,
      "usage: incentive_experiment [options]\n"
      "The paper's Figure 3: the designer's reward and the agents' NE gap against environment steps\n"
      "for PBRL-NI (lambda %g, T %d), the meta-gradient method and the start line (agents learning\n"
      "without incentive) on random incentive-design problems (settings in\n"
      "examples/experiment_settings.hpp). The designer's reward is reported twice: at the agents'\n"
      "current policies (the paper's metric) and at the exact regularized Nash equilibrium of M(x)\n"
      "(the bilevel answer).\n\n"
      "  --gradient exact|sampled  sampled (default): the agents learn from Monte-Carlo rollouts\n"
      "                            (B = %d, H = %d); the x axis is the solvers' own environment-step\n"
      "                            count. exact: model-based gradients; the x axis counts the steps the\n"
      "                            same iterations would take in sampled mode: (2T+2)*B*H = %ld per\n"
      "                            PBRL-NI iteration, (T+1)*B*H = %ld per meta-gradient one and\n"
      "                            T*B*H = %ld per start-line one.\n"
      "                            In both modes the metrics are exact (model-based).\n"
      "  --games N                 random environments (default %d)\n"
      "  --seed N                  environment g uses seed N*1000 + g (default 1)\n"
      "  --budget STEPS            environment steps per run; every method runs until it used them\n"
      "                            (default %ld)\n"
      "  --points N                checkpoints on the environment-step axis (default %d)\n"
      "  --out DIR                 output directory, created if needed (default results):\n"
      "                            DIR/figure3_incentive.csv and DIR/figure3_incentive.png\n"
      "  --quick                   demo size: %d environments, budget %ld (options above override)\n"
      "  --quiet                   no progress on stderr\n"
      "  --help                    this text\n",
      cfg::kLambda, cfg::kInner, cfg::kBatch, settings::kHorizon, (2 * cfg::kInner + 2) * bh, (cfg::kInner + 1) * bh,
      cfg::kInner * bh, cfg::kGames, cfg::kBudget, cfg::kPoints, cfg::kQuickGames, cfg::kQuickBudget);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  experiment::Options opt(argc, argv, usage());
  Config c;
  c.quick = opt.flag("quick");
  c.quiet = opt.flag("quiet");
  c.sampled = opt.choice("gradient", "sampled", {"exact", "sampled"}) == "sampled";
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
  return run(c);
}
