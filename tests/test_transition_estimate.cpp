// TransitionEstimate (estimate/transition_estimate.hpp): the Dirichlet posterior's mean against a
// direct computation (priors, empirical frequencies, the discount's closed forms, the cap's
// halving), every written row a valid transition row, refusals that change nothing, the refresh
// rule, and slices that write the bits of one call.
#include "support.hpp"
#include "pbrl/estimate/transition_estimate.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace test_transition_estimate {  // one per suite, for unity builds (PBRL_TEST_UNITY)

namespace {
constexpr int S = 4, A = 3, Rows = S * A;
using Estimate = pbrl::TransitionEstimate<Real, S, Rows>;
using Settings = pbrl::EstimateSettings<Real>;

constexpr Real kNaN = std::numeric_limits<Real>::quiet_NaN();
constexpr Real kInf = std::numeric_limits<Real>::infinity();
// Relative agreement of the mean with a formula evaluated in double.
constexpr double kClose = kDouble ? 1e-12 : 2e-5;

// A random prior; with zeros: one or two zeros per row, the rest renormalized.
template <typename T>
void random_prior(std::uint32_t seed, T* p, int rows, bool zeros) {
  pbrl::Rng rng(seed);
  pbrl::random_transition(rng, p, rows, S);
  if (!zeros) return;
  for (int r = 0; r < rows; ++r) {
    T* row = p + r * S;
    row[r % S] = T(0);
    if (r % 2 == 0) row[(r + 1) % S] = T(0);
    T sum(0);
    for (int i = 0; i < S; ++i) sum += row[i];
    for (int i = 0; i < S; ++i) row[i] /= sum;
  }
}

// A next state drawn from a distribution row.
template <typename T>
int draw(pbrl::Rng& rng, const T* row) {
  const T u = rng.uniform<T>();
  T cumulative(0);
  for (int i = 0; i < S - 1; ++i) {
    cumulative += row[i];
    if (u < cumulative && row[i] > T(0)) return i;
  }
  for (int i = S - 1; i > 0; --i)
    if (row[i] > T(0)) return i;
  return 0;
}

// An object's bytes (padding included), to tell that a refused call changed none of them.
template <class E>
struct Bytes {
  unsigned char b[sizeof(E)];
  explicit Bytes(const E& e) { std::memcpy(b, static_cast<const void*>(&e), sizeof(E)); }
  bool same(const E& e) const { return std::memcmp(b, static_cast<const void*>(&e), sizeof(E)) == 0; }
};

// (a p + c) / (a sum p + sum c) in double, against row r of out.
template <typename T>
void check_mean_row(const T* out, const T* prior_row, double a, const double* counts, double tolerance = kClose) {
  double sum = 0;
  for (int i = 0; i < S; ++i) sum += a * double(prior_row[i]) + counts[i];
  for (int i = 0; i < S; ++i) {
    const double expected = (a * double(prior_row[i]) + counts[i]) / sum;
    CAPTURE(i);
    CHECK(std::abs(double(out[i]) - expected) <= tolerance * std::max(1.0, expected));
  }
}

}  // namespace

TEST_CASE("estimate: rows never observed are the prior, bit for bit; every row is valid") {
  Real prior[Rows * S];
  random_prior(11u, prior, Rows, true);
  REQUIRE(pbrl::validate_transition<Real, S, A>(prior) == Status::ok);
  Estimate est;
  REQUIRE(est.init(prior, Real(3)) == Status::ok);
  Real out[Rows * S];
  REQUIRE(est.write_mean(out) == Status::ok);
  CHECK(std::memcmp(out, prior, sizeof(prior)) == 0);

  pbrl::Rng rng(3u);
  for (int k = 0; k < 40; ++k) {
    const int r = 2 * int(rng.below(Rows / 2));  // even rows only
    REQUIRE(est.observe_row(r, draw(rng, prior + r * S)) == Status::ok);
  }
  REQUIRE(est.write_mean(out) == Status::ok);
  CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
  for (int r = 1; r < Rows; r += 2) {
    CAPTURE(r);
    CHECK(est.observations(r) == 0);
    CHECK(std::memcmp(out + r * S, prior + r * S, sizeof(Real) * S) == 0);
  }
  // Support prior: the prior's zeros stay zeros.
  for (int i = 0; i < Rows * S; ++i)
    if (prior[i] == Real(0)) CHECK(out[i] == Real(0));
}

