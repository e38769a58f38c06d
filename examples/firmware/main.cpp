// On-device incentive design on a Cortex-M4F: the designer adapts its incentive x (and the
// agents' predicted policies) with PBRL on the zero-sum lower level, learning from trajectories of
// the game model held in flash (the paper's sampled setting). A real-time loop gives the solver one
// bounded slice of a step() per tick (solver/step_slices.hpp: one part of the step, or at most 3
// rollouts), so a step spreads over a few dozen ticks and the rest of each tick stays the
// controller's. The solver state is checkpointed to flash every few steps with the A/B scheme (in
// ticks of its own), so a power cut costs at most the steps since the last checkpoint.
//
// What the run shows (exit status 0 only if all hold):
//   1. every tick's work (a slice, or a checkpoint's staging or programming) finishes within the
//      tick, whose period is the 60,000-instruction slice budget;
//   2. a run whose power is cut in the middle of a checkpoint write reboots, restores the last
//      complete checkpoint, and ends in exactly the state of an uninterrupted run (the final
//      checkpoint images are compared byte for byte).
// Progress, instructions per slice and per step, the distribution of slice sizes and the deepest
// stack use go to the semihosting console.
//
// Memory: the model is const data in flash (incentive_model.hpp, which the build writes with
// pbrl_generate_model); every mutable byte is in one static Workspace; the checkpoint slots are
// flash. Nothing is allocated: the image links no malloc, free, operator new or unwinder, which
// check_symbols.cmake verifies on the linked ELF.
#include "board.hpp"
#include "incentive_model.hpp"
#include "firmware.hpp"

#include <pbrl/solver/checkpoint.hpp>
#include <pbrl/problems/incentive_design.hpp>
#include <pbrl/solver/pbrl_zero_sum.hpp>

#include <cstdint>
#include <cstring>
#include <new>

namespace {

using Problem = pbrl::IncentiveDesign<float, model::kStates, model::kActions1, model::kActions2>;
using Solver = pbrl::PbrlZeroSum<Problem>;

// The paper's incentive-design settings (appendix; examples/experiment_settings.hpp).
constexpr float kStep = 0.1f;         // learning rate of x, y1, y2 and the oracle
constexpr float kLambda = 4.0f;       // penalty constant of PBRL-NI
constexpr int kInner = 1;             // T, oracle steps per player
constexpr int kBatch = 24;            // B
constexpr int kHorizon = 5;           // H
constexpr int kSliceRollouts = 3;     // the most rollouts one slice runs (bench/step_instructions)
// A product build fixes these as the library's work caps (-DPBRL_MAX_BATCH=24 -DPBRL_MAX_HORIZON=5
// -DPBRL_MAX_INNER_STEPS=1, docs/performance.md, "Work per step"): then no setting can make step() heavier than
// this one, whose instructions CTest's step_instructions_budget bounds.
constexpr float kLogitBound = 10.0f;  // choice: box of the agents' logits
constexpr std::uint32_t kSeed = 1u;   // solver's random stream

// The run.
constexpr long kIterations = 60;            // steps of each run
constexpr long kCheckpointEvery = 10;       // steps between checkpoints
constexpr long kCutAtIteration = 40;        // the second run loses power writing this checkpoint
// Tick period in SysTick counts; with QEMU -icount shift=0 one count is 40 instructions, so a tick
// is 60,000 instructions: 0.36 ms on a 168 MHz Cortex-M4F at ~1 instruction per cycle, which leaves
// a 1 kHz control loop 0.64 ms of each millisecond. Work that overruns its tick fails the run.
constexpr std::uint32_t kTickCounts = 1500u;
constexpr std::uint32_t kTickBudget = kTickCounts * board::systick::kInstructionsPerCount;
constexpr int kBuckets = 6;  // slice sizes in steps of kTickBudget / kBuckets instructions

constexpr std::size_t kImageSize = pbrl::checkpoint_size<Solver>();
constexpr std::size_t kFlashPage = 2048;  // erase unit of the flash
constexpr std::size_t kSlotSize = (kImageSize + kFlashPage - 1) / kFlashPage * kFlashPage;

// Every mutable byte the firmware owns.
struct Workspace {
  Problem problem;
  Solver solver;
  Solver::Report report;
  pbrl::SliceResult slice;
  int next_slot;                          // the A/B slot the next checkpoint goes to
  unsigned char image[kImageSize];        // a checkpoint is staged here, then programmed
  std::uint32_t instructions[kIterations];  // per step of the current run: the sum of its slices
  std::uint32_t slices[kIterations];      // slices per step
  std::uint32_t slice_max;                // the largest slice of the run
  std::uint32_t histogram[kBuckets];      // slices by size
  std::uint32_t staging_max, programming_max;  // a checkpoint's two ticks
  volatile std::uint32_t ticks;           // SysTick interrupts since boot
};
Workspace workspace;

// Flash: the A/B checkpoint slots, and the uninterrupted run's final image for the comparison.
struct Flash {
  unsigned char slot[2][kSlotSize];
  unsigned char reference[kSlotSize];
};
__attribute__((section(".checkpoint"))) Flash flash;

firmware::Supply supply;

void erase(unsigned char* page_aligned, std::size_t size) { std::memset(page_aligned, 0xFF, size); }

// Programs byte by byte, as flash does; false if power was lost on the way.
bool program(unsigned char* dst, const unsigned char* src, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    if (supply.bytes_left == 0) return false;
    if (supply.bytes_left > 0) --supply.bytes_left;
    dst[i] = src[i];
  }
  return true;
}

