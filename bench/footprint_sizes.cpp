// sizeof of the solvers (each is its whole workspace: the object holds every mutable array) and
// of the problem objects at the paper's configurations, as the target compiler lays them out.
// Each size becomes an uninitialized array `pbrl_sizeof__<name>` of that many bytes; the object
// is compiled for the target but never linked or run, and scripts/footprint reads the sizes
// with the target's `nm --print-size`. The configurations are those of
// examples/experiment_settings.hpp (template arguments as in the experiment programs).

#include "pbrl/pbrl.hpp"
#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/estimate/estimated_model.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/problems/rlhf.hpp"
#include "pbrl/problems/stackelberg.hpp"

#define PBRL_SIZEOF(name, ...) \
  extern "C" {                 \
  char pbrl_sizeof__##name[sizeof(__VA_ARGS__)]; \
  }

namespace sizes {

using pbrl::EvaluationMethod;

// Figure 1: Stackelberg game, |S| = 100, |A_l| = |A_f| = 5.
template <typename T> using Stackelberg = pbrl::Stackelberg<T, 100, 5, 5>;
// Figure 3: incentive design, |S| = 10, |A_1| = |A_2| = 5.
template <typename T> using Incentive = pbrl::IncentiveDesign<T, 10, 5, 5>;
// Tabular RLHF: |S| = 10, |A| = 4, segments of 10, a buffer of 750 pairs.
template <typename T> using Rlhf = pbrl::RlhfProblem<T, 10, 4, 10, 750>;
// The minimal link (bench/footprint_minimal.cpp).
template <typename T> using Minimal = pbrl::RewardShaping<T, 10, 4>;

#define PBRL_SIZEOF_BOTH(name, ...)                  \
  PBRL_SIZEOF(name##__float, __VA_ARGS__<float>)     \
  PBRL_SIZEOF(name##__double, __VA_ARGS__<double>)

template <typename T> using PbrlStackelberg = pbrl::Pbrl<Stackelberg<T>, EvaluationMethod::direct>;
template <typename T> using PbrlStackelbergSweeps = pbrl::Pbrl<Stackelberg<T>, EvaluationMethod::sweeps>;
template <typename T> using IndependentPg = pbrl::IndependentPolicyGradient<Stackelberg<T>>;
template <typename T> using PbrlZeroSumIncentive = pbrl::PbrlZeroSum<Incentive<T>>;
template <typename T> using PbrlStackelbergExact =
    pbrl::Pbrl<Stackelberg<T>, EvaluationMethod::direct, pbrl::GradientSources::exact>;
template <typename T> using PbrlZeroSumIncentiveExact =
    pbrl::PbrlZeroSum<Incentive<T>, EvaluationMethod::direct, pbrl::GradientSources::exact>;
template <typename T> using MetaGradientIncentive = pbrl::MetaGradient<Incentive<T>>;
template <typename T> using IndependentPgExact =
    pbrl::IndependentPolicyGradient<Stackelberg<T>, EvaluationMethod::direct, pbrl::GradientSources::exact>;
template <typename T> using MetaGradientIncentiveExact =
    pbrl::MetaGradient<Incentive<T>, EvaluationMethod::direct, pbrl::GradientSources::exact>;
template <typename T> using PbrlRlhf = pbrl::Pbrl<Rlhf<T>>;
template <typename T> using DrlhfRlhf = pbrl::Drlhf<Rlhf<T>>;
template <typename T> using DrlhfRlhfExact = pbrl::Drlhf<Rlhf<T>, EvaluationMethod::direct, pbrl::GradientSources::exact>;
template <typename T> using PbrlMinimal = pbrl::Pbrl<Minimal<T>>;
template <typename T> using RlhfBuffer = typename Rlhf<T>::Buffer;
// The estimated transition model of Figure 3's agents (estimate/): 250 joint rows of 10 states.
template <typename T> using EstimateIncentive = pbrl::TransitionEstimate<T, 10, 250>;
template <typename T> using EstimateIncentiveWhole = pbrl::TransitionEstimate<T, 10, 250, std::uint16_t>;
template <typename T> using EstimatedIncentive = pbrl::EstimatedModel<Incentive<T>>;

PBRL_SIZEOF_BOTH(solver_pbrl_stackelberg100_direct, PbrlStackelberg)
PBRL_SIZEOF_BOTH(solver_pbrl_stackelberg100_sweeps, PbrlStackelbergSweeps)
PBRL_SIZEOF_BOTH(solver_independent_pg_stackelberg100, IndependentPg)
PBRL_SIZEOF_BOTH(solver_independent_pg_stackelberg100_exact, IndependentPgExact)
PBRL_SIZEOF_BOTH(solver_pbrl_zero_sum_incentive10, PbrlZeroSumIncentive)
PBRL_SIZEOF_BOTH(solver_pbrl_stackelberg100_exact, PbrlStackelbergExact)
PBRL_SIZEOF_BOTH(solver_pbrl_zero_sum_incentive10_exact, PbrlZeroSumIncentiveExact)
PBRL_SIZEOF_BOTH(solver_meta_gradient_incentive10, MetaGradientIncentive)
PBRL_SIZEOF_BOTH(solver_meta_gradient_incentive10_exact, MetaGradientIncentiveExact)
PBRL_SIZEOF_BOTH(solver_pbrl_rlhf10, PbrlRlhf)
PBRL_SIZEOF_BOTH(solver_drlhf_rlhf10, DrlhfRlhf)
PBRL_SIZEOF_BOTH(solver_drlhf_rlhf10_exact, DrlhfRlhfExact)
PBRL_SIZEOF_BOTH(solver_pbrl_minimal, PbrlMinimal)
PBRL_SIZEOF_BOTH(problem_stackelberg100, Stackelberg)
PBRL_SIZEOF_BOTH(problem_incentive10, Incentive)
PBRL_SIZEOF_BOTH(problem_rlhf10, Rlhf)
PBRL_SIZEOF_BOTH(problem_minimal, Minimal)
PBRL_SIZEOF_BOTH(buffer_rlhf10, RlhfBuffer)
PBRL_SIZEOF_BOTH(estimate_incentive10, EstimateIncentive)
PBRL_SIZEOF_BOTH(estimate_incentive10_uint16, EstimateIncentiveWhole)
PBRL_SIZEOF_BOTH(estimated_model_incentive10, EstimatedIncentive)

}  // namespace sizes
