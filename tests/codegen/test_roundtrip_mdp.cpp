// Round trip of the committed single-follower models in double: Stackelberg (model/stackelberg.json,
// the follower KL-regularized to a reference, Bellman penalty, soft value iteration oracle) and
// reward shaping (model/shaping.json). As test_roundtrip_game.cpp: the library accepts the
// generated model and settings, the solver steps, every array is the .npy's bit for bit.
#include "roundtrip.hpp"
#include "shaping_pbrl.hpp"
#include "stackelberg_pbrl.hpp"

#include "doctest.h"

namespace {

// init(data()), init(settings()) from x = 0 and uniform logits, three steps.
template <class Problem, class Solver>
void runs(Problem& problem, Solver& solver, const typename Problem::Data& data,
          const typename Solver::Settings& settings) {
  REQUIRE(problem.init(data) == pbrl::Status::ok);
  REQUIRE(solver.init(problem, settings, Problem::Params::Zero(), Solver::Matrix::Zero()) == pbrl::Status::ok);
  typename Solver::Report report;
  for (int k = 0; k < 3; ++k) REQUIRE(solver.step(&report) == pbrl::Status::ok);
  CHECK(report.iteration == 2);
}

}  // namespace

TEST_CASE("Stackelberg in double: the library accepts the generated model and settings, the solver steps") {
  static stackelberg::Problem problem;
  static stackelberg::Solver solver;
  runs(problem, solver, stackelberg::data(), stackelberg::settings());
  pbrl::PbrlSettings<double> expected;
  expected.penalty_kind = pbrl::PenaltyKind::bellman;
  expected.oracle = pbrl::OracleKind::soft_value_iteration;
  expected.inner_steps = 3;
  expected.step_x = expected.step_y = 0.05;
  expected.lambda_final = 2.5;
  expected.lambda_ramp = 10;
  CHECK(digest(stackelberg::settings()) == digest(expected));
  CHECK(stackelberg_model::kDiscount == 0.95);
  CHECK(stackelberg_model::kLogitBound == 5.0);
  CHECK(stackelberg::data().follower.kind == pbrl::RegularizerKind::kl_reference);
  CHECK(stackelberg::data().leader.kind == pbrl::RegularizerKind::entropy);
}

TEST_CASE("Stackelberg in double: every array is the .npy's, bit for bit") {
  CHECK(same_bits(stackelberg_model::kLeaderReward, "stackelberg_leader_reward.npy"));
  CHECK(same_bits(stackelberg_model::kFollowerReward, "stackelberg_follower_reward.npy"));
  CHECK(same_bits(stackelberg_model::kTransition, "stackelberg_transition.npy"));
  CHECK(same_bits(stackelberg_model::kInitial, "stackelberg_initial.npy"));
  CHECK(same_bits(stackelberg_model::kFollowerReference, "stackelberg_follower_reference.npy"));
}

TEST_CASE("reward shaping in double: accepted, steps, arrays bit for bit") {
  static shaping::Problem problem;
  static shaping::Solver solver;
  runs(problem, solver, shaping::data(), shaping::settings());
  pbrl::PbrlSettings<double> expected;
  expected.lambda_final = 5.0;
  expected.inner_steps = 10;
  CHECK(digest(shaping::settings()) == digest(expected));
  CHECK(shaping_model::kShapingLower == -1.0);
  CHECK(shaping_model::kUpperTau == 0.0);
  CHECK(same_bits(shaping_model::kReward, "shaping_reward.npy"));
  CHECK(same_bits(shaping_model::kTransition, "shaping_transition.npy"));
  CHECK(same_bits(shaping_model::kInitial, "shaping_initial.npy"));
}
