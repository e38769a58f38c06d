#pragma once
// TransitionEstimate: a fixed-memory Dirichlet posterior over a tabular transition model, for a
// device that observes its own transitions. docs/estimation.md has the model, the support rule,
// forgetting, saturation, the refresh rule and the memory.
//
// Rows joint rows over S next states, laid out as the problems' transition arrays (row = s*A + a;
// (s*A1 + a1)*A2 + a2 for two players; P(s'|row) at [row*S + s']). Row r's posterior is
// Dirichlet(a p_r + c_r): p the prior (the caller's array, read in place, which must stay valid and
// unchanged), a > 0 its strength, c_r the row's counts (discounted with settings.discount < 1,
// halved when the row's total reaches settings.count_cap). write_mean() writes the posterior mean,
// a valid transition row by construction; a row never observed is its prior row, bit for bit.
// observe() is O(1) (O(S) at a row's rare rescale or halving). Count: float or double
// pseudo-counts, or uint16_t / uint32_t whole counts (no discount). Every call that takes data
// validates it and on an error status changes nothing.

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/core/config.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/model/detail/model_digest.hpp"
#include "pbrl/solver/settings.hpp"
#include "pbrl/core/status.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

namespace pbrl {

/// Which next states an estimate counts: only those the prior allows (prior: others are refused,
/// out_of_bounds), or every one (dense).
enum class EstimateSupport : unsigned char { prior, dense };
/// EstimateSupport's enumerator names, as settings files spell them.
constexpr EnumNames<EstimateSupport, 2> enum_names(EstimateSupport) { return {{"prior", "dense"}}; }
static_assert(enum_names(EstimateSupport{}).size == int(EstimateSupport::dense) + 1, "a name per enumerator");
/// What ages a row's counts when forgetting (discount < 1): each observation of the row
/// (row_visits) or of any row (observations).
enum class DiscountClock : unsigned char { row_visits, observations };
/// DiscountClock's enumerator names, as settings files spell them.
constexpr EnumNames<DiscountClock, 2> enum_names(DiscountClock) { return {{"row_visits", "observations"}}; }
static_assert(enum_names(DiscountClock{}).size == int(DiscountClock::observations) + 1, "a name per enumerator");

/// The largest count_cap: below it a float count is an exact integer (beta = 1).
constexpr std::int64_t kMaxCountCap = std::int64_t(1) << 24;

/// The settings of a TransitionEstimate (docs/estimation.md).
template <typename Scalar>
struct EstimateSettings {
  EstimateSupport support = EstimateSupport::prior;  ///< refuse (prior) or count (dense) s' outside the prior's support
  Scalar discount = Scalar(1);                       ///< beta in (0, 1]; 1: no forgetting
  DiscountClock discount_clock = DiscountClock::row_visits;  ///< beta < 1: per observation of the row, or of any row
  std::int64_t count_cap = std::int64_t(1) << 20;   ///< a row's total reaching it halves the row's counts, [2, 2^24]
  std::int64_t refresh_row_observations = 4;        ///< m: due when a row's observations reach m*2^k (0: off)
  std::int64_t refresh_every = 0;                   ///< due every so many observations (0: off)

