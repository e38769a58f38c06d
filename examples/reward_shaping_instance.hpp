#pragma once
// The random reward-shaping instance of examples/reward_shaping, bench/bench_pbrl and
// tests/test_precision (not part of the library), drawn as in the paper's experiments: a sparse
// task reward (uniform in [0, 1], entries below 0.7 set to 0), transition rows uniform then
// normalized, a random rho; discount 0.9, an entropy-regularized learner (tau 0.1), the task
// unregularized, shaping terms in [-1, 1]; and the example's solver settings.

#include "pbrl/core/rng.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/solver/pbrl.hpp"

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

// The example's PBRL settings: softmax policies, a policy-mirror-descent oracle of 5 steps of size
// 1, steps 0.05 for x and 0.5 for y, lambda ramped from 1 to 5 over 20 iterations.
template <typename Scalar>
pbrl::PbrlSettings<Scalar> reward_shaping_settings(pbrl::PenaltyKind kind) {
  pbrl::PbrlSettings<Scalar> s;
  s.penalty_kind = kind;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle = pbrl::OracleKind::policy_mirror_descent;
  s.inner_steps = 5;
  s.oracle_step = Scalar(1);
  s.step_x = Scalar(0.05);
  s.step_y = Scalar(0.5);
  s.lambda_start = Scalar(1);
  s.lambda_final = Scalar(5);
  s.lambda_ramp = 20;
  return s;
}

}  // namespace examples
