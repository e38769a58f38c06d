// How the penalty solvers reach a lower-level gap tolerance (solver/penalty_schedule.hpp,
// tolerance mode), measured on random instances of both kinds of lower level (bench/
// random_instances.hpp): Stackelberg games with Pbrl (value penalty) and zero-sum incentive
// designs with PbrlZeroSum (Nikaido-Isoda penalty). Every run: exact gradients, x = 0, y = 0,
// settings.gap_tolerance = epsilon and the configuration's other settings, `--steps` calls of
// step(&report), never stopped early. Per run it records the first step whose report has
// tolerance_met, the process CPU time (CLOCK_PROCESS_CPUTIME_ID, step() calls only) up to and
// including it, the final and the smallest report.gap_bound, the final lambda
// (report.lambda), whether the run ran away (final gap > max(epsilon, 2 x smallest
// gap)) or ended with lambda at lambda_max, and the upper level's value at the exact lower-level
// solution of the final x (value_at_best_response: the leader against the follower's regularized
// best response, the designer at the agents' regularized Nash equilibrium).
//
// Output: a CSV line per run (stdout, or --csv FILE), then per configuration and kind a summary,
// and the runs that ran away or ended with lambda at its cap with the options that repeat them.
// --epsilon-sweep also runs each instance at the sweep tolerance and prints the relative change
// of the value at the exact solution; --trace FILE writes a line per step. Single-threaded; progress
// on stderr. Results in docs/tolerance.md.

#include "pbrl/pbrl.hpp"

#include "experiment.hpp"  // examples/: experiment::Options, the host programs' option parser
#include "random_instances.hpp"
#include "../tools/codegen/renamed_settings.hpp"  // old settings names, refused with the new

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

// ---- Configurations ----------------------------------------------------------------------------

// Settings changed from the solvers' defaults (negative: left as constructed). lower_step is
// step_y of Pbrl and step_pi of PbrlZeroSum.
struct Configuration {
  const char* name;
  int inner_steps = -1;
  double oracle_step = -1, step_x = -1, lower_step = -1, lambda_start = -1;
};

const Configuration kConfigurations[] = {
    {"defaults"},
    {"user-tuning", 1, 0.7, 0.3, 0.2, 5},
    {"larger-steps", 1, -1, 0.5, 0.5, -1},
    {"small-lambda-start", -1, -1, -1, -1, 0.1},
    {"large-lambda-start", -1, -1, -1, -1, 50},
};

// --set NAME=VALUE,...: settings changed before every configuration's own (candidate defaults).
std::vector<std::pair<std::string, double>> g_defaults;

// Applies one --set pair; false for a name it does not know. lower_step names step_y / step_pi.
template <class Settings>
bool set_field(Settings& s, const std::string& name, double v, double Settings::*lower_step) {
  if (name == "inner_steps") s.inner_steps = int(v);
  else if (name == "inner_steps_max") s.inner_steps_max = int(v);
  else if (name == "oracle_step") s.oracle_step = v;
  else if (name == "step_x") s.step_x = v;
  else if (name == "lower_step") s.*lower_step = v;
  else if (name == "lambda_start") s.lambda_start = v;
  else if (name == "lambda_max") s.lambda_max = v;
  else if (name == "lambda_growth") s.lambda_growth = v;
  else if (name == "lambda_patience") s.lambda_patience = int(v);
  else if (name == "lambda_stall") s.lambda_stall = v;
  else if (name == "penalty_smoothness") s.penalty_smoothness = v;
  else if (name == "lambda_backoff") s.lambda_backoff = v;
  else if (name == "lambda_step_limit") s.lambda_step_limit = v;
  else if (name == "oracle_gap_fraction") s.oracle_gap_fraction = v;
  else if (name == "stationarity_tolerance") s.stationarity_tolerance = v;
  else if (name == "continuation_start") s.continuation_start = v;
  else if (name == "continuation_divisor") s.continuation_divisor = v;
  else if (name == "continuation_patience") s.continuation_patience = int(v);
  else if (name == "lower_geometry") s.lower_geometry = pbrl::LowerGeometry(int(v));
  else return false;
  return true;
}