  /// Each field once, with its domain and its name (visitor: v(field, Domain, name)).
  template <class Visitor>
  void visit(Visitor& v) const {
    using namespace domain;
    v(support, enumerator(EstimateSupport::dense), "support");
    v(discount, unit_above_zero(), "discount");
    v(discount_clock, when(Mode{discount < Scalar(1), "discount < 1"}, enumerator(DiscountClock::observations)), "discount_clock");
    v(count_cap, range(2, kMaxCountCap), "count_cap");
    v(refresh_row_observations, range(0, std::numeric_limits<std::int64_t>::max()), "refresh_row_observations");
    v(refresh_every, range(0, std::numeric_limits<std::int64_t>::max()), "refresh_every");
  }
};

/// Checks every field's domain.
/// @return ok or bad_setting.
template <typename Scalar>
Status validate(const EstimateSettings<Scalar>& s) {
  return check_domains(s);
}

/// Everything of an estimate that changes after init(), as plain arrays (a checkpoint carries it).
template <typename Count, int S, int Rows>
struct TransitionEstimateState {
  Count counts[Rows * S] = {};             ///< c(row, s') * unit[row]: discounted pseudo-counts at [row*S + s']
  Count totals[Rows] = {};                 ///< sum over s' of counts[row*S + s'] (< count_cap * unit[row])
  Count unit[Rows] = {};                   ///< what an observation adds to the row now (0: none yet; 1 without discount)
  std::int64_t observations[Rows] = {};    ///< n(row): observations of the row since init()
  std::int64_t last[Rows] = {};            ///< the clock after the row's last observation (0: none)
  std::int64_t clock = 0;                  ///< observations of every row since init()
  std::int64_t refreshed_at = 0;           ///< the clock at the last mark_refreshed()
  bool refresh_pending = false;            ///< a row reached its next doubling since then
};

namespace detail {

// A checkpoint's encoding of an estimate's state, in field order: each count, total and unit in sizeof(Count)
// bytes (IEEE-754 bits, or the unsigned integer), little-endian; the observation counts, stamps,
// clock and refresh stamp as 64-bit counts; refresh_pending as one byte, 0 or 1.
template <typename Count, int S, int Rows>
struct CheckpointField<TransitionEstimateState<Count, S, Rows>> {
  using State = TransitionEstimateState<Count, S, Rows>;
  using Word = CheckpointField<std::int64_t>;
  static constexpr std::size_t kCount = sizeof(Count);
  static constexpr std::size_t kCounts = std::size_t(Rows) * S + 2 * std::size_t(Rows);  // counts, totals, units
  static constexpr std::size_t size = kCounts * kCount + (2 * std::size_t(Rows) + 2) * Word::size + 1;

  static void put_count(unsigned char*& p, Count c) {
    if constexpr (std::is_floating_point<Count>::value) {
      CheckpointField<Count>::write(p, c);
    } else {
      put_le(p, std::uint64_t(c), int(kCount));
      p += kCount;
    }
  }
  static Count get_count(const unsigned char* p) {
    if constexpr (std::is_floating_point<Count>::value) {
      Count c;
      CheckpointField<Count>::read(p, c);
      return c;
    } else {
      return Count(get_le(p, int(kCount)));
    }
  }
  static void write(unsigned char*& p, const State& s) {
    for (const Count c : s.counts) put_count(p, c);
    for (const Count c : s.totals) put_count(p, c);
    for (const Count c : s.unit) put_count(p, c);
    for (const std::int64_t n : s.observations) Word::write(p, n);
    for (const std::int64_t n : s.last) Word::write(p, n);
    Word::write(p, s.clock);
    Word::write(p, s.refreshed_at);
    *p++ = s.refresh_pending ? 1u : 0u;
  }
  // Each number's range: finite float counts (not_finite), counts below 2^63 - 1 and a flag of 0
  // or 1 (checkpoint_corrupt); TransitionEstimate::validate_checkpoint_state checks the rest.
  static Status check(const unsigned char*& p) {
    if constexpr (std::is_floating_point<Count>::value) {
      for (std::size_t i = 0; i < kCounts; ++i)
        if (Status st = CheckpointField<Count>::check(p); st != Status::ok) return st;
    } else {
      p += kCounts * kCount;
    }
    for (std::size_t i = 0; i < 2 * std::size_t(Rows) + 2; ++i)
      if (Status st = Word::check(p); st != Status::ok) return st;
    return *p++ > 1u ? Status::checkpoint_corrupt : Status::ok;
  }
  static void read(const unsigned char*& p, State& s) {
    for (Count& c : s.counts) c = get_count(p), p += kCount;
    for (Count& c : s.totals) c = get_count(p), p += kCount;
    for (Count& c : s.unit) c = get_count(p), p += kCount;
    for (std::int64_t& n : s.observations) Word::read(p, n);
    for (std::int64_t& n : s.last) Word::read(p, n);
    Word::read(p, s.clock);
    Word::read(p, s.refreshed_at);
    s.refresh_pending = *p++ != 0u;
  }
  // The fields of an encoded state, read where they are (no State on the stack).
  struct View {
    const unsigned char* p;
    Count count(int i) const { return get_count(p + std::size_t(i) * kCount); }
    Count total(int r) const { return get_count(p + (std::size_t(Rows) * S + std::size_t(r)) * kCount); }
    Count unit(int r) const { return get_count(p + (std::size_t(Rows) * (S + 1) + std::size_t(r)) * kCount); }
    std::int64_t word(std::size_t i) const { return std::int64_t(get_le(p + kCounts * kCount + i * 8, 8)); }
    std::int64_t observations(int r) const { return word(std::size_t(r)); }
    std::int64_t last(int r) const { return word(std::size_t(Rows) + std::size_t(r)); }
    std::int64_t clock() const { return word(2 * std::size_t(Rows)); }
    std::int64_t refreshed_at() const { return word(2 * std::size_t(Rows) + 1); }
  };
};

}  // namespace detail

/// A fixed-memory Dirichlet posterior over a tabular transition model of Rows joint rows over S
/// next states, for a device that observes its own transitions (the comment atop
/// estimate/transition_estimate.hpp; docs/estimation.md). Every call that takes data validates it
/// and on an error status changes nothing.
/// @tparam Scalar_ the floating-point type of the prior and the mean
/// @tparam S the number of states
/// @tparam Rows the joint rows (S times the joint actions), laid out as the problems' arrays
/// @tparam Count_ float or double pseudo-counts, or uint16_t / uint32_t whole counts (no discount)
template <typename Scalar_, int S, int Rows, typename Count_ = float>
class TransitionEstimate {
 public:
  /// The floating-point type of the prior and the mean.
  using Scalar = Scalar_;
  /// The count type.
  using Count = Count_;
  /// The number of states S.
  static constexpr int kStates = S;
  /// The number of joint rows.
  static constexpr int kRows = Rows;
  static constexpr int kActions = Rows / S;  ///< joint actions per state
  /// Whether the counts are whole (an unsigned integer Count).
  static constexpr bool kIntegerCounts = std::is_integral<Count>::value;
  static_assert(S >= 2, "pbrl needs at least two states");
  static_assert(Rows >= S && Rows % S == 0, "Rows is S times the number of joint actions");
  static_assert(Rows <= std::numeric_limits<int>::max() / S, "Rows*S entries must be indexable by int");
  static_assert(std::is_floating_point<Count>::value || (std::is_unsigned<Count>::value && sizeof(Count) >= 2),
                "counts are float, double or an unsigned integer type of 16 bits or more");

