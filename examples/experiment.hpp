#pragma once
// Host-side plumbing shared by the experiment programs (not part of the library): command-line
// options, CSV output, curves averaged over random instances, progress on stderr and the gnuplot
// PNG. The experiments' numbers (sizes, learning rates, lambda, ...) live in
// experiment_settings.hpp.

#include "pbrl/solver/settings.hpp"
#include "pbrl/solver/solve_outcome.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace experiment {

// --name value options and --name flags. Unknown options are an error; --help prints `usage`.
class Options {
 public:
  Options(int argc, char** argv, std::string usage) : usage_(std::move(usage)) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        help_ = true;
        continue;
      }
      if (a.rfind("--", 0) != 0) {
        error_ = "unexpected argument '" + a + "'";
        continue;
      }
      a = a.substr(2);
      const auto eq = a.find('=');
      if (eq != std::string::npos) {
        values_[a.substr(0, eq)] = a.substr(eq + 1);
      } else if (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) {
        values_[a] = argv[++i];
      } else {
        values_[a] = "";
      }
    }
  }

  // Call after reading every option: prints usage and returns the exit code when the program
  // should stop (0 for --help, 2 for a bad command line), -1 to go on.
  int finish() {
    if (help_) {
      std::printf("%s", usage_.c_str());
      return 0;
    }
    for (const auto& kv : values_)
      if (!used_.count(kv.first)) error_ = "unknown option --" + kv.first;
    if (!error_.empty()) {
      std::fprintf(stderr, "error: %s\n\n%s", error_.c_str(), usage_.c_str());
      return 2;
    }
    return -1;
  }

  long integer(const std::string& name, long fallback, long min = 0) {
    used_[name] = true;
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || v < min) {
      error_ = "--" + name + " needs an integer >= " + std::to_string(min);
      return fallback;
    }
    return v;
  }

  double real(const std::string& name, double fallback) {
    used_[name] = true;
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !std::isfinite(v)) {
      error_ = "--" + name + " needs a number";
      return fallback;
    }
    return v;
  }

  std::string text(const std::string& name, const std::string& fallback) {
    used_[name] = true;
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }

  // One of `choices`; anything else is an error.
  std::string choice(const std::string& name, const std::string& fallback, const std::vector<std::string>& choices) {
    const std::string v = text(name, fallback);
    for (const auto& c : choices)
      if (v == c) return v;
    error_ = "--" + name + " must be one of:";
    for (const auto& c : choices) error_ += " " + c;
    return fallback;
  }

  bool has(const std::string& name) const { return values_.count(name) > 0; }

  // The value if given: an integer >= min (at most kMaxInnerSteps-sized counts are the caller's).
  std::optional<long> optional_integer(const std::string& name, long min) {
    if (!has(name)) {
      used_[name] = true;
      return std::nullopt;
    }
    return integer(name, min, min);
  }
  // The value if given: a number >= min (> min when `inclusive` is false).
  std::optional<double> optional_real(const std::string& name, double min, bool inclusive = true) {
    used_[name] = true;
    if (!has(name)) return std::nullopt;
    const double v = real(name, min);
    if (inclusive ? v < min : !(v > min)) error_ = "--" + name + " needs a number " + (inclusive ? ">= " : "> ") + std::to_string(min);
    return v;
  }

  bool flag(const std::string& name) {
    used_[name] = true;
    return values_.count(name) > 0;
  }

 private:
  std::string usage_;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> used_;
  std::string error_;
  bool help_ = false;
};

// One method's metric sampled at checkpoints and averaged over instances: add(instance, point,
// value); the checkpoint positions (environment steps, labels, ...) are the caller's.
struct Curve {
  std::vector<std::vector<double>> values;  // [point][instance]

  void add(std::size_t point, double v) {
    if (values.size() <= point) values.resize(point + 1);
    values[point].push_back(v);
  }
  double mean(std::size_t point) const {
    double s = 0;
    for (double v : values[point]) s += v;
    return values[point].empty() ? NAN : s / static_cast<double>(values[point].size());
  }
  // Standard error of the mean over instances (0 for one instance).
  double stderr_of_mean(std::size_t point) const {
    const auto& v = values[point];
    if (v.size() < 2) return 0;
    const double m = mean(point);
    double ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    return std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
  }
};

