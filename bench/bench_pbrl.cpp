// Host timings of the three levels of work in pbrl, on random sparse reward-shaping instances
// drawn as in the paper's experiments (reward sparsity 0.7, uniform-then-normalized rows):
//   BM_PbrlStep   one outer PBRL iteration, Pbrl<RewardShaping>::step(): T = 10 PMD oracle steps,
//                 the evaluations of pi_y, pi-hat and the task, the value or Bellman penalty and
//                 the projected step;
//   BM_PmdStep    one policy mirror descent step, pmd_step() (one policy evaluation inside);
//   BM_Evaluate   one policy evaluation, evaluate() (V, Q, occupancy);
//   BM_Build      one model build, Stackelberg::build() (M(x) of a game with A_l = A_f = 5);
//   BM_Vjp        one vector-Jacobian product of that game, Stackelberg::vjp() (S in {10, 100},
//                 double: the Stackelberg step's sizes);
//   BM_VjpPair    the value penalty's two products in one call, Stackelberg::vjp_pair();
// for S in {10, 50, 100}, A = 5, float and double, direct (LU) and sweep evaluation.
// Every object is allocated once, outside the timed loop; the timed loop calls the library only.
//
// Floors, measured in the same run on the same data, against which the summary at the end puts
// every kernel (cpu/floor, wall/floor):
//   BM_EvaluateFloor  Eigen's fixed-size PartialPivLU producing what evaluate() produces (V, Q,
//                     occupancy, V(rho)) from the same MDP and policies; the floor of BM_Evaluate,
//                     BM_EvaluateCold, BM_PmdStep and BM_PbrlStep (for the last two, a step in
//                     units of one LU evaluation);
//   BM_BuildFloor     one pass over the game's transition tensor: a plain loop reading every entry
//                     once and writing the pi_x-weighted rows; the floor of BM_Build.
//   BM_VjpFloor       one pass of dot products over the same tensor: every row P(.|s,a_l,a_f)
//                     dotted with one value vector (Eigen's dot); the floor of BM_Vjp and
//                     BM_VjpPair (each reads the tensor once).
// A last table puts BM_StackelbergStep against the kernels it cannot do without: T + 2
// evaluations (BM_Evaluate, direct), one build (BM_Build), the value penalty's two products
// (BM_VjpPair) and f's leader gradient (BM_Vjp), from the same run.
//
// Clocks: "CPU" is the CPU time of the benchmark thread (Google Benchmark's default,
// CLOCK_THREAD_CPUTIME_ID), "wall" (Google Benchmark's "Time") the elapsed real time. On a shared
// machine quote the CPU-time medians and their ratios to the floor.
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
#include "pbrl/problems/stackelberg.hpp"
#include "reward_shaping_instance.hpp"  // examples/: the reward-shaping example's instance

#include <Eigen/LU>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

constexpr int kA = 5;
constexpr int kInnerSteps = 10;        // T of the PMD oracle in BM_PbrlStep
constexpr std::uint32_t kSeed = 20240601u;

// Tags that keep the registered names short: BM_PbrlStep<float, 100, Bellman, Sweeps>/T:10.
struct Direct { static constexpr pbrl::EvaluationMethod value = pbrl::EvaluationMethod::direct; };
struct Sweeps { static constexpr pbrl::EvaluationMethod value = pbrl::EvaluationMethod::sweeps; };
struct Value { static constexpr pbrl::PenaltyKind value = pbrl::PenaltyKind::value; };
struct Bellman { static constexpr pbrl::PenaltyKind value = pbrl::PenaltyKind::bellman; };

// Skips the benchmark with st's name unless st is ok; true when it is.
bool ok(benchmark::State& state, pbrl::Status st) {
  if (st == pbrl::Status::ok) return true;
  state.SkipWithError(pbrl::to_string(st));
  return false;
}

// A T made from seed (a random instance), or null with the benchmark skipped if it failed.
template <class T>
std::unique_ptr<T> make_checked(benchmark::State& state, std::uint32_t seed) {
  auto inst = std::make_unique<T>(seed);
  if (!ok(state, inst->status)) return nullptr;
  return inst;
}

// A random sparse reward-shaping instance, the reward-shaping example's (reward_shaping_instance.hpp);
// its arrays live in the object (S = 100 in double is about 400 KB, so it is always heap-allocated
// with std::make_unique).
template <typename Scalar, int S>
struct Instance {
  using Problem = pbrl::RewardShaping<Scalar, S, kA>;
  using Matrix = pbrl::StateActionMatrix<Scalar, S, kA>;

