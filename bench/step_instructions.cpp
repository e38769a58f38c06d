// Instructions per solver step() at the paper's sizes, in float, for a firmware engineer's
// time budget (bench/instructions runs it and prints the table):
//   incentive_pbrl_ni     PbrlZeroSum<IncentiveDesign<float, 10, 5, 5>>, the paper's Figure 3
//                         settings (lambda 4, T 1, steps 0.1, policy-gradient oracle, B 24, H 5)
//   stackelberg20_value   Pbrl<Stackelberg<float, 20, 5, 5>>, PBRL-value (lambda 2, T 1, B 16, H 5)
//   stackelberg20_bellman Pbrl<Stackelberg<float, 20, 5, 5>>, PBRL-Bellman (lambda 7, T 10, B 16, H 5)
// each in sampled mode (the paper's) and in exact mode, from x = 0, y = 0 on a random instance
// drawn as the experiments draw theirs. step() is called without a report, as a control loop
// would (a report adds two exact evaluations in sampled mode).
//
// Counting:
// - Host: under `valgrind --tool=callgrind`; each step is bracketed by CALLGRIND_ZERO_STATS and
//   CALLGRIND_DUMP_STATS_AT("<config>/<mode>/<k>"), so every dump holds one step's instructions
//   (bench/instructions parses them). Outside valgrind the requests do nothing.
// - Bare metal: SysTick with the processor clock (CSR = 5) under `qemu-system-arm -icount shift=0`.
//   QEMU then advances its clock 1 ns per instruction and mps2-an386's 25 MHz SysTick counts once
//   per 40 instructions: the count is exact to 40 instructions and the same on every run. QEMU
//   counts instructions, not cycles (it is not cycle-accurate, and its DWT CYCCNT reads 0); on
//   hardware, count cycles with DWT CYCCNT instead. A calibration loop of known length checks
//   that the clock really follows the instruction count (i.e. that -icount is on).
//   Prints `result <config> <mode> <steps> <min> <median> <max>` per configuration.
//
// Usage: step_instructions [--steps N]   (bare metal: pass arguments with QEMU's -append)

#include "pbrl/pbrl.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if PBRL_STEP_INSTRUCTIONS_SYSTICK
#elif PBRL_STEP_INSTRUCTIONS_CALLGRIND
#include <valgrind/callgrind.h>
#else
#error "build through bench/CMakeLists.txt: it picks the counter of the target"
#endif

