// On-device adaptation on a Cortex-M4F: an incentive designer that does not know its plant. The
// device ships with a prior transition model and the incentive x the factory solved on it (flash);
// a stand-in world (examples/adaptation/world.hpp) holds the TRUE model, which differs from the
// prior and changes partway through the run (the drift), and makes the agents play their
// regularized Nash equilibrium under the device's current x. Each tick of a real-time loop the
// device observes the last transition (EstimatedModel::observe) and then works within a budget:
// slices of a refresh (rows of the estimate's mean), solver step slices (exact gradients, the
// host references' settings: settings.hpp), or, alone in their tick, the refresh's commit
// (swap_model) or one part of an A/B checkpoint of the solver and the estimate (staging, erasing,
// programming a chunk). The world's work (its equilibrium solves, the draws, the honest metric)
// runs between ticks: it is the plant's, not the device's, and the instructions per tick are
// measured around the device's calls only.
//
// What the run shows (exit status 0 only if all hold; CTest's check_run.cmake checks the printed
// numbers again):
//   1. every tick's device work finishes within the tick, whose period is the 60,000-instruction
//      budget (the run stops at the first overrun);
//   2. at intervals, the designer's value at the exact equilibrium of the TRUE model under the
//      device's x, beside the same value under x_true (x solved on the TRUE model of the time) and
//      x_prior (x solved on the prior alone), both solved on the host (adaptive_model.hpp);
//   3. a second run whose power is cut in the middle of a checkpoint write reboots, restores the
//      newest complete image (solver and estimate), refreshes the model from the restored estimate
//      and goes on adapting; its restored iteration and observation count are those of the last
//      complete checkpoint.
//
// Size: IncentiveDesign<float, 5, 3, 3>, not the firmware example's 10 x 5 x 5. At 10 x 5 x 5 two
// pieces of the device's work do not fit the tick (measured by measure() below, docs/adaptation.md):
// staging the checkpoint of the solver and the estimate (17,469 bytes: 200,520 instructions) and
// the refresh's commit (swap_model validates the whole problem: 102,440). The library saves an
// image and swaps a model in one call each; neither can be split by the caller.
//
// Memory: the models are const data in flash; every mutable byte of the device is in one static
// Device; the checkpoint slots are flash. Nothing is allocated (check_symbols.cmake verifies the
// linked ELF). The World and the measurements are the example's, not the device's.
#include "adaptive_model.hpp"
#include "board.hpp"
#include "firmware.hpp"
#include "settings.hpp"
#include "world.hpp"

#include <pbrl/solver/checkpoint.hpp>
#include <pbrl/estimate/estimated_model.hpp>

#include <cstdint>
#include <cstring>
#include <new>

