#pragma once
// Status codes returned by every pbrl call that can fail. On any status other than
// Status::ok the call has changed none of the data it was given.

namespace pbrl {

enum class [[nodiscard]] Status : unsigned char {
  ok = 0,
  null_pointer,          // a required model array was not given
  not_finite,            // an input holds NaN or infinity
  bad_discount,          // discount outside [0, 1)
  bad_regularization,    // tau < 0, or a reference policy row that is not a distribution > 0
  bad_distribution,      // initial distribution not positive or not summing to one
  bad_transition,        // a transition row negative or not summing to one
  bad_policy,            // a policy row outside the policy set
  bad_step_size,         // a step size not positive and finite
  bad_setting,           // another setting out of range (iteration counts, floors, bounds)
  out_of_bounds,         // a parameter outside its box
  not_initialized,       // a solver call before a successful init()
  numerical_failure,     // a computation produced NaN/inf or a singular system
  buffer_too_small,      // a caller buffer shorter than what it must hold (checkpoint_size)
  checkpoint_corrupt,    // not an intact checkpoint: bad magic, CRC or commit word (a torn
                         // write, erased or damaged flash), or a count out of its range
  checkpoint_mismatch,   // an intact checkpoint, but of another format version, solver type,
                         // scalar, evaluation method or size than the solver it should be restored into
  count_overflow,        // a step would overflow the solver's iteration or environment-step count
  checkpoint_other_problem,   // an intact checkpoint of another kind of problem
  checkpoint_other_model,     // an intact checkpoint taken on another model (or estimate prior)
  checkpoint_other_settings,  // an intact checkpoint taken under other solver or estimate settings
};

// Human-readable name of a status, for logs; never null.
const char* to_string(Status status) noexcept;

inline bool ok(Status status) noexcept { return status == Status::ok; }

}  // namespace pbrl