bool check(pbrl::Status st, const char* what) {
  if (st == pbrl::Status::ok) return true;
  board::Line().text("firmware: ").text(what).text(": ").text(pbrl::to_string(st)).print();
  return false;
}

// What the startup code does at reset (zero .bss, run constructors), after RAM lost its content.
void reset_ram() {
  std::memset(static_cast<void*>(&workspace), 0xA5, sizeof workspace);
  new (&workspace) Workspace();
}

// Boot: set up the model and the solver, then resume from the newest complete checkpoint if
// there is one (else start from x = 0, uniform policies).
bool power_on() {
  Problem::Data data;
  firmware::set_model_data(data, model::kTransition);
  if (!check(workspace.problem.init(data), "model")) return false;

  pbrl::PbrlZeroSumSettings<float> s;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = kLogitBound;
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.oracle_policy = s.policy;
  s.inner_steps = kInner;
  s.oracle_step = kStep;
  s.step_x = s.step_pi = kStep;
  s.lambda_start = s.lambda_final = kLambda;
  s.gradient = pbrl::GradientMode::sampled;
  s.sampling.horizon = kHorizon;
  s.sampling.batch = kBatch;
  s.seed = kSeed;
  if (!check(workspace.solver.init(workspace.problem, s, Problem::Params::Zero(), Problem::Matrix1::Zero(),
                                   Problem::Matrix2::Zero()),
             "solver"))
    return false;

  const pbrl::Status st =
      pbrl::restore_newest_checkpoint(workspace.solver, flash.slot[0], flash.slot[1], kSlotSize);
  workspace.next_slot = pbrl::checkpoint_slot_to_write<Solver>(flash.slot[0], flash.slot[1], kSlotSize);
  board::Line line;
  line.text("boot: ");
  if (st == pbrl::Status::ok)
    line.text("resumed at iteration ").integer(workspace.solver.iteration());
  else
    line.text("no checkpoint (").text(pbrl::to_string(st)).text("), starting fresh");
  line.print();
  return true;
}