TEST_CASE("estimate: the mean is (a p + n) / (a + N) and tends to the empirical frequencies") {
  Real prior[Rows * S], truth[Rows * S];
  random_prior(21u, prior, Rows, false);
  random_prior(22u, truth, Rows, false);
  const Real a = Real(2);
  Estimate est;
  REQUIRE(est.init(prior, a) == Status::ok);
  double counts[Rows][S] = {};
  pbrl::Rng rng(5u);
  const int per_row = 300;
  for (int k = 0; k < per_row; ++k)
    for (int r = 0; r < Rows; ++r) {
      const int next = draw(rng, truth + r * S);
      REQUIRE(est.observe_row(r, next) == Status::ok);
      counts[r][next] += 1;
    }
  CHECK(est.observations() == std::int64_t(per_row) * Rows);
  Real out[Rows * S];
  REQUIRE(est.write_mean(out) == Status::ok);
  CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
  for (int r = 0; r < Rows; ++r) {
    CAPTURE(r);
    CHECK(est.observations(r) == per_row);
    CHECK(est.row_total(r) == Real(per_row));
    check_mean_row(out + r * S, prior + r * S, double(a), counts[r]);
    // Within a / (a + N) of the empirical frequencies.
    for (int i = 0; i < S; ++i)
      CHECK(std::abs(double(out[r * S + i]) - counts[r][i] / per_row) <= double(a) / (double(a) + per_row) + 1e-6);
  }
}

// An estimate with counts of type Count over random_prior(seed), prior weight a, discount beta
// on `clock`; its closed forms hold within `tolerance`, the rounding of Count.
template <typename Count>
struct DiscountedEstimate {
  const double tolerance = std::max(kClose, 64 * double(std::numeric_limits<Count>::epsilon()));
  const double beta, a;
  Real prior[Rows * S];
  pbrl::TransitionEstimate<Real, S, Rows, Count> est;

  DiscountedEstimate(std::uint32_t seed, Real discount, double weight, pbrl::DiscountClock clock)
      : beta(double(discount)), a(weight) {
    random_prior(seed, prior, Rows, false);
    Settings settings;
    settings.discount = discount;
    settings.discount_clock = clock;
    REQUIRE(est.init(prior, Real(a), settings) == Status::ok);
  }

  // The closed forms on the row_visits clock.
  void check_per_visit() {
    const int r = 5, old_next = 0, new_next = 2, n_old = 20;
    for (int k = 0; k < n_old; ++k) REQUIRE(est.observe_row(r, old_next) == Status::ok);
    // Another row's observations do not age row r on this clock.
    for (int k = 0; k < 7; ++k) REQUIRE(est.observe_row(r + 1, 1) == Status::ok);
    const double old_weight = (1 - std::pow(beta, n_old)) / (1 - beta);
    Real out[Rows * S];
    for (int m = 1; m <= 40; ++m) {
      CAPTURE(m);
      REQUIRE(est.observe_row(r, new_next) == Status::ok);
      double c[S] = {};
      c[old_next] = std::pow(beta, m) * old_weight;
      c[new_next] = (1 - std::pow(beta, m)) / (1 - beta);
      REQUIRE(est.write_mean(out, r, 1) == Status::ok);
      check_mean_row(out + r * S, prior + r * S, a, c, tolerance);
      CHECK(std::abs(double(est.row_total(r)) - (c[old_next] + c[new_next])) <= tolerance * 20);
    }
    REQUIRE(est.write_mean(out) == Status::ok);
    CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
  }

  // The closed forms on the observations clock.
  void check_per_observation() {
    for (int k = 0; k < 5; ++k) REQUIRE(est.observe_row(0, 1) == Status::ok);   // clock 1..5
    for (int k = 0; k < 5; ++k) REQUIRE(est.observe_row(3, 2) == Status::ok);   // clock 6..10
    Real out[Rows * S];
    REQUIRE(est.write_mean(out) == Status::ok);
    CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
    double c0[S] = {}, c3[S] = {};
    for (int k = 1; k <= 5; ++k) c0[1] += std::pow(beta, 10 - k);
    for (int k = 6; k <= 10; ++k) c3[2] += std::pow(beta, 10 - k);
    check_mean_row(out, prior, a, c0, tolerance);
    check_mean_row(out + 3 * S, prior + 3 * S, a, c3, tolerance);
    CHECK(std::abs(double(est.row_total(0)) - c0[1]) <= tolerance * 10);
    // Observing row 0 again at clock 11 ages it by beta^6 first.
    REQUIRE(est.observe_row(0, 3) == Status::ok);
    REQUIRE(est.write_mean(out, 0, 1) == Status::ok);
    c0[1] *= beta;
    c0[3] = 1;
    check_mean_row(out, prior, a, c0, tolerance);
    // A state that is never observed again tends back to its prior.
    for (int k = 0; k < 200; ++k) REQUIRE(est.observe_row(7, 0) == Status::ok);
    REQUIRE(est.write_mean(out) == Status::ok);
    for (int i = 0; i < S; ++i) CHECK(std::abs(double(out[i]) - double(prior[i])) < (kDouble ? 1e-12 : 1e-6));
    CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
  }
};

