// Instantiates the whole template library for both scalars under the library's strict flags
// (-Wall -Wextra -Werror -fno-exceptions -fno-rtti), so a header that would warn, throw or need
// RTTI fails the library build itself rather than a user's firmware build.
#include "pbrl/pbrl.hpp"
#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/problems/rlhf.hpp"
#include "pbrl/problems/stackelberg.hpp"

namespace pbrl {

template class Pbrl<RewardShaping<float, 4, 3>, EvaluationMethod::direct>;
template class Pbrl<RewardShaping<float, 4, 3>, EvaluationMethod::sweeps>;
template class Pbrl<RewardShaping<double, 4, 3>, EvaluationMethod::direct>;
template class Pbrl<RewardShaping<double, 4, 3>, EvaluationMethod::sweeps>;
template class RewardShaping<float, 4, 3>;
template class RewardShaping<double, 4, 3>;

template class Stackelberg<float, 4, 3, 2>;
template class Stackelberg<double, 4, 3, 2>;
template class Pbrl<Stackelberg<float, 4, 3, 2>, EvaluationMethod::direct>;
template class Pbrl<Stackelberg<double, 4, 3, 2>, EvaluationMethod::sweeps>;
template class IndependentPolicyGradient<Stackelberg<float, 4, 3, 2>, EvaluationMethod::direct>;
template class IndependentPolicyGradient<Stackelberg<double, 4, 3, 2>, EvaluationMethod::sweeps>;
template class IndependentPolicyGradient<Stackelberg<float, 4, 3, 2>, EvaluationMethod::direct, GradientSources::exact>;

template class IncentiveDesign<float, 4, 2, 3>;
template class IncentiveDesign<double, 4, 2, 3>;
template class PbrlZeroSum<IncentiveDesign<float, 4, 2, 3>, EvaluationMethod::direct>;
template class PbrlZeroSum<IncentiveDesign<float, 4, 2, 3>, EvaluationMethod::sweeps>;
template class PbrlZeroSum<IncentiveDesign<double, 4, 2, 3>, EvaluationMethod::direct>;
template class PbrlZeroSum<IncentiveDesign<double, 4, 2, 3>, EvaluationMethod::sweeps>;
template class PbrlZeroSum<IncentiveDesign<float, 4, 2, 3>, EvaluationMethod::direct, GradientSources::exact>;
template class Pbrl<Stackelberg<float, 4, 3, 2>, EvaluationMethod::direct, GradientSources::exact>;
template class Pbrl<RewardShaping<double, 4, 3>, EvaluationMethod::sweeps, GradientSources::exact>;
template class MetaGradient<IncentiveDesign<float, 4, 2, 3>, EvaluationMethod::direct>;
template class MetaGradient<IncentiveDesign<double, 4, 2, 3>, EvaluationMethod::sweeps>;
template class MetaGradient<IncentiveDesign<float, 4, 2, 3>, EvaluationMethod::direct, GradientSources::exact>;

template class RlhfProblem<float, 4, 3, 4, 16>;
template class RlhfProblem<double, 4, 3, 4, 16>;
template class PreferenceBuffer<4, 3, 4, 16>;
template class SegmentSampler<float, 4, 3>;
template class SegmentSampler<double, 4, 3>;
template class RlhfOracle<float, 4, 3>;
template class RlhfOracle<double, 4, 3>;
template class Pbrl<RlhfProblem<float, 4, 3, 4, 16>, EvaluationMethod::direct>;
template class Pbrl<RlhfProblem<double, 4, 3, 4, 16>, EvaluationMethod::sweeps>;
template class Drlhf<RlhfProblem<float, 4, 3, 4, 16>, EvaluationMethod::direct>;
template class Drlhf<RlhfProblem<double, 4, 3, 4, 16>, EvaluationMethod::sweeps>;
template class Drlhf<RlhfProblem<double, 4, 3, 4, 16>, EvaluationMethod::sweeps, GradientSources::exact>;

// Checkpoints of both solvers, both scalars and both evaluation methods.
#define PBRL_INSTANTIATE_CHECKPOINT(...)                                                               \
  template Status save_checkpoint(const __VA_ARGS__&, unsigned char*, std::size_t);                  \
  template Status restore_checkpoint(__VA_ARGS__&, const unsigned char*, std::size_t);               \
  template int checkpoint_slot_to_write<__VA_ARGS__>(const unsigned char*, const unsigned char*, std::size_t); \
  template Status restore_newest_checkpoint(__VA_ARGS__&, const unsigned char*, const unsigned char*, std::size_t);
PBRL_INSTANTIATE_CHECKPOINT(Pbrl<RewardShaping<float, 4, 3>, EvaluationMethod::direct>)
PBRL_INSTANTIATE_CHECKPOINT(Pbrl<RewardShaping<double, 4, 3>, EvaluationMethod::sweeps>)
PBRL_INSTANTIATE_CHECKPOINT(Pbrl<Stackelberg<float, 4, 3, 2>, EvaluationMethod::direct>)
PBRL_INSTANTIATE_CHECKPOINT(PbrlZeroSum<IncentiveDesign<float, 4, 2, 3>, EvaluationMethod::direct>)
PBRL_INSTANTIATE_CHECKPOINT(PbrlZeroSum<IncentiveDesign<double, 4, 2, 3>, EvaluationMethod::sweeps>)
PBRL_INSTANTIATE_CHECKPOINT(PbrlZeroSum<IncentiveDesign<float, 4, 2, 3>, EvaluationMethod::direct, GradientSources::exact>)
#undef PBRL_INSTANTIATE_CHECKPOINT

// The model and policy-set checks at runtime sizes (host tools call them) and the enum names.
#define PBRL_INSTANTIATE_RUNTIME_CHECKS(Scalar)                                 \
  template Status detail::check_transition_rows(const Scalar*, int, int);     \
  template Status detail::check_initial(const Scalar*, int);                  \
  template Status detail::check_tau(Scalar);                                  \
  template Status detail::check_reference_rows(const Scalar*, int, int);      \
  template Status validate(const PolicySet<Scalar>&, int);
PBRL_INSTANTIATE_RUNTIME_CHECKS(float)
PBRL_INSTANTIATE_RUNTIME_CHECKS(double)
#undef PBRL_INSTANTIATE_RUNTIME_CHECKS
#define PBRL_INSTANTIATE_ENUM_NAMES(E)       \
  template const char* enum_name(E);         \
  template bool enum_from_name(const char*, E&);
PBRL_INSTANTIATE_ENUM_NAMES(RegularizerKind)
PBRL_INSTANTIATE_ENUM_NAMES(Parameterization)
PBRL_INSTANTIATE_ENUM_NAMES(PenaltyKind)
PBRL_INSTANTIATE_ENUM_NAMES(OracleKind)
PBRL_INSTANTIATE_ENUM_NAMES(GradientMode)
#undef PBRL_INSTANTIATE_ENUM_NAMES

}  // namespace pbrl
