// The minimal link of scripts/footprint: what a firmware pays for pbrl when it init()s and
// step()s one small solver and nothing else. The model is a compile-time constant (flash), the
// solver a static object (RAM: sizeof(Solver) bytes of .bss), exactly as the firmware
// sketch of README.md. No stdio, so the image holds the library, the startup code and libc/libm only.
//
// scripts/footprint reads the image's text/data/bss with the target's `size`, and the worst stack
// path from Solver::step() from this file's -fcallgraph-info=su output (bench/CMakeLists.txt).

#include "pbrl/pbrl.hpp"
#include "pbrl/problems/reward_shaping.hpp"

#include <cstdint>

namespace {

constexpr int S = 10, A = 4;  // the size of the tabular RLHF experiment's MDP
using Problem = pbrl::RewardShaping<float, S, A>;
using Solver = pbrl::Pbrl<Problem>;

struct ModelArrays {
  float reward[S * A];
  float transition[S * A * S];
  float initial[S];
};

// A fixed random instance drawn at compile time, so it lands in .rodata like a model in flash.
constexpr ModelArrays make_model() {
  ModelArrays m{};
  std::uint32_t state = 2463534242u;  // xorshift32
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return float(state >> 8) / float(1u << 24);
  };
  for (int i = 0; i < S * A; ++i) {
    const float u = next();
    m.reward[i] = u < 0.7f ? 0.0f : u;  // sparse, as the paper's instances
  }
  for (int row = 0; row < S * A; ++row) {
    float sum = 0;
    for (int j = 0; j < S; ++j) sum += (m.transition[row * S + j] = next());
    for (int j = 0; j < S; ++j) m.transition[row * S + j] /= sum;
  }
  for (int s = 0; s < S; ++s) m.initial[s] = 1.0f / S;
  return m;
}

constexpr ModelArrays kModel = make_model();

Problem problem;
Solver solver;
const Problem::Params kX0 = Problem::Params::Zero();
const pbrl::StateActionMatrix<float, S, A> kY0 = pbrl::StateActionMatrix<float, S, A>::Zero();

}  // namespace

int main() {
  Problem::Data data;
  data.reward = kModel.reward;
  data.transition = kModel.transition;
  data.initial = kModel.initial;
  data.discount = 0.9f;
  data.lower.tau = 0.1f;
  if (problem.init(data) != pbrl::Status::ok) return 1;
  pbrl::PbrlSettings<float> settings;  // value penalty, softmax policy, PMD oracle, T = 10
  settings.lambda_final = 5.0f;
  if (solver.init(problem, settings, kX0, kY0) != pbrl::Status::ok) return 2;
  for (int k = 0; k < 10; ++k)
    if (solver.step() != pbrl::Status::ok) return 3;
  return solver.x().allFinite() ? 0 : 4;
}
