#pragma once
// The driver the experiment programs share (host side, not part of the library): their common
// options and checks, the run over instances on --jobs threads, the per-instance records and their
// merge, the output sequence (CSV, plot, settings, table, summary lines) and the lambda sweep. The
// Figure 1 and Figure 3 programs share more: their checkpoint stepping, points, CSV, plot, table and
// summary (the Figure layer below). Each program keeps its problem, its methods and its texts.

#include "experiment.hpp"
#include "experiment_settings.hpp"
#include "pbrl/solver/penalty_schedule.hpp"

#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace experiment {

// ---- Options ---------------------------------------------------------------------------------------

// What every program's command line sets; a program's Config derives from it and adds its own.
template <int N>
struct RunConfig {
  long instances = 1;  // random instances (--games or --instances)
  long seed = 1;
  long jobs = 1;
  std::string out = "results";
  bool quiet = false;
  bool quick = false;
  bool sampled = true;
  Hyperparameters hp;
  std::array<bool, N> run;    // which methods run (a sweep runs the PBRL ones)
  std::vector<double> sweep;  // --sweep-lambda
  RunConfig() { run.fill(true); }
};

// What the shared option handling needs to know about a program.
struct Program {
  const char* instances_option;             // "games" or "instances"
  const char* default_gradient;             // "exact" or "sampled"
  std::vector<const char*> methods;         // the method names, in index order (--methods)
  const char* pmd_error;                    // --oracle pmd with sampled gradients, outside a sweep
};

// The option texts checked after Options::finish().
struct OptionTexts {
  std::string methods, sweep;
};

// Reads, in this order: --quick, --quiet, --gradient, what `early` reads, --<instances_option>
// (default by --quick), --seed, what `late` reads, --jobs, --out, the hyperparameters, --methods and
// --sweep-lambda. Of several bad values Options reports the last one read.
template <int N, class Early, class Late>
OptionTexts read_options(Options& opt, RunConfig<N>& c, const Program& p, long instances, long quick_instances,
                         Early early, Late late) {
  c.quick = opt.flag("quick");
  c.quiet = opt.flag("quiet");
  c.sampled = opt.choice("gradient", p.default_gradient, {"exact", "sampled"}) == "sampled";
  early();
  c.instances = opt.integer(p.instances_option, c.quick ? quick_instances : instances, 1);
  c.seed = opt.integer("seed", 1, 0);
  late();
  c.jobs = opt.integer("jobs", 1, 1);
  c.out = opt.text("out", "results");
  c.hp.read(opt);
  OptionTexts t;
  t.methods = opt.text("methods", "");
  t.sweep = opt.text("sweep-lambda", "");
  return t;
}

// "error: <message>" on stderr; the exit code of a bad command line.
inline int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 2;
}

// Where a program's own checks stand among the shared ones (check_options).
enum class Stage { start, after_out, after_methods, after_sweep };

// After every option is read: Options::finish(), then the checks in order: extra(start), --out
// given, extra(after_out), --methods, extra(after_methods), --sweep-lambda, extra(after_sweep),
// --oracle pmd only with exact gradients (a sweep's sampled runs fall back), then validate(config)
// for the run's Config or each of the sweep's. extra and validate return an error message, empty
// when all is well. Returns the exit code when the program should stop, -1 to run.
template <class Config, class Extra, class Validate>
int check_options(Options& opt, Config& c, const OptionTexts& t, const Program& p, Extra extra, Validate validate) {
  if (const int code = opt.finish(); code >= 0) return code;
  if (const std::string e = extra(Stage::start); !e.empty()) return fail(e);
  if (c.out.empty()) return fail("--out needs a directory");
  if (const std::string e = extra(Stage::after_out); !e.empty()) return fail(e);
  if (!t.methods.empty()) {
    for (bool& r : c.run) r = false;
    std::size_t start = 0;
    while (start <= t.methods.size()) {
      const std::size_t end = std::min(t.methods.find(',', start), t.methods.size());
      const std::string m = t.methods.substr(start, end - start);
      bool found = false;
      for (std::size_t mi = 0; mi < p.methods.size(); ++mi)
        if (m == p.methods[mi]) c.run[mi] = found = true;
      if (!found) {
        std::string list;
        for (const char* name : p.methods) list += (list.empty() ? "" : ", ") + std::string(name);
        return fail("--methods takes a list of " + list);
      }
      start = end + 1;
    }
  }
  if (const std::string e = extra(Stage::after_methods); !e.empty()) return fail(e);
  if (!t.sweep.empty() && (c.sweep = parse_positive_list(t.sweep)).empty())
    return fail("--sweep-lambda takes a comma-separated list of positive numbers");
  if (const std::string e = extra(Stage::after_sweep); !e.empty()) return fail(e);
  if (c.hp.oracle && *c.hp.oracle == "pmd" && c.sampled && c.sweep.empty()) return fail(p.pmd_error);
  // Every setting the options make is checked by the library before anything runs.
  for (const Config& run : c.sweep.empty() ? std::vector<Config>{c} : sweep_configs(c))
    if (const std::string e = validate(run); !e.empty()) return fail(e);
  return -1;
}

