// Policy evaluation: Bellman equations, occupancies, the two solve methods, the policy gradient
// and the vector-Jacobian product, against identities and finite differences.
#include "support.hpp"
#include "fd_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace test_evaluation {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 6, A = 3;

template <EvaluationMethod M>
pbrl::Evaluation<Real, S, A> evaluated(const pbrl::Mdp<Real, S, A>& m, const Mat<S, A>& pi) {
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, M>>();
  if constexpr (M == EvaluationMethod::sweeps) ws->max_sweeps = 5000;
  pbrl::Evaluation<Real, S, A> e;
  REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
  return e;
}
}  // namespace

TEST_CASE("regularizer: h and dh/dp from given logs are the values that take the logs themselves") {
  Mat<S, A> ref;
  ref << 0.2, 0.3, 0.5, 0.6, 0.2, 0.2, 0.1, 0.1, 0.8, 0.3, 0.3, 0.4, 0.25, 0.25, 0.5, 0.7, 0.2, 0.1;
  Mat<S, A> p;
  p << 0.1, 0.2, 0.7, 0.0, 0.5, 0.5, 1.0, 0.0, 0.0, 0.3, 0.3, 0.4, 1e-3, 0.5, 0.499, 0.2, 0.2, 0.6;
  const Mat<S, A> log_p = p.unaryExpr([](Real v) { return std::log(v); });  // -inf at the zeros
  for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference}) {
    const pbrl::Regularizer<Real, S, A> reg{kind, Real(0.1), ref.data()};
    for (int s = 0; s < S; ++s) {
      CAPTURE(s);
      // p_a = 0 is skipped by both (its log is not read); the others are the same terms.
      CHECK(reg.value(s, p.row(s), log_p.row(s)) == reg.value(s, p.row(s)));
      for (int a = 0; a < A; ++a) {
        CAPTURE(a);
        // The floor at p_a = 0 (log p_a = -inf) gives the same finite derivative.
        CHECK(reg.derivative_at_log(s, a, log_p(s, a)) == reg.derivative(s, a, p(s, a)));
        CHECK(std::isfinite(reg.derivative_at_log(s, a, log_p(s, a))));
      }
    }
  }
}

TEST_CASE("evaluate and policy_gradient from the policy's logs: std::log(pi)'s numbers, an oracle's log_pi within rounding; a non-finite log refused") {
  RandomModel<S, A> model(13);
  pbrl::Rng rng(5);
  constexpr double kRounding = 8;  // epsilons of max |entry|, where the compiler may fuse
  for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference}) {
    CAPTURE(static_cast<int>(kind));
    const auto m = model.mdp(Real(0.9), Real(0.2), kind);
    const Mat<S, A> pi = random_policy<S, A>(rng);
    const Mat<S, A> log_pi = pi.unaryExpr([](Real v) { return std::log(v); });
    auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
    pbrl::Evaluation<Real, S, A> taken, given;
    REQUIRE(pbrl::evaluate(m, pi, *ws, taken) == Status::ok);
    REQUIRE(pbrl::evaluate(m, pi, *ws, given, &log_pi) == Status::ok);
    check_same_unless_fused(given.value.data(), taken.value.data(), S, kRounding);
    check_same_unless_fused(given.q.data(), taken.q.data(), S * A, kRounding);
    CHECK(std::memcmp(given.occupancy.data(), taken.occupancy.data(), sizeof(Real) * S) == 0);  // h not in it
    Mat<S, A> g_taken, g_given;
    pbrl::policy_gradient(m, pi, taken, g_taken);
    pbrl::policy_gradient(m, pi, taken, g_given, &log_pi);
    check_same_unless_fused(g_given.data(), g_taken.data(), S * A, kRounding);

    // A PMD step's (log_pi, pi): log_pi is log pi up to rounding of the normalizer, so h moves by
    // a few eps * max|log pi| per state and V by at most tau/(1 - gamma) times that.
    Mat<S, A> lp = log_pi, p = pi;
    pbrl::Evaluation<Real, S, A> scratch;
    REQUIRE(pbrl::pmd_step(m, Real(3), *ws, scratch, {lp, p}) == Status::ok);
    REQUIRE(pbrl::evaluate(m, p, *ws, taken) == Status::ok);
    REQUIRE(pbrl::evaluate(m, p, *ws, given, &lp) == Status::ok);
    const Real eps = std::numeric_limits<Real>::epsilon();
    const Real bound = m.tau() / (Real(1) - m.discount) * Real(16) * eps * std::max(Real(1), lp.cwiseAbs().maxCoeff()) +
                       Real(16) * eps * taken.value.cwiseAbs().maxCoeff();
    CHECK((given.value - taken.value).cwiseAbs().maxCoeff() <= bound);
    // The logs given are the ones used: shifted by c, every h_s is c larger and V is
    // tau c / (1 - gamma) lower in every state.
    const Real c = Real(0.5);
    const Mat<S, A> shifted = (lp.array() + c).matrix();
    REQUIRE(pbrl::evaluate(m, p, *ws, given, &shifted) == Status::ok);
    const Real drop = m.tau() * c / (Real(1) - m.discount);
    for (int st = 0; st < S; ++st) CHECK_CLOSE(given.value(st), taken.value(st) - drop, kTight, Real(10));

    // Refused: a NaN or infinite log; the evaluation is unchanged.
    for (const Real bad : {std::numeric_limits<Real>::quiet_NaN(), -std::numeric_limits<Real>::infinity()}) {
      Mat<S, A> broken = log_pi;
      broken(2, 1) = bad;
      const pbrl::Evaluation<Real, S, A> before = given;
      CHECK(pbrl::evaluate(m, pi, *ws, given, &broken) == Status::not_finite);
      CHECK(std::memcmp(&given, &before, sizeof given) == 0);
    }
  }
}

