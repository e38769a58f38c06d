// libFuzzer harness: model data, Problem::init, solver init() and step() on values decoded from
// the input: rewards, transitions, initial distribution, discount, regularizers (tau, kind, KL
// reference), boxes, the initial iterates, and every settings field of Pbrl and PbrlZeroSum
// (penalty, policy sets, oracle, gradient mode, sampling, every schedule field, the sweep
// settings). Scalars are any floats: NaN, infinities, negatives, subnormals, huge values, and
// ordinary numbers; distributions come either as raw scalars or normalized from byte weights, so
// that inputs reach both the refusals and the math.
//
// Properties (abort() on violation):
//   - a refused Problem::init or solver init() leaves the object byte-identical (memcmp; the
//     objects live across executions, so "before" is usually an earlier input's state);
//   - after an accepted init, up to three steps: each returns a status or ok with finite
//     results: x in the problem's box, y in its policy set, every policy on the simplex
//     (validate_policy: entries >= 0, rows summing to 1 within 64 * eps * A), the report's numbers
//     finite, the iteration count up by one; a failed step leaves the saved state unchanged
//     but for the sweeps' evaluation warm starts, which its contract leaves out (fuzz_solvers.hpp);
//   - the state after the steps saves and restores into a solver set up alike.
//
// Work cap: the library accepts batch up to 2^20, horizon up to 64 and 100,000 inner steps, which
// makes one step take seconds. Decoded values that validation would accept are clamped here to
// batch <= 8, horizon <= 8, inner steps <= 8, max_sweeps <= 50, so that an execution stays under
// about 10 ms; values validation must refuse are passed through unchanged. (A separate item of
// issue 10 adds compile-time work caps to the library.)
// PBRL_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (tests/fuzz/corpus/fuzz_model) and exits.

#include "fuzz_solvers.hpp"
#include "fuzz_support.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using pbrl::EvaluationMethod;
using pbrl::Status;
using fuzz::Bytes;
using fuzz::bytes_of;
using fuzz::same_bytes;

constexpr int kSteps = 3;
constexpr int kMaxBatch = 8, kMaxHorizon = 8, kMaxInner = 8, kMaxSweeps = 50;

// v if validation must refuse it (outside [lo, hi]); else at most cap.
int capped(int v, int lo, int hi, int cap) { return v >= lo && v <= hi && v > cap ? cap : v; }
// A count: mostly small, sometimes any int (negative, huge).
int count(fuzz::Input& in, int small) { return in.byte() < 224 ? in.range(-1, small) : in.any_int(); }

// n rows of m entries: raw scalars (mode 0), rows normalized from byte weights (1), or normalized
// rows with one entry replaced by a raw scalar (2).
template <typename T>
void distribution(fuzz::Input& in, T* p, int rows, int m) {
  const int mode = in.byte() % 3;
  if (mode == 0) {
    for (int i = 0; i < rows * m; ++i) p[i] = in.real<T>();
    return;
  }
  fuzz::normalized_rows(in, p, rows, m);
  if (mode == 2) p[in.u32() % std::uint32_t(rows * m)] = in.real<T>();
}
template <typename T>
void reals(fuzz::Input& in, T* p, int n) {
  for (int i = 0; i < n; ++i) p[i] = in.real<T>();
}

template <typename T, int S, int A>
void regularizer(fuzz::Input& in, pbrl::Regularizer<T, S, A>& reg, T* reference) {
  const std::uint8_t k = in.byte() % 3;
  reg.kind = k == 2 ? static_cast<pbrl::RegularizerKind>(7) : static_cast<pbrl::RegularizerKind>(k);
  reg.tau = in.real<T>();
  if (reg.kind == pbrl::RegularizerKind::kl_reference) {
    distribution(in, reference, S, A);
    reg.reference = in.byte() == 0 ? nullptr : reference;
  }
}
template <typename T>
void policy_set(fuzz::Input& in, pbrl::PolicySet<T>& set) {
  const std::uint8_t k = in.byte() % 3;
  set.parameterization = k == 2 ? static_cast<pbrl::Parameterization>(9) : static_cast<pbrl::Parameterization>(k);
  if (in.flag()) set.floor = in.real<T>();
  if (in.flag()) set.logit_bound = in.real<T>();
}