// The discount's closed forms, with counts of type Count: within rounding of Count.
template <typename Count>
void check_discount_per_visit() {
  DiscountedEstimate<Count>(31u, Real(0.9), 1.5, pbrl::DiscountClock::row_visits).check_per_visit();
}

template <typename Count>
void check_discount_per_observation() {
  DiscountedEstimate<Count>(41u, Real(0.8), 1, pbrl::DiscountClock::observations).check_per_observation();
}

TEST_CASE("estimate: discount per row visit moves the mean to a changed plant at the rate beta^m") {
  check_discount_per_visit<float>();
  check_discount_per_visit<Real>();
}

// Aging multiplies a row's unit by 1/beta; at 2^32 the row is rescaled to unit 1 (O(S), rare).
// Every beta (rescaled every 2,207 visits at 0.99, every 32 at 0.5, at every visit at 1e-30) and
// both clocks: the mean is the exact discounted one, the unit stays in [1, 2^32], the total below
// cap * unit, and restore takes every state observe() leaves.
template <typename Count>
void check_discount_rescaling(pbrl::DiscountClock clock) {
  using E = pbrl::TransitionEstimate<Real, S, Rows, Count>;
  // A few roundings per observation, remembered over the 1 / (1 - beta) = 100 observations a
  // discount of 0.99 keeps: 256 eps.
  const double tolerance = std::max(kClose, 256 * double(std::numeric_limits<Count>::epsilon()));
  Real prior[Rows * S];
  random_prior(37u, prior, Rows, false);
  for (const double beta_wanted : {0.99, 0.5, 1e-30}) {
    CAPTURE(beta_wanted);
    Settings settings;
    settings.discount = Real(beta_wanted);
    settings.discount_clock = clock;
    const double beta = double(Real(beta_wanted)), a = 0.5;
    E est;
    REQUIRE(est.init(prior, Real(a), settings) == Status::ok);
    const int r = 4;
    double c[S] = {};
    pbrl::Rng rng(8u);
    Real out[Rows * S];
    for (int k = 1; k <= 5000; ++k) {
      const int next = int(rng.below(S));
      REQUIRE(est.observe_row(r, next) == Status::ok);
      for (double& x : c) x *= beta;  // the same row only: both clocks age it by beta per observation
      c[next] += 1;
      const double unit = double(est.state().unit[r]);
      REQUIRE(unit >= 1);
      REQUIRE(unit <= 4294967296.0);
      REQUIRE(double(est.state().totals[r]) < double(settings.count_cap) * unit);
      if (k % 97 == 0 || k > 4990) {
        CAPTURE(k);
        REQUIRE(est.write_mean(out, r, 1) == Status::ok);
        check_mean_row(out + r * S, prior + r * S, a, c, tolerance);
        double total = 0;
        for (double x : c) total += x;
        CHECK(std::abs(double(est.row_total(r)) - total) <= tolerance * (total + 1));
        E copy;
        REQUIRE(copy.init(prior, Real(a), settings) == Status::ok);
        REQUIRE(copy.restore(est.state()) == Status::ok);
      }
    }
  }
}

TEST_CASE("estimate: a discount ages the unit, O(1); a unit at 2^32 rescales the row; the mean stays exact") {
  for (const auto clock : {pbrl::DiscountClock::row_visits, pbrl::DiscountClock::observations}) {
    CAPTURE(int(clock));
    check_discount_rescaling<float>(clock);
    check_discount_rescaling<Real>(clock);
  }
  // The clock `observations` across a gap whose aging underflows: the row's counts vanish and its
  // mean is the prior's (up to the rounding of a * p / a).
  Real prior[Rows * S];
  random_prior(38u, prior, Rows, false);
  Settings settings;
  settings.discount = Real(0.5);
  settings.discount_clock = pbrl::DiscountClock::observations;
  Estimate est;
  REQUIRE(est.init(prior, Real(1), settings) == Status::ok);
  for (int k = 0; k < 10; ++k) REQUIRE(est.observe_row(0, 1) == Status::ok);
  for (int k = 0; k < 2000; ++k) REQUIRE(est.observe_row(1, 1) == Status::ok);
  REQUIRE(est.observe_row(0, 2) == Status::ok);  // aged by 0.5^2001: rescaled to counts (0, 0, 1, 0, ...)
  CHECK(double(est.state().unit[0]) == 1);
  CHECK(double(est.row_total(0)) == 1);
  Real out[Rows * S];
  REQUIRE(est.write_mean(out, 0, 1) == Status::ok);
  double c[S] = {};
  c[2] = 1;
  check_mean_row(out, prior, 1.0, c);
}

