// The natural lower-level step (settings.lower_geometry, model/policy.hpp's
// natural_policy_gradient): it solves the occupancy-weighted Fisher system, it is a descent
// direction whose rate finite differences confirm, an unvisited state stays finite, and the
// setting resolves and is refused as documented (solver/settings.hpp), with nothing changed.
#include "support.hpp"

#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/detail/projected_step.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>

namespace test_natural_step {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
using pbrl::LowerGeometry;

constexpr int S = 5, A = 3;

template <class M>
bool same_bits(const M& a, const M& b) {
  return std::memcmp(a.data(), b.data(), sizeof(typename M::Scalar) * std::size_t(a.size())) == 0;
}

// V^{softmax(y)}(rho) on m (entropy-regularized), for finite differences.
Real value_of(const pbrl::Mdp<Real, S, A>& m, const Mat<S, A>& y) {
  Mat<S, A> pi;
  pbrl::policy_from_parameters<Real, S, A>(Parameterization::softmax, y, pi);
  pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct> ws;
  pbrl::Evaluation<Real, S, A> e;
  REQUIRE(pbrl::evaluate(m, pi, ws, e) == Status::ok);
  return e.value_rho;
}

}  // namespace

TEST_CASE("natural_policy_gradient solves the Fisher system F_s u = (d pi / d y)^T g, with <pi, u> = 0") {
  pbrl::Rng rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const Mat<S, A> pi = random_policy<S, A>(rng);
    const Mat<S, A> g = random_logits<S, A>(rng, Real(3));
    Vec<S> d;
    for (int s = 0; s < S; ++s) d(s) = Real(0.05) + rng.uniform<Real>() * Real(4);
    Mat<S, A> u, chained;
    pbrl::natural_policy_gradient<Real, S, A>(pi, g, d, u);
    pbrl::chain_policy_gradient<Real, S, A>(Parameterization::softmax, pi, g, chained);
    for (int s = 0; s < S; ++s) {
      CHECK(std::abs(pi.row(s).dot(u.row(s))) <= kTight * Real(10) * u.row(s).cwiseAbs().maxCoeff());
      // F_s u = d(s) (diag(pi) - pi pi^T) u = d(s) pi .* (u - <pi, u>)
      const Real centre = pi.row(s).dot(u.row(s));
      for (int a = 0; a < A; ++a)
        CHECK(d(s) * pi(s, a) * (u(s, a) - centre) == doctest::Approx(chained(s, a)).epsilon(kTight * 100));
    }
  }
}

TEST_CASE("the natural direction of V: the regularized advantage, an ascent whose rate finite differences confirm") {
  RandomModel<S, A> model(7);
  for (const Real gamma : {Real(0.9), Real(0.99)}) {
    const pbrl::Mdp<Real, S, A> m = model.mdp(gamma, Real(0.05));
    pbrl::Rng rng(5);
    const Mat<S, A> y = random_logits<S, A>(rng, Real(2));
    Mat<S, A> pi, log_pi;
    pbrl::policy_from_parameters<Real, S, A>(Parameterization::softmax, y, pi, &log_pi);
    pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct> ws;
    pbrl::Evaluation<Real, S, A> e;
    REQUIRE(pbrl::evaluate(m, pi, ws, e, &log_pi) == Status::ok);
    Mat<S, A> g, u;
    pbrl::policy_gradient(m, pi, e, g, &log_pi);
    pbrl::natural_policy_gradient<Real, S, A>(pi, g, e.occupancy, u);
    // u = Q - tau (log pi + 1) centred under pi: the step of regularized policy mirror descent.
    for (int s = 0; s < S; ++s) {
      Real mean(0);
      for (int a = 0; a < A; ++a) mean += pi(s, a) * (e.q(s, a) - Real(0.05) * log_pi(s, a));
      for (int a = 0; a < A; ++a)
        CHECK(u(s, a) == doctest::Approx(e.q(s, a) - Real(0.05) * log_pi(s, a) - mean).epsilon(kTight * 1000));
    }
    // The rate of V along u: sum_s d(s) Var_pi(u(s, .)) > 0, by central differences.
    Real rate(0);
    for (int s = 0; s < S; ++s)
      for (int a = 0; a < A; ++a) rate += e.occupancy(s) * pi(s, a) * u(s, a) * u(s, a);
    REQUIRE(rate > Real(0));
    const Real h = kDouble ? Real(1e-6) : Real(1e-3);
    const Real fd = (value_of(m, y + h * u) - value_of(m, y - h * u)) / (Real(2) * h);
    CAPTURE(gamma);
    CHECK(fd == doctest::Approx(rate).epsilon(kDouble ? 1e-6 : 2e-2));
  }
}

TEST_CASE("natural_policy_gradient: a state no trajectory visits keeps a finite row") {
  pbrl::Rng rng(3);
  const Mat<S, A> pi = random_policy<S, A>(rng);
  const Mat<S, A> g = random_logits<S, A>(rng);
  Vec<S> d = Vec<S>::Constant(Real(2));
  d(1) = Real(0);
  d(3) = Real(1e-30);
  Mat<S, A> u;
  pbrl::natural_policy_gradient<Real, S, A>(pi, g, d, u);
  CHECK(pbrl::all_finite(u));
  const Real floor = d.sum() * Real(1e-6);  // the documented floor
  for (int a = 0; a < A; ++a)
    CHECK(u(1, a) == doctest::Approx((g(1, a) - pi.row(1).dot(g.row(1))) / floor).epsilon(kTight * 100));
}

