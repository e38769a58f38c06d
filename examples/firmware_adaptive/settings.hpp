#pragma once
// The settings the firmware's device solver and the host's reference solves share
// (generate_references.cpp writes the references with them; main.cpp adapts with them), so that the
// device and the references solve the same problem the same way: exact gradients in tolerance mode,
// as examples/adaptation's incentive designer but for step_x (below; docs/adaptation.md).

#include <pbrl/problems/incentive_design.hpp>
#include <pbrl/solver/pbrl_zero_sum.hpp>

namespace adaptive {

template <typename Scalar, int S, int A1, int A2>
using Problem = pbrl::IncentiveDesign<Scalar, S, A1, A2>;
// Exact gradients only: the solver links no rollout code.
template <class P>
using Solver = pbrl::PbrlZeroSum<P, pbrl::EvaluationMethod::direct, pbrl::GradientSources::exact>;

// x's learning rate: x's gradient is at most c_x sigmoid'(x) <= c_x / 4 per entry, and the example's
// c_x is 1 (adaptive_model.hpp). step_x * lambda_start = 0.75: a tolerance schedule that shortens
// its first steps only when that product is above 0.75 runs these at full length.
constexpr double kStepX = 0.1875;

template <class SolverT>
typename SolverT::Settings solver_settings() {
  using Scalar = typename SolverT::Scalar;
  typename SolverT::Settings s;
  s.gradient = pbrl::GradientMode::exact;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = Scalar(10);
  s.oracle = pbrl::OracleKind::policy_mirror_descent;
  s.oracle_step = Scalar(1);
  s.step_pi = Scalar(0.1);          // the paper's learning rate
  s.step_x = Scalar(kStepX);
  s.lambda_start = Scalar(4);       // the paper's PBRL-NI lambda
  s.gap_tolerance = Scalar(0.01);   // tolerance mode
  s.penalty_smoothness = Scalar(0.01);
  s.stationarity_tolerance = Scalar(0.001);
  // The euclidean lower-level step, with which the steps above and the references were measured
  // (examples/adaptation keeps it too: docs/adaptation.md).
  s.lower_geometry = pbrl::LowerGeometry::euclidean;
  return s;
}

}  // namespace adaptive
