// Every validation path returns its status and leaves its inputs untouched.
// Each public call that takes data is fed each kind of bad input (null arrays, NaN/inf, negative
// probabilities, rows not summing to one, bad discounts, bad regularizers, parameters outside
// their sets, bad step sizes and settings); the test checks the exact Status and that every
// output and in-out argument (and the solver's state) is bit-for-bit what it was before the call.
//
#include "solver_support.hpp"
#include "pbrl/problems/reward_shaping.hpp"

#include <cstring>
#include <limits>

namespace test_validation {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 4, A = 3;
using MdpT = pbrl::Mdp<Real, S, A>;
using Eval = pbrl::Evaluation<Real, S, A>;
template <EvaluationMethod M>
using Ws = pbrl::EvaluationWorkspace<Real, S, M>;

constexpr Real kNaN = std::numeric_limits<Real>::quiet_NaN();
constexpr Real kInf = std::numeric_limits<Real>::infinity();
constexpr Real kMax = std::numeric_limits<Real>::max();

// ---- bitwise comparison: NaN-safe, and "unchanged" means every bit ----------------------

bool same(Real a, Real b) { return std::memcmp(&a, &b, sizeof(Real)) == 0; }
template <typename Derived>
bool same(const Eigen::PlainObjectBase<Derived>& a, const Eigen::PlainObjectBase<Derived>& b) {
  return std::memcmp(a.data(), b.data(), sizeof(typename Derived::Scalar) * std::size_t(a.size())) == 0;
}
template <int N>
bool same(const Real (&a)[N], const Real (&b)[N]) {
  return std::memcmp(a, b, sizeof(a)) == 0;
}
template <int S_, int A_>
bool same(const pbrl::Evaluation<Real, S_, A_>& a, const pbrl::Evaluation<Real, S_, A_>& b) {
  return same(a.value, b.value) && same(a.q, b.q) && same(a.occupancy, b.occupancy) &&
         same(a.value_rho, b.value_rho);
}
bool same(const Ws<EvaluationMethod::direct>& a, const Ws<EvaluationMethod::direct>& b) {
  return same(a.lu, b.lu) && same(a.value, b.value) && same(a.occupancy, b.occupancy) &&
         same(a.rhs, b.rhs);
}
bool same(const Ws<EvaluationMethod::sweeps>& a, const Ws<EvaluationMethod::sweeps>& b) {
  return a.max_sweeps == b.max_sweeps && same(a.tolerance, b.tolerance) &&
         a.last_sweeps == b.last_sweeps && a.max_sweeps_hit == b.max_sweeps_hit &&
         a.max_sweeps_hit_total == b.max_sweeps_hit_total && same(a.value, b.value) &&
         same(a.occupancy, b.occupancy) && same(a.rhs, b.rhs) && same(a.next, b.next);
}
bool same(const pbrl::SoftValueIterationResult<Real>& a, const pbrl::SoftValueIterationResult<Real>& b) {
  return a.iterations == b.iterations && a.converged == b.converged && same(a.change, b.change);
}
bool same(const pbrl::PbrlReport<Real>& a, const pbrl::PbrlReport<Real>& b) { return same_values(a, b); }
bool same(const pbrl::PolicySet<Real>& a, const pbrl::PolicySet<Real>& b) {
  return a.parameterization == b.parameterization && same(a.floor, b.floor) &&
         same(a.logit_bound, b.logit_bound);
}
bool same(const pbrl::PbrlSettings<Real>& a, const pbrl::PbrlSettings<Real>& b) { return same_values(a, b); }
bool same(const pbrl::Regularizer<Real, S, A>& a, const pbrl::Regularizer<Real, S, A>& b) {
  return a.kind == b.kind && same(a.tau, b.tau) && a.reference == b.reference;
}
bool same(const MdpT& a, const MdpT& b) {
  return a.reward == b.reward && a.transition == b.transition && a.initial == b.initial &&
         same(a.discount, b.discount) && same(a.regularizer, b.regularizer);
}
bool same(const RandomModel<S, A>& a, const RandomModel<S, A>& b) {
  return same(a.reward, b.reward) && same(a.transition, b.transition) && same(a.initial, b.initial) &&
         same(a.reference, b.reference);
}

// ---- garbage in every output, so that "unchanged" cannot hold by accident ---------------

Real garbage(pbrl::Rng& rng) { return Real(10) * rng.uniform<Real>() - Real(5); }
template <typename Derived>
void scramble(Eigen::PlainObjectBase<Derived>& m, pbrl::Rng& rng) {
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = garbage(rng);
}
void scramble(Eval& e, pbrl::Rng& rng) {
  scramble(e.value, rng);
  scramble(e.q, rng);
  scramble(e.occupancy, rng);
  e.value_rho = garbage(rng);
}
void scramble(Ws<EvaluationMethod::direct>& ws, pbrl::Rng& rng) {
  for (Real& v : ws.lu) v = garbage(rng);
  scramble(ws.value, rng);
  scramble(ws.occupancy, rng);
  scramble(ws.rhs, rng);
}
void scramble(Ws<EvaluationMethod::sweeps>& ws, pbrl::Rng& rng) {
  ws.last_sweeps = 12345;
  ws.max_sweeps_hit = true;
  ws.max_sweeps_hit_total = 6789;
  scramble(ws.value, rng);
  scramble(ws.occupancy, rng);
  scramble(ws.rhs, rng);
  scramble(ws.next, rng);
}

// Every output and in-out argument a call can take, filled with garbage (copy it to compare).
template <EvaluationMethod M>
struct Outputs {
  Ws<M> ws;
  Eval eval;
  Mat<S, A> log_pi, pi, grad, mu, q;
  Vec<S> warm, value;
  pbrl::SoftValueIterationResult<Real> result;
  explicit Outputs(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    scramble(ws, rng);
    scramble(eval, rng);
    scramble(log_pi, rng);
    scramble(pi, rng);
    scramble(grad, rng);
    scramble(mu, rng);
    scramble(q, rng);
    scramble(warm, rng);
    scramble(value, rng);
    result.iterations = 777;
    result.converged = true;
    result.change = Real(-3.5);
  }
};
// Everything but the workspace, which is scratch on a numerical_failure path.
template <EvaluationMethod M>
bool same_but_workspace(const Outputs<M>& a, const Outputs<M>& b) {
  return same(a.eval, b.eval) && same(a.log_pi, b.log_pi) && same(a.pi, b.pi) &&
         same(a.grad, b.grad) && same(a.mu, b.mu) && same(a.q, b.q) && same(a.warm, b.warm) &&
         same(a.value, b.value) && same(a.result, b.result);
}
template <EvaluationMethod M>
bool same(const Outputs<M>& a, const Outputs<M>& b) {
  return same(a.ws, b.ws) && same_but_workspace(a, b);
}

// ---- catalogues of bad inputs ------------------------------------------------------------

struct BadMdp {
  const char* what;
  MdpT mdp;
  Status expected;
};

// The defects an Mdp and a RewardShaping::Data share, each from `good`: each array null
// (add_null_arrays), the discount at 1, below 0 (`negative`) and NaN (add_bad_discounts).
// add(what, defective copy, expected status) takes each.
template <class T, class Add>
void add_null_arrays(const T& good, Add&& add) {
  T m = good;
  m.reward = nullptr;
  add("reward null", m, Status::null_pointer);
  m = good;
  m.transition = nullptr;
  add("transition null", m, Status::null_pointer);
  m = good;
  m.initial = nullptr;
  add("initial null", m, Status::null_pointer);
}
template <class T, class Add>
void add_bad_discounts(const T& good, Real negative, Add&& add) {
  T m = good;
  m.discount = Real(1);
  add("gamma = 1", m, Status::bad_discount);
  m.discount = negative;
  add("gamma < 0", m, Status::bad_discount);
  m.discount = kNaN;
  add("gamma NaN", m, Status::bad_discount);
}

// Models that the per-call checks (evaluate, occupancy_from_start, the oracles) must reject.
// Precedence: null arrays, then the discount, then tau.
constexpr int kBadMdps = 12;
void bad_mdps(const RandomModel<S, A>& model, BadMdp (&out)[kBadMdps]) {
  const MdpT good = model.mdp(Real(0.9), Real(0.2));
  int n = 0;
  auto add = [&](const char* what, MdpT m, Status st) { out[n++] = BadMdp{what, m, st}; };
  add_null_arrays(good, add);
  MdpT m = good;
  m.initial = nullptr;
  m.discount = kNaN;
  m.regularizer.tau = Real(-1);
  add("null before discount and tau", m, Status::null_pointer);
  add_bad_discounts(good, Real(-0.1), add);
  m = good;
  m.discount = kInf;
  m.regularizer.tau = Real(-1);
  add("gamma inf before tau", m, Status::bad_discount);
  m = good;
  m.regularizer.tau = Real(-0.1);
  add("tau < 0", m, Status::bad_regularization);
  m.regularizer.tau = kNaN;
  add("tau NaN", m, Status::bad_regularization);
  m.regularizer.tau = kInf;
  add("tau inf", m, Status::bad_regularization);
  m.regularizer.tau = -kInf;
  add("tau -inf", m, Status::bad_regularization);
  REQUIRE(n == kBadMdps);
}

// Calls f(what, model, expected) for each of bad_mdps(model).
template <class F>
void for_each_bad_mdp(const RandomModel<S, A>& model, F&& f) {
  BadMdp mdps[kBadMdps];
  bad_mdps(model, mdps);
  for (const BadMdp& c : mdps) f(c.what, c.mdp, c.expected);
}

struct BadPolicy {
  const char* what;
  Mat<S, A> pi;
  Status expected;
};

constexpr int kBadPolicies = 7;
void bad_policies(const Mat<S, A>& good, BadPolicy (&out)[kBadPolicies]) {
  int n = 0;
  auto add = [&](const char* what, const Mat<S, A>& pi, Status st) { out[n++] = BadPolicy{what, pi, st}; };
  Mat<S, A> p = good;
  p(1, 2) = kNaN;
  add("NaN entry", p, Status::not_finite);
  p = good;
  p(3, 0) = kInf;
  add("inf entry", p, Status::not_finite);
  p = good;
  p(0, 1) = -kInf;
  add("-inf entry", p, Status::not_finite);
  p = good;
  p.row(2) << Real(1.25), Real(-0.25), Real(0);
  add("negative probability, row sums to 1", p, Status::bad_policy);
  p = good;
  p.row(1) *= Real(0.9);
  add("row sums to 0.9", p, Status::bad_policy);
  p = good;
  p.row(0) *= Real(1.1);
  add("row sums to 1.1", p, Status::bad_policy);
  p = good;
  p.row(3).setZero();
  add("row of zeros", p, Status::bad_policy);
  REQUIRE(n == kBadPolicies);
}

Mat<S, A> uniform_policy() { return Mat<S, A>::Constant(Real(1) / A); }

// A model that passes validate() but whose values overflow (reward max/8, gamma 0.9): every
// evaluation of it ends in Status::numerical_failure.
std::unique_ptr<RandomModel<S, A>> overflowing_model() {
  auto model = std::make_unique<RandomModel<S, A>>(91);
  for (Real& r : model->reward) r = kMax / Real(8);
  return model;
}

}  // namespace