  examples::RewardShapingArrays<Scalar, S, kA> arrays;
  Problem problem;
  typename Problem::Params x0;   // a shaping inside the box
  Matrix pi0;                    // a random policy with every probability > 0
  pbrl::Status status = pbrl::Status::ok;

  explicit Instance(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    arrays.draw(rng);
    for (int s = 0; s < S; ++s) pbrl::random_distribution(rng, pi0.row(s).data(), kA);
    for (int i = 0; i < S * kA; ++i) x0(i) = Scalar(0.2) * (Scalar(2) * rng.uniform<Scalar>() - Scalar(1));
    status = problem.init(arrays.data());
  }
};

template <typename Scalar, int S>
std::unique_ptr<Instance<Scalar, S>> make_instance(benchmark::State& state) {
  return make_checked<Instance<Scalar, S>>(state, kSeed + S);
}

void common_counters(benchmark::State& state, int S, std::size_t bytes) {
  state.counters["S"] = S;
  state.counters["A"] = kA;
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kDefaults,
                                               benchmark::Counter::kIs1024);
}

// The timed loop of a kernel: call() (which hides its results from the optimizer) each iteration,
// the loop ended early where a call returning bool returns false (an error: it skipped the
// benchmark); then the S, A and bytes counters.
template <class Call>
void time_calls(benchmark::State& state, int S, std::size_t bytes, Call&& call) {
  for (auto _ : state) {
    if constexpr (std::is_same_v<decltype(call()), bool>) {
      if (!call()) break;
    } else {
      call();
    }
    benchmark::ClobberMemory();
  }
  common_counters(state, S, bytes);
}

// The sweeps counter: the mean over the timed calls of sweeps (their last solves' sweeps).
void sweeps_counter(benchmark::State& state, long sweeps) {
  state.counters["sweeps"] = benchmark::Counter(static_cast<double>(sweeps), benchmark::Counter::kAvgIterations);
}

// A random instance, the shaped MDP M(x0) its problem builds (the MDP points into the model), and
// an evaluation workspace of the method given with its evaluation.
template <typename Scalar, int S, pbrl::EvaluationMethod Method>
struct ShapedMdp {
  using Problem = pbrl::RewardShaping<Scalar, S, kA>;
  using Workspace = pbrl::EvaluationWorkspace<Scalar, S, Method>;
  using Evaluation = pbrl::Evaluation<Scalar, S, kA>;
  std::unique_ptr<Instance<Scalar, S>> inst;
  std::unique_ptr<typename Problem::Model> model;
  typename Problem::MdpType mdp;
  std::unique_ptr<Workspace> ws;
  std::unique_ptr<Evaluation> eval;
};

template <typename Scalar, int S, pbrl::EvaluationMethod Method>
std::unique_ptr<ShapedMdp<Scalar, S, Method>> make_shaped_mdp(benchmark::State& state) {
  using Shaped = ShapedMdp<Scalar, S, Method>;
  auto shaped = std::make_unique<Shaped>();
  shaped->inst = make_instance<Scalar, S>(state);
  if (!shaped->inst) return nullptr;
  shaped->model = std::make_unique<typename Shaped::Problem::Model>();
  if (!ok(state, shaped->inst->problem.build(shaped->inst->x0, *shaped->model, shaped->mdp))) return nullptr;
  shaped->ws = std::make_unique<typename Shaped::Workspace>();
  shaped->eval = std::make_unique<typename Shaped::Evaluation>();
  return shaped;
}

// The two nearby policies BM_Evaluate and BM_EvaluateFloor alternate: pi[0] = the instance's
// random policy, pi[1] = one PMD step from it (untimed; leaves the evaluation holding pi[0]'s).
template <typename Scalar, int S, pbrl::EvaluationMethod Method>
std::unique_ptr<pbrl::StateActionMatrix<Scalar, S, kA>[]> policy_pair(benchmark::State& state,
                                                                      ShapedMdp<Scalar, S, Method>& shaped) {
  using Matrix = pbrl::StateActionMatrix<Scalar, S, kA>;
  auto pi = std::make_unique<Matrix[]>(2);
  pi[0] = shaped.inst->pi0;
  pi[1] = shaped.inst->pi0;
  Matrix log_pi = shaped.inst->pi0.array().log().matrix();
  if (!ok(state, pbrl::pmd_step(shaped.mdp, Scalar(1), *shaped.ws, *shaped.eval, {log_pi, pi[1]}))) return nullptr;
  return pi;
}

