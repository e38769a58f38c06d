#pragma once
// Random Stackelberg games for the suites of the estimated model and of checkpoints that know
// their model (test_estimated_model.cpp, test_checkpoint_model.cpp).
#include "game_support.hpp"
#include "support.hpp"

#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"

#include <cstdint>

namespace estimate_support {

// The arrays of a Stackelberg game (game_support.hpp's StackelbergArrays) drawn from a seed;
// data() views them (transition: another array of the same layout, e.g. a RAM model, if given).
template <int S, int AL, int AF>
struct StackelbergArrays : ::StackelbergArrays<Real, S, AL, AF> {
  using Arrays = ::StackelbergArrays<Real, S, AL, AF>;
  using Game = pbrl::Stackelberg<Real, S, AL, AF>;

  explicit StackelbergArrays(std::uint32_t seed, Real discount = Real(0.9)) : discount_(discount) {
    pbrl::Rng rng(seed);
    this->draw(rng);
  }
  typename Game::Data data(const Real* p = nullptr) const {
    typename Game::Data d = Arrays::data();
    if (p != nullptr) d.transition = p;
    d.discount = discount_;
    d.follower.tau = Real(0.1);
    d.logit_bound = Real(5);
    return d;
  }

 private:
  Real discount_;
};

}  // namespace estimate_support