// ============================================================================================

TEST_CASE("every Status has a distinct, non-null name") {
  constexpr int kCount = static_cast<int>(Status::checkpoint_other_settings) + 1;
  REQUIRE(kCount == 20);
  for (int i = 0; i < kCount; ++i) {
    const Status st = static_cast<Status>(i);
    const char* name = pbrl::to_string(st);
    CAPTURE(i);
    REQUIRE(name != nullptr);
    CHECK(std::strlen(name) > 0);
    CHECK(std::strcmp(name, "unknown") != 0);
    CHECK(pbrl::ok(st) == (i == 0));
    for (int j = 0; j < i; ++j) CHECK(std::strcmp(name, pbrl::to_string(static_cast<Status>(j))) != 0);
    // The names are kStatusTable's (the reference page prints its meanings) and read back.
    REQUIRE(i < pbrl::kStatusCount);
    CHECK(pbrl::kStatusTable[i].status == st);
    CHECK(std::strcmp(name, pbrl::kStatusTable[i].name) == 0);
    CHECK(std::strlen(pbrl::kStatusTable[i].meaning) > 0);
    Status back = Status::ok;
    CHECK(pbrl::enum_from_name(name, back));
    CHECK(back == st);
  }
  CHECK(pbrl::kStatusCount == kCount);
  CHECK(std::strcmp(pbrl::to_string(Status::ok), "ok") == 0);
  CHECK(std::strcmp(pbrl::to_string(Status::numerical_failure), "numerical_failure") == 0);
  CHECK(std::strcmp(pbrl::to_string(Status::checkpoint_corrupt), "checkpoint_corrupt") == 0);
  // Values outside the enum still get a name.
  for (int i : {kCount, 100, 255}) {
    const char* name = pbrl::to_string(static_cast<Status>(i));
    REQUIRE(name != nullptr);
    CHECK(std::strcmp(name, "unknown") == 0);
  }
}

TEST_CASE("all_finite: any infinity or NaN at any position and length fails; every finite value passes") {
  const Real big = std::numeric_limits<Real>::max();
  const Real finite[] = {Real(0), -Real(0), Real(1), -big, big, std::numeric_limits<Real>::denorm_min(),
                         std::numeric_limits<Real>::min(), Real(-3.5)};
  const Real bad[] = {std::numeric_limits<Real>::infinity(), -std::numeric_limits<Real>::infinity(),
                      std::numeric_limits<Real>::quiet_NaN(), -std::numeric_limits<Real>::quiet_NaN()};
  Real data[13];
  for (int n = 0; n <= 13; ++n) {
    CAPTURE(n);
    for (int i = 0; i < n; ++i) data[i] = finite[(i * 3 + n) % 8];
    CHECK(pbrl::detail::all_finite(data, n));
    for (int at = 0; at < n; ++at)
      for (const Real b : bad) {
        CAPTURE(at);
        const Real keep = data[at];
        data[at] = b;
        CHECK_FALSE(pbrl::detail::all_finite(data, n));
        data[at] = keep;
      }
  }
  // The Eigen overload, contiguous and not (a column of a row-major matrix).
  Mat<S, A> m = Mat<S, A>::Constant(big);
  CHECK(pbrl::all_finite(m));
  CHECK(pbrl::all_finite(m.col(1)));
  m(S - 1, 1) = -std::numeric_limits<Real>::infinity();
  CHECK_FALSE(pbrl::all_finite(m));
  CHECK_FALSE(pbrl::all_finite(m.col(1)));
}

TEST_CASE("validate_discount accepts [0, 1) only") {
  for (Real g : {Real(1), Real(1.5), Real(-0.1), -std::numeric_limits<Real>::min(), kNaN, kInf,
                 -kInf, kMax}) {
    CAPTURE(g);
    CHECK(pbrl::validate_discount(g) == Status::bad_discount);
  }
  for (Real g : {Real(0), Real(0.5), Real(0.99), std::nextafter(Real(1), Real(0))}) {
    CAPTURE(g);
    CHECK(pbrl::validate_discount(g) == Status::ok);
  }
}

TEST_CASE("validate_transition and validate_initial: each defect, arrays untouched") {
  const auto model = std::make_unique<RandomModel<S, A>>(1);
  CHECK(pbrl::validate_transition<Real, S, A>(model->transition) == Status::ok);
  CHECK(pbrl::validate_initial<Real, S>(model->initial) == Status::ok);
  CHECK(pbrl::validate_transition<Real, S, A>(nullptr) == Status::null_pointer);
  CHECK(pbrl::validate_initial<Real, S>(nullptr) == Status::null_pointer);

  const Real tol = pbrl::distribution_tolerance<Real>() * S;
  auto transition_case = [&](const char* what, int index, Real value, Status expected) {
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    bad->transition[index] = value;
    const auto copy = std::make_unique<RandomModel<S, A>>(*bad);
    INFO(doctest::String(what));
    CHECK(pbrl::validate_transition<Real, S, A>(bad->transition) == expected);
    CHECK(same(*bad, *copy));
  };
  transition_case("NaN", 5, kNaN, Status::not_finite);
  transition_case("inf", 0, kInf, Status::not_finite);
  transition_case("-inf", S * A * S - 1, -kInf, Status::not_finite);
  {
    // Row 2: a negative entry with the row still summing to one.
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    Real* row = bad->transition + 2 * S;
    for (int t = 0; t < S; ++t) row[t] = Real(0);
    row[0] = Real(1.5);
    row[1] = Real(-0.5);
    const auto copy = std::make_unique<RandomModel<S, A>>(*bad);
    CHECK(pbrl::validate_transition<Real, S, A>(bad->transition) == Status::bad_transition);
    CHECK(same(*bad, *copy));
  }
  for (Real factor : {Real(0.9), Real(1.1), Real(0), Real(1) + Real(8) * tol}) {
    CAPTURE(factor);
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    for (int t = 0; t < S; ++t) bad->transition[(S * A - 1) * S + t] *= factor;  // last row
    const auto copy = std::make_unique<RandomModel<S, A>>(*bad);
    CHECK(pbrl::validate_transition<Real, S, A>(bad->transition) == Status::bad_transition);
    CHECK(same(*bad, *copy));
  }

  auto initial_case = [&](const char* what, const Vec<S>& rho, Status expected) {
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    for (int s = 0; s < S; ++s) bad->initial[s] = rho(s);
    const auto copy = std::make_unique<RandomModel<S, A>>(*bad);
    INFO(doctest::String(what));
    CHECK(pbrl::validate_initial<Real, S>(bad->initial) == expected);
    CHECK(same(*bad, *copy));
  };
  const Vec<S> rho = Eigen::Map<const Vec<S>>(model->initial);
  Vec<S> r = rho;
  r(1) = kNaN;
  initial_case("NaN", r, Status::not_finite);
  r = rho;
  r(0) = kInf;
  initial_case("inf", r, Status::not_finite);
  r << Real(0.5), Real(0), Real(0.25), Real(0.25);
  initial_case("a zero entry", r, Status::bad_distribution);
  r << Real(0.5), Real(-0.25), Real(0.5), Real(0.25);
  initial_case("a negative entry", r, Status::bad_distribution);
  initial_case("sums to 0.9", rho * Real(0.9), Status::bad_distribution);
  initial_case("sums to 1.1", rho * Real(1.1), Status::bad_distribution);
  initial_case("sums to 1 + 8 tol", rho * (Real(1) + Real(8) * tol), Status::bad_distribution);
  initial_case("valid", Vec<S>::Constant(Real(1) / S), Status::ok);
}

TEST_CASE("validate(Regularizer): tau, kind and the reference policy") {
  const auto model = std::make_unique<RandomModel<S, A>>(2);
  using Reg = pbrl::Regularizer<Real, S, A>;
  for (Real tau : {Real(-0.1), -std::numeric_limits<Real>::min(), kNaN, kInf, -kInf}) {
    CAPTURE(tau);
    CHECK(pbrl::validate(Reg{RegularizerKind::entropy, tau, nullptr}) == Status::bad_regularization);
    // tau is checked before the reference
    CHECK(pbrl::validate(Reg{RegularizerKind::kl_reference, tau, nullptr}) == Status::bad_regularization);
  }
  for (Real tau : {Real(0), Real(0.3), kMax}) {
    CAPTURE(tau);
    CHECK(pbrl::validate(Reg{RegularizerKind::entropy, tau, nullptr}) == Status::ok);
    CHECK(pbrl::validate(Reg{RegularizerKind::kl_reference, tau, model->reference}) == Status::ok);
    // kl_reference needs its array even at tau = 0
    CHECK(pbrl::validate(Reg{RegularizerKind::kl_reference, tau, nullptr}) == Status::null_pointer);
  }
  for (int kind : {2, 7, 255}) {
    CAPTURE(kind);
    CHECK(pbrl::validate(Reg{static_cast<RegularizerKind>(kind), Real(0.1), model->reference}) ==
          Status::bad_regularization);
  }
  auto reference_case = [&](const char* what, int s, const Eigen::Matrix<Real, 1, A>& row, Status expected) {
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    for (int a = 0; a < A; ++a) bad->reference[s * A + a] = row(a);
    const auto copy = std::make_unique<RandomModel<S, A>>(*bad);
    const Reg reg{RegularizerKind::kl_reference, Real(0.2), bad->reference};
    const Reg reg_copy = reg;
    INFO(doctest::String(what));
    CHECK(pbrl::validate(reg) == expected);
    CHECK(same(reg, reg_copy));
    CHECK(same(*bad, *copy));
  };
  Eigen::Matrix<Real, 1, A> row;
  row << Real(0.5), kNaN, Real(0.25);
  reference_case("NaN", 1, row, Status::not_finite);
  row << Real(0.5), Real(0.5), kInf;
  reference_case("inf", 3, row, Status::not_finite);
  row << Real(0.5), Real(0.5), Real(0);
  reference_case("a zero entry", 0, row, Status::bad_regularization);
  row << Real(0.75), Real(0.5), Real(-0.25);
  reference_case("a negative entry", 2, row, Status::bad_regularization);
  row << Real(0.3), Real(0.3), Real(0.3);
  reference_case("row sums to 0.9", 3, row, Status::bad_regularization);
  row << Real(0.5), Real(0.3), Real(0.3);
  reference_case("row sums to 1.1", 1, row, Status::bad_regularization);
  row << Real(0.25), Real(0.25), Real(0.5);
  reference_case("valid", 1, row, Status::ok);
}

