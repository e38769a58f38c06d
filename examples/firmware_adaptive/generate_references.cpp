// Host tool: writes the adaptive firmware example's header (adaptive_model.hpp): the incentive
// design the device works on, the prior model it ships with, the two TRUE models of the stand-in
// world (before and after the drift), and the references the firmware prints beside its own value,
// computed here on the host in double with the device's solver settings (settings.hpp):
//   x_prior   solved to the verdict on the prior from x = 0, y = 0: the device that never adapts;
//   x_true1   the device that knew the TRUE model: the first TRUE model swapped into that solver
//             and solved to the verdict;
//   x_true2   then the second TRUE model (after the drift) likewise.
// (As examples/adaptation's references: from the deployed device's point, not from 0; the value is
// nonconvex in x.) With their values, the designer's value at the exact equilibrium of each TRUE
// model (value_at_best_response), which the firmware recomputes in float with its World.
//
// The models: rows drawn as u^kPeak normalized (u uniform; examples/adaptation's --peak), the
// prior and the two TRUE models independent draws; rewards and the designer's own model as the
// paper draws them. The build runs it (examples/CMakeLists.txt holds the seed; a cross tree builds
// it for the host), and the image includes its header from the build tree.
//
//   pbrl_generate_adaptive_model --seed 1 --out adaptive_model.hpp
#include "settings.hpp"
#include "../model_header.hpp"

#include <pbrl/oracle/bilevel_value.hpp>
#include <pbrl/problems/random_instance.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

// The size: 10 x 5 x 5 (the firmware example's) does not fit the device's tick (main.cpp).
constexpr int S = 5, A1 = 3, A2 = 3, J = A1 * A2;
constexpr double kDiscount = 0.9;
constexpr double kTau = 0.1;             // entropy regularization of both agents
constexpr double kIncentiveScale = 1.0;  // r_x = r + c_x sigmoid(x); the paper's 0.2 leaves x little to gain
constexpr double kIncentiveBound = 10.0;
constexpr double kPeak = 4.0;            // transition rows u^kPeak normalized (1: the paper's draw)
constexpr long kReferenceSteps = 50000;  // solve() cap of each reference

using Problem = adaptive::Problem<double, S, A1, A2>;
using Solver = adaptive::Solver<Problem>;