  /// The state a checkpoint carries (state(), restore()).
  using State = TransitionEstimateState<Count, S, Rows>;

  /// The joint row of (s, a), a in [0, kActions): s*kActions + a.
  static constexpr int row(int s, int a) { return s * kActions + a; }
  /// The joint row of (s, a1, a2) for two players (Stackelberg: a_l, a_f; incentive design: a1,
  /// a2): (s*A1 + a1)*A2 + a2.
  template <int A1, int A2>
  static constexpr int row(int s, int a1, int a2) {
    static_assert(A1 >= 1 && A2 >= 1 && A1 * A2 == kActions, "A1*A2 must be the joint action count");
    return (s * A1 + a1) * A2 + a2;
  }

  /// Starts with no observations around the prior.
  /// @param prior a transition array of Rows rows (validated as validate_transition does); it
  ///        must stay valid and unchanged while the estimate is used
  /// @param strength a: pseudo-counts per row, finite, in [epsilon^2, 1/epsilon^2] of Scalar
  /// @param settings the settings (validate(EstimateSettings); integer counts need discount 1 and
  ///        a count_cap their type holds)
  /// @return check_init()'s statuses; on error the estimate stays as it was (initialized or not).
  Status init(const Scalar* prior, Scalar strength, const EstimateSettings<Scalar>& settings = {}) {
    if (Status st = check_init(prior, strength, settings); st != Status::ok) return st;
    prior_ = prior;
    prior_digest_ = detail::array_digest(prior, std::size_t(Rows) * S);
    cap_ = Scalar(settings.count_cap);
    forgetting_ = settings.discount < Scalar(1);
    refresh_power_of_two_ = power_of_two(settings.refresh_row_observations);
    inverse_discount_ = Count(Count(1) / Count(settings.discount));
    strength_ = strength;
    settings_ = settings;
    std::memset(static_cast<void*>(&state_), 0, sizeof(State));  // no State{} temporary: Rows*S counts
    return Status::ok;
  }

