#pragma once
// RLHF (problems/rlhf.hpp): labels l0 = P(d0 preferred to d1) and the ring buffer of the newest
// Capacity labeled pairs (d0, d1, l0) that the reward model is fitted to.

#include "pbrl/core/config.hpp"
#include "pbrl/problems/rlhf/segment.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

namespace detail {
struct RlhfCountsAccess;  // tests only: sets a count near its saturation
}  // namespace detail

/// A label l0: the probability that d0 is preferred to d1, in [0, 1]; l1 = 1 - l0.
/// Stored as float on every platform (a probability needs no more), so a buffer filled on the
/// host and one filled on a device hold the same bits.
using Label = float;

/// Checks a label l0 = the probability that d0 is preferred to d1: in [0, 1]; l1 = 1 - l0.
/// (The paper's example "l1 = 1, l0 = 0: d1 is preferred" is label 0.)
/// @return ok; not_finite; out_of_bounds.
inline Status validate_label(Label label) {
  if (!std::isfinite(label)) return Status::not_finite;
  if (label < Label(0) || label > Label(1)) return Status::out_of_bounds;
  return Status::ok;
}

/// A ring buffer of the newest Capacity labeled pairs (d0, d1, l0) that the reward model is
/// fitted to (the paper keeps the last 3000). Caller-owned and large (Capacity * (2 *
/// sizeof(Segment) + 4) bytes): make it a static or a member, never a local of a small stack.
/// Index 0 is the oldest pair held, size() - 1 the newest.
template <int S, int A, int MaxLen, int Capacity>
class PreferenceBuffer {
 public:
  static_assert(Capacity >= 1, "a preference buffer holds at least one pair");
  /// The segments' type.
  using SegmentType = Segment<S, A, MaxLen>;
  /// The pairs the buffer holds at most.
  static constexpr int kCapacity = Capacity;

  /// One labeled pair.
  struct Pair {
    /// d0.
    SegmentType first;
    /// d1.
    SegmentType second;
    /// l0 = P(d0 preferred).
    Label label = Label(0.5);
  };

  /// Validates both segments and the label, then adds the pair, overwriting the oldest pair once
  /// full.
  /// @return ok; validate(Segment)'s bad_setting or out_of_bounds; validate_label()'s not_finite or
  ///         out_of_bounds; count_overflow when pushed() has no room for one more. On error the
  ///         buffer is unchanged.
  Status push(const SegmentType& d0, const SegmentType& d1, Label label) {
    if (Status st = validate(d0); st != Status::ok) return st;
    if (Status st = validate(d1); st != Status::ok) return st;
    if (Status st = validate_label(label); st != Status::ok) return st;
    if (pushed_ == std::numeric_limits<std::int64_t>::max()) return Status::count_overflow;
    Pair& slot = pairs_[next_];
    slot.first = d0;
    slot.second = d1;
    slot.label = label;
    next_ = next_ + 1 == Capacity ? 0 : next_ + 1;
    if (size_ < Capacity) ++size_;
    ++pushed_;
    return Status::ok;
  }

  /// The pairs held, at most Capacity.
  int size() const { return size_; }
  /// Whether no pair is held.
  bool empty() const { return size_ == 0; }
  /// Whether Capacity pairs are held (the next push overwrites the oldest).
  bool full() const { return size_ == Capacity; }
  /// Capacity.
  static constexpr int capacity() { return Capacity; }
  /// Pairs pushed since construction or clear().
  std::int64_t pushed() const { return pushed_; }

  /// The i-th oldest pair held; requires 0 <= i < size().
  const Pair& operator[](int i) const {
    int k = next_ - size_ + i;
    if (k < 0) k += Capacity;
    return pairs_[k];
  }
  /// The newest pair; requires !empty().
  const Pair& newest() const { return (*this)[size_ - 1]; }

  /// Empties the buffer and restarts pushed().
  void clear() {
    next_ = size_ = 0;
    pushed_ = 0;
  }

 private:
  friend struct detail::RlhfCountsAccess;
  Pair pairs_[Capacity];
  int next_ = 0;  // slot of the next push
  int size_ = 0;
  std::int64_t pushed_ = 0;
};

}  // namespace pbrl