namespace {

using Problem = adaptive::Problem<float, model::kStates, model::kActions1, model::kActions2>;
using Solver = adaptive::Solver<Problem>;
using Model = pbrl::EstimatedModel<Problem>;
using Estimate = Model::Estimate;
using World = adaptation::World<Problem>;
using Params = Problem::Params;
constexpr int kRows = Model::kRows;

// The estimate (docs/estimation.md): the prior is worth kStrength observations per row; its zeros
// are a guess (dense support); forgetting per row visit, so that the mean follows the drift; a
// refresh once a row's evidence doubled or every kRefreshEvery observations.
constexpr float kStrength = 10.0f;
constexpr float kForgetting = 0.99f;
constexpr std::int64_t kRefreshEvery = 1000;
constexpr int kRefreshRows = 15;  // rows of the mean one refresh slice writes
constexpr int kRowSlices = (kRows + kRefreshRows - 1) / kRefreshRows;  // then the commit

// The run: one observation per tick.
constexpr std::int64_t kObservations = 24000;    // ticks of each run
constexpr std::int64_t kDriftAt = 12000;         // the TRUE model changes at this observation
constexpr std::int64_t kRespondEvery = 100;      // the agents take up a new x every so many observations
constexpr std::int64_t kPrintEvery = 2000;       // observations between progress lines
constexpr std::int64_t kCheckpointEvery = 2000;  // observations between checkpoints (with a step since)
constexpr int kCutAtCheckpoint = 4;              // the second run loses power writing its 4th checkpoint

// Tick: 1500 SysTick counts of 40 instructions (QEMU -icount shift=0): 60,000 instructions, 0.36 ms
// of a 168 MHz Cortex-M4F's 1 ms control period. The device packs refresh and step slices while
// the instructions used so far plus the largest slice of that kind seen yet stay within
// kWorkBudget; the rest of the tick is margin (and, on a product, the controller's).
constexpr std::uint32_t kTickCounts = 1500u;
constexpr std::uint32_t kTickBudget = kTickCounts * board::systick::kInstructionsPerCount;
constexpr std::uint32_t kWorkBudget = 48000u;

constexpr std::size_t kImageSize = pbrl::checkpoint_size<Solver, Estimate>();
constexpr std::size_t kFlashPage = 2048;  // erase unit of the flash
constexpr std::size_t kSlotSize = (kImageSize + kFlashPage - 1) / kFlashPage * kFlashPage;
constexpr std::size_t kProgramChunk = 2048;  // bytes programmed per tick

enum class Checkpoint { idle, staged, programming };

// Every mutable byte the device owns.
struct Device {
  Model model;
  Solver solver;
  pbrl::SliceResult slice;
  int refresh_slices;               // slices of the refresh under way (kRowSlices: the commit is next)
  unsigned char image[kImageSize];  // a checkpoint is staged here, then programmed chunk by chunk
  Checkpoint checkpoint;
  std::size_t programmed;           // bytes of the staged image programmed so far
  int next_slot;                    // the A/B slot the next checkpoint goes to
  std::int64_t checkpoint_iteration;     // the solver's iteration at the last staged checkpoint
  std::int64_t checkpoint_observations;  // the estimate's observations then
};
Device device;

__attribute__((section(".checkpoint"))) unsigned char slots[2][kSlotSize];

// The stand-in world (not the device's: the plant).
World world;

// The example's measurements, per kind of work.
enum Work { kObserveWork, kRowsWork, kCommitWork, kStepWork, kStageWork, kEraseWork, kProgramWork, kIdleWork, kTickWork, kWorkKinds };
const char* const kWorkNames[kWorkKinds] = {"observe", "refresh rows", "commit",  "step slice", "stage",
                                            "erase",   "program",      "idle",    "tick"};
// Work that has a tick of its own (after the observation).
bool alone(Work w) { return w == kCommitWork || w == kStageWork || w == kEraseWork || w == kProgramWork; }

struct Stat {
  std::uint64_t total;
  std::uint32_t count, max;
  void add(std::uint32_t v) {
    total += v;
    ++count;
    if (v > max) max = v;
  }
};
struct Log {
  Stat stat[kWorkKinds];
  std::uint32_t bound[kWorkKinds];  // the largest piece of each kind seen (measure() and the runs)
  std::uint32_t units_max;          // pieces of work in one tick, at most
  int checkpoints_done;             // complete checkpoints of the run
  std::int64_t saved_iteration, saved_observations;  // of the last complete checkpoint
  double ref_true, ref_prior;       // the references' values on the current TRUE model
  int ref_phase;                    // the TRUE model they were computed on
  float value;                      // the device's, at the last progress line
};
Log log_;

firmware::Supply supply;

volatile std::uint32_t ticks;

bool check(pbrl::Status st, const char* what) {
  if (st == pbrl::Status::ok) return true;
  board::Line().text("firmware_adaptive: ").text(what).text(": ").text(pbrl::to_string(st)).print();
  return false;
}

Problem::Data prior_data() {
  Problem::Data d;
  firmware::set_model_data(d, model::kPrior);
  return d;
}

Params as_params(const float* x) {
  Params p;
  for (int i = 0; i < p.size(); ++i) p[i] = x[i];
  return p;
}

// Instructions between two readings of SysTick running with period `period` counts (less than one
// period apart).
std::uint32_t span(std::uint32_t c0, std::uint32_t c1, std::uint32_t period = kTickCounts) {
  return board::systick::elapsed(c0, c1, period) * board::systick::kInstructionsPerCount;
}

// Boot: the model on the prior, the solver from the factory's x, then the newest complete
// checkpoint if there is one (restored, and the model refreshed from the restored estimate).
// restore and refresh: their instructions (boot work, no tick's; SysTick as a long timer).
bool power_on(std::uint32_t* restore = nullptr, std::uint32_t* refresh = nullptr) {
  std::memset(static_cast<void*>(&device), 0xA5, sizeof device);  // RAM after a reset...
  new (&device) Device();                                          // ...and the startup code
  pbrl::EstimateSettings<float> es;
  es.support = pbrl::EstimateSupport::dense;
  es.discount = kForgetting;
  es.refresh_every = kRefreshEvery;
  if (!check(device.model.init(prior_data(), kStrength, es), "model")) return false;
  // From the x the factory solved on the prior (the host's x_prior), the agents' policies uniform.
  if (!check(device.solver.init(device.model.problem(), adaptive::solver_settings<Solver>(),
                                as_params(model::kXPrior), Solver::Matrix1::Zero(), Solver::Matrix2::Zero()),
             "solver"))
    return false;
  constexpr std::uint32_t kLong = 1u << 24;
  board::systick::start(kLong);
  const std::uint32_t c0 = board::systick::cvr();
  const pbrl::Status st =
      pbrl::restore_newest_checkpoint(device.solver, device.model.estimate(), slots[0], slots[1], kSlotSize);
  // Reads both slots' images (CRC passes): at boot, not in a tick; then the slots alternate.
  device.next_slot = pbrl::checkpoint_slot_to_write<Solver, Estimate>(slots[0], slots[1], kSlotSize);
  const std::uint32_t c1 = board::systick::cvr();
  board::Line line;
  line.text("boot: ");
  if (st != pbrl::Status::ok) {
    board::systick::stop();
    line.text("no checkpoint (").text(pbrl::to_string(st)).text("), starting from the prior").print();
    return true;
  }
  // The solver runs on the prior until the estimate's mean is swapped in: all at once at boot.
  if (!check(device.model.refresh(device.solver), "refresh after restore")) return false;
  const std::uint32_t c2 = board::systick::cvr();
  board::systick::stop();
  device.checkpoint_iteration = device.solver.iteration();
  device.checkpoint_observations = device.model.estimate().observations();
  if (restore != nullptr) *restore = span(c0, c1, kLong);
  if (refresh != nullptr) *refresh = span(c1, c2, kLong);
  line.text("resumed at iteration ")
      .integer(device.solver.iteration())
      .text(" with ")
      .integer(device.model.estimate().observations())
      .text(" observations (restore and slot choice ")
      .integer(span(c0, c1, kLong))
      .text(" instructions, whole refresh ")
      .integer(span(c1, c2, kLong))
      .text(")")
      .print();
  return true;
}

// The next piece of work, by priority: a checkpoint under way; a refresh under way; a checkpoint
// due; a refresh due (between steps: its commit abandons a step in progress); a slice of the step
// in progress or of a new step (unless converged: a converged solver waits for the next model, as
// solve() does); nothing.
Work next_work() {
  if (device.checkpoint == Checkpoint::staged) return kEraseWork;
  if (device.checkpoint == Checkpoint::programming) return kProgramWork;
  if (device.model.refresh_in_progress()) return device.refresh_slices == kRowSlices ? kCommitWork : kRowsWork;
  const std::int64_t n = device.model.estimate().observations();
  if (n - device.checkpoint_observations >= kCheckpointEvery && device.solver.iteration() > device.checkpoint_iteration)
    return kStageWork;  // sequence numbers are iterations: a checkpoint needs a step since the last one
  if (device.model.refresh_due() && !device.solver.step_in_progress()) return kRowsWork;
  if (device.solver.step_in_progress() || !device.solver.converged()) return kStepWork;
  return kIdleWork;
}

// Does one piece of work. false on a library error; `powered` false if power was lost
// programming the flash.
bool do_work(Work work, bool& powered) {
  powered = true;
  switch (work) {
    case kRowsWork:
    case kCommitWork: {
      bool committed = false;
      if (!check(device.model.refresh_slice(device.solver, kRefreshRows, committed), "refresh")) return false;
      device.refresh_slices = committed ? 0 : device.refresh_slices + 1;
      return true;
    }
    case kStepWork:
      return check(device.solver.step_slice(1, device.slice), "step slice");
    case kStageWork:
      if (!check(pbrl::save_checkpoint(device.solver, device.model.estimate(), device.image, kImageSize), "checkpoint"))
        return false;
      device.checkpoint = Checkpoint::staged;
      device.checkpoint_iteration = device.solver.iteration();
      device.checkpoint_observations = device.model.estimate().observations();
      return true;
    case kEraseWork:
      std::memset(slots[device.next_slot], 0xFF, kSlotSize);
      device.programmed = 0;
      device.checkpoint = Checkpoint::programming;
      return true;
    case kProgramWork: {
      unsigned char* dst = slots[device.next_slot];
      const std::size_t end =
          device.programmed + kProgramChunk < kImageSize ? device.programmed + kProgramChunk : kImageSize;
      for (std::size_t i = device.programmed; i < end; ++i) {  // byte by byte, as flash programs
        if (supply.bytes_left == 0) {
          powered = false;
          return true;
        }
        if (supply.bytes_left > 0) --supply.bytes_left;
        dst[i] = device.image[i];
      }
      device.programmed = end;
      if (end == kImageSize) {
        device.checkpoint = Checkpoint::idle;
        device.next_slot = 1 - device.next_slot;
      }
      return true;
    }
    default:
      return true;
  }
}

// ---- The world's side: the plant and the honest metric (not the device's work) ----------------

// The designer's value at the exact equilibrium of the current TRUE model under x.
bool value_of(const Params& x, float& value) {
  pbrl::BestResponseValue<float> v;
  if (!check(world.value_at(x, v), "value at the equilibrium")) return false;
  value = v.value;
  return true;
}

// The references' values on the TRUE model of now (computed once per model).
bool references() {
  const int phase = world.drifted() ? 2 : 1;
  if (log_.ref_phase == phase) return true;
  float t = 0, p = 0;
  if (!value_of(as_params(phase == 1 ? model::kXTrue1 : model::kXTrue2), t)) return false;
  if (!value_of(as_params(model::kXPrior), p)) return false;
  log_.ref_true = t;
  log_.ref_prior = p;
  log_.ref_phase = phase;
  return true;
}

bool print_progress() {
  if (!references()) return false;
  float v = 0;
  if (!value_of(device.solver.x(), v)) return false;
  log_.value = v;
  board::Line()
      .text("observations ")
      .integer(world.observations())
      .text(" model ")
      .integer(log_.ref_phase)
      .text("  value ")
      .fixed(v)
      .text("  x_true ")
      .fixed(float(log_.ref_true))
      .text("  x_prior ")
      .fixed(float(log_.ref_prior))
      .text("  gap ")
      .fixed(float(log_.ref_true) - v)
      .text(" (prior alone ")
      .fixed(float(log_.ref_true - log_.ref_prior))
      .text(")  steps ")
      .integer(device.solver.iteration())
      .text(" models ")
      .integer(device.solver.model_generation())
      .print();
  return true;
}

void print_stats() {
  for (int k = 0; k < kWorkKinds; ++k) {
    const Stat& s = log_.stat[k];
    if (s.count == 0 || k == kIdleWork) continue;
    board::Line()
        .text("instructions ")
        .text(kWorkNames[k])
        .text(": ")
        .integer(s.count)
        .text(k == kObserveWork || k == kTickWork ? " ticks" : " pieces")
        .text(", mean ")
        .integer(static_cast<long long>(s.total / s.count))
        .text(", max ")
        .integer(s.max)
        .print();
  }
}

// ---- The device's pieces of work measured one by one ----------------------------------------

// Outside the loop (SysTick as a long timer), from a fresh boot on erased flash: what the tick must
// hold at this size, whether or not it does. Seeds the loop's bounds on each kind of piece.
bool measure() {
  board::Line().text("--- the device's pieces of work, one by one outside the loop").print();
  std::memset(slots, 0xFF, sizeof slots);
  if (!power_on()) return false;
  constexpr std::uint32_t kLong = 1u << 24;  // counts: 671 M instructions
  board::systick::start(kLong);
  // observe(): 1000 observations of rows spread over the table (an LCG's bits), less the same loop
  // without the call (the harness's own instructions: the in-run floor).
  std::uint32_t h = 12345u;
  std::uint32_t c0 = board::systick::cvr();
  for (int i = 0; i < 1000; ++i) {
    h = h * 1664525u + 1013904223u;
    const int s = int((h >> 8) % model::kStates), a1 = int((h >> 12) % model::kActions1);
    const int a2 = int((h >> 16) % model::kActions2), s2 = int((h >> 20) % model::kStates);
    if (!check(device.model.observe(s, a1, a2, s2), "observe")) return false;
  }
  std::uint32_t c1 = board::systick::cvr();
  const std::uint32_t loop = span(c0, c1, kLong);
  h = 12345u;
  c0 = board::systick::cvr();
  for (int i = 0; i < 1000; ++i) {
    h = h * 1664525u + 1013904223u;
    const int s = int((h >> 8) % model::kStates), a1 = int((h >> 12) % model::kActions1);
    const int a2 = int((h >> 16) % model::kActions2), s2 = int((h >> 20) % model::kStates);
    asm volatile("" : : "r"(s), "r"(a1), "r"(a2), "r"(s2));  // computed, not used
  }
  c1 = board::systick::cvr();
  const std::uint32_t floor = span(c0, c1, kLong);
  const std::uint32_t observe = (loop - floor) / 1000, harness = floor / 1000;
  // A refresh: its row slices, then the commit.
  std::uint32_t rows_max = 0, commit = 0, slices = 0;
  for (bool committed = false; !committed;) {
    c0 = board::systick::cvr();
    if (!check(device.model.refresh_slice(device.solver, kRefreshRows, committed), "refresh")) return false;
    c1 = board::systick::cvr();
    if (committed) {
      commit = span(c0, c1, kLong);
    } else {
      ++slices;
      if (span(c0, c1, kLong) > rows_max) rows_max = span(c0, c1, kLong);
    }
  }
  // Steps by slices (the first steps after a swap; tolerance mode adapts the work later).
  std::uint32_t slice_max = 0, step_slices = 0, step_max = 0;
  for (int k = 0; k < 3; ++k) {
    std::uint32_t step = 0;
    do {
      c0 = board::systick::cvr();
      if (!check(device.solver.step_slice(1, device.slice), "step slice")) return false;
      c1 = board::systick::cvr();
      step += span(c0, c1, kLong);
      ++step_slices;
      if (span(c0, c1, kLong) > slice_max) slice_max = span(c0, c1, kLong);
    } while (!device.slice.step_done);
    if (step > step_max) step_max = step;
  }
  // A checkpoint staged, then restored with the model refreshed (what a reboot does).
  c0 = board::systick::cvr();
  if (!check(pbrl::save_checkpoint(device.solver, device.model.estimate(), device.image, kImageSize), "save"))
    return false;
  c1 = board::systick::cvr();
  const std::uint32_t save = span(c0, c1, kLong);
  board::systick::stop();
  std::memcpy(slots[0], device.image, kImageSize);
  std::uint32_t restore = 0, refresh = 0;
  if (!power_on(&restore, &refresh)) return false;
  board::Line()
      .text("measured: observe ")
      .integer(observe)
      .text(" (the harness's ")
      .integer(harness)
      .text(" per call subtracted)")
      .text(", refresh slice of ")
      .integer(kRefreshRows)
      .text(" rows ")
      .integer(rows_max)
      .text(" (")
      .integer(slices)
      .text(" slices), commit ")
      .integer(commit)
      .text(", step ")
      .integer(step_max)
      .text(" in ")
      .integer(step_slices / 3)
      .text(" slices (largest ")
      .integer(slice_max)
      .text(")")
      .print();
  board::Line()
      .text("measured: stage checkpoint ")
      .integer(save)
      .text(", restore ")
      .integer(restore)
      .text(", whole refresh ")
      .integer(refresh)
      .text(" instructions")
      .print();
  log_.bound[kRowsWork] = rows_max;
  log_.bound[kStepWork] = slice_max;
  return true;
}

// ---- A run -----------------------------------------------------------------------------------

// One run from erased flash; cut: power fails while the kCutAtCheckpoint-th checkpoint is programmed.
bool run(const char* name, bool cut) {
  board::Line().text("--- run: ").text(name).print();
  std::memset(slots, 0xFF, sizeof slots);
  const std::uint32_t rows_bound = log_.bound[kRowsWork], step_bound = log_.bound[kStepWork];
  std::memset(static_cast<void*>(&log_), 0, sizeof log_);
  log_.bound[kRowsWork] = rows_bound;
  log_.bound[kStepWork] = step_bound;
  if (!power_on()) return false;
  adaptation::WorldSettings<float> ws;
  ws.drift_at = kDriftAt;
  ws.respond_every = kRespondEvery;
  ws.seed = 1u;
  ws.best_response.max_iterations = 2000;
  ws.best_response.tolerance = 1e-3f;  // float: sqrt(eps) is not always reached
  Problem::Data truth = prior_data();
  truth.transition = model::kTrue1;
  if (!check(world.init(truth, model::kTrue2, ws, device.solver.x()), "world")) return false;
  adaptation::Observation o;
  if (!check(world.observe(device.solver.x(), o), "world")) return false;
  if (!print_progress()) return false;
  bool cut_pending = cut;
  board::systick::start(kTickCounts);
  for (;;) {
    const std::uint32_t tick = ticks;
    while (ticks == tick) board::wait_for_interrupt();
    // ---- The device's work, right after the tick.
    const std::uint32_t seen = ticks;
    const std::uint32_t c0 = board::systick::cvr();
    const pbrl::Status observed = device.model.observe(o.state, o.action1, o.action2, o.next_state);
    std::uint32_t c1 = board::systick::cvr();
    const std::uint32_t observe = span(c0, c1);
    bool ok = observed == pbrl::Status::ok, powered = true;
    std::uint32_t units = 0;
    Work last = kObserveWork;
    while (ok && powered) {
      const Work work = next_work();
      if (work == kIdleWork) break;
      if (units > 0 && (alone(work) || span(c0, board::systick::cvr()) + log_.bound[work] > kWorkBudget)) break;
      const std::uint32_t u0 = board::systick::cvr();
      ok = do_work(work, powered);
      c1 = board::systick::cvr();
      const std::uint32_t used = span(u0, c1);
      log_.stat[work].add(used);
      if (used > log_.bound[work]) log_.bound[work] = used;
      ++units;
      last = work;
      if (work == kStageWork && cut_pending && log_.checkpoints_done + 1 == kCutAtCheckpoint) {
        supply.cut_during(kImageSize);
        cut_pending = false;
      }
      if (work == kProgramWork && powered && device.checkpoint == Checkpoint::idle) {
        ++log_.checkpoints_done;
        log_.saved_iteration = device.checkpoint_iteration;
        log_.saved_observations = device.checkpoint_observations;
      }
      if (alone(work)) break;
    }
    const std::uint32_t tick_used = span(c0, board::systick::cvr());
    // ---- The device's work ends here.
    if (!check(observed, "observe") || !ok) return false;
    if (ticks != seen) {
      board::Line()
          .text("firmware_adaptive: the device's work of a tick (")
          .integer(units)
          .text(" pieces, the last ")
          .text(kWorkNames[last])
          .text(") overran it at observation ")
          .integer(world.observations())
          .print();
      return false;
    }
    log_.stat[kObserveWork].add(observe);
    log_.stat[kTickWork].add(tick_used);
    if (units > log_.units_max) log_.units_max = units;
    if (!powered) {
      firmware::print_power_cut(
          board::Line()
              .text("power cut while writing checkpoint ")
              .integer(log_.checkpoints_done + 1)
              .text(" (iteration ")
              .integer(device.checkpoint_iteration)
              .text(", ")
              .integer(device.checkpoint_observations)
              .text(" observations; "),
          kImageSize);
      supply.bytes_left = -1;
      board::systick::stop();  // a reset stops the timer; the plant goes on
      if (!power_on()) return false;
      const bool same = device.solver.iteration() == log_.saved_iteration &&
                        device.model.estimate().observations() == log_.saved_observations;
      board::Line()
          .text("resume: the newest complete checkpoint (iteration ")
          .integer(log_.saved_iteration)
          .text(", ")
          .integer(log_.saved_observations)
          .text(" observations): ")
          .text(same ? "PASS" : "FAIL")
          .print();
      if (!same) return false;
      board::systick::start(kTickCounts);
    }
    // ---- The world's work: the plant's, not in the device's tick.
    if (world.observations() % kPrintEvery == 0 && !print_progress()) return false;
    if (world.observations() == kObservations) break;
    if (!check(world.observe(device.solver.x(), o), "world")) return false;
  }
  board::systick::stop();
  board::Line()
      .text("final: value ")
      .fixed(log_.value, 6)
      .text(" x_true ")
      .fixed(float(log_.ref_true), 6)
      .text(" x_prior ")
      .fixed(float(log_.ref_prior), 6)
      .text(" (world: ")
      .integer(world.responses())
      .text(" responses, ")
      .integer(world.uncertified_responses())
      .text(" uncertified)")
      .print();
  print_stats();
  board::Line()
      .text("largest tick ")
      .integer(log_.stat[kTickWork].max)
      .text(" of ")
      .integer(kTickBudget)
      .text(" instructions (at most ")
      .integer(log_.units_max)
      .text(" pieces of work in a tick): ")
      .text(log_.stat[kTickWork].max <= kTickBudget ? "PASS" : "FAIL")
      .print();
  return log_.stat[kTickWork].max <= kTickBudget;
}

}  // namespace

