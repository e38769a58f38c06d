// pbrl-codegen refuses every kind of bad model with one line `FILE: FIELD[INDEX]: what`, exit
// status 1 and no output file. Each case writes a small model into a fresh temporary directory
// (the manifest model.json and its arrays, written by npy_test_io.hpp), breaks one thing, runs the
// built tool there (PBRL_CODEGEN) and checks the line to the letter.
#include "npy_test_io.hpp"

#include "../../tools/codegen/renamed_settings.hpp"

#include "doctest.h"

#include <pbrl/model/mdp.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifndef PBRL_CODEGEN
#error "PBRL_CODEGEN must name the pbrl-codegen executable"
#endif

namespace {

namespace fs = std::filesystem;
using npy_test::bytes_of;
using npy_test::npy_file;

std::string f4(const std::vector<int>& shape, const std::vector<double>& v) {
  return npy_file("<f4", shape, bytes_of<float>(v));
}
std::string f8(const std::vector<int>& shape, const std::vector<double>& v) {
  return npy_file("<f8", shape, bytes_of<double>(v));
}

// A model directory: manifest keys with their JSON text, in order, and the array files.
struct ModelFiles {
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::string, std::string> files;

  ModelFiles& set(const std::string& key, const std::string& json) {
    for (auto& k : keys)
      if (k.first == key) {
        k.second = json;
        return *this;
      }
    keys.emplace_back(key, json);
    return *this;
  }
  ModelFiles& erase(const std::string& key) {
    for (auto it = keys.begin(); it != keys.end(); ++it)
      if (it->first == key) {
        keys.erase(it);
        break;
      }
    return *this;
  }
  ModelFiles& file(const std::string& name, const std::string& bytes) {
    files[name] = bytes;
    return *this;
  }
  std::string manifest() const {
    std::string out = "{\n";
    for (std::size_t i = 0; i < keys.size(); ++i)
      out += "  \"" + keys[i].first + "\": " + keys[i].second + (i + 1 < keys.size() ? ",\n" : "\n");
    return out + "}\n";
  }
};

// Incentive design in float, S = A1 = A2 = 2: every transition row (0.25, 0.75).
ModelFiles incentive() {
  ModelFiles m;
  m.set("name", "\"plant\"").set("kind", "\"incentive_design\"").set("scalar", "\"float\"");
  m.set("states", "2").set("actions1", "2").set("actions2", "2").set("discount", "0.9");
  const std::vector<double> reward = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
  std::vector<double> transition;
  for (int row = 0; row < 8; ++row) transition.insert(transition.end(), {0.25, 0.75});
  for (const char* a : {"reward", "transition", "initial", "designer_reward", "designer_transition"})
    m.set(a, std::string("\"") + a + ".npy\"");
  m.file("reward.npy", f4({2, 2, 2}, reward)).file("designer_reward.npy", f4({2, 2, 2}, reward));
  m.file("transition.npy", f4({2, 2, 2, 2}, transition)).file("designer_transition.npy", f4({2, 2, 2, 2}, transition));
  m.file("initial.npy", f4({2}, {0.5, 0.5}));
  m.set("regularizer1", R"({"kind": "entropy", "tau": 0.1})").set("regularizer2", R"({"kind": "entropy", "tau": 0.1})");
  m.set("incentive", R"({"lower": -5, "upper": 5})");
  return m;
}

// Stackelberg in double, S = 2, AL = 2, AF = 3, the follower KL-regularized to a uniform reference.
ModelFiles stackelberg() {
  ModelFiles m;
  m.set("name", "\"game\"").set("kind", "\"stackelberg\"").set("scalar", "\"double\"");
  m.set("states", "2").set("leader_actions", "2").set("follower_actions", "3").set("discount", "0.9");
  std::vector<double> reward(12, 0.5), transition;
  for (int row = 0; row < 12; ++row) transition.insert(transition.end(), {0.5, 0.5});
  m.set("leader_reward", "\"rl.npy\"").set("follower_reward", "\"rf.npy\"").set("transition", "\"p.npy\"");
  m.set("initial", "\"rho.npy\"");
  m.file("rl.npy", f8({2, 2, 3}, reward)).file("rf.npy", f8({2, 2, 3}, reward));
  m.file("p.npy", f8({2, 2, 3, 2}, transition)).file("rho.npy", f8({2}, {0.5, 0.5}));
  m.set("leader", R"({"kind": "entropy", "tau": 0})");
  m.set("follower", R"({"kind": "kl_reference", "tau": 0.1, "reference": "ref.npy"})");
  m.file("ref.npy", f8({2, 3}, {0.2, 0.3, 0.5, 0.2, 0.3, 0.5}));
  m.set("logit_bound", "10");
  return m;
}

struct Run {
  int status = -1;
  std::string out, err;
  bool wrote = false;  // the output directory exists
  std::vector<std::string> files;  // what it holds, sorted
  std::string depfile;             // dep.d, if the run was given --depfile dep.d
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes the model into a fresh directory and runs `pbrl-codegen model.json --out out` there, so
// the refusals name files as the manifest does.
Run run(const ModelFiles& m, const std::string& extra_args = "") {
  std::string pattern = (fs::temp_directory_path() / "pbrl-codegen-XXXXXX").string();
  Run r;
  if (mkdtemp(pattern.data()) == nullptr) return r;
  const fs::path dir = pattern;
  npy_test::write((dir / "model.json").string(), m.manifest());
  for (const auto& f : m.files) npy_test::write((dir / f.first).string(), f.second);
  const std::string command = "cd '" + dir.string() + "' && '" PBRL_CODEGEN "' model.json --out out" + extra_args +
                              " > stdout.txt 2> stderr.txt";
  const int status = std::system(command.c_str());
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "stdout.txt");
  r.err = slurp(dir / "stderr.txt");
  r.wrote = fs::exists(dir / "out");
  if (r.wrote)
    for (const auto& entry : fs::directory_iterator(dir / "out")) r.files.push_back(entry.path().filename().string());
  std::sort(r.files.begin(), r.files.end());
  r.depfile = slurp(dir / "dep.d");
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return r;
}

void refused(const ModelFiles& m, const std::string& line) {
  const Run r = run(m);
  CHECK(r.status == 1);
  CHECK(r.err == line + "\n");
  CHECK(r.out.empty());
  CHECK(!r.wrote);
}

}  // namespace

