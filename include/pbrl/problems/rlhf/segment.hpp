#pragma once
// RLHF (problems/rlhf.hpp): a segment d = (s_t, a_t, ..., s_{t+T}, a_{t+T}) of a rollout, its
// validation, and its undiscounted return R(d), the Bradley-Terry model's score.

#include "pbrl/core/status.hpp"

#include <cstdint>
#include <type_traits>

namespace pbrl {

/// A fixed-capacity segment d = (s_t, a_t, ..., s_{t+T}, a_{t+T}) of a rollout.
/// Length convention: `length` counts the state-action PAIRS, length = T + 1 with the paper's T, so
/// 1 <= length <= MaxLen and T <= MaxLen - 1. T = 0 (length 1) is the single-pair segment of the
/// Remark "Connection with DPO"; the paper's Atari experiment ("trajectories of 25 time steps")
/// is length 25, T = 24. Pairs [0, length) are meaningful; the rest is ignored.
/// States and actions are stored in the smallest unsigned type that holds them (one byte each for
/// S, A <= 256), so a large buffer stays small.
template <int S, int A, int MaxLen>
struct Segment {
  static_assert(MaxLen >= 1, "a segment holds at least one state-action pair");
  static_assert(S <= 65536 && A <= 65536, "state and action indices are stored in 16 bits");
  /// The stored index type: 8 bits for S, A <= 256, else 16.
  using Index = std::conditional_t<(S <= 256 && A <= 256), std::uint8_t, std::uint16_t>;
  /// MaxLen, the most pairs a segment holds.
  static constexpr int kMaxLength = MaxLen;

  /// s_t of pair t, t in [0, length).
  Index state[MaxLen] = {};
  /// a_t of pair t, t in [0, length).
  Index action[MaxLen] = {};
  /// The pairs held: T + 1.
  int length = 0;

  /// The paper's T: length - 1.
  int horizon() const { return length - 1; }
  /// Empties the segment.
  void clear() { length = 0; }

  /// Appends (s, a).
  /// @return ok; bad_setting (full); out_of_bounds (s or a out of range). On error the segment is
  ///         unchanged.
  Status push_back(int s, int a) {
    if (length < 0 || length >= MaxLen) return Status::bad_setting;
    if (s < 0 || s >= S || a < 0 || a >= A) return Status::out_of_bounds;
    state[length] = static_cast<Index>(s);
    action[length] = static_cast<Index>(a);
    ++length;
    return Status::ok;
  }
};

/// Checks a segment: 1 <= length <= MaxLen and every state < S and action < A.
/// @return ok; bad_setting (length); out_of_bounds (an index).
template <int S, int A, int MaxLen>
Status validate(const Segment<S, A, MaxLen>& d) {
  if (d.length < 1 || d.length > MaxLen) return Status::bad_setting;
  for (int t = 0; t < d.length; ++t)
    if (int(d.state[t]) >= S || int(d.action[t]) >= A) return Status::out_of_bounds;
  return Status::ok;
}

/// R(d) = sum_t r(s_t, a_t), undiscounted, as in the Bradley-Terry model; reward S x A row-major.
/// d must be valid.
template <typename Scalar, int S, int A, int MaxLen>
Scalar segment_return(const Scalar* reward, const Segment<S, A, MaxLen>& d) {
  Scalar sum(0);
  for (int t = 0; t < d.length; ++t) sum += reward[int(d.state[t]) * A + int(d.action[t])];
  return sum;
}

}  // namespace pbrl
