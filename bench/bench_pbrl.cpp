// Host timings of the three levels of work in pbrl, on random sparse reward-shaping instances
// drawn as in the paper's experiments (reward sparsity 0.7, uniform-then-normalized rows):
//   BM_PbrlStep   one outer PBRL iteration, Pbrl<RewardShaping>::step(): T = 10 PMD oracle steps,
//                 the evaluations of pi_y, pi-hat and the task, the value or Bellman penalty and
//                 the projected step;
//   BM_PmdStep    one policy mirror descent step, pmd_step() (one policy evaluation inside);
//   BM_Evaluate   one policy evaluation, evaluate() (V, Q, occupancy);
// for S in {10, 50, 100}, A = 5, float and double, direct (LU) and sweep evaluation.
// Every object is allocated once, outside the timed loop; the timed loop calls the library only.
//
// Counters: S, A, T (oracle steps per PBRL iteration), bytes (sizeof of the state the timed call
// needs: the whole solver for BM_PbrlStep, workspace + evaluation + policies otherwise) and, for
// sweep evaluation, sweeps (mean over the timed calls of the sweeps the call's last solve used;
// in BM_PbrlStep that is the task evaluation or the Bellman occupancy, not the oracle's).
//
// Run with bench/run (builds the Release configuration, 5 repetitions, medians).

#include <benchmark/benchmark.h>

#include "pbrl/pbrl.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/reward_shaping.hpp"

#include <cstdint>
#include <memory>

namespace {

constexpr int kA = 5;
constexpr int kInnerSteps = 10;        // T of the PMD oracle in BM_PbrlStep
constexpr std::uint32_t kSeed = 20240601u;

// Tags that keep the registered names short: BM_PbrlStep<float, 100, Bellman, Sweeps>/T:10.
struct Direct { static constexpr pbrl::EvaluationMethod value = pbrl::EvaluationMethod::direct; };
struct Sweeps { static constexpr pbrl::EvaluationMethod value = pbrl::EvaluationMethod::sweeps; };
struct Value { static constexpr pbrl::PenaltyKind value = pbrl::PenaltyKind::value; };
struct Bellman { static constexpr pbrl::PenaltyKind value = pbrl::PenaltyKind::bellman; };

// A random sparse reward-shaping instance; its arrays live in the object (S = 100 in double is
// about 400 KB, so it is always heap-allocated with std::make_unique).
template <typename Scalar, int S>
struct Instance {
  using Problem = pbrl::RewardShaping<Scalar, S, kA>;
  using Matrix = pbrl::StateActionMatrix<Scalar, S, kA>;

  Scalar reward[S * kA];
  Scalar transition[S * kA * S];
  Scalar initial[S];
  Problem problem;
  typename Problem::Params x0;   // a shaping inside the box
  Matrix pi0;                    // a random policy with every probability > 0
  pbrl::Status status = pbrl::Status::ok;

  explicit Instance(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward, S * kA, Scalar(0.7));
    pbrl::random_transition(rng, transition, S * kA, S);
    pbrl::random_distribution(rng, initial, S);
    for (int s = 0; s < S; ++s) pbrl::random_distribution(rng, pi0.row(s).data(), kA);
    for (int i = 0; i < S * kA; ++i) x0(i) = Scalar(0.2) * (Scalar(2) * rng.uniform<Scalar>() - Scalar(1));

    typename Problem::Data data;
    data.reward = reward;
    data.transition = transition;
    data.initial = initial;
    data.discount = Scalar(0.9);
    data.lower = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};  // regularized learner
    data.upper = {pbrl::RegularizerKind::entropy, Scalar(0), nullptr};    // unregularized task
    data.shaping = {Scalar(-1), Scalar(1)};
    status = problem.init(data);
  }
};

template <typename Scalar, int S>
std::unique_ptr<Instance<Scalar, S>> make_instance(benchmark::State& state) {
  auto inst = std::make_unique<Instance<Scalar, S>>(kSeed + S);
  if (inst->status != pbrl::Status::ok) {
    state.SkipWithError(pbrl::to_string(inst->status));
    return nullptr;
  }
  return inst;
}

