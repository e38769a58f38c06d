#pragma once
// What every solver and baseline shares around its update: one block of a projected gradient
// step, the counts a step advances (iteration, environment steps) with their overflow check, and
// run(). A step forms every new iterate in scratch, checks it, and only then commits: an error
// leaves the solver as it was.

#include "pbrl/status.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

// next = Proj(z - alpha * grad) with project(next) in place; returns |(z - next) / alpha|^2, this
// block's part of the squared projected-gradient norm |G|^2. For a finite z (a solver's committed
// iterate) and a finite alpha > 0 the sum is finite only if every entry of next is (a NaN or an
// infinity in next makes its term NaN or +inf, and a sum of squares never cancels an infinity),
// so a solver checks the sum and not next again.
template <typename Scalar, class Block, class Gradient, class Project>
Scalar projected_step(const Block& z, Scalar alpha, const Gradient& grad, Block& next, Project&& project) {
  next = z - alpha * grad;
  project(next);
  return ((z - next) / alpha).squaredNorm();
}

// The counts of a solver: iterations and environment steps since init(). Both are 64-bit on every
// target (long is 32 bits on a Cortex-M: at 8.5 ms a step it would overflow after 211 days), and
// neither ever overflows: a step that would overflow one returns count_overflow instead.
struct StepCounts {
  static constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t iteration = 0;
  std::int64_t environment_steps = 0;

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