// Programs the staged image into the older A/B slot; false if power was lost during the write.
// The slot comes from boot (checkpoint_slot_to_write reads both slots' images, two CRC passes:
// more than a tick) and alternates after each write.
bool program_checkpoint() {
  const int slot = workspace.next_slot;
  erase(flash.slot[slot], kSlotSize);
  if (!program(flash.slot[slot], workspace.image, kImageSize)) return false;
  workspace.next_slot = 1 - slot;
  return true;
}

void wait_for_tick(std::uint32_t seen) {
  while (workspace.ticks == seen) board::wait_for_interrupt();
}

struct RunResult {
  bool ok = false;
  std::uint32_t min = 0, median = 0, max = 0;  // instructions per step (its slices summed)
  std::uint32_t slices = 0;                    // slices per step (the median)
  std::uint32_t slice_max = 0, staging_max = 0, programming_max = 0;
  std::uint32_t histogram[kBuckets] = {};
};

// What the next tick does: a slice of the step in progress, or a checkpoint's two halves.
enum class TickWork { slice, stage_checkpoint, program_checkpoint };

// Prints the progress line of iteration k (a step was just completed).
void print_progress(std::int64_t k) {
  board::Line()
      .text("iteration ")
      .integer(k)
      .text("  designer value ")
      .fixed(-workspace.report.upper_objective)
      .text("  NE gap estimate ")
      .fixed(workspace.report.penalty)
      .text("  slices ")
      .integer(workspace.slices[k - 1])
      .text("  instructions/step ")
      .integer(workspace.instructions[k - 1])
      .print();
}

// One run from an erased flash to kIterations. cut > 0: power fails while the checkpoint of
// iteration kCutAtIteration is programmed.
RunResult run(const char* name, bool cut) {
  RunResult result;
  board::Line().text("--- run: ").text(name).print();
  erase(flash.slot[0], kSlotSize);
  erase(flash.slot[1], kSlotSize);
  reset_ram();
  if (!power_on()) return result;
  board::systick::start(kTickCounts);  // what the firmware does after boot
  bool cut_pending = cut;
  TickWork next = TickWork::slice;
  while (workspace.solver.iteration() < kIterations || next != TickWork::slice) {
    const std::uint32_t tick = workspace.ticks;
    wait_for_tick(tick);
    // The work starts right after the tick: SysTick counts down from its reload value.
    const std::uint32_t start = board::systick::cvr();
    const std::uint32_t seen = workspace.ticks;
    const TickWork work = next;
    bool programmed = true;
    if (work == TickWork::slice) {
      if (!check(workspace.solver.step_slice(kSliceRollouts, workspace.slice, &workspace.report), "slice"))
        return result;
    } else if (work == TickWork::stage_checkpoint) {
      if (!check(pbrl::save_checkpoint(workspace.solver, workspace.image, kImageSize), "checkpoint")) return result;
    } else {
      programmed = program_checkpoint();
    }
    const std::uint32_t end = board::systick::cvr();
    if (workspace.ticks != seen) {
      board::Line()
          .text("firmware: the work of a tick (")
          .text(work == TickWork::slice ? "a slice" : work == TickWork::stage_checkpoint ? "staging" : "programming")
          .text(") overran it at iteration ")
          .integer(workspace.solver.iteration())
          .print();
      return result;
    }
    const std::uint32_t used =
        board::systick::elapsed(start, end, kTickCounts) * board::systick::kInstructionsPerCount;
    const std::int64_t k = workspace.solver.iteration();
    if (work == TickWork::slice) {
      // The slice belongs to step k (k + 1 once it completed the step, which advanced the count).
      const std::int64_t step = workspace.slice.step_done ? k - 1 : k;
      workspace.instructions[step] += used;
      ++workspace.slices[step];
      if (used > workspace.slice_max) workspace.slice_max = used;
      ++workspace.histogram[used * kBuckets / kTickBudget];
      if (workspace.slice.step_done && k % kCheckpointEvery == 0) {
        print_progress(k);
        next = TickWork::stage_checkpoint;
      }
      continue;
    }
    if (work == TickWork::stage_checkpoint) {
      if (used > workspace.staging_max) workspace.staging_max = used;
      if (cut_pending && k == kCutAtIteration) {
        supply.cut_during(kImageSize);
        cut_pending = false;
      }
      next = TickWork::program_checkpoint;
      continue;
    }
    if (used > workspace.programming_max) workspace.programming_max = used;
    next = TickWork::slice;
    if (!programmed) {
      firmware::print_power_cut(
          board::Line().text("power cut while writing the checkpoint of iteration ").integer(k).text(" ("), kImageSize);
      supply.bytes_left = -1;
      board::systick::stop();  // a reset stops the timer...
      reset_ram();
      if (!power_on()) return result;
      board::systick::start(kTickCounts);  // ...until the firmware is up again
    }
  }
  // Sort a copy (insertion sort: 60 entries) for the median.
  std::uint32_t sorted[kIterations];
  for (long i = 0; i < kIterations; ++i) {
    std::uint32_t v = workspace.instructions[i];
    long j = i - 1;
    for (; j >= 0 && sorted[j] > v; --j) sorted[j + 1] = sorted[j];
    sorted[j + 1] = v;
  }
  result.min = sorted[0];
  result.median = sorted[kIterations / 2];
  result.max = sorted[kIterations - 1];
  result.slices = workspace.slices[kIterations / 2];
  result.slice_max = workspace.slice_max;
  result.staging_max = workspace.staging_max;
  result.programming_max = workspace.programming_max;
  for (int b = 0; b < kBuckets; ++b) result.histogram[b] = workspace.histogram[b];
  result.ok = check(pbrl::save_checkpoint(workspace.solver, workspace.image, kImageSize), "final state");
  return result;
}

}  // namespace