// ---- Running ---------------------------------------------------------------------------------------

// A library call's status: false (after "\n<what>: <status>" on stderr) unless ok.
inline bool check(pbrl::Status st, const char* what) {
  if (st == pbrl::Status::ok) return true;
  std::fprintf(stderr, "\n%s: %s\n", what, pbrl::to_string(st));
  return false;
}

// A solver's gradient mode (--gradient), its Monte-Carlo sampling (H = settings::kHorizon, B =
// batch) and its seed.
template <class Settings>
void set_sampling(Settings& s, bool sampled, int batch, std::uint32_t seed) {
  s.gradient = sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  s.sampling.horizon = settings::kHorizon;
  s.sampling.batch = batch;
  s.seed = seed;
}

// A PBRL method's legend (enhanced text): `what` with the lambda and T it used.
template <class Settings>
std::string pbrl_label(const char* what, const Settings& s) {
  char b[160];
  if (s.tolerance_mode())
    std::snprintf(b, sizeof b, "%s (tolerance ε %g, T %d-%d)", what, double(s.gap_tolerance), s.inner_steps,
                  s.inner_steps_max);
  else if (s.lambda_ramp > 0)
    std::snprintf(b, sizeof b, "%s (λ %g→%g, T %d)", what, double(s.lambda_start), double(s.lambda_final),
                  s.inner_steps);
  else
    std::snprintf(b, sizeof b, "%s (λ %g, T %d)", what, double(s.lambda_final), s.inner_steps);
  return b;
}

// One instance's runs: each method's checkpoints and wall time, the exact lower-level solutions'
// certificates, and what tolerance mode and solving to the verdict left.
template <class Point, int N>
struct InstanceRecord {
  std::vector<Point> points[N];
  double seconds[N] = {};
  double worst_certificate = 0;  // the largest certified lower-level gap of the exact solutions
  long not_converged = 0;        // checkpoints whose exact solution stayed above its tolerance
  long tolerance_met[N] = {};    // PBRL in tolerance mode: the last report's tolerance_met
  SolveRecord solve[N];          // PBRL solving to the verdict (Hyperparameters::solves)

  // An exact lower-level solution a checkpoint measured (a pbrl::BestResponseValue): its certified
  // gap and whether it met its tolerance count in the record.
  template <class Exact>
  void certify(const Exact& exact) {
    worst_certificate = std::max(worst_certificate, static_cast<double>(exact.lower_level_gap));
    if (!exact.converged) ++not_converged;
  }
};

// The records merged over instances in instance order (so --jobs does not change them): each
// method's checkpoints as [checkpoint][instance], summed wall times and tolerance counts.
template <class Point, int N>
struct Totals {
  using Record = InstanceRecord<Point, N>;
  std::vector<std::vector<Point>> points[N];
  double seconds[N] = {};
  double worst_certificate = 0;
  long not_converged = 0;
  long tolerance_met[N] = {};
  std::vector<SolveRecord> solves[N];  // per instance

  void merge(const Record& r) {
    for (int mi = 0; mi < N; ++mi) {
      for (std::size_t j = 0; j < r.points[mi].size(); ++j) {
        if (points[mi].size() <= j) points[mi].resize(j + 1);
        points[mi][j].push_back(r.points[mi][j]);
      }
      seconds[mi] += r.seconds[mi];
      tolerance_met[mi] += r.tolerance_met[mi];
      solves[mi].push_back(r.solve[mi]);
    }
    worst_certificate = std::max(worst_certificate, r.worst_certificate);
    not_converged += r.not_converged;
  }
  // One field of method mi's points as a curve over the checkpoints.
  template <class T>
  Curve curve(int mi, T Point::*field) const {
    Curve c;
    for (std::size_t j = 0; j < points[mi].size(); ++j)
      for (const Point& p : points[mi][j]) c.add(j, static_cast<double>(p.*field));
    return c;
  }
  std::size_t checkpoints(int mi) const { return points[mi].size(); }
  std::size_t last(int mi) const { return points[mi].empty() ? 0 : points[mi].size() - 1; }
};

