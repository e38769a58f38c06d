#pragma once
// Random tabular instances as the paper's experiments draw them (appendix "Additional
// experiment details"): rewards uniform in [0, 1] with entries below a sparsity threshold set to
// 0 (0.7 in the Stackelberg game), transition entries uniform in [0, 1] then normalized per row.
// Everything is written into caller arrays.

#include "pbrl/core/config.hpp"
#include "pbrl/core/rng.hpp"

namespace pbrl {

/// n rewards uniform in [0, 1) from rng into reward; entries < sparsity become 0 (sparsity = 0:
/// dense).
template <typename Scalar>
void random_reward(Rng& rng, Scalar* reward, int n, Scalar sparsity = Scalar(0)) {
  for (int i = 0; i < n; ++i) {
    const Scalar u = rng.uniform<Scalar>();
    reward[i] = u < sparsity ? Scalar(0) : u;
  }
}

/// A rows x next_states transition table into transition, whose rows are distributions with
/// entries uniform then normalized.
template <typename Scalar>
void random_transition(Rng& rng, Scalar* transition, int rows, int next_states) {
  for (int i = 0; i < rows; ++i) {
    Scalar* row = transition + static_cast<long>(i) * next_states;
    Scalar sum(0);
    for (int j = 0; j < next_states; ++j) {
      row[j] = rng.uniform<Scalar>();
      sum += row[j];
    }
    for (int j = 0; j < next_states; ++j) row[j] /= sum;
  }
}

/// A distribution of n entries into p, uniform in [0.5, 1.5) then normalized (positive
/// everywhere, as an initial distribution must be).
template <typename Scalar>
void random_distribution(Rng& rng, Scalar* p, int n) {
  Scalar sum(0);
  for (int i = 0; i < n; ++i) {
    p[i] = Scalar(0.5) + rng.uniform<Scalar>();
    sum += p[i];
  }
  for (int i = 0; i < n; ++i) p[i] /= sum;
}

}  // namespace pbrl
