// Host-side plumbing of the firmware examples' model generators (firmware/generate_model.cpp,
// firmware_adaptive/generate_references.cpp): their command line (--seed N --out FILE, and --csv
// DIR for the first), the incentive design they draw, and the header of constexpr float arrays (or
// the CSV files) they write.
#pragma once

#include <pbrl/problems/incentive_design.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace model_header {

// The command line: --seed N (0 to 2^32 - 1) and --out FILE; with csv_dir non-null, --csv DIR
// too, and one of --out and --csv suffices (the other stays null). False (and the usage printed
// with program's name) when it is anything else.
inline bool parse_args(int argc, char** argv, const char* program, long& seed, const char*& out_path,
                       const char** csv_dir = nullptr) {
  seed = -1;
  out_path = nullptr;
  if (csv_dir != nullptr) *csv_dir = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else if (csv_dir != nullptr && std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      *csv_dir = argv[++i];
    } else {
      seed = -1;
      break;
    }
  }
  const bool output = out_path != nullptr || (csv_dir != nullptr && *csv_dir != nullptr);
  if (seed < 0 || seed > 0xffffffffL || !output) {
    std::fprintf(stderr, csv_dir != nullptr ? "usage: %s --seed N [--out FILE] [--csv DIR]\n"
                                            : "usage: %s --seed N --out FILE\n",
                 program);
    return false;
  }
  return true;
}

// A float literal that reads back as exactly v: 9 significant digits, always with a '.' or an
// exponent so that the 'f' suffix is valid.
inline std::string literal(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  std::string s(buf);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s + "f";
}

// v rounded to float as literals, six a line, each line opened with a newline and four spaces,
// each literal followed by a comma, then a newline; without the 'f' suffix when suffix is false.
template <typename Scalar>
void write_numbers(std::FILE* out, const std::vector<Scalar>& v, bool suffix) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i % 6 == 0) std::fprintf(out, "\n   ");
    std::string s = literal(static_cast<float>(v[i]));
    if (!suffix) s.pop_back();
    std::fprintf(out, " %s,", s.c_str());
  }
  std::fprintf(out, "\n");
}

// constexpr float name[n] = {...}: v rounded to float, six literals a line.
template <typename Scalar>
void write_array(std::FILE* out, const char* name, const std::vector<Scalar>& v) {
  std::fprintf(out, "constexpr float %s[%zu] = {", name, v.size());
  write_numbers(out, v, true);
  std::fprintf(out, "};\n");
}

// DIR/NAME.csv: a '#' line naming what wrote it, then write_array's numbers without the 'f'
// suffix (pbrl-codegen's CSV form; they read back as the same floats); false (with the error
// printed) when the file could not be written.
template <typename Scalar>
bool write_csv(const char* dir, const char* name, const char* comment, const std::vector<Scalar>& v) {
  const std::string path = std::string(dir) + "/" + name + ".csv";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::perror(path.c_str());
    return false;
  }
  std::fprintf(out, "# %s\n", comment);
  write_numbers(out, v, false);
  std::fprintf(out, "\n");
  if (std::fclose(out) != 0) {
    std::perror(path.c_str());
    return false;
  }
  return true;
}

// The constants of an incentive design the model's arrays follow.
struct Constants {
  int states, actions1, actions2;
  float discount, tau, incentive_scale, incentive_bound;
};

// The header's opening after its comment: the namespace, the seed and the constants.
inline void write_constants(std::FILE* out, long seed, const Constants& c) {
  std::fprintf(out,
               "#pragma once\n\nnamespace model {\n\n"
               "constexpr unsigned long kSeed = %ld;\n"
               "constexpr int kStates = %d;\nconstexpr int kActions1 = %d;\nconstexpr int kActions2 = %d;\n"
               "constexpr float kDiscount = %s;\nconstexpr float kTau = %s;\n"
               "constexpr float kIncentiveScale = %s;\nconstexpr float kIncentiveBound = %s;\n\n",
               seed, c.states, c.actions1, c.actions2, literal(c.discount).c_str(), literal(c.tau).c_str(),
               literal(c.incentive_scale).c_str(), literal(c.incentive_bound).c_str());
}

// The header's end; false (with the error printed) when the file could not be written.
inline bool close(std::FILE* out, const char* out_path) {
  std::fprintf(out, "\n}  // namespace model\n");
  if (std::fclose(out) != 0) {
    std::perror(out_path);
    return false;
  }
  return true;
}

// The file to write, opened with the header's first line: "// Generated by PROGRAM --seed SEED
// (SOURCE); do not edit."; or null (with the error printed).
inline std::FILE* open(const char* out_path, const char* program, const char* source, long seed) {
  std::FILE* out = std::fopen(out_path, "w");
  if (out == nullptr)
    std::perror(out_path);
  else
    std::fprintf(out, "// Generated by %s --seed %ld (%s); do not edit.\n", program, seed, source);
  return out;
}

// Initializes problem on data, as the firmware will: false (with the status printed) when the
// generated model is rejected.
template <class Problem>
bool accepted(Problem& problem, const typename Problem::Data& data) {
  const pbrl::Status st = problem.init(data);
  if (st != pbrl::Status::ok) std::fprintf(stderr, "generated model rejected: %s\n", pbrl::to_string(st));
  return st == pbrl::Status::ok;
}

// The incentive design's data on these arrays: both agents entropy-regularized with tau, the
// incentive r_x = r + incentive_scale sigmoid(x) with x in [-incentive_bound, incentive_bound].
template <class Problem, typename Scalar = typename Problem::Scalar>
typename Problem::Data incentive_data(const std::vector<Scalar>& reward, const std::vector<Scalar>& transition,
                                      const std::vector<Scalar>& initial, const std::vector<Scalar>& designer_reward,
                                      const std::vector<Scalar>& designer_transition, Scalar discount, Scalar tau,
                                      Scalar incentive_scale, Scalar incentive_bound) {
  typename Problem::Data data;
  data.reward = reward.data();
  data.transition = transition.data();
  data.initial = initial.data();
  data.discount = discount;
  data.regularizer1 = {pbrl::RegularizerKind::entropy, tau, nullptr};
  data.regularizer2 = {pbrl::RegularizerKind::entropy, tau, nullptr};
  data.designer_reward = designer_reward.data();
  data.designer_transition = designer_transition.data();
  data.incentive_scale = incentive_scale;
  data.incentive = {-incentive_bound, incentive_bound};
  return data;
}

}  // namespace model_header