extern "C" void SysTick_Handler() { ticks = ticks + 1u; }

int main() {
  firmware::print_model("pbrl adaptive firmware example: ");
  board::Line()
      .text("device ")
      .integer(static_cast<long long>(sizeof(Device)))
      .text(" bytes RAM (estimated model ")
      .integer(static_cast<long long>(sizeof(Model)))
      .text(", of which the estimate ")
      .integer(static_cast<long long>(sizeof(Estimate)))
      .text("; solver ")
      .integer(static_cast<long long>(sizeof(Solver)))
      .text("; staging ")
      .integer(static_cast<long long>(kImageSize))
      .text("), world ")
      .integer(static_cast<long long>(sizeof(World)))
      .print();
  firmware::checkpoint_and_tick(board::Line(), kImageSize, kTickBudget)
      .text(" (work budget ")
      .integer(kWorkBudget)
      .text("), ")
      .integer(kRefreshRows)
      .text(" rows per refresh slice of ")
      .integer(kRows)
      .print();
  board::Line()
      .text("host references: x_true ")
      .fixed(float(model::kHostValueTrue1))
      .text(" x_prior ")
      .fixed(float(model::kHostValuePrior1))
      .text(" on model 1; x_true ")
      .fixed(float(model::kHostValueTrue2))
      .text(" x_prior ")
      .fixed(float(model::kHostValuePrior2))
      .text(" on model 2")
      .print();
  if (!measure()) return 1;
  if (!run("uninterrupted", false)) return 1;
  if (!run("power cut during a checkpoint write", true)) return 1;
  firmware::print_stack_used();
  return 0;
}