  /// init()'s checks alone: the status init() would return, with nothing changed.
  /// @return ok; null_pointer; not_finite or bad_transition (the prior); bad_setting (strength,
  ///         settings).
  static Status check_init(const Scalar* prior, Scalar strength, const EstimateSettings<Scalar>& settings) {
    if (prior == nullptr) return Status::null_pointer;
    if (Status st = detail::check_transition_rows(prior, Rows, S); st != Status::ok) return st;
    const Scalar eps = std::numeric_limits<Scalar>::epsilon();
    if (!std::isfinite(strength) || !(strength >= eps * eps) || !(strength <= Scalar(1) / (eps * eps)))
      return Status::bad_setting;
    if (Status st = validate(settings); st != Status::ok) return st;
    if constexpr (kIntegerCounts) {
      if (settings.discount < Scalar(1)) return Status::bad_setting;
      if (settings.count_cap > std::int64_t(std::numeric_limits<Count>::max())) return Status::bad_setting;
    }
    return Status::ok;
  }

  /// Whether init() has succeeded.
  bool initialized() const { return prior_ != nullptr; }
  /// The prior's transition array (null before init()).
  const Scalar* prior() const { return prior_; }
  /// The prior's strength a.
  Scalar strength() const { return strength_; }
  /// The settings of init().
  const EstimateSettings<Scalar>& settings() const { return settings_; }

  /// One observed transition out of joint row `row` to s_next. O(1) (O(log d) for the discount
  /// clock `observations`); O(S) when the row's unit is rescaled or its total reaches the cap.
  /// @return ok; not_initialized; out_of_bounds (an index outside its range, or, support prior,
  ///         s_next outside the prior's support); count_overflow (the observation count has no
  ///         room). Nothing changed on error.
  Status observe_row(int row, int s_next) {
    if (!initialized()) return Status::not_initialized;
    if (row < 0 || row >= Rows || s_next < 0 || s_next >= S) return Status::out_of_bounds;
    if (settings_.support == EstimateSupport::prior && !(prior_[row * S + s_next] > Scalar(0)))
      return Status::out_of_bounds;
    if (state_.clock == std::numeric_limits<std::int64_t>::max()) return Status::count_overflow;
    State& st = state_;
    const std::int64_t n = st.observations[row];
    Count unit = Count(1);
    if constexpr (!kIntegerCounts)
      if (forgetting_ && n > 0) unit = aged_unit(row);
    Count* const c = st.counts + row * S;
    c[s_next] = Count(c[s_next] + unit);
    st.totals[row] = Count(st.totals[row] + unit);
    if (!(Scalar(st.totals[row]) < cap_ * Scalar(unit))) halve_row(row);
    st.unit[row] = unit;
    st.observations[row] = n + 1;
    st.clock += 1;
    st.last[row] = st.clock;
    if (doubled(n + 1)) st.refresh_pending = true;
    return Status::ok;
  }
  /// observe_row() out of state s under joint action a in [0, kActions).
  Status observe(int s, int a, int s_next) {
    if (s < 0 || s >= S || a < 0 || a >= kActions) return initialized() ? Status::out_of_bounds : Status::not_initialized;
    return observe_row(row(s, a), s_next);
  }
  /// observe_row() out of state s under the actions a1 in [0, A1), a2 in [0, A2) of two players.
  template <int A1, int A2>
  Status observe(int s, int a1, int a2, int s_next) {
    if (s < 0 || s >= S || a1 < 0 || a1 >= A1 || a2 < 0 || a2 >= A2)
      return initialized() ? Status::out_of_bounds : Status::not_initialized;
    return observe_row(row<A1, A2>(s, a1, a2), s_next);
  }

  /// The posterior mean of rows [first_row, first_row + row_count) into those rows of
  /// transition_out, a caller array of Rows*S entries laid out as the prior (its other rows are not
  /// touched), which must not overlap the prior. Each row written is a distribution that
  /// check_transition_rows accepts. O(row_count * S) (plus O(log d) per row for the discount clock
  /// `observations`); a refresh may be split into slices, which write the same bits as one call.
  /// @return ok; not_initialized; null_pointer; out_of_bounds (a range outside [0, Rows]);
  ///         bad_setting (transition_out overlaps the prior). On error nothing is written.
  Status write_mean(Scalar* transition_out, int first_row, int row_count) const {
    if (!initialized()) return Status::not_initialized;
    if (transition_out == nullptr) return Status::null_pointer;
    if (first_row < 0 || row_count < 0 || first_row > Rows || row_count > Rows - first_row)
      return Status::out_of_bounds;
    const std::less<const Scalar*> before;
    if (before(transition_out, prior_ + Rows * S) && before(prior_, transition_out + Rows * S))
      return Status::bad_setting;
    for (int r = first_row; r < first_row + row_count; ++r) mean_row(r, transition_out + r * S);
    return Status::ok;
  }
  /// The posterior mean of every row: write_mean(transition_out, 0, Rows).
  Status write_mean(Scalar* transition_out) const { return write_mean(transition_out, 0, Rows); }

