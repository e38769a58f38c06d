#pragma once
// What solve() of a penalty solver (solver/solver_core.hpp) says when it returns ok: an outcome,
// not an error, and the steps it took.

#include "pbrl/core/detail/enum_names.hpp"

#include <cstdint>

namespace pbrl {

/// How solve() ended (it returned ok): an outcome, not an error.
enum class SolveOutcome : std::int32_t {
  converged,    ///< the verdict: certified gap <= gap_tolerance and |G| <= stationarity_tolerance,
                ///< each of the last convergence_window steps (exact tolerance mode only)
  step_cap,     ///< max_steps steps and none of the others
  penalty_cap,  ///< tolerance mode: lambda at lambda_max and |G| <= stationarity_tolerance over the
                ///< window, yet the tolerance not met: more steps cannot meet it
  oracle_cap,   ///< max_steps steps; the last step's oracle ran to inner_steps_max without its target
                ///< (exact tolerance mode): the certificate is the oracle's to tighten
  stalled,      ///< fixed mode after the ramp: |G| <= stationarity_tolerance over the window, with no
                ///< tolerance to certify; or sampled tolerance mode, where no certificate exists
};
/// SolveOutcome's enumerator names.
constexpr EnumNames<SolveOutcome, 5> enum_names(SolveOutcome) {
  return {{"converged", "step_cap", "penalty_cap", "oracle_cap", "stalled"}};
}
static_assert(enum_names(SolveOutcome{}).size == int(SolveOutcome::stalled) + 1, "a name per enumerator");

/// What one solve() call did.
struct SolveResult {
  /// How it ended (meaningful when solve() returned ok).
  SolveOutcome outcome = SolveOutcome::step_cap;
  std::int64_t steps = 0;  ///< steps this call committed
};

}  // namespace pbrl