// Runs every selected method (run[mi]) through run_method(mi) and records its wall time; false
// when a method returns false.
template <std::size_t N, class Record, class RunMethod>
bool run_methods(const std::array<bool, N>& run, Record& result, RunMethod run_method) {
  for (std::size_t mi = 0; mi < N; ++mi) {
    if (!run[mi]) continue;
    const auto start = std::chrono::steady_clock::now();
    if (!run_method(static_cast<int>(mi))) return false;
    result.seconds[mi] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return true;
}

// Every instance on c.jobs threads, each thread with a Runner(c) of its own whose
// run_instance(i, progress, record) runs instance i; `what` and `total` are the progress line's.
// The records merge into `results` in instance order; `seconds` is the wall time of it all.
template <class Runner, class Results, class Config>
bool run_all(const Config& c, const char* what, long total, Results& results, double& seconds) {
  Progress progress(what, total, c.quiet);
  std::vector<typename Results::Record> records(static_cast<std::size_t>(c.instances));
  const bool ok = run_instances<Runner>(
      c.instances, c.jobs, [&] { return std::make_unique<Runner>(c); },
      [&](Runner& runner, long i) { return runner.run_instance(i, progress, records[static_cast<std::size_t>(i)]); });
  seconds = progress.seconds();
  if (!ok) return false;
  for (const auto& r : records) results.merge(r);
  return true;
}

// ---- Output ----------------------------------------------------------------------------------------

// Writes DIR/<base>.csv (write_csv(path)) and DIR/<base>.png (write_plot(png, csv), gnuplot), then
// prints the settings (indented), the table (print_table()) and the files written with the wall
// time. Returns the exit code: 1 (after "<error_prefix>cannot write <csv>") when the CSV cannot be
// written, else 0.
template <class WriteCsv, class WritePlot, class PrintTable>
int write_outputs(const std::string& out, const char* base, const std::string& settings, double seconds,
                  const char* error_prefix, WriteCsv write_csv, WritePlot write_plot, PrintTable print_table) {
  const std::string csv = out + "/" + base + ".csv", png = out + "/" + base + ".png";
  if (!write_csv(csv)) {
    std::fprintf(stderr, "%scannot write %s\n", error_prefix, csv.c_str());
    return 1;
  }
  const bool plotted = write_plot(png, csv);
  std::printf("%s", prefixed(settings, "  ").c_str());
  print_table();
  std::printf("wrote %s%s%s (%.1f s)\n", csv.c_str(), plotted ? " and " : "", plotted ? png.c_str() : "", seconds);
  return 0;
}

// One summary value: the line `summary,<figure>,<method>,<name>,<value>` with printf's `format`.
struct Metric {
  const char* name;
  double value;
  const char* format = "%.6f";
};

inline void print_summary(const char* figure, const char* method, std::initializer_list<Metric> metrics) {
  for (const Metric& m : metrics) {
    char value[64];
    std::snprintf(value, sizeof value, m.format, m.value);
    std::printf("summary,%s,%s,%s,%s\n", figure, method, m.name, value);
  }
}

// ---- The lambda sweep ------------------------------------------------------------------------------

// A program's sweep output: `figure` names the lines sweep,<figure>,... and
// summary,<figure>_sweep,...; the files are DIR/<base>.csv and .png (write_sweep).
struct SweepOutput {
  const char* figure;
  const char* base;
  const char* value_key;    // the printed name of SweepRow::value
  const char* current_key;  // ... and of SweepRow::value_current
  bool print_tolerance_met = false;  // tolerance rows add tolerance_met=<met>/<instances>
  std::string settings, title, gap_label, value_label;
  std::string mark_note = "dotted: the paper's λ";
};

// --sweep-lambda: each run of sweep_configs(c) through run_all(run, results, seconds), one row per
// method that runs (row_of(results, mi) fills what is the program's: method, label, paper lambda,
// the final metrics, seconds, and lambda as its mean final value; a fixed run's lambda is its own),
// each printed as it is done; then the CSV and plot, and each method's gap slope per gradient mode.
// Returns the exit code.
template <class Results, class Config, class RunAll, class RowOf>
int run_sweep(const Config& c, const SweepOutput& o, RunAll run_all, RowOf row_of) {
  std::vector<SweepRow> rows;
  for (const Config& run : sweep_configs(c)) {
    Results r;
    double seconds = 0;
    if (!run_all(run, r, seconds)) return 1;
    for (std::size_t mi = 0; mi < run.run.size(); ++mi) {
      if (!run.run[mi]) continue;
      SweepRow row = row_of(r, static_cast<int>(mi));
      row.sampled = run.sampled;
      row.tolerance = run.hp.gap_tolerance.has_value();
      if (!row.tolerance) row.lambda = *run.hp.lambda_start;
      rows.push_back(row);
      std::printf("sweep,%s,%s,%s,%s,lambda=%.4g,gap=%.6g,%s=%.6f,%s=%.6f,seconds=%.1f", o.figure, row.method.c_str(),
                  run.sampled ? "sampled" : "exact", row.tolerance ? "tolerance" : "fixed", row.lambda, row.gap,
                  o.value_key, row.value, o.current_key, row.value_current, row.seconds);
      if (o.print_tolerance_met && row.tolerance) std::printf(",tolerance_met=%ld/%ld", r.tolerance_met[mi], run.instances);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  bool plotted = false;
  if (!write_sweep(c.out, o.base, o.settings, rows, o.title, o.gap_label, o.value_label, plotted, o.mark_note)) {
    std::fprintf(stderr, "cannot write %s/%s.csv\n", c.out.c_str(), o.base);
    return 1;
  }
  const std::vector<std::string> names = [&] {
    std::vector<std::string> v;
    for (const auto& r : rows)
      if (std::find(v.begin(), v.end(), r.method) == v.end()) v.push_back(r.method);
    return v;
  }();
  for (const std::string& name : names)
    for (int sampled = 0; sampled < 2; ++sampled)
      std::printf("summary,%s_sweep,%s,gap_slope_%s,%.4f\n", o.figure, name.c_str(), sampled ? "sampled" : "exact",
                  gap_slope(rows, name, sampled != 0));
  std::printf("wrote %s/%s.csv%s\n", c.out.c_str(), o.base, plotted ? " and .png" : "");
  return 0;
}

// ---- The Figure layer: Figures 1 and 3 -------------------------------------------------------------
// Methods stepped against a cost axis (environment steps against a budget, or iterations), each
// checkpoint measuring the upper value with the solver's current lower-level policy, the upper value
// at the exact lower-level solution (the bilevel answer) and the lower-level gap.

// One checkpoint of one run.
struct FigurePoint {
  long iteration = 0;
  long env_steps = 0;
  double value_current = 0;  // upper value with the solver's current lower-level policy (the paper's metric)
  double value = 0;          // upper value at the exact lower-level solution
  double gap = 0;            // lower-level gap
  double lambda = 0;         // PBRL's penalty constant (tolerance mode: as adapted)
};

// A figure's names and words (enhanced text where a plot shows it).
struct Figure {
  const char* name;                  // "figure1": the summary and sweep lines
  const char* base;                  // DIR/<base>.csv and .png
  const char* sweep_base;            // --sweep-lambda: DIR/<sweep_base>.csv and .png
  std::vector<const char*> methods;  // the method names, in index order
  std::vector<bool> pbrl;            // which methods are PBRL methods
  const char* current_key;           // metric name of FigurePoint::value_current (CSV, summary, sweep)
  const char* value_key;             // ... of FigurePoint::value
  const char* gap_key;               // ... of FigurePoint::gap
  const char* instance_word;         // "game": per-instance lines
  const char* instances_word;        // "games"
  const char* gap_words;             // "follower gap": the per-instance final gaps
  bool lambda_always;                // the final lambda of a PBRL method also outside tolerance mode
  int label_width;                   // the table's method column
  bool label_width_in_characters;    // pad UTF-8 labels by characters (else by bytes)
  int wall_width;                    // the table's wall-time column
  const char* table_heads[4];        // current start, current end, value end, gap end
  const char* notes;                 // printf format after the table: value and gap at the start, instances
  const char* certified_what;        // "(<certified_what> certified: largest certified <certificate> ..."
  const char* certificate;
  bool thousands_below_a_million;    // the plot's axis in thousands of steps for budgets below 10^6
  const char* value_ylabel;          // the two value panels' y label
  const char* gap_ylabel;
  const char* panel_titles[3];       // current value, value, gap
  const char* sweep_gap_label;       // the sweep plot's y labels
  const char* sweep_value_label;
};

// A figure's command line: the common options, the budget per run and the checkpoints.
template <int N>
struct FigureConfig : RunConfig<N> {
  long budget = 0;  // environment steps per run
  long points = 0;  // checkpoints on the cost axis
};

// A figure program's defaults of its instances, budget and checkpoints (full size, and --quick's),
// which read_figure_options reads and the usage texts (figure_run_usage) state.
struct FigureDefaults {
  long instances, quick_instances;
  long budget, quick_budget;  // environment steps per run
  long points;
};

// Reads the common options (read_options) with a figure's --budget and --points after --seed.
template <int N>
OptionTexts read_figure_options(Options& opt, FigureConfig<N>& c, const Program& p, const FigureDefaults& d) {
  return read_options(opt, c, p, d.instances, d.quick_instances, [] {}, [&] {
    c.budget = opt.integer("budget", c.quick ? d.quick_budget : d.budget, 1);
    c.points = opt.integer("points", d.points, 2);
  });
}

// check_options with a figure's own check: --seed at most 4000000 (seeds seed * 1000 + instance).
template <class Config, class Validate>
int check_figure_options(Options& opt, Config& c, const OptionTexts& t, const Program& p, Validate validate) {
  return check_options(
      opt, c, t, p,
      [&](Stage stage) -> std::string {
        if (stage == Stage::after_out && c.seed > 4000000L) return "--seed must be at most 4000000";
        return {};
      },
      validate);
}

// The cost axis: environment steps against the budget, or iterations (--iterations).
template <class Config>
long total_cost(const Config& c) {
  return c.hp.iterations ? *c.hp.iterations : c.budget;
}

// Instance g's seed: --seed * 1000 + g (check_figure_options bounds --seed).
template <class Config>
std::uint32_t instance_seed(const Config& c, long g) {
  return static_cast<std::uint32_t>(c.seed) * 1000u + static_cast<std::uint32_t>(g);
}

// Every instance of a figure on c.jobs threads (run_all: one Runner each, merged in instance
// order), the progress counted on each selected method's cost axis; what_iterations (with
// --iterations) or what_steps names the run.
template <class Runner, class Config, class Results>
bool run_figure_instances(const Config& c, const char* what_iterations, const char* what_steps, Results& results,
                          double& seconds) {
  long total = 0;
  for (std::size_t mi = 0; mi < c.run.size(); ++mi)
    if (c.run[mi]) total += c.instances * total_cost(c);
  return run_all<Runner>(c, c.hp.iterations ? what_iterations : what_steps, total, results, seconds);
}

// Steps a run through the checkpoints of the cost axis: at each target the first iterate whose cost
// reaches it is measured (measure(iteration, env_steps, lambda)). A PBRL run (its Report a
// ScheduleReport<Real>) steps by pbrl_step, solving to the verdict when Hyperparameters::solves says so
// (at most solve_cap steps), and costs cost(report.inner_steps); any other run steps by
// baseline_step() and costs cost(0). In sampled mode the solver's own count of environment steps must
// match. Errors: "\n<step_what>: <status>" and "<count_what> counted ..." on stderr, false.
template <class Real, class Config, class Solver, class Report, class BaselineStep, class Cost, class Measure>
bool step_checkpoints(const Config& c, Solver& solver, Report& report, SolveRecord& record, long& tolerance_met,
                      long solve_cap, Progress& progress, const char* step_what, const char* count_what,
                      BaselineStep baseline_step, Cost cost, Measure measure) {
  long k = 0, steps = 0;
  double lambda = 0;
  const bool by_iterations = c.hp.iterations.has_value();
  constexpr bool kPbrl = std::is_base_of_v<pbrl::ScheduleReport<Real>, Report>;
  const bool solving = kPbrl && c.hp.solves(c.sampled);
  const std::vector<long> targets = checkpoint_targets(total_cost(c), c.points);
  for (std::size_t j = 0; j < targets.size(); ++j) {
    while (steps_on(solving, record, by_iterations ? k : steps, targets, j, solve_cap)) {
      long step_cost = cost(std::int64_t{0});
      if constexpr (kPbrl) {
        bool stepped = true;
        if (!check(pbrl_step(solver, report, solving, record, stepped), step_what)) return false;
        if (!stepped) break;  // at its verdict
        step_cost = cost(report.inner_steps);
        lambda = double(report.lambda);
        tolerance_met = report.tolerance_met ? 1 : 0;
      } else if (!check(baseline_step(), step_what)) {
        return false;
      }
      ++k;
      steps += step_cost;
      progress.add(by_iterations ? 1 : step_cost);
    }
    if (c.sampled && solver.environment_steps() != steps) {
      std::fprintf(stderr, "\n%s counted %" PRId64 " environment steps after %ld iterations, expected %ld\n", count_what,
                   static_cast<std::int64_t>(solver.environment_steps()), k, steps);
      return false;
    }
    if (!measure(k, steps, lambda)) return false;
  }
  return true;
}

// step_checkpoints' measure for a figure run: a FigurePoint at the checkpoint's iteration,
// environment steps and lambda, its metrics filled by metrics(point), appended to `points`; false
// (nothing appended) when metrics returns false.
template <class Metrics>
auto figure_checkpoint(std::vector<FigurePoint>& points, Metrics metrics) {
  return [&points, metrics](long k, long steps, double lambda) {
    FigurePoint p;
    p.iteration = k;
    p.env_steps = steps;
    p.lambda = lambda;
    if (!metrics(p)) return false;
    points.push_back(p);
    return true;
  };
}

template <int N>
using FigureTotals = Totals<FigurePoint, N>;

// DIR/<figure csv>: the settings as comments, then per method and checkpoint the means (and standard
// errors) over instances.
template <int N>
bool write_figure_csv(const std::string& path, const Figure& f, const std::string& settings,
                      const std::vector<const char*>& names, const FigureTotals<N>& r) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  std::fprintf(file, "%s", prefixed(settings, "# ").c_str());
  std::fprintf(file, "method,env_steps,%s_mean,%s_se,%s_mean,%s_se,%s_mean,%s_se,iterations_mean,lambda_mean\n",
               f.current_key, f.current_key, f.value_key, f.value_key, f.gap_key, f.gap_key);
  for (int mi = 0; mi < N; ++mi) {
    const Curve env = r.curve(mi, &FigurePoint::env_steps), cur = r.curve(mi, &FigurePoint::value_current),
                val = r.curve(mi, &FigurePoint::value), gap = r.curve(mi, &FigurePoint::gap),
                it = r.curve(mi, &FigurePoint::iteration), lam = r.curve(mi, &FigurePoint::lambda);
    for (std::size_t j = 0; j < r.checkpoints(mi); ++j)
      std::fprintf(file, "%s,%.10g,%.10g,%.6g,%.10g,%.6g,%.10g,%.6g,%.10g,%.6g\n", names[mi], env.mean(j), cur.mean(j),
                   cur.stderr_of_mean(j), val.mean(j), val.stderr_of_mean(j), gap.mean(j), gap.stderr_of_mean(j),
                   it.mean(j), lam.mean(j));
  }
  return std::fclose(file) == 0;
}

// The figure's PNG: the two values (one shared y range) and the gap, each series (the methods that
// run, label(mi) their legends) a band of mean +- one standard error against the cost axis.
template <class Config, int N, class Label>
bool write_figure_plot(const std::string& png, const std::string& csv, const Figure& f, const Config& c, Label label,
                       const std::string& title, const FigureTotals<N>& r) {
  std::vector<Series> series;
  std::vector<double> values;  // both value panels share one y range
  for (int mi = 0; mi < N; ++mi) {
    if (!c.run[mi]) continue;
    series.push_back({f.methods[mi], label(mi)});
    for (const Curve& curve : {r.curve(mi, &FigurePoint::value_current), r.curve(mi, &FigurePoint::value)})
      for (std::size_t j = 0; j < curve.values.size(); ++j) {
        values.push_back(curve.mean(j) - curve.stderr_of_mean(j));
        values.push_back(curve.mean(j) + curve.stderr_of_mean(j));
      }
  }
  const std::string range = common_range(values);
  const bool by_iterations = c.hp.iterations.has_value();
  const bool millions = !f.thousands_below_a_million || c.budget >= 1000000;
  const int x_col = by_iterations ? 9 : 2;
  const double x_scale = by_iterations ? 1 : millions ? 1e6 : 1e3;
  const std::string xlabel = by_iterations ? "iterations"
                             : millions    ? "environment steps (millions)"
                                           : "environment steps (thousands)";
  std::string script = figure_head(title, 3);
  script += band_panel(csv, series, x_col, x_scale, 3, xlabel, f.value_ylabel, f.panel_titles[0], range);
  script += band_panel(csv, series, x_col, x_scale, 5, xlabel, f.value_ylabel, f.panel_titles[1], range);
  script += band_panel(csv, series, x_col, x_scale, 7, xlabel, f.gap_ylabel, f.panel_titles[2]);
  script += "unset multiplot\n";
  return plot(png, script, 1800, 500);
}

// `text` padded with spaces to `width` bytes, or characters (UTF-8: λ, ε, → count as one each).
inline std::string padded(const std::string& text, std::size_t width, bool characters) {
  std::size_t n = 0;
  for (unsigned char ch : text) n += !characters || (ch & 0xC0) != 0x80;
  return text + std::string(n < width ? width - n : 0, ' ');
}

// ---- The figure programs' usage texts: the options read_figure_options reads ------------------

// --gradient: in sampled mode `learner` ("the agents learn") from batches of B rollouts of H steps;
// `exact_steps` (lines ending in '\n') how exact mode counts each method's steps.
inline std::string figure_gradient_usage(const char* learner, int batch, int horizon, const std::string& exact_steps) {
  return std::string("  --gradient exact|sampled  sampled (default): ") + learner + " from Monte-Carlo rollouts\n" +
         "                            (B = " + std::to_string(batch) + ", H = " + std::to_string(horizon) +
         "); the x axis is the solvers' own environment-step\n"
         "                            count. exact: model-based gradients; the x axis counts the steps the\n"
         "                            same iterations would take in sampled mode: " +
         exact_steps + "                            In both modes the metrics are exact (model-based).\n";
}

// --<instances_option> to --methods, with their defaults.
inline std::string figure_run_usage(const Program& p, const Figure& f, const FigureDefaults& d) {
  std::string methods;
  for (const char* m : f.methods) methods += (methods.empty() ? "" : ",") + std::string(m);
  return padded(std::string("  --") + p.instances_option + " N", 28, false) + "random " + f.instances_word +
         " (default " + std::to_string(d.instances) + ")\n" +
         "  --seed N                  " + f.instance_word + " g uses seed N*1000 + g (default 1)\n" +
         "  --budget STEPS            environment steps per run; every method runs until it used them\n"
         "                            (default " + std::to_string(d.budget) + ")\n" +
         "  --points N                checkpoints on the environment-step axis (default " + std::to_string(d.points) +
         ")\n" + "  --methods LIST            comma-separated subset of " + methods + "\n";
}

// --jobs to --help: --quick's demo size is `demo` ("2 environments") with d's quick budget.
inline std::string figure_output_usage(const Figure& f, const FigureDefaults& d, const std::string& demo) {
  return std::string("  --jobs N                  ") + f.instances_word +
         " run on N threads (default 1; results do not depend on it)\n" +
         "  --out DIR                 output directory, created if needed (default results):\n" +
         "                            DIR/" + f.base + ".csv and DIR/" + f.base + ".png\n" +
         "  --quick                   demo size: " + demo + ", budget " + std::to_string(d.quick_budget) +
         " (options above override)\n" +
         "  --quiet                   no progress on stderr\n"
         "  --help                    this text\n";
}

// The table: per method (label(mi)) the iterations, cost, wall time and the values at the start and
// end with standard errors; per method the final gaps per instance, PBRL's final lambda and
// tolerance count, and its solve records; the notes and the certificates.
template <class Config, int N, class Label>
void print_figure_table(const Figure& f, const Config& c, Label label, const FigureTotals<N>& r) {
  std::printf("\n%-*s %9s %10s %*s %20s %20s %20s %20s\n", f.label_width, "method", "iters", "env steps", f.wall_width,
              "wall s", f.table_heads[0], f.table_heads[1], f.table_heads[2], f.table_heads[3]);
  for (int mi = 0; mi < N; ++mi) {
    if (!c.run[mi]) continue;
    const std::size_t last = r.last(mi);
    const Curve cur = r.curve(mi, &FigurePoint::value_current), val = r.curve(mi, &FigurePoint::value),
                gap = r.curve(mi, &FigurePoint::gap);
    std::printf("%s %9.0f %10.0f %*.1f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f %11.5f +- %-6.4f\n",
                padded(label(mi), static_cast<std::size_t>(f.label_width), f.label_width_in_characters).c_str(),
                r.curve(mi, &FigurePoint::iteration).mean(last), r.curve(mi, &FigurePoint::env_steps).mean(last),
                f.wall_width, r.seconds[mi], cur.mean(0), cur.stderr_of_mean(0), cur.mean(last),
                cur.stderr_of_mean(last), val.mean(last), val.stderr_of_mean(last), gap.mean(last),
                gap.stderr_of_mean(last));
  }
  for (int mi = 0; mi < N; ++mi) {
    if (!c.run[mi]) continue;
    std::printf("%s final %s per %s:", f.methods[mi], f.gap_words, f.instance_word);
    for (const auto& at : r.points[mi].back()) std::printf(" %.4g", at.gap);
    if (f.pbrl[mi] && (f.lambda_always || c.hp.tolerance()))
      std::printf("; final lambda %.4g (mean)", r.curve(mi, &FigurePoint::lambda).mean(r.last(mi)));
    if (f.pbrl[mi] && c.hp.tolerance())
      std::printf("; tolerance met at the end in %ld of %ld %s", r.tolerance_met[mi], c.instances, f.instances_word);
    std::printf("\n");
    if (f.pbrl[mi] && c.hp.solves(c.sampled)) print_solve_records(f.name, f.methods[mi], r.solves[mi], f.instance_word);
  }
  int first = 0;
  while (first + 1 < N && !c.run[first]) ++first;
  std::printf(f.notes, r.curve(first, &FigurePoint::value).mean(0), r.curve(first, &FigurePoint::gap).mean(0),
              c.instances);
  std::printf("(%s certified: largest certified %s %.2e; %ld checkpoint(s) above the tolerance)\n", f.certified_what,
              f.certificate, r.worst_certificate, r.not_converged);
}

// A figure's results: the CSV (with `settings` as comments), the PNG (plot_title; label(mi) the
// legends), the settings and the table on stdout, then the summary lines of each method that ran:
// both values at the start and the end, the gap at the end. Returns the exit code.
template <class Config, int N, class Label>
int write_figure(const Figure& f, const Config& c, const std::string& settings, double seconds,
                 const FigureTotals<N>& r, Label label, const std::string& plot_title) {
  const int code = write_outputs(
      c.out, f.base, settings, seconds, "",
      [&](const std::string& csv) { return write_figure_csv(csv, f, settings, f.methods, r); },
      [&](const std::string& png, const std::string& csv) { return write_figure_plot(png, csv, f, c, label, plot_title, r); },
      [&] { print_figure_table(f, c, label, r); });
  if (code != 0) return code;
  for (int mi = 0; mi < N; ++mi) {
    if (!c.run[mi]) continue;
    const std::size_t last = r.last(mi);
    const Curve cur = r.curve(mi, &FigurePoint::value_current), val = r.curve(mi, &FigurePoint::value);
    const std::string k1 = f.current_key, k2 = f.value_key, k3 = f.gap_key;
    print_summary(f.name, f.methods[mi],
                  {{(k1 + "_start").c_str(), cur.mean(0)},
                   {(k1 + "_end").c_str(), cur.mean(last)},
                   {(k2 + "_start").c_str(), val.mean(0)},
                   {(k2 + "_end").c_str(), val.mean(last)},
                   {(k3 + "_end").c_str(), r.curve(mi, &FigurePoint::gap).mean(last)}});
  }
  return 0;
}

// A figure in one gradient mode: every instance (run_instances(c, results, seconds)), then its
// results (write_figure with settings_of(c), label(mi) and the plot title "<what>, <states>
// states, <instances> <instance_name>, exact|sampled gradients (mean ± standard error)").
template <int N, class Config, class RunInstances, class SettingsOf, class Label>
int run_figure(const Figure& f, const Config& c, RunInstances run_instances, SettingsOf settings_of, Label label,
               const char* what, int states, const char* instance_name) {
  FigureTotals<N> results;
  double seconds = 0;
  if (!run_instances(c, results, seconds)) return 1;
  char title[256];
  std::snprintf(title, sizeof title, "%s, %d states, %ld %s, %s gradients (mean ± standard error)", what, states,
                c.instances, instance_name, c.sampled ? "sampled" : "exact");
  return write_figure(f, c, settings_of(c), seconds, results, label, title);
}

// --sweep-lambda for a figure (run_sweep): the methods is_pbrl(mi) names, each row from its final
// checkpoint; legend_of(mi) gives a row's legend and paper_lambda(mi) its mark. The settings are
// settings_of(c) without --lambda-start (each fixed run sets its own), then sweep_note(tolerance,
// pmd): the tolerance runs' epsilon, and whether --oracle pmd leaves the sampled runs on the
// program's own oracle. The plot's title: "<what>, <states> states, <instances> <instances_word>:
// λ sweep, tolerance ε = <tolerance>".
template <int N, class Config, class IsPbrl, class SettingsOf, class SweepNote, class RunAll, class Legend,
          class PaperLambda>
int run_figure_sweep(const Figure& f, Config c, const char* what, int states, IsPbrl is_pbrl, SettingsOf settings_of,
                     SweepNote sweep_note, RunAll run_all, Legend legend_of, PaperLambda paper_lambda) {
  for (int mi = 0; mi < N; ++mi) c.run[mi] = is_pbrl(mi);
  const double tolerance = sweep_tolerance(c.hp);
  char title[192];
  std::snprintf(title, sizeof title, "%s, %d states, %ld %s: λ sweep, tolerance ε = %g", what, states, c.instances,
                f.instances_word, tolerance);
  Config described = c;
  described.hp.lambda_start.reset();
  std::string settings = settings_of(described) + sweep_note(tolerance, c.hp.oracle && *c.hp.oracle == "pmd");
  const SweepOutput o{f.name, f.sweep_base, f.value_key, f.current_key, false, std::move(settings), title,
                      f.sweep_gap_label, f.sweep_value_label};
  return run_sweep<FigureTotals<N>>(c, o, run_all, [&](const FigureTotals<N>& r, int mi) {
    const std::size_t last = r.last(mi);
    const Curve gap = r.curve(mi, &FigurePoint::gap), val = r.curve(mi, &FigurePoint::value),
                cur = r.curve(mi, &FigurePoint::value_current);
    SweepRow row;
    row.method = f.methods[mi];
    row.label = legend_of(mi);
    row.lambda = r.curve(mi, &FigurePoint::lambda).mean(last);
    row.paper_lambda = paper_lambda(mi);
    row.gap = gap.mean(last), row.gap_se = gap.stderr_of_mean(last);
    row.value = val.mean(last), row.value_se = val.stderr_of_mean(last);
    row.value_current = cur.mean(last), row.value_current_se = cur.stderr_of_mean(last);
    row.seconds = r.seconds[mi];
    return row;
  });
}

}  // namespace experiment