// The settings of a run: constructed, gradient exact, gap_tolerance = eps, the --set pairs, then
// c's changes.
template <class Settings>
Settings settings_of(const Configuration& c, double eps, double Settings::*lower_step) {
  Settings s;
  s.gradient = pbrl::GradientMode::exact;
  s.gap_tolerance = eps;
  for (const auto& [name, v] : g_defaults) set_field(s, name, v, lower_step);
  if (c.inner_steps >= 0) s.inner_steps = c.inner_steps;
  if (c.oracle_step > 0) s.oracle_step = c.oracle_step;
  if (c.step_x > 0) s.step_x = c.step_x;
  if (c.lower_step > 0) s.*lower_step = c.lower_step;
  if (c.lambda_start > 0) s.lambda_start = c.lambda_start;
  return s;
}

// ---- One run -----------------------------------------------------------------------------------

struct RunResult {
  std::string kind, config, status = "ok";
  int index = 0, states = 0, actions1 = 0, actions2 = 0;
  std::uint32_t seed = 0;
  double discount = 0, tau = 0, eps = 0;
  long steps = 0;            // step() calls that succeeded
  long first_met = -1;       // 1-based step() call whose report first had tolerance_met; -1: never
  double cpu_to_met = -1;    // seconds of process CPU in step() up to and including that call
  double cpu_total = 0;      // seconds of process CPU in all step() calls
  double final_gap = 0, min_gap = 0;
  long min_gap_step = 0;     // 1-based call of the smallest gap_bound
  double final_lambda = 0, lambda_max = 0;
  long inner_steps = 0;      // oracle steps of all calls (zero-sum: the larger player's per call)
  bool runaway = false, lambda_at_cap = false;
  double value = 0, value_gap = 0;  // value at the exact lower-level solution, its certificate
  bool value_converged = false;
  double ratio() const { return min_gap > 0 ? final_gap / min_gap : (final_gap > 0 ? INFINITY : 1.0); }
};

// --trace: a line per step() of every run (nullptr: none).
std::FILE* g_trace = nullptr;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Steps `solver` `steps` times and fills r's step fields; false on a library error (r.status).
template <class Solver>
bool run_steps(Solver& solver, long steps, RunResult& r) {
  typename Solver::Report report;
  double cpu = 0;
  for (long k = 1; k <= steps; ++k) {
    const double t0 = cpu_seconds();
    const pbrl::Status st = solver.step(&report);
    cpu += cpu_seconds() - t0;
    if (st != pbrl::Status::ok) {
      r.status = pbrl::to_string(st);
      break;
    }
    r.steps = k;
    const double gap = double(report.gap_bound);
    if (k == 1 || gap < r.min_gap) {
      r.min_gap = gap;
      r.min_gap_step = k;
    }
    r.final_gap = gap;
    r.final_lambda = double(report.lambda);
    r.inner_steps += long(report.inner_steps);
    if (g_trace)
      std::fprintf(g_trace, "%s,%s,%g,%d,%ld,%.6e,%g,%g,%ld,%d,%d,%.6e,%.8g\n", r.kind.c_str(), r.config.c_str(), r.eps,
                   r.index, k, gap, double(report.lambda), double(report.step_x), long(report.inner_steps),
                   int(report.inner_converged), int(report.tolerance_met), double(report.projected_gradient_norm),
                   double(report.upper_objective));
    if (report.tolerance_met && r.first_met < 0) {
      r.first_met = k;
      r.cpu_to_met = cpu;
    }
  }
  r.cpu_total = cpu;
  r.lambda_max = double(solver.settings().lambda_max);
  r.lambda_at_cap = r.steps > 0 && r.final_lambda >= r.lambda_max;
  r.runaway = r.steps > 0 && r.final_gap > std::max(r.eps, 2 * r.min_gap);
  return r.status == "ok";
}