// Progress on stderr, at most one line a second plus the last one: long runs show they move.
// add() may be called from several threads (--jobs).
class Progress {
 public:
  Progress(std::string what, long total, bool quiet)
      : what_(std::move(what)), total_(total), quiet_(quiet), start_(Clock::now()), last_(start_) {}
  void add(long n) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ += n;
    if (quiet_) return;
    const auto now = Clock::now();
    if (done_ < total_ && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = done_ > 0 ? elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_) : 0;
    std::fprintf(stderr, "\r%s: %ld/%ld (%3.0f%%)  %.0f s elapsed, ~%.0f s left   ", what_.c_str(), done_, total_,
                 100.0 * static_cast<double>(done_) / static_cast<double>(total_ > 0 ? total_ : 1), elapsed,
                 eta > 0 ? eta : 0.0);
    if (done_ >= total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  long total_;
  long done_ = 0;
  bool quiet_;
  Clock::time_point start_, last_;
  std::mutex mutex_;
};

// Runs the instances i = 0..count-1 on `jobs` threads, each thread with a Runner of its own (made
// by make(), once, and reused: it holds one instance's solvers and workspaces); run(runner, i) does
// instance i. False if any call returned false (the others still finish). Each call must write
// only instance i's result: the caller merges them in index order, so they do not depend on jobs.
template <class Runner, class Make, class Run>
bool run_instances(long count, long jobs, Make make, Run run) {
  std::atomic<long> next{0};
  std::atomic<bool> ok{true};
  auto worker = [&] {
    std::unique_ptr<Runner> runner;
    for (long i; (i = next.fetch_add(1)) < count;) {
      if (!runner) runner = make();
      if (!run(*runner, i)) ok = false;
    }
  };
  std::vector<std::thread> threads;
  for (long t = 1; t < std::min(jobs, count); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return ok;
}

// The hyperparameters of the penalty methods, set at run time; an option not given keeps each
// method's default (the paper's settings, examples/experiment_settings.hpp). apply() writes the
// given ones into a solver's PenaltySolverSettings; describe() prints what a method used.
struct Hyperparameters {
  std::optional<double> lambda_start, lambda_final, oracle_step, step, gap_tolerance, lambda_max;
  std::optional<double> lambda_stall, smoothness, stationarity_tolerance;
  std::optional<long> lambda_ramp, inner_steps, inner_steps_max, iterations, lambda_patience, max_steps,
      convergence_window;
  std::optional<std::string> oracle;  // "pg" or "pmd"

  // Policy mirror descent with step 1, the oracle of exact tolerance mode unless --oracle (and
  // --oracle-step) say otherwise: its certified gap falls geometrically, where the paper's
  // policy-gradient oracle at step 0.1 cannot reach the oracle's target within inner_steps_max.
  static constexpr double kSolveOracleStep = 1;

  static const char* usage() {
    return "  --lambda-start L          penalty constant of the PBRL methods (each method's paper value)\n"
           "  --lambda-final L          fixed mode: lambda ramps linearly from --lambda-start to L ...\n"
           "  --lambda-ramp K           ... over K iterations (default 0: lambda is --lambda-start throughout)\n"
           "  --inner-steps T           oracle steps per iteration (tolerance mode: the least number)\n"
           "  --oracle pg|pmd           PBRL's oracle: policy gradient (paper) or policy mirror descent\n"
           "                            (exact mode only)\n"
           "  --oracle-step ETA         the oracle's step size\n"
           "  --step ALPHA              learning rate of x (and of y where a method has one)\n"
           "  --iterations N            every method runs N outer iterations (instead of the default run length)\n"
           "  --gap-tolerance EPS       tolerance mode: lambda grows and the oracle runs longer until the\n"
           "                            lower-level gap is below EPS (solver/settings.hpp)\n"
           "  --lambda-max L            tolerance mode: cap of lambda (default 1000)\n"
           "  --inner-steps-max T       tolerance mode: cap of the oracle steps per iteration (default 100)\n"
           "  --lambda-patience K       tolerance mode: steps in a row above EPS that make a window (default 5)\n"
           "  --lambda-stall F          tolerance mode: lambda grows after a window in which the gap fell by\n"
           "                            less than the factor F, in [0, 1] (default 0.9; 0: after every window)\n"
           "  --smoothness L            tolerance mode: L_p in the step scaling alpha / (1 + alpha lambda L_p)\n"
           "                            (default 0.01)\n"
           "  --stationarity-tolerance G  the verdict's bound on |G|, the projected-gradient mapping's norm\n"
           "                            (default 0.01; docs/solving.md)\n"
           "  --convergence-window K    the verdict: K steps in a row within both tolerances (default 10)\n"
           "  --max-steps N             tolerance mode, exact gradients: each PBRL run solves until the verdict\n"
           "                            (converged, lambda at its cap) or N steps (default: the iterations of\n"
           "                            the paper-mode budget at T = 1, experiment_settings.hpp); its last\n"
           "                            checkpoint is taken there, past the budget if need be, and each\n"
           "                            instance's outcome, steps and wall time are printed. The oracle is\n"
           "                            policy mirror descent with step 1 unless --oracle says otherwise\n";
  }

  // A sweep's sampled runs: PMD is an exact-mode oracle (sampled mode learns from rollouts), so the
  // program's own sampled-mode oracle and its step take the place of --oracle pmd.
  void drop_exact_only_oracle() {
    if (oracle && *oracle == "pmd") {
      oracle.reset();
      oracle_step.reset();
    }
  }

  // Reads the options; the caller's Options::finish() reports a bad value.
  void read(Options& opt) {
    lambda_start = opt.optional_real("lambda-start", 0);
    lambda_final = opt.optional_real("lambda-final", 0);
    lambda_ramp = opt.optional_integer("lambda-ramp", 0);
    inner_steps = opt.optional_integer("inner-steps", 0);
    oracle_step = opt.optional_real("oracle-step", 0, false);
    step = opt.optional_real("step", 0, false);
    iterations = opt.optional_integer("iterations", 1);
    gap_tolerance = opt.optional_real("gap-tolerance", 0, false);
    lambda_max = opt.optional_real("lambda-max", 0, false);
    inner_steps_max = opt.optional_integer("inner-steps-max", 1);
    lambda_patience = opt.optional_integer("lambda-patience", 1);
    lambda_stall = opt.optional_real("lambda-stall", 0);
    smoothness = opt.optional_real("smoothness", 0);
    max_steps = opt.optional_integer("max-steps", 1);
    stationarity_tolerance = opt.optional_real("stationarity-tolerance", 0);
    convergence_window = opt.optional_integer("convergence-window", 1);
    if (opt.has("oracle")) oracle = opt.choice("oracle", "pg", {"pg", "pmd"});
  }

  bool tolerance() const { return gap_tolerance.has_value() && *gap_tolerance > 0; }
  // The PBRL methods solve to the verdict: tolerance mode with exact gradients.
  bool solves(bool sampled) const { return tolerance() && !sampled; }
  // The most steps of a solving run: --max-steps, else the program's default.
  long solve_cap(long program_default) const { return max_steps ? *max_steps : program_default; }

  // The given options, written into `s` (PenaltySolverSettings); the y step is the caller's.
  template <class Settings, class Scalar = decltype(Settings{}.step_x)>
  void apply(Settings& s) const {
    if (lambda_start) s.lambda_start = s.lambda_final = Scalar(*lambda_start);
    if (lambda_final) s.lambda_final = Scalar(*lambda_final);
    if (lambda_ramp) s.lambda_ramp = static_cast<int>(*lambda_ramp);
    if (inner_steps) s.inner_steps = static_cast<int>(*inner_steps);
    if (oracle) s.oracle = *oracle == "pmd" ? pbrl::OracleKind::policy_mirror_descent : pbrl::OracleKind::policy_gradient;
    if (oracle_step) s.oracle_step = Scalar(*oracle_step);
    if (step) s.step_x = Scalar(*step);
    if (gap_tolerance) s.gap_tolerance = Scalar(*gap_tolerance);
    if (lambda_max) s.lambda_max = Scalar(*lambda_max);
    if (inner_steps_max) s.inner_steps_max = static_cast<int>(*inner_steps_max);
    if (lambda_patience) s.lambda_patience = static_cast<int>(*lambda_patience);
    if (lambda_stall) s.lambda_stall = Scalar(*lambda_stall);
    if (smoothness) s.penalty_smoothness = Scalar(*smoothness);
    if (stationarity_tolerance) s.stationarity_tolerance = Scalar(*stationarity_tolerance);
    if (convergence_window) s.convergence_window = static_cast<int>(*convergence_window);
    if (s.tolerance_mode() && s.inner_steps_max < s.inner_steps) s.inner_steps_max = s.inner_steps;
  }

  // After apply() and the program's gradient mode: a solving run's oracle (kSolveOracleStep).
  template <class Settings, class Scalar = decltype(Settings{}.step_x)>
  void choose_solve_oracle(Settings& s, bool sampled) const {
    if (!solves(sampled) || oracle) return;
    s.oracle = pbrl::OracleKind::policy_mirror_descent;
    if (!oracle_step) s.oracle_step = Scalar(kSolveOracleStep);
  }
};

// ---- Solving to the verdict (tolerance mode, exact gradients) -------------------------------------
// A PBRL run steps through solve(1) (solver/solver_core.hpp, docs/solving.md) so that it stops at
// the verdict as a firmware would; the checkpoints still sample it on the program's cost axis.

struct SolveRecord {
  pbrl::SolveOutcome outcome = pbrl::SolveOutcome::step_cap;
  long steps = 0;        // steps taken
  double seconds = 0;    // wall time of the steps alone (the checkpoints' metrics excluded)
  double gap_bound = 0;  // the last step's certified lower-level gap bound
  double lambda = 0;     // the last step's penalty constant
  bool done = false;     // an outcome no further step changes (not a cap)
};

// One step of a solving run: solve(1) with its wall time. A solver already at its verdict takes no
// step and the record is done.
template <class Solver, class Report>
pbrl::Status solve_one_step(Solver& solver, Report& report, SolveRecord& r) {
  pbrl::SolveResult result;
  const auto start = std::chrono::steady_clock::now();
  const pbrl::Status st = solver.solve(1, result, &report);
  r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (st != pbrl::Status::ok) return st;
  r.steps += static_cast<long>(result.steps);
  r.outcome = result.outcome;
  r.done = result.outcome != pbrl::SolveOutcome::step_cap && result.outcome != pbrl::SolveOutcome::oracle_cap;
  if (result.steps > 0) {
    r.gap_bound = static_cast<double>(report.gap_bound);
    r.lambda = static_cast<double>(report.lambda);
  }
  return st;
}

// Whether a run at `position` on the cost axis takes another step towards checkpoint j: a solving
// run until its verdict or its cap (towards the last checkpoint past the budget if need be), any
// other run until the checkpoint's target.
inline bool steps_on(bool solving, const SolveRecord& r, long position, const std::vector<long>& targets,
                     std::size_t j, long cap) {
  if (!solving) return position < targets[j];
  if (r.done || r.steps >= cap) return false;
  return position < targets[j] || j + 1 == targets.size();
}

// One step of a PBRL run: solve_one_step when it solves, else step(&report). `stepped` is false
// when a solving run was at its verdict (no step taken).
template <class Solver, class Report>
pbrl::Status pbrl_step(Solver& solver, Report& report, bool solving, SolveRecord& r, bool& stepped) {
  stepped = true;
  if (!solving) return solver.step(&report);
  const long before = r.steps;
  const pbrl::Status st = solve_one_step(solver, report, r);
  stepped = r.steps != before;
  return st;
}

// Per instance: outcome, steps and wall time of each solving run; and the summary lines
// `summary,<figure>,<method>,instances_converged|median_steps|median_seconds,<value>`.
inline void print_solve_records(const char* figure, const char* method, const std::vector<SolveRecord>& records,
                                const char* instance_word) {
  std::vector<double> steps, seconds;
  long converged = 0;
  std::printf("%s solved to the verdict, per %s:", method, instance_word);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const SolveRecord& r = records[i];
    std::printf("%s %zu: %s after %ld steps, %.3f s (gap bound %.3g, lambda %.4g)", i ? ";" : "", i,
                pbrl::enum_name(r.outcome), r.steps, r.seconds, r.gap_bound, r.lambda);
    if (r.outcome == pbrl::SolveOutcome::converged) {
      ++converged;
      steps.push_back(static_cast<double>(r.steps));
      seconds.push_back(r.seconds);
    }
  }
  std::printf("\n");
  auto median = [](std::vector<double> v) -> double {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  std::printf("summary,%s,%s,instances_converged,%ld\n", figure, method, converged);
  std::printf("summary,%s,%s,median_steps_to_converged,%.1f\n", figure, method, median(steps));
  std::printf("summary,%s,%s,median_seconds_to_converged,%.4f\n", figure, method, median(seconds));
}

// One line with every value of a penalty solver's settings that a run used.
template <class Settings>
std::string describe(const Settings& s) {
  char b[768];
  const char* oracle = s.oracle == pbrl::OracleKind::policy_mirror_descent ? "policy mirror descent"
                       : s.oracle == pbrl::OracleKind::policy_gradient      ? "policy gradient"
                                                                            : "soft value iteration";
  if (s.tolerance_mode())
    std::snprintf(b, sizeof b,
                  "tolerance mode: gap tolerance %g; lambda from %g, x%g after %d steps above it, at most %g; "
                  "oracle %s, step %g, %d to %d steps, to %g of the tolerance; step_x %g scaled by "
                  "1/(1 + step_x lambda L_p), L_p %g; verdict: both tolerances and |G| <= %g over %d steps",
                  double(s.gap_tolerance), double(s.lambda_start), double(s.lambda_growth), s.lambda_patience,
                  double(s.lambda_max), oracle, double(s.oracle_step), s.inner_steps, s.inner_steps_max,
                  double(s.oracle_gap_fraction), double(s.step_x), double(s.penalty_smoothness),
                  double(s.stationarity_tolerance), s.convergence_window);
  else if (s.lambda_ramp > 0)
    std::snprintf(b, sizeof b, "lambda %g -> %g over %d iterations, T %d; oracle %s, step %g; step_x %g",
                  double(s.lambda_start), double(s.lambda_final), s.lambda_ramp, s.inner_steps, oracle,
                  double(s.oracle_step), double(s.step_x));
  else
    std::snprintf(b, sizeof b, "lambda %g, T %d; oracle %s, step %g; step_x %g", double(s.lambda_final),
                  s.inner_steps, oracle, double(s.oracle_step), double(s.step_x));
  return b;
}

// Checkpoint positions on a run's cost axis (environment steps, or iterations with --iterations):
// total * j / (points - 1), j = 0..points-1. A method records its metrics at the first iterate whose
// cost reaches a position, so with a varying cost per iteration (tolerance mode) every game still
// has the same checkpoints.
inline std::vector<long> checkpoint_targets(long total, long points) {
  std::vector<long> t;
  for (long j = 0; j < points; ++j)
    t.push_back(points > 1 ? static_cast<long>((static_cast<long double>(total) * j) / (points - 1)) : total);
  return t;
}

// "2,5,10" -> {2, 5, 10}; empty on a malformed list or a value <= 0.
inline std::vector<double> parse_positive_list(const std::string& text) {
  std::vector<double> v;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    char* stop = nullptr;
    const double x = std::strtod(item.c_str(), &stop);
    if (item.empty() || *stop != '\0' || !std::isfinite(x) || !(x > 0)) return {};
    v.push_back(x);
    start = end + 1;
  }
  return v;
}

// text with `prefix` in front of every line (the settings block as CSV comments or indented).
inline std::string prefixed(const std::string& text, const char* prefix) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    out += prefix + text.substr(start, end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// Creates dir and its parents if needed; false (and a message) when it cannot.
inline bool make_directories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    std::fprintf(stderr, "cannot create %s\n", dir.c_str());
    return false;
  }
  return true;
}

