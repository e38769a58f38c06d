// A user of the installed pbrl package: solves a small reward-shaping instance with a few PBRL
// iterations and exits 0 only if every call succeeded and the penalty went down.

// The target pbrl::pbrl must hand its users the Eigen setting that fixes struct layouts. Checked
// before any Eigen header, which would otherwise define a default of its own.
#if !defined(EIGEN_MAX_STATIC_ALIGN_BYTES)
#error "pbrl::pbrl did not pass EIGEN_MAX_STATIC_ALIGN_BYTES to its user"
#elif EIGEN_MAX_STATIC_ALIGN_BYTES != 0
#error "pbrl::pbrl passed EIGEN_MAX_STATIC_ALIGN_BYTES != 0"
#endif
#if !defined(EIGEN_MPL2_ONLY)
#error "pbrl::pbrl did not pass EIGEN_MPL2_ONLY to its user"
#endif

#include <pbrl/pbrl.hpp>
#include <pbrl/problems/random_instance.hpp>
#include <pbrl/problems/reward_shaping.hpp>

#include <cmath>
#include <cstdio>

namespace {
constexpr int S = 6, A = 3;
using Problem = pbrl::RewardShaping<double, S, A>;
using Solver = pbrl::Pbrl<Problem>;

struct Task {
  double reward[S * A];
  double transition[S * A * S];
  double initial[S];
};

// Static storage, as on a device.
Task task;
Problem problem;
Solver solver;

bool check(pbrl::Status st, const char* what) {
  if (st == pbrl::Status::ok) return true;
  std::printf("%s: %s\n", what, pbrl::to_string(st));
  return false;
}
}  // namespace

int main() {
  pbrl::Rng rng(2024);
  pbrl::random_reward(rng, task.reward, S * A, 0.7);
  pbrl::random_transition(rng, task.transition, S * A, S);
  pbrl::random_distribution(rng, task.initial, S);

  Problem::Data data;
  data.reward = task.reward;
  data.transition = task.transition;
  data.initial = task.initial;
  data.discount = 0.9;
  data.lower.tau = 0.1;
  data.shaping = {-1.0, 1.0};
  if (!check(problem.init(data), "RewardShaping::init")) return 1;

  pbrl::PbrlSettings<double> settings;
  settings.penalty_kind = pbrl::PenaltyKind::value;
  settings.policy.parameterization = pbrl::Parameterization::softmax;
  settings.oracle = pbrl::OracleKind::policy_mirror_descent;
  settings.inner_steps = 10;
  settings.step_x = 0.05;
  settings.step_y = 0.5;
  settings.lambda_start = settings.lambda_final = 5.0;
  if (!check(solver.init(problem, settings, Problem::Params::Zero(), Solver::Matrix::Zero()), "Pbrl::init"))
    return 1;

  Solver::Report first, last;
  if (!check(solver.step(&first), "Pbrl::step")) return 1;
  if (!check(solver.run(30, &last), "Pbrl::run")) return 1;
  std::printf("pbrl %s: penalty %.6g -> %.6g, f %.6g -> %.6g after %lld iterations\n",
              pbrl::to_string(pbrl::Status::ok), first.penalty, last.penalty, first.upper_objective,
              last.upper_objective, static_cast<long long>(solver.iteration()));
  if (!std::isfinite(last.penalty) || !(last.penalty < first.penalty)) {
    std::printf("the penalty did not decrease\n");
    return 1;
  }
  return solver.iteration() == 31 ? 0 : 1;
}
