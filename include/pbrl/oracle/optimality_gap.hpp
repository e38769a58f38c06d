#pragma once
// A certified bound on a policy's optimality gap in a regularized MDP, from one evaluation of it:
//   V*(rho) - V^pi(rho) <= max_s g(s) / (1 - gamma),
//   g(s) = max_p [<p, Q^pi(s,.)> - tau h_s(p)] - V^pi(s) >= 0   (the soft maximum of Q^pi(s,.))
// By the performance difference lemma V*(rho) - V^pi(rho) = sum_s d*(s) [<pi*(s), Q^pi(s,.)> -
// tau h_s(pi*(s)) - V^pi(s)] with d* the discounted occupancy of pi* from rho (mass 1/(1-gamma));
// each bracket is at most g(s). g = 0 exactly at the regularized optimum.

#include "pbrl/evaluation.hpp"
#include "pbrl/regularizer.hpp"

namespace pbrl {

// eval must be the evaluation of a policy on m (evaluate()); no check here, no allocation.
template <typename Scalar, int S, int A>
Scalar optimality_gap_bound(const Mdp<Scalar, S, A>& m, const Evaluation<Scalar, S, A>& eval) {
  Scalar worst(0);
  for (int s = 0; s < S; ++s) {
    const Scalar g = detail::soft_max_row(m.regularizer, s, eval.q.row(s)) - eval.value(s);
    if (!(g <= worst)) worst = g;  // a NaN propagates
  }
  return worst / (Scalar(1) - m.discount);
}

}  // namespace pbrl
