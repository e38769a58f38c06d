// Reward shaping with PBRL (paper, Section 2.2 and Algorithm 1).
//
// A task with a sparse reward (70% of the entries are 0, as in the paper's random instances) is
// learned by an entropy-regularized learner (tau > 0). Its soft-optimal policy is too random
// for the task, which is scored without regularization. PBRL learns a shaping term x(s,a) in a
// box so that the learner's optimum on r + x does better on the task, while the penalty keeps
// the learner's policy y at that optimum.
//
// Usage: reward_shaping [--states 10|20|50|100] [--iterations K] [--penalty-kind value|bellman]
//                       [--seed N] [--every N]
// Prints f, p, the lower-level gap and |G| per iteration, then a summary.

#include "pbrl/pbrl.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "reward_shaping_instance.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

struct Options {
  int states = 20;
  long iterations = 300;
  pbrl::PenaltyKind penalty_kind = pbrl::PenaltyKind::value;
  unsigned seed = 1;
  long every = 20;
};

template <int S, int A>
int run(const Options& opt) {
  using Real = double;
  using Problem = pbrl::RewardShaping<Real, S, A>;
  using Solver = pbrl::Pbrl<Problem>;

  // Model arrays and the solver are static: on a device they would be flash and RAM.
  static examples::RewardShapingArrays<Real, S, A> arrays;
  pbrl::Rng rng(opt.seed);
  arrays.draw(rng);
  const typename Problem::Data data = arrays.data();
  static Problem problem;
  if (pbrl::Status st = problem.init(data); st != pbrl::Status::ok) {
    std::fprintf(stderr, "problem: %s\n", pbrl::to_string(st));
    return 1;
  }

  const pbrl::PbrlSettings<Real> settings = examples::reward_shaping_settings<Real>(opt.penalty_kind);

  static Solver solver;
  const typename Problem::Params x0 = Problem::Params::Zero();
  const pbrl::StateActionMatrix<Real, S, A> y0 = pbrl::StateActionMatrix<Real, S, A>::Zero();
  if (pbrl::Status st = solver.init(problem, settings, x0, y0); st != pbrl::Status::ok) {
    std::fprintf(stderr, "init: %s\n", pbrl::to_string(st));
    return 1;
  }

  std::printf("reward shaping: %d states, %d actions, gamma 0.9, learner tau 0.1, %s penalty\n", S, A,
              opt.penalty_kind == pbrl::PenaltyKind::value ? "value" : "Bellman");
  std::printf("solver RAM (sizeof): %zu bytes\n", sizeof(Solver));
  std::printf("%6s %12s %12s %12s %10s %8s\n", "iter", "f", "p", "gap", "|G|", "lambda");
  typename Solver::Report r, first;
  for (long k = 0; k < opt.iterations; ++k) {
    if (pbrl::Status st = solver.step(&r); st != pbrl::Status::ok) {
      std::fprintf(stderr, "step %ld: %s\n", k, pbrl::to_string(st));
      return 1;
    }
    if (k == 0) first = r;
    if (k % opt.every == 0 || k + 1 == opt.iterations)
      std::printf("%6lld %12.6f %12.3e %12.3e %10.4f %8.3f\n", static_cast<long long>(r.iteration), r.upper_objective, r.penalty,
                  r.lower_gap, r.projected_gradient_norm, r.lambda);
  }

  // The learner without shaping: soft-optimal policy of the task reward at tau = 0.1.
  pbrl::Mdp<Real, S, A> unshaped{arrays.reward, arrays.transition, arrays.initial, data.discount, data.lower};
  static pbrl::StateVector<Real, S> v;
  static pbrl::StateActionMatrix<Real, S, A> q, log_pi, pi, pi_y;
  v.setZero();
  if (pbrl::soft_value_iteration(unshaped, 2000, Real(1e-12), v, q, {log_pi, pi}) != pbrl::Status::ok) return 1;
  static pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct> ws;
  static pbrl::Evaluation<Real, S, A> before, after;
  solver.policy(pi_y);
  if (pbrl::evaluate(problem.task(), pi, ws, before) != pbrl::Status::ok ||
      pbrl::evaluate(problem.task(), pi_y, ws, after) != pbrl::Status::ok)
    return 1;

  std::printf("\nsummary after %ld iterations\n", opt.iterations);
  std::printf("  task return V(rho) of the learner's optimum, no shaping : %.6f\n", before.value_rho);
  std::printf("  task return V(rho) of the learner's policy, with PBRL   : %.6f\n", after.value_rho);
  std::printf("  f: %.6f -> %.6f   penalty: %.3e -> %.3e   |G|: %.4f -> %.4f\n", first.upper_objective,
              r.upper_objective, first.penalty, r.penalty, first.projected_gradient_norm,
              r.projected_gradient_norm);
  std::printf("  largest shaping |x|: %.4f\n", solver.x().cwiseAbs().maxCoeff());
  return 0;
}

void usage() {
  std::printf(
      "usage: reward_shaping [--states 10|20|50|100] [--iterations K] [--penalty-kind value|bellman]\n"
      "                      [--seed N] [--every N]\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      usage();
      return 0;
    } else if (next && std::strcmp(a, "--states") == 0) {
      opt.states = std::atoi(next), ++i;
    } else if (next && std::strcmp(a, "--iterations") == 0) {
      opt.iterations = std::atol(next), ++i;
    } else if (next && std::strcmp(a, "--seed") == 0) {
      opt.seed = static_cast<unsigned>(std::strtoul(next, nullptr, 10)), ++i;
    } else if (next && std::strcmp(a, "--every") == 0) {
      opt.every = std::atol(next) > 0 ? std::atol(next) : 1, ++i;
    } else if (next && std::strcmp(a, "--penalty-kind") == 0) {
      if (std::strcmp(next, "value") == 0) opt.penalty_kind = pbrl::PenaltyKind::value;
      else if (std::strcmp(next, "bellman") == 0) opt.penalty_kind = pbrl::PenaltyKind::bellman;
      else { usage(); return 2; }
      ++i;
    } else {
      usage();
      return 2;
    }
  }
  if (opt.iterations < 1) { usage(); return 2; }
  switch (opt.states) {
    case 10: return run<10, 5>(opt);
    case 20: return run<20, 5>(opt);
    case 50: return run<50, 5>(opt);
    case 100: return run<100, 5>(opt);
    default: usage(); return 2;
  }
}
