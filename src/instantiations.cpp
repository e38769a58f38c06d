// Instantiates the whole template library for both scalars under the library's strict flags
// (-Wall -Wextra -Werror -fno-exceptions -fno-rtti), so a header that would warn, throw or need
// RTTI fails the library build itself rather than a user's firmware build.
#include "pbrl/pbrl.hpp"

namespace pbrl {

template class Pbrl<RewardShaping<float, 4, 3>, EvaluationMethod::direct>;
template class Pbrl<RewardShaping<float, 4, 3>, EvaluationMethod::sweeps>;
template class Pbrl<RewardShaping<double, 4, 3>, EvaluationMethod::direct>;
template class Pbrl<RewardShaping<double, 4, 3>, EvaluationMethod::sweeps>;
template class RewardShaping<float, 4, 3>;
template class RewardShaping<double, 4, 3>;

}  // namespace pbrl