// The value at the exact lower-level solution of the solver's final x (fresh workspace: no warm
// start carried between runs).
template <class Problem, class Solver>
void measure_value(const Problem& problem, const Solver& solver, RunResult& r) {
  auto ws = std::make_unique<typename Problem::BilevelValueWorkspace>();
  pbrl::BestResponseValue<double> out;
  const pbrl::Status st = problem.value_at_best_response(solver.x(), *ws, out);
  if (st != pbrl::Status::ok) {
    if (r.status == "ok") r.status = std::string("value: ") + pbrl::to_string(st);
    return;
  }
  r.value = out.value;
  r.value_gap = out.lower_level_gap;
  r.value_converged = out.converged;
}

void describe(RunResult& r, const char* kind, const Configuration& c, const bench::InstanceSpec& spec, double eps,
              int n1, int n2, int n3) {
  r.kind = kind;
  r.config = c.name;
  r.index = spec.index;
  r.seed = spec.seed;
  r.discount = spec.discount;
  r.tau = spec.tau;
  r.eps = eps;
  r.states = n1;
  r.actions1 = n2;
  r.actions2 = n3;
}

// One run of Solver on the random Instance of spec (sizes n1, n2, n3 in the CSV) from zero
// parameters and the zero policies given (softmax logits), with the lower level's step the
// settings' member lower_step.
template <class Instance, class Solver, class... Policies>
RunResult run_instance(const char* kind, int n1, int n2, int n3, const bench::InstanceSpec& spec,
                       const Configuration& c, double eps, long steps, double Solver::Settings::*lower_step,
                       const Policies&... zero_policies) {
  using Problem = typename Instance::Problem;
  RunResult r;
  describe(r, kind, c, spec, eps, n1, n2, n3);
  auto instance = std::make_unique<Instance>(spec);
  auto problem = std::make_unique<Problem>();
  auto solver = std::make_unique<Solver>();
  using Settings = typename Solver::Settings;
  pbrl::Status st = problem->init(instance->data());
  if (st == pbrl::Status::ok)
    st = solver->init(*problem, settings_of<Settings>(c, eps, lower_step), Problem::Params::Zero(), zero_policies...);
  if (st != pbrl::Status::ok) {
    r.status = std::string("init: ") + pbrl::to_string(st);
    return r;
  }
  if (run_steps(*solver, steps, r) || r.steps > 0) measure_value(*problem, *solver, r);
  return r;
}

template <int S, int AL, int AF>
RunResult run_stackelberg(const bench::InstanceSpec& spec, const Configuration& c, double eps, long steps) {
  using Instance = bench::StackelbergInstance<S, AL, AF>;
  using Solver = pbrl::Pbrl<typename Instance::Problem>;
  return run_instance<Instance, Solver>("stackelberg", S, AL, AF, spec, c, eps, steps, &Solver::Settings::step_y,
                                        Solver::Matrix::Zero());
}

template <int S, int A1, int A2>
RunResult run_incentive(const bench::InstanceSpec& spec, const Configuration& c, double eps, long steps) {
  using Instance = bench::IncentiveInstance<S, A1, A2>;
  using Solver = pbrl::PbrlZeroSum<typename Instance::Problem>;
  return run_instance<Instance, Solver>("incentive", S, A1, A2, spec, c, eps, steps, &Solver::Settings::step_pi,
                                        Solver::Matrix1::Zero(), Solver::Matrix2::Zero());
}

// ---- Kinds and their sizes ---------------------------------------------------------------------

using RunFunction = RunResult (*)(const bench::InstanceSpec&, const Configuration&, double, long);

// The fixed size combinations (template instantiations), smallest first (--quick runs the first).
// Stackelberg: (S, A_l, A_f); incentive design: (S, A_1, A_2).
const RunFunction kStackelbergSizes[] = {
    run_stackelberg<3, 2, 2>, run_stackelberg<5, 3, 4>, run_stackelberg<8, 5, 2>,
    run_stackelberg<12, 4, 4>, run_stackelberg<20, 5, 5>,
};
const RunFunction kIncentiveSizes[] = {
    run_incentive<3, 2, 2>, run_incentive<5, 3, 3>, run_incentive<8, 4, 2>, run_incentive<10, 5, 5>,
};

struct Kind {
  const char* name;
  const RunFunction* sizes;
  int count;
};
const Kind kKinds[] = {
    {"stackelberg", kStackelbergSizes, int(std::size(kStackelbergSizes))},
    {"incentive", kIncentiveSizes, int(std::size(kIncentiveSizes))},
};

