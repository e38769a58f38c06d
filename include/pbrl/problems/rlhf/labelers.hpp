#pragma once
// RLHF (problems/rlhf.hpp): who labels a pair of segments. Labeler is a plain function pointer
// and a context; ReturnLabeler ("higher true return wins", the paper's rule) and
// BradleyTerryLabeler (stochastic, from its own Rng) are the synthetic labelers of the experiment.

#include "pbrl/problems/rlhf/preference_buffer.hpp"
#include "pbrl/problems/rlhf/preference_loss.hpp"
#include "pbrl/problems/rlhf/segment.hpp"
#include "pbrl/core/rng.hpp"

#include <cmath>
#include <limits>

namespace pbrl {

/// A labeler: label = function(context, d0, d1) = l0, the probability that d0 is preferred.
/// A plain function pointer and a context pointer, so a device can wire it to a button, a serial
/// line or a synthetic rule without std::function. A value outside [0, 1] or NaN is refused by
/// the buffer (collect_pair then pushes nothing).
template <int S, int A, int MaxLen>
struct Labeler {
  /// The labeling function's type.
  using Function = Label (*)(void* context, const Segment<S, A, MaxLen>& d0,
                             const Segment<S, A, MaxLen>& d1);
  /// The function (not null when used).
  Function function = nullptr;
  /// Its context, passed as the first argument.
  void* context = nullptr;
};

/// "Higher true return wins" (the paper's preference generation, after Christiano et al.):
/// label 1 if R(d0) > R(d1), 0 if R(d0) < R(d1), and 0.5 on a tie, the Bradley-Terry-optimal
/// "equally preferable" label, deterministic (no coin flip, no Rng). A difference within the
/// rounding error of the two sums, |R0 - R1| <= (n0 + n1) * eps * (sum |r| over both), counts as a
/// tie, so segments holding the same pairs in another order always tie.
template <typename Scalar, int S, int A>
struct ReturnLabeler {
  /// The hidden true reward, S x A row-major, caller-owned; null gives a NaN label.
  const Scalar* reward = nullptr;

  /// The label of (d0, d1): 1, 0 or 0.5 (NaN without a reward).
  template <int MaxLen>
  Label operator()(const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) const {
    if (reward == nullptr) return std::numeric_limits<Label>::quiet_NaN();
    Scalar r0(0), r1(0), magnitude(0);
    for (int t = 0; t < d0.length; ++t) {
      const Scalar r = reward[int(d0.state[t]) * A + int(d0.action[t])];
      r0 += r;
      magnitude += std::abs(r);
    }
    for (int t = 0; t < d1.length; ++t) {
      const Scalar r = reward[int(d1.state[t]) * A + int(d1.action[t])];
      r1 += r;
      magnitude += std::abs(r);
    }
    const Scalar tie = Scalar(d0.length + d1.length) * std::numeric_limits<Scalar>::epsilon() * magnitude;
    if (std::abs(r0 - r1) <= tie) return Label(0.5);
    return r0 > r1 ? Label(1) : Label(0);
  }

  /// Labeler::Function of a ReturnLabeler (context: the labeler).
  template <int MaxLen>
  static Label call(void* context, const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) {
    return (*static_cast<const ReturnLabeler*>(context))(d0, d1);
  }
  /// This labeler as a Labeler (it must outlive the Labeler's use).
  template <int MaxLen>
  Labeler<S, A, MaxLen> labeler() {
    return Labeler<S, A, MaxLen>{&call<MaxLen>, this};
  }
};

/// Stochastic Bradley-Terry labeler: label 1 with probability sigma(scale * (R(d0) - R(d1))), else 0,
/// drawn from the context's own Rng (a deterministic stream). scale = 1 is the paper's model.
template <typename Scalar, int S, int A>
struct BradleyTerryLabeler {
  /// The hidden true reward, S x A row-major, caller-owned; null gives a NaN label.
  const Scalar* reward = nullptr;
  /// The Bradley-Terry scale (finite, else NaN labels).
  Scalar scale = Scalar(1);
  /// The labeler's own random stream.
  Rng rng{1u};

  /// sigma(scale * (R(d0) - R(d1))), the probability that d0 is preferred.
  template <int MaxLen>
  Scalar probability(const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) const {
    return sigmoid(scale * (segment_return(reward, d0) - segment_return(reward, d1)));
  }

  /// A label of (d0, d1): 1 with probability probability(d0, d1), else 0 (NaN without a reward or
  /// with a non-finite scale).
  template <int MaxLen>
  Label operator()(const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) {
    if (reward == nullptr || !std::isfinite(scale)) return std::numeric_limits<Label>::quiet_NaN();
    const Scalar p = probability(d0, d1);
    if (!std::isfinite(p)) return std::numeric_limits<Label>::quiet_NaN();
    return rng.uniform<Scalar>() < p ? Label(1) : Label(0);
  }

  /// Labeler::Function of a BradleyTerryLabeler (context: the labeler).
  template <int MaxLen>
  static Label call(void* context, const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) {
    return (*static_cast<BradleyTerryLabeler*>(context))(d0, d1);
  }
  /// This labeler as a Labeler (it must outlive the Labeler's use).
  template <int MaxLen>
  Labeler<S, A, MaxLen> labeler() {
    return Labeler<S, A, MaxLen>{&call<MaxLen>, this};
  }
};

}  // namespace pbrl