TEST_CASE("policy evaluation satisfies the regularized Bellman equations") {
  RandomModel<S, A> model(11);
  pbrl::Rng rng(3);
  for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference}) {
    const auto m = model.mdp(Real(0.9), Real(0.2), kind);
    const Mat<S, A> pi = random_policy<S, A>(rng);
    const auto e = evaluated<EvaluationMethod::direct>(m, pi);
    for (int s = 0; s < S; ++s) {
      const Real v = pi.row(s).dot(e.q.row(s)) - m.tau() * m.regularizer.value(s, pi.row(s));
      CHECK_CLOSE(e.value(s), v, kTight, std::abs(v));
      for (int a = 0; a < A; ++a) {
        const Real q = m.r()(s, a) + m.discount * m.P().row(s * A + a).dot(e.value);
        CHECK_CLOSE(e.q(s, a), q, kTight, std::abs(q));
      }
    }
    // d = rho + gamma P_pi^T d and sum d = 1/(1-gamma)
    CHECK_CLOSE(e.occupancy.sum(), Real(1) / (Real(1) - m.discount), kTight, Real(10));
    for (int t = 0; t < S; ++t) {
      Real in = m.rho()(t);
      for (int s = 0; s < S; ++s)
        for (int a = 0; a < A; ++a) in += m.discount * e.occupancy(s) * pi(s, a) * m.P()(s * A + a, t);
      CHECK_CLOSE(e.occupancy(t), in, kTight, in);
    }
    CHECK_CLOSE(e.value_rho, m.rho().dot(e.value), kTight, std::abs(e.value_rho));
  }
}

TEST_CASE("direct solve and warm-started sweeps agree; sweeps stay within their bound") {
  RandomModel<S, A> model(12);
  pbrl::Rng rng(4);
  const auto m = model.mdp(Real(0.8), Real(0.1));
  const Mat<S, A> pi = random_policy<S, A>(rng);
  const auto direct = evaluated<EvaluationMethod::direct>(m, pi);
  const auto swept = evaluated<EvaluationMethod::sweeps>(m, pi);
  const Real tol = kDouble ? Real(1e-9) : Real(1e-4);
  CHECK((direct.value - swept.value).cwiseAbs().maxCoeff() <= tol * direct.value.cwiseAbs().maxCoeff());
  CHECK((direct.q - swept.q).cwiseAbs().maxCoeff() <= tol * direct.q.cwiseAbs().maxCoeff());
  CHECK((direct.occupancy - swept.occupancy).cwiseAbs().maxCoeff() <= tol * direct.occupancy.maxCoeff());

  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps>>();
  ws->max_sweeps = 3;
  pbrl::Evaluation<Real, S, A> cold;
  REQUIRE(pbrl::evaluate(m, pi, *ws, cold) == Status::ok);
  CHECK(ws->last_sweeps <= 3);
  CHECK((cold.value - direct.value).cwiseAbs().maxCoeff() > tol);  // 3 sweeps from 0 are not enough
  pbrl::Evaluation<Real, S, A> warm = direct;  // warm start at the answer: one sweep confirms it
  ws->max_sweeps = 50;
  REQUIRE(pbrl::evaluate(m, pi, *ws, warm) == Status::ok);
  CHECK(ws->last_sweeps <= 2);
}

