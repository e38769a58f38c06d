#pragma once
// Host-side plumbing shared by the experiment programs (not part of the library): command-line
// options, CSV output, curves averaged over random instances, progress on stderr and the gnuplot
// PNG. The experiments' numbers (sizes, learning rates, lambda, ...) live in
// experiment_settings.hpp.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
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
class Progress {
 public:
  Progress(std::string what, long total, bool quiet)
      : what_(std::move(what)), total_(total), quiet_(quiet), start_(Clock::now()), last_(start_) {}
  void update(long done) {
    if (quiet_) return;
    const auto now = Clock::now();
    if (done < total_ && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : 0;
    std::fprintf(stderr, "\r%s: %ld/%ld (%3.0f%%)  %.0f s elapsed, ~%.0f s left   ", what_.c_str(), done, total_,
                 100.0 * static_cast<double>(done) / static_cast<double>(total_ > 0 ? total_ : 1), elapsed, eta);
    if (done >= total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  long total_;
  bool quiet_;
  Clock::time_point start_, last_;
};

// Iteration counts at the checkpoints of a run with an environment-step budget: the first
// iterate at or past budget * j / (points - 1) steps (duplicates dropped), for a method that
// takes `per_iteration` steps an iteration; the last one has used at least the budget.
inline std::vector<long> checkpoint_iterations(long budget, long points, long per_iteration) {
  std::vector<long> ks;
  for (long j = 0; j < points; ++j) {
    const long target =
        points > 1 ? static_cast<long>((static_cast<long double>(budget) * j) / (points - 1)) : budget;
    const long k = (target + per_iteration - 1) / per_iteration;
    if (ks.empty() || k > ks.back()) ks.push_back(k);
  }
  return ks;
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

// Writes `script` to <png>.gp and runs gnuplot on it. Returns false (and says why) when gnuplot
// is missing or fails; the CSV is the result, the PNG a view of it. `width` in pixels: 1200 suits
// two panels side by side.
inline bool plot(const std::string& png, const std::string& script, int width = 1200) {
  const std::string gp = png + ".gp";
  FILE* f = std::fopen(gp.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "set terminal pngcairo size %d,450 noenhanced\nset output '%s'\n%s", width, png.c_str(),
               script.c_str());
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

}  // namespace experiment