// Every field of the shared settings, each kept at its default or decoded.
template <typename T>
void penalty_settings(fuzz::Input& in, pbrl::PenaltySolverSettings<T>& s) {
  const std::uint8_t g = in.byte() % 3;
  s.gradient = g == 2 ? static_cast<pbrl::GradientMode>(5) : static_cast<pbrl::GradientMode>(g);
  s.sampling.horizon = capped(count(in, kMaxHorizon), 1, pbrl::kMaxHorizon, kMaxHorizon);
  s.sampling.batch = capped(count(in, kMaxBatch), 1, pbrl::kMaxBatch, kMaxBatch);
  s.sampling.common_random_numbers = in.flag();
  s.seed = in.u32();
  policy_set(in, s.policy);
  const std::uint8_t o = in.byte() % 4;
  s.oracle = o == 3 ? static_cast<pbrl::OracleKind>(11) : static_cast<pbrl::OracleKind>(o);
  policy_set(in, s.oracle_policy);
  s.inner_steps = capped(count(in, kMaxInner), 0, pbrl::kMaxInnerSteps, kMaxInner);
  auto maybe = [&](T& v) {
    if (in.flag()) v = in.real<T>();
  };
  maybe(s.oracle_step);
  maybe(s.step_x);
  maybe(s.lambda_start);
  maybe(s.lambda_final);
  s.lambda_ramp = count(in, 6);
  maybe(s.gap_tolerance);
  maybe(s.lambda_max);
  maybe(s.lambda_growth);
  s.lambda_patience = count(in, 4);
  maybe(s.lambda_stall);
  maybe(s.penalty_smoothness);
  s.inner_steps_max = capped(count(in, kMaxInner), 1, pbrl::kMaxInnerSteps, kMaxInner);
  maybe(s.oracle_gap_fraction);
}

template <typename Ws>
void sweep_settings(fuzz::Input& in, Ws& ws) {
  if constexpr (Ws::method == EvaluationMethod::sweeps) {
    ws.max_sweeps = capped(count(in, kMaxSweeps), 1, std::numeric_limits<int>::max(), kMaxSweeps);
    if (in.flag()) ws.tolerance = in.real<decltype(ws.tolerance)>();
  }
  (void)in, (void)ws;
}

template <class Solver>
Bytes save(const Solver& s) {
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  Bytes b(n);
  FUZZ_CHECK(pbrl::save_checkpoint(s, b.data(), n) == Status::ok);
  return b;
}

// Up to kSteps steps with the checks above, then the save/restore round trip into `probe`
// (set up by init_probe).
template <class Solver, class Check, class InitProbe>
void steps(Solver& solver, Solver& probe, Check&& check, InitProbe&& init_probe) {
  for (int i = 0; i < kSteps; ++i) {
    const Bytes before = save(solver);
    const std::int64_t k = solver.iteration();
    typename Solver::Report report;
    const Status st = solver.step(&report);
    if (st != Status::ok) {
      fuzz::check_failed_step<Solver>(before, save(solver), st);
      return;
    }
    FUZZ_CHECK(solver.iteration() == k + 1);
    fuzz::check_report_finite(report);
    check(solver);
  }
  const Bytes now = save(solver);
  FUZZ_CHECK(init_probe(probe) == Status::ok);
  FUZZ_CHECK(pbrl::restore_checkpoint(probe, now.data(), now.size()) == Status::ok);
  FUZZ_CHECK(save(probe) == now);
}

// ---- single-agent problems: Pbrl --------------------------------------------------------------

template <class Problem, EvaluationMethod M>
struct PbrlRun {
  using T = typename Problem::Scalar;
  static constexpr int S = Problem::kStates, A = Problem::kActions;
  using Solver = pbrl::Pbrl<Problem, M>;
  using Matrix = typename Solver::Matrix;
  std::unique_ptr<Solver> solver{new Solver}, probe{new Solver};