// Initializes a PBRL solver of problem at x (the penalty given, the PMD oracle with T =
// state.range(0) inner steps, the uniform policy's softmax logits y0 = 0) and times its step()
// (BM_PbrlStep, BM_StackelbergStep); stepped repeatedly from one init, as on a device. Counters:
// S, A, T, bytes (the whole solver) and, for sweep evaluation, sweeps.
template <pbrl::EvaluationMethod Method, int S, class Problem>
void time_solver_steps(benchmark::State& state, const Problem& problem, const typename Problem::Params& x,
                       pbrl::PenaltyKind penalty) {
  using Solver = pbrl::Pbrl<Problem, Method>;
  using Matrix = typename Solver::Matrix;
  constexpr bool kSweeps = Method == pbrl::EvaluationMethod::sweeps;
  typename Solver::Settings settings;
  settings.penalty_kind = penalty;
  settings.oracle = pbrl::OracleKind::policy_mirror_descent;
  settings.inner_steps = static_cast<int>(state.range(0));
  auto solver = std::make_unique<Solver>();
  const Matrix y0 = Matrix::Zero();  // softmax logits: the uniform policy
  if (!ok(state, solver->init(problem, settings, x, y0))) return;

  typename Solver::Report report;
  long sweeps = 0;
  for (auto _ : state) {
    if (!ok(state, solver->step(&report))) break;
    if constexpr (kSweeps) sweeps += solver->evaluation_workspace().last_sweeps;
    benchmark::DoNotOptimize(report);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(Solver));
  state.counters["T"] = settings.inner_steps;
  // Sweeps of the last solve of each step (the task evaluation, or the Bellman occupancy).
  if constexpr (kSweeps) sweeps_counter(state, sweeps);
}

// ---------------------------------------------------------------------------------------------
// One PBRL outer iteration. The solver is initialized once (outside the timed loop) and then
// stepped repeatedly: the iterates, the oracle's warm start and the sweep warm starts keep moving
// as they would in a run on the device.
template <typename Scalar, int S, class Penalty, class Method>
void BM_PbrlStep(benchmark::State& state) {
  auto inst = make_instance<Scalar, S>(state);
  if (!inst) return;
  time_solver_steps<Method::value, S>(state, inst->problem, inst->x0, Penalty::value);
}

// ---------------------------------------------------------------------------------------------
// One PMD step on the shaped MDP M(x0) built by the problem. The oracle is restarted from the
// same random policy every T steps (as the PBRL oracle runs T steps per iteration); the restart
// is two S x A copies, timed with the steps. The evaluation is kept across steps (sweep warm start).
template <typename Scalar, int S, class Method>
void BM_PmdStep(benchmark::State& state) {
  using Matrix = pbrl::StateActionMatrix<Scalar, S, kA>;
  const auto m = make_shaped_mdp<Scalar, S, Method::value>(state);
  if (!m) return;
  auto pi = std::make_unique<Matrix>(m->inst->pi0);
  auto log_pi = std::make_unique<Matrix>(m->inst->pi0.array().log().matrix());
  const Matrix log_pi0 = *log_pi;
  const Scalar eta(1);

  long sweeps = 0;
  int k = 0;
  for (auto _ : state) {
    if (k == kInnerSteps) {
      *pi = m->inst->pi0;
      *log_pi = log_pi0;
      k = 0;
    }
    if (!ok(state, pbrl::pmd_step(m->mdp, eta, *m->ws, *m->eval, {*log_pi, *pi}))) break;
    ++k;
    if constexpr (Method::value == pbrl::EvaluationMethod::sweeps) sweeps += m->ws->last_sweeps;
    benchmark::DoNotOptimize(pi->data());
    benchmark::DoNotOptimize(m->eval->value_rho);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(*m->ws) + sizeof(*m->eval) + 2 * sizeof(Matrix));
  if constexpr (Method::value == pbrl::EvaluationMethod::sweeps) sweeps_counter(state, sweeps);
}

// ---------------------------------------------------------------------------------------------
// One policy evaluation on M(x0). Two nearby policies (a random one and its PMD successor)
// alternate, so sweeps are warm-started from the previous policy's evaluation, as inside the
// oracle; the direct method's work does not depend on the start.
template <typename Scalar, int S, class Method>
void BM_Evaluate(benchmark::State& state) {
  const auto m = make_shaped_mdp<Scalar, S, Method::value>(state);
  if (!m) return;
  const auto pi = policy_pair(state, *m);
  if (!pi) return;

  long sweeps = 0;
  int which = 1;
  for (auto _ : state) {
    if (!ok(state, pbrl::evaluate(m->mdp, pi[which], *m->ws, *m->eval))) break;
    which ^= 1;
    if constexpr (Method::value == pbrl::EvaluationMethod::sweeps) sweeps += m->ws->last_sweeps;
    benchmark::DoNotOptimize(m->eval->value_rho);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(*m->ws) + sizeof(*m->eval));
  if constexpr (Method::value == pbrl::EvaluationMethod::sweeps) sweeps_counter(state, sweeps);
}