TEST_CASE("the base models are accepted and written") {
  for (const ModelFiles& m : {incentive(), stackelberg()}) {
    const Run r = run(m);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.wrote);
  }
  const Run r = run(incentive());
  // 2 x 8 + 2 x 16 + 2 floats.
  CHECK(r.out.find("flash bytes of model arrays: 200 (") != std::string::npos);
}

TEST_CASE("the C interface is written beside the headers; --depfile names every file read") {
  const Run r = run(stackelberg(), " --depfile dep.d");
  REQUIRE(r.status == 0);
  const std::vector<std::string> expected = {"game.h", "game_c_api.cpp", "game_model.hpp", "game_pbrl.hpp",
                                             "game_sizes.cpp"};
  CHECK(r.files == expected);
  for (const std::string& f : expected) CHECK(r.out.find("/" + f + "\n") != std::string::npos);
  // "<dir>/out/game_model.hpp: <dir>/model.json <dir>/rl.npy ..." with absolute paths.
  CHECK(r.depfile.find("/out/game_model.hpp: /") != std::string::npos);
  for (const char* input : {"/model.json", "/rl.npy", "/rf.npy", "/p.npy", "/rho.npy", "/ref.npy"})
    CHECK(r.depfile.find(input) != std::string::npos);
  CHECK(run(stackelberg(), " --depfile").status == 2);  // usage
  const Run refused = run(stackelberg().set("logit_bound", "0"), " --depfile dep.d");
  CHECK(refused.status == 1);
  CHECK(refused.depfile.empty());
}