  void run(fuzz::Input& in, const Problem& problem) {
    typename Solver::Settings s;
    penalty_settings(in, s);
    const std::uint8_t pk = in.byte() % 3;
    s.penalty_kind = pk == 2 ? static_cast<pbrl::PenaltyKind>(4) : static_cast<pbrl::PenaltyKind>(pk);
    if (in.flag()) s.step_y = in.real<T>();
    typename Solver::Params x0;
    Matrix y0;
    reals(in, x0.data(), Problem::kParams);
    if (in.flag()) reals(in, y0.data(), S * A);
    else distribution(in, y0.data(), S, A);
    sweep_settings(in, solver->evaluation_workspace());
    if (!fuzz::ok_or_unchanged(*solver, [&] { return solver->init(problem, s, x0, y0); })) return;
    const auto ws = solver->evaluation_workspace();
    steps(
        *solver, *probe,
        [&](const Solver& v) {
          FUZZ_CHECK(problem.validate_parameters(v.x()) == Status::ok);
          FUZZ_CHECK((pbrl::validate_parameters<T, S, A>(s.policy, v.y()) == Status::ok));
          Matrix pi;
          v.policy(pi);
          FUZZ_CHECK(pbrl::validate_policy(pi) == Status::ok);
          FUZZ_CHECK(pbrl::validate_policy(v.oracle_policy()) == Status::ok);
        },
        [&](Solver& p) {
          p.evaluation_workspace() = ws;
          return p.init(problem, s, x0, y0);
        });
  }
};

template <typename T, int S, int A>
struct ShapingModel {
  using Problem = pbrl::RewardShaping<T, S, A>;
  T reward[S * A], transition[S * A * S], initial[S], reference[2][S * A];
  std::unique_ptr<Problem> problem{new Problem};
  PbrlRun<Problem, EvaluationMethod::direct> direct;
  PbrlRun<Problem, EvaluationMethod::sweeps> sweeps;

  void run(fuzz::Input& in) {
    typename Problem::Data d;
    reals(in, reward, S * A);
    distribution(in, transition, S * A, S);
    distribution(in, initial, 1, S);
    d.reward = in.byte() == 0 ? nullptr : reward;
    d.transition = transition;
    d.initial = initial;
    d.discount = in.flag() ? in.real<T>() : in.unit<T>();
    regularizer(in, d.lower, reference[0]);
    regularizer(in, d.upper, reference[1]);
    d.shaping.lower = in.real<T>();
    d.shaping.upper = in.real<T>();
    if (!fuzz::ok_or_unchanged(*problem, [&] { return problem->init(d); })) return;
    if (in.flag()) sweeps.run(in, *problem);
    else direct.run(in, *problem);
  }
};

template <typename T, int S, int AL, int AF>
struct StackelbergModel {
  using Problem = pbrl::Stackelberg<T, S, AL, AF>;
  static constexpr int J = AL * AF;
  T leader_reward[S * J], follower_reward[S * J], transition[S * J * S], initial[S], ref_l[S * AL], ref_f[S * AF];
  std::unique_ptr<Problem> problem{new Problem};
  PbrlRun<Problem, EvaluationMethod::direct> direct;

  void run(fuzz::Input& in) {
    typename Problem::Data d;
    reals(in, leader_reward, S * J);
    reals(in, follower_reward, S * J);
    distribution(in, transition, S * J, S);
    distribution(in, initial, 1, S);
    d.leader_reward = leader_reward;
    d.follower_reward = follower_reward;
    d.transition = in.byte() == 0 ? nullptr : transition;
    d.initial = initial;
    d.discount = in.flag() ? in.real<T>() : in.unit<T>();
    regularizer(in, d.leader, ref_l);
    regularizer(in, d.follower, ref_f);
    d.logit_bound = in.real<T>();
    if (!fuzz::ok_or_unchanged(*problem, [&] { return problem->init(d); })) return;
    direct.run(in, *problem);
  }
};

// ---- the game problem: PbrlZeroSum ------------------------------------------------------------

template <typename T, int S, int A1, int A2, EvaluationMethod M>
struct IncentiveModel {
  using Problem = pbrl::IncentiveDesign<T, S, A1, A2>;
  using Solver = pbrl::PbrlZeroSum<Problem, M>;
  using Matrix1 = typename Solver::Matrix1;
  using Matrix2 = typename Solver::Matrix2;
  static constexpr int J = A1 * A2;
  T reward[S * J], transition[S * J * S], initial[S], designer_reward[S * J], designer_transition[S * J * S],
      cost[S], ref1[S * A1], ref2[S * A2];
  std::unique_ptr<Problem> problem{new Problem};
  std::unique_ptr<Solver> solver{new Solver}, probe{new Solver};