TEST_CASE("validate(Mdp): every field, in order, arrays untouched") {
  const auto model = std::make_unique<RandomModel<S, A>>(3);
  const MdpT good = model->mdp(Real(0.9), Real(0.2), RegularizerKind::kl_reference);
  REQUIRE(pbrl::validate(good) == Status::ok);
  auto mdp_case = [&](const char* what, const MdpT& m, Status expected) {
    const MdpT copy = m;
    INFO(doctest::String(what));
    CHECK(pbrl::validate(m) == expected);
    CHECK(same(m, copy));
  };
  add_null_arrays(good, mdp_case);
  MdpT m = good;
  m.regularizer.reference = nullptr;
  mdp_case("reference null", m, Status::null_pointer);
  add_bad_discounts(good, Real(-0.5), mdp_case);
  m = good;
  m.regularizer.tau = Real(-1);
  mdp_case("tau < 0", m, Status::bad_regularization);
  m = good;
  m.regularizer.kind = static_cast<RegularizerKind>(9);
  mdp_case("bad regularizer kind", m, Status::bad_regularization);

  struct Edit {
    const char* what;
    int array;  // 0 reward, 1 transition, 2 initial, 3 reference
    int index;
    Real value;
    Status expected;
  };
  const Edit edits[] = {
      {"reward NaN", 0, 4, kNaN, Status::not_finite},
      {"reward inf", 0, 0, kInf, Status::not_finite},
      {"reward -inf", 0, S * A - 1, -kInf, Status::not_finite},
      {"transition NaN", 1, 7, kNaN, Status::not_finite},
      {"transition negative", 1, 3, Real(-0.01), Status::bad_transition},
      {"transition row sum", 1, 0, Real(0.99), Status::bad_transition},
      {"initial NaN", 2, 2, kNaN, Status::not_finite},
      {"initial zero", 2, 0, Real(0), Status::bad_distribution},
      {"initial negative", 2, 1, Real(-0.1), Status::bad_distribution},
      {"reference NaN", 3, 5, kNaN, Status::not_finite},
      {"reference zero", 3, 5, Real(0), Status::bad_regularization},
  };
  for (const Edit& e : edits) {
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    Real* arrays[] = {bad->reward, bad->transition, bad->initial, bad->reference};
    arrays[e.array][e.index] = e.value;
    const auto copy = std::make_unique<RandomModel<S, A>>(*bad);
    mdp_case(e.what, bad->mdp(Real(0.9), Real(0.2), RegularizerKind::kl_reference), e.expected);
    CHECK(same(*bad, *copy));
  }
  // The order of the checks: reward, transition, initial, discount, regularizer.
  {
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    bad->reward[0] = kNaN;
    bad->transition[0] = Real(-1);
    bad->initial[0] = Real(0);
    MdpT b = bad->mdp(Real(1), Real(-1), RegularizerKind::kl_reference);
    mdp_case("all bad: reward first", b, Status::not_finite);
    bad->reward[0] = Real(0);
    mdp_case("then the transition", b, Status::bad_transition);
    bad->transition[0] = model->transition[0];
    mdp_case("then rho", b, Status::bad_distribution);
    bad->initial[0] = model->initial[0];
    mdp_case("then gamma", b, Status::bad_discount);
    b.discount = Real(0.5);
    mdp_case("then tau", b, Status::bad_regularization);
  }
}

TEST_CASE("validate(PolicySet), validate_parameters and validate_policy") {
  using Set = pbrl::PolicySet<Real>;
  auto set_case = [](const Set& set, Status expected) {
    const Set copy = set;
    CHECK(pbrl::validate<Real, A>(set) == expected);
    CHECK(same(set, copy));
  };
  for (Real floor : {Real(0), Real(-1e-3), -kInf, kNaN, kInf, Real(1) / A, Real(0.5), Real(1)}) {
    CAPTURE(floor);
    set_case(Set{Parameterization::direct, floor, Real(50)}, Status::bad_setting);
    set_case(Set{Parameterization::softmax, floor, Real(50)}, Status::ok);  // floor unused
  }
  for (Real bound : {Real(0), Real(-1), kNaN, kInf, -kInf}) {
    CAPTURE(bound);
    set_case(Set{Parameterization::softmax, Real(1e-3), bound}, Status::bad_setting);
    set_case(Set{Parameterization::direct, Real(1e-3), bound}, Status::ok);  // bound unused
  }
  for (int p : {2, 3, 255}) {
    CAPTURE(p);
    set_case(Set{static_cast<Parameterization>(p), Real(1e-3), Real(50)}, Status::bad_setting);
  }
  set_case(Set{Parameterization::direct, Real(0.3), Real(50)}, Status::ok);
  set_case(Set{Parameterization::direct, Real(1e-6), Real(50)}, Status::ok);
  set_case(Set{}, Status::ok);

  auto params_case = [](const char* what, const Set& set, const Mat<S, A>& y, Status expected) {
    const Mat<S, A> copy = y;
    INFO(doctest::String(what));
    CHECK(pbrl::validate_parameters<Real, S, A>(set, y) == expected);
    CHECK(same(y, copy));
  };
  const Set softmax{Parameterization::softmax, Real(1e-3), Real(4)};
  const Set direct{Parameterization::direct, Real(0.01), Real(4)};
  pbrl::Rng rng(9);
  const Mat<S, A> logits = random_logits<S, A>(rng, Real(3));
  const Mat<S, A> probs = uniform_policy();
  params_case("softmax valid", softmax, logits, Status::ok);
  params_case("softmax at the bound", softmax, Mat<S, A>::Constant(Real(4)), Status::ok);
  params_case("softmax at -bound", softmax, Mat<S, A>::Constant(Real(-4)), Status::ok);
  params_case("direct valid", direct, probs, Status::ok);
  Mat<S, A> y = logits;
  y(2, 1) = Real(4.5);
  params_case("softmax over the bound", softmax, y, Status::bad_policy);
  y(2, 1) = Real(-4.5);
  params_case("softmax under -bound", softmax, y, Status::bad_policy);
  y(2, 1) = kNaN;
  params_case("softmax NaN", softmax, y, Status::not_finite);
  y(2, 1) = kInf;
  params_case("softmax inf", softmax, y, Status::not_finite);
  Set bad = softmax;
  bad.logit_bound = Real(0);
  params_case("bad set first (softmax)", bad, y, Status::bad_setting);
  bad = direct;
  bad.floor = Real(0);
  params_case("bad set first (direct)", bad, y, Status::bad_setting);
  bad.parameterization = static_cast<Parameterization>(5);
  params_case("bad parameterization", bad, probs, Status::bad_setting);
  y = probs;
  y(1, 0) = kNaN;
  params_case("direct NaN", direct, y, Status::not_finite);
  y = probs;
  y.row(3) << Real(0.001), Real(0.4995), Real(0.4995);
  params_case("direct row below the floor", direct, y, Status::bad_policy);
  y.row(3) << Real(-0.1), Real(0.55), Real(0.55);
  params_case("direct negative entry", direct, y, Status::bad_policy);
  y.row(3) << Real(0.4), Real(0.4), Real(0.3);
  params_case("direct row sums to 1.1", direct, y, Status::bad_policy);
  y.row(3) << Real(0.3), Real(0.3), Real(0.3);
  params_case("direct row sums to 0.9", direct, y, Status::bad_policy);
  y.row(3) << Real(0.01), Real(0.01), Real(0.98);
  params_case("direct row at the floor", direct, y, Status::ok);

  auto policy_case = [](const char* what, const Mat<S, A>& pi, Status expected) {
    const Mat<S, A> copy = pi;
    INFO(doctest::String(what));
    CHECK(pbrl::validate_policy<Real, S, A>(pi) == expected);
    CHECK(same(pi, copy));
  };
  policy_case("uniform", probs, Status::ok);
  Mat<S, A> one_hot = Mat<S, A>::Zero();
  one_hot.col(1).setOnes();
  policy_case("zeros are allowed", one_hot, Status::ok);
  BadPolicy cases[kBadPolicies];
  bad_policies(probs, cases);
  for (const BadPolicy& c : cases) policy_case(c.what, c.pi, c.expected);
}

// ---- evaluation --------------------------------------------------------------------------

namespace {
template <EvaluationMethod M>
void evaluate_rejects() {
  const auto model = std::make_unique<RandomModel<S, A>>(4);
  const MdpT good = model->mdp(Real(0.9), Real(0.2));
  const Mat<S, A> pi = uniform_policy();
  auto out = std::make_unique<Outputs<M>>(40);
  {  // the fixture is valid: errors below come from the one defect each case has
    auto scratch = std::make_unique<Outputs<M>>(*out);
    REQUIRE(pbrl::evaluate(good, pi, scratch->ws, scratch->eval) == Status::ok);
  }
  auto expect = [&](const char* what, const MdpT& m, const Mat<S, A>& p, Status expected) {
    const auto before = std::make_unique<Outputs<M>>(*out);
    const MdpT m_copy = m;
    const Mat<S, A> p_copy = p;
    INFO(doctest::String(what));
    CHECK(pbrl::evaluate(m, p, out->ws, out->eval) == expected);
    CHECK(same(*out, *before));
    CHECK(same(m, m_copy));
    CHECK(same(p, p_copy));
  };
  for_each_bad_mdp(*model, [&](const char* what, const MdpT& m, Status st) { expect(what, m, pi, st); });
  BadPolicy policies[kBadPolicies];
  bad_policies(pi, policies);
  for (const BadPolicy& c : policies) expect(c.what, good, c.pi, c.expected);
  MdpT m = good;
  m.reward = nullptr;
  expect("null model before bad policy", m, policies[0].pi, Status::null_pointer);

  // numerical_failure: a model that passed validate() whose values overflow. `out` is untouched;
  // the workspace is scratch and does get written on this path (not checked).
  const auto huge = overflowing_model();
  REQUIRE(pbrl::validate(huge->mdp(Real(0.9), Real(0.2))) == Status::ok);
  {
    const Eval before = out->eval;
    CHECK(pbrl::evaluate(huge->mdp(Real(0.9), Real(0.2)), pi, out->ws, out->eval) ==
          Status::numerical_failure);
    CHECK(same(out->eval, before));
  }
  // Per-call checks do not look at model values (validate(mdp) does): an infinite reward or a
  // NaN transition is a numerical failure here, again with `out` untouched.
  for (int which = 0; which < 2; ++which) {
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    if (which == 0) bad->reward[3] = kInf;
    else bad->transition[6] = kNaN;
    const Eval before = out->eval;
    CAPTURE(which);
    CHECK(pbrl::evaluate(bad->mdp(Real(0.9), Real(0.2)), pi, out->ws, out->eval) == Status::numerical_failure);
    CHECK(same(out->eval, before));
  }
  // Likewise a reference policy with a zero entry (log ref = -inf): numerical_failure.
  {
    auto bad = std::make_unique<RandomModel<S, A>>(*model);
    bad->reference[4] = Real(0);
    const Eval before = out->eval;
    CHECK(pbrl::evaluate(bad->mdp(Real(0.9), Real(0.2), RegularizerKind::kl_reference), pi, out->ws, out->eval) ==
          Status::numerical_failure);
    CHECK(same(out->eval, before));
  }
}
}  // namespace

