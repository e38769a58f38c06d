#pragma once
// Settings that every solver and baseline shares, with their enums and their validation, in one
// place: how the lower level's gradients are obtained (exact or sampled), and, for the penalty
// solvers (Pbrl, PbrlZeroSum), the oracle and the penalty schedule (fixed ramp or a lower-level
// gap tolerance; solver/penalty_schedule.hpp says how the tolerance mode adapts).
// Each struct lists its fields once, in visit(), for the checkpoint's settings digest.

#include "pbrl/policy.hpp"
#include "pbrl/sampling/estimators.hpp"
#include "pbrl/status.hpp"

#include <cmath>
#include <cstdint>

namespace pbrl {

enum class PenaltyKind : unsigned char { value, bellman };
enum class OracleKind : unsigned char { policy_mirror_descent, policy_gradient, soft_value_iteration };
// exact: every gradient from the model (policy evaluations). sampled: the lower level's gradients
// from trajectories of the generative model (sampling/estimators.hpp).
enum class GradientMode : unsigned char { exact, sampled };

inline bool is_oracle_kind(OracleKind k) {
  return k == OracleKind::policy_mirror_descent || k == OracleKind::policy_gradient ||
         k == OracleKind::soft_value_iteration;
}

// Largest inner step count accepted (inner_steps, inner_steps_max): keeps the work of one step()
// bounded and known.
constexpr int kMaxInnerSteps = 100000;

// Exact or sampled lower-level gradients; the random stream of sampled mode.
struct GradientSettings {
  GradientMode gradient = GradientMode::exact;  // sampled: Monte-Carlo lower-level gradients
  SamplingSettings sampling{};                  // sampled mode: horizon H <= kMaxHorizon, batch B
  std::uint32_t seed = 1u;                      // sampled mode: init() seeds the solver's Rng with it

  template <class Visitor>
  void visit(Visitor& v) const {
    v(gradient, sampling.horizon, sampling.batch, sampling.common_random_numbers, seed);
  }
};

inline Status validate(const GradientSettings& s) {
  if (s.gradient != GradientMode::exact && s.gradient != GradientMode::sampled) return Status::bad_setting;
  if (s.gradient == GradientMode::sampled) return validate_sampling<kMaxHorizon>(s.sampling);
  return Status::ok;
}

// The settings of a penalty solver (Pbrl, PbrlZeroSum) but the step size of the lower-level
// variables and the penalty kind, which each solver adds.
//
// Penalty constant lambda_k, two modes:
//   fixed (gap_tolerance = 0): a linear ramp from penalty_start to penalty_final over
//     penalty_ramp iterations, then penalty_final; the steps and T are as given.
//   tolerance (gap_tolerance = epsilon > 0): lambda starts at penalty_start and grows by
//     penalty_growth, up to penalty_max, while the measured lower-level gap stays above epsilon and
//     has stopped falling (over penalty_patience steps, by less than the factor penalty_stall);
//     the steps shrink as lambda grows, alpha_k = 1 / (1/alpha + lambda_k * penalty_smoothness)
//     (the paper's alpha <= 1/(L_f + lambda L_p), with L_f read as 1/alpha); the oracle runs at
//     least inner_steps and at most inner_steps_max steps, until its own gap is below
//     oracle_gap_fraction * epsilon. penalty_final and penalty_ramp are not used.
template <typename Scalar>
struct PenaltySolverSettings : GradientSettings {
  PolicySet<Scalar> policy{};          // parameterization and set of the lower-level policies
  OracleKind oracle = OracleKind::policy_mirror_descent;
  PolicySet<Scalar> oracle_policy{};   // policy-gradient oracle: projected (direct) or softmax
  int inner_steps = 10;                // T (tolerance mode: the least number of oracle steps)
  Scalar oracle_step = Scalar(1);      // eta of PMD or of the policy-gradient oracle
  Scalar step_x = Scalar(0.1);         // alpha for x
  Scalar penalty_start = Scalar(1);    // lambda at iteration 0
  Scalar penalty_final = Scalar(1);    // fixed mode: lambda once the ramp is over
  int penalty_ramp = 0;                // fixed mode: iterations of the linear ramp (0: lambda = penalty_final)
  Scalar gap_tolerance = Scalar(0);    // epsilon > 0: tolerance mode; 0: fixed mode
  Scalar penalty_max = Scalar(1000);   // tolerance mode: lambda_max
  Scalar penalty_growth = Scalar(2);   // tolerance mode: lambda <- growth * lambda (> 1)
  int penalty_patience = 20;           // tolerance mode: steps above epsilon before lambda grows (>= 1)
  Scalar penalty_stall = Scalar(0.99);  // tolerance mode: ... and only if the gap fell by less than this
                                        // factor over them, in [0, 1] (0: whenever above epsilon)
  Scalar penalty_smoothness = Scalar(0.01);  // tolerance mode: L_p in the step scaling (>= 0); the
                                             // theorem's L_p is problem-dependent: 0.01 measured best
                                             // of 1, 0.1, 0.01 on the paper's three experiments (README)
  int inner_steps_max = 100;           // tolerance mode: T_max >= inner_steps
  Scalar oracle_gap_fraction = Scalar(0.1);  // tolerance mode: the oracle's target, in (0, 1]