// One sweep evaluation from a cold start (V = d = 0): the bounded worst case of the sweep
// method (the zeroing of the warm start, 2*S scalars, is timed with it).
template <typename Scalar, int S>
void BM_EvaluateCold(benchmark::State& state) {
  const auto m = make_shaped_mdp<Scalar, S, pbrl::EvaluationMethod::sweeps>(state);
  if (!m) return;

  long sweeps = 0;
  for (auto _ : state) {
    m->eval->value.setZero();
    m->eval->occupancy.setZero();
    if (!ok(state, pbrl::evaluate(m->mdp, m->inst->pi0, *m->ws, *m->eval))) break;
    sweeps += m->ws->last_sweeps;
    benchmark::DoNotOptimize(m->eval->value_rho);
    benchmark::ClobberMemory();
  }
  common_counters(state, S, sizeof(*m->ws) + sizeof(*m->eval));
  sweeps_counter(state, sweeps);
}

// The floor of an evaluation: what evaluate() computes, with Eigen's fixed-size PartialPivLU on
// the same MDP and the same two alternating policies: c = <pi, r> - tau*h (the same regularizer
// call), I - gamma*P_pi formed row by row, one factorization, V = LU \ c, d = LU^T \ rho,
// Q = r + gamma*P V, V(rho). Row-major storage, so the rows of I - gamma*P_pi are contiguous
// (Eigen's LU took the same time on column-major storage here, within the noise).
template <typename Scalar, int S>
struct EigenLuEvaluation {
  using Square = Eigen::Matrix<Scalar, S, S, Eigen::RowMajor>;
  Square m;
  Eigen::PartialPivLU<Square> lu;
  pbrl::StateVector<Scalar, S> c, value, occupancy;
  pbrl::StateActionMatrix<Scalar, S, kA> q;
  Scalar value_rho = Scalar(0);

  void operator()(const pbrl::Mdp<Scalar, S, kA>& mdp, const pbrl::StateActionMatrix<Scalar, S, kA>& pi) {
    const auto P = mdp.P();
    for (int s = 0; s < S; ++s) {
      c(s) = pi.row(s).dot(mdp.r().row(s)) - mdp.tau() * mdp.regularizer.value(s, pi.row(s));
      m.row(s).noalias() = -mdp.discount * (pi.row(s) * P.template middleRows<kA>(s * kA));
      m(s, s) += Scalar(1);
    }
    lu.compute(m);
    value = lu.solve(c);
    occupancy = lu.transpose().solve(mdp.rho());
    Eigen::Map<pbrl::Vector<Scalar, S * kA>> flat(q.data());
    flat.noalias() = P * value;
    flat = Eigen::Map<const pbrl::Vector<Scalar, S * kA>>(mdp.reward) + mdp.discount * flat;
    value_rho = mdp.rho().dot(value);
  }
};

template <typename Scalar, int S>
void BM_EvaluateFloor(benchmark::State& state) {
  const auto m = make_shaped_mdp<Scalar, S, pbrl::EvaluationMethod::direct>(state);
  if (!m) return;
  const auto& mdp = m->mdp;
  // The same two policies as BM_Evaluate (pi[1] = one PMD step from pi[0]).
  const auto pi = policy_pair(state, *m);
  if (!pi) return;
  auto floor = std::make_unique<EigenLuEvaluation<Scalar, S>>();

  int which = 1;
  time_calls(state, S, sizeof(EigenLuEvaluation<Scalar, S>), [&] {
    (*floor)(mdp, pi[which]);
    which ^= 1;
    benchmark::DoNotOptimize(floor->value_rho);
    benchmark::DoNotOptimize(floor->occupancy.data());
    benchmark::DoNotOptimize(floor->q.data());
  });
}

// ---------------------------------------------------------------------------------------------
// Model build: Stackelberg::build() of a random game with A_l = A_f = kA (the paper's Figure 1
// shape at S = 100), and its floor. The game's arrays live in the object (S = 100 in double:
// 2 MB of transitions).
constexpr int kAL = kA, kAF = kA;

template <typename Scalar, int S>
struct GameInstance {
  using Game = pbrl::Stackelberg<Scalar, S, kAL, kAF>;
  Scalar leader_reward[S * kAL * kAF];
  Scalar follower_reward[S * kAL * kAF];
  Scalar transition[S * kAL * kAF * S];
  Scalar initial[S];
  Game game;
  typename Game::Params x;                          // leader logits inside the box
  pbrl::StateActionMatrix<Scalar, S, kAL> pi_x;    // softmax(x), for the floor
  pbrl::Status status = pbrl::Status::ok;