TEST_CASE("uniform_parameters: the uniform policy, inside its set, in either parameterization") {
  for (const Parameterization param : {Parameterization::direct, Parameterization::softmax}) {
    CAPTURE(static_cast<int>(param));
    pbrl::PolicySet<Real> set;
    set.parameterization = param;
    set.floor = Real(0.3);  // direct: a floor near 1/A (0.3 * 3 < 1), which 1/A still meets
    Mat<S, A> y = Mat<S, A>::Constant(Real(7));
    pbrl::uniform_parameters(set, y);
    CHECK(pbrl::validate_parameters<Real, S, A>(set, y) == Status::ok);
    Mat<S, A> pi;
    pbrl::policy_from_parameters<Real, S, A>(param, y, pi);
    CHECK((pi.array() - Real(1) / Real(A)).abs().maxCoeff() <= 4 * std::numeric_limits<Real>::epsilon());
  }
}

TEST_CASE("evaluate: every rejected input leaves workspace and output untouched") {
  SUBCASE("direct") { evaluate_rejects<EvaluationMethod::direct>(); }
  SUBCASE("sweeps") { evaluate_rejects<EvaluationMethod::sweeps>(); }
}

TEST_CASE("evaluate (sweeps): a non-finite warm start is rejected, output untouched") {
  // In sweep mode `out` is also the warm start. A NaN there is reported as numerical_failure
  // (occupancy_from_start reports the same defect in its warm start as not_finite).
  const auto model = std::make_unique<RandomModel<S, A>>(5);
  const MdpT m = model->mdp(Real(0.9), Real(0.2));
  auto out = std::make_unique<Outputs<EvaluationMethod::sweeps>>(50);
  for (int field = 0; field < 2; ++field) {
    Eval& e = out->eval;
    if (field == 0) e.value(1) = kNaN;
    else e.occupancy(2) = kInf;
    const Eval before = e;
    CAPTURE(field);
    const Status st = pbrl::evaluate(m, uniform_policy(), out->ws, e);
    CHECK(st != Status::ok);
    CHECK((st == Status::not_finite || st == Status::numerical_failure));
    CHECK(same(e, before));
    e.value(1) = Real(0);
    e.occupancy(2) = Real(0);
  }
}

namespace {
template <EvaluationMethod M>
void occupancy_rejects() {
  const auto model = std::make_unique<RandomModel<S, A>>(6);
  const MdpT good = model->mdp(Real(0.85), Real(0.3));
  pbrl::Rng rng(61);
  const Mat<S, A> pi = random_policy<S, A>(rng), sigma = random_policy<S, A>(rng);
  auto out = std::make_unique<Outputs<M>>(60);
  {
    auto scratch = std::make_unique<Outputs<M>>(*out);
    REQUIRE(pbrl::occupancy_from_start(good, {sigma, pi}, scratch->ws, scratch->warm, scratch->mu) == Status::ok);
  }
  auto expect = [&](const char* what, const MdpT& m, const Mat<S, A>& sg, const Mat<S, A>& p,
                    Status expected) {
    for (bool factors_current : {false, true}) {
      const auto before = std::make_unique<Outputs<M>>(*out);
      const Mat<S, A> sg_copy = sg, p_copy = p;
      INFO(doctest::String(what));
      CAPTURE(factors_current);
      CHECK(pbrl::occupancy_from_start(m, {sg, p}, out->ws, out->warm, out->mu, factors_current) == expected);
      CHECK(same(*out, *before));
      CHECK(same(sg, sg_copy));
      CHECK(same(p, p_copy));
    }
  };
  for_each_bad_mdp(*model, [&](const char* what, const MdpT& m, Status st) { expect(what, m, sigma, pi, st); });
  BadPolicy policies[kBadPolicies];
  bad_policies(pi, policies);
  for (const BadPolicy& c : policies) expect(c.what, good, sigma, c.pi, c.expected);  // pi
  for (const BadPolicy& c : policies) expect(c.what, good, c.pi, pi, c.expected);     // sigma
  // pi is checked before sigma
  expect("bad pi and sigma", good, policies[3].pi, policies[0].pi, Status::not_finite);

  // A non-finite warm start
  for (Real v : {kNaN, kInf, -kInf}) {
    CAPTURE(v);
    out->warm(1) = v;
    expect("non-finite warm start", good, sigma, pi, Status::not_finite);
  }
  expect("bad pi before warm start", good, sigma, policies[4].pi, Status::bad_policy);
  expect("bad sigma before warm start", good, policies[4].pi, pi, Status::bad_policy);
  out->warm(1) = Real(0);

  // numerical_failure (a NaN in P, which only validate(mdp) checks): warm and mu untouched,
  // the workspace is scratch.
  auto bad = std::make_unique<RandomModel<S, A>>(*model);
  bad->transition[2] = kNaN;
  const Vec<S> warm = out->warm;
  const Mat<S, A> mu = out->mu;
  CHECK(pbrl::occupancy_from_start(bad->mdp(Real(0.85), Real(0.3)), {sigma, pi}, out->ws, out->warm, out->mu) ==
        Status::numerical_failure);
  CHECK(same(out->warm, warm));
  CHECK(same(out->mu, mu));
}
}  // namespace

TEST_CASE("occupancy_from_start: every rejected input leaves workspace, warm start and output untouched") {
  SUBCASE("direct") { occupancy_rejects<EvaluationMethod::direct>(); }
  SUBCASE("sweeps") { occupancy_rejects<EvaluationMethod::sweeps>(); }
}

// ---- oracles -----------------------------------------------------------------------------

namespace {
// An oracle step's checks of its in-out policy, at eta = 1: log_pi non-finite at (row, col),
// checked before the model (`nulled`, a model with a null array) and pi; each bad policy as pi;
// and a numerical failure inside the evaluation (an overflowing model) that writes nothing but
// the workspace (scratch). expect(what, mdp, status): the step on `out` expected to fail with
// that status, `out` untouched; step(mdp): the step on `out`, its status.
template <EvaluationMethod M, class Expect, class Step>
void policy_rejects(Outputs<M>& out, const MdpT& good, const MdpT& nulled, int row, int col, Expect&& expect,
                    Step&& step) {
  const Mat<S, A> log_pi = out.log_pi, pi = out.pi;
  for (Real v : {kNaN, kInf, -kInf}) {
    out.log_pi(row, col) = v;
    expect("log_pi non-finite", good, Status::not_finite);
    expect("log_pi before the model", nulled, Status::not_finite);
  }
  out.log_pi = log_pi;
  BadPolicy policies[kBadPolicies];
  bad_policies(pi, policies);
  for (const BadPolicy& c : policies) {
    out.pi = c.pi;
    expect(c.what, good, c.expected);
  }
  out.pi = pi;

  const auto huge = overflowing_model();
  const auto before = std::make_unique<Outputs<M>>(out);
  CHECK(step(huge->mdp(Real(0.9), Real(0.2))) == Status::numerical_failure);
  CHECK(same_but_workspace(out, *before));
}

template <EvaluationMethod M>
void pmd_rejects() {
  const auto model = std::make_unique<RandomModel<S, A>>(7);
  const MdpT good = model->mdp(Real(0.9), Real(0.2), RegularizerKind::kl_reference);
  auto out = std::make_unique<Outputs<M>>(70);
  out->pi = uniform_policy();
  out->log_pi = out->pi.array().log().matrix();
  {
    auto scratch = std::make_unique<Outputs<M>>(*out);
    REQUIRE(pbrl::pmd_step(good, Real(1), scratch->ws, scratch->eval, {scratch->log_pi, scratch->pi}) ==
            Status::ok);
  }
  auto expect = [&](const char* what, const MdpT& m, Real eta, Status expected) {
    const auto before = std::make_unique<Outputs<M>>(*out);
    INFO(doctest::String(what));
    CAPTURE(eta);
    CHECK(pbrl::pmd_step(m, eta, out->ws, out->eval, {out->log_pi, out->pi}) == expected);
    CHECK(same(*out, *before));
  };
  for (Real eta : {Real(0), -Real(0), Real(-1), kNaN, kInf, -kInf})
    expect("bad eta", good, eta, Status::bad_step_size);
  MdpT nulled = good;
  nulled.reward = nullptr;
  expect("eta before the model", nulled, Real(0), Status::bad_step_size);
  for_each_bad_mdp(*model, [&](const char* what, const MdpT& m, Status st) { expect(what, m, Real(1), st); });

  policy_rejects(*out, good, nulled, 2, 2,
                 [&](const char* what, const MdpT& m, Status st) { expect(what, m, Real(1), st); },
                 [&](const MdpT& m) { return pbrl::pmd_step(m, Real(1), out->ws, out->eval, {out->log_pi, out->pi}); });
}

template <EvaluationMethod M>
void policy_gradient_rejects(Parameterization param) {
  const auto model = std::make_unique<RandomModel<S, A>>(8);
  const MdpT good = model->mdp(Real(0.9), Real(0.2));
  const pbrl::PolicySet<Real> set{param, Real(1e-3), Real(20)};
  auto out = std::make_unique<Outputs<M>>(80);
  out->pi = uniform_policy();
  out->log_pi = out->pi.array().log().matrix();
  {
    auto scratch = std::make_unique<Outputs<M>>(*out);
    REQUIRE(pbrl::policy_gradient_step(good, set, Real(1), scratch->ws, scratch->eval, scratch->grad,
                                       {scratch->log_pi, scratch->pi}) == Status::ok);
  }
  auto expect = [&](const char* what, const MdpT& m, const pbrl::PolicySet<Real>& st, Real eta,
                    Status expected) {
    const auto before = std::make_unique<Outputs<M>>(*out);
    INFO(doctest::String(what));
    CAPTURE(eta);
    CHECK(pbrl::policy_gradient_step(m, st, eta, out->ws, out->eval, out->grad, {out->log_pi, out->pi}) ==
          expected);
    CHECK(same(*out, *before));
  };
  for (Real eta : {Real(0), Real(-1), kNaN, kInf, -kInf}) expect("bad eta", good, set, eta, Status::bad_step_size);
  pbrl::PolicySet<Real> bad_set = set;
  bad_set.floor = Real(0);
  bad_set.logit_bound = kNaN;
  expect("bad set", good, bad_set, Real(1), Status::bad_setting);
  expect("eta before the set", good, bad_set, Real(0), Status::bad_step_size);
  bad_set = set;
  bad_set.parameterization = static_cast<Parameterization>(3);
  expect("bad parameterization", good, bad_set, Real(1), Status::bad_setting);
  MdpT nulled = good;
  nulled.initial = nullptr;
  expect("set before the model", nulled, bad_set, Real(1), Status::bad_setting);
  for_each_bad_mdp(*model, [&](const char* what, const MdpT& m, Status st) { expect(what, m, set, Real(1), st); });

  policy_rejects(*out, good, nulled, 0, 1,
                 [&](const char* what, const MdpT& m, Status st) { expect(what, m, set, Real(1), st); },
                 [&](const MdpT& m) {
                   return pbrl::policy_gradient_step(m, set, Real(1), out->ws, out->eval, out->grad,
                                                     {out->log_pi, out->pi});
                 });
}

template <EvaluationMethod M>
void soft_value_iteration_rejects() {
  const auto model = std::make_unique<RandomModel<S, A>>(10);
  const MdpT good = model->mdp(Real(0.9), Real(0.2), RegularizerKind::kl_reference);
  auto out = std::make_unique<Outputs<M>>(100);
  out->value.setZero();
  {
    auto s = std::make_unique<Outputs<M>>(*out);
    REQUIRE(pbrl::soft_value_iteration(good, 10, Real(0), s->value, s->q, {s->log_pi, s->pi}, &s->result) ==
            Status::ok);
  }
  auto expect = [&](const char* what, const MdpT& m, int iterations, Real tol, Status expected) {
    for (bool with_result : {false, true}) {
      const auto before = std::make_unique<Outputs<M>>(*out);
      INFO(doctest::String(what));
      CAPTURE(iterations);
      CAPTURE(tol);
      CHECK(pbrl::soft_value_iteration(m, iterations, tol, out->value, out->q, {out->log_pi, out->pi},
                                       with_result ? &out->result : nullptr) == expected);
      CHECK(same(*out, *before));
    }
  };
  for_each_bad_mdp(*model, [&](const char* what, const MdpT& m, Status st) { expect(what, m, 10, Real(0), st); });
  for (int it : {0, -1, -1000000}) expect("max_iterations < 1", good, it, Real(0), Status::bad_setting);
  for (Real tol : {Real(-1), -std::numeric_limits<Real>::min(), kNaN, -kInf})
    expect("bad tolerance", good, 10, tol, Status::bad_setting);
  MdpT m = good;
  m.discount = Real(1);
  expect("model before settings", m, 0, kNaN, Status::bad_discount);
  const Vec<S> value = out->value;
  for (Real v : {kNaN, kInf, -kInf}) {
    out->value(3) = v;
    expect("non-finite warm start", good, 10, Real(0), Status::not_finite);
    expect("settings before warm start", good, 0, Real(0), Status::bad_setting);
  }
  out->value = value;
}
}  // namespace