TEST_CASE("sweeps: stopping at max_sweeps is an outcome in the workspace, not an error") {
  RandomModel<S, A> model(15);
  pbrl::Rng rng(7);
  const auto m = model.mdp(Real(0.9), Real(0.2));
  const Mat<S, A> pi = random_policy<S, A>(rng), sigma = random_policy<S, A>(rng);
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps>>();
  // From a cold start 3 sweeps cannot meet the tolerance: ok, and the workspace says so.
  ws->max_sweeps = 3;
  pbrl::Evaluation<Real, S, A> capped;
  CHECK(pbrl::evaluate(m, pi, *ws, capped) == Status::ok);
  CHECK(ws->last_sweeps == 3);
  CHECK(ws->max_sweeps_hit);
  CHECK(pbrl::max_sweeps_hit_total(*ws) == 1);
  Vec<S> warm = Vec<S>::Zero();
  Mat<S, A> mu;
  CHECK(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu) == Status::ok);
  CHECK(ws->max_sweeps_hit);
  CHECK(pbrl::max_sweeps_hit_total(*ws) == 2);
  // Enough sweeps: the tolerance is met, the flag clears, the count stays.
  ws->max_sweeps = 5000;
  pbrl::Evaluation<Real, S, A> cold;
  CHECK(pbrl::evaluate(m, pi, *ws, cold) == Status::ok);
  const int needed = ws->last_sweeps;  // the larger of the value's and the occupancy's solve
  CHECK(needed < 5000);
  CHECK_FALSE(ws->max_sweeps_hit);
  warm.setZero();
  CHECK(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu) == Status::ok);
  CHECK_FALSE(ws->max_sweeps_hit);
  CHECK(pbrl::max_sweeps_hit_total(*ws) == 2);
  // A cap of exactly the sweeps needed: the last sweep allowed meets the tolerance, no hit.
  ws->max_sweeps = needed;
  pbrl::Evaluation<Real, S, A> again;
  CHECK(pbrl::evaluate(m, pi, *ws, again) == Status::ok);
  CHECK(ws->last_sweeps == needed);
  CHECK_FALSE(ws->max_sweeps_hit);
  ws->max_sweeps = needed - 1;
  pbrl::Evaluation<Real, S, A> short_of_it;
  CHECK(pbrl::evaluate(m, pi, *ws, short_of_it) == Status::ok);
  CHECK(ws->max_sweeps_hit);
  CHECK(pbrl::max_sweeps_hit_total(*ws) == 3);
}

TEST_CASE("occupancy from a state-action start reproduces E_{rho,sigma} Q^pi") {
  RandomModel<S, A> model(13);
  pbrl::Rng rng(5);
  const auto m = model.mdp(Real(0.85), Real(0.3));
  const Mat<S, A> pi = random_policy<S, A>(rng), sigma = random_policy<S, A>(rng);
  const auto e = evaluated<EvaluationMethod::direct>(m, pi);
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  Vec<S> warm = Vec<S>::Zero();
  Mat<S, A> mu;
  REQUIRE(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu) == Status::ok);
  CHECK_CLOSE(mu.sum(), Real(1) / (Real(1) - m.discount), kTight, Real(10));
  // E_{s~rho, a~sigma} Q(s,a) = sum nu0 r + sum_s m(s) (<pi, r> - tau h)
  Real lhs(0), rhs(0);
  for (int s = 0; s < S; ++s) {
    lhs += m.rho()(s) * sigma.row(s).dot(e.q.row(s));
    for (int a = 0; a < A; ++a) {
      const Real nu0 = m.rho()(s) * sigma(s, a);
      rhs += nu0 * m.r()(s, a) + (mu(s, a) - nu0) * m.r()(s, a);
    }
    rhs -= warm(s) * m.tau() * m.regularizer.value(s, pi.row(s));
  }
  CHECK_CLOSE(lhs, rhs, kTight, std::abs(lhs));
  // The sweep method gives the same occupancy.
  auto sw = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps>>();
  sw->max_sweeps = 5000;
  Vec<S> warm2 = Vec<S>::Zero();
  Mat<S, A> mu2;
  REQUIRE(pbrl::occupancy_from_start(m, {sigma, pi}, *sw, warm2, mu2) == Status::ok);
  CHECK((mu - mu2).cwiseAbs().maxCoeff() <= (kDouble ? Real(1e-9) : Real(1e-4)) * mu.maxCoeff());
}

TEST_CASE("policy_from_parameters: a softmax's logs beside pi are log pi within rounding and its rows sum to 1, out to huge logits; direct parameters form none") {
  pbrl::Rng rng(7);
  const Real eps = std::numeric_limits<Real>::epsilon();
  for (const Real spread : {Real(1), Real(10), Real(300)}) {
    CAPTURE(spread);
    Mat<S, A> y = spread * random_logits<S, A>(rng);
    y.row(0) << spread, -spread, Real(0);  // exp(-2 spread) underflows in float at 300
    Mat<S, A> pi, log_pi, plain;
    pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::softmax, y, pi, &log_pi);
    pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::softmax, y, plain);
    CHECK(std::memcmp(pi.data(), plain.data(), sizeof(Real) * S * A) == 0);  // pi as without logs
    CHECK(pbrl::all_finite(log_pi));
    CHECK((log_pi.array() <= Real(0)).all());
    for (int s = 0; s < S; ++s)
      for (int a = 0; a < A; ++a) {
        CAPTURE(s);
        CAPTURE(a);
        // Both roundings: the log-sum's (a few eps of the largest |logit| - max) and pi's own.
        const Real scale = std::max(Real(1), std::abs(log_pi(s, a)) + std::abs(y(s, a) - y.row(s).maxCoeff()));
        if (pi(s, a) >= std::numeric_limits<Real>::min())
          CHECK(std::abs(log_pi(s, a) - std::log(pi(s, a))) <= Real(8) * eps * scale);
        else  // exp underflowed (float, spread 300): the log stays finite, far below
          CHECK(log_pi(s, a) < std::log(std::numeric_limits<Real>::min()) + Real(1));
      }
    for (int s = 0; s < S; ++s) CHECK(std::abs(pi.row(s).sum() - Real(1)) <= Real(4 * A) * eps);
  }
  // Direct parameters: pi = y, no logs formed, log_pi left as it was.
  const Mat<S, A> direct = random_policy<S, A>(rng);
  Mat<S, A> pi, log_pi = Mat<S, A>::Constant(Real(7));
  pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::direct, direct, pi, &log_pi);
  CHECK(pi == direct);
  CHECK(log_pi == Mat<S, A>::Constant(Real(7)));
}