TEST_CASE("estimate: discount per observation ages every row, lazily") {
  check_discount_per_observation<float>();
  check_discount_per_observation<Real>();
}

TEST_CASE("estimate: a row's total reaching the cap halves its counts; frequencies stay, nothing overflows") {
  Real prior[Rows * S];
  random_prior(51u, prior, Rows, false);
  Settings settings;
  settings.count_cap = 8;
  const Real a = Real(1e-6);
  Estimate est;
  REQUIRE(est.init(prior, a, settings) == Status::ok);
  // The rule replayed in the counts' own arithmetic: add one, halve the row when its total reaches
  // the cap. A 3-cycle against a cap of 8 halves at every phase, with fractional counts.
  using Count = Estimate::Count;
  Count c[S] = {}, total = 0;
  const int pattern[3] = {0, 0, 1};
  int halvings = 0;
  Real out[Rows * S];
  for (int k = 0; k < 3000; ++k) {
    const int next = pattern[k % 3];
    REQUIRE(est.observe_row(2, next) == Status::ok);
    c[next] += Count(1);
    total += Count(1);
    if (!(total < Count(8))) {
      for (Count& x : c) x *= Count(0.5);
      total *= Count(0.5);
      ++halvings;
    }
    REQUIRE(double(est.row_total(2)) < 8);
  }
  CHECK(halvings > 500);
  CHECK(est.observations(2) == 3000);
  CHECK(est.observations() == 3000);
  CHECK(std::memcmp(c, est.state().counts + 2 * S, sizeof(c)) == 0);
  CHECK(std::memcmp(&total, est.state().totals + 2, sizeof(total)) == 0);
  REQUIRE(est.write_mean(out) == Status::ok);
  CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
  double cd[S];
  for (int i = 0; i < S; ++i) cd[i] = double(c[i]);
  check_mean_row(out + 2 * S, prior + 2 * S, double(a), cd);
  // The halvings' bias stays within 1/cap of the frequencies 2/3, 1/3.
  CHECK(std::abs(double(out[2 * S]) - 2.0 / 3.0) <= 1.0 / 8);

  // Halving preserves the mean but for the prior's share: with even counts (6, 2) -> (3, 1).
  Estimate fresh;
  REQUIRE(fresh.init(prior, a, settings) == Status::ok);
  const int seq[7] = {0, 0, 1, 0, 0, 0, 1};  // counts (5, 2) after 7, then + s'=0 -> (6, 2): total 8
  for (int next : seq) REQUIRE(fresh.observe_row(4, next) == Status::ok);
  Real before[Rows * S], after[Rows * S];
  REQUIRE(fresh.write_mean(before, 4, 1) == Status::ok);
  REQUIRE(fresh.observe_row(4, 0) == Status::ok);  // total 8: halved to (3, 1)
  CHECK(double(fresh.row_total(4)) == 4);
  REQUIRE(fresh.write_mean(after, 4, 1) == Status::ok);
  const double empirical_before = 5.0 / 7.0;
  CHECK(std::abs(double(before[4 * S]) - empirical_before) <= 1e-5);
  CHECK(std::abs(double(after[4 * S]) - 0.75) <= 1e-5);
}

TEST_CASE("estimate: integer counts (uint16_t) halve at the cap and refuse a discount") {
  using Integer = pbrl::TransitionEstimate<Real, S, Rows, std::uint16_t>;
  static_assert(sizeof(Integer::State::counts) == sizeof(std::uint16_t) * Rows * S, "2 bytes a count");
  Real prior[Rows * S];
  random_prior(61u, prior, Rows, false);
  Settings settings;
  settings.count_cap = 65536;  // above the type's maximum
  Integer est;
  CHECK(est.init(prior, Real(1), settings) == Status::bad_setting);
  settings.count_cap = 64;
  settings.discount = Real(0.9);
  CHECK(est.init(prior, Real(1), settings) == Status::bad_setting);
  CHECK_FALSE(est.initialized());
  settings.discount = Real(1);
  REQUIRE(est.init(prior, Real(1), settings) == Status::ok);
  unsigned c[S] = {}, total = 0;
  for (int k = 0; k < 1000; ++k) {
    const int next = (k % 3 == 2) ? 1 : 3;
    REQUIRE(est.observe_row(9, next) == Status::ok);
    ++c[next];
    ++total;
    if (total >= 64) {
      total = 0;
      for (unsigned& x : c) total += (x /= 2);
    }
  }
  for (int i = 0; i < S; ++i) CHECK(unsigned(est.state().counts[9 * S + i]) == c[i]);
  CHECK(unsigned(est.state().totals[9]) == total);
  Real out[Rows * S];
  REQUIRE(est.write_mean(out) == Status::ok);
  CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
  double cd[S];
  for (int i = 0; i < S; ++i) cd[i] = c[i];
  check_mean_row(out + 9 * S, prior + 9 * S, 1.0, cd);
}