TEST_CASE("pmd_step: every rejected input leaves workspace, evaluation and policy untouched") {
  SUBCASE("direct") { pmd_rejects<EvaluationMethod::direct>(); }
  SUBCASE("sweeps") { pmd_rejects<EvaluationMethod::sweeps>(); }
}

TEST_CASE("policy_gradient_step: every rejected input leaves workspace, evaluation and policy untouched") {
  for (Parameterization p : {Parameterization::direct, Parameterization::softmax}) {
    CAPTURE(static_cast<int>(p));
    policy_gradient_rejects<EvaluationMethod::direct>(p);
    policy_gradient_rejects<EvaluationMethod::sweeps>(p);
  }
}

TEST_CASE("policy_gradient_step: a gradient overflow is a numerical failure that keeps the policy") {
  // tau = max passes every check; at the uniform policy V is finite but the gradient
  // d(s) * (Q - tau * dh/dpi) overflows. The evaluation and `grad` (scratch) are written on this
  // path (documented as workspace) but log_pi and pi are not.
  const auto model = std::make_unique<RandomModel<S, A>>(11);
  const MdpT m = model->mdp(Real(0.9), kMax);
  REQUIRE(pbrl::validate(m) == Status::ok);
  for (Parameterization p : {Parameterization::direct, Parameterization::softmax}) {
    CAPTURE(static_cast<int>(p));
    auto out = std::make_unique<Outputs<EvaluationMethod::direct>>(110);
    out->pi = uniform_policy();
    out->log_pi = out->pi.array().log().matrix();
    const Mat<S, A> log_pi = out->log_pi, pi = out->pi;
    CHECK(pbrl::policy_gradient_step(m, pbrl::PolicySet<Real>{p}, Real(1), out->ws, out->eval, out->grad,
                                     {out->log_pi, out->pi}) == Status::numerical_failure);
    CHECK(same(out->log_pi, log_pi));
    CHECK(same(out->pi, pi));
  }
}

TEST_CASE("soft_value_iteration: every rejected input leaves value, q, policy and result untouched") {
  soft_value_iteration_rejects<EvaluationMethod::direct>();
}

// ---- reward shaping ----------------------------------------------------------------------

namespace {
using Shaping = pbrl::RewardShaping<Real, S, A>;

Shaping::Data shaping_data(const RandomModel<S, A>& model) {
  Shaping::Data d;
  d.reward = model.reward;
  d.transition = model.transition;
  d.initial = model.initial;
  d.discount = Real(0.9);
  d.lower = {RegularizerKind::kl_reference, Real(0.2), model.reference};
  d.upper = {RegularizerKind::entropy, Real(0), nullptr};
  d.shaping = {Real(-1), Real(2)};
  return d;
}

struct BadData {
  const char* what;
  Shaping::Data data;
  Status expected;
};

// Each defect of RewardShaping::Data. `bad` holds a corrupted copy of the arrays.
constexpr int kBadData = 26;
void bad_shaping_data(const RandomModel<S, A>& model, RandomModel<S, A>& bad, BadData (&out)[kBadData]) {
  const Shaping::Data good = shaping_data(model);
  bad = model;
  bad.reward[2] = kNaN;
  bad.transition[5] = Real(-0.01);
  bad.initial[1] = Real(0);
  bad.reference[4] = Real(0);
  int n = 0;
  auto add = [&](const char* what, const Shaping::Data& d, Status st) { out[n++] = BadData{what, d, st}; };
  add_null_arrays(good, add);
  Shaping::Data d = good;
  d.reward = bad.reward;
  add("reward NaN", d, Status::not_finite);
  d = good;
  d.transition = bad.transition;
  add("transition negative", d, Status::bad_transition);
  d = good;
  d.initial = bad.initial;
  add("rho with a zero entry", d, Status::bad_distribution);
  add_bad_discounts(good, Real(-0.5), add);
  // Each regularizer's defects: tau < 0, another bad tau, a null reference (KL to it), a reference
  // with a zero, an invalid kind.
  struct RegularizerDefects {
    pbrl::Regularizer<Real, S, A> Shaping::Data::*regularizer;
    Real bad_tau;
    const char* names[5];
  };
  const RegularizerDefects regularizers[] = {
      {&Shaping::Data::upper, kNaN,
       {"upper tau < 0", "upper tau NaN", "upper reference null", "upper reference with a zero",
        "upper kind invalid"}},
      {&Shaping::Data::lower, kInf,
       {"lower tau < 0", "lower tau inf", "lower reference null", "lower reference with a zero",
        "lower kind invalid"}},
  };
  for (const RegularizerDefects& r : regularizers) {
    d = good;
    (d.*r.regularizer).tau = Real(-1);
    add(r.names[0], d, Status::bad_regularization);
    (d.*r.regularizer).tau = r.bad_tau;
    add(r.names[1], d, Status::bad_regularization);
    d = good;
    (d.*r.regularizer).kind = RegularizerKind::kl_reference;
    (d.*r.regularizer).reference = nullptr;
    add(r.names[2], d, Status::null_pointer);
    (d.*r.regularizer).reference = bad.reference;
    add(r.names[3], d, Status::bad_regularization);
    d = good;
    (d.*r.regularizer).kind = static_cast<RegularizerKind>(4);
    add(r.names[4], d, Status::bad_regularization);
  }
  d = good;
  d.shaping = {Real(1), Real(-1)};
  add("box lower > upper", d, Status::bad_setting);
  d.shaping = {kNaN, Real(1)};
  add("box lower NaN", d, Status::bad_setting);
  d.shaping = {Real(-1), kNaN};
  add("box upper NaN", d, Status::bad_setting);
  d.shaping = {-kInf, Real(1)};
  add("box lower -inf", d, Status::bad_setting);
  d.shaping = {Real(-1), kInf};
  add("box upper inf", d, Status::bad_setting);
  // Order: the task (reward, P, rho, gamma, upper) before the lower regularizer before the box.
  d = good;
  d.discount = Real(2);
  d.lower.tau = Real(-1);
  d.shaping = {kNaN, kNaN};
  add("task before lower before box", d, Status::bad_discount);
  d.discount = Real(0.5);
  add("lower before box", d, Status::bad_regularization);
  REQUIRE(n == kBadData);
}

bool same(const Shaping& a, const Shaping& b) {
  return same(a.task(), b.task()) && same(a.box().lower, b.box().lower) && same(a.box().upper, b.box().upper);
}
bool same(const Shaping::Model& a, const Shaping::Model& b) { return same(a.reward, b.reward); }

template <EvaluationMethod M>
void upper_rejects(const Shaping& problem, const Mat<S, A>& pi, Status expected) {
  auto out = std::make_unique<Outputs<M>>(130);
  auto model = std::make_unique<Shaping::Model>();
  for (int i = 0; i < S * A; ++i) model->reward[i] = Real(i) - Real(0.5);
  const auto model0 = std::make_unique<Shaping::Model>(*model);
  Real f = Real(-42.5);
  Shaping::Params grad_x = Shaping::Params::Constant(Real(3.25));
  const Shaping::Params grad_x0 = grad_x;
  const Mat<S, A> pi0 = pi;
  const auto before = std::make_unique<Outputs<M>>(*out);
  CHECK(problem.upper(pi, *model, out->ws, out->eval, f, grad_x, out->grad) == expected);
  CHECK(same(*out, *before));
  CHECK(same(*model, *model0));
  CHECK(same(f, Real(-42.5)));
  CHECK(same(grad_x, grad_x0));
  CHECK(same(pi, pi0));
}

void build_rejects(const Shaping& problem, const Shaping::Params& x, Status expected) {
  auto model = std::make_unique<Shaping::Model>();
  for (int i = 0; i < S * A; ++i) model->reward[i] = Real(2 * i) + Real(0.25);
  const auto model0 = std::make_unique<Shaping::Model>(*model);
  const auto task = std::make_unique<RandomModel<S, A>>(99);
  MdpT mdp = task->mdp(Real(0.5), Real(0.75));
  const MdpT mdp0 = mdp;
  const Shaping::Params x0 = x;
  CHECK(problem.validate_parameters(x) == expected);
  CHECK(problem.build(x, *model, mdp) == expected);
  CHECK(same(*model, *model0));
  CHECK(same(mdp, mdp0));
  CHECK(same(x, x0));
}
}  // namespace

