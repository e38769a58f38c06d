// Round trip of the committed incentive-design model (model/incentive.json, float, .npy) and of
// its CSV copy (model/incentive_csv.json): the headers pbrl-codegen wrote at build time compile,
// the library accepts the model they hold (Problem::init, with a transition row at half the
// library's tolerance) and the settings (Solver::init), the solver steps, and every array is the
// source's, bit for bit.
#include "incentive_csv_pbrl.hpp"
#include "incentive_pbrl.hpp"
#include "roundtrip.hpp"

#include "doctest.h"

#include <type_traits>

TEST_CASE("incentive design in float: the library accepts the generated model and settings, the solver steps") {
  static incentive::Problem problem;
  REQUIRE(problem.init(incentive::data()) == pbrl::Status::ok);
  static incentive::Solver solver;
  REQUIRE(solver.init(problem, incentive::settings(), incentive::Problem::Params::Zero(),
                      incentive::Problem::Matrix1::Zero(), incentive::Problem::Matrix2::Zero()) == pbrl::Status::ok);
  incentive::Solver::Report report;
  for (int k = 0; k < 3; ++k) REQUIRE(solver.step(&report) == pbrl::Status::ok);
  CHECK(report.iteration == 2);
  CHECK(report.environment_steps == 3 * (2 * 1 + 2) * 4 * 5);  // (2T + 2) * B * H per step

  // The manifest's settings, all other fields at the library's defaults.
  pbrl::PbrlZeroSumSettings<float> expected;
  expected.gradient = pbrl::GradientMode::sampled;
  expected.sampling.horizon = 5;
  expected.sampling.batch = 4;
  expected.seed = 7u;
  expected.policy.parameterization = pbrl::Parameterization::softmax;
  expected.policy.logit_bound = 10.0f;
  expected.oracle = pbrl::OracleKind::policy_gradient;
  expected.oracle_policy.logit_bound = 10.0f;
  expected.inner_steps = 1;
  expected.oracle_step = expected.step_x = expected.step_pi = 0.1f;
  expected.lambda_start = expected.lambda_final = 4.0f;
  CHECK(digest(incentive::settings()) == digest(expected));
  CHECK(incentive::settings().step_pi == 0.1f);

  CHECK(incentive_model::kDiscount == 0.9f);
  CHECK(incentive_model::kRegularizer1Tau == 0.1f);
  CHECK(incentive_model::kIncentiveLower == -10.0f);
  CHECK(incentive_model::kIncentiveScale == pbrl::IncentiveDesign<float, 2, 2, 2>::Data{}.incentive_scale);
}

TEST_CASE("incentive design in float: every array is the .npy's, bit for bit, and the CSV copy's too") {
  // A generated model's arrays (`model`: which one) against the .npy files.
  auto check_arrays = [](const char* model, const auto& reward, const auto& transition, const auto& initial,
                         const auto& designer_reward, const auto& designer_transition, const auto& designer_cost) {
    CAPTURE(model);
    CHECK(same_bits(reward, "incentive_reward.npy"));
    CHECK(same_bits(transition, "incentive_transition.npy"));
    CHECK(same_bits(initial, "incentive_initial.npy"));
    CHECK(same_bits(designer_reward, "incentive_designer_reward.npy"));
    CHECK(same_bits(designer_transition, "incentive_designer_transition.npy"));
    CHECK(same_bits(designer_cost, "incentive_designer_cost.npy"));
  };
  check_arrays("incentive_model", incentive_model::kReward, incentive_model::kTransition, incentive_model::kInitial,
               incentive_model::kDesignerReward, incentive_model::kDesignerTransition, incentive_model::kDesignerCost);
  check_arrays("incentive_csv_model", incentive_csv_model::kReward, incentive_csv_model::kTransition,
               incentive_csv_model::kInitial, incentive_csv_model::kDesignerReward,
               incentive_csv_model::kDesignerTransition, incentive_csv_model::kDesignerCost);
  CHECK(digest(incentive_csv::settings()) == digest(incentive::settings()));
  // The CSV model's type is the .npy model's: the same sizes and scalar.
  static_assert(std::is_same<incentive_csv::Solver, incentive::Solver>::value, "one model, two file formats");
}
