#pragma once
// The exact-mode oracle of the penalty solvers (Pbrl, and each player of PbrlZeroSum), once:
// the best-response steps on one MDP from the warm start (log_pi, pi, value), in place.
//   PMD and policy gradient: at least min_steps and at most max_steps steps; after step i (i + 1
//     >= min_steps) it stops if the policy that step started from had a certified gap
//     (optimality_gap_bound) at most target. Each step evaluates that policy anyway, so the check
//     costs no evaluation; PMD never loses value from step to step, so the policy it returns is
//     at least as good as the certified one. target = 0: exactly max_steps steps.
//   soft value iteration: max_steps sweeps, or fewer once the sweep change is at most
//     target (1 - gamma)^2 / 2 (then the soft-greedy policy's gap is at most target).
// The caller certifies the policy it keeps from its own evaluation of it; `result` says how many
// steps were taken and whether the oracle stopped on its target (running to max_steps is ok too).

#include "pbrl/oracle/optimality_gap.hpp"
#include "pbrl/oracle/pmd.hpp"
#include "pbrl/oracle/policy_gradient.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/solver/settings.hpp"  // OracleKind

#include <cstdint>

namespace pbrl {

// pi-hat's initial value from the policy of y: floored, renormalized, projected for the
// projected policy-gradient oracle.
template <typename Scalar, int S, int A>
void initial_oracle_policy(const PolicySet<Scalar>& param, OracleKind oracle, const PolicySet<Scalar>& oracle_set,
                           const StateActionMatrix<Scalar, S, A>& y, StateActionMatrix<Scalar, S, A>& pi,
                           StateActionMatrix<Scalar, S, A>& log_pi) {
  policy_from_parameters<Scalar, S, A>(param.parameterization, y, pi);
  if (oracle == OracleKind::policy_gradient && oracle_set.parameterization == Parameterization::direct)
    project_policy_set<Scalar, S, A>(oracle_set, pi);
  pi = pi.cwiseMax(log_floor<Scalar>());
  for (int s = 0; s < S; ++s) pi.row(s) /= pi.row(s).sum();
  log_pi = pi.array().log().matrix();
}

// What one run_oracle call did.
struct OracleResult {
  std::int64_t steps = 0;  // oracle steps taken (soft value iteration: sweeps)
  bool converged = false;  // target > 0 and the oracle stopped on it; false: it ran to max_steps
};

// One run_oracle call, resumable step by step (a sliced step runs one oracle step per slice).
struct OracleRun {
  OracleResult result{};
  bool done = false;  // the oracle has finished (and its policy passed the final check)
};

// What an oracle run does: kind, set (the policy-gradient oracle's) and eta (PMD's or policy
// gradient's step) as in the settings; at least min_steps and at most max_steps steps; target > 0
// stops it on a certified gap (above), 0 runs max_steps.
template <typename Scalar>
struct OracleSpec {
  OracleKind kind;
  const PolicySet<Scalar>& set;
  Scalar eta;
  int min_steps;
  int max_steps;
  Scalar target;
};

// The oracle's iterate, in place: its evaluation (the warm start of the next), the policy and its
// logs, and soft value iteration's values.
template <typename Scalar, int S, int A>
struct OracleIterate {
  Evaluation<Scalar, S, A>& eval;
  StateActionMatrix<Scalar, S, A>& log_pi;
  StateActionMatrix<Scalar, S, A>& pi;
  StateVector<Scalar, S>& value;
};

namespace detail {
// oracle_step() below. CheckWarmStart = false leaves out PMD's and policy gradient's O(S*A) checks
// of the warm start (log_pi, pi): the solvers' pi-hat, which every run checks on its way out (the
// end of this function), and init() and restore_checkpoint() check on the way in; within a run,
// the previous step's output, which those steps form valid (normalize_policy_row, the projection).
template <bool CheckWarmStart, typename Scalar, int S, int A, EvaluationMethod M>
Status oracle_step(const OracleSpec<Scalar>& spec, const Mdp<Scalar, S, A>& mdp, EvaluationWorkspace<Scalar, S, M>& ws,
                   StateActionMatrix<Scalar, S, A>& scratch, const OracleIterate<Scalar, S, A>& it, OracleRun& run) {
  if (spec.max_steps == 0) {
    run.done = true;
    return Status::ok;
  }
  OracleResult& result = run.result;
  const auto i = static_cast<int>(result.steps);  // PMD and policy gradient: one step per call
  auto certified = [&] {
    return spec.target > Scalar(0) && i + 1 >= spec.min_steps && optimality_gap_bound(mdp, it.eval) <= spec.target;
  };
  switch (spec.kind) {
    case OracleKind::policy_mirror_descent:
      if (Status st = pmd_step<CheckWarmStart>(mdp, spec.eta, ws, it.eval, {it.log_pi, it.pi}); st != Status::ok)
        return st;
      ++result.steps;
      result.converged = certified();
      run.done = result.converged || result.steps >= spec.max_steps;
      break;
    case OracleKind::policy_gradient:
      if (Status st =
              policy_gradient_step<CheckWarmStart>(mdp, spec.set, spec.eta, ws, it.eval, scratch, {it.log_pi, it.pi});
          st != Status::ok)
        return st;
      ++result.steps;
      result.converged = certified();
      run.done = result.converged || result.steps >= spec.max_steps;
      break;
    case OracleKind::soft_value_iteration: {
      const Scalar change = spec.target * (Scalar(1) - mdp.discount) * (Scalar(1) - mdp.discount) / Scalar(2);
      SoftValueIterationResult<Scalar> sweeps;
      if (Status st = soft_value_iteration(mdp, spec.max_steps, change, it.value, scratch, {it.log_pi, it.pi}, &sweeps);
          st != Status::ok)
        return st;
      result.steps = sweeps.iterations;
      result.converged = spec.target > Scalar(0) && sweeps.converged;
      run.done = true;
      break;
    }
    default:
      return Status::bad_setting;
  }
  if (run.done && (!pbrl::all_finite(it.log_pi) || validate_policy(it.pi) != Status::ok))
    return Status::numerical_failure;
  return Status::ok;
}
}  // namespace detail

// The next step of an oracle run on mdp, in place on the iterate; scratch is the oracle's
// workspace. PMD and policy gradient take one step; soft value iteration runs all its sweeps as
// its one step. run.done once the run is over; then the policy is checked (the oracles may return
// ok with a non-finite policy on overflow: never let one through).
template <typename Scalar, int S, int A, EvaluationMethod M>
Status oracle_step(const OracleSpec<Scalar>& spec, const Mdp<Scalar, S, A>& mdp, EvaluationWorkspace<Scalar, S, M>& ws,
                   StateActionMatrix<Scalar, S, A>& scratch, const OracleIterate<Scalar, S, A>& it, OracleRun& run) {
  return detail::oracle_step<true>(spec, mdp, ws, scratch, it, run);
}

// The whole oracle run, in place on the iterate.
template <typename Scalar, int S, int A, EvaluationMethod M>
Status run_oracle(const OracleSpec<Scalar>& spec, const Mdp<Scalar, S, A>& mdp, EvaluationWorkspace<Scalar, S, M>& ws,
                  StateActionMatrix<Scalar, S, A>& scratch, const OracleIterate<Scalar, S, A>& it,
                  OracleResult& result) {
  OracleRun run;
  while (!run.done)
    if (Status st = oracle_step(spec, mdp, ws, scratch, it, run); st != Status::ok) return st;
  result = run.result;
  return Status::ok;
}

}  // namespace pbrl