TEST_CASE("estimate: edges (strength 1e-6 and 1e6, zeros, dense support, one observation, float) are valid rows") {
  for (const bool zeros : {false, true})
    for (const auto support : {pbrl::EstimateSupport::prior, pbrl::EstimateSupport::dense})
      for (const Real a : {Real(1e-6), Real(1), Real(1e6)})
        for (const Real beta : {Real(1), Real(0.5)}) {
          CAPTURE(zeros);
          CAPTURE(int(support));
          CAPTURE(a);
          CAPTURE(beta);
          Real prior[Rows * S];
          random_prior(71u, prior, Rows, zeros);
          REQUIRE(pbrl::validate_transition<Real, S, A>(prior) == Status::ok);
          Settings settings;
          settings.support = support;
          settings.discount = beta;
          settings.discount_clock = pbrl::DiscountClock::observations;
          Estimate est;
          REQUIRE(est.init(prior, a, settings) == Status::ok);
          REQUIRE(est.observe_row(0, 2) == Status::ok);  // one observation of row 0 (prior(2|0) > 0)
          Real out[Rows * S];
          REQUIRE(est.write_mean(out) == Status::ok);
          CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
          double c[S] = {0, 0, 1, 0};
          check_mean_row(out, prior, double(a), c);
          // Every next state of every row, where the support allows.
          for (int r = 1; r < Rows; ++r)
            for (int i = 0; i < S; ++i) {
              const Status st = est.observe_row(r, i);
              CHECK(st == (support == pbrl::EstimateSupport::dense || prior[r * S + i] > Real(0) ? Status::ok
                                                                                               : Status::out_of_bounds));
            }
          REQUIRE(est.write_mean(out) == Status::ok);
          CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);
        }
  // Float, whatever the suite's scalar: tiny and huge strengths, a long run.
  for (const float a : {1e-6f, 1e6f}) {
    float prior[Rows * S];
    random_prior(72u, prior, Rows, true);
    pbrl::TransitionEstimate<float, S, Rows> est;
    pbrl::EstimateSettings<float> settings;
    settings.support = pbrl::EstimateSupport::dense;
    settings.count_cap = pbrl::kMaxCountCap;
    REQUIRE(est.init(prior, a, settings) == Status::ok);
    pbrl::Rng rng(9u);
    for (int k = 0; k < 3000; ++k) REQUIRE(est.observe_row(int(rng.below(Rows)), int(rng.below(S))) == Status::ok);
    float out[Rows * S];
    REQUIRE(est.write_mean(out) == Status::ok);
    CHECK(pbrl::validate_transition<float, S, A>(out) == Status::ok);
  }
}

