#pragma once
// Status codes returned by every pbrl call that can fail. On any status other than
// Status::ok the call has changed none of the data it was given.

#include "pbrl/core/detail/enum_names.hpp"

/// pbrl: penalty-based bilevel reinforcement learning on fixed-size Eigen types, for
/// microcontrollers. The solvers are Pbrl and PbrlZeroSum (solver/pbrl.hpp,
/// solver/pbrl_zero_sum.hpp); a problem is a class of the interface in problem.hpp; every call
/// that can fail returns a Status and, on any value but Status::ok, changes none of its arguments.
namespace pbrl {

/// What a pbrl call that can fail returns: Status::ok, or why it refused or failed.
/// On any value but ok the call has changed none of the data it was given. Each status's name and
/// meaning: kStatusTable below (docs/reference/statuses.md prints it).
enum class [[nodiscard]] Status : unsigned char {
  ok = 0,
  null_pointer,
  not_finite,
  bad_discount,
  bad_regularization,
  bad_distribution,
  bad_transition,
  bad_policy,
  bad_step_size,
  bad_setting,
  out_of_bounds,
  not_initialized,
  numerical_failure,
  buffer_too_small,
  checkpoint_corrupt,
  checkpoint_mismatch,
  count_overflow,
  checkpoint_other_problem,
  checkpoint_other_model,
  checkpoint_other_settings,
};

/// One row of kStatusTable: a status, its name and its meaning.
struct StatusInfo {
  /// The status the row describes.
  Status status;
  const char* name;     ///< the enumerator's name: to_string's text
  const char* meaning;  ///< what a call that returns it found
};

/// Every status in value order, with its name and meaning.
/// to_string() returns the names, and docs/reference/statuses.md (tools/reference) prints the
/// table. The meanings are read only in constant expressions here, so a program that calls
/// to_string() holds the names alone.
inline constexpr StatusInfo kStatusTable[] = {
    {Status::ok, "ok", "the call did what it was asked"},
    {Status::null_pointer, "null_pointer", "a required model array was not given"},
    {Status::not_finite, "not_finite", "an input holds NaN or infinity"},
    {Status::bad_discount, "bad_discount", "discount outside [0, 1)"},
    {Status::bad_regularization, "bad_regularization",
     "tau < 0, or a reference policy row that is not a distribution > 0"},
    {Status::bad_distribution, "bad_distribution", "initial distribution not positive or not summing to one"},
    {Status::bad_transition, "bad_transition", "a transition row negative or not summing to one"},
    {Status::bad_policy, "bad_policy", "a policy row outside the policy set"},
    {Status::bad_step_size, "bad_step_size", "a step size not positive and finite"},
    {Status::bad_setting, "bad_setting", "another setting out of range (iteration counts, floors, bounds)"},
    {Status::out_of_bounds, "out_of_bounds", "a parameter outside its box"},
    {Status::not_initialized, "not_initialized", "a solver call before a successful init()"},
    {Status::numerical_failure, "numerical_failure", "a computation produced NaN/inf or a singular system"},
    {Status::buffer_too_small, "buffer_too_small",
     "a caller buffer shorter than what it must hold (checkpoint_size)"},
    {Status::checkpoint_corrupt, "checkpoint_corrupt",
     "not an intact checkpoint: bad magic, CRC or commit word (a torn write, erased or damaged flash), or a "
     "count out of its range"},
    {Status::checkpoint_mismatch, "checkpoint_mismatch",
     "an intact checkpoint, but of another format version, solver type, scalar, evaluation method or size than "
     "the solver it should be restored into"},
    {Status::count_overflow, "count_overflow",
     "a step would overflow the solver's iteration or environment-step count"},
    {Status::checkpoint_other_problem, "checkpoint_other_problem", "an intact checkpoint of another kind of problem"},
    {Status::checkpoint_other_model, "checkpoint_other_model",
     "an intact checkpoint taken on another model (or estimate prior)"},
    {Status::checkpoint_other_settings, "checkpoint_other_settings",
     "an intact checkpoint taken under other solver or estimate settings"},
};
/// The number of statuses: the rows of kStatusTable.
constexpr int kStatusCount = int(sizeof(kStatusTable) / sizeof(kStatusTable[0]));

namespace detail {
constexpr bool status_table_complete() {
  for (int i = 0; i < kStatusCount; ++i)
    if (int(kStatusTable[i].status) != i || kStatusTable[i].meaning[0] == '\0') return false;
  return kStatusCount == int(Status::checkpoint_other_settings) + 1;
}
static_assert(status_table_complete(), "kStatusTable: a row per status, in value order, each with a meaning");
}  // namespace detail

/// The statuses' names (enum_names.hpp), from kStatusTable.
constexpr EnumNames<Status, kStatusCount> enum_names(Status) {
  EnumNames<Status, kStatusCount> names{};
  for (int i = 0; i < kStatusCount; ++i) names.names[i] = kStatusTable[i].name;
  return names;
}

/// Human-readable name of a status, for logs; never null ("unknown" for a value no Status has).
const char* to_string(Status status) noexcept;

/// Whether status is Status::ok.
inline bool ok(Status status) noexcept { return status == Status::ok; }

}  // namespace pbrl