  explicit GameInstance(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, leader_reward, S * kAL * kAF, Scalar(0.7));
    pbrl::random_reward(rng, follower_reward, S * kAL * kAF, Scalar(0.7));
    pbrl::random_transition(rng, transition, S * kAL * kAF, S);
    pbrl::random_distribution(rng, initial, S);
    for (int i = 0; i < S * kAL; ++i) x(i) = Scalar(2) * (Scalar(2) * rng.uniform<Scalar>() - Scalar(1));
    typename Game::Data data;
    data.leader_reward = leader_reward;
    data.follower_reward = follower_reward;
    data.transition = transition;
    data.initial = initial;
    data.discount = Scalar(0.9);
    data.leader = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};
    data.follower = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};
    data.logit_bound = Scalar(10);
    status = game.init(data);
    if (status == pbrl::Status::ok) status = game.leader_policy(x, pi_x);
  }
};

template <typename Scalar, int S>
std::unique_ptr<GameInstance<Scalar, S>> make_game(benchmark::State& state) {
  return make_checked<GameInstance<Scalar, S>>(state, kSeed + 7 * S);
}

// Times write(inst, model), a call that writes the game's model M(x) into a model allocated once
// (BM_Build, BM_BuildFloor).
template <typename Scalar, int S, class Write>
void time_model_writes(benchmark::State& state, Write&& write) {
  using Game = typename GameInstance<Scalar, S>::Game;
  auto inst = make_game<Scalar, S>(state);
  if (!inst) return;
  auto model = std::make_unique<typename Game::Model>();
  time_calls(state, S, sizeof(typename Game::Model), [&] { return write(*inst, *model); });
}

template <typename Scalar, int S>
void BM_Build(benchmark::State& state) {
  using Game = typename GameInstance<Scalar, S>::Game;
  typename Game::MdpType mdp;
  time_model_writes<Scalar, S>(state, [&](const GameInstance<Scalar, S>& inst, typename Game::Model& model) {
    if (!ok(state, inst.game.build(inst.x, model, mdp))) return false;
    benchmark::DoNotOptimize(model.transition);
    return true;
  });
}

// The floor of a build: one pass over the transition tensor, every entry read once, each output
// entry written once (out = sum over a_l of pi_x(a_l|s) P(.|s,a_l,a_f), weights precomputed).
template <typename Scalar, int S>
void BM_BuildFloor(benchmark::State& state) {
  using Game = typename GameInstance<Scalar, S>::Game;
  time_model_writes<Scalar, S>(state, [&](const GameInstance<Scalar, S>& inst, typename Game::Model& model) {
    const Scalar* in = inst.transition;
    Scalar* out = model.transition;
    for (int s = 0; s < S; ++s)
      for (int af = 0; af < kAF; ++af) {
        const Scalar* first = in + (s * kAL * kAF + af) * S;  // P(.|s,0,af); a_l steps by kAF*S
        Scalar* row = out + (s * kAF + af) * S;
        for (int t = 0; t < S; ++t) {
          Scalar acc(0);
          for (int al = 0; al < kAL; ++al) acc += inst.pi_x(s, al) * first[al * kAF * S + t];
          row[t] = acc;
        }
      }
    benchmark::DoNotOptimize(out);
  });
}

// Times products(model, grad), J^T products of the game, on the model build(x) made once
// (BM_Vjp, BM_VjpPair).
template <typename Scalar, int S, class Products>
void time_x_products(benchmark::State& state, const GameInstance<Scalar, S>& inst, Products&& products) {
  using Game = typename GameInstance<Scalar, S>::Game;
  auto model = std::make_unique<typename Game::Model>();
  typename Game::MdpType mdp;
  if (!ok(state, inst.game.build(inst.x, *model, mdp))) return;
  typename Game::Params grad = Game::Params::Zero();
  time_calls(state, S, sizeof(typename Game::Params), [&] {
    products(*model, grad);
    benchmark::DoNotOptimize(grad.data());
  });
}

template <typename Scalar, int S>
void BM_Vjp(benchmark::State& state) {
  using Game = typename GameInstance<Scalar, S>::Game;
  auto inst = make_game<Scalar, S>(state);
  if (!inst) return;
  pbrl::StateActionMatrix<Scalar, S, kAF> w;  // an occupancy-like positive weight
  pbrl::StateVector<Scalar, S> v;
  pbrl::Rng rng(kSeed);
  for (int s = 0; s < S; ++s) {
    v(s) = rng.uniform<Scalar>();
    for (int a = 0; a < kAF; ++a) w(s, a) = rng.uniform<Scalar>() / Scalar(S);
  }
  time_x_products(state, *inst, [&](const typename Game::Model& model, typename Game::Params& grad) {
    inst->game.vjp(model, w, v, Scalar(1), grad);
  });
}