// ---- Figures: one style for all of them ----------------------------------------------------------
// gnuplot's enhanced text (V_{l}, {/Symbol}-free UTF-8 symbols: λ, π, ε), one palette, one line width,
// the key below the panels. Labels are written for enhanced text: '_' and '^' start sub- and
// superscripts, so method names from the CSV never appear in labels.

inline const char* color(int i) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  return palette[i % 6];
}

// `text` as a gnuplot single-quoted string ('' stands for ').
inline std::string quoted(const std::string& text) {
  std::string q = "'";
  for (char ch : text) q += ch == '\'' ? std::string("''") : std::string(1, ch);
  return q + "'";
}

// A CSV row set (rows whose first column is `name`) and its legend.
struct Series {
  std::string name;
  std::string label;
};

// The head of a figure of `cols` panels side by side.
inline std::string figure_head(const std::string& title, int cols) {
  return "set datafile separator ','\nset grid\nset autoscale xfix\nset key below horizontal maxcols 3 samplen 2 reverse Left width -1\n"
         "set multiplot layout 1," + std::to_string(cols) + " title " + quoted(title) + "\n";
}

// One panel: each series' mean (column mean_col) as a line and mean +- one standard error (column
// mean_col + 1) as a band, against column x_col / x_scale. yrange "" lets gnuplot choose; two
// panels that show the same quantity get the same range so they compare by eye.
inline std::string band_panel(const std::string& csv, const std::vector<Series>& series, int x_col, double x_scale,
                              int mean_col, const std::string& xlabel, const std::string& ylabel,
                              const std::string& title, const std::string& yrange = "") {
  char xs[64];
  std::snprintf(xs, sizeof xs, "($%d/%.17g)", x_col, x_scale);
  std::string s = "set title " + quoted(title) + "\nset xlabel " + quoted(xlabel) + "\nset ylabel " + quoted(ylabel) + "\n";
  s += yrange.empty() ? "set autoscale y\n" : "set yrange [" + yrange + "]\n";
  s += "plot ";
  const std::string m = "$" + std::to_string(mean_col), se = "$" + std::to_string(mean_col + 1);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string sel = "(strcol(1) eq '" + series[i].name + "' ? ";
    const std::string c = color(static_cast<int>(i));
    s += "'" + csv + "' using " + xs + ":" + sel + m + "-" + se + " : 1/0):" + sel + m + "+" + se +
         " : 1/0) with filledcurves fc rgb '" + c + "' fs transparent solid 0.2 noborder notitle, \\\n     ";
    s += "'" + csv + "' using " + xs + ":" + sel + m + " : 1/0) with lines lw 2 lc rgb '" + c + "' title " +
         quoted(series[i].label);
    s += i + 1 < series.size() ? ", \\\n     " : "\n";
  }
  return s;
}