TEST_CASE("normalize_policy_row: the previous always-floored numbers to the bit, rows at and past the floor included") {
  // The previous form: shift by the max, softmax, subtract the log of the sum, then both floors.
  auto previous = [](Mat<1, A>& log_pi, Mat<1, A>& pi) {
    log_pi.array() -= log_pi.maxCoeff();
    log_pi.array() -= pbrl::logarithm(pbrl::softmax_of_shifted<A>(log_pi.data(), pi.data()));
    log_pi = log_pi.cwiseMax(std::log(pbrl::log_floor<Real>()));
    pi = pi.cwiseMax(pbrl::log_floor<Real>());
  };
  pbrl::Rng rng(11);
  const Real lf = std::log(pbrl::log_floor<Real>());  // about -71 in float, -672 in double
  const Real inf = std::numeric_limits<Real>::infinity();
  std::vector<Mat<1, A>> rows;
  for (const Real spread : {Real(1), Real(30), Real(300), Real(3000)})
    for (int k = 0; k < 20; ++k) rows.push_back(spread * random_logits<1, A>(rng));
  // Smallest entry just above, at and just below log(floor) + 1 from the largest; beyond it;
  // a zero probability (-inf); a NaN.
  for (const Real gap : {lf + Real(2), lf + Real(1.0001), lf + Real(1), lf + Real(0.9999), lf, lf - Real(5),
                         Real(2) * lf})
    rows.push_back((Mat<1, A>() << Real(0), gap, Real(-1)).finished());
  rows.push_back((Mat<1, A>() << Real(0), -inf, Real(-1)).finished());
  rows.push_back((Mat<1, A>() << Real(0), std::numeric_limits<Real>::quiet_NaN(), Real(-1)).finished());
  int floored = 0;
  for (const Mat<1, A>& row : rows) {
    CAPTURE(row);
    Mat<1, A> log_pi = row, pi = Mat<1, A>::Zero(), log_old = row, pi_old = Mat<1, A>::Zero();
    pbrl::normalize_policy_row(log_pi.row(0), pi.row(0));
    previous(log_old, pi_old);
    CHECK(std::memcmp(log_pi.data(), log_old.data(), sizeof(Real) * A) == 0);
    CHECK(std::memcmp(pi.data(), pi_old.data(), sizeof(Real) * A) == 0);
    if ((pi_old.array() == pbrl::log_floor<Real>()).any()) ++floored;
  }
  CHECK(floored >= 3);  // the floors did act on some rows
}

TEST_CASE("policy gradient of V(rho) matches finite differences") {
  RandomModel<S, A> model(14);
  pbrl::Rng rng(6);
  for (Real tau : {Real(0), Real(0.4)})
    for (auto kind : {pbrl::RegularizerKind::entropy, pbrl::RegularizerKind::kl_reference}) {
      CAPTURE(tau);
      const auto m = model.mdp(Real(0.9), tau, kind);
      const Mat<S, A> y = random_logits<S, A>(rng);
      Mat<S, A> pi, grad_pi, grad_y;
      pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::softmax, y, pi);
      const auto e = evaluated<EvaluationMethod::direct>(m, pi);
      pbrl::policy_gradient(m, pi, e, grad_pi);
      pbrl::chain_policy_gradient<Real, S, A>(pbrl::Parameterization::softmax, pi, grad_pi, grad_y);
      const Real scale = grad_y.cwiseAbs().maxCoeff();
      // softmax logits: every coordinate
      check_logit_gradient(y, grad_y, scale, [&](const Mat<S, A>& ph) { return evaluated<EvaluationMethod::direct>(m, ph).value_rho; });
      // direct coordinates: along tangent directions e_a - e_b of the simplex
      check_simplex_gradient(pi, grad_pi, grad_pi.cwiseAbs().maxCoeff(), [&](const Mat<S, A>& ph) { return evaluated<EvaluationMethod::direct>(m, ph).value_rho; });
    }
}