TEST_CASE("after a natural step |G| is the euclidean step's, and a non-finite step's sum passes through") {
  pbrl::Rng rng(17);
  pbrl::PolicySet<Real> set;
  set.logit_bound = Real(3);
  const Mat<S, A> y = random_logits<S, A>(rng, Real(3));  // some within a step of the box's edge
  Mat<S, A> pi;
  pbrl::policy_from_parameters<Real, S, A>(Parameterization::softmax, y, pi);
  const Mat<S, A> g = random_logits<S, A>(rng, Real(5));
  Mat<S, A> chained, next;
  pbrl::chain_policy_gradient<Real, S, A>(Parameterization::softmax, pi, g, chained);
  const Real alpha = Real(0.7);
  const Real euclidean = pbrl::policy_step<Real, S, A>(set, y, alpha, chained, next);
  CHECK(pbrl::euclidean_step_measure<Real, S, A>(set, y, alpha, pi, g, Real(1)) ==
        doctest::Approx(euclidean).epsilon(kTight * 100));
  CHECK(std::isnan(pbrl::euclidean_step_measure<Real, S, A>(set, y, alpha, pi, g, std::nan(""))));
  CHECK(std::isinf(pbrl::euclidean_step_measure<Real, S, A>(set, y, alpha, pi, g,
                                                            std::numeric_limits<Real>::infinity())));
}

TEST_CASE("lower_geometry: automatic is natural only in tolerance mode with exact gradients and softmax policies") {
  pbrl::PenaltySolverSettings<Real> s;
  REQUIRE(s.lower_geometry == LowerGeometry::automatic);  // the documented default
  CHECK(!s.natural_lower_step());                          // fixed mode: the paper's step
  s.gap_tolerance = Real(0.01);
  CHECK(s.natural_lower_step());
  s.policy.parameterization = Parameterization::direct;
  CHECK(!s.natural_lower_step());
  s.policy.parameterization = Parameterization::softmax;
  s.gradient = GradientMode::sampled;
  s.oracle = OracleKind::policy_gradient;
  CHECK(!s.natural_lower_step());
  CHECK(pbrl::validate(s) == Status::ok);
  s.gradient = GradientMode::exact;
  s.lower_geometry = LowerGeometry::euclidean;
  CHECK(!s.natural_lower_step());
  s.lower_geometry = LowerGeometry::natural;
  s.gap_tolerance = Real(0);
  CHECK(s.natural_lower_step());  // asked for: in fixed mode too
  CHECK(pbrl::validate(s) == Status::ok);
  // Refused: natural with sampled gradients (no occupancy) or direct policies (no logits).
  s.gradient = GradientMode::sampled;
  CHECK(pbrl::validate(s) == Status::bad_setting);
  s.gradient = GradientMode::exact;
  s.policy.parameterization = Parameterization::direct;
  CHECK(pbrl::validate(s) == Status::bad_setting);
  CHECK(std::string(pbrl::enum_name(LowerGeometry::natural)) == "natural");
}

TEST_CASE("lower_geometry natural with direct policies: init() refuses it and the solver keeps its state") {
  using Problem = MixtureProblem<S, A, 2>;
  using Solver = pbrl::Pbrl<Problem>;
  static Problem problem(4);
  static Solver solver;
  pbrl::PbrlSettings<Real> s;
  s.gap_tolerance = Real(0.01);
  REQUIRE(solver.init(problem, s, Problem::Params::Zero(), Solver::Matrix::Zero()) == Status::ok);
  REQUIRE(solver.run(3) == Status::ok);
  const Solver::Matrix y = solver.y();
  const std::int64_t k = solver.iteration();
  s.lower_geometry = LowerGeometry::natural;
  s.policy.parameterization = Parameterization::direct;
  Solver::Matrix uniform = Solver::Matrix::Constant(Real(1) / A);
  CHECK(solver.init(problem, s, Problem::Params::Zero(), uniform) == Status::bad_setting);
  CHECK(solver.iteration() == k);
  CHECK(same_bits(solver.y(), y));
}

TEST_CASE("fixed mode: automatic is the paper's step, bit for bit against euclidean") {
  using Problem = MixtureProblem<S, A, 2>;
  using Solver = pbrl::Pbrl<Problem>;
  static Problem problem(9);
  static Solver a, b;
  pbrl::PbrlSettings<Real> s;
  s.lambda_final = Real(5);
  REQUIRE(a.init(problem, s, Problem::Params::Zero(), Solver::Matrix::Zero()) == Status::ok);
  s.lower_geometry = LowerGeometry::euclidean;
  REQUIRE(b.init(problem, s, Problem::Params::Zero(), Solver::Matrix::Zero()) == Status::ok);
  REQUIRE(a.run(20) == Status::ok);
  REQUIRE(b.run(20) == Status::ok);
  CHECK(same_bits(a.x(), b.x()));
  CHECK(same_bits(a.y(), b.y()));
  // ... and natural moves differently.
  s.lower_geometry = LowerGeometry::natural;
  REQUIRE(b.init(problem, s, Problem::Params::Zero(), Solver::Matrix::Zero()) == Status::ok);
  REQUIRE(b.run(20) == Status::ok);
  CHECK(!same_bits(a.y(), b.y()));
}

}  // namespace test_natural_step