// The value penalty's two products, vjp_pair({d1, pi1, v1, 1}, {d2, pi2, v2, -1}): one pass over the
// tensor (d, pi and v as an evaluation would give them: positive, rows summing to one).
template <typename Scalar, int S>
void BM_VjpPair(benchmark::State& state) {
  using Game = typename GameInstance<Scalar, S>::Game;
  auto inst = make_game<Scalar, S>(state);
  if (!inst) return;
  pbrl::StateActionMatrix<Scalar, S, kAF> pi1, pi2;
  pbrl::StateVector<Scalar, S> d1, d2, v1, v2;
  pbrl::Rng rng(kSeed);
  for (int s = 0; s < S; ++s) {
    d1(s) = rng.uniform<Scalar>();
    d2(s) = rng.uniform<Scalar>();
    v1(s) = rng.uniform<Scalar>();
    v2(s) = rng.uniform<Scalar>();
    pbrl::random_distribution(rng, pi1.row(s).data(), kAF);
    pbrl::random_distribution(rng, pi2.row(s).data(), kAF);
  }
  time_x_products(state, *inst, [&](const typename Game::Model& model, typename Game::Params& grad) {
    inst->game.vjp_pair(model, {d1, pi1, v1, Scalar(1)}, {d2, pi2, v2, Scalar(-1)}, grad);
  });
}

