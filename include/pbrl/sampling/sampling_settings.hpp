#pragma once
// Sampled mode's settings (horizon H, batch B, common random numbers) and their work caps: what
// the solvers' settings hold without the estimators (sampling/detail/estimators.hpp).

#include "pbrl/core/config.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>

namespace pbrl {

/// Default capacity of a Trajectory, and the largest horizon the PBRL solver's sampled mode takes
/// (a work cap, config.hpp).
constexpr int kMaxHorizon = PBRL_MAX_HORIZON;

/// Largest batch accepted (a work cap, config.hpp).
constexpr int kMaxBatch = PBRL_MAX_BATCH;

/// Sampled mode's settings: horizon H, batch B, common random numbers.
struct SamplingSettings {
  int horizon = 5;                    ///< H, trajectory length (environment steps per trajectory), in [1, kMaxHorizon]
  int batch = 16;                     ///< B, trajectories per estimate, in [1, kMaxBatch]
  bool common_random_numbers = true;  ///< the two batches of a penalty share their uniforms
};

/// Checks 1 <= horizon <= MaxHorizon (the Trajectory's capacity), 1 <= batch <= kMaxBatch.
/// @return ok or bad_setting.
template <int MaxHorizon = kMaxHorizon>
Status validate_sampling(const SamplingSettings& s) {
  if (s.horizon < 1 || s.horizon > MaxHorizon || s.batch < 1 || s.batch > kMaxBatch)
    return Status::bad_setting;
  return Status::ok;
}

/// Environment steps of one batch: B * H.
inline std::int64_t batch_steps(const SamplingSettings& s) {
  return static_cast<std::int64_t>(s.batch) * s.horizon;
}

}  // namespace pbrl
