#pragma once
// The core in one include: models, policies, evaluation, oracles, penalties, the solvers Pbrl and
// PbrlZeroSum with everything they use (exact and sampled), the bilevel answer and checkpoints.
// Problems (pbrl/problems/*.hpp) and baselines (pbrl/baselines/*.hpp) are not included: whoever
// uses one includes it by name, so a firmware build compiles only the problem it runs.
#include "pbrl/core/config.hpp"
#include "pbrl/core/status.hpp"
#include "pbrl/core/rng.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/model/regularizer.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/game.hpp"
#include "pbrl/model/problem.hpp"
#include "pbrl/oracle/pmd.hpp"
#include "pbrl/oracle/policy_gradient.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/oracle/optimality_gap.hpp"
#include "pbrl/penalty/value.hpp"
#include "pbrl/penalty/bellman.hpp"
#include "pbrl/penalty/nikaido_isoda.hpp"
#include "pbrl/sampling/rollouts.hpp"
#include "pbrl/sampling/detail/estimators.hpp"
#include "pbrl/sampling/detail/game_estimators.hpp"
#include "pbrl/oracle/bilevel_value.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"
#include "pbrl/solver/checkpoint.hpp"
