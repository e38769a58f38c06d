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
// samples. In tolerance mode (--gap-tolerance) PBRL-NI's oracle takes T_k steps per player at
// iteration k and the count is (2T_k + 2)*B*H.
// With exact gradients tolerance mode solves: PBRL-NI steps until solve()'s verdict
// (docs/solving.md) or --max-steps, with a PMD oracle of step 1 unless --oracle says otherwise;
// its last checkpoint is taken there, and the outcome, steps and wall time print per environment.
//
// The hyperparameters are options (--lambda-start, --inner-steps, --step, ..., --gap-tolerance); their
// defaults are the paper's. --sweep-lambda L1,L2,... runs PBRL-NI at each lambda in both gradient
// modes and once in tolerance mode, and writes the final NE gap and designer rewards against lambda.
//
// Output: DIR/figure3_incentive.csv and DIR/figure3_incentive.png (gnuplot), a table and
// `summary,figure3,<method>,<metric>,<value>` lines on stdout, progress on stderr; with
// --sweep-lambda DIR/figure3_lambda_sweep.csv and .png instead.

#include "pbrl/pbrl.hpp"

#include "experiment_driver.hpp"
#include "experiment_settings.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace cfg = settings::incentive;
using experiment::check;
constexpr int S = cfg::kStates;
constexpr int A1 = cfg::kActions1;
constexpr int A2 = cfg::kActions2;
constexpr int J = A1 * A2;
using Real = double;

// The NE-gap measurement: soft value iteration per player, warm-started along each run.
constexpr int kGapSweeps = 2000;
constexpr Real kGapTolerance = 1e-10;

enum class Method { pbrl_ni, meta_gradient, start_line };
constexpr Method kMethods[] = {Method::pbrl_ni, Method::meta_gradient, Method::start_line};
constexpr int kMethodCount = 3;
const std::vector<const char*> kNames = {"pbrl_ni", "meta_gradient", "start_line"};

// The command line: a figure's options (instances: the environments).
using Config = experiment::FigureConfig<kMethodCount>;
const experiment::Program kProgram = {"games", "sampled", kNames,
                                      "--oracle pmd needs --gradient exact (sampled mode learns from rollouts by policy "
                                      "gradient; a sweep's sampled runs fall back to it)"};
const experiment::FigureDefaults kDefaults = {cfg::kGames, cfg::kQuickGames, cfg::kBudget, cfg::kQuickBudget,
                                             cfg::kPoints};

bool is_pbrl(Method m) { return m == Method::pbrl_ni; }

// The learning rate of every method (x, y1, y2; the meta-gradient's agents and designer).
Real step_of(const Config& c) { return Real(c.hp.step ? *c.hp.step : cfg::kStep); }
// T: PBRL-NI's oracle steps per player (tolerance mode: the least number); the meta-gradient's and
// the start line's agents' steps per iteration.
int inner_of(const Config& c) { return c.hp.inner_steps ? static_cast<int>(*c.hp.inner_steps) : cfg::kInner; }

// PBRL-NI's settings: the paper's, then the command line's hyperparameters.
pbrl::PbrlZeroSumSettings<Real> pbrl_settings(const Config& c, std::uint32_t seed) {
  pbrl::PbrlZeroSumSettings<Real> s;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = Real(cfg::kLogitBound);
  s.oracle = pbrl::OracleKind::policy_gradient;  // paper: T policy-gradient steps per player
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle_policy.logit_bound = Real(cfg::kLogitBound);
  s.inner_steps = cfg::kInner;
  s.oracle_step = Real(cfg::kOracleStep);
  s.step_x = s.step_pi = Real(cfg::kStep);
  s.lambda_start = s.lambda_final = Real(cfg::kLambda);
  c.hp.apply(s);
  if (c.hp.step) s.step_pi = Real(*c.hp.step);
  c.hp.choose_solve_oracle(s, c.sampled);
  experiment::set_sampling(s, c.sampled, cfg::kBatch, seed);
  return s;
}

