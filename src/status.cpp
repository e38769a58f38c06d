#include "pbrl/status.hpp"

namespace pbrl {

const char* to_string(Status status) noexcept {
  switch (status) {
    case Status::ok: return "ok";
    case Status::null_pointer: return "null_pointer";
    case Status::not_finite: return "not_finite";
    case Status::bad_discount: return "bad_discount";
    case Status::bad_regularization: return "bad_regularization";
    case Status::bad_distribution: return "bad_distribution";
    case Status::bad_transition: return "bad_transition";
    case Status::bad_policy: return "bad_policy";
    case Status::bad_step_size: return "bad_step_size";
    case Status::bad_setting: return "bad_setting";
    case Status::out_of_bounds: return "out_of_bounds";
    case Status::not_initialized: return "not_initialized";
    case Status::numerical_failure: return "numerical_failure";
    case Status::buffer_too_small: return "buffer_too_small";
    case Status::checkpoint_corrupt: return "checkpoint_corrupt";
    case Status::checkpoint_mismatch: return "checkpoint_mismatch";
    case Status::count_overflow: return "count_overflow";
    case Status::checkpoint_other_problem: return "checkpoint_other_problem";
    case Status::checkpoint_other_model: return "checkpoint_other_model";
    case Status::checkpoint_other_settings: return "checkpoint_other_settings";
  }
  return "unknown";
}

}  // namespace pbrl
