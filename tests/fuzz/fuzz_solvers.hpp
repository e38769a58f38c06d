#pragma once
// What the solver harnesses share: which part of a checkpoint image a failed step must leave
// unchanged.

#include "fuzz_input.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

namespace fuzz {

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
