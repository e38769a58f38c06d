// float and double agree: the reward-shaping example's problem, solved by its PBRL settings
// (examples/reward_shaping_instance.hpp) in float and in double (on the Cortex-M4F the double run
// is software floating point), ends at the same policy and shaping within a stated tolerance. The
// instance is drawn once in double and rounded to float, so both precisions solve the same problem
// up to that rounding.
// Tolerance (the requirement, not a fit): every policy probability within 1e-3 and every shaping
// entry within 1e-2 of the double run after 200 iterations, for both penalties and both
// evaluation methods.
#include "support.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "reward_shaping_instance.hpp"  // examples/: the instance and the settings

namespace test_precision {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 6, A = 3;
constexpr long kIterations = 200;

template <typename Scalar>
using Instance = examples::RewardShapingArrays<Scalar, S, A>;

template <typename Scalar, pbrl::EvaluationMethod M>
void solve(const Instance<double>& source, pbrl::PenaltyKind kind, pbrl::StateActionMatrix<double, S, A>& policy,
           pbrl::Vector<double, S * A>& shaping) {
  using Problem = pbrl::RewardShaping<Scalar, S, A>;
  auto data = std::make_unique<Instance<Scalar>>();
  for (int i = 0; i < S * A; ++i) data->reward[i] = static_cast<Scalar>(source.reward[i]);
  for (int i = 0; i < S * A * S; ++i) data->transition[i] = static_cast<Scalar>(source.transition[i]);
  for (int i = 0; i < S; ++i) data->initial[i] = static_cast<Scalar>(source.initial[i]);
  // Rounding can move a row's sum off 1 by more than the validation's tolerance allows: renormalize.
  for (int row = 0; row < S * A; ++row) {
    Scalar sum(0);
    for (int t = 0; t < S; ++t) sum += data->transition[row * S + t];
    for (int t = 0; t < S; ++t) data->transition[row * S + t] /= sum;
  }
  auto problem = std::make_unique<Problem>();
  REQUIRE(problem->init(data->data()) == pbrl::Status::ok);
  const pbrl::PbrlSettings<Scalar> s = examples::reward_shaping_settings<Scalar>(kind);
  auto solver = std::make_unique<pbrl::Pbrl<Problem, M>>();
  REQUIRE(solver->init(*problem, s, Problem::Params::Zero(), pbrl::StateActionMatrix<Scalar, S, A>::Zero()) ==
          pbrl::Status::ok);
  REQUIRE(solver->run(kIterations) == pbrl::Status::ok);
  pbrl::StateActionMatrix<Scalar, S, A> pi;
  solver->policy(pi);
  policy = pi.template cast<double>();
  shaping = solver->x().template cast<double>();
}
}  // namespace

TEST_CASE("float and double reach the same policy and shaping within the stated tolerance") {
  auto source = std::make_unique<Instance<double>>();
  pbrl::Rng rng(501);
  source->draw(rng);
  for (auto kind : {pbrl::PenaltyKind::value, pbrl::PenaltyKind::bellman}) {
    CAPTURE(static_cast<int>(kind));
    pbrl::StateActionMatrix<double, S, A> pd, pf, ps;
    pbrl::Vector<double, S * A> xd, xf, xs;
    solve<double, pbrl::EvaluationMethod::direct>(*source, kind, pd, xd);
    solve<float, pbrl::EvaluationMethod::direct>(*source, kind, pf, xf);
    solve<float, pbrl::EvaluationMethod::sweeps>(*source, kind, ps, xs);
    const double policy_lu = (pf - pd).cwiseAbs().maxCoeff(), policy_sweeps = (ps - pd).cwiseAbs().maxCoeff();
    const double shaping_lu = (xf - xd).cwiseAbs().maxCoeff(), shaping_sweeps = (xs - xd).cwiseAbs().maxCoeff();
    MESSAGE("float vs double after ", kIterations, " iterations: policy ", policy_lu, " (LU), ", policy_sweeps,
            " (sweeps); shaping ", shaping_lu, " (LU), ", shaping_sweeps, " (sweeps)");
    CHECK(policy_lu <= 1e-3);
    CHECK(policy_sweeps <= 1e-3);
    CHECK(shaping_lu <= 1e-2);
    CHECK(shaping_sweeps <= 1e-2);
    // The run moved: the comparison is not between two unchanged starting points.
    CHECK(xd.cwiseAbs().maxCoeff() > 0.05);
  }
}

}  // namespace test_precision
