#pragma once
// Which penalty p a solver or an estimator uses: the value penalty or the Bellman penalty.

#include "pbrl/core/detail/enum_names.hpp"

namespace pbrl {

/// The penalty p: the value penalty or the Bellman penalty (penalty/value.hpp,
/// penalty/bellman.hpp; sampled: sampled_penalty, sampling/detail/estimators.hpp).
enum class PenaltyKind : unsigned char { value, bellman };
/// PenaltyKind's enumerator names, as settings files spell them.
constexpr EnumNames<PenaltyKind, 2> enum_names(PenaltyKind) { return {{"value", "bellman"}}; }
static_assert(enum_names(PenaltyKind{}).size == int(PenaltyKind::bellman) + 1, "a name per enumerator");

}  // namespace pbrl