TEST_CASE("vector-Jacobian product gives grad_x V^pi(rho) and grad_x E_{rho,sigma} Q^pi") {
  constexpr int K = 4;
  using Problem = MixtureProblem<S, A, K>;
  auto problem = std::make_unique<Problem>(21);
  pbrl::Rng rng(7);
  const Mat<S, A> pi = random_policy<S, A>(rng), sigma = random_policy<S, A>(rng);
  const Problem::Params x = uniform_vector<Problem::Params>(rng);
  auto model = std::make_unique<Problem::Model>();
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();

  auto values = [&](const Problem::Params& xx, Real& v_rho, Real& q_rho_sigma) {
    pbrl::Mdp<Real, S, A> m;
    REQUIRE(problem->build(xx, *model, m) == Status::ok);
    pbrl::Evaluation<Real, S, A> e;
    REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
    v_rho = e.value_rho;
    q_rho_sigma = 0;
    for (int s = 0; s < S; ++s) q_rho_sigma += m.rho()(s) * sigma.row(s).dot(e.q.row(s));
  };

  pbrl::Mdp<Real, S, A> m;
  REQUIRE(problem->build(x, *model, m) == Status::ok);
  pbrl::Evaluation<Real, S, A> e;
  REQUIRE(pbrl::evaluate(m, pi, *ws, e) == Status::ok);
  Mat<S, A> mu, mu_start;
  pbrl::state_action_occupancy(e, pi, mu);
  Vec<S> warm = Vec<S>::Zero();
  REQUIRE(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu_start) == Status::ok);
  Problem::Params gv = Problem::Params::Zero(), gq = Problem::Params::Zero();
  problem->vjp(*model, mu, e.value, Real(1), gv);
  problem->vjp(*model, mu_start, e.value, Real(1), gq);
  check_value_pair_gradient(x, gv, gq, values);
}

namespace {
// The direct evaluation as it was before the unrolled and the blocked elimination, written out: I -
// gamma*P_pi as the identity minus A passes over each row, column-by-column elimination (rows with
// a zero multiplier skipped), the forward and backward sums one row at a time, Q = r + gamma*P V.
// The library's evaluate() and occupancy_from_start() must give the same numbers
// (check_same_unless_fused), in the scalar T whatever the suite's scalar.
template <typename T, int NS, int NA>
struct PreviousDirect {
  using M = pbrl::Mdp<T, NS, NA>;
  using Pi = pbrl::StateActionMatrix<T, NS, NA>;
  using V = pbrl::StateVector<T, NS>;
  Eigen::Matrix<T, NS, NS, Eigen::RowMajor> lu;
  V value, occupancy;
  Pi q;