// "lo:hi" covering every value of `v` with 5% margin each side (the shared y range of two panels).
inline std::string common_range(const std::vector<double>& v) {
  double lo = INFINITY, hi = -INFINITY;
  for (double x : v)
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  if (!(lo <= hi)) return "";
  const double pad = hi > lo ? 0.05 * (hi - lo) : 0.5;
  char b[96];
  std::snprintf(b, sizeof b, "%.6g:%.6g", lo - pad, hi + pad);
  return b;
}

// Writes `script` to <png>.gp and runs gnuplot on it. Returns false (and says why) when gnuplot
// is missing or fails; the CSV is the result, the PNG a view of it. `width` in pixels: 1200 suits
// two panels side by side.
inline bool plot(const std::string& png, const std::string& script, int width = 1200, int height = 450) {
  const std::string gp = png + ".gp";
  FILE* f = std::fopen(gp.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "set encoding utf8\nset terminal pngcairo size %d,%d enhanced font 'sans,10'\nset output '%s'\n%s",
               width, height, png.c_str(), script.c_str());
  std::fclose(f);
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "gnuplot not found: wrote %s, no PNG\n", gp.c_str());
    return false;
  }
  const std::string cmd = "gnuplot '" + gp + "'";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "gnuplot failed on %s\n", gp.c_str());
    return false;
  }
  return true;
}