// The floor of a vjp: every row of the transition tensor dotted with one vector (Eigen's dot,
// vectorized as the library's kernels are), nothing else.
template <typename Scalar, int S>
void BM_VjpFloor(benchmark::State& state) {
  auto inst = make_game<Scalar, S>(state);
  if (!inst) return;
  pbrl::StateVector<Scalar, S> v;
  pbrl::Rng rng(kSeed);
  for (int s = 0; s < S; ++s) v(s) = rng.uniform<Scalar>();
  Scalar out[kAL * kAF];
  time_calls(state, S, sizeof(typename GameInstance<Scalar, S>::Game::Params), [&] {
    for (int s = 0; s < S; ++s) {
      const Scalar* rows = inst->transition + s * kAL * kAF * S;
      for (int j = 0; j < kAL * kAF; ++j) out[j] = Eigen::Map<const pbrl::StateVector<Scalar, S>>(rows + j * S).dot(v);
      benchmark::DoNotOptimize(out);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// One PBRL-value step on the Stackelberg game (the Figure 1 shape at S = 100: A_l = A_f = 5),
// exact, PMD oracle with T inner steps, softmax follower: the step goal. Stepped
// repeatedly from one init, as on a device.
template <typename Scalar, int S>
void BM_StackelbergStep(benchmark::State& state) {
  auto inst = make_game<Scalar, S>(state);
  if (!inst) return;
  time_solver_steps<pbrl::EvaluationMethod::direct, S>(state, inst->game, inst->x, pbrl::PenaltyKind::value);
}

// ---------------------------------------------------------------------------------------------
// The console output, with the clocks named and, at the end, a summary: per benchmark the
// medians (or the single run's values without repetitions) in CPU and wall time and their ratios
// to its floor from the same run.
class Reporter : public benchmark::ConsoleReporter {
 public:
  bool ReportContext(const Context& context) override {
    const bool ok = ConsoleReporter::ReportContext(context);
    GetOutputStream() << "Clocks: Time = wall (elapsed real time), CPU = CPU time of the benchmark thread "
                         "(CLOCK_THREAD_CPUTIME_ID)\n";
    return ok;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      const std::string name = run.run_name.str();
      Row& row = rows_[name];
      if (row.median && !median) continue;  // a median wins over single repetitions
      row.family = run.family_index;
      row.instance = run.per_family_instance_index;
      row.median = median;
      row.cpu_us = run.GetAdjustedCPUTime() * to_us(run.time_unit);
      row.wall_us = run.GetAdjustedRealTime() * to_us(run.time_unit);
      const auto bytes = run.counters.find("bytes");
      row.bytes = bytes == run.counters.end() ? -1 : bytes->second.value;
      const auto sweeps = run.counters.find("sweeps");
      row.sweeps = sweeps == run.counters.end() ? -1 : sweeps->second.value;
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::ostream& out = GetOutputStream();
    char line[256];
    out << "\nSummary (us per call; medians over the repetitions, or the single run's value; CPU = CPU "
           "time of the benchmark thread, wall = elapsed real time; x/floor = the time over that of the "
           "floor named, from this run; bytes = sizeof of the state the call needs)\n";
    std::snprintf(line, sizeof line, "%-46s %10s %10s  %-28s %9s %10s %8s %7s\n", "benchmark", "cpu_us", "wall_us",
                  "floor", "cpu/floor", "wall/floor", "bytes", "sweeps");
    out << line;
    // In registration order (bench/run interleaves the repetitions at random).
    std::vector<std::pair<std::string, const Row*>> order;
    for (const auto& entry : rows_) order.emplace_back(entry.first, &entry.second);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return std::make_pair(a.second->family, a.second->instance) < std::make_pair(b.second->family, b.second->instance);
    });
    for (const auto& [name, entry] : order) {
      const Row& row = *entry;
      const std::string floor = floor_of(name);
      const auto f = rows_.find(floor);
      char cpu_ratio[32] = "-", wall_ratio[32] = "-", bytes[32] = "-", sweeps[32] = "-";
      if (f != rows_.end() && f->second.cpu_us > 0 && f->second.wall_us > 0) {
        std::snprintf(cpu_ratio, sizeof cpu_ratio, "%.2f", row.cpu_us / f->second.cpu_us);
        std::snprintf(wall_ratio, sizeof wall_ratio, "%.2f", row.wall_us / f->second.wall_us);
      }
      if (row.bytes >= 0) std::snprintf(bytes, sizeof bytes, "%.0f", row.bytes);
      if (row.sweeps >= 0) std::snprintf(sweeps, sizeof sweeps, "%.1f", row.sweeps);
      std::snprintf(line, sizeof line, "%-46s %10.2f %10.2f  %-28s %9s %10s %8s %7s\n", name.c_str(), row.cpu_us,
                    row.wall_us, f == rows_.end() ? "-" : floor.c_str(), cpu_ratio, wall_ratio, bytes, sweeps);
      out << line;
    }
    step_against_its_kernels(out);
    out.flush();
  }

 private:
  struct Row {
    bool median = false;
    std::int64_t family = 0, instance = 0;  // registration order
    double cpu_us = 0, wall_us = 0, bytes = -1, sweeps = -1;
  };

  static double to_us(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1e-3;
      case benchmark::kMicrosecond: return 1;
      case benchmark::kMillisecond: return 1e3;
      case benchmark::kSecond: return 1e6;
    }
    return 1;
  }

  // "BM_Kernel<float, 100, ...>/T:10" -> its floor at the same scalar and S: BM_BuildFloor for
  // builds, BM_VjpFloor for vjps and vjp pairs, BM_EvaluateFloor for the rest; floors have none.
  static std::string floor_of(const std::string& name) {
    const std::size_t open = name.find('<');
    if (open == std::string::npos) return "";
    const std::string family = name.substr(0, open);
    if (family == "BM_EvaluateFloor" || family == "BM_BuildFloor" || family == "BM_VjpFloor") return "";
    std::size_t end = name.find(',', open);
    if (end != std::string::npos) end = name.find_first_of(",>", end + 1);
    if (end == std::string::npos) return "";
    const std::string args = name.substr(open + 1, end - open - 1);  // "float, 100"
    if (family == "BM_Build" || family == "BM_Vjp") return family + "Floor<" + args + ">";
    if (family == "BM_VjpPair") return "BM_VjpFloor<" + args + ">";
    return "BM_EvaluateFloor<" + args + ">";
  }

  // An exact PBRL-value step on the Stackelberg game cannot take less than its T + 2 evaluations
  // (the oracle's T on M(x_k), pi_y's and pi-hat's; f's reuses pi_y's factors), one build of
  // M(x_k), the value penalty's two products (V^{pi-hat} and V^{pi_y}, one vjp_pair) and f's
  // leader gradient (V_l, a vjp's work): this run's BM_Evaluate<Scalar, S, Direct>,
  // BM_Build<Scalar, S>, BM_VjpPair<Scalar, S> and BM_Vjp<Scalar, S>. The ratio shows
  // what the rest (the PMD updates, f's own evaluation on the chain, the projection) adds.
  void step_against_its_kernels(std::ostream& out) const {
    char line[256];
    bool header = false;
    for (const auto& [name, row] : rows_) {
      const std::string family = "BM_StackelbergStep<";
      const std::size_t t_at = name.find(">/T:");
      if (name.compare(0, family.size(), family) != 0 || t_at == std::string::npos) continue;
      const std::string args = name.substr(family.size(), t_at - family.size());  // "double, 100"
      const int t = std::atoi(name.c_str() + t_at + 4);
      const auto eval = rows_.find("BM_Evaluate<" + args + ", Direct>");
      const auto build = rows_.find("BM_Build<" + args + ">");
      const auto vjp = rows_.find("BM_Vjp<" + args + ">");
      const auto pair = rows_.find("BM_VjpPair<" + args + ">");
      if (eval == rows_.end() || build == rows_.end() || vjp == rows_.end() || pair == rows_.end()) continue;
      const double bound =
          (t + 2) * eval->second.cpu_us + build->second.cpu_us + pair->second.cpu_us + vjp->second.cpu_us;
      if (!header) {
        out << "\nStackelberg step against its required kernels (CPU us; bound = (T + 2) x BM_Evaluate<.., Direct> "
               "+ BM_Build + BM_VjpPair + BM_Vjp, from this run)\n";
        std::snprintf(line, sizeof line, "%-46s %10s %10s %9s\n", "benchmark", "cpu_us", "bound_us", "cpu/bound");
        out << line;
        header = true;
      }
      std::snprintf(line, sizeof line, "%-46s %10.2f %10.2f %9.2f\n", name.c_str(), row.cpu_us, bound,
                    row.cpu_us / bound);
      out << line;
    }
  }

  std::map<std::string, Row> rows_;
};

}  // namespace