void common_counters(benchmark::State& state, int S, std::size_t bytes) {
  state.counters["S"] = S;
  state.counters["A"] = kA;
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kDefaults,
                                               benchmark::Counter::kIs1024);
}

// ---------------------------------------------------------------------------------------------
// One PBRL outer iteration. The solver is initialized once (outside the timed loop) and then
// stepped repeatedly: the iterates, the oracle's warm start and the sweep warm starts keep moving
// as they would in a run on the device.
template <typename Scalar, int S, class Penalty, class Method>
void BM_PbrlStep(benchmark::State& state) {
  using Problem = pbrl::RewardShaping<Scalar, S, kA>;
  using Solver = pbrl::Pbrl<Problem, Method::value>;
  auto inst = make_instance<Scalar, S>(state);
  if (!inst) return;

  typename Solver::Settings settings;
  settings.penalty = Penalty::value;
  settings.oracle = pbrl::OracleKind::policy_mirror_descent;
  settings.inner_steps = static_cast<int>(state.range(0));
  auto solver = std::make_unique<Solver>();
  using Matrix = typename Solver::Matrix;
  const Matrix y0 = Matrix::Zero();  // softmax logits: the uniform policy
  if (pbrl::Status st = solver->init(inst->problem, settings, inst->x0, y0); st != pbrl::Status::ok) {
    state.SkipWithError(pbrl::to_string(st));
    return;
  }

  typename Solver::Report report;
  long sweeps = 0;
  for (auto _ : state) {
    const pbrl::Status st = solver->step(&report);
    if (st != pbrl::Status::ok) {
      state.SkipWithError(pbrl::to_string(st));
      break;
    }
    if constexpr (Method::value == pbrl::EvaluationMethod::sweeps)
      sweeps += solver->evaluation_workspace().last_sweeps;
    benchmark::DoNotOptimize(report);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(Solver));
  state.counters["T"] = settings.inner_steps;
  // Sweeps of the last solve of each step (the task evaluation, or the Bellman occupancy).
  if constexpr (Method::value == pbrl::EvaluationMethod::sweeps)
    state.counters["sweeps"] = benchmark::Counter(static_cast<double>(sweeps), benchmark::Counter::kAvgIterations);
}

// ---------------------------------------------------------------------------------------------
// One PMD step on the shaped MDP M(x0) built by the problem. The oracle is restarted from the
// same random policy every T steps (as the PBRL oracle runs T steps per iteration); the restart
// is two S x A copies, timed with the steps. The evaluation is kept across steps (sweep warm start).
template <typename Scalar, int S, class Method>
void BM_PmdStep(benchmark::State& state) {
  using Problem = pbrl::RewardShaping<Scalar, S, kA>;
  using Matrix = typename Problem::Matrix;
  using Workspace = pbrl::EvaluationWorkspace<Scalar, S, Method::value>;
  auto inst = make_instance<Scalar, S>(state);
  if (!inst) return;

  auto model = std::make_unique<typename Problem::Model>();
  typename Problem::MdpType mdp;
  if (pbrl::Status st = inst->problem.build(inst->x0, *model, mdp); st != pbrl::Status::ok) {
    state.SkipWithError(pbrl::to_string(st));
    return;
  }
  auto ws = std::make_unique<Workspace>();
  auto eval = std::make_unique<pbrl::Evaluation<Scalar, S, kA>>();
  auto pi = std::make_unique<Matrix>(inst->pi0);
  auto log_pi = std::make_unique<Matrix>(inst->pi0.array().log().matrix());
  const Matrix log_pi0 = *log_pi;
  const Scalar eta(1);

  long sweeps = 0;
  int k = 0;
  for (auto _ : state) {
    if (k == kInnerSteps) {
      *pi = inst->pi0;
      *log_pi = log_pi0;
      k = 0;
    }
    const pbrl::Status st = pbrl::pmd_step(mdp, eta, *ws, *eval, *log_pi, *pi);
    if (st != pbrl::Status::ok) {
      state.SkipWithError(pbrl::to_string(st));
      break;
    }
    ++k;
    if constexpr (Method::value == pbrl::EvaluationMethod::sweeps) sweeps += ws->last_sweeps;
    benchmark::DoNotOptimize(pi->data());
    benchmark::DoNotOptimize(eval->value_rho);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(Workspace) + sizeof(*eval) + 2 * sizeof(Matrix));
  if constexpr (Method::value == pbrl::EvaluationMethod::sweeps)
    state.counters["sweeps"] = benchmark::Counter(static_cast<double>(sweeps), benchmark::Counter::kAvgIterations);
}