// ---- The lambda sweep (--sweep-lambda) ------------------------------------------------------------
// Each penalty method run to the end of its budget at a fixed lambda, for every lambda of the list
// and both gradient modes, and once in tolerance mode; one row per run, averaged over instances.

struct SweepRow {
  std::string method;    // the program's method name (CSV)
  std::string label;     // legend (enhanced text)
  bool sampled = false;  // gradient mode
  bool tolerance = false;  // the tolerance-mode run (lambda adapted; `lambda` is its mean final value)
  double lambda = 0;
  double paper_lambda = 0;
  double gap = 0, gap_se = 0;                     // final lower-level gap (exact), mean and standard error
  double value = 0, value_se = 0;                 // final upper value at the exact lower-level solution
  double value_current = 0, value_current_se = 0;  // final upper value with the solver's current y
  double seconds = 0;                             // wall time of the run (all instances)
};

// Least-squares slope of log(gap) against log(lambda) over the fixed-lambda rows of (method,
// gradient mode): gap ~ lambda^slope. NAN with fewer than two usable rows.
inline double gap_slope(const std::vector<SweepRow>& rows, const std::string& method, bool sampled) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (const auto& r : rows)
    if (r.method == method && r.sampled == sampled && !r.tolerance && r.gap > 0 && r.lambda > 0) {
      const double x = std::log(r.lambda), y = std::log(r.gap);
      sx += x, sy += y, sxx += x * x, sxy += x * y, ++n;
    }
  if (n < 2 || sxx * n - sx * sx <= 0) return NAN;
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// The runs of --sweep-lambda from a program's Config (fields sampled, hp, sweep): each listed
// lambda fixed, then tolerance mode at --gap-tolerance (default 0.01); exact, then sampled. The
// sampled runs use the program's sampled-mode oracle where --oracle pmd was given.
inline double sweep_tolerance(const Hyperparameters& hp) { return hp.gap_tolerance ? *hp.gap_tolerance : 1e-2; }