  void run(fuzz::Input& in) {
    typename Problem::Data d;
    reals(in, reward, S * J);
    distribution(in, transition, S * J, S);
    distribution(in, initial, 1, S);
    reals(in, designer_reward, S * J);
    distribution(in, designer_transition, S * J, S);
    reals(in, cost, S);
    d.reward = reward;
    d.transition = transition;
    d.initial = initial;
    d.discount = in.flag() ? in.real<T>() : in.unit<T>();
    regularizer(in, d.regularizer1, ref1);
    regularizer(in, d.regularizer2, ref2);
    d.designer_reward = designer_reward;
    d.designer_transition = in.byte() == 0 ? nullptr : designer_transition;
    d.designer_cost = in.flag() ? cost : nullptr;
    if (in.flag()) d.incentive_scale = in.real<T>();
    d.incentive.lower = in.real<T>();
    d.incentive.upper = in.real<T>();
    if (!fuzz::ok_or_unchanged(*problem, [&] { return problem->init(d); })) return;
    typename Solver::Settings s;
    penalty_settings(in, s);
    if (in.flag()) s.step_pi = in.real<T>();
    typename Solver::Params x0;
    Matrix1 y1;
    Matrix2 y2;
    reals(in, x0.data(), Problem::kParams);
    if (in.flag()) {
      reals(in, y1.data(), S * A1);
      reals(in, y2.data(), S * A2);
    } else {
      distribution(in, y1.data(), S, A1);
      distribution(in, y2.data(), S, A2);
    }
    sweep_settings(in, solver->evaluation_workspace());
    if (!fuzz::ok_or_unchanged(*solver, [&] { return solver->init(*problem, s, x0, y1, y2); })) return;
    const auto ws = solver->evaluation_workspace();
    const Problem& p = *problem;
    steps(
        *solver, *probe,
        [&](const Solver& v) {
          FUZZ_CHECK(p.validate_parameters(v.x()) == Status::ok);
          FUZZ_CHECK((pbrl::validate_parameters<T, S, A1>(s.policy, v.y1()) == Status::ok));
          FUZZ_CHECK((pbrl::validate_parameters<T, S, A2>(s.policy, v.y2()) == Status::ok));
          Matrix1 pi1;
          Matrix2 pi2;
          v.policy1(pi1);
          v.policy2(pi2);
          FUZZ_CHECK(pbrl::validate_policy(pi1) == Status::ok);
          FUZZ_CHECK(pbrl::validate_policy(pi2) == Status::ok);
          FUZZ_CHECK(pbrl::validate_policy(v.oracle_policy1()) == Status::ok);
          FUZZ_CHECK(pbrl::validate_policy(v.oracle_policy2()) == Status::ok);
        },
        [&](Solver& q) {
          q.evaluation_workspace() = ws;
          return q.init(p, s, x0, y1, y2);
        });
  }
};

struct Models {
  std::unique_ptr<ShapingModel<double, 4, 3>> shaping{new ShapingModel<double, 4, 3>};
  std::unique_ptr<ShapingModel<float, 3, 2>> shaping_f{new ShapingModel<float, 3, 2>};
  std::unique_ptr<StackelbergModel<double, 3, 2, 2>> stackelberg{new StackelbergModel<double, 3, 2, 2>};
  std::unique_ptr<IncentiveModel<double, 3, 2, 2, EvaluationMethod::direct>> incentive{
      new IncentiveModel<double, 3, 2, 2, EvaluationMethod::direct>};
  std::unique_ptr<IncentiveModel<float, 3, 2, 2, EvaluationMethod::sweeps>> incentive_f{
      new IncentiveModel<float, 3, 2, 2, EvaluationMethod::sweeps>};
};
Models* models = nullptr;
constexpr int kModels = 5;

// Seeds: per model, inputs whose selector bytes pick valid choices (distributions normalized
// from weights, ordinary scalars), so that the fuzzer starts from runs that reach step().
void write_seeds(const std::string& dir) {
  for (int m = 0; m < kModels; ++m)
    for (int v = 0; v < 4; ++v) {
      Bytes seed = {std::uint8_t(m)};
      // Mostly "ordinary" selectors (>= 32) and small counts: a plausible run.
      fuzz::append_plausible(seed, 2654435761u * std::uint32_t(m * 4 + v + 1), 1500, 3);
      fuzz::write_file(dir + "/m" + std::to_string(m) + "_" + std::to_string(v), seed);
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  return fuzz::initialize(models, write_seeds);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  switch (in.byte() % kModels) {
    case 0: models->shaping->run(in); break;
    case 1: models->shaping_f->run(in); break;
    case 2: models->stackelberg->run(in); break;
    case 3: models->incentive->run(in); break;
    default: models->incentive_f->run(in); break;
  }
  return 0;
}
