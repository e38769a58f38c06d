#pragma once
// What the solver harnesses share: the problems they solve, a solver's start, the fields of a
// checkpoint image they forge, and which part of the image a failed step must leave unchanged.

#include "fuzz_input.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

namespace fuzz {

// The image's header fields (checkpoint.hpp): the sequence number at bytes 4-11, the CRC at
// 44-47; the payload from byte 48.
constexpr std::size_t kSequenceAt = 4, kCrcAt = 44, kPayloadAt = pbrl::kCheckpointHeaderSize;

// v in the n bytes at p, least significant first.
inline void put_le(std::uint8_t* p, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = std::uint8_t(v >> (8 * i));
}
inline std::uint64_t get_le(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}
// The CRC over [0, 44) and [48, n), as checkpoint.hpp documents it.
inline void reseal_crc(std::uint8_t* image, std::size_t n) {
  const std::uint32_t crc = pbrl::crc32(image + kPayloadAt, n - kPayloadAt, pbrl::crc32(image, kCrcAt));
  put_le(image + kCrcAt, crc, 4);
}
// Sequence number (bytes 4-11) and commit word (the last 8 bytes, most significant first) = v.
inline void set_sequence(std::uint8_t* image, std::size_t n, std::uint64_t v) {
  put_le(image + kSequenceAt, v, 8);
  for (int i = 0; i < 8; ++i) image[n - 1 - i] = std::uint8_t(v >> (8 * i));
}

// The incentive design the checkpoint and estimate harnesses solve: d's arrays with discount 0.8,
// both agents' tau 0.1, x in [-3, 3].
template <class Data>
Data harness_incentive(Data d) {
  using T = decltype(d.discount);
  d.discount = T(0.8);
  d.regularizer1.tau = d.regularizer2.tau = T(0.1);
  d.incentive = {T(-3), T(3)};
  return d;
}

// The leader-follower game the checkpoint and estimate harnesses solve: d's arrays with discount
// 0.8, the leader's tau 0.05, the follower's 0.1, logit bound 4.
template <class Data>
Data harness_stackelberg(Data d) {
  using T = decltype(d.discount);
  d.discount = T(0.8);
  d.leader.tau = T(0.05);
  d.follower.tau = T(0.1);
  d.logit_bound = T(4);
  return d;
}

// Solver::init from x = 0 and the uniform policy (uniform_parameters) for each agent; sweeps
// evaluations at most 8 sweeps.
template <class P, pbrl::EvaluationMethod M>
pbrl::Status init_at_start(pbrl::Pbrl<P, M>& s, const P& problem, const typename pbrl::Pbrl<P, M>::Settings& settings) {
  using Solver = pbrl::Pbrl<P, M>;
  if constexpr (M == pbrl::EvaluationMethod::sweeps) s.evaluation_workspace().max_sweeps = 8;
  typename Solver::Matrix y;
  pbrl::uniform_parameters(settings.policy, y);
  return s.init(problem, settings, Solver::Params::Zero(), y);
}
template <class P, pbrl::EvaluationMethod M>
pbrl::Status init_at_start(pbrl::PbrlZeroSum<P, M>& s, const P& problem,
                           const typename pbrl::PbrlZeroSum<P, M>::Settings& settings) {
  using Solver = pbrl::PbrlZeroSum<P, M>;
  if constexpr (M == pbrl::EvaluationMethod::sweeps) s.evaluation_workspace().max_sweeps = 8;
  typename Solver::Matrix1 y1;
  typename Solver::Matrix2 y2;
  pbrl::uniform_parameters(settings.policy, y1);
  pbrl::uniform_parameters(settings.policy, y2);
  return s.init(problem, settings, Solver::Params::Zero(), y1, y2);
}

template <class Solver>
struct DirectOf;
template <class P, pbrl::EvaluationMethod M>
struct DirectOf<pbrl::Pbrl<P, M>> {
  using type = pbrl::Pbrl<P, pbrl::EvaluationMethod::direct>;
};
template <class P, pbrl::EvaluationMethod M>
struct DirectOf<pbrl::PbrlZeroSum<P, M>> {
  using type = pbrl::PbrlZeroSum<P, pbrl::EvaluationMethod::direct>;
};

// A failed step promises x, y, the oracle's warm start, the schedule, the counts and the Rng
// unchanged (solver/pbrl.hpp, pbrl_zero_sum.hpp), not the evaluations' warm starts of sweeps
// mode, which the image stores last. So it must leave bytes [40, kept_end) of the image as they
// were: the payload up to those warm starts, i.e. the whole payload of the direct-mode image.
template <class Solver>
constexpr std::size_t kept_end() {
  return pbrl::checkpoint_size<typename DirectOf<Solver>::type>() - pbrl::kCheckpointCommitSize;
}

template <class Solver>
void check_failed_step(const std::vector<std::uint8_t>& before, const std::vector<std::uint8_t>& after,
                       pbrl::Status st) {
  constexpr std::size_t from = pbrl::kCheckpointHeaderSize, to = kept_end<Solver>();
  check_same(after.data() + from, before.data() + from, to - from, "a failed step left the state unchanged",
             int(st));
}

}  // namespace fuzz