// ---------------------------------------------------------------------------------------------
// One policy evaluation on M(x0). Two nearby policies (a random one and its PMD successor)
// alternate, so sweeps are warm-started from the previous policy's evaluation, as inside the
// oracle; the direct method's work does not depend on the start.
template <typename Scalar, int S, class Method>
void BM_Evaluate(benchmark::State& state) {
  using Problem = pbrl::RewardShaping<Scalar, S, kA>;
  using Matrix = typename Problem::Matrix;
  using Workspace = pbrl::EvaluationWorkspace<Scalar, S, Method::value>;
  auto inst = make_instance<Scalar, S>(state);
  if (!inst) return;

  auto model = std::make_unique<typename Problem::Model>();
  typename Problem::MdpType mdp;
  if (pbrl::Status st = inst->problem.build(inst->x0, *model, mdp); st != pbrl::Status::ok) {
    state.SkipWithError(pbrl::to_string(st));
    return;
  }
  auto ws = std::make_unique<Workspace>();
  auto eval = std::make_unique<pbrl::Evaluation<Scalar, S, kA>>();
  // pi[1] = one PMD step from pi[0] (untimed); leaves eval holding pi[0]'s evaluation.
  auto pi = std::make_unique<Matrix[]>(2);
  pi[0] = inst->pi0;
  pi[1] = inst->pi0;
  Matrix log_pi = inst->pi0.array().log().matrix();
  if (pbrl::Status st = pbrl::pmd_step(mdp, Scalar(1), *ws, *eval, log_pi, pi[1]); st != pbrl::Status::ok) {
    state.SkipWithError(pbrl::to_string(st));
    return;
  }

  long sweeps = 0;
  int which = 1;
  for (auto _ : state) {
    const pbrl::Status st = pbrl::evaluate(mdp, pi[which], *ws, *eval);
    if (st != pbrl::Status::ok) {
      state.SkipWithError(pbrl::to_string(st));
      break;
    }
    which ^= 1;
    if constexpr (Method::value == pbrl::EvaluationMethod::sweeps) sweeps += ws->last_sweeps;
    benchmark::DoNotOptimize(eval->value_rho);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(Workspace) + sizeof(*eval));
  if constexpr (Method::value == pbrl::EvaluationMethod::sweeps)
    state.counters["sweeps"] = benchmark::Counter(static_cast<double>(sweeps), benchmark::Counter::kAvgIterations);
}

// One sweep evaluation from a cold start (V = d = 0): the bounded worst case of the sweep
// method (the zeroing of the warm start, 2*S scalars, is timed with it).
template <typename Scalar, int S>
void BM_EvaluateCold(benchmark::State& state) {
  using Problem = pbrl::RewardShaping<Scalar, S, kA>;
  using Workspace = pbrl::EvaluationWorkspace<Scalar, S, pbrl::EvaluationMethod::sweeps>;
  auto inst = make_instance<Scalar, S>(state);
  if (!inst) return;

  auto model = std::make_unique<typename Problem::Model>();
  typename Problem::MdpType mdp;
  if (pbrl::Status st = inst->problem.build(inst->x0, *model, mdp); st != pbrl::Status::ok) {
    state.SkipWithError(pbrl::to_string(st));
    return;
  }
  auto ws = std::make_unique<Workspace>();
  auto eval = std::make_unique<pbrl::Evaluation<Scalar, S, kA>>();

  long sweeps = 0;
  for (auto _ : state) {
    eval->value.setZero();
    eval->occupancy.setZero();
    const pbrl::Status st = pbrl::evaluate(mdp, inst->pi0, *ws, *eval);
    if (st != pbrl::Status::ok) {
      state.SkipWithError(pbrl::to_string(st));
      break;
    }
    sweeps += ws->last_sweeps;
    benchmark::DoNotOptimize(eval->value_rho);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(Workspace) + sizeof(*eval));
  state.counters["sweeps"] = benchmark::Counter(static_cast<double>(sweeps), benchmark::Counter::kAvgIterations);
}

}  // namespace

