// pbrl_status (include/pbrl/c/pbrl_status.h) is pbrl::Status with C names, pbrl_step_part
// (pbrl_c.h) pbrl::StepPart and pbrl_solve_outcome pbrl::SolveOutcome: the same values, checked
// here, so the C interfaces pass them on by a cast.
#include "pbrl/c/pbrl_c.h"
#include "pbrl/c/pbrl_status.h"

#include "pbrl/solver/solve_outcome.hpp"
#include "pbrl/solver/step_slices.hpp"
#include "pbrl/core/status.hpp"

namespace pbrl {
namespace {

// The C code of each Status has the Status's value. No default: with -Wall -Werror (the library's
// flags) a Status added without a case here does not compile, nor one without a C code.
constexpr bool mirrored(Status s) {
  const int v = static_cast<int>(s);
  switch (s) {
    case Status::ok: return v == PBRL_OK;
    case Status::null_pointer: return v == PBRL_NULL_POINTER;
    case Status::not_finite: return v == PBRL_NOT_FINITE;
    case Status::bad_discount: return v == PBRL_BAD_DISCOUNT;
    case Status::bad_regularization: return v == PBRL_BAD_REGULARIZATION;
    case Status::bad_distribution: return v == PBRL_BAD_DISTRIBUTION;
    case Status::bad_transition: return v == PBRL_BAD_TRANSITION;
    case Status::bad_policy: return v == PBRL_BAD_POLICY;
    case Status::bad_step_size: return v == PBRL_BAD_STEP_SIZE;
    case Status::bad_setting: return v == PBRL_BAD_SETTING;
    case Status::out_of_bounds: return v == PBRL_OUT_OF_BOUNDS;
    case Status::not_initialized: return v == PBRL_NOT_INITIALIZED;
    case Status::numerical_failure: return v == PBRL_NUMERICAL_FAILURE;
    case Status::buffer_too_small: return v == PBRL_BUFFER_TOO_SMALL;
    case Status::checkpoint_corrupt: return v == PBRL_CHECKPOINT_CORRUPT;
    case Status::checkpoint_mismatch: return v == PBRL_CHECKPOINT_MISMATCH;
    case Status::count_overflow: return v == PBRL_COUNT_OVERFLOW;
    case Status::checkpoint_other_problem: return v == PBRL_CHECKPOINT_OTHER_PROBLEM;
    case Status::checkpoint_other_model: return v == PBRL_CHECKPOINT_OTHER_MODEL;
    case Status::checkpoint_other_settings: return v == PBRL_CHECKPOINT_OTHER_SETTINGS;
  }
  return true;  // a value no Status names: nothing to mirror
}

// Every value of the underlying type, so every enumerator is visited.
constexpr bool all_mirrored() {
  for (int v = 0; v < 256; ++v)
    if (!mirrored(static_cast<Status>(v))) return false;
  return true;
}
static_assert(all_mirrored(), "pbrl_status.h and status.hpp disagree");

// Likewise for the step's parts (no default: a part added without a case does not compile).
constexpr bool mirrored(StepPart p) {
  const int v = static_cast<int>(p);
  switch (p) {
    case StepPart::begin: return v == PBRL_PART_BEGIN;
    case StepPart::lower_model: return v == PBRL_PART_LOWER_MODEL;
    case StepPart::oracle_step: return v == PBRL_PART_ORACLE_STEP;
    case StepPart::rollouts: return v == PBRL_PART_ROLLOUTS;
    case StepPart::evaluation: return v == PBRL_PART_EVALUATION;
    case StepPart::upper: return v == PBRL_PART_UPPER;
    case StepPart::penalty: return v == PBRL_PART_PENALTY;
    case StepPart::projection: return v == PBRL_PART_PROJECTION;
  }
  return true;
}
static_assert(mirrored(StepPart::begin) && mirrored(StepPart::lower_model) && mirrored(StepPart::oracle_step) &&
                  mirrored(StepPart::rollouts) && mirrored(StepPart::evaluation) && mirrored(StepPart::upper) &&
                  mirrored(StepPart::penalty) && mirrored(StepPart::projection),
              "pbrl_c.h and step_slices.hpp disagree");

// Likewise for solve()'s outcomes.
constexpr bool mirrored(SolveOutcome o) {
  const int v = static_cast<int>(o);
  switch (o) {
    case SolveOutcome::converged: return v == PBRL_SOLVE_CONVERGED;
    case SolveOutcome::step_cap: return v == PBRL_SOLVE_STEP_CAP;
    case SolveOutcome::penalty_cap: return v == PBRL_SOLVE_PENALTY_CAP;
    case SolveOutcome::oracle_cap: return v == PBRL_SOLVE_ORACLE_CAP;
    case SolveOutcome::stalled: return v == PBRL_SOLVE_STALLED;
  }
  return true;
}
static_assert(mirrored(SolveOutcome::converged) && mirrored(SolveOutcome::step_cap) &&
                  mirrored(SolveOutcome::penalty_cap) && mirrored(SolveOutcome::oracle_cap) &&
                  mirrored(SolveOutcome::stalled),
              "pbrl_c.h and solve_outcome.hpp disagree");

}  // namespace
}  // namespace pbrl

extern "C" const char* pbrl_status_string(pbrl_status status) {
  const int v = static_cast<int>(status);
  // Values outside Status's range would not survive the cast.
  return v < 0 || v > 255 ? "unknown" : pbrl::to_string(static_cast<pbrl::Status>(v));
}

extern "C" const char* pbrl_step_part_string(int part) {
  // Only values of the enum's range may be cast (0 to 7): check before.
  if (part < static_cast<int>(pbrl::StepPart::begin) || part > static_cast<int>(pbrl::StepPart::projection))
    return "unknown";
  return pbrl::enum_name(static_cast<pbrl::StepPart>(part));
}

extern "C" const char* pbrl_solve_outcome_string(int outcome) {
  if (outcome < static_cast<int>(pbrl::SolveOutcome::converged) ||
      outcome > static_cast<int>(pbrl::SolveOutcome::stalled))
    return "unknown";
  return pbrl::enum_name(static_cast<pbrl::SolveOutcome>(outcome));
}
