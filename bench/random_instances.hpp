#pragma once
// Random instances of bench/tolerance.cpp, both kinds of lower level: Stackelberg games (follower
// MDP, solver Pbrl) and zero-sum incentive designs (solver PbrlZeroSum). The arrays are drawn as
// the paper's experiments draw them (pbrl/problems/random_instance.hpp; Stackelberg rewards with
// sparsity 0.7, incentive rewards dense, transition rows uniform then normalized, rho uniform);
// the size, the discount and the entropy weight tau come from an InstanceSpec. An instance owns
// its arrays and data() points into them: the instance must outlive every problem initialized
// from it. Instances are large at S = 20 (80 KB of transitions): allocate them on the heap.

#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "pbrl/core/rng.hpp"

#include <cstdint>

namespace bench {

// One run's instance: the index of the run, the seed of its arrays, which of the kind's size
// combinations, gamma and tau.
struct InstanceSpec {
  int index = 0;
  std::uint32_t seed = 1u;
  int size = 0;
  double discount = 0.9;
  double tau = 0.1;
};

// Run `index` (>= 0) of a kind with `sizes` (>= 1) size combinations under the base seed `base`:
// the size cycles fastest (index mod sizes), then gamma alternates 0.9 / 0.99 (every `sizes`
// runs), so 2 * sizes consecutive runs cover every (size, gamma) once. The arrays' seed is
// base * 10000 + index (mod 2^32); tau is uniform in [0.01, 0.1], drawn from its own stream of
// that seed (it does not shift the arrays' draws). A pure function of its arguments.
inline InstanceSpec instance_spec(std::uint32_t base, int index, int sizes) {
  InstanceSpec spec;
  spec.index = index;
  spec.seed = base * 10000u + static_cast<std::uint32_t>(index);
  spec.size = index % sizes;
  spec.discount = (index / sizes) % 2 == 0 ? 0.9 : 0.99;
  pbrl::Rng tau_stream(spec.seed ^ 0x5bd1e995u);
  spec.tau = 0.01 + 0.09 * tau_stream.uniform<double>();
  return spec;
}

// What an instance of either kind has: P, Rows rows of S entries (drawn by the instance, in its
// kind's order), rho uniform, and spec's gamma and tau; set_model(d) points d's transition and
// initial at them and sets its discount.
template <int S, int Rows>
struct InstanceModel {
  double transition[Rows * S];
  double initial[S];
  double discount;
  double tau;

  explicit InstanceModel(const InstanceSpec& spec) : discount(spec.discount), tau(spec.tau) {
    for (int s = 0; s < S; ++s) initial[s] = 1.0 / S;
  }

  template <class Data>
  void set_model(Data& d) const {
    d.transition = transition;
    d.initial = initial;
    d.discount = discount;
  }
};

// A Stackelberg game with S states, AL leader and AF follower actions: r_l, r_f uniform in
// [0, 1] with entries below 0.7 set to 0, P uniform then normalized, rho uniform; the follower
// entropy-regularized with spec.tau, the leader unregularized (as examples/stackelberg_experiment),
// logits in [-10, 10] (the problem's default box).
template <int S, int AL, int AF>
struct StackelbergInstance : InstanceModel<S, S * AL * AF> {
  using Problem = pbrl::Stackelberg<double, S, AL, AF>;
  static constexpr int kJoint = S * AL * AF;

  double leader_reward[kJoint], follower_reward[kJoint];

  explicit StackelbergInstance(const InstanceSpec& spec) : InstanceModel<S, kJoint>(spec) {
    pbrl::Rng rng(spec.seed);
    pbrl::random_reward(rng, leader_reward, kJoint, 0.7);
    pbrl::random_reward(rng, follower_reward, kJoint, 0.7);
    pbrl::random_transition(rng, this->transition, kJoint, S);
  }

  typename Problem::Data data() const {
    typename Problem::Data d;
    this->set_model(d);
    d.leader_reward = leader_reward;
    d.follower_reward = follower_reward;
    d.leader = {pbrl::RegularizerKind::entropy, 0.0, nullptr};
    d.follower = {pbrl::RegularizerKind::entropy, this->tau, nullptr};
    return d;
  }
};

// A zero-sum incentive design with S states and A1 x A2 joint actions: the agents' and the
// designer's rewards uniform in [0, 1] (dense), their transitions uniform then normalized, rho
// uniform, both agents entropy-regularized with spec.tau, no designer cost, r_x = r + 0.2
// sigmoid(x) with x in [-10, 10] (as examples/incentive_experiment).
template <int S, int A1, int A2>
struct IncentiveInstance : InstanceModel<S, S * A1 * A2> {
  using Problem = pbrl::IncentiveDesign<double, S, A1, A2>;
  static constexpr int kJoint = S * A1 * A2;

  double reward[kJoint], designer_reward[kJoint], designer_transition[kJoint * S];

  explicit IncentiveInstance(const InstanceSpec& spec) : InstanceModel<S, kJoint>(spec) {
    pbrl::Rng rng(spec.seed);
    pbrl::random_reward(rng, reward, kJoint);
    pbrl::random_transition(rng, this->transition, kJoint, S);
    pbrl::random_reward(rng, designer_reward, kJoint);
    pbrl::random_transition(rng, designer_transition, kJoint, S);
  }

  typename Problem::Data data() const {
    typename Problem::Data d;
    this->set_model(d);
    d.reward = reward;
    d.regularizer1 = {pbrl::RegularizerKind::entropy, this->tau, nullptr};
    d.regularizer2 = {pbrl::RegularizerKind::entropy, this->tau, nullptr};
    d.designer_reward = designer_reward;
    d.designer_transition = designer_transition;
    d.designer_cost = nullptr;
    d.incentive_scale = 0.2;
    d.incentive = {-10.0, 10.0};
    return d;
  }
};

}  // namespace bench