  void factorize(const M& m, const Pi& pi) {
    const auto P = m.P();
    lu.setIdentity();
    for (int s = 0; s < NS; ++s)
      for (int a = 0; a < NA; ++a) lu.row(s).noalias() -= (m.discount * pi(s, a)) * P.row(s * NA + a);
    for (int k = 0; k < NS - 1; ++k) {
      const int n = NS - k - 1;
      for (int i = k + 1; i < NS; ++i) {
        const T l = lu(i, k) / lu(k, k);
        lu(i, k) = l;
        if (l != T(0)) lu.row(i).tail(n).noalias() -= l * lu.row(k).tail(n);
      }
    }
  }
  void solve(V& b) const {
    for (int i = 1; i < NS; ++i) {
      T acc(0);
      for (int j = 0; j < i; ++j) acc += lu(i, j) * b(j);
      b(i) -= acc;
    }
    for (int i = NS - 1; i >= 0; --i) {
      T acc(0);
      for (int j = i + 1; j < NS; ++j) acc += lu(i, j) * b(j);
      b(i) = (b(i) - acc) / lu(i, i);
    }
  }
  void solve_transposed(V& b) const {
    for (int j = 0; j < NS; ++j) {
      b(j) /= lu(j, j);
      for (int i = j + 1; i < NS; ++i) b(i) -= b(j) * lu(j, i);
    }
    for (int j = NS - 1; j > 0; --j)
      for (int i = 0; i < j; ++i) b(i) -= b(j) * lu(j, i);
  }
  void evaluate(const M& m, const Pi& pi) {
    for (int s = 0; s < NS; ++s)
      value(s) = pi.row(s).dot(m.r().row(s)) - m.tau() * m.regularizer.value(s, pi.row(s));
    factorize(m, pi);
    solve(value);
    occupancy = m.rho();
    solve_transposed(occupancy);
    // Q as write_q forms it: a row dot product each up to kRowDotStates states (Eigen's dot with
    // SIMD, else one multiply-add chain in index order), Eigen's gemv kernel and a second pass
    // for r above.
    if constexpr (NS <= pbrl::detail::kRowDotStates) {
      for (int i = 0; i < NS * NA; ++i) {
#ifdef EIGEN_VECTORIZE
        const T dot = m.P().row(i).dot(value);
#else
        T dot = m.P()(i, 0) * value(0);
        for (int j = 1; j < NS; ++j) dot += m.P()(i, j) * value(j);
#endif
        q.data()[i] = m.reward[i] + m.discount * dot;
      }
    } else {
      Eigen::Map<pbrl::Vector<T, NS * NA>> flat(q.data());
      flat.noalias() = m.P() * value;
      flat = Eigen::Map<const pbrl::Vector<T, NS * NA>>(m.reward) + m.discount * flat;
    }
  }
};

template <typename T, int NS, int NA>
void check_direct_matches_previous(std::uint32_t seed, T zero_fraction) {
  struct Arrays {
    T reward[NS * NA], transition[NS * NA * NS], initial[NS];
  };
  auto a = std::make_unique<Arrays>();
  pbrl::Rng rng(seed);
  pbrl::random_reward(rng, a->reward, NS * NA, T(0.5));
  pbrl::random_transition(rng, a->transition, NS * NA, NS);
  // Sparse rows (zero multipliers and zero fill in the elimination): entries dropped at random,
  // the rest renormalized; the largest is always kept.
  for (int row = 0; row < NS * NA && zero_fraction > T(0); ++row) {
    T* p = a->transition + row * NS;
    const int keep = static_cast<int>(std::max_element(p, p + NS) - p);
    T sum(0);
    for (int t = 0; t < NS; ++t) {
      if (t != keep && rng.uniform<T>() < zero_fraction) p[t] = T(0);
      sum += p[t];
    }
    for (int t = 0; t < NS; ++t) p[t] /= sum;
  }
  pbrl::random_distribution(rng, a->initial, NS);
  const pbrl::Mdp<T, NS, NA> m{a->reward, a->transition, a->initial, T(0.9), {pbrl::RegularizerKind::entropy, T(0.1), nullptr}};
  REQUIRE(pbrl::validate(m) == Status::ok);
  pbrl::StateActionMatrix<T, NS, NA> pi, sigma;
  for (int s = 0; s < NS; ++s) pbrl::random_distribution(rng, pi.row(s).data(), NA);
  for (int s = 0; s < NS; ++s) pbrl::random_distribution(rng, sigma.row(s).data(), NA);

  auto previous = std::make_unique<PreviousDirect<T, NS, NA>>();
  previous->evaluate(m, pi);
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<T, NS, EvaluationMethod::direct>>();
  auto e = std::make_unique<pbrl::Evaluation<T, NS, NA>>();
  REQUIRE(pbrl::evaluate(m, pi, *ws, *e) == Status::ok);
  // Within rounding where fused: of the factors entrywise in max|entry|, of V, Q, d likewise.
  constexpr double rounding = 16;
  check_same_unless_fused(ws->lu, previous->lu.data(), NS * NS, rounding);
  check_same_unless_fused(e->value.data(), previous->value.data(), NS, rounding);
  check_same_unless_fused(e->occupancy.data(), previous->occupancy.data(), NS, rounding);
  check_same_unless_fused(e->q.data(), previous->q.data(), NS * NA, rounding);

  // The state-action start's occupancy, with the factors made again (factors_current = false).
  pbrl::StateVector<T, NS> warm = pbrl::StateVector<T, NS>::Zero(), start;
  pbrl::StateActionMatrix<T, NS, NA> mu;
  REQUIRE(pbrl::occupancy_from_start(m, {sigma, pi}, *ws, warm, mu) == Status::ok);
  start.setZero();
  for (int s = 0; s < NS; ++s)
    for (int k = 0; k < NA; ++k) {
      const T w = m.rho()(s) * sigma(s, k);
      if (w != T(0)) start.noalias() += w * m.P().row(s * NA + k).transpose();
    }
  start *= m.discount;
  previous->solve_transposed(start);
  check_same_unless_fused(warm.data(), start.data(), NS, rounding);
}
}  // namespace

TEST_CASE("direct evaluation: the unrolled and the blocked elimination give the previous numbers (to the bit unless fused), double and float") {
  // Unrolled (up to kUnrolledLuStates): small, the firmware's 10 and the largest; blocked: around
  // one panel, not a multiple of the tile, and the paper's.
  static_assert(pbrl::detail::kUnrolledLuStates == 16, "the sizes below straddle it");
#if PBRL_TEST_EVERY_SIZE
  check_direct_matches_previous<double, 3, 2>(41, 0);
  check_direct_matches_previous<float, 3, 2>(42, 0);
  check_direct_matches_previous<double, 9, 3>(43, 0);
  check_direct_matches_previous<float, 9, 3>(44, 0.6f);
  check_direct_matches_previous<float, 10, 5>(52, 0);
  check_direct_matches_previous<double, 16, 4>(53, 0.5);
  check_direct_matches_previous<float, 16, 4>(54, 0);
  check_direct_matches_previous<double, 17, 3>(55, 0);
  check_direct_matches_previous<double, 37, 5>(45, 0);
  check_direct_matches_previous<float, 37, 5>(46, 0);
  check_direct_matches_previous<double, 37, 5>(47, 0.9);
  check_direct_matches_previous<float, 37, 5>(48, 0.9f);
  check_direct_matches_previous<double, 100, 5>(49, 0);
  check_direct_matches_previous<float, 100, 5>(50, 0);
  check_direct_matches_previous<double, 100, 5>(51, 0.95);
#else
  // Cross targets: unrolled at the firmware's size, blocked around one panel and not a multiple
  // of the tile, dense and sparse, in Real.
  check_direct_matches_previous<Real, 10, 5>(52, 0);
  check_direct_matches_previous<Real, 9, 3>(43, Real(0.6));
  check_direct_matches_previous<Real, 37, 5>(45, 0);
  check_direct_matches_previous<Real, 37, 5>(47, Real(0.9));
#endif
}