namespace {

constexpr int kMaxSteps = 200;
constexpr double kDiscount = 0.9;  // examples/experiment_settings.hpp: kDiscount
constexpr int kHorizon = 5;        // paper: H
constexpr int kSliceRollouts = 3;  // rollouts per slice of a sliced step: the firmware examples' choice

// ---- Counters ---------------------------------------------------------------------------------

#if PBRL_STEP_INSTRUCTIONS_SYSTICK
// Instructions per SysTick count: QEMU's clock at -icount shift=0 (1 ns per instruction) over
// the board's processor clock (25 MHz on mps2-an386: 40); bench/CMakeLists.txt sets it per board.
#ifndef PBRL_INSTRUCTIONS_PER_TICK
#define PBRL_INSTRUCTIONS_PER_TICK 40
#endif
constexpr std::uint32_t kInstructionsPerTick = PBRL_INSTRUCTIONS_PER_TICK;
constexpr std::uint32_t kReload = 0xFFFFFFu;        // 24-bit counter, free running
constexpr std::uint32_t kCountFlag = 1u << 16;

volatile std::uint32_t& reg(std::uintptr_t address) { return *reinterpret_cast<volatile std::uint32_t*>(address); }
volatile std::uint32_t& syst_csr() { return reg(0xE000E010u); }
volatile std::uint32_t& syst_rvr() { return reg(0xE000E014u); }
volatile std::uint32_t& syst_cvr() { return reg(0xE000E018u); }

void counter_setup() {
  syst_csr() = 0;
  syst_rvr() = kReload;
  syst_cvr() = 0;
  syst_csr() = 5;  // ENABLE | CLKSOURCE (processor clock); no interrupt: wraps are polled
  // The first tick loads the reload value (QEMU does not flag that load): start after it.
  while (syst_cvr() == 0) {
  }
}

std::uint32_t start_count = 0;

void counter_start() {
  const std::uint32_t clear = syst_csr();  // reading clears COUNTFLAG
  (void)clear;
  start_count = syst_cvr();
  // A wrap between the two reads would be counted twice at the end: read again after it.
  if (syst_csr() & kCountFlag) start_count = syst_cvr();
}

// Instructions since counter_start(). The counter counts down and wraps every 2^24 counts
// (671M instructions); one wrap is seen through COUNTFLAG, so a step must stay below that.
std::uint64_t counter_stop(const char* /*label*/) {
  std::uint32_t end = syst_cvr();
  bool wrapped = (syst_csr() & kCountFlag) != 0;
  if (wrapped) end = syst_cvr();  // the wrap may have come after the first read
  wrapped = wrapped || end > start_count;  // a count that went up has wrapped
  const std::uint64_t ticks =
      wrapped ? std::uint64_t(start_count) + (std::uint64_t(kReload) + 1u - end) : std::uint64_t(start_count - end);
  return ticks * kInstructionsPerTick;
}

// A loop of known length (2 instructions per iteration, plus a few) must read as that many
// instructions, else QEMU runs in real time (no -icount shift=0) and nothing here means anything.
bool counter_calibrated() {
  constexpr std::uint32_t kIterations = 50000;
  counter_start();
  std::uint32_t n = kIterations;
#if defined(__thumb2__)
  __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
#else
  // Armv6-M: GCC hands Thumb-1 inline assembly to the assembler in divided syntax, where this
  // is the 16-bit flag-setting subtract.
  __asm__ volatile("1: sub %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
#endif
  const std::uint64_t counted = counter_stop("calibration");
  const std::uint64_t expected = 2u * kIterations;
  std::printf("calibration: %u-iteration loop of ~%llu instructions counted as %llu\n", unsigned(kIterations),
              static_cast<unsigned long long>(expected), static_cast<unsigned long long>(counted));
  return counted + 200u >= expected && counted <= expected + 200u;
}
#else
void counter_setup() {}
void counter_start() { CALLGRIND_ZERO_STATS; }
// The count is in callgrind's dump; bench/instructions reads it from there.
std::uint64_t counter_stop(const char* label) {
  CALLGRIND_DUMP_STATS_AT(label);
  return 0;
}
#endif

// ---- Instances (the experiments' draws, in float) -------------------------------------------

namespace incentive {
constexpr int S = 10, A1 = 5, A2 = 5, J = A1 * A2;
using Problem = pbrl::IncentiveDesign<float, S, A1, A2>;
using Solver = pbrl::PbrlZeroSum<Problem>;
float reward[S * J], transition[S * J * S], designer_reward[S * J], designer_transition[S * J * S], initial[S];
Problem problem;
Solver solver;
}  // namespace incentive

namespace stackelberg {
constexpr int S = 20, AL = 5, AF = 5;
using Game = pbrl::Stackelberg<float, S, AL, AF>;
using Solver = pbrl::Pbrl<Game>;
float leader_reward[S * AL * AF], follower_reward[S * AL * AF], transition[S * AL * AF * S], initial[S];
Game game;
Solver solver;
}  // namespace stackelberg

// examples/incentive_experiment.cpp: environment seed 1000 (seed 1, environment 0).
pbrl::Status setup_incentive() {
  using namespace incentive;
  pbrl::Rng rng(1000u);
  pbrl::random_reward(rng, reward, S * J);
  pbrl::random_transition(rng, transition, S * J, S);
  pbrl::random_reward(rng, designer_reward, S * J);
  pbrl::random_transition(rng, designer_transition, S * J, S);
  for (float& p : initial) p = 1.0f / S;
  Problem::Data data;
  data.reward = reward;
  data.transition = transition;
  data.initial = initial;
  data.discount = float(kDiscount);
  data.regularizer1 = {pbrl::RegularizerKind::entropy, 0.1f, nullptr};  // settings: tau 0.1
  data.regularizer2 = {pbrl::RegularizerKind::entropy, 0.1f, nullptr};
  data.designer_reward = designer_reward;
  data.designer_transition = designer_transition;
  data.designer_cost = nullptr;
  data.incentive_scale = 0.2f;      // paper
  data.incentive = {-10.0f, 10.0f};  // settings: incentive bound
  return problem.init(data);
}

// examples/stackelberg_experiment.cpp: game seed 1000, rewards with sparsity 0.7.
pbrl::Status setup_stackelberg() {
  using namespace stackelberg;
  pbrl::Rng rng(1000u);
  pbrl::random_reward(rng, leader_reward, S * AL * AF, 0.7f);
  pbrl::random_reward(rng, follower_reward, S * AL * AF, 0.7f);
  pbrl::random_transition(rng, transition, S * AL * AF, S);
  for (float& p : initial) p = 1.0f / S;
  Game::Data data;
  data.leader_reward = leader_reward;
  data.follower_reward = follower_reward;
  data.transition = transition;
  data.initial = initial;
  data.discount = float(kDiscount);
  data.leader = {pbrl::RegularizerKind::entropy, 0.0f, nullptr};    // settings: leader tau 0
  data.follower = {pbrl::RegularizerKind::entropy, 0.1f, nullptr};  // settings: follower tau 0.1
  data.logit_bound = 10.0f;
  return game.init(data);
}

// The paper's PBRL-NI settings (examples/incentive_experiment.cpp, run_pbrl).
pbrl::Status init_incentive(bool sampled) {
  using namespace incentive;
  pbrl::PbrlZeroSumSettings<float> s;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = 10.0f;
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle_policy.logit_bound = 10.0f;
  s.inner_steps = 1;
  s.oracle_step = 0.1f;
  s.step_x = s.step_pi = 0.1f;
  s.lambda_start = s.lambda_final = 4.0f;
  s.gradient = sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  s.sampling.horizon = kHorizon;
  s.sampling.batch = 24;
  s.seed = 1000u * 4u;
  return solver.init(problem, s, Problem::Params::Zero(), Problem::Matrix1::Zero(), Problem::Matrix2::Zero());
}

// The paper's PBRL-value / PBRL-Bellman settings (examples/stackelberg_experiment.cpp, run_pbrl).
pbrl::Status init_stackelberg(bool bellman, bool sampled) {
  using namespace stackelberg;
  pbrl::PbrlSettings<float> s;
  s.penalty_kind = bellman ? pbrl::PenaltyKind::bellman : pbrl::PenaltyKind::value;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = 10.0f;
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle_policy.logit_bound = 10.0f;
  s.inner_steps = bellman ? 10 : 1;
  s.oracle_step = 0.1f;
  s.step_x = s.step_y = 0.1f;
  s.lambda_start = s.lambda_final = bellman ? 7.0f : 2.0f;
  s.gradient = sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  s.sampling.horizon = kHorizon;
  s.sampling.batch = 16;
  s.seed = 1000u * 4u + (bellman ? 1u : 0u);
  return solver.init(game, s, Game::Params::Zero(), pbrl::StateActionMatrix<float, S, AF>::Zero());
}

// ---- Measurement ------------------------------------------------------------------------------

std::uint64_t counts[kMaxSteps];

// Runs `steps` steps of `solver`, one count each; prints the result line on bare metal.
template <class Solver>
bool measure(const char* config, const char* mode, Solver& solver, int steps) {
  char label[96];
  std::printf("measuring %s %s: %d steps\n", config, mode, steps);
  for (int k = 0; k < steps; ++k) {
    std::snprintf(label, sizeof label, "%s/%s/%d", config, mode, k);
    counter_start();
    const pbrl::Status st = solver.step();
    counts[k] = counter_stop(label);
    if (st != pbrl::Status::ok) {
      std::printf("error: %s %s step %d: %s\n", config, mode, k, pbrl::to_string(st));
      return false;
    }
  }
#if PBRL_STEP_INSTRUCTIONS_SYSTICK
  std::sort(counts, counts + steps);
  const std::uint64_t median = steps % 2 ? counts[steps / 2] : (counts[steps / 2 - 1] + counts[steps / 2]) / 2;
  std::printf("result %s %s %d %llu %llu %llu\n", config, mode, steps, static_cast<unsigned long long>(counts[0]),
              static_cast<unsigned long long>(median), static_cast<unsigned long long>(counts[steps - 1]));
#endif
  return true;
}

#if PBRL_STEP_INSTRUCTIONS_SYSTICK
// A step in slices (solver/step_slices.hpp): one count per step_slice() call, `steps` steps of at
// most max_rollouts rollouts per slice. Prints `result <config> <mode>_slice <slices> <min>
// <median> <max>` (so the budget check and the table read it like a step's) and, per part,
// `slice_part <config> <mode> <part> <slices> <max>`.
constexpr int kMaxSlices = 4096;
std::uint32_t slice_counts[kMaxSlices];

template <class Solver>
bool measure_slices(const char* config, const char* mode, Solver& solver, int steps, int max_rollouts) {
  constexpr int kParts = 8;
  std::uint32_t part_max[kParts] = {};
  long part_slices[kParts] = {};
  int n = 0;
  std::printf("measuring %s %s in slices of at most %d rollouts: %d steps\n", config, mode, max_rollouts, steps);
  for (int k = 0; k < steps; ++k) {
    pbrl::SliceResult slice;
    do {
      counter_start();
      const pbrl::Status st = solver.step_slice(max_rollouts, slice);
      const auto c = static_cast<std::uint32_t>(counter_stop("slice"));
      if (st != pbrl::Status::ok || n == kMaxSlices) {
        std::printf("error: %s %s step %d slice %d: %s\n", config, mode, k, n, pbrl::to_string(st));
        return false;
      }
      slice_counts[n++] = c;
      const int part = static_cast<int>(slice.part);
      part_max[part] = std::max(part_max[part], c);
      ++part_slices[part];
    } while (!slice.step_done);
  }
  for (int part = 0; part < kParts; ++part)
    if (part_slices[part] > 0)
      std::printf("slice_part %s %s %s %ld %lu\n", config, mode, pbrl::enum_name(static_cast<pbrl::StepPart>(part)),
                  part_slices[part], static_cast<unsigned long>(part_max[part]));
  std::sort(slice_counts, slice_counts + n);
  std::printf("result %s %s_slice %d %lu %lu %lu\n", config, mode, n, static_cast<unsigned long>(slice_counts[0]),
              static_cast<unsigned long>(slice_counts[n / 2]), static_cast<unsigned long>(slice_counts[n - 1]));
  return true;
}
#endif

bool check(pbrl::Status st, const char* what) {
  if (st == pbrl::Status::ok) return true;
  std::printf("error: %s: %s\n", what, pbrl::to_string(st));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 20;
  int slice_rollouts = kSliceRollouts;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--slice-rollouts") == 0 && i + 1 < argc) {
      slice_rollouts = std::atoi(argv[++i]);
    } else {
      std::printf("usage: step_instructions [--steps N] [--slice-rollouts R]   (1 <= N <= %d, R >= 1)\n", kMaxSteps);
      return 2;
    }
  }
  if (steps < 1 || steps > kMaxSteps || slice_rollouts < 1) {
    std::printf("error: --steps must be in [1, %d], --slice-rollouts at least 1\n", kMaxSteps);
    return 2;
  }
#if PBRL_STEP_INSTRUCTIONS_SYSTICK
  std::printf("counter: SysTick (processor clock) under QEMU -icount shift=0, %u instructions per count; "
              "QEMU counts instructions, not cycles\n",
              unsigned(kInstructionsPerTick));
  counter_setup();
  if (!counter_calibrated()) {
    std::printf("error: SysTick does not follow the instruction count: run QEMU with -icount shift=0\n");
    return 3;
  }
#else
  std::printf("counter: callgrind instruction counts (run under valgrind --tool=callgrind)\n");
  counter_setup();
#endif
  if (!check(setup_incentive(), "incentive problem init") || !check(setup_stackelberg(), "Stackelberg init"))
    return 1;
  const char* mode[2] = {"sampled", "exact"};
  for (int m = 0; m < 2; ++m)
    if (!check(init_incentive(m == 0), "PBRL-NI init") ||
        !measure("incentive_pbrl_ni", mode[m], incentive::solver, steps))
      return 1;
#if PBRL_STEP_INSTRUCTIONS_SYSTICK
  for (int m = 0; m < 2; ++m)
    if (!check(init_incentive(m == 0), "PBRL-NI init") ||
        !measure_slices("incentive_pbrl_ni", mode[m], incentive::solver, steps, slice_rollouts))
      return 1;
#endif
  for (int m = 0; m < 2; ++m)
    if (!check(init_stackelberg(false, m == 0), "PBRL-value init") ||
        !measure("stackelberg20_value", mode[m], stackelberg::solver, steps))
      return 1;
  for (int m = 0; m < 2; ++m)
    if (!check(init_stackelberg(true, m == 0), "PBRL-Bellman init") ||
        !measure("stackelberg20_bellman", mode[m], stackelberg::solver, steps))
      return 1;
  std::printf("done\n");
  return 0;
}