extern "C" void SysTick_Handler() { workspace.ticks = workspace.ticks + 1u; }
int main() {
  firmware::print_model("pbrl firmware example: ");
  firmware::checkpoint_and_tick(board::Line()
                                    .text("workspace ")
                                    .integer(static_cast<long long>(sizeof(Workspace)))
                                    .text(" bytes RAM (solver ")
                                    .integer(static_cast<long long>(sizeof(Solver)))
                                    .text("), "),
                                kImageSize, kTickBudget)
      .text(", at most ")
      .integer(kSliceRollouts)
      .text(" rollouts per slice")
      .print();

  const RunResult reference = run("uninterrupted", false);
  if (!reference.ok) return 1;
  std::memcpy(flash.reference, workspace.image, kImageSize);
  const RunResult interrupted = run("power cut during a checkpoint write", true);
  if (!interrupted.ok) return 1;
  const bool same = std::memcmp(flash.reference, workspace.image, kImageSize) == 0;

  board::Line()
      .text("instructions/step (QEMU -icount: instructions, not cycles): min ")
      .integer(reference.min)
      .text(" median ")
      .integer(reference.median)
      .text(" max ")
      .integer(reference.max)
      .text(", in ")
      .integer(reference.slices)
      .text(" slices")
      .print();
  board::Line()
      .text("largest slice ")
      .integer(reference.slice_max)
      .text(" instructions of the tick's ")
      .integer(kTickBudget)
      .text("; checkpoint ticks: staging ")
      .integer(reference.staging_max)
      .text(", programming ")
      .integer(reference.programming_max)
      .print();
  board::Line line;
  line.text("slices by instructions:");
  for (int b = 0; b < kBuckets; ++b)
    line.text("  <")
        .integer(static_cast<long long>((b + 1) * (kTickBudget / kBuckets) / 1000))
        .text("k ")
        .integer(reference.histogram[b]);
  line.print();
  firmware::print_stack_used();
  board::Line()
      .text(same ? "resumed run ends in the uninterrupted run's state (images identical): PASS"
                 : "resumed run's final state differs from the uninterrupted run: FAIL")
      .print();
  return same ? 0 : 1;
}