  /// Refresh rule: true when the mean has changed enough to be written and handed to the solver
  /// again (a row's observations reached m*2^k, or refresh_every observations since the last
  /// refresh). Before init(): false.
  bool refresh_due() const {
    if (!initialized()) return false;
    return state_.refresh_pending ||
           (settings_.refresh_every > 0 && state_.clock - state_.refreshed_at >= settings_.refresh_every);
  }
  /// Call when a refresh starts: observations made while its slices are written count toward the
  /// next one. Before init(): no-op.
  void mark_refreshed() {
    if (!initialized()) return;
    state_.refresh_pending = false;
    state_.refreshed_at = state_.clock;
  }

  /// Observations of a row since init() (0 outside [0, Rows)).
  std::int64_t observations(int row) const { return row >= 0 && row < Rows ? state_.observations[row] : 0; }
  /// Observations of every row since init().
  std::int64_t observations() const { return state_.clock; }
  /// The Rows observation counts, row by row.
  const std::int64_t* row_observations() const { return state_.observations; }
  /// A row's total count (0 outside [0, Rows)): its discounted, halved evidence, the weight of the
  /// counts in the mean against the prior's a.
  Scalar row_total(int row) const {
    if (row < 0 || row >= Rows) return Scalar(0);
    return Scalar(state_.totals[row]) * weight(row);
  }

  /// The state, whole (checkpoints; restore() sets it).
  const State& state() const { return state_; }
  /// Sets the state whole, if it is one this estimate could have reached under its settings.
  /// O(Rows*S).
  /// @return ok; not_initialized; bad_setting (negative or non-finite counts, counts in a row never
  ///         observed or, support prior, outside the prior's support, a total at or above the cap,
  ///         an integer total other than its row's sum, float counts summing past twice the cap,
  ///         observation counts that do not add up to the clock, stamps past it). Nothing changes
  ///         on error.
  Status restore(const State& s) {
    if (!initialized()) return Status::not_initialized;
    if (Status st = check_state(StateView{s}); st != Status::ok) return st;
    if (&s != &state_) std::memcpy(static_cast<void*>(&state_), static_cast<const void*>(&s), sizeof(State));
    return Status::ok;
  }

 private:
  // Checkpoints (checkpoint.hpp: save_checkpoint(solver, estimate, ...), through
  // CheckpointAccess): the state as one field; what an image must have been taken under (strength
  // and settings; the count type's code in the header, the prior's digest in the model digest);
  // the image's state checked in place by restore()'s rules (bad_setting).
  friend struct CheckpointAccess;
  template <class Visitor>
  decltype(auto) visit_state(Visitor& v) const { return v(state_); }
  template <class Visitor>
  void visit_state(Visitor& v) { v(state_); }
  template <class Visitor>
  void visit_settings(Visitor& v) const {
    v(strength_, domain::any(), "strength");
    settings_.visit(v);
  }
  static constexpr std::uint8_t checkpoint_code() {
    return std::uint8_t((kIntegerCounts ? 0x10 : 0x00) | sizeof(Count));
  }
  std::uint32_t prior_digest() const { return prior_digest_; }
  // The observation count (clock) of an image's estimate state (A/B storage orders images by it).
  static std::int64_t checkpoint_observations(const unsigned char* payload) {
    return typename detail::CheckpointField<State>::View{payload}.clock();
  }
  Status validate_checkpoint_state(const unsigned char* payload) const {
    if (!initialized()) return Status::not_initialized;
    return check_state(typename detail::CheckpointField<State>::View{payload});
  }