TEST_CASE("RewardShaping: init, validate_parameters, build and upper reject bad input and keep their state") {
  const auto model = std::make_unique<RandomModel<S, A>>(12);
  auto bad = std::make_unique<RandomModel<S, A>>(12);
  BadData cases[kBadData];
  bad_shaping_data(*model, *bad, cases);
  const auto model_copy = std::make_unique<RandomModel<S, A>>(*model);
  const auto bad_copy = std::make_unique<RandomModel<S, A>>(*bad);
  const Shaping::Params inside = Shaping::Params::Constant(Real(0.5));

  auto problem = std::make_unique<Shaping>();
  const auto pristine = std::make_unique<Shaping>(*problem);
  // Before init everything that needs the problem says so.
  build_rejects(*problem, inside, Status::not_initialized);
  upper_rejects<EvaluationMethod::direct>(*problem, uniform_policy(), Status::not_initialized);
  for (int i = 0; i < kBadData; ++i) {
    INFO(doctest::String(cases[i].what));
    CHECK(problem->init(cases[i].data) == cases[i].expected);
    CHECK(same(*problem, *pristine));
    CHECK(problem->validate_parameters(inside) == Status::not_initialized);
  }
  // The failed inits did not initialize it.
  build_rejects(*problem, inside, Status::not_initialized);
  upper_rejects<EvaluationMethod::sweeps>(*problem, uniform_policy(), Status::not_initialized);

  REQUIRE(problem->init(shaping_data(*model)) == Status::ok);
  const auto ready = std::make_unique<Shaping>(*problem);
  for (int i = 0; i < kBadData; ++i) {
    INFO(doctest::String(cases[i].what));
    CHECK(problem->init(cases[i].data) == cases[i].expected);
    CHECK(same(*problem, *ready));
  }
  CHECK(problem->validate_parameters(inside) == Status::ok);
  CHECK(same(*model, *model_copy));
  CHECK(same(*bad, *bad_copy));

  // Parameters outside the box or not finite.
  struct XCase {
    const char* what;
    int index;
    Real value;
    Status expected;
  };
  const XCase xs[] = {
      {"above the box", 3, std::nextafter(Real(2), Real(3)), Status::out_of_bounds},
      {"below the box", 0, Real(-1.5), Status::out_of_bounds},
      {"far above", S * A - 1, kMax, Status::out_of_bounds},
      {"NaN", 5, kNaN, Status::not_finite},
      {"inf", 6, kInf, Status::not_finite},
      {"-inf", 7, -kInf, Status::not_finite},
  };
  for (const XCase& c : xs) {
    INFO(doctest::String(c.what));
    Shaping::Params x = inside;
    x(c.index) = c.value;
    build_rejects(*problem, x, c.expected);
  }
  Shaping::Params edge = inside;
  edge(0) = Real(-1);
  edge(1) = Real(2);
  CHECK(problem->validate_parameters(edge) == Status::ok);

  // upper with a bad policy: f and the gradients untouched.
  BadPolicy policies[kBadPolicies];
  bad_policies(uniform_policy(), policies);
  for (const BadPolicy& c : policies) {
    INFO(doctest::String(c.what));
    upper_rejects<EvaluationMethod::direct>(*problem, c.pi, c.expected);
    upper_rejects<EvaluationMethod::sweeps>(*problem, c.pi, c.expected);
  }
}

// ---- the solver --------------------------------------------------------------------------

namespace {
// RewardShaping with faults to inject: it fails where the test asks it to, so every error path
// of Pbrl::step() can be reached from valid settings.
// nan_grad_x / nan_grad_pi: a NaN in upper()'s gradient, so that the step's new x (its box's
// projection keeps a NaN) or new y is not finite: the solver's check of the step's sum |G|^2
// must refuse it.
enum class Fault { none, build, poison_reward, upper, nan_objective, nan_grad_x, nan_grad_pi };

class FaultyShaping {
 public:
  using Scalar = Real;
  static constexpr int kStates = S, kActions = A, kParams = Shaping::kParams;
  using Params = Shaping::Params;
  using Model = Shaping::Model;
  using Matrix = Mat<S, A>;

  Shaping base;
  Fault fault = Fault::none;
  mutable int clean_builds = -1;  // >= 0: that many builds succeed, then `fault` applies

  Status validate_parameters(const Params& x) const { return base.validate_parameters(x); }
  void project_parameters(Params& x) const { base.project_parameters(x); }
  Status build(const Params& x, Model& model, MdpT& mdp) const {
    const Fault f = active();
    if (f == Fault::build) return Status::out_of_bounds;
    const Status st = base.build(x, model, mdp);
    if (f == Fault::poison_reward) model.reward[1] = kInf;  // every evaluation on M(x) fails
    return st;
  }
  void vjp(const Model& model, const Matrix& w, const Vec<S>& v, Real scale, Params& grad) const {
    base.vjp(model, w, v, scale, grad);
  }
  template <EvaluationMethod M>
  Status upper(const Matrix& pi, Model& model, Ws<M>& ws, Eval& scratch, Real& f, Params& grad_x,
               Matrix& grad_pi) const {
    if (fault == Fault::upper && clean_builds < 0) return Status::numerical_failure;
    const Status st = base.upper(pi, model, ws, scratch, f, grad_x, grad_pi);
    if (fault == Fault::nan_objective && clean_builds < 0) f = kNaN;
    if (fault == Fault::nan_grad_x && clean_builds < 0) grad_x(2) = kNaN;
    if (fault == Fault::nan_grad_pi && clean_builds < 0) grad_pi(1, 1) = kNaN;
    return st;
  }

 private:
  Fault active() const {
    if (clean_builds > 0) {
      --clean_builds;
      return Fault::none;
    }
    if (clean_builds == 0) clean_builds = -1;
    return fault;
  }
};

template <class Solver>
struct SolverState {
  typename Solver::Params x;
  typename Solver::Matrix y, oracle_policy;
  long iteration;
  pbrl::PbrlSettings<Real> settings;
  explicit SolverState(const Solver& s)
      : x(s.x()), y(s.y()), oracle_policy(s.oracle_policy()), iteration(s.iteration()), settings(s.settings()) {}
};
template <class Solver>
bool same(const SolverState<Solver>& a, const SolverState<Solver>& b) {
  return same(a.x, b.x) && same(a.y, b.y) && same(a.oracle_policy, b.oracle_policy) &&
         a.iteration == b.iteration && same(a.settings, b.settings);
}

pbrl::PbrlReport<Real> garbage_report() {
  pbrl::PbrlReport<Real> r;
  r.iteration = -77;
  r.upper_objective = Real(1.5);
  r.penalty = Real(-2.5);
  r.lambda = Real(3.5);
  r.objective = Real(-4.5);
  r.projected_gradient_norm = Real(5.5);
  r.lower_gap = Real(-6.5);
  r.inner_converged = true;
  r.max_sweeps_hit = -8;
  return r;
}

template <EvaluationMethod M>
void solver_faults(pbrl::PenaltyKind kind, Parameterization param, pbrl::OracleKind oracle) {
  using Solver = pbrl::Pbrl<FaultyShaping, M>;
  const auto task = std::make_unique<RandomModel<S, A>>(13);
  auto problem = std::make_unique<FaultyShaping>();
  REQUIRE(problem->base.init(shaping_data(*task)) == Status::ok);
  const auto settings = solver_support::configuration_settings(kind, param, oracle);
  const FaultyShaping::Params x0 = FaultyShaping::Params::Constant(Real(0.25));
  Mat<S, A> y0;
  pbrl::uniform_parameters(settings.policy, y0);

  auto solver = std::make_unique<Solver>();
  auto reference = std::make_unique<Solver>();  // never sees a fault
  REQUIRE(solver->init(*problem, settings, x0, y0) == Status::ok);
  REQUIRE(reference->init(*problem, settings, x0, y0) == Status::ok);
  pbrl::PbrlReport<Real> report = garbage_report();
  REQUIRE(solver->step(&report) == Status::ok);
  REQUIRE(reference->step() == Status::ok);

  struct Case {
    Fault fault;
    Status expected;
  };
  const Case cases[] = {{Fault::build, Status::out_of_bounds},
                        {Fault::poison_reward, Status::numerical_failure},
                        {Fault::upper, Status::numerical_failure},
                        {Fault::nan_objective, Status::numerical_failure},
                        {Fault::nan_grad_x, Status::numerical_failure},
                        {Fault::nan_grad_pi, Status::numerical_failure}};
  for (const Case& c : cases) {
    CAPTURE(static_cast<int>(c.fault));
    problem->fault = c.fault;
    const SolverState<Solver> before(*solver);
    report = garbage_report();
    CHECK(solver->step(&report) == c.expected);
    CHECK(same(SolverState<Solver>(*solver), before));
    CHECK(same(report, garbage_report()));
    CHECK(solver->step() == c.expected);
    CHECK(same(SolverState<Solver>(*solver), before));
    CHECK(solver->run(3, &report) == c.expected);
    CHECK(same(SolverState<Solver>(*solver), before));
    CHECK(same(report, garbage_report()));
    // run() stops at the first error: 2 clean steps, then the fault.
    problem->clean_builds = 2;
    auto probe = std::make_unique<Solver>(*solver);
    auto clean = std::make_unique<Solver>(*solver);
    CHECK(probe->run(5, &report) == c.expected);
    problem->fault = Fault::none;
    problem->clean_builds = -1;
    REQUIRE(clean->run(2) == Status::ok);
    CHECK(probe->iteration() == before.iteration + 2);
    CHECK(same(probe->x(), clean->x()));
    CHECK(same(probe->y(), clean->y()));
    CHECK(same(probe->oracle_policy(), clean->oracle_policy()));
    CHECK(report.iteration == before.iteration + 1);  // the last successful step's report
  }
  problem->fault = Fault::none;
  CHECK(solver->run(-1) == Status::bad_setting);
  CHECK(solver->run(std::numeric_limits<long>::min()) == Status::bad_setting);
  // The failed steps left nothing behind: the next step is the reference's next step. With the
  // direct method nothing else carries over between steps, so the match is exact; sweeps also
  // warm-start the evaluations (not covered by step()'s promise), so compare loosely there.
  REQUIRE(solver->step() == Status::ok);
  REQUIRE(reference->step() == Status::ok);
  CHECK(solver->iteration() == reference->iteration());
  if (M == EvaluationMethod::direct) {
    CHECK(same(solver->x(), reference->x()));
    CHECK(same(solver->y(), reference->y()));
    CHECK(same(solver->oracle_policy(), reference->oracle_policy()));
  } else {
    const Real tol = kDouble ? Real(1e-8) : Real(1e-3);
    CHECK((solver->x() - reference->x()).cwiseAbs().maxCoeff() <= tol);
    CHECK((solver->y() - reference->y()).cwiseAbs().maxCoeff() <= tol);
    CHECK((solver->oracle_policy() - reference->oracle_policy()).cwiseAbs().maxCoeff() <= tol);
  }
}
}  // namespace

