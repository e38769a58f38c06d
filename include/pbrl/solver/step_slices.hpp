#pragma once
// A step in slices: a control loop that cannot give one whole step() a tick calls step_slice()
// once per tick, and other code runs between slices. Each slice runs one part of the step (one
// induced-model build, one oracle step, one evaluation, a few rollouts of a sampled batch, f,
// the penalty, the projection); the slice that runs the projection commits the step, exactly as
// step() would: step() itself is "slices until the step is done", so the iterates are the same
// bit for bit whatever the slicing.
//
// Between slices the solver is consistent: its state is the last completed step, and everything
// in progress is scratch. A checkpoint saved between slices holds the last completed step; a
// restore (or init) abandons the step in progress. A slice that fails abandons the step in
// progress and leaves the last completed step intact (the next slice begins the step again).

#include "pbrl/core/detail/enum_names.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>

namespace pbrl {

/// The part of a step one slice ran.
enum class StepPart : std::int32_t {
  begin,        ///< checks; M(x_k) built; pi_k from y_k
  lower_model,  ///< one player's induced MDP (zero-sum lower level)
  oracle_step,  ///< one exact oracle step (soft value iteration: all its sweeps)
  rollouts,     ///< some rollouts of a sampled batch (the oracle's policy gradient or the penalty's)
  evaluation,   ///< one policy evaluation and its certificate
  upper,        ///< f and its gradient
  penalty,      ///< the exact penalty and its gradient
  projection,   ///< the projected step; the step is committed
};
/// StepPart's enumerator names, for logs.
constexpr EnumNames<StepPart, 8> enum_names(StepPart) {
  return {{"begin", "lower_model", "oracle_step", "rollouts", "evaluation", "upper", "penalty", "projection"}};
}

/// What one step_slice() call did.
struct SliceResult {
  StepPart part = StepPart::begin;  ///< the part this slice ran
  std::int64_t slice = 0;           ///< its index in the step (0: the slice that began it)
  bool step_done = false;           ///< it committed the step (and filled the report)
};

/// A max_rollouts of step_slice() that never limits a slice: step() uses it. (max_rollouts, the
/// most rollouts one slice of a sampled batch may run, is at least 1.)
constexpr int kAllRollouts = 0x7FFFFFFF;

/// @cond internal
// step_slice() of a sliced solver (a friend: run_part is private): refuses the argument, runs
// the part part.next names, abandons the step in progress on error or once it is committed.
// part: the solver's step in progress (next, slice).
template <class Solver, class Part, class Report>
Status run_slice(Solver& solver, Part& part, bool initialized, int max_rollouts, SliceResult& out, Report* report) {
  if (max_rollouts < 1) return Status::bad_setting;
  if (!initialized) return Status::not_initialized;
  SliceResult slice{part.next, part.slice, false};
  if (Status st = solver.run_part(max_rollouts, report, slice.step_done); st != Status::ok) {
    solver.abandon_step();
    return st;
  }
  ++part.slice;
  if (slice.step_done) solver.abandon_step();
  out = slice;
  return Status::ok;
}

// step() of a sliced solver: a fresh step, its slices until it is done.
template <class Solver, class Report>
Status step_by_slices(Solver& solver, Report* report) {
  solver.abandon_step();
  SliceResult slice;
  do {
    if (Status st = solver.step_slice(kAllRollouts, slice, report); st != Status::ok) return st;
  } while (!slice.step_done);
  return Status::ok;
}
/// @endcond

}  // namespace pbrl