// The entries of table named by names, in their order (null for an unknown name, which is reported
// as an unknown `what` and sets bad).
template <class Entry, std::size_t N>
std::vector<const Entry*> by_name(const Entry (&table)[N], const std::vector<std::string>& names, const char* what,
                                  bool& bad) {
  std::vector<const Entry*> entries;
  for (const auto& name : names) {
    const Entry* found = nullptr;
    for (const auto& e : table)
      if (name == e.name) found = &e;
    if (!found) {
      std::fprintf(stderr, "error: unknown %s '%s'\n", what, name.c_str());
      bad = true;
    }
    entries.push_back(found);
  }
  return entries;
}

// ---- Output ------------------------------------------------------------------------------------

const char* kCsvHeader =
    "kind,config,eps,run,seed,states,actions1,actions2,gamma,tau,status,steps,first_met_step,cpu_to_met_ms,"
    "cpu_total_ms,final_gap,min_gap,min_gap_step,final_over_min,final_lambda,lambda_at_cap,runaway,"
    "inner_steps_total,value_best_response,value_certificate,value_converged\n";

void write_csv(std::FILE* f, const RunResult& r) {
  std::fprintf(f, "%s,%s,%g,%d,%u,%d,%d,%d,%g,%.6f,%s,%ld,%ld,%.4f,%.4f,%.6e,%.6e,%ld,%.6g,%g,%d,%d,%ld,%.10g,%.3e,%d\n",
               r.kind.c_str(), r.config.c_str(), r.eps, r.index, r.seed, r.states, r.actions1, r.actions2, r.discount,
               r.tau, r.status.c_str(), r.steps, r.first_met, r.first_met >= 0 ? 1e3 * r.cpu_to_met : -1.0,
               1e3 * r.cpu_total, r.final_gap, r.min_gap, r.min_gap_step, r.ratio(), r.final_lambda,
               int(r.lambda_at_cap), int(r.runaway), r.inner_steps, r.value, r.value_gap, int(r.value_converged));
  std::fflush(f);
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One summary row: the runs of one configuration, kind and epsilon.
void summary_row(const std::vector<RunResult>& runs, const std::string& config, const std::string& kind, double eps) {
  long n = 0, met = 0, runaways = 0, capped = 0, errors = 0;
  std::vector<double> first, cpu;
  double worst = 0;
  for (const auto& r : runs) {
    if (r.config != config || r.kind != kind || r.eps != eps) continue;
    ++n;
    if (r.status != "ok") ++errors;
    if (r.first_met >= 0) {
      ++met;
      first.push_back(double(r.first_met));
      cpu.push_back(1e3 * r.cpu_to_met);
    }
    runaways += r.runaway;
    capped += r.lambda_at_cap;
    worst = std::max(worst, r.ratio());
  }
  if (n == 0) return;
  char range[48] = "-";
  if (!first.empty())
    std::snprintf(range, sizeof range, "%.0f-%.0f", *std::min_element(first.begin(), first.end()),
                  *std::max_element(first.begin(), first.end()));
  std::printf("| %s | %s | %g | %ld | %ld | %s | %s | %s | %ld | %ld | %.3g | %ld |\n", config.c_str(), kind.c_str(), eps,
              n, met, first.empty() ? "-" : std::to_string(long(median(first))).c_str(), range,
              cpu.empty() ? "-" : number(median(cpu)).c_str(), runaways,
              capped, worst, errors);
}

// Per configuration and kind: relative change of the value at the exact solution from eps_a to eps_b,
// (v_b - v_a) / |v_a|, over the instances run at both, and its magnitude over the clean pairs.
void sweep_row(const std::vector<RunResult>& runs, const std::string& config, const std::string& kind, double eps_a,
               double eps_b) {
  std::vector<double> change, magnitude, clean;
  long drops = 0;  // runs whose value fell by more than 1 %
  // Clean: both runs end at or below their epsilon, neither ran away nor ended with lambda at its cap.
  const auto ends_clean = [](const RunResult& r) { return !r.runaway && !r.lambda_at_cap && r.final_gap <= r.eps; };
  for (const auto& a : runs) {
    if (a.config != config || a.kind != kind || a.eps != eps_a || a.status != "ok") continue;
    for (const auto& b : runs) {
      if (b.config != config || b.kind != kind || b.eps != eps_b || b.index != a.index || b.status != "ok") continue;
      const double rel = (b.value - a.value) / std::max(std::abs(a.value), 1e-300);
      change.push_back(rel);
      drops += rel < -0.01;
      magnitude.push_back(std::abs(rel));
      if (ends_clean(a) && ends_clean(b)) clean.push_back(std::abs(rel));
    }
  }
  if (change.empty()) return;
  std::printf("| %s | %s | %zu | %.3g | %.3g | %.3g | %.3g | %ld | %zu | %s | %s |\n", config.c_str(), kind.c_str(),
              change.size(), median(change), *std::min_element(change.begin(), change.end()),
              *std::max_element(change.begin(), change.end()), median(magnitude), drops, clean.size(),
              clean.empty() ? "-" : number(median(clean)).c_str(),
              clean.empty() ? "-" : number(*std::max_element(clean.begin(), clean.end())).c_str());
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

const char* kUsage =
    "usage: pbrl_tolerance [options]\n"
    "Tolerance mode of Pbrl (Stackelberg games) and PbrlZeroSum (incentive designs) on random instances,\n"
    "exact gradients, x = 0, y = 0; a CSV line per run, then a summary per configuration and kind.\n"
    "  --runs N             runs per kind and configuration (default 40): run i has size i mod #sizes,\n"
    "                       gamma 0.9 / 0.99 alternating every #sizes runs, seed SEED*10000 + i\n"
    "  --first I            index of the first run (default 0): --first I --runs 1 repeats run I\n"
    "  --steps K            step() calls per run, never stopped early (default 2000)\n"
    "  --seed SEED          base seed (default 1)\n"
    "  --gap-tolerance EPS  epsilon (default 0.01)\n"
    "  --set NAME=V,...     settings changed before each configuration's own (candidate defaults):\n"
    "                       inner_steps, inner_steps_max, oracle_step, step_x, lower_step (step_y /\n"
    "                       step_pi), lambda_start, lambda_max, lambda_growth, lambda_patience,\n"
    "                       lambda_stall, penalty_smoothness, lambda_backoff, lambda_step_limit,\n"
    "                       oracle_gap_fraction, stationarity_tolerance, continuation_start,\n"
    "                       continuation_divisor, continuation_patience, lower_geometry (automatic,\n"
    "                       euclidean or natural)\n"
    "  --configs LIST       comma-separated, default all: defaults, user-tuning (T 1, eta 0.7, step_x 0.3,\n"
    "                       step_y/step_pi 0.2, lambda_start 5), larger-steps (T 1, step_x and\n"
    "                       step_y/step_pi 0.5), small-lambda-start (0.1), large-lambda-start (50)\n"
    "  --kinds LIST         stackelberg,incentive (default both)\n"
    "  --epsilon-sweep      also run every instance at --sweep-tolerance and print the relative change\n"
    "                       of the value at the exact lower-level solution\n"
    "  --sweep-tolerance E  the sweep's second epsilon (default 1e-4)\n"
    "  --sweep-steps K      step() calls of each run at the sweep tolerance (default: --steps)\n"
    "  --csv FILE           CSV lines to FILE instead of stdout\n"
    "  --trace FILE         a CSV line per step() of every run (gap_bound, lambda, step_x, oracle steps,\n"
    "                       |G|, upper objective)\n"
    "  --quick              smoke test: 3 runs per kind (the three smallest sizes), 200 steps\n"
    "  --quiet              no progress on stderr\n"
    "Sizes: Stackelberg (S, A_l, A_f) (3,2,2) (5,3,4) (8,5,2) (12,4,4) (20,5,5); incentive design\n"
    "(S, A_1, A_2) (3,2,2) (5,3,3) (8,4,2) (10,5,5). tau uniform in [0.01, 0.1] per seed.\n"
    "CPU time: clock_gettime(CLOCK_PROCESS_CPUTIME_ID) around the step() calls.\n";

}  // namespace

int main(int argc, char** argv) {
  experiment::Options opt(argc, argv, kUsage);
  const bool quick = opt.flag("quick");
  const long runs = opt.integer("runs", quick ? 3 : 40, 1);
  const long first = opt.integer("first", 0, 0);
  const long steps = opt.integer("steps", quick ? 200 : 2000, 1);
  const long seed = opt.integer("seed", 1, 0);
  const double eps = opt.real("gap-tolerance", 0.01);
  const bool sweep = opt.flag("epsilon-sweep");
  const double eps_sweep = opt.real("sweep-tolerance", 1e-4);
  const long sweep_steps = opt.integer("sweep-steps", steps, 1);
  const std::string csv_path = opt.text("csv", "");
  const std::string trace_path = opt.text("trace", "");
  const bool quiet = opt.flag("quiet");
  const std::vector<std::string> config_names =
      split(opt.text("configs", "defaults,user-tuning,larger-steps,small-lambda-start,large-lambda-start"));
  const std::vector<std::string> kind_names = split(opt.text("kinds", "stackelberg,incentive"));
  for (const auto& pair : split(opt.text("set", ""))) {
    const auto eq = pair.find('=');
    pbrl::PbrlSettings<double> probe;
    char* end = nullptr;
    double v = eq == std::string::npos ? 0 : std::strtod(pair.c_str() + eq + 1, &end);
    const std::string name = pair.substr(0, eq);
    pbrl::LowerGeometry geometry{};  // an enum setting by its enumerator's name
    if (eq != std::string::npos && name == "lower_geometry" && pbrl::enum_from_name(pair.c_str() + eq + 1, geometry)) {
      v = double(int(geometry));
      end = const_cast<char*>(pair.c_str()) + pair.size();
    }
    const char* renamed = codegen::renamed_setting(name);
    if (renamed != nullptr && set_field(probe, renamed, 1, &pbrl::PbrlSettings<double>::step_y)) {
      std::fprintf(stderr, "error: --set: %s\n", codegen::renamed_message(name, renamed).c_str());
      return 2;
    }
    if (eq == std::string::npos || end == pair.c_str() + eq + 1 || *end != '\0' ||
        !set_field(probe, name, v, &pbrl::PbrlSettings<double>::step_y)) {
      std::fprintf(stderr, "error: --set takes NAME=VALUE pairs of known settings: '%s'\n", pair.c_str());
      return 2;
    }
    g_defaults.emplace_back(name, v);
  }
  bool bad = false;
  const std::vector<const Configuration*> configs = by_name(kConfigurations, config_names, "configuration", bad);
  const std::vector<const Kind*> kinds = by_name(kKinds, kind_names, "kind", bad);
  if (!(eps > 0) || !(eps_sweep > 0)) {
    std::fprintf(stderr, "error: tolerances must be > 0\n");
    bad = true;
  }
  if (const int code = opt.finish(); code >= 0) return code;
  if (bad || configs.empty() || kinds.empty()) return 2;

  std::FILE* csv = stdout;
  if (!csv_path.empty()) {
    csv = std::fopen(csv_path.c_str(), "w");
    if (!csv) {
      std::fprintf(stderr, "error: cannot write %s\n", csv_path.c_str());
      return 1;
    }
  }
  if (!trace_path.empty()) {
    g_trace = std::fopen(trace_path.c_str(), "w");
    if (!g_trace) {
      std::fprintf(stderr, "error: cannot write %s\n", trace_path.c_str());
      return 1;
    }
    std::fputs("kind,config,eps,run,step,gap_bound,lambda,step_x,inner_steps,inner_converged,tolerance_met,"
               "projected_gradient_norm,upper_objective\n", g_trace);
  }
  std::vector<double> tolerances{eps};
  if (sweep) tolerances.push_back(eps_sweep);

  std::fputs(kCsvHeader, csv);
  std::vector<RunResult> results;
  const long total = long(configs.size() * kinds.size() * tolerances.size()) * runs;
  long done = 0;
  const double start = cpu_seconds();
  for (const Configuration* c : configs)
    for (const Kind* k : kinds)
      for (long i = first; i < first + runs; ++i) {
        const bench::InstanceSpec spec = bench::instance_spec(std::uint32_t(seed), int(i), k->count);
        for (double e : tolerances) {
          results.push_back(k->sizes[spec.size](spec, *c, e, e == eps ? steps : sweep_steps));
          write_csv(csv, results.back());
          if (!quiet)
            std::fprintf(stderr, "\r%ld/%ld runs, %.0f s CPU   ", ++done, total, cpu_seconds() - start);
        }
      }
  if (!quiet) std::fprintf(stderr, "\n");
  if (csv != stdout) std::fclose(csv);
  if (g_trace) std::fclose(g_trace);

  std::printf("\n## Summary (eps = gap_tolerance; %ld runs per kind and configuration, %ld steps each, seed %ld)\n\n",
              runs, steps, seed);
  if (sweep && sweep_steps != steps) std::printf("(the runs at eps %g: %ld steps each)\n\n", eps_sweep, sweep_steps);
  std::printf("| configuration | kind | eps | runs | met | median first step | first step range | "
              "median CPU to it (ms) | runaways | lambda at cap | worst final/min | errors |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (double e : tolerances)
    for (const Configuration* c : configs)
      for (const Kind* k : kinds) summary_row(results, c->name, k->name, e);

  if (sweep) {
    std::printf("\n## Value at the exact lower-level solution, relative change eps %g -> %g: (v(%g) - v(%g)) / |v(%g)|\n\n",
                eps, eps_sweep, eps_sweep, eps, eps);
    std::printf("| configuration | kind | instances | median | min | max | median of abs | drops > 1 %% | clean | "
                "clean median of abs | clean max abs |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Configuration* c : configs)
      for (const Kind* k : kinds) sweep_row(results, c->name, k->name, eps, eps_sweep);
  }

  std::printf("\n## Runs that ran away (final gap > max(eps, 2 x smallest)) or ended with lambda at its cap\n\n");
  long listed = 0;
  for (const auto& r : results) {
    if (!r.runaway && !r.lambda_at_cap && r.status == "ok") continue;
    ++listed;
    std::printf("- %s %s S=%d A=%dx%d gamma=%g tau=%.4f eps=%g run %d seed %u: final gap %.3e, min %.3e (step %ld), "
                "lambda %g%s%s%s; repeat: --kinds %s --configs %s --seed %ld --first %d --runs 1 --steps %ld"
                "%s\n",
                r.kind.c_str(), r.config.c_str(), r.states, r.actions1, r.actions2, r.discount, r.tau, r.eps, r.index,
                r.seed, r.final_gap, r.min_gap, r.min_gap_step, r.final_lambda, r.runaway ? ", ran away" : "",
                r.lambda_at_cap ? ", lambda at cap" : "", r.status == "ok" ? "" : (", status " + r.status).c_str(),
                r.kind.c_str(), r.config.c_str(), seed, r.index, r.eps != eps ? sweep_steps : steps,
                r.eps != eps ? (" --gap-tolerance " + number(r.eps)).c_str() : "");
  }
  if (listed == 0) std::printf("none\n");
  // The same runs by configuration, kind and epsilon: run indices (seed = SEED * 10000 + index).
  std::printf("\n## The same, as run indices (--first I --runs 1; seed %ld * 10000 + I)\n\n", seed);
  for (double e : tolerances)
    for (const Configuration* c : configs)
      for (const Kind* k : kinds) {
        std::string away, capped;
        for (const auto& r : results) {
          if (r.config != c->name || r.kind != k->name || r.eps != e) continue;
          if (r.runaway || r.status != "ok") away += " " + std::to_string(r.index);
          else if (r.lambda_at_cap) capped += " " + std::to_string(r.index);
        }
        std::printf("- %s %s eps %g: ran away:%s; lambda at cap only:%s\n", c->name, k->name, e,
                    away.empty() ? " none" : away.c_str(), capped.empty() ? " none" : capped.c_str());
      }
  std::printf("\nCPU times of runs: clock_gettime(CLOCK_PROCESS_CPUTIME_ID) around their step() calls. "
              "The whole measurement: %.1f s of process CPU.\n",
              cpu_seconds() - start);
  return 0;
}