// printf into a std::string.
inline std::string format(const char* fmt, ...) {
  va_list args, again;
  va_start(args, fmt);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string b(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(&b[0], b.size() + 1, fmt, again);
  va_end(again);
  return b;
}

// The listed lambdas of a sweep as a settings block states them: each written with printf's
// `fmt` (of one double), joined by ", ".
inline std::string lambda_list(const std::vector<double>& lambdas, const char* fmt) {
  std::string text;
  for (double v : lambdas) text += (text.empty() ? "" : ", ") + format(fmt, v);
  return text;
}

template <class Config>
std::vector<Config> sweep_configs(const Config& c) {
  std::vector<Config> runs;
  for (int sampled = 0; sampled < 2; ++sampled)
    for (std::size_t li = 0; li <= c.sweep.size(); ++li) {
      Config run = c;
      run.sampled = sampled != 0;
      if (run.sampled) run.hp.drop_exact_only_oracle();
      if (li < c.sweep.size()) {
        run.hp.lambda_start = c.sweep[li];
        run.hp.gap_tolerance.reset();
      } else {
        run.hp.gap_tolerance = sweep_tolerance(c.hp);
      }
      runs.push_back(run);
    }
  return runs;
}

// Writes DIR/<base>.csv (settings as comments, one row per run) and DIR/<base>.png: the final gap
// (log-log) and the upper value at the exact lower-level solution against lambda; solid exact,
// dashed sampled; the tolerance runs as large dots at their final lambda; each method's paper
// lambda as a dotted vertical line (mark_note says what it marks). Returns false when the CSV
// cannot be written.
inline bool write_sweep(const std::string& dir, const std::string& base, const std::string& settings,
                        const std::vector<SweepRow>& in, const std::string& title, const std::string& gap_label,
                        const std::string& value_label, bool& plotted,
                        const std::string& mark_note = "dotted: the paper's λ") {
  const std::string csv = dir + "/" + base + ".csv", png = dir + "/" + base + ".png";
  // Each curve's rows adjacent and in lambda order (a filtered-out row between two would break the
  // plotted line): methods in order of first appearance, then exact before sampled, fixed before
  // tolerance.
  std::vector<std::string> order;
  for (const auto& r : in)
    if (std::find(order.begin(), order.end(), r.method) == order.end()) order.push_back(r.method);
  std::vector<SweepRow> rows = in;
  auto rank = [&](const SweepRow& r) { return std::find(order.begin(), order.end(), r.method) - order.begin(); };
  std::stable_sort(rows.begin(), rows.end(), [&](const SweepRow& a, const SweepRow& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a.sampled != b.sampled) return !a.sampled;
    if (a.tolerance != b.tolerance) return !a.tolerance;
    return a.lambda < b.lambda;
  });
  FILE* f = std::fopen(csv.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "%s", prefixed(settings, "# ").c_str());
  std::fprintf(f, "method,gradient,mode,lambda,paper_lambda,gap_mean,gap_se,value_exact_lower_level_mean,"
                  "value_exact_lower_level_se,value_current_y_mean,value_current_y_se,seconds\n");
  for (const auto& r : rows)
    std::fprintf(f, "%s,%s,%s,%.8g,%.8g,%.10g,%.6g,%.10g,%.6g,%.10g,%.6g,%.2f\n", r.method.c_str(),
                 r.sampled ? "sampled" : "exact", r.tolerance ? "tolerance" : "fixed", r.lambda, r.paper_lambda, r.gap,
                 r.gap_se, r.value, r.value_se, r.value_current, r.value_current_se, r.seconds);
  if (std::fclose(f) != 0) return false;

  // The methods in order of first appearance, each with its colour and paper lambda.
  std::vector<const SweepRow*> methods;
  for (const auto& r : rows) {
    bool seen = false;
    for (const auto* m : methods) seen = seen || m->method == r.method;
    if (!seen) methods.push_back(&r);
  }
  // Every lambda inside the frame, the paper's marks included (gnuplot's autoscale puts the
  // smallest on the border).
  double lo = 0, hi = 0;
  for (const auto& r : rows)
    for (double l : {r.lambda, r.paper_lambda})
      if (l > 0) lo = lo > 0 ? std::min(lo, l) : l, hi = std::max(hi, l);
  char range[96];
  std::snprintf(range, sizeof range, "set xrange [%.8g:%.8g]\n", lo / 1.5, hi * 1.5);
  std::string marks = lo > 0 ? range : "";
  for (std::size_t i = 0; i < methods.size(); ++i) {
    char b[256];
    std::snprintf(b, sizeof b, "set arrow from %.8g, graph 0 to %.8g, graph 1 nohead dt 3 lw 1.5 lc rgb '%s'\n",
                  methods[i]->paper_lambda, methods[i]->paper_lambda, color(static_cast<int>(i)));
    marks += b;
  }
  auto panel = [&](int col, const std::string& ylabel, const std::string& panel_title, bool log_y) {
    std::string s = "set title " + quoted(panel_title) + "\nset xlabel 'penalty constant λ'\nset ylabel " +
                    quoted(ylabel) + "\nset logscale x\n" + (log_y ? "set logscale y\n" : "unset logscale y\n") + marks + "plot ";
    bool first = true;
    for (std::size_t i = 0; i < methods.size(); ++i)
      for (int sampled = 0; sampled < 2; ++sampled) {
        const std::string mode = sampled ? "sampled" : "exact";
        bool any = false;
        for (const auto& r : rows) any = any || (r.method == methods[i]->method && r.sampled == bool(sampled));
        if (!any) continue;
        const std::string sel = "(strcol(1) eq '" + methods[i]->method + "' && strcol(2) eq '" + mode + "' && strcol(3) eq '";
        const std::string c = color(static_cast<int>(i)), y = "$" + std::to_string(col);
        if (!first) s += ", \\\n     ";
        first = false;
        s += "'" + csv + "' using 4:" + sel + "fixed' ? " + y + " : 1/0):" + std::to_string(col + 1) + " with yerrorlines lw 2 pt 7 ps 0.8 dt " +
             (sampled ? "2" : "1") + " lc rgb '" + c + "' title " + quoted(methods[i]->label + ", " + mode) + ", \\\n     ";
        s += "'" + csv + "' using 4:" + sel + "tolerance' ? " + y + " : 1/0) with points pt " + (sampled ? "6" : "7") +
             " ps 2.2 lc rgb '" + c + "' title " + quoted(methods[i]->label + ", " + mode + ", tolerance mode");
      }
    return s + "\nunset arrow\n";
  };
  std::string script = figure_head(title + " (" + mark_note + ")", 2);
  script += panel(6, gap_label, "final lower-level gap against λ", true);
  script += panel(8, value_label, "final upper value at the exact lower-level solution", false);
  script += "unset multiplot\n";
  plotted = plot(png, script, 1400, 560);
  return true;
}

}  // namespace experiment
