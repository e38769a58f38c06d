#pragma once
// The random reward-shaping instance of examples/reward_shaping and bench/bench_pbrl (host side,
// not part of the library), drawn as in the paper's experiments: a sparse task reward (uniform in
// [0, 1], entries below 0.7 set to 0), transition rows uniform then normalized, a random rho;
// discount 0.9, an entropy-regularized learner (tau 0.1), the task unregularized, shaping terms in
// [-1, 1].

#include "pbrl/core/rng.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/reward_shaping.hpp"

namespace examples {

// The instance's arrays (on a device: flash); data() points into them, so they must outlive every
// problem initialized from it.
template <typename Scalar, int S, int A>
struct RewardShapingArrays {
  Scalar reward[S * A];
  Scalar transition[S * A * S];
  Scalar initial[S];

  // Draws reward, transition and rho from rng, in that order (the caller may draw on after them).
  void draw(pbrl::Rng& rng) {
    pbrl::random_reward(rng, reward, S * A, Scalar(0.7));
    pbrl::random_transition(rng, transition, S * A, S);
    pbrl::random_distribution(rng, initial, S);
  }

  typename pbrl::RewardShaping<Scalar, S, A>::Data data() const {
    typename pbrl::RewardShaping<Scalar, S, A>::Data d;
    d.reward = reward;
    d.transition = transition;
    d.initial = initial;
    d.discount = Scalar(0.9);
    d.lower = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};  // the learner
    d.upper = {pbrl::RegularizerKind::entropy, Scalar(0), nullptr};    // the task: unregularized
    d.shaping = {Scalar(-1), Scalar(1)};
    return d;
  }
};

}  // namespace examples
