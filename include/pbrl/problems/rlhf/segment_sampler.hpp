#pragma once
// RLHF (problems/rlhf.hpp): segments drawn from the learner's policy with the true transitions
// (the library's rollout walk and categorical draw, sampling/rollouts.hpp), labeled and pushed
// into a preference buffer; counts environment steps.

#include "pbrl/core/config.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/problems/rlhf/labelers.hpp"
#include "pbrl/problems/rlhf/preference_buffer.hpp"
#include "pbrl/problems/rlhf/segment.hpp"
#include "pbrl/core/rng.hpp"
#include "pbrl/sampling/rollouts.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

/// Draws segments from a policy with the true transitions P: s_0 ~ rho, then `burn_in` steps of
/// pi (a ~ pi(s), s' ~ P(.|s,a)) that are not recorded, then the segment
/// (s_0', a_0', ..., s_T', a_T') with a_t' ~ pi(s_t'), s_{t+1}' ~ P(.|s_t', a_t').
/// burn_in = 0 starts segments at s ~ rho; burn_in = b starts them at a state visited by a rollout
/// at time b (distribution rho^T P_pi^b), as clips cut from the agent's episodes are.
/// steps() counts environment steps: every action taken, recorded or burn-in (burn_in + length per
/// segment). The Rng is the sampler's own: the same seed gives the same segments.
template <typename Scalar, int S, int A>
class SegmentSampler {
 public:
  /// Policies, S x A.
  using Matrix = StateActionMatrix<Scalar, S, A>;

  /// Validates P and rho once (they are read, never copied), seeds the sampler's Rng and zeroes
  /// steps().
  /// @return ok; null_pointer; not_finite; bad_transition; bad_distribution; bad_setting
  ///         (burn_in < 0). On error the sampler is unchanged.
  Status init(const Scalar* transition, const Scalar* initial, std::uint32_t seed, int burn_in = 0) {
    check_sizes<S, A>();
    if (Status st = validate_transition<Scalar, S, A>(transition); st != Status::ok) return st;
    if (Status st = validate_initial<Scalar, S>(initial); st != Status::ok) return st;
    if (burn_in < 0) return Status::bad_setting;
    transition_ = transition;
    initial_ = initial;
    burn_in_ = burn_in;
    rng_.reseed(seed);
    steps_ = 0;
    return Status::ok;
  }

  /// One segment of `length` pairs (T = length - 1) from pi (rows distributions) into out.
  /// @return ok; not_initialized; bad_setting (length outside [1, MaxLen], burn_in + length past
  ///         INT_MAX); validate_policy(pi)'s statuses; count_overflow (steps() has no room for this
  ///         segment's); bad_transition (a draw found no positive entry: the arrays changed after
  ///         init()). On error the segment, the Rng and the step count are unchanged.
  template <int MaxLen>
  Status sample(const Matrix& pi, int length, Segment<S, A, MaxLen>& out) {
    if (transition_ == nullptr) return Status::not_initialized;
    if (length < 1 || length > MaxLen) return Status::bad_setting;
    if (Status st = validate_policy(pi); st != Status::ok) return st;
    if (burn_in_ > std::numeric_limits<int>::max() - length) return Status::bad_setting;  // steps fit an int
    if (steps_ > std::numeric_limits<std::int64_t>::max() - (burn_in_ + length)) return Status::count_overflow;
    // Burn-in steps are walked, not recorded. A draw that finds no positive entry (the arrays
    // changed after init(): detail::draw) refuses the segment with bad_transition.
    using Index = typename Segment<S, A, MaxLen>::Index;
    Rng rng = rng_;
    bool valid = true;
    Segment<S, A, MaxLen> walked;  // out is written only once the walk is valid
    detail::walk<Scalar, S, A>(
        ConstStateMap<Scalar, S>(initial_), ConstTransitionMap<Scalar, S, A>(transition_), burn_in_ + length, false,
        rng, valid, [&](int, int s) { return pi.row(s); },
        [&](int t, int s, int a) {
          if (t < burn_in_) return;
          walked.state[t - burn_in_] = static_cast<Index>(s);
          walked.action[t - burn_in_] = static_cast<Index>(a);
        });
    if (!valid) return Status::bad_transition;
    walked.length = length;
    out = walked;
    steps_ += burn_in_ + length;
    rng_ = rng;
    return Status::ok;
  }

  /// Draws d0 and d1 from pi, asks the labeler, and pushes the labeled pair. Two segments live
  /// on the stack meanwhile (2 * sizeof(Segment<S, A, MaxLen>) bytes).
  /// @return ok; null_pointer (no labeler function); sample()'s statuses; PreferenceBuffer::push()'s
  ///         (a label outside [0, 1] or NaN). All or nothing: on error the buffer, the Rng and the
  ///         step count are unchanged.
  template <int MaxLen, int Capacity>
  Status collect_pair(const Matrix& pi, int length, const Labeler<S, A, MaxLen>& labeler,
                      PreferenceBuffer<S, A, MaxLen, Capacity>& buffer) {
    if (labeler.function == nullptr) return Status::null_pointer;
    const Rng saved_rng = rng_;
    const std::int64_t saved_steps = steps_;
    Segment<S, A, MaxLen> d0, d1;
    Status st = sample(pi, length, d0);
    if (st == Status::ok) st = sample(pi, length, d1);
    if (st == Status::ok) st = buffer.push(d0, d1, labeler.function(labeler.context, d0, d1));
    if (st != Status::ok) {
      rng_ = saved_rng;
      steps_ = saved_steps;
    }
    return st;
  }

  /// Environment steps walked since init().
  std::int64_t steps() const { return steps_; }
  /// The burn-in steps before each segment.
  int burn_in() const { return burn_in_; }
  /// The sampler's own random stream.
  Rng& rng() { return rng_; }

 private:
  friend struct detail::RlhfCountsAccess;
  const Scalar* transition_ = nullptr;
  const Scalar* initial_ = nullptr;
  int burn_in_ = 0;
  std::int64_t steps_ = 0;
  Rng rng_{1u};
};

}  // namespace pbrl
