#pragma once
// RL from human feedback, tabular (paper, Section 2.2 "RLHF"; Remark "Connection with DPO"):
//   min_{x in X, y}  f(x, y) = the Bradley-Terry loss of r_x on a preference buffer
//   s.t.             y in argmax_y V^{pi_y}_{M_tau(x)}(rho),   r_x(s,a) = x(s,a) in a box X.
// This header includes the pieces, one header each in problems/rlhf/: Segment, PreferenceBuffer
// and Label, SegmentSampler, the labelers (ReturnLabeler, BradleyTerryLabeler), preference_loss,
// RlhfProblem (a problem of pbrl/model/problem.hpp) and RlhfOracle (the true reward's optimal policy,
// the upper bound).
// The buffer is data: f is its empirical mean and grad_pi f = 0; the caller redraws segments from
// the current pi_y into the buffer between solver steps (SegmentSampler::collect_pair), and the
// policy moves by the penalty alone. Why, J^T and ERRATA item 3: docs/algorithm.md#rlhf.

#include "pbrl/problems/rlhf/segment.hpp"
#include "pbrl/problems/rlhf/preference_buffer.hpp"
#include "pbrl/problems/rlhf/labelers.hpp"
#include "pbrl/problems/rlhf/segment_sampler.hpp"
#include "pbrl/problems/rlhf/preference_loss.hpp"
#include "pbrl/problems/rlhf/problem.hpp"
#include "pbrl/problems/rlhf/oracle.hpp"