TEST_CASE("evaluate_on_chain: another reward on the chain of an evaluation through ws gives evaluate()'s numbers") {
  const auto model = std::make_unique<RandomModel<S, A>>(91);
  Real other_reward[S * A];
  pbrl::Rng rng(92);
  pbrl::random_reward(rng, other_reward, S * A, Real(0.3));
  const auto m1 = model->mdp(Real(0.85), Real(0.2));
  auto m2 = m1;
  m2.reward = other_reward;
  m2.regularizer.tau = Real(0);  // only the reward and the regularizer differ
  const Mat<S, A> pi = random_policy<S, A>(rng);
  const Mat<S, A> other = random_policy<S, A>(rng);
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  auto fresh = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, S, A> chain, out, expected, unused;
  REQUIRE(pbrl::evaluate(m2, pi, *fresh, expected) == Status::ok);
  const auto same = [&](const pbrl::Evaluation<Real, S, A>& e) {
    CHECK(std::memcmp(e.value.data(), expected.value.data(), sizeof(Real) * S) == 0);
    CHECK(std::memcmp(e.occupancy.data(), expected.occupancy.data(), sizeof(Real) * S) == 0);
    CHECK(std::memcmp(e.q.data(), expected.q.data(), sizeof(Real) * S * A) == 0);
    CHECK(e.value_rho == expected.value_rho);
  };
  REQUIRE(pbrl::evaluate(m1, pi, *ws, chain) == Status::ok);
  CHECK(ws->factors_of == &chain);
  REQUIRE(pbrl::evaluate_on_chain(m2, pi, *ws, chain, out) == Status::ok);
  same(out);
  CHECK(ws->factors_of == &chain);  // it made no factorization
  // Refused input: status, out unchanged.
  Mat<S, A> bad = pi;
  bad(0, 0) = Real(-1);
  const auto before = out;
  CHECK(pbrl::evaluate_on_chain(m2, bad, *ws, chain, out) == Status::bad_policy);
  CHECK(std::memcmp(out.value.data(), before.value.data(), sizeof(Real) * S) == 0);
  // A chain whose factors ws no longer holds: evaluate().
  REQUIRE(pbrl::evaluate(m1, other, *ws, unused) == Status::ok);
  out = pbrl::Evaluation<Real, S, A>{};
  REQUIRE(pbrl::evaluate_on_chain(m2, pi, *ws, chain, out) == Status::ok);
  same(out);
  // Sweeps hold no factors: evaluate().
  auto swept = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps>>();
  swept->max_sweeps = 5000;
  pbrl::Evaluation<Real, S, A> s1, s2, s3;
  REQUIRE(pbrl::evaluate(m1, pi, *swept, s1) == Status::ok);
  REQUIRE(pbrl::evaluate_on_chain(m2, pi, *swept, s1, s2) == Status::ok);
  REQUIRE(pbrl::evaluate(m2, pi, *swept, s3) == Status::ok);
  CHECK(std::memcmp(s2.value.data(), s3.value.data(), sizeof(Real) * S) == 0);
}