// The meta-gradient's settings (the start line: the same agents with x held at 0).
pbrl::MetaGradientSettings<Real> meta_settings(const Config& c, Method m, std::uint32_t seed) {
  pbrl::MetaGradientSettings<Real> s;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = Real(cfg::kLogitBound);
  s.agent_steps = inner_of(c);
  s.agent_step = step_of(c);
  s.designer_step = step_of(c);
  s.learn_incentive = m == Method::meta_gradient;  // start line: x held at 0
  experiment::set_sampling(s, c.sampled, cfg::kBatch, seed);
  return s;
}

// Legend and table: the method with the lambda and T it used.
std::string label(const Config& c, Method m) {
  char b[160];
  if (m == Method::meta_gradient) {
    std::snprintf(b, sizeof b, "meta-gradient (T %d)", inner_of(c));
    return b;
  }
  if (m == Method::start_line) return "start line (x held at 0)";
  return experiment::pbrl_label("PBRL-NI", pbrl_settings(c, 1));
}

const long kBH = static_cast<long>(cfg::kBatch) * settings::kHorizon;

// Environment steps of one iteration in sampled mode (and on the exact mode's axis): PBRL-NI's
// oracle took `inner` steps per player; the meta-gradient and the start line take T agents' steps.
long steps_of_iteration(const Config& c, Method m, std::int64_t inner) {
  switch (m) {
    case Method::pbrl_ni: return (2 * static_cast<long>(inner) + 2) * kBH;
    case Method::meta_gradient: return (inner_of(c) + 1L) * kBH;
    case Method::start_line: return inner_of(c) * kBH;
  }
  return kBH;
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

// value_current: the designer's reward at the agents' current policies; value: at the exact
// regularized NE of M(x); gap: the NE gap psi(x, pi).
using Point = experiment::FigurePoint;
using Results = experiment::FigureTotals<kMethodCount>;
using GameResult = Results::Record;

class Runner {
 public:
  using Problem = pbrl::IncentiveDesign<Real, S, A1, A2>;
  using Params = Problem::Params;
  using Matrix1 = Problem::Matrix1;
  using Matrix2 = Problem::Matrix2;
  using Solver = pbrl::PbrlZeroSum<Problem>;
  using Baseline = pbrl::MetaGradient<Problem>;

  explicit Runner(const Config& c) : c_(c) {}

  // Runs every selected method on environment g; false (after a message) on a library error.
  bool run_instance(long g, experiment::Progress& progress, GameResult& result) {
    arrays_ = std::make_unique<EnvironmentArrays>(experiment::instance_seed(c_, g));
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
    return experiment::run_methods(c_.run, result, [&](int mi) {
      const Method m = kMethods[mi];
      const std::uint32_t seed = experiment::instance_seed(c_, g) * 4u + static_cast<std::uint32_t>(mi);
      return is_pbrl(m) ? run_pbrl(mi, seed, progress, result) : run_meta_gradient(mi, m, seed, progress, result);
    });
  }

 private:

  // Exact metrics of (x, pi1, pi2): V_id^{pi}(rho) = -f(pi), psi(x, pi) on M(x) (best responses
  // warm-started from the run's previous checkpoint) and V_id at the exact regularized NE of M(x).
  bool measure(const Params& x, Point& p, GameResult& result) {
    typename Problem::GameType game;
    if (!check(problem_->build(x, *model_, game), "build M(x)")) return false;
    Real f(0), gap(0);
    if (!check(problem_->upper(*pi1_, *pi2_, *model_, *ws_, *eval_, f, *grad_x_, *grad1_, *grad2_),
               "designer value"))
      return false;
    if (!check(pbrl::nikaido_isoda_exact(game, *pi1_, *pi2_, kGapSweeps, kGapTolerance, *best_, gap), "NE gap"))
      return false;
    pbrl::BestResponseValue<Real> honest;
    if (!check(problem_->value_at_best_response(x, *equilibrium_, honest), "designer reward at the NE")) return false;
    result.certify(honest);
    p.value_current = -f;
    p.value = honest.value;
    p.gap = gap;
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

  // Steps `solver` (PbrlZeroSum or MetaGradient) through the checkpoints
  // (experiment::step_checkpoints).
  template <class Run, class Report>
  bool run_checkpoints(int mi, Run& solver, Report& report, const char* what, experiment::Progress& progress,
                       GameResult& result) {
    const Method m = kMethods[mi];
    reset_gap_warm_start();
    return experiment::step_checkpoints<Real>(
        c_, solver, report, result.solve[mi], result.tolerance_met[mi], c_.hp.solve_cap(cfg::kSolveSteps), progress,
        what, what, [&] { return solver.step(&report); },
        [&](std::int64_t inner) { return steps_of_iteration(c_, m, inner); },
        experiment::figure_checkpoint(result.points[mi], [&](Point& p) {
          solver.policy1(*pi1_);
          solver.policy2(*pi2_);
          return measure(solver.x(), p, result);
        }));
  }

  bool run_pbrl(int mi, std::uint32_t seed, experiment::Progress& progress, GameResult& result) {
    if (!check(solver_->init(*problem_, pbrl_settings(c_, seed), Params::Zero(), Matrix1::Zero(), Matrix2::Zero()),
               "PBRL-NI init"))
      return false;
    typename Solver::Report report;
    return run_checkpoints(mi, *solver_, report, "PBRL-NI", progress, result);
  }

  bool run_meta_gradient(int mi, Method m, std::uint32_t seed, experiment::Progress& progress, GameResult& result) {
    const char* what = m == Method::meta_gradient ? "meta-gradient" : "start line";
    if (!check(baseline_->init(*problem_, meta_settings(c_, m, seed), Params::Zero(), Matrix1::Zero(),
                               Matrix2::Zero()),
               what))
      return false;
    typename Baseline::Report report;
    return run_checkpoints(mi, *baseline_, report, what, progress, result);
  }

  const Config& c_;
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

// Every environment on c.jobs threads (one Runner each), merged in environment order.
bool run_games(const Config& c, Results& results, double& seconds) {
  return experiment::run_figure_instances<Runner>(c, "figure 3 (iterations, all environments and methods)",
                                                  "figure 3 (environment steps, all environments and methods)",
                                                  results, seconds);
}

// The settings block, written as the CSV's comment header and printed with the results: every value
// the run used.
std::string settings_text(const Config& c) {
  std::string methods;
  if (c.run[0]) {
    const auto s = pbrl_settings(c, 1);
    char b[128];
    std::snprintf(b, sizeof b, ", step_pi %g", double(s.step_pi));
    methods += "pbrl_ni: " + experiment::describe(s) + b + "\n";
  }
  for (int mi = 1; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    const auto s = meta_settings(c, kMethods[mi], 1);
    char b[256];
    if (s.learn_incentive)
      std::snprintf(b, sizeof b, "meta_gradient: T = %d agents' step(s) of %g, designer step %g\n", s.agent_steps,
                    double(s.agent_step), double(s.designer_step));
    else
      std::snprintf(b, sizeof b, "start_line: T = %d agents' step(s) of %g, x held at 0\n", s.agent_steps,
                    double(s.agent_step));
    methods += b;
  }
  const std::string run_length =
      c.hp.iterations ? "run length: " + std::to_string(*c.hp.iterations) + " iterations per method (--iterations)"
                      : "budget: " + std::to_string(c.budget) + " environment steps per run (" +
                            (c.quick ? "--quick, choice" : "choice") + ")";
  const int T = inner_of(c);
  char b[8192];
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
      "paper settings: learning rate %.3g for x, y1, y2 of every method; PBRL-NI lambda %.3g (constant); oracle: "
      "T = %d policy-gradient step(s) per player of step %.3g, softmax; meta-gradient: T = %d agents' step(s), "
      "designer step %.3g; start line: the same agents with x held at 0\n"
      "%s"
      "gradient mode: %s\n"
      "Monte Carlo: trajectory length H = %d, batch B = %d (paper)\n"
      "environment steps per iteration: PBRL-NI (2T_k+2)*B*H with T_k the oracle steps per player of iteration k "
      "(fixed mode T_k = T), meta-gradient (T+1)*B*H = %ld, start line T*B*H = %ld\n"
      "%s"
      "%s; %ld checkpoints\n"
      "metrics (exact, model-based): designer reward V_id^{pi}(rho) = -f(pi) on (P_id, r_id); NE gap psi(x, pi) "
      "on M(x) (soft value iteration, <= %d sweeps, tolerance %.0e)\n"
      "designer reward, two of them: designer_reward_current_agents = V_id^{pi}(rho) at the agents' current "
      "policies (the paper's Figure 3 plots this one); designer_reward_equilibrium = V_id^{pi_NE(x)}(rho) at the "
      "exact regularized Nash equilibrium of M(x) (Shapley iteration with Newton on each state's matrix game, "
      "certified psi <= %.1e), what the designer gets from agents that really play the equilibrium\n"
      "lambda: PBRL-NI's penalty constant at the checkpoint (tolerance mode: as adapted)\n"
      "mean and standard error of the mean over environments\n",
      c.instances, c.quick ? "--quick" : "paper: 5", c.seed, c.instances - 1, S, A1, A2, settings::kDiscount,
      cfg::kIncentiveScale, cfg::kTau, cfg::kIncentiveBound, cfg::kIncentiveBound, cfg::kLogitBound,
      cfg::kLogitBound, cfg::kStep, cfg::kLambda, cfg::kInner, cfg::kOracleStep, cfg::kInner, cfg::kStep,
      methods.c_str(),
      c.sampled ? "sampled (agents' and penalty gradients from rollouts; the designer's gradients exact)"
                : "exact (every gradient model-based)",
      settings::kHorizon, cfg::kBatch, (T + 1L) * kBH, T * kBH,
      c.sampled ? "x axis: environment steps counted by the solvers\n"
                : "x axis: environment steps the same iterations would take in sampled mode (none are taken)\n",
      run_length.c_str(), c.points, kGapSweeps, kGapTolerance,
      static_cast<double>(pbrl::BestResponseSettings<Real>{}.tolerance));
  return b;
}

const experiment::Figure kFigure = {
    "figure3", "figure3_incentive", "figure3_lambda_sweep", kNames, {true, false, false},
    "designer_reward_current_agents", "designer_reward_equilibrium", "ne_gap", "environment", "environments",
    "NE gap", true, 38, true, 9, {"V_id(pi) start", "V_id(pi) end", "V_id(NE) end", "NE gap end"},
    "(V_id(pi): designer reward at the agents' current policies, the paper's metric; V_id(NE): at the exact\n"
    " regularized NE of M(x), %.5f at the start; NE gap at the start: %.5f; +- is the standard error over\n"
    " %ld environments; wall s: CPU-bound wall time of the method summed over environments)\n",
    "equilibria", "psi", true, "V_{id}(ρ)", "ψ",
    {"designer reward, current agents: V_{id}^{π}(ρ) = -f(π) (the paper's metric)",
     "designer reward at the exact regularized NE: V_{id}^{π_{NE}(x)}(ρ)", "NE gap ψ(x, π) on M(x)"},
    "NE gap ψ", "V_{id}^{π_{NE}(x)}(ρ)"};

// --sweep-lambda: PBRL-NI alone at each fixed lambda, exact and sampled, then tolerance mode.
int run_sweep(const Config& c) {
  return experiment::run_figure_sweep<kMethodCount>(
      kFigure, c, "Incentive design", S, [](int mi) { return is_pbrl(kMethods[mi]); }, settings_text,
      [&](double tolerance, bool pmd) {
        char tail[512];
        std::snprintf(
            tail, sizeof tail,
            "sweep: PBRL-NI at lambda in {%s}, exact and sampled; tolerance mode at epsilon %g, exact and sampled\n"
            "%s",
            experiment::lambda_list(c.sweep, "%g").c_str(), tolerance,
            pmd ? "the settings above are exact mode's; sampled runs use the paper's policy-gradient oracle and step\n"
                : "");
        return std::string(tail);
      },
      run_games, [](int) { return "PBRL-NI"; }, [](int) { return cfg::kLambda; });
}

int run(const Config& c) {
  if (!experiment::make_directories(c.out)) return 1;
  if (!c.sweep.empty()) return run_sweep(c);

  return experiment::run_figure<kMethodCount>(
      kFigure, c, run_games, settings_text, [&](int mi) { return label(c, kMethods[mi]); }, "Incentive design", S,
      "environments");
}

std::string usage() {
  char head[1024], exact_steps[512];
  std::snprintf(
      head, sizeof head,
      "usage: incentive_experiment [options]\n"
      "The paper's Figure 3: the designer's reward and the agents' NE gap against environment steps\n"
      "for PBRL-NI (lambda %g, T %d), the meta-gradient method and the start line (agents learning\n"
      "without incentive) on random incentive-design problems (settings in\n"
      "examples/experiment_settings.hpp). The designer's reward is reported twice: at the agents'\n"
      "current policies (the paper's metric) and at the exact regularized Nash equilibrium of M(x)\n"
      "(the bilevel answer).\n\n",
      cfg::kLambda, cfg::kInner);
  std::snprintf(exact_steps, sizeof exact_steps,
                "(2T_k+2)*B*H per PBRL-NI\n"
                "                            iteration (T_k its oracle steps per player), (T+1)*B*H per\n"
                "                            meta-gradient one and T*B*H per start-line one (B*H = %ld).\n",
                kBH);
  return head + experiment::figure_gradient_usage("the agents learn", cfg::kBatch, settings::kHorizon, exact_steps) +
         experiment::figure_run_usage(kProgram, kFigure, kDefaults) +
         "Hyperparameters (PBRL-NI's; --step also the meta-gradient's and the start line's learning\n"
         "rates, --inner-steps also their agents' steps T per iteration, --iterations every method's):\n" +
         experiment::Hyperparameters::usage() +
         "  --sweep-lambda L1,L2,...  PBRL-NI at each fixed lambda, exact and sampled, and in tolerance\n"
         "                            mode (--gap-tolerance, default 0.01): final NE gap and designer\n"
         "                            rewards against lambda in DIR/figure3_lambda_sweep.csv and .png\n" +
         experiment::figure_output_usage(kFigure, kDefaults, std::to_string(kDefaults.quick_instances) + " environments");
}

}  // namespace

int main(int argc, char** argv) {
  experiment::Options opt(argc, argv, usage());
  Config c;
  const experiment::OptionTexts texts = experiment::read_figure_options(opt, c, kProgram, kDefaults);
  // A sweep runs PBRL-NI alone.
  const int code = experiment::check_figure_options(opt, c, texts, kProgram, [](const Config& run) -> std::string {
    const bool sweep = !run.sweep.empty();
    if ((sweep || run.run[0]) && pbrl::validate(pbrl_settings(run, 1)) != pbrl::Status::ok)
      return "these hyperparameters are not valid PBRL-NI settings (see --help and solver/settings.hpp)";
    for (int mi = 1; mi < kMethodCount && !sweep; ++mi)
      if (run.run[mi] && pbrl::validate(meta_settings(run, kMethods[mi], 1)) != pbrl::Status::ok)
        return "these hyperparameters are not valid meta-gradient / start-line settings (T = --inner-steps "
               "must be at least 1; --methods pbrl_ni runs PBRL-NI alone)";
    return {};
  });
  if (code >= 0) return code;
  return run(c);
}
