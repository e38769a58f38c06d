#pragma once
// A solver's counts (iterations, environment steps, models swapped in) and the loop of run():
// the solvers and the baselines share them.

#include "pbrl/core/status.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

// The counts of a solver: iterations and environment steps since init(). Both are 64-bit on every
// target (long is 32 bits on a Cortex-M: at 8.5 ms a step it would overflow after 211 days), and
// neither ever overflows: a step that would overflow one returns count_overflow instead.
struct StepCounts {
  static constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t iteration = 0;
  std::int64_t environment_steps = 0;
  std::int64_t model_generation = 0;  // models handed to the solver since init() (swap_model)

  // Before a step does any work: is there room for one more iteration?
  Status room_for_step() const { return iteration < kMax ? Status::ok : Status::count_overflow; }
  // Before a step commits: is there room for its environment steps (>= 0)?
  Status room_for(std::int64_t steps) const {
    if (iteration >= kMax || steps > kMax - environment_steps) return Status::count_overflow;
    return Status::ok;
  }
  void commit(std::int64_t steps) {
    ++iteration;
    environment_steps += steps;
  }
};

// `iterations` steps of a solver (the caller's bound); stops at the first error. `last` gets the
// last report.
template <class Solver, class Report>
Status run_steps(Solver& solver, std::int64_t iterations, Report* last) {
  if (iterations < 0) return Status::bad_setting;
  for (std::int64_t k = 0; k < iterations; ++k)
    if (Status st = solver.step(last); st != Status::ok) return st;
  return Status::ok;
}

}  // namespace pbrl