TEST_CASE("estimate: refusals change nothing") {
  Real prior[Rows * S];
  random_prior(81u, prior, Rows, true);
  Estimate blank;
  const Bytes<Estimate> blank_copy(blank);
  Real out[Rows * S], out_copy[Rows * S];
  for (int i = 0; i < Rows * S; ++i) out[i] = out_copy[i] = Real(i) - Real(7.5);
  CHECK(blank.observe_row(0, 0) == Status::not_initialized);
  CHECK(blank.observe(0, 0, 0) == Status::not_initialized);
  CHECK(blank.write_mean(out) == Status::not_initialized);
  CHECK(blank.restore(blank.state()) == Status::not_initialized);
  CHECK_FALSE(blank.refresh_due());
  blank.mark_refreshed();
  CHECK(blank_copy.same(blank));

  // init: bad prior, strength or settings leave an initialized estimate as it was.
  Settings settings;
  settings.discount = Real(0.9);
  Estimate est;
  REQUIRE(est.init(prior, Real(2), settings) == Status::ok);
  pbrl::Rng rng(8u);
  for (int k = 0; k < 30; ++k) {
    const int r = int(rng.below(Rows));
    REQUIRE(est.observe_row(r, draw(rng, prior + r * S)) == Status::ok);
  }
  const Bytes<Estimate> copy(est);
  Real bad[Rows * S];
  std::memcpy(bad, prior, sizeof(prior));
  CHECK(est.init(nullptr, Real(1), settings) == Status::null_pointer);
  bad[5] = kNaN;
  CHECK(est.init(bad, Real(1), settings) == Status::not_finite);
  bad[5] = Real(-0.1);
  CHECK(est.init(bad, Real(1), settings) == Status::bad_transition);
  bad[5] = prior[5] + Real(0.01);
  CHECK(est.init(bad, Real(1), settings) == Status::bad_transition);
  constexpr Real eps = std::numeric_limits<Real>::epsilon();
  for (const Real a : {Real(0), Real(-1), kNaN, kInf, eps * eps / Real(2), Real(2) / (eps * eps)})
    CHECK(est.init(prior, a, settings) == Status::bad_setting);
  const auto refused = [&](auto change) {
    Settings s;
    change(s);
    return est.init(prior, Real(1), s);
  };
  CHECK(refused([](Settings& s) { s.discount = Real(0); }) == Status::bad_setting);
  CHECK(refused([](Settings& s) { s.discount = Real(1.5); }) == Status::bad_setting);
  CHECK(refused([](Settings& s) { s.discount = kNaN; }) == Status::bad_setting);
  CHECK(refused([](Settings& s) {
          s.discount = Real(0.5);
          s.discount_clock = static_cast<pbrl::DiscountClock>(7);
        }) == Status::bad_setting);
  CHECK(refused([](Settings& s) { s.support = static_cast<pbrl::EstimateSupport>(2); }) == Status::bad_setting);
  CHECK(refused([](Settings& s) { s.count_cap = 1; }) == Status::bad_setting);
  CHECK(refused([](Settings& s) { s.count_cap = pbrl::kMaxCountCap + 1; }) == Status::bad_setting);
  CHECK(refused([](Settings& s) { s.refresh_every = -1; }) == Status::bad_setting);
  CHECK(refused([](Settings& s) { s.refresh_row_observations = -1; }) == Status::bad_setting);
  CHECK(copy.same(est));

  // observe: indices out of range, outside the prior's support.
  CHECK(est.observe_row(-1, 0) == Status::out_of_bounds);
  CHECK(est.observe_row(Rows, 0) == Status::out_of_bounds);
  CHECK(est.observe_row(0, -1) == Status::out_of_bounds);
  CHECK(est.observe_row(0, S) == Status::out_of_bounds);
  CHECK(est.observe(S, 0, 0) == Status::out_of_bounds);
  CHECK(est.observe(0, A, 0) == Status::out_of_bounds);
  CHECK(est.observe(0, -1, 0) == Status::out_of_bounds);
  CHECK(est.observe(0, 0, S) == Status::out_of_bounds);
  int zero_row = -1, zero_next = -1;
  for (int i = 0; i < Rows * S && zero_row < 0; ++i)
    if (prior[i] == Real(0)) zero_row = i / S, zero_next = i % S;
  REQUIRE(zero_row >= 0);
  CHECK(est.observe_row(zero_row, zero_next) == Status::out_of_bounds);
  CHECK(copy.same(est));

  // write_mean: null, ranges, an output over the prior.
  CHECK(est.write_mean(nullptr) == Status::null_pointer);
  CHECK(est.write_mean(out, -1, 1) == Status::out_of_bounds);
  CHECK(est.write_mean(out, 0, -1) == Status::out_of_bounds);
  CHECK(est.write_mean(out, Rows, 1) == Status::out_of_bounds);
  CHECK(est.write_mean(out, Rows - 2, 3) == Status::out_of_bounds);
  CHECK(est.write_mean(out, Rows + 1, 0) == Status::out_of_bounds);
  CHECK(est.write_mean(out, 1, std::numeric_limits<int>::max()) == Status::out_of_bounds);
  CHECK(std::memcmp(out, out_copy, sizeof(out)) == 0);
  Real overlap[2 * Rows * S];
  std::memcpy(overlap, prior, sizeof(prior));
  Estimate over;
  REQUIRE(over.init(overlap, Real(1)) == Status::ok);
  CHECK(over.write_mean(overlap + S) == Status::bad_setting);
  CHECK(over.write_mean(overlap) == Status::bad_setting);
  CHECK(std::memcmp(overlap, prior, sizeof(prior)) == 0);
  CHECK(over.write_mean(overlap + Rows * S) == Status::ok);  // right after it: fine
  CHECK(est.write_mean(out, Rows, 0) == Status::ok);         // empty range: nothing written
  CHECK(std::memcmp(out, out_copy, sizeof(out)) == 0);
  CHECK(copy.same(est));
}