#define PBRL_BENCH_STEP(Scalar, S, Penalty, Method) \
  BENCHMARK_TEMPLATE(BM_PbrlStep, Scalar, S, Penalty, Method)->ArgName("T")->Arg(kInnerSteps)

PBRL_BENCH_STEP(float, 10, Value, Direct);
PBRL_BENCH_STEP(float, 10, Bellman, Direct);
PBRL_BENCH_STEP(float, 50, Value, Direct);
PBRL_BENCH_STEP(float, 50, Bellman, Direct);
PBRL_BENCH_STEP(float, 100, Value, Direct);
PBRL_BENCH_STEP(float, 100, Bellman, Direct);
PBRL_BENCH_STEP(float, 100, Value, Sweeps);
PBRL_BENCH_STEP(float, 100, Bellman, Sweeps);
PBRL_BENCH_STEP(double, 10, Value, Direct);
PBRL_BENCH_STEP(double, 10, Bellman, Direct);
PBRL_BENCH_STEP(double, 50, Value, Direct);
PBRL_BENCH_STEP(double, 50, Bellman, Direct);
PBRL_BENCH_STEP(double, 100, Value, Direct);
PBRL_BENCH_STEP(double, 100, Bellman, Direct);
PBRL_BENCH_STEP(double, 100, Value, Sweeps);
PBRL_BENCH_STEP(double, 100, Bellman, Sweeps);

BENCHMARK_TEMPLATE(BM_PmdStep, float, 10, Direct);
BENCHMARK_TEMPLATE(BM_PmdStep, float, 10, Sweeps);
BENCHMARK_TEMPLATE(BM_PmdStep, float, 50, Direct);
BENCHMARK_TEMPLATE(BM_PmdStep, float, 50, Sweeps);
BENCHMARK_TEMPLATE(BM_PmdStep, float, 100, Direct);
BENCHMARK_TEMPLATE(BM_PmdStep, float, 100, Sweeps);
BENCHMARK_TEMPLATE(BM_PmdStep, double, 10, Direct);
BENCHMARK_TEMPLATE(BM_PmdStep, double, 10, Sweeps);
BENCHMARK_TEMPLATE(BM_PmdStep, double, 50, Direct);
BENCHMARK_TEMPLATE(BM_PmdStep, double, 50, Sweeps);
BENCHMARK_TEMPLATE(BM_PmdStep, double, 100, Direct);
BENCHMARK_TEMPLATE(BM_PmdStep, double, 100, Sweeps);

BENCHMARK_TEMPLATE(BM_Evaluate, float, 10, Direct);
BENCHMARK_TEMPLATE(BM_Evaluate, float, 10, Sweeps);
BENCHMARK_TEMPLATE(BM_Evaluate, float, 50, Direct);
BENCHMARK_TEMPLATE(BM_Evaluate, float, 50, Sweeps);
BENCHMARK_TEMPLATE(BM_Evaluate, float, 100, Direct);
BENCHMARK_TEMPLATE(BM_Evaluate, float, 100, Sweeps);
BENCHMARK_TEMPLATE(BM_Evaluate, double, 10, Direct);
BENCHMARK_TEMPLATE(BM_Evaluate, double, 10, Sweeps);
BENCHMARK_TEMPLATE(BM_Evaluate, double, 50, Direct);
BENCHMARK_TEMPLATE(BM_Evaluate, double, 50, Sweeps);
BENCHMARK_TEMPLATE(BM_Evaluate, double, 100, Direct);
BENCHMARK_TEMPLATE(BM_Evaluate, double, 100, Sweeps);

BENCHMARK_TEMPLATE(BM_EvaluateCold, float, 10);
BENCHMARK_TEMPLATE(BM_EvaluateCold, float, 50);
BENCHMARK_TEMPLATE(BM_EvaluateCold, float, 100);
BENCHMARK_TEMPLATE(BM_EvaluateCold, double, 10);
BENCHMARK_TEMPLATE(BM_EvaluateCold, double, 50);
BENCHMARK_TEMPLATE(BM_EvaluateCold, double, 100);

BENCHMARK_MAIN();