  bool tolerance_mode() const { return gap_tolerance > Scalar(0); }

  template <class Visitor>
  void visit(Visitor& v) const {
    GradientSettings::visit(v);
    v(policy.parameterization, policy.floor, policy.logit_bound, oracle, oracle_policy.parameterization,
      oracle_policy.floor, oracle_policy.logit_bound, inner_steps, oracle_step, step_x, penalty_start,
      penalty_final, penalty_ramp, gap_tolerance, penalty_max, penalty_growth, penalty_patience, penalty_stall,
      penalty_smoothness, inner_steps_max, oracle_gap_fraction);
  }
};

// Everything but the policy sets, which the solver checks against its action counts.
template <typename Scalar>
Status validate(const PenaltySolverSettings<Scalar>& s) {
  auto positive = [](Scalar v) { return std::isfinite(v) && v > Scalar(0); };
  if (!is_oracle_kind(s.oracle)) return Status::bad_setting;
  if (s.inner_steps < 0 || s.inner_steps > kMaxInnerSteps || s.penalty_ramp < 0) return Status::bad_setting;
  if (!positive(s.oracle_step) || !positive(s.step_x)) return Status::bad_step_size;
  if (!std::isfinite(s.penalty_start) || !std::isfinite(s.penalty_final) || s.penalty_start < Scalar(0) ||
      s.penalty_final < Scalar(0))
    return Status::bad_setting;
  if (!std::isfinite(s.gap_tolerance) || s.gap_tolerance < Scalar(0)) return Status::bad_setting;
  if (s.tolerance_mode()) {
    if (!(s.penalty_start > Scalar(0)) || !std::isfinite(s.penalty_max) || s.penalty_max < s.penalty_start)
      return Status::bad_setting;
    if (!std::isfinite(s.penalty_growth) || !(s.penalty_growth > Scalar(1))) return Status::bad_setting;
    if (s.penalty_patience < 1) return Status::bad_setting;
    if (!(s.penalty_stall >= Scalar(0)) || !(s.penalty_stall <= Scalar(1))) return Status::bad_setting;
    if (!std::isfinite(s.penalty_smoothness) || s.penalty_smoothness < Scalar(0)) return Status::bad_setting;
    if (s.inner_steps_max < s.inner_steps || s.inner_steps_max < 1 || s.inner_steps_max > kMaxInnerSteps)
      return Status::bad_setting;
    if (!(s.oracle_gap_fraction > Scalar(0)) || s.oracle_gap_fraction > Scalar(1)) return Status::bad_setting;
  }
  if (Status st = validate(static_cast<const GradientSettings&>(s)); st != Status::ok) return st;
  if (s.gradient == GradientMode::sampled && s.oracle != OracleKind::policy_gradient) return Status::bad_setting;
  return Status::ok;
}

}  // namespace pbrl