TEST_CASE("npy format versions 1.0 to 3.0 and the dtypes <f8, <f4, <i8, <i4 are read") {
  ModelFiles m = incentive();
  std::vector<double> transition;
  for (int row = 0; row < 8; ++row) transition.insert(transition.end(), {0.25, 0.75});
  m.file("transition.npy", npy_file("<f8", {2, 2, 2, 2}, bytes_of<double>(transition), 2));
  m.file("reward.npy", npy_file("<i4", {2, 2, 2}, bytes_of<std::int32_t>({1, 2, 3, 4, 5, 6, 7, 8}), 3));
  m.file("designer_reward.npy", npy_file("<i8", {2, 2, 2}, bytes_of<std::int64_t>({1, 0, 1, 0, 1, 0, 1, 0})));
  CHECK(run(m).status == 0);
}

TEST_CASE("a missing file") {
  refused(incentive().set("reward", "\"nowhere.npy\""), "nowhere.npy: reward: cannot open: No such file or directory");
}

TEST_CASE("a file that is not a readable npy") {
  refused(incentive().file("reward.npy", "just text"),
          "reward.npy: reward: not a readable .npy file: no \\x93NUMPY magic");
  const std::string whole = f4({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  refused(incentive().file("reward.npy", whole.substr(0, whole.size() - 4)),
          "reward.npy: reward: not a readable .npy file: 28 data bytes, shape (2, 2, 2) of <f4 needs 8 x 4");
  refused(incentive().file("reward.npy", npy_file("<f4", {2, 2, 2}, bytes_of<float>({}), 4)),
          "reward.npy: reward: not a readable .npy file: format version 4 (1, 2 and 3 are read)");
  refused(incentive().set("reward", "\"reward.txt\""), "reward.txt: reward: not a .npy or .csv file name");
}

TEST_CASE("a dtype the tool does not read") {
  refused(incentive().file("reward.npy", npy_file("<i2", {2, 2, 2}, std::string(16, '\0'))),
          "reward.npy: reward: dtype '<i2' is not read (<f8, <f4, <i8 or <i4)");
  refused(incentive().file("reward.npy", npy_file(">f8", {2, 2, 2}, std::string(64, '\0'))),
          "reward.npy: reward: dtype '>f8' is big-endian; save it little-endian (a.astype('<f8'))");
}

TEST_CASE("a wrong shape") {
  refused(incentive().file("reward.npy", f4({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})),
          "reward.npy: reward: shape (2, 4), expected (2, 2, 2) = (states, actions1, actions2)");
  refused(incentive().file("initial.npy", f4({1, 2}, {0.5, 0.5})),
          "initial.npy: initial: shape (1, 2), expected (2,) = (states,)");
}

TEST_CASE("fortran order") {
  refused(
      incentive().file("reward.npy", npy_file("<f4", {2, 2, 2}, bytes_of<float>({1, 2, 3, 4, 5, 6, 7, 8}), 1, true)),
      "reward.npy: reward: fortran_order is True; save a C-order array (numpy.ascontiguousarray(a))");
}

TEST_CASE("CSV: a wrong count, a non-number, NaN by index") {
  ModelFiles m = incentive().set("reward", "\"reward.csv\"");
  refused(m.file("reward.csv", "0.1,0.2,0.3,0.4\n0.5,0.6,0.7\n"),
          "reward.csv: reward: 7 numbers, shape (2, 2, 2) needs 8");
  refused(m.file("reward.csv", "# r(s,a1,a2)\n0.1,0.2,0.3,0.4\n0.5,0.6,x,0.8\n"),
          "reward.csv: reward[1,1,0]: 'x' is not a number (line 3, field 3)");
  refused(m.file("reward.csv", "0.1,0.2,0.3,0.4\n0.5,0.6,nan,0.8\n"), "reward.csv: reward[1,1,0]: nan is not finite");
  m.file("reward.csv", "0.1, 0.2 ,0.3,0.4\r\n\n0.5,0.6,0.7,0.8\n");  // spaces, CR and blank lines are fine
  CHECK(run(m).status == 0);
}

TEST_CASE("NaN or infinity in an array, with its index") {
  refused(incentive().file("reward.npy", f4({2, 2, 2}, {0, 0, 0, 0, 0, NAN, 0, 0})),
          "reward.npy: reward[1,0,1]: nan is not finite");
  refused(incentive().file("designer_reward.npy", f4({2, 2, 2}, {0, 0, 0, -INFINITY, 0, 0, 0, 0})),
          "designer_reward.npy: designer_reward[0,1,1]: -inf is not finite");
  // Finite in the file, infinite once rounded to the model's float.
  refused(incentive().file("reward.npy", f8({2, 2, 2}, {0, 1e300, 0, 0, 0, 0, 0, 0})),
          "reward.npy: reward[0,0,1]: 1e+300 does not fit in float");
}

TEST_CASE("a negative probability, with its index") {
  std::vector<double> p;
  for (int row = 0; row < 8; ++row) p.insert(p.end(), {0.25, 0.75});
  p[13] = -0.25;  // row (1,1,0), next state 1
  p[12] = 1.25;
  refused(incentive().file("transition.npy", f4({2, 2, 2, 2}, p)),
          "transition.npy: transition[1,1,0,1]: -0.25 is negative (a probability)");
}

TEST_CASE("a transition row that does not sum to one within the library's tolerance") {
  // Float rows of two: 64 * eps(float) * 2 = 2^-16.
  std::vector<double> p;
  for (int row = 0; row < 8; ++row) p.insert(p.end(), {0.25, 0.75});
  p[10] = 0.5;
  p[11] = 0.4;  // row (1,0,1)
  refused(incentive().file("designer_transition.npy", f4({2, 2, 2, 2}, p)),
          "designer_transition.npy: designer_transition[1,0,1,:]: row sums to 0.9, not 1 within 1.5258789e-05");
  p[11] = 0.5 + 3.0 / 131072;  // 1 + 3 * 2^-17: above the tolerance by half of it
  refused(incentive().file("transition.npy", f4({2, 2, 2, 2}, p)),
          "transition.npy: transition[1,0,1,:]: row sums to 1.0000229, not 1 within 1.5258789e-05");
  const std::vector<float> refused_rows(p.begin(), p.end());
  p[11] = 0.5 + 1.0 / 65536;  // 1 + 2^-16: on the tolerance, accepted
  CHECK(run(incentive().file("transition.npy", f4({2, 2, 2, 2}, p))).status == 0);
  // The library draws the line at the same place (the game's transition: S = 2, 4 joint actions).
  const std::vector<float> accepted_rows(p.begin(), p.end());
  CHECK(pbrl::validate_transition<float, 2, 4>(accepted_rows.data()) == pbrl::Status::ok);
  CHECK(pbrl::validate_transition<float, 2, 4>(refused_rows.data()) == pbrl::Status::bad_transition);
}

TEST_CASE("an initial distribution off the simplex or not positive") {
  refused(incentive().file("initial.npy", f4({2}, {0.5, 0.6})),
          "initial.npy: initial[:]: sums to 1.1, not 1 within 1.5258789e-05");
  refused(incentive().file("initial.npy", f4({2}, {1, 0})),
          "initial.npy: initial[1]: 0 is not > 0 (the library needs every entry positive)");
}

TEST_CASE("a discount outside [0, 1)") {
  refused(incentive().set("discount", "1"), "model.json: discount: 1 is outside [0, 1)");
  refused(incentive().set("discount", "-0.5"), "model.json: discount: -0.5 is outside [0, 1)");
  refused(incentive().set("discount", "\"0.9\""), "model.json: discount: must be a number");
  CHECK(run(incentive().set("discount", "0")).status == 0);  // as the library does:
  CHECK(pbrl::validate_discount(0.0f) == pbrl::Status::ok);
  CHECK(pbrl::validate_discount(1.0f) == pbrl::Status::bad_discount);
}

TEST_CASE("tau below zero, two taus in one game, a reference that is not a positive distribution") {
  refused(incentive().set("regularizer1", R"({"kind": "entropy", "tau": -0.1})"),
          "model.json: regularizer1.tau: -0.1 must be finite and >= 0");
  refused(incentive().set("regularizer2", R"({"kind": "entropy", "tau": 0.2})"),
          "model.json: regularizer2.tau: 0.2 differs from regularizer1.tau 0.1 (the game has one tau)");
  refused(incentive().set("regularizer1", R"({"kind": "gibbs", "tau": 0.1})"),
          "model.json: regularizer1.kind: 'gibbs' is not entropy or kl_reference");
  refused(incentive().set("regularizer1", R"({"kind": "kl_reference", "tau": 0.1})"),
          "model.json: regularizer1.reference: missing (kind kl_reference needs a reference policy)");
  refused(stackelberg().set("leader", R"({"kind": "entropy", "tau": 0, "reference": "ref.npy"})"),
          "model.json: leader.reference: given, but only kind kl_reference uses one");
  refused(stackelberg().file("ref.npy", f8({2, 3}, {0.2, 0.3, 0.5, 0.5, 0.5, 0})),
          "ref.npy: follower.reference[1,2]: 0 is not > 0 (the library needs every entry positive)");
  refused(stackelberg().file("ref.npy", f8({2, 3}, {0.2, 0.3, 0.5, 0.2, 0.3, 0.4})),
          "ref.npy: follower.reference[1,:]: row sums to 0.9, not 1 within 4.263256414560601e-14");
  refused(stackelberg().file("ref.npy", f8({3, 2}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5})),
          "ref.npy: follower.reference: shape (3, 2), expected (2, 3) = (states, follower_actions)");
}

TEST_CASE("a box with lower > upper or a bound that is not finite; a logit bound <= 0") {
  refused(incentive().set("incentive", R"({"lower": 1, "upper": -1})"), "model.json: incentive: lower 1 > upper -1");
  refused(incentive().set("incentive", R"({"lower": -1e39, "upper": 1})"),
          "model.json: incentive.lower: must be finite in float");
  refused(incentive().set("incentive", R"({"lower": -1})"), "model.json: incentive.upper: missing");
  refused(incentive().set("incentive", R"({"lower": -1, "upper": 1, "middle": 0})"),
          "model.json: incentive.middle: unknown key");
  refused(stackelberg().set("logit_bound", "0"), "model.json: logit_bound: 0 must be finite and > 0");
}

TEST_CASE("an unknown kind, scalar or key; a missing or doubled key; bad JSON; a bad name") {
  refused(incentive().set("kind", "\"bandit\""),
          "model.json: kind: 'bandit' is not one of reward_shaping, stackelberg, incentive_design");
  refused(incentive().set("scalar", "\"half\""), "model.json: scalar: 'half' is not float or double");
  refused(incentive().set("actions", "2"), "model.json: actions: unknown key for kind incentive_design");
  refused(incentive().set("dicount", "0.9"), "model.json: dicount: unknown key for kind incentive_design");
  refused(incentive().erase("transition"), "model.json: transition: missing");
  refused(incentive().set("states", "1"), "model.json: states: 1 must be an integer in [2, 65535]");
  refused(incentive().set("states", "2.5"), "model.json: states: must be an integer in [2, 65535]");
  refused(incentive().set("name", "\"my model\""),
          "model.json: name: 'my model' is not a C identifier the generated namespaces can use (letters, digits "
          "and single underscores, not leading; not a keyword, pbrl, std or Eigen)");
  refused(incentive().set("name", "\"namespace\""),
          "model.json: name: 'namespace' is not a C identifier the generated namespaces can use (letters, digits "
          "and single underscores, not leading; not a keyword, pbrl, std or Eigen)");
  refused(incentive().set("discount", "1e400"), "model.json: json: number overflow parsing '1e400'");
  refused(incentive().set("solver", R"({"step_x": 0.1, "step_x": 0.2})"), "model.json: solver.step_x: given twice");
  refused(incentive().set("discount", "0.9,"),
          "model.json: json: parse error at line 8, column 19: syntax error "
          "while parsing object key - unexpected ','; expected string literal");
}

TEST_CASE("a bad solver setting: the field, its value and its domain") {
  refused(incentive().set("solver", R"({"step_x": 0})"), "model.json: solver.step_x: 0 must be finite and > 0");
  refused(incentive().set("solver", R"({"lambda_start": -1})"),
          "model.json: solver.lambda_start: -1 must be finite and >= 0");
  refused(
      incentive().set("solver", R"({"gradient": "sampled", "sampling": {"horizon": 0}, "oracle": "policy_gradient"})"),
      "model.json: solver.sampling.horizon: 0 must be in [1, 64]");
  refused(incentive().set("solver", R"({"oracle": "newton"})"),
          "model.json: solver.oracle: \"newton\" is not one of policy_mirror_descent, policy_gradient, "
          "soft_value_iteration");
  refused(incentive().set("solver", R"({"inner_steps": 2.5})"),
          "model.json: solver.inner_steps: 2.5 is not an integer in [-2147483648, 2147483647]");
  refused(incentive().set("solver", R"({"seed": -1})"),
          "model.json: solver.seed: -1 is not an integer in [0, 4294967295]");
  refused(incentive().set("solver", R"({"sampling": {"common_random_numbers": 1}})"),
          "model.json: solver.sampling.common_random_numbers: must be true or false");
  refused(incentive().set("solver", R"({"step_y": 0.1})"),
          "model.json: solver.step_y: unknown setting (pbrl-codegen --settings KIND lists them)");  // Pbrl's, not
                                                                                                    // PbrlZeroSum's
  refused(incentive().set("solver", R"({"policy": {"lower": 1}})"),
          "model.json: solver.policy.lower: unknown setting (pbrl-codegen --settings KIND lists them)");
  refused(incentive().set("solver", "3"), "model.json: solver: must be an object");
  // The policy sets, for the problem's action counts: a floor of 0.5 leaves nothing for 2 actions.
  refused(incentive().set("solver", R"({"policy": {"parameterization": "direct", "floor": 0.5}})"),
          "model.json: solver.policy.floor: 0.5 must be finite, > 0 and < 1/2 for 2 actions");
  // Fields that conflict: each valid alone, refused together by pbrl::validate.
  refused(incentive().set("solver", R"({"gap_tolerance": 0.01, "lambda_max": 0.5, "lambda_start": 1})"),
          "model.json: solver: refused by pbrl::validate (bad_setting); valid with any one of these at its default: "
          "gap_tolerance, lambda_max");
  refused(incentive().set("solver", R"({"gradient": "sampled"})"),
          "model.json: solver: refused by pbrl::validate (bad_setting); valid with any one of these at its default: "
          "gradient");
  // The natural lower-level step needs the model's occupancy: refused with sampled gradients.
  refused(incentive().set("solver", R"({"lower_geometry": "natural", "gradient": "sampled", "oracle": "policy_gradient"})"),
          "model.json: solver: refused by pbrl::validate (bad_setting); valid with any one of these at its default: "
          "gradient, lower_geometry");
}

// The refusal of an old settings name in `object` (renamed_settings.hpp), and of a name that is
// unknown there.
std::string renamed(const std::string& object, const std::string& old_name, const std::string& new_name) {
  return "model.json: " + object + "." + old_name + ": setting \"" + old_name + "\" was renamed \"" + new_name + "\"";
}
std::string not_renamed(const std::string& object, const std::string& name) {
  return "model.json: " + object + "." + name + ": unknown setting (pbrl-codegen --settings KIND lists them)";
}

TEST_CASE("an old setting name is refused with its new one, where the settings have the new one") {
  for (const codegen::RenamedSetting& r : codegen::kRenamedSettings) {
    CAPTURE(r.old_name);
    const std::string value = std::string(r.new_name) == "penalty_kind" ? "\"bellman\"" : "2";
    refused(stackelberg().set("solver", "{\"" + std::string(r.old_name) + "\": " + value + "}"),
            renamed("solver", r.old_name, r.new_name));
  }
  refused(incentive().set("solver", R"({"penalty_start": 4})"), renamed("solver", "penalty_start", "lambda_start"));
  refused(stackelberg().set("solver", R"({"penalty": "bellman"})"), renamed("solver", "penalty", "penalty_kind"));
  // PbrlZeroSum has no penalty kind, EstimateSettings no lambda: there the old names are unknown.
  refused(incentive().set("solver", R"({"penalty": "value"})"), not_renamed("solver", "penalty"));
  refused(incentive().set("estimate", R"({"strength": 1, "penalty_max": 1})"), not_renamed("estimate", "penalty_max"));
}

TEST_CASE("an estimated model: accepted, its declarations written; bad estimate keys refused by name") {
  const Run ok = run(incentive().set("estimate", R"({"strength": 10, "discount": 0.99, "refresh_every": 100})"));
  CHECK(ok.status == 0);
  CHECK(ok.err.empty());
  refused(incentive().set("estimate", R"({"discount": 0.99})"), "model.json: estimate.strength: missing");
  refused(incentive().set("estimate", R"({"strength": 0})"),
          "model.json: estimate.strength: 0 must be finite and in [eps^2, 1/eps^2] of float");
  refused(incentive().set("estimate", R"({"strength": 1, "discount": 0})"),
          "model.json: estimate.discount: 0 must be in (0, 1]");
  refused(incentive().set("estimate", R"({"strength": 1, "count_cap": 1})"),
          "model.json: estimate.count_cap: 1 must be in [2, 16777216]");
  refused(incentive().set("estimate", R"({"strength": 1, "count": "int8"})"),
          "model.json: estimate.count: 'int8' is not one of float, double, uint16, uint32");
  refused(incentive().set("estimate", R"({"strength": 1, "count": "uint16", "discount": 0.9})"),
          "model.json: estimate.discount: integer counts (uint16) take no discount: use float or double counts");
  refused(incentive().set("estimate", R"({"strength": 1, "count": "uint16", "count_cap": 100000})"),
          "model.json: estimate.count_cap: 100000 is above the largest uint16");
  refused(incentive().set("estimate", R"({"strength": 1, "support": "sparse"})"),
          "model.json: estimate.support: \"sparse\" is not one of prior, dense");
  refused(incentive().set("estimate", R"({"strength": 1, "forgetting": 0.9})"),
          "model.json: estimate.forgetting: unknown setting (pbrl-codegen --settings KIND lists them)");
  refused(incentive().set("estimate", "3"), "model.json: estimate: must be an object");
}

TEST_CASE("sizes too big for ram_limit_bytes") {
  // Flash 200 bytes; solver at least 4 * (2*2 + 3*2*2*2) = 112 bytes.
  CHECK(run(incentive().set("ram_limit_bytes", "312")).status == 0);
  refused(incentive().set("ram_limit_bytes", "311"),
          "model.json: ram_limit_bytes: 200 bytes of model arrays + at least 112 bytes of solver state = 312 > 311");
  refused(incentive().set("ram_limit_bytes", "0"),
          "model.json: ram_limit_bytes: 0 must be an integer in [1, 9223372036854775807]");
}

TEST_CASE("the settings list names every field once") {
  const std::string command = "'" PBRL_CODEGEN "' --settings stackelberg";
  std::FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string text;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) text += buf;
  CHECK(pclose(pipe) == 0);
  CHECK(text.find("step_x = 0.1  (must be finite and > 0)\n") != std::string::npos);
  CHECK(text.find("policy.parameterization = softmax  (direct, softmax; checked for the problem's action counts)\n") !=
        std::string::npos);
  CHECK(text.find("sampling.batch = 16  (must be in [1, 1048576]; not used at the defaults)\n") != std::string::npos);
  CHECK(text.find("lambda_max = 1000  (must be finite and > 0; not used at the defaults)\n") != std::string::npos);
  CHECK(text.find("penalty_kind = value  (value, bellman)\n") != std::string::npos);
}