TEST_CASE("PbrlSettings: each field out of range is rejected by validate() and init()") {
  using Settings = pbrl::PbrlSettings<Real>;
  using Solver = pbrl::Pbrl<Shaping>;
  const auto task = std::make_unique<RandomModel<S, A>>(14);
  auto problem = std::make_unique<Shaping>();
  REQUIRE(problem->init(shaping_data(*task)) == Status::ok);
  const Settings good;
  REQUIRE(pbrl::validate(good, A) == Status::ok);
  const Shaping::Params x0 = Shaping::Params::Zero();
  auto solver = std::make_unique<Solver>();
  const SolverState<Solver> pristine(*solver);

  // Direct parameterization needs a y0 on the floored simplex; softmax the zero logits.
  auto expect = [&](const char* what, const Settings& s, Status validate_status, Status init_status) {
    const Settings copy = s;
    INFO(doctest::String(what));
    CHECK(pbrl::validate(s, A) == validate_status);
    Mat<S, A> y0;
    pbrl::uniform_parameters(s.policy, y0);
    CHECK(solver->init(*problem, s, x0, y0) == init_status);
    CHECK(same(s, copy));
    CHECK(same(SolverState<Solver>(*solver), pristine));
    CHECK(solver->step() == Status::not_initialized);
  };
  // good with one field changed by set(), expected as above.
  auto expect_one = [&](const char* what, auto&& set, Status validate_status, Status init_status) {
    Settings changed = good;
    set(changed);
    expect(what, changed, validate_status, init_status);
  };
  Settings s = good;
  s.penalty_kind = static_cast<pbrl::PenaltyKind>(2);
  expect("penalty kind", s, Status::bad_setting, Status::bad_setting);
  s = good;
  s.oracle = static_cast<pbrl::OracleKind>(3);
  expect("oracle kind", s, Status::bad_setting, Status::bad_setting);
  s.oracle = static_cast<pbrl::OracleKind>(255);
  expect("oracle kind 255", s, Status::bad_setting, Status::bad_setting);
  for (int t : {-1, -1000, pbrl::kMaxInnerSteps + 1, std::numeric_limits<int>::max()}) {
    CAPTURE(t);
    expect_one("inner steps", [&](Settings& c) { c.inner_steps = t; }, Status::bad_setting, Status::bad_setting);
  }
  s = good;
  s.lambda_ramp = -1;
  expect("lambda_ramp", s, Status::bad_setting, Status::bad_setting);
  for (Real v : {Real(0), -Real(0), Real(-0.1), kNaN, kInf, -kInf}) {
    CAPTURE(v);
    expect_one("oracle step", [&](Settings& c) { c.oracle_step = v; }, Status::bad_step_size, Status::bad_step_size);
    expect_one("step_x", [&](Settings& c) { c.step_x = v; }, Status::bad_step_size, Status::bad_step_size);
    expect_one("step_y", [&](Settings& c) { c.step_y = v; }, Status::bad_step_size, Status::bad_step_size);
  }
  for (Real v : {Real(-0.1), -std::numeric_limits<Real>::min(), kNaN, kInf, -kInf}) {
    CAPTURE(v);
    expect_one("lambda_start", [&](Settings& c) { c.lambda_start = v; }, Status::bad_setting, Status::bad_setting);
    expect_one("lambda_final", [&](Settings& c) { c.lambda_final = v; }, Status::bad_setting, Status::bad_setting);
  }
  // The policy sets are checked by init() (validate(settings) leaves them to it).
  for (Real floor : {Real(0), Real(-1e-3), kNaN, kInf, Real(1) / A}) {
    CAPTURE(floor);
    expect_one("policy floor", [&](Settings& c) { c.policy = {Parameterization::direct, floor, Real(50)}; }, Status::ok, Status::bad_setting);
    expect_one("oracle policy floor", [&](Settings& c) { c.oracle_policy = {Parameterization::direct, floor, Real(50)}; }, Status::ok, Status::bad_setting);
  }
  for (Real bound : {Real(0), Real(-1), kNaN, kInf}) {
    CAPTURE(bound);
    expect_one("policy logit bound", [&](Settings& c) { c.policy = {Parameterization::softmax, Real(1e-3), bound}; }, Status::ok, Status::bad_setting);
    expect_one("oracle policy logit bound", [&](Settings& c) { c.oracle_policy = {Parameterization::softmax, Real(1e-3), bound}; }, Status::ok, Status::bad_setting);
  }
  s = good;
  s.policy.parameterization = static_cast<Parameterization>(2);
  expect("policy parameterization", s, Status::ok, Status::bad_setting);
  s = good;
  s.oracle_policy.parameterization = static_cast<Parameterization>(2);
  expect("oracle policy parameterization", s, Status::ok, Status::bad_setting);
  // Precedence: kinds, then counts, then step sizes, then the penalty constants.
  s = good;
  s.lambda_final = kNaN;
  s.step_x = Real(0);
  s.inner_steps = -1;
  expect("counts before steps", s, Status::bad_setting, Status::bad_setting);
  s.inner_steps = 1;
  expect("steps before penalty constants", s, Status::bad_step_size, Status::bad_step_size);
  // Boundary values that are valid.
  s = good;
  s.inner_steps = 0;
  s.lambda_start = s.lambda_final = Real(0);
  CHECK(pbrl::validate(s, A) == Status::ok);
  s.inner_steps = pbrl::kMaxInnerSteps;
  CHECK(pbrl::validate(s, A) == Status::ok);
}

TEST_CASE("Pbrl: calls before init, failed inits, and run(negative) leave the solver as it was") {
  using Solver = pbrl::Pbrl<Shaping>;
  const auto task = std::make_unique<RandomModel<S, A>>(15);
  auto problem = std::make_unique<Shaping>();
  auto uninitialized = std::make_unique<Shaping>();
  REQUIRE(problem->init(shaping_data(*task)) == Status::ok);
  const pbrl::PbrlSettings<Real> settings = solver_support::configuration_settings(
      PenaltyKind::value, Parameterization::softmax, OracleKind::policy_mirror_descent);
  const Shaping::Params x0 = Shaping::Params::Constant(Real(0.5));
  const Mat<S, A> y0 = Mat<S, A>::Zero();

  auto solver = std::make_unique<Solver>();
  const SolverState<Solver> pristine(*solver);
  pbrl::PbrlReport<Real> report = garbage_report();
  CHECK(solver->step(&report) == Status::not_initialized);
  CHECK(solver->step() == Status::not_initialized);
  CHECK(solver->run(3, &report) == Status::not_initialized);
  CHECK(solver->run(-1, &report) == Status::bad_setting);
  CHECK(same(report, garbage_report()));
  CHECK(same(SolverState<Solver>(*solver), pristine));

  // Failed inits, before and after a successful one.
  struct InitCase {
    const char* what;
    const Shaping* problem;
    Shaping::Params x;
    Mat<S, A> y;
    Status expected;
  };
  Shaping::Params x_out = x0, x_nan = x0;
  x_out(4) = Real(2.5);
  x_nan(4) = kNaN;
  Mat<S, A> y_out = y0, y_nan = y0;
  y_out(1, 1) = Real(21);
  y_nan(1, 1) = kInf;
  const InitCase inits[] = {
      {"problem not initialized", uninitialized.get(), x0, y0, Status::not_initialized},
      {"x0 outside the box", problem.get(), x_out, y0, Status::out_of_bounds},
      {"x0 NaN", problem.get(), x_nan, y0, Status::not_finite},
      {"y0 over the logit bound", problem.get(), x0, y_out, Status::bad_policy},
      {"y0 inf", problem.get(), x0, y_nan, Status::not_finite},
      {"x0 before y0", problem.get(), x_out, y_nan, Status::out_of_bounds},
  };
  for (const InitCase& c : inits) {
    INFO(doctest::String(c.what));
    CHECK(solver->init(*c.problem, settings, c.x, c.y) == c.expected);
    CHECK(same(SolverState<Solver>(*solver), pristine));
    CHECK(solver->step() == Status::not_initialized);
  }
  // A direct y0 off the floored simplex.
  {
    pbrl::PbrlSettings<Real> direct = settings;
    direct.policy = {Parameterization::direct, Real(0.01), Real(20)};
    Mat<S, A> y = uniform_policy();
    y.row(2) << Real(0.001), Real(0.5), Real(0.499);
    CHECK(solver->init(*problem, direct, x0, y) == Status::bad_policy);
    y.row(2) << Real(0.4), Real(0.4), Real(0.4);
    CHECK(solver->init(*problem, direct, x0, y) == Status::bad_policy);
    CHECK(same(SolverState<Solver>(*solver), pristine));
  }

  REQUIRE(solver->init(*problem, settings, x0, y0) == Status::ok);
  REQUIRE(solver->run(2) == Status::ok);
  const SolverState<Solver> ready(*solver);
  for (const InitCase& c : inits) {
    INFO(doctest::String(c.what));
    CHECK(solver->init(*c.problem, settings, c.x, c.y) == c.expected);
    CHECK(same(SolverState<Solver>(*solver), ready));
  }
  pbrl::PbrlSettings<Real> bad = settings;
  bad.step_y = Real(-1);
  CHECK(solver->init(*problem, bad, x0, y0) == Status::bad_step_size);
  CHECK(same(SolverState<Solver>(*solver), ready));
  report = garbage_report();
  CHECK(solver->run(-1, &report) == Status::bad_setting);
  CHECK(same(SolverState<Solver>(*solver), ready));
  CHECK(same(report, garbage_report()));
  CHECK(solver->run(0, &report) == Status::ok);
  CHECK(same(SolverState<Solver>(*solver), ready));
  CHECK(same(report, garbage_report()));
  // The solver still works from where it was.
  CHECK(solver->step(&report) == Status::ok);
  CHECK(report.iteration == ready.iteration);
  CHECK(solver->iteration() == ready.iteration + 1);
}

