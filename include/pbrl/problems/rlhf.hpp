#pragma once
// RL from human feedback, tabular (paper, Section 2.2 "RLHF", eq. "rlhf bilevel formulation",
// the Remark "Connection with DPO", and Section "Simulation / Deep RL from human feedback"):
//
//   min_{x in X, y}  f(x, y) = -E_{(d0, d1) ~ pi_y} [ l0 log P(d0 > d1 | r_x) + l1 log P(d1 > d0 | r_x) ]
//   s.t.             y in argmax_y V^{pi_y}_{M_tau(x)}(rho),   M_tau(x) = {S, A, r_x, P, tau*h}
//
// with the Bradley-Terry model P(d0 > d1 | r) = sigma(R(d0) - R(d1)), R(d) = sum_{(s,a) in d} r(s,a)
// (undiscounted), and the tabular reward model r_x(s,a) = x(s,a) in a box X = [lower, upper]^{S*A}.
//
// Pieces, in the order the paper's experiment uses them, one header each in problems/rlhf/:
//   Segment              d = (s_t, a_t, ..., s_{t+T}, a_{t+T}): T + 1 state-action pairs
//                        (rlhf/segment.hpp)
//   PreferenceBuffer     ring buffer of labeled pairs (d0, d1, l0) keeping the newest Capacity,
//                        and the Label type (rlhf/preference_buffer.hpp)
//   SegmentSampler       draws segments from pi_y with the true P (deterministic Rng stream) and
//                        counts environment steps (rlhf/segment_sampler.hpp)
//   Labeler              plain function pointer + void* context; ReturnLabeler ("higher true
//                        return wins", the paper's rule) and BradleyTerryLabeler (stochastic)
//                        (rlhf/labelers.hpp)
//   preference_loss      the mean Bradley-Terry negative log-likelihood over a buffer and its
//                        exact gradient, in log space (softplus) (rlhf/preference_loss.hpp)
//   RlhfProblem          the bilevel problem interface of pbrl/problem.hpp (rlhf/problem.hpp)
//   RlhfOracle           the optimal regularized policy of the hidden true reward: the upper bound
//                        (rlhf/oracle.hpp)
//
// How f depends on y. In the paper, y enters f only through the distribution the segments are drawn
// from (d0, d1 ~ pi_y); the labels and the Bradley-Terry probabilities do not depend on y. The
// tabular problem treats the buffer as data: f(x, y) is the empirical mean over the buffer's pairs,
// grad_pi f = 0, and the caller redraws segments from the current pi_y into the buffer between
// solver steps (SegmentSampler::collect_pair). The score-function term of the on-policy expectation,
// E[loss(d0, d1) * grad log Pr_{pi_y}(d0, d1)], is not part of grad_pi f: it would need labels of
// pairs drawn from pi_y itself, while the buffer mixes pairs from past policies (an estimate from
// it would be biased), and the labels come from outside (a human), so f has no closed form in y.
// The policy is therefore moved by the penalty alone: PBRL's y tracks the optimum of M_tau(x).
//
// J^T(w, v) = w (flattened): r_x = x is linear in x with identity Jacobian and P does not depend
// on x, so the value and Bellman penalties' x-gradients are occupancy differences (ERRATA item 3:
// the Bellman term grad_x g starts with a_0 ~ pi_y and follows pi-hat from t = 1 on, which is what
// penalty/bellman.hpp's occupancy_from_start computes).

#include "pbrl/problems/rlhf/segment.hpp"
#include "pbrl/problems/rlhf/preference_buffer.hpp"
#include "pbrl/problems/rlhf/labelers.hpp"
#include "pbrl/problems/rlhf/segment_sampler.hpp"
#include "pbrl/problems/rlhf/preference_loss.hpp"
#include "pbrl/problems/rlhf/problem.hpp"
#include "pbrl/problems/rlhf/oracle.hpp"
