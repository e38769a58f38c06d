#pragma once
// Random games' arrays, drawn from an Rng in a fixed order, shared by the doctest suites
// (game_support.hpp) and the fuzz harnesses: no doctest here, which the harnesses must not pull.
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"

// An incentive-design game's arrays in scalar T (in the object: std::make_unique, or in a struct
// that is, for big ones). draw() fills them from rng in order: the agents' reward, the transition,
// the initial distribution, the designer's reward and the designer's transition.
// data(): IncentiveDesign's Data on them, the rest at Data's defaults.
template <typename T, int S, int A1, int A2>
struct IncentiveArrays {
  static constexpr int kRows = S * A1 * A2;
  T reward[kRows], transition[kRows * S], initial[S], designer_reward[kRows], designer_transition[kRows * S];

  void draw(pbrl::Rng& rng) {
    pbrl::random_reward(rng, reward, kRows);
    pbrl::random_transition(rng, transition, kRows, S);
    pbrl::random_distribution(rng, initial, S);
    pbrl::random_reward(rng, designer_reward, kRows);
    pbrl::random_transition(rng, designer_transition, kRows, S);
  }

  typename pbrl::IncentiveDesign<T, S, A1, A2>::Data data() const {
    typename pbrl::IncentiveDesign<T, S, A1, A2>::Data d;
    d.reward = reward;
    d.transition = transition;
    d.initial = initial;
    d.designer_reward = designer_reward;
    d.designer_transition = designer_transition;
    return d;
  }
};

// A random leader-follower game's arrays in scalar T (in the object: std::make_unique, or in a
// struct that is, for big ones). draw() fills them from rng in order: the leader's and the
// follower's rewards (random_reward with `sparsity`), the transition, the initial distribution.
// data(): Stackelberg's Data on them, the rest at Data's defaults.
template <typename T, int S, int AL, int AF>
struct StackelbergArrays {
  static constexpr int kRows = S * AL * AF;
  T leader_reward[kRows], follower_reward[kRows], transition[kRows * S], initial[S];

  void draw(pbrl::Rng& rng, T sparsity = T(0)) {
    pbrl::random_reward(rng, leader_reward, kRows, sparsity);
    pbrl::random_reward(rng, follower_reward, kRows, sparsity);
    pbrl::random_transition(rng, transition, kRows, S);
    pbrl::random_distribution(rng, initial, S);
  }

  typename pbrl::Stackelberg<T, S, AL, AF>::Data data() const {
    typename pbrl::Stackelberg<T, S, AL, AF>::Data d;
    d.leader_reward = leader_reward;
    d.follower_reward = follower_reward;
    d.transition = transition;
    d.initial = initial;
    return d;
  }
};