// Rows of entries u^kPeak, normalized (the host solves on these; the device reads them rounded to
// float, which its float validation accepts).
std::vector<double> random_rows(pbrl::Rng& rng) {
  std::vector<double> p(S * J * S);
  for (int r = 0; r < S * J; ++r) {
    double* row = p.data() + r * S;
    double sum = 0;
    for (int j = 0; j < S; ++j) sum += row[j] = std::pow(double(rng.uniform<double>()), kPeak);
    for (int j = 0; j < S; ++j) row[j] /= sum;
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  long seed;
  const char* out_path;
  if (!model_header::parse_args(argc, argv, "pbrl_generate_adaptive_model", seed, out_path)) return 2;

  pbrl::Rng rng(static_cast<std::uint32_t>(seed));
  std::vector<double> reward(S * J), designer_reward(S * J), designer_transition(S * J * S), initial(S, 1.0 / S);
  pbrl::random_reward(rng, reward.data(), S * J);
  pbrl::random_reward(rng, designer_reward.data(), S * J);
  pbrl::random_transition(rng, designer_transition.data(), S * J, S);
  const std::vector<double> true1 = random_rows(rng), prior = random_rows(rng), true2 = random_rows(rng);

  const Problem::Data data = model_header::incentive_data<Problem>(
      reward, prior, initial, designer_reward, designer_transition, kDiscount, kTau, kIncentiveScale,
      kIncentiveBound);

  // The references, on one solver (as examples/adaptation's).
  auto problem = std::make_unique<Problem>();
  auto solver = std::make_unique<Solver>();
  std::string notes;
  auto solve = [&](const char* what) {
    pbrl::SolveResult result;
    Solver::Report report;
    if (pbrl::Status st = solver->solve(kReferenceSteps, result, &report); st != pbrl::Status::ok) {
      std::fprintf(stderr, "%s: %s\n", what, pbrl::to_string(st));
      return false;
    }
    char b[256];
    std::snprintf(b, sizeof b, "//   %s: %s after %lld steps (gap bound %.2g, |G| %.2g, lambda %g)\n", what,
                  pbrl::enum_name(result.outcome), static_cast<long long>(result.steps), report.gap_bound,
                  report.projected_gradient_norm, report.lambda);
    notes += b;
    return true;
  };
  if (!model_header::accepted(*problem, data)) return 1;
  if (pbrl::Status st = solver->init(*problem, adaptive::solver_settings<Solver>(), Solver::Params::Zero(),
                                     Solver::Matrix1::Zero(), Solver::Matrix2::Zero());
      st != pbrl::Status::ok) {
    std::fprintf(stderr, "solver: %s\n", pbrl::to_string(st));
    return 1;
  }
  if (!solve("x_prior on the prior")) return 1;
  const Problem::Params x_prior = solver->x();
  Problem::Params x_true[2];
  const std::vector<double>* truth[2] = {&true1, &true2};
  for (int k = 0; k < 2; ++k) {
    Problem::Data d = data;
    d.transition = truth[k]->data();
    if (pbrl::Status st = solver->swap_model(*problem, d); st != pbrl::Status::ok) {
      std::fprintf(stderr, "swap_model: %s\n", pbrl::to_string(st));
      return 1;
    }
    if (!solve(k == 0 ? "x_true1 on TRUE model 1" : "x_true2 on TRUE model 2")) return 1;
    x_true[k] = solver->x();
  }
  // The honest metric on each TRUE model: the designer's value at the exact equilibrium under x.
  double value_true[2] = {}, value_prior[2] = {};
  for (int k = 0; k < 2; ++k) {
    Problem::Data d = data;
    d.transition = truth[k]->data();
    Problem truth_problem;
    auto ws = std::make_unique<Problem::BilevelValueWorkspace>();
    pbrl::BestResponseValue<double> v;
    if (truth_problem.init(d) != pbrl::Status::ok || truth_problem.value_at_best_response(x_true[k], *ws, v) != pbrl::Status::ok)
      return 1;
    value_true[k] = v.value;
    if (truth_problem.value_at_best_response(x_prior, *ws, v) != pbrl::Status::ok) return 1;
    value_prior[k] = v.value;
  }

  std::FILE* out = model_header::open(out_path, "pbrl_generate_adaptive_model",
                                      "examples/firmware_adaptive/generate_references.cpp", seed);
  if (out == nullptr) return 1;
  std::fprintf(out,
               "// An incentive design (agents' reward r(s,a1,a2), the designer's own reward and transition,\n"
               "// uniform rho), the device's prior transition model, the stand-in world's two TRUE models\n"
               "// (before and after the drift), and the host's references (double, settings.hpp's solver):\n"
               "%s"
               "// Layout: [(s*A1 + a1)*A2 + a2] for rewards and x, row (s*A1 + a1)*A2 + a2 of S entries for\n"
               "// transitions. constexpr arrays are read-only data: they stay in flash.\n",
               notes.c_str());
  model_header::write_constants(out, seed, {S, A1, A2, float(kDiscount), float(kTau), float(kIncentiveScale),
                                            float(kIncentiveBound)});
  using model_header::write_array;
  write_array(out, "kReward", reward);
  write_array(out, "kDesignerReward", designer_reward);
  write_array(out, "kDesignerTransition", designer_transition);
  write_array(out, "kInitial", initial);
  std::fprintf(out, "// The device's prior (in flash; the estimate's prior).\n");
  write_array(out, "kPrior", prior);
  std::fprintf(out, "// The stand-in world's TRUE models: the device never reads these.\n");
  write_array(out, "kTrue1", true1);
  write_array(out, "kTrue2", true2);
  // x to 6 decimals: the references are solved to |G| <= 0.001, and a rounded literal keeps the
  // header the same where the last bits of a long solve differ.
  auto write_x = [&](const char* name, const Problem::Params& x) {
    std::vector<double> v(x.size());
    for (int i = 0; i < x.size(); ++i) v[i] = std::round(x[i] * 1e6) / 1e6;
    write_array(out, name, v);
  };
  std::fprintf(out, "\n// The references (host, double): x solved on the prior, on TRUE model 1 and on TRUE model 2.\n");
  write_x("kXPrior", x_prior);
  write_x("kXTrue1", x_true[0]);
  write_x("kXTrue2", x_true[1]);
  std::fprintf(out,
               "// The designer's value at the exact equilibrium of TRUE model k under x (host, double, to 6\n"
               "// decimals): x_true_k and x_prior on model 1, then on model 2.\n"
               "constexpr double kHostValueTrue1 = %.6f, kHostValuePrior1 = %.6f;\n"
               "constexpr double kHostValueTrue2 = %.6f, kHostValuePrior2 = %.6f;\n",
               value_true[0], value_prior[0], value_true[1], value_prior[1]);
  return model_header::close(out, out_path) ? 0 : 1;
}
