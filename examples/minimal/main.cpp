// The minimal pbrl firmware in C++: main.c's program through the header pbrl-codegen writes for
// model.json (minimal_pbrl.hpp: Problem, Solver, data(), settings()). The model is in flash, the
// solver's RAM two static objects; its state goes to A/B flash slots every few steps.
#include "board.hpp"
#include "minimal_pbrl.hpp"

#include <pbrl/solver/checkpoint.hpp>

#include <cstring>

using minimal::Problem, minimal::Solver, pbrl::Status;
constexpr long kSteps = 30, kCheckpointEvery = 10;  // outer iterations of the run; steps between checkpoints
constexpr std::size_t kImageBytes = pbrl::checkpoint_size<Solver>(), kSlotBytes = 4096;  // 2 flash pages
static_assert(kImageBytes <= kSlotBytes, "an image fits a slot");

static Problem problem;  // views of the flash arrays
static Solver solver;    // all the solver's mutable state
static unsigned char image[kImageBytes];
__attribute__((section(".checkpoint"))) static unsigned char slot[2][kSlotBytes];  // flash

// Into the slot holding no image or the older one: erase, then program (QEMU's flash is RAM).
static Status checkpoint() {
  if (Status st = pbrl::save_checkpoint(solver, image, kImageBytes); st != Status::ok) return st;
  const int k = pbrl::checkpoint_slot_to_write<Solver>(slot[0], slot[1], kSlotBytes);
  std::memset(slot[k], 0xFF, kSlotBytes);
  std::memcpy(slot[k], image, kImageBytes);
  return Status::ok;
}

// One tick of the control loop: one slice of a step (bounded work: one part of the step, or at most
// 3 rollouts), and a checkpoint after every kCheckpointEvery-th step. No report: no certificate's work.
static Status tick() {
  pbrl::SliceResult slice;
  if (Status st = solver.step_slice(3, slice); st != Status::ok) return st;  // st: the last step is intact
  return slice.step_done && solver.iteration() % kCheckpointEvery == 0 ? checkpoint() : Status::ok;
}

// Lines "name[r] v[r*columns] ... v[r*columns + columns-1]" for r < rows, floats as Line::real.
static void print_rows(const char* name, const float* v, int rows, int columns) {
  for (int r = 0; r < rows; ++r) {
    board::Line line;
    line.text(name).text("[").integer(r).text("]");
    for (int c = 0; c < columns; ++c) line.text(" ").real(v[r * columns + c]);
    line.print();
  }
}

extern "C" void SysTick_Handler() {}  // startup.c's vector table names it; no timer runs here
int main() {
  Status st = problem.init(minimal::data());  // then x = 0, uniform policies
  if (st == Status::ok)
    st = solver.init(problem, minimal::settings(), Problem::Params::Zero(), Problem::Matrix1::Zero(),
                     Problem::Matrix2::Zero());
  // Resume from the newest complete checkpoint; on the first boot there is none.
  if (st == Status::ok) (void)pbrl::restore_newest_checkpoint(solver, slot[0], slot[1], kSlotBytes);
  while (st == Status::ok && solver.iteration() < kSteps) st = tick();
  if (st != Status::ok) {
    board::Line().text(pbrl::to_string(st)).print();
    return 1;
  }
  Problem::Matrix1 pi1;
  Problem::Matrix2 pi2;
  solver.policy1(pi1);
  solver.policy2(pi2);
  // x(s, a1, a2) in row s*A1 + a1; the agents' policies pi1(a1|s), pi2(a2|s) in row s.
  print_rows("x", solver.x().data(), Problem::kStates * Problem::kActions1, Problem::kActions2);
  print_rows("pi1", pi1.data(), Problem::kStates, Problem::kActions1);
  print_rows("pi2", pi2.data(), Problem::kStates, Problem::kActions2);
}