TEST_CASE("estimate: observation counts refuse to overflow; restore checks the state") {
  Real prior[Rows * S];
  random_prior(91u, prior, Rows, false);
  Estimate est;
  REQUIRE(est.init(prior, Real(1)) == Status::ok);
  auto state = std::make_unique<Estimate::State>();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  state->clock = kMax - 1;
  state->observations[3] = kMax - 1;
  state->last[3] = kMax - 1;
  state->counts[3 * S + 2] = 5;
  state->totals[3] = 5;
  state->unit[3] = 1;
  REQUIRE(est.restore(*state) == Status::ok);
  CHECK(est.observe_row(3, 1) == Status::ok);
  CHECK(est.observations() == kMax);
  CHECK(est.observations(3) == kMax);
  const Estimate copy = est;
  const Bytes<Estimate> bytes(est);
  CHECK(est.observe_row(3, 1) == Status::count_overflow);
  CHECK(est.observe_row(0, 1) == Status::count_overflow);
  CHECK(bytes.same(est));
  Real out[Rows * S];
  REQUIRE(est.write_mean(out) == Status::ok);
  CHECK(pbrl::validate_transition<Real, S, A>(out) == Status::ok);

  // States an estimate cannot reach are refused, and change nothing.
  const auto refused = [&](auto change) {
    Estimate::State s = copy.state();
    change(s);
    return est.restore(s);
  };
  CHECK(refused([](Estimate::State& s) { s.counts[3 * S] = Real(-1); }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.counts[3 * S] = kNaN; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.counts[0] = 1; }) == Status::bad_setting);  // row 0 never observed
  CHECK(refused([](Estimate::State& s) { s.totals[3] = float(1 << 20); }) == Status::bad_setting);  // at the cap
  CHECK(refused([](Estimate::State& s) { s.totals[3] = 1e9f; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.counts[3 * S] = 1e30f; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.observations[3] -= 1; }) == Status::bad_setting);  // sum != clock
  CHECK(refused([](Estimate::State& s) { s.observations[0] = 1; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.last[3] = 0; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.clock = -1; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.refreshed_at = 1; }) == Status::ok);
  CHECK(refused([](Estimate::State& s) { s.refreshed_at = -1; }) == Status::bad_setting);
  // Units: 0 before a row's first observation, then 1 without a discount.
  CHECK(refused([](Estimate::State& s) { s.unit[3] = 0; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.unit[3] = 2; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.unit[3] = kNaN; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.unit[0] = 1; }) == Status::bad_setting);  // row 0 never observed
  CHECK(refused([](Estimate::State& s) { s.totals[0] = Real(0.25); }) == Status::bad_setting);
  // A discount near 1 allows a large rounding drift between a row's counts and its total; a row
  // never observed still has total 0 (a fuzzing find: total 3.1 was taken at discount 1 - 1e-10,
  // and the row's first observation left its total above cap * unit).
  {
    Settings near_one;
    near_one.discount = kDouble ? Real(1 - 1e-10) : Real(1 - 1e-6);
    near_one.count_cap = 2;
    Estimate e;
    REQUIRE(e.init(prior, Real(1), near_one) == Status::ok);
    REQUIRE(e.observe_row(1, 0) == Status::ok);
    Estimate::State s = e.state();
    s.totals[9] = Real(3.1);
    CHECK(e.restore(s) == Status::bad_setting);
    s.totals[9] = 0;
    CHECK(e.restore(s) == Status::ok);
  }
  // Counts whose sum is not the row's total beyond rounding (a fuzzing find: counts {32, 0} with
  // total 1 were taken, and the next observation made a state restore refused, so a device
  // could never restore its next checkpoint).
  CHECK(refused([](Estimate::State& s) { s.counts[3 * S] += 31.0f; }) == Status::bad_setting);
  CHECK(refused([](Estimate::State& s) { s.totals[3] += 3.0f; }) == Status::bad_setting);
  REQUIRE(est.restore(copy.state()) == Status::ok);
  CHECK(bytes.same(est));

  // A state carried to another estimate of the same prior writes the same mean.
  Estimate a, b;
  REQUIRE(a.init(prior, Real(2)) == Status::ok);
  REQUIRE(b.init(prior, Real(2)) == Status::ok);
  pbrl::Rng rng(4u);
  for (int k = 0; k < 100; ++k) {
    const int r = int(rng.below(Rows));
    REQUIRE(a.observe_row(r, draw(rng, prior + r * S)) == Status::ok);
  }
  REQUIRE(b.restore(a.state()) == Status::ok);
  Real out_a[Rows * S], out_b[Rows * S];
  REQUIRE(a.write_mean(out_a) == Status::ok);
  REQUIRE(b.write_mean(out_b) == Status::ok);
  CHECK(std::memcmp(out_a, out_b, sizeof(out_a)) == 0);
  int fields = 0;
  auto count = [&](const auto&... f) { fields = int(sizeof...(f)); };
  pbrl::CheckpointAccess::visit_state(a, count);
  CHECK(fields == 1);  // the state, one checkpoint field
}