TEST_CASE("evaluate without Q: V, d and V(rho) of evaluate() with Q to the bit, Q left as it was; the same errors") {
  const auto model = std::make_unique<RandomModel<S, A>>(93);
  pbrl::Rng rng(94);
  const auto m = model->mdp(Real(0.9), Real(0.3));
  const Mat<S, A> pi = random_policy<S, A>(rng);
  Mat<S, A> log_pi = pi.array().log().matrix();
  for (auto method : {0, 1}) {
    CAPTURE(method);
    pbrl::Evaluation<Real, S, A> full, partial;
    partial.q.setConstant(Real(7));  // a previous Q, which the call keeps
    Status a, b;
    if (method == 0) {
      auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
      a = pbrl::evaluate(m, pi, *ws, full, &log_pi);
      b = pbrl::evaluate(m, pi, *ws, partial, &log_pi, false);
      CHECK(ws->factors_of == &partial);  // its factors serve evaluate_on_chain as evaluate()'s do
    } else {
      auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps>>();
      ws->max_sweeps = 5000;
      a = pbrl::evaluate(m, pi, *ws, full, &log_pi);
      b = pbrl::evaluate(m, pi, *ws, partial, &log_pi, false);
    }
    REQUIRE(a == Status::ok);
    REQUIRE(b == Status::ok);
    CHECK(std::memcmp(partial.value.data(), full.value.data(), sizeof(Real) * S) == 0);
    CHECK(std::memcmp(partial.occupancy.data(), full.occupancy.data(), sizeof(Real) * S) == 0);
    CHECK(partial.value_rho == full.value_rho);
    CHECK((partial.q.array() == Real(7)).all());
  }
  // Refused input: evaluate()'s status, nothing of out changed.
  const Mat<S, A>* no_logs = nullptr;
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, S, A> out;
  REQUIRE(pbrl::evaluate(m, pi, *ws, out, no_logs, false) == Status::ok);
  const auto before = out;
  Mat<S, A> bad = pi;
  bad(0, 0) = Real(-1);
  CHECK(pbrl::evaluate(m, bad, *ws, out, no_logs, false) == Status::bad_policy);
  log_pi(1, 1) = std::numeric_limits<Real>::quiet_NaN();
  CHECK(pbrl::evaluate(m, pi, *ws, out, &log_pi, false) == Status::not_finite);
  CHECK(std::memcmp(out.value.data(), before.value.data(), sizeof(Real) * S) == 0);
  CHECK(std::memcmp(out.occupancy.data(), before.occupancy.data(), sizeof(Real) * S) == 0);
  CHECK(out.value_rho == before.value_rho);
}

TEST_CASE("evaluate_formed_policy: evaluate()'s numbers to the bit; evaluate()'s model, workspace and output errors, out unchanged") {
  const auto model = std::make_unique<RandomModel<S, A>>(95);
  pbrl::Rng rng(96);
  const auto m = model->mdp(Real(0.9), Real(0.3));
  const Mat<S, A> pi = random_policy<S, A>(rng);
  const Mat<S, A> log_pi = pi.array().log().matrix();
  const auto same = [](const pbrl::Evaluation<Real, S, A>& a, const pbrl::Evaluation<Real, S, A>& b) {
    CHECK(std::memcmp(a.value.data(), b.value.data(), sizeof(Real) * S) == 0);
    CHECK(std::memcmp(a.occupancy.data(), b.occupancy.data(), sizeof(Real) * S) == 0);
    CHECK(std::memcmp(a.q.data(), b.q.data(), sizeof(Real) * S * A) == 0);
    CHECK(a.value_rho == b.value_rho);
  };
  {
    auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
    pbrl::Evaluation<Real, S, A> a, b;
    REQUIRE(pbrl::evaluate(m, pi, *ws, a, &log_pi) == Status::ok);
    REQUIRE(pbrl::detail::evaluate_formed_policy(m, pi, *ws, b, &log_pi) == Status::ok);
    same(a, b);
    CHECK(ws->factors_of == &b);  // its factors serve evaluate_on_chain as evaluate()'s do
  }
  {
    auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::sweeps>>();
    ws->max_sweeps = 5000;
    pbrl::Evaluation<Real, S, A> a, b;
    REQUIRE(pbrl::evaluate(m, pi, *ws, a) == Status::ok);
    REQUIRE(pbrl::detail::evaluate_formed_policy(m, pi, *ws, b) == Status::ok);
    same(a, b);
    ws->max_sweeps = 0;  // a bad workspace
    CHECK(pbrl::detail::evaluate_formed_policy(m, pi, *ws, b) == pbrl::evaluate(m, pi, *ws, a));
    CHECK(pbrl::evaluate(m, pi, *ws, a) == Status::bad_setting);
  }
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, S, A> out;
  REQUIRE(pbrl::detail::evaluate_formed_policy(m, pi, *ws, out) == Status::ok);
  const auto before = out;
  auto bad_model = m;
  bad_model.discount = Real(1);
  CHECK(pbrl::detail::evaluate_formed_policy(bad_model, pi, *ws, out) == pbrl::evaluate(bad_model, pi, *ws, out));
  CHECK(pbrl::evaluate(bad_model, pi, *ws, out) != Status::ok);
  bad_model = m;
  bad_model.transition = nullptr;
  CHECK(pbrl::detail::evaluate_formed_policy(bad_model, pi, *ws, out) == Status::null_pointer);
  // Rewards near the largest finite value: V overflows, which the output checks catch.
  Real huge[S * A];
  for (Real& r : huge) r = std::numeric_limits<Real>::max() / Real(2);
  auto overflowing = m;
  overflowing.reward = huge;
  CHECK(pbrl::detail::evaluate_formed_policy(overflowing, pi, *ws, out) == Status::numerical_failure);
  CHECK(pbrl::evaluate(overflowing, pi, *ws, out) == Status::numerical_failure);
  same(out, before);
}

}  // namespace test_evaluation