  // beta^d by squaring: O(log d), the same bits on every target (no pow).
  static Scalar power(Scalar beta, std::int64_t d) {
    Scalar result(1), base = beta;
    while (d > 0) {
      if (d & 1) result *= base;
      d >>= 1;
      if (d > 0) base *= base;
    }
    return result;
  }
  static bool power_of_two(std::int64_t k) { return k > 0 && (k & (k - 1)) == 0; }
  // The refresh rule's trigger: n = m * 2^k for some k >= 0 (m = refresh_row_observations > 0).
  // In 32 bits while n fits (a 64-bit division is a library call on a 32-bit core).
  bool doubled(std::int64_t n) const {
    const std::int64_t m = settings_.refresh_row_observations;
    if (m <= 0 || n < m) return false;
    if (refresh_power_of_two_) return power_of_two(n);  // m * 2^k with m = 2^j: the powers of two from m on
    if (n <= std::int64_t(UINT32_MAX)) {
      const std::uint32_t n32 = std::uint32_t(n), m32 = std::uint32_t(m);
      return n32 % m32 == 0u && power_of_two(std::int64_t(n32 / m32));
    }
    return n % m == 0 && power_of_two(n / m);
  }

  // The factor that ages row's counts to now (the clock `observations`; else 1).
  Scalar age(int row) const {
    if (forgetting_ && settings_.discount_clock == DiscountClock::observations && state_.observations[row] > 0)
      return power(settings_.discount, state_.clock - state_.last[row]);
    return Scalar(1);
  }
  // What a row's stored counts are divided by to give its counts now (0 for a row never observed).
  Scalar weight(int row) const {
    const Scalar u = Scalar(state_.unit[row]);
    return u > Scalar(0) ? age(row) / u : Scalar(0);
  }

  // The unit of an observation of a row observed before, aged by beta^d: unit / beta^d while that
  // stays below kRescale, else the row's counts rescaled to unit 1 (the counts aged to now).
  static constexpr Scalar kRescale = Scalar(4294967296.0);  // 2^32
  Count aged_unit(int row) {
    const Count unit = state_.unit[row];
    if (settings_.discount_clock == DiscountClock::row_visits) {
      const Count next = Count(unit * inverse_discount_);
      if (Scalar(next) < kRescale) return next;
      return rescale_row(row, settings_.discount / Scalar(unit));
    }
    const Scalar f = power(settings_.discount, state_.clock + 1 - state_.last[row]);
    if (Scalar(unit) < kRescale * f) return Count(Scalar(unit) / f);
    return rescale_row(row, f / Scalar(unit));
  }
  // Multiplies the row's stored counts by g (<= 1) and returns the unit 1.
  [[gnu::noinline]] Count rescale_row(int row, Scalar g) {
    if constexpr (!kIntegerCounts) {
      Count* const c = state_.counts + row * S;
      for (int i = 0; i < S; ++i) c[i] = Count(Scalar(c[i]) * g);
      state_.totals[row] = Count(Scalar(state_.totals[row]) * g);
    } else {
      (void)row;
      (void)g;  // integer counts take no discount (init refuses it)
    }
    return Count(1);
  }
  [[gnu::noinline]]   void halve_row(int row) {
    Count* const c = state_.counts + row * S;
    if constexpr (kIntegerCounts) {
      Count total(0);
      for (int i = 0; i < S; ++i) {
        c[i] = Count(c[i] / 2u);
        total = Count(total + c[i]);
      }
      state_.totals[row] = total;
    } else {
      for (int i = 0; i < S; ++i) c[i] *= Count(0.5);
      state_.totals[row] *= Count(0.5);
    }
  }

  void mean_row(int r, Scalar* out) const {
    const Scalar* const p = prior_ + r * S;
    if (state_.observations[r] == 0) {
      std::memcpy(out, p, sizeof(Scalar) * S);
      return;
    }
    const Count* const c = state_.counts + r * S;
    const Scalar a = strength_, g = weight(r);
    Scalar sum(0);
    for (int i = 0; i < S; ++i) sum += a * p[i] + g * Scalar(c[i]);
    // sum >= a * (1 - tolerance) > 0 by init's bounds; kept as a guard.
    if (!(sum > Scalar(0)) || !std::isfinite(sum)) {
      std::memcpy(out, p, sizeof(Scalar) * S);
      return;
    }
    const Scalar inverse = Scalar(1) / sum;
    for (int i = 0; i < S; ++i) out[i] = (a * p[i] + g * Scalar(c[i])) * inverse;
  }

