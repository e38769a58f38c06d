#pragma once
// A small deterministic random number generator (xoshiro128+ seeded by splitmix32): the same
// stream on every platform and compiler, 16 bytes of state owned by the caller, no globals.

#include "pbrl/core/status.hpp"

#include <cstdint>

namespace pbrl {

/// A deterministic random stream (xoshiro128+ seeded by splitmix32): the same numbers on every
/// platform and compiler, 16 bytes of state, no globals.
class Rng {
 public:
  /// The stream of seed (reseed()).
  explicit Rng(std::uint32_t seed = 1u) { reseed(seed); }

  /// Restarts the stream from seed; every seed, 0 included, gives a valid state.
  void reseed(std::uint32_t seed) {
    std::uint32_t z = seed;
    for (auto& word : state_) {  // splitmix32 spreads any seed, 0 included, over the state
      z += 0x9e3779b9u;
      std::uint32_t t = z;
      t = (t ^ (t >> 16)) * 0x85ebca6bu;
      t = (t ^ (t >> 13)) * 0xc2b2ae35u;
      word = t ^ (t >> 16);
    }
  }

  /// The next 32 random bits.
  std::uint32_t next() {
    const std::uint32_t result = state_[0] + state_[3];
    const std::uint32_t t = state_[1] << 9;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = (state_[3] << 11) | (state_[3] >> 21);
    return result;
  }

  /// Uniform in [0, 1) with 24 random bits: exactly representable in float and double alike,
  /// so both precisions see the same numbers.
  template <typename Scalar>
  Scalar uniform() {
    return Scalar(next() >> 8) * Scalar(1.0 / 16777216.0);
  }

  /// Uniform integer in [0, n); requires n > 0.
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>((std::uint64_t(next()) * n) >> 32); }

  /// The 4 words of state (set_state() continues the stream from them).
  const std::uint32_t* state() const { return state_; }

  /// Continues the stream from a state read by state() (a checkpoint restores the solver's Rng
  /// this way).
  /// @param state 4 words; all zeros is refused: it is xoshiro's fixed point, whose stream is
  ///        all zeros.
  /// @return ok; null_pointer (state null) or bad_setting (all zeros), and then the state is
  ///         unchanged.
  Status set_state(const std::uint32_t* state) {
    if (state == nullptr) return Status::null_pointer;
    if ((state[0] | state[1] | state[2] | state[3]) == 0u) return Status::bad_setting;
    for (int i = 0; i < 4; ++i) state_[i] = state[i];
    return Status::ok;
  }

 private:
  std::uint32_t state_[4];
};

}  // namespace pbrl