TEST_CASE("estimate: write_mean in slices writes the bits of one call") {
  Real prior[Rows * S];
  random_prior(101u, prior, Rows, true);
  for (const auto clock : {pbrl::DiscountClock::row_visits, pbrl::DiscountClock::observations}) {
    Settings settings;
    settings.discount = Real(0.95);
    settings.discount_clock = clock;
    settings.support = pbrl::EstimateSupport::dense;
    Estimate est;
    REQUIRE(est.init(prior, Real(0.7), settings) == Status::ok);
    pbrl::Rng rng(6u);
    for (int k = 0; k < 150; ++k) REQUIRE(est.observe_row(int(rng.below(Rows - 1)), int(rng.below(S))) == Status::ok);
    Real whole[Rows * S], sliced[Rows * S];
    REQUIRE(est.write_mean(whole, 0, Rows) == Status::ok);
    for (const int slice : {1, 2, 5, 7}) {
      CAPTURE(slice);
      std::memset(sliced, 0xff, sizeof(sliced));
      for (int first = 0; first < Rows; first += slice)
        REQUIRE(est.write_mean(sliced, first, std::min(slice, Rows - first)) == Status::ok);
      CHECK(std::memcmp(whole, sliced, sizeof(whole)) == 0);
    }
    CHECK(pbrl::validate_transition<Real, S, A>(whole) == Status::ok);
    CHECK(std::memcmp(whole + (Rows - 1) * S, prior + (Rows - 1) * S, sizeof(Real) * S) == 0);
  }
}

TEST_CASE("estimate: refresh when a row's observations double, or every N observations") {
  Real prior[Rows * S];
  random_prior(111u, prior, Rows, false);
  Settings settings;
  settings.refresh_row_observations = 2;
  Estimate est;
  REQUIRE(est.init(prior, Real(1), settings) == Status::ok);
  CHECK_FALSE(est.refresh_due());
  std::vector<int> due_at;
  for (int n = 1; n <= 20; ++n) {
    REQUIRE(est.observe_row(0, 0) == Status::ok);
    if (est.refresh_due()) {
      due_at.push_back(n);
      est.mark_refreshed();
      CHECK_FALSE(est.refresh_due());
    }
  }
  CHECK(due_at == std::vector<int>{2, 4, 8, 16});
  REQUIRE(est.observe_row(1, 0) == Status::ok);
  CHECK_FALSE(est.refresh_due());
  REQUIRE(est.observe_row(1, 0) == Status::ok);  // row 1's second observation
  CHECK(est.refresh_due());

  settings.refresh_row_observations = 0;
  settings.refresh_every = 5;
  REQUIRE(est.init(prior, Real(1), settings) == Status::ok);
  due_at.clear();
  for (int n = 1; n <= 17; ++n) {
    REQUIRE(est.observe_row(n % Rows, 0) == Status::ok);
    if (est.refresh_due()) {
      due_at.push_back(n);
      est.mark_refreshed();
    }
  }
  CHECK(due_at == std::vector<int>{5, 10, 15});

  settings.refresh_every = 0;  // both off: never due
  REQUIRE(est.init(prior, Real(1), settings) == Status::ok);
  for (int n = 0; n < 50; ++n) REQUIRE(est.observe_row(0, 1) == Status::ok);
  CHECK_FALSE(est.refresh_due());
}

TEST_CASE("estimate: joint rows of two players follow the problems' layout") {
  constexpr int S3 = 3, A1 = 2, A2 = 3, R = S3 * A1 * A2;
  using Joint = pbrl::TransitionEstimate<Real, S3, R>;
  static_assert(Joint::kActions == A1 * A2, "joint actions");
  for (int s = 0; s < S3; ++s)
    for (int a1 = 0; a1 < A1; ++a1)
      for (int a2 = 0; a2 < A2; ++a2) {
        CHECK(Joint::row<A1, A2>(s, a1, a2) == (s * A1 + a1) * A2 + a2);  // Stackelberg, IncentiveDesign
        CHECK(Joint::row(s, a1 * A2 + a2) == (s * A1 + a1) * A2 + a2);
      }
  Real prior[R * S3];
  pbrl::Rng rng(12u);
  pbrl::random_transition(rng, prior, R, S3);
  Joint est;
  REQUIRE(est.init(prior, Real(1)) == Status::ok);
  CHECK(est.observe<A1, A2>(2, 1, 0, 1) == Status::ok);
  CHECK(est.observations((2 * A1 + 1) * A2) == 1);
  CHECK(est.observe<A1, A2>(2, 1, A2, 1) == Status::out_of_bounds);
  CHECK(est.observe<A1, A2>(2, A1, 0, 1) == Status::out_of_bounds);
  CHECK(est.observe<A1, A2>(S3, 0, 0, 1) == Status::out_of_bounds);
  CHECK(est.observe<A1, A2>(0, 0, 0, S3) == Status::out_of_bounds);
  CHECK(est.observations() == 1);
  CHECK(est.row_observations()[(2 * A1 + 1) * A2] == 1);
}

}  // namespace test_transition_estimate