  // restore()'s check. An integer total is the sum of its counts, so that no count can wrap. A
  // float total and its counts' sum take the same increment u, halving and rescaling, so they
  // differ only by rounding: each operation adds at most a few ulps of the row's values, and the
  // increments grow by 1/beta per aging, so |sum - total| stays below
  // (S + 2) * 4 * eps * (sum + total + u) / (1 - beta), plus S half-units u for the increments a
  // float count near 2^24 u rounds (beta = 1: u = 1, counts are integers and halves, exact below
  // that). A state outside that bound is no state observe() leaves, and one it would refuse to save.
  // The state's fields as check_state reads them: a State, or an image's bytes (checkpoint.hpp).
  struct StateView {
    const State& s;
    Count count(int i) const { return s.counts[i]; }
    Count total(int r) const { return s.totals[r]; }
    Count unit(int r) const { return s.unit[r]; }
    std::int64_t observations(int r) const { return s.observations[r]; }
    std::int64_t last(int r) const { return s.last[r]; }
    std::int64_t clock() const { return s.clock; }
    std::int64_t refreshed_at() const { return s.refreshed_at; }
  };
  template <class View>
  Status check_state(const View& s) const {
    const std::int64_t clock = s.clock();
    if (clock < 0 || s.refreshed_at() < 0 || s.refreshed_at() > clock) return Status::bad_setting;
    const Scalar cap = Scalar(settings_.count_cap);
    using Real = std::conditional_t<kIntegerCounts, Scalar, Count>;  // what the counts round in
    const Scalar eps = Scalar(std::numeric_limits<Real>::epsilon()) > std::numeric_limits<Scalar>::epsilon()
                           ? Scalar(std::numeric_limits<Real>::epsilon())
                           : std::numeric_limits<Scalar>::epsilon();
    const Scalar memory = settings_.discount < Scalar(1) ? Scalar(1) / (Scalar(1) - settings_.discount) : Scalar(1);
    std::int64_t observed = 0;
    for (int r = 0; r < Rows; ++r) {
      const std::int64_t n = s.observations(r), last = s.last(r);
      if (n < 0 || n > clock - observed) return Status::bad_setting;
      observed += n;
      if (last < 0 || last > clock || (n == 0) != (last == 0)) return Status::bad_setting;
      Scalar sum(0);
      for (int i = 0; i < S; ++i) {
        const Scalar x = Scalar(s.count(r * S + i));
        if (!std::isfinite(x) || x < Scalar(0)) return Status::bad_setting;
        if (x > Scalar(0) &&
            (n == 0 || (settings_.support == EstimateSupport::prior && !(prior_[r * S + i] > Scalar(0)))))
          return Status::bad_setting;
        sum += x;
      }
      // A row never observed has unit and total 0; then the unit is 1, or with a discount in
      // [1, 2^32], and the total below cap * unit.
      const Scalar unit = Scalar(s.unit(r)), total = Scalar(s.total(r));
      if (n == 0 ? unit != Scalar(0) || total != Scalar(0)
                 : !(unit >= Scalar(1) && unit <= (forgetting_ ? kRescale : Scalar(1))) || !(total >= Scalar(0)) ||
                       !(total < cap * unit))
        return Status::bad_setting;
      if (kIntegerCounts) {
        if (total != sum) return Status::bad_setting;
      } else {
        const Scalar drift =
            Scalar(S + 2) * Scalar(4) * eps * (sum + total + unit) * memory + Scalar(S) / Scalar(2) * unit;
        if (!(std::abs(sum - total) <= drift)) return Status::bad_setting;
      }
    }
    if (observed != clock) return Status::bad_setting;
    return Status::ok;
  }

  const Scalar* prior_ = nullptr;
  std::uint32_t prior_digest_ = 0;
  Scalar cap_ = Scalar(0);  // settings_.count_cap as a Scalar (an int64 conversion is a library call on a 32-bit core)
  bool forgetting_ = false;            // settings_.discount < 1
  bool refresh_power_of_two_ = false;  // settings_.refresh_row_observations is a power of two
  Count inverse_discount_ = Count(1);  // 1 / beta, what a row visit multiplies a unit by
  Scalar strength_ = Scalar(0);
  EstimateSettings<Scalar> settings_{};
  State state_{};
};

}  // namespace pbrl