// Registration order is the order of the output and of the summary.
// MACRO(Scalar, S) for S = 10, 50 and 100, in float, then in double.
#define PBRL_BENCH_SIZES(MACRO) \
  MACRO(float, 10);             \
  MACRO(float, 50);             \
  MACRO(float, 100);            \
  MACRO(double, 10);            \
  MACRO(double, 50);            \
  MACRO(double, 100)

// Both penalties; direct evaluation at every size, sweeps at S = 100 too.
#define PBRL_BENCH_STEP(Scalar, S, Penalty, Method) \
  BENCHMARK_TEMPLATE(BM_PbrlStep, Scalar, S, Penalty, Method)->ArgName("T")->Arg(kInnerSteps)
#define PBRL_BENCH_STEPS(Scalar, S, Method)   \
  PBRL_BENCH_STEP(Scalar, S, Value, Method); \
  PBRL_BENCH_STEP(Scalar, S, Bellman, Method)
#define PBRL_BENCH_STEP_SIZES(Scalar)     \
  PBRL_BENCH_STEPS(Scalar, 10, Direct);  \
  PBRL_BENCH_STEPS(Scalar, 50, Direct);  \
  PBRL_BENCH_STEPS(Scalar, 100, Direct); \
  PBRL_BENCH_STEPS(Scalar, 100, Sweeps)

PBRL_BENCH_STEP_SIZES(float);
PBRL_BENCH_STEP_SIZES(double);

#define PBRL_BENCH_PMD(Scalar, S)                    \
  BENCHMARK_TEMPLATE(BM_PmdStep, Scalar, S, Direct); \
  BENCHMARK_TEMPLATE(BM_PmdStep, Scalar, S, Sweeps)

PBRL_BENCH_SIZES(PBRL_BENCH_PMD);

// Each floor right before its kernels, so they run close together in time.
#define PBRL_BENCH_EVALUATE(Scalar, S)                      \
  BENCHMARK_TEMPLATE(BM_EvaluateFloor, Scalar, S);          \
  BENCHMARK_TEMPLATE(BM_Evaluate, Scalar, S, Direct);       \
  BENCHMARK_TEMPLATE(BM_Evaluate, Scalar, S, Sweeps)

PBRL_BENCH_SIZES(PBRL_BENCH_EVALUATE);

#define PBRL_BENCH_COLD(Scalar, S) BENCHMARK_TEMPLATE(BM_EvaluateCold, Scalar, S)

PBRL_BENCH_SIZES(PBRL_BENCH_COLD);

#define PBRL_BENCH_BUILD(Scalar, S)               \
  BENCHMARK_TEMPLATE(BM_BuildFloor, Scalar, S);   \
  BENCHMARK_TEMPLATE(BM_Build, Scalar, S)

PBRL_BENCH_SIZES(PBRL_BENCH_BUILD);

#define PBRL_BENCH_VJP(Scalar, S)             \
  BENCHMARK_TEMPLATE(BM_VjpFloor, Scalar, S); \
  BENCHMARK_TEMPLATE(BM_Vjp, Scalar, S);      \
  BENCHMARK_TEMPLATE(BM_VjpPair, Scalar, S)

PBRL_BENCH_VJP(double, 10);
PBRL_BENCH_VJP(double, 100);

BENCHMARK_TEMPLATE(BM_StackelbergStep, double, 10)->ArgName("T")->Arg(1)->Arg(10);
BENCHMARK_TEMPLATE(BM_StackelbergStep, double, 100)->ArgName("T")->Arg(1)->Arg(10);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