TEST_CASE("Pbrl::step: every error path keeps x, y, the oracle's warm start, the count and the report") {
  solver_support::for_each_pbrl_configuration([](PenaltyKind kind, Parameterization param, OracleKind oracle) {
    solver_faults<EvaluationMethod::direct>(kind, param, oracle);
    solver_faults<EvaluationMethod::sweeps>(kind, param, oracle);
  });
}

// ============================================================================================
// Known bugs: each case states the contract it checks. These fail with the library as it is.

TEST_CASE("validate_parameters rejects negative probabilities for a direct policy (regression)") {
  // Regression: validate_parameters() once let a direct row pass if every entry was >= floor - tol with
  // tol = distribution_tolerance * A. When tol > floor (always in float: 1024*eps*A = 3.7e-4 >
  // the default floor 1e-6), entries in [floor - tol, 0) are accepted although they are not
  // probabilities. Pbrl::init() then accepts y0, and every step() fails with bad_policy
  // (evaluate() -> validate_policy() has no tolerance below zero).
  const Real tol = pbrl::distribution_tolerance<Real>() * A;
  const pbrl::PolicySet<Real> set{Parameterization::direct, tol / Real(4), Real(50)};
  REQUIRE(pbrl::validate<Real, A>(set) == Status::ok);
  Mat<S, A> y = uniform_policy();
  y.row(1) << -tol / Real(4), Real(0.5) + tol / Real(8), Real(0.5) + tol / Real(8);
  CHECK(pbrl::validate_parameters<Real, S, A>(set, y) == Status::bad_policy);

  const auto task = std::make_unique<RandomModel<S, A>>(16);
  auto problem = std::make_unique<Shaping>();
  REQUIRE(problem->init(shaping_data(*task)) == Status::ok);
  auto settings = solver_support::configuration_settings(PenaltyKind::value, Parameterization::direct,
                                                        OracleKind::policy_mirror_descent);
  settings.policy = set;
  auto solver = std::make_unique<pbrl::Pbrl<Shaping>>();
  // Either init() rejects y0, or the solver can step from it.
  if (solver->init(*problem, settings, Shaping::Params::Zero(), y) == Status::ok) CHECK(solver->step() == Status::ok);
  // The same with the default floor, in float only: -1e-4 is within the tolerance there.
  if (!kDouble) {
    y.row(1) << Real(-1e-4), Real(0.50005), Real(0.50005);
    CHECK(pbrl::validate_parameters<Real, S, A>(pbrl::PolicySet<Real>{Parameterization::direct}, y) ==
          Status::bad_policy);
  }
}

TEST_CASE("soft_value_iteration keeps value and q when it fails (regression)") {
  // soft_value_iteration.hpp: the sweeps update `value` (and `q` through write_q) in place; when
  // a later sweep overflows, write_q() fails and the call returns numerical_failure after value
  // and q were overwritten. status.hpp promises that a failed call changed none of its data.
  const auto model = overflowing_model();  // reward max/8: passes validate(), overflows in sweep 4
  const MdpT m = model->mdp(Real(0.9), Real(0));
  REQUIRE(pbrl::validate(m) == Status::ok);
  auto out = std::make_unique<Outputs<EvaluationMethod::direct>>(120);
  out->value.setZero();
  const auto before = std::make_unique<Outputs<EvaluationMethod::direct>>(*out);
  CHECK(pbrl::soft_value_iteration(m, 100, Real(0), out->value, out->q, {out->log_pi, out->pi}, &out->result) ==
        Status::numerical_failure);
  CHECK(same(out->value, before->value));
  CHECK(same(out->q, before->q));
  CHECK(same(out->log_pi, before->log_pi));
  CHECK(same(out->pi, before->pi));
  CHECK(same(out->result, before->result));
}

TEST_CASE("oracle steps never report ok with a non-finite policy (regression)") {
  // pmd_step() (tau = 0: log_pi + eta*Q overflows, normalize_policy_row gives NaN) and
  // policy_gradient_step() with the direct set (pi + eta*grad overflows, the projection gives
  // inf) return Status::ok for a huge but finite eta. A call must either return a policy or an
  // error (numerical_failure) that leaves its outputs as they were.
  const auto model = std::make_unique<RandomModel<S, A>>(17);
  const MdpT m = model->mdp(Real(0.9), Real(0));
  const Real eta = kMax / Real(4);
  for (int oracle = 0; oracle < 3; ++oracle) {
    CAPTURE(oracle);  // 0: PMD, 1: projected policy gradient, 2: softmax policy gradient
    auto out = std::make_unique<Outputs<EvaluationMethod::direct>>(170);
    out->pi = uniform_policy();
    out->log_pi = out->pi.array().log().matrix();
    const Mat<S, A> pi = out->pi, log_pi = out->log_pi;
    Status st;
    if (oracle == 0) {
      st = pbrl::pmd_step(m, eta, out->ws, out->eval, {out->log_pi, out->pi});
    } else {
      const pbrl::PolicySet<Real> set{oracle == 1 ? Parameterization::direct : Parameterization::softmax};
      st = pbrl::policy_gradient_step(m, set, eta, out->ws, out->eval, out->grad, {out->log_pi, out->pi});
    }
    if (st == Status::ok) {
      CHECK(pbrl::validate_policy<Real, S, A>(out->pi) == Status::ok);
      CHECK(out->log_pi.allFinite());
    } else {
      CHECK(st == Status::numerical_failure);
      CHECK(same(out->pi, pi));
      CHECK(same(out->log_pi, log_pi));
    }
  }
}

TEST_CASE("evaluate (sweeps) rejects max_sweeps < 1 and a NaN tolerance (regression)") {
  // evaluation.hpp: nothing checks EvaluationWorkspace<sweeps>::max_sweeps or tolerance (Pbrl
  // hands the workspace out through evaluation_workspace()). With max_sweeps <= 0, sweep_solve()
  // runs no sweep and evaluate() returns ok with V = the warm start (0 for a fresh Evaluation),
  // which is no evaluation at all; with tolerance = NaN it stops after one sweep and returns ok.
  // Expected: Status::bad_setting ("iteration counts ... out of range"), outputs untouched.
  // (A negative tolerance is meaningful -- always run max_sweeps -- and stays valid.)
  const auto model = std::make_unique<RandomModel<S, A>>(18);
  const MdpT m = model->mdp(Real(0.9), Real(0.2));
  for (int c = 0; c < 3; ++c) {
    CAPTURE(c);
    auto out = std::make_unique<Outputs<EvaluationMethod::sweeps>>(180);
    if (c == 0) out->ws.max_sweeps = 0;
    if (c == 1) out->ws.max_sweeps = -5;
    if (c == 2) out->ws.tolerance = kNaN;
    const auto before = std::make_unique<Outputs<EvaluationMethod::sweeps>>(*out);
    CHECK(pbrl::evaluate(m, uniform_policy(), out->ws, out->eval) == Status::bad_setting);
    CHECK(same(*out, *before));
  }
}

// Keep this case last in the file: on the host it crashes (doctest then stops this run).
TEST_CASE("evaluate rejects a null kl_reference array (regression)") {
  // evaluation.hpp, detail::check_call(): the per-call checks return null_pointer for a null
  // reward, transition or initial array but not for a null regularizer.reference with
  // kind = kl_reference. With tau > 0, induced_cost() -> Regularizer::value() -> log_reference()
  // reads reference[s*A + a] through the null pointer: SIGSEGV on the host; on the Cortex-M4 it
  // silently reads the vector table at address 0. pmd_step, policy_gradient_step and
  // soft_value_iteration (soft_max_row -> log_reference) do the same.
  const auto model = std::make_unique<RandomModel<S, A>>(19);
  MdpT m = model->mdp(Real(0.9), Real(0.2), RegularizerKind::kl_reference);
  m.regularizer.reference = nullptr;
  REQUIRE(pbrl::validate(m) == Status::null_pointer);
  auto out = std::make_unique<Outputs<EvaluationMethod::direct>>(190);
  const auto before = std::make_unique<Outputs<EvaluationMethod::direct>>(*out);
  CHECK(pbrl::evaluate(m, uniform_policy(), out->ws, out->eval) == Status::null_pointer);
  CHECK(same(*out, *before));
}

namespace {
// Reward shaping whose f has an infinite policy gradient in state 0: a projected step then sends
// row 0 of a direct y to -inf.
struct InfGradientShaping : Shaping {
  template <EvaluationMethod M>
  Status upper(const Matrix& pi, Model& model, Ws<M>& ws, Eval& scratch, Real& f, Params& grad_x,
               Matrix& grad_pi) const {
    const Status st = Shaping::upper(pi, model, ws, scratch, f, grad_x, grad_pi);
    grad_pi.row(0).setConstant(kInf);
    return st;
  }
};
}  // namespace

TEST_CASE("a direct policy row sent to -inf is a numerical failure, not a row at the floor (regression, fuzz)") {
  // Found by tests/fuzz/fuzz_checkpoint (PbrlZeroSum, sampled, direct policies): project_simplex
  // mapped a row of -inf to the floor everywhere, finite, so the step's finiteness check after the
  // projection passed and step() returned ok with rows summing to A * floor, off the simplex.
  Mat<S, A> rows = uniform_policy();
  rows.row(0).setConstant(-kInf);
  rows(1, 2) = kNaN;
  rows(2, 0) = kInf;
  for (int s = 0; s < S; ++s) pbrl::project_simplex(rows.row(s), Real(1e-3));
  CHECK(rows.topRows<3>().array().isNaN().all());  // every non-finite row comes out NaN
  CHECK(std::abs(rows.row(3).sum() - Real(1)) <= pbrl::distribution_tolerance<Real>() * A);  // the rest as before

  const auto task = std::make_unique<RandomModel<S, A>>(17);
  auto problem = std::make_unique<InfGradientShaping>();
  REQUIRE(problem->init(shaping_data(*task)) == Status::ok);
  auto settings = solver_support::configuration_settings(PenaltyKind::value, Parameterization::direct,
                                                        OracleKind::policy_mirror_descent);
  auto solver = std::make_unique<pbrl::Pbrl<InfGradientShaping>>();
  REQUIRE(solver->init(*problem, settings, Shaping::Params::Zero(), uniform_policy()) == Status::ok);
  const Mat<S, A> y = solver->y();
  CHECK(solver->step() == Status::numerical_failure);
  CHECK(same(solver->y(), y));
  CHECK(solver->iteration() == 0);
}

}  // namespace test_validation
