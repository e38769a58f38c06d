// libFuzzer harness: devices that learn their transition model (estimate/estimated_model.hpp,
// estimate/transition_estimate.hpp) and checkpoint it with the solver (checkpoint.hpp), driven by
// a program of operations read from the input.
//
// Input: byte 0 picks the configuration (a Stackelberg game or an incentive design of 3 states
// and 2 x 2 actions, double or float, float / double / uint16 / uint32 counts, Pbrl or
// PbrlZeroSum, direct or sweeps, exact or sampled); then the estimate settings of device A and of
// device B (a copy of A's, or their own: prior of three, one with zeros; strength; support;
// discount, possibly < 1, with either clock; count_cap, often tiny so that halving is frequent;
// the refresh rule); then at most kMaxOps operations, each one byte (its high bit picks the
// device, its low 4 bits the operation) and its arguments:
//    0 observe(s, a1, a2, s')     1 observe_row(row, s')      2 observe(s, a, s')
//    3 a burst of up to 256 observations of one row (count_cap halving, saturation)
//    4 refresh_slice(solver, max_rows), max_rows any int, with the device's or the other's solver
//    5 refresh(solver), the device's or the other's
//    6 step()                     7 step_slice(max_rollouts), max_rollouts any int
//    8 save_checkpoint(solver, estimate) into the image store (shared by both devices)
//    9 restore_checkpoint of an image: stored (either device), torn (a prefix of one image over
//      another or over erased 0xFF), bytes flipped and resealed, raw input bytes, estimate
//      counts forged and resealed, solver counts forged and resealed, a plain solver image, the
//      other device's current image; then, mostly, refresh()
//   10 an A/B save (checkpoint_slot_to_write), possibly cut short (a power loss)
//   11 a reboot: restore_newest_checkpoint of the device's A/B slots
//   12 TransitionEstimate::restore of a forged state    13 write_mean(out, first, count)
//   14 a whole refresh in slices with a step_slice between slices
//   15 refresh_due() against its rule, mark_refreshed()
// Properties (FUZZ_CHECK: abort(), so that libFuzzer keeps the input):
//   - the model the solver reads, model(), is always a valid transition array (validate_transition),
//     keeps the prior's zeros under support `prior`, is the array the solver's problem holds
//     (its digest, and for the Stackelberg game its pointer), and changes only at a commit (a
//     refresh_slice that says committed, a refresh() that succeeds): while a refresh is in
//     progress, steps and slices read the old model;
//   - a committed model is, row by row, the estimate's mean at the time each row was written (a
//     shadow of the refresh kept by the harness; a whole refresh(): the mean of the state now),
//     and without aging the mean is (a p + c/u) / (a + sum c/u) within rounding (u the row's unit);
//   - every refusal changes nothing: the estimate's state (its checkpoint encoding), the solver's
//     plain image, the model array and pointer, the refresh and step in progress; a failed step
//     keeps what its contract keeps (fuzz_solvers.hpp); observe's status is predicted exactly;
//   - an operation on one device leaves the other untouched;
//   - a state the estimate reaches is one its restore() accepts; its total stays below the cap;
//   - an accepted restore gives exactly the image's state (saving again gives the image byte for
//     byte) and after refresh() the model is the mean of that state; images of a device with the
//     same prior, strength and settings restore (unless a count has no room, refused by design),
//     images of another prior are checkpoint_other_model, of other settings
//     checkpoint_other_settings; a torn slot is refused unless it holds a complete image; a plain
//     image is refused;
//   - A/B storage: the slot to write holds no intact image or the older one; a reboot restores
//     the image restore_newest_checkpoint's rule names (the higher sequence number, slot 0 on a
//     tie).
// Also: a refused refresh() changes nothing; a reboot restores the last complete A/B save; a
// restored state observes on into states restore accepts (PBRL_FUZZ_STRICT=0 drops these three,
// which earlier library versions failed).
// PBRL_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (tests/fuzz/corpus/fuzz_estimate) and exits.

#include "fuzz_solvers.hpp"
#include "fuzz_support.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/estimate/transition_estimate.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pbrl/estimate/estimated_model.hpp"

namespace {

using pbrl::EvaluationMethod;
using pbrl::Status;
using fuzz::Bytes;

constexpr int S = 3, A1 = 2, A2 = 2, J = A1 * A2, Rows = S * J;
constexpr int kPriors = 3;
constexpr int kMaxOps = 64;
constexpr int kMaxSteps = 6;         // step() calls per input (the costly part)
constexpr int kMaxSlices = 48;       // step_slice() calls per input
constexpr std::size_t kStore = 6;    // images kept per input
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
using fuzz::get_le;
using fuzz::kCrcAt;
using fuzz::kPayloadAt;
using fuzz::kSequenceAt;
using fuzz::put_le;

bool strict = true;
bool trace = false;  // PBRL_FUZZ_TRACE=1: each operation and its device to stderr

// fuzz::reseal_crc and fuzz::set_sequence on a whole image.
void reseal_crc(Bytes& image) { fuzz::reseal_crc(image.data(), image.size()); }
void set_sequence(Bytes& image, std::uint64_t v) { fuzz::set_sequence(image.data(), image.size(), v); }

// a + b, wrapping (forged counts may be anything).
std::int64_t wrap_add(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) + std::uint64_t(b)); }

// fuzz::check_same after a memcmp (whose bytes the fuzzer's comparison tracing does not see one
// by one).
void same_bytes(const std::uint8_t* a, const std::uint8_t* b, std::size_t n, const char* what, int note) {
  if (std::memcmp(a, b, n) != 0) fuzz::check_same(a, b, n, what, note);
}

// An int that is mostly near [lo, hi] (one below, one above) and sometimes any.
int near(fuzz::Input& in, int lo, int hi) {
  const std::uint8_t b = in.byte();
  if (b >= 240) return in.any_int();
  return lo - 1 + int(b % std::uint8_t(hi - lo + 3));
}

// ---- problems: three priors of one game each, built once ---------------------------------------

template <typename T>
void make_priors(T (&prior)[kPriors][Rows * S], std::uint32_t seed) {
  pbrl::Rng rng(seed);
  for (int k = 0; k < kPriors; ++k) {
    double p[Rows * S];
    pbrl::random_transition(rng, p, Rows, S);
    if (k == 1)  // zeros: s' = row % S is impossible in two rows of three
      for (int r = 0; r < Rows; ++r) {
        if (r % 3 == 0) continue;
        p[r * S + r % S] = 0;
        double sum = 0;
        for (int i = 0; i < S; ++i) sum += p[r * S + i];
        for (int i = 0; i < S; ++i) p[r * S + i] /= sum;
      }
    for (int i = 0; i < Rows * S; ++i) prior[k][i] = T(p[i]);
    FUZZ_CHECK((pbrl::validate_transition<T, S, J>(prior[k]) == Status::ok));
  }
}

// A kind's priors: make_priors from its seed + 100.
template <typename T>
struct KindPriors {
  T prior[kPriors][Rows * S];
  explicit KindPriors(std::uint32_t seed) { make_priors(prior, seed + 100u); }
};

template <typename T>
struct GameKind : KindPriors<T> {
  using Problem = pbrl::Stackelberg<T, S, A1, A2>;
  T leader[Rows], follower[Rows], initial[S];
  explicit GameKind(std::uint32_t seed) : KindPriors<T>(seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, leader, Rows);
    pbrl::random_reward(rng, follower, Rows);
    pbrl::random_distribution(rng, initial, S);
  }
  // The game on prior p.
  typename Problem::Data data(int p) const {
    typename Problem::Data d;
    d.leader_reward = leader;
    d.follower_reward = follower;
    d.transition = this->prior[p];
    d.initial = initial;
    return fuzz::harness_stackelberg(d);
  }
};

template <typename T>
struct DesignKind : KindPriors<T> {
  using Problem = pbrl::IncentiveDesign<T, S, A1, A2>;
  T reward[Rows], initial[S], designer_reward[Rows], designer_transition[Rows * S];
  explicit DesignKind(std::uint32_t seed) : KindPriors<T>(seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward, Rows);
    pbrl::random_distribution(rng, initial, S);
    pbrl::random_reward(rng, designer_reward, Rows);
    pbrl::random_transition(rng, designer_transition, Rows, S);
  }
  // The design on prior p (the agents' transition).
  typename Problem::Data data(int p) const {
    typename Problem::Data d;
    d.reward = reward;
    d.transition = this->prior[p];
    d.initial = initial;
    d.designer_reward = designer_reward;
    d.designer_transition = designer_transition;
    return fuzz::harness_incentive(d);
  }
};

// ---- solvers ----------------------------------------------------------------------------------

template <class Settings>
void solver_settings(Settings& s, bool sampled, bool tolerance) {
  using T = decltype(s.step_x);
  s.oracle = sampled ? pbrl::OracleKind::policy_gradient : pbrl::OracleKind::policy_mirror_descent;
  s.gradient = sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  s.inner_steps = 2;
  s.oracle_step = T(0.5);
  s.step_x = T(0.2);
  s.lambda_start = T(0.5);
  s.lambda_final = T(3);
  s.lambda_ramp = 5;
  s.sampling.horizon = 3;
  s.sampling.batch = 2;
  s.seed = 7u;
  if (tolerance) {
    s.gap_tolerance = T(1e-3);
    s.lambda_patience = 1;
    s.lambda_stall = T(0);
    s.lambda_max = T(64);
    s.inner_steps = 1;
    s.inner_steps_max = 3;
  }
}

template <class Solver, class P>
Status init_solver(Solver& s, const P& problem, bool sampled, bool tolerance) {
  typename Solver::Settings settings;
  solver_settings(settings, sampled, tolerance);
  return fuzz::init_at_start(s, problem, settings);  // softmax: zero logits
}

template <class P, class = void>
struct HasData : std::false_type {};
template <class P>
struct HasData<P, std::void_t<decltype(std::declval<const P&>().data())>> : std::true_type {};

// ---- a configuration: two devices and the program -------------------------------------------

// What an image must have been taken under to restore into a device (besides the solver's
// settings and the problem, the same in both devices).
template <typename T>
struct Key {
  int prior = 0;
  T strength = T(1);
  pbrl::EstimateSettings<T> es{};
  bool operator==(const Key& o) const {
    return prior == o.prior && strength == o.strength && es.support == o.es.support && es.discount == o.es.discount &&
           es.discount_clock == o.es.discount_clock && es.count_cap == o.es.count_cap &&
           es.refresh_row_observations == o.es.refresh_row_observations && es.refresh_every == o.es.refresh_every;
  }
};

struct CaseBase {
  virtual ~CaseBase() = default;
  virtual void run(fuzz::Input& in) = 0;
};

template <class Kind, class Solver, class Count>
class Case : public CaseBase {
  using Problem = typename Kind::Problem;
  using Scalar = typename Problem::Scalar;
  using Model = pbrl::EstimatedModel<Problem, Count>;
  using Estimate = typename Model::Estimate;
  using State = typename Estimate::State;
  using Field = pbrl::detail::CheckpointField<State>;
  static_assert(Model::kRows == Rows && Model::kActions1 == A1 && Model::kActions2 == A2, "joint rows");
  static constexpr bool kInteger = std::is_integral<Count>::value;
  static constexpr std::size_t N = pbrl::checkpoint_size<Solver, Estimate>();
  static constexpr std::size_t kPlain = pbrl::checkpoint_size<Solver>();
  static constexpr std::size_t kEstimateAt = kPayloadAt + pbrl::detail::checkpoint_payload_size<Solver>();
  static constexpr std::size_t kModelBytes = sizeof(Scalar) * Rows * S;

  struct Device {
    Model model;
    Solver solver;
    Key<Scalar> key;
    Scalar shadow[Rows * S] = {};  // what the array being written holds, as the harness expects it
    int shadow_next = -1;          // the refresh's next row (Rows: its commit; -1: none)
    Bytes ab[2];                   // A/B slots
    Bytes ab_full[2];              // the complete image a slot holds (empty: none)
    Bytes last_ab;                 // the last complete A/B save
  };
  struct Snap {
    Bytes estimate, solver, model;
    const Scalar* model_at;
    bool refreshing, stepping;
    std::int64_t generation;
  };
  struct Commit {
    bool done = false;            // the model was committed
    std::int64_t generation = -1; // the solver's model generation before it (-1: before the operation)
  };
  struct Saved {
    Bytes image;
    Key<Scalar> key;
  };

 public:
  Case(const Kind* kind, bool sampled, bool tolerance) : kind_(kind), sampled_(sampled), tolerance_(tolerance) {
    for (auto& d : dev_) d.reset(new Device());
  }

  void run(fuzz::Input& in) override {
    setup(in, *dev_[0], nullptr);
    setup(in, *dev_[1], in.flag() ? nullptr : &dev_[0]->key);
    store_.clear();
    steps_ = slices_ = 0;
    for (int op = 0; op < kMaxOps && in.remaining() > 0; ++op) {
      const std::uint8_t code = in.byte();
      Device& d = *dev_[code >> 7];
      Device& other = *dev_[1 - (code >> 7)];
      // Only refresh_slice, refresh and restore are handed the other device (its solver, its image):
      // the others cannot touch it, and a snapshot costs.
      const int kind = code & 15;
      const bool touches_other = kind == 4 || kind == 5 || kind == 9;
      const Snap before = snap(d);
      const Snap other_before = touches_other ? snap(other) : Snap{};
      Commit commit;
      operation(in, code & 15, d, other, before, commit);
      if (trace)
        std::fprintf(stderr, "op %2d: %2d on %c: clock %lld, iteration %lld, generation %lld%s%s\n", op, code & 15,
                     "AB"[code >> 7], (long long)d.model.estimate().observations(), (long long)d.solver.iteration(),
                     (long long)d.solver.model_generation(), commit.done ? ", committed" : "",
                     d.model.refresh_in_progress() ? ", refreshing" : "");
      check_device(d, before, commit);
      if (touches_other) check_same(snap(other), other_before, 100 + kind);
    }
  }

 private:
  // ---- setup ----
  void draw_settings(fuzz::Input& in, Key<Scalar>& k) {
    using L = std::numeric_limits<Scalar>;
    k.prior = in.byte() % kPriors;
    switch (in.byte() % 10) {
      case 0: k.strength = Scalar(1); break;
      case 1: k.strength = Scalar(0.5); break;
      case 2: k.strength = Scalar(3); break;
      case 3: k.strength = Scalar(1e-3); break;
      case 4: k.strength = Scalar(1e3); break;
      case 5: k.strength = L::epsilon() * L::epsilon(); break;
      case 6: k.strength = Scalar(1) / (L::epsilon() * L::epsilon()); break;
      case 7: k.strength = in.real<Scalar>(); break;
      default: k.strength = Scalar(2); break;
    }
    k.es.support = in.flag() ? pbrl::EstimateSupport::dense : pbrl::EstimateSupport::prior;
    switch (in.byte() % 9) {
      case 0: case 1: k.es.discount = Scalar(1); break;
      case 2: k.es.discount = Scalar(0.5); break;
      case 3: k.es.discount = Scalar(0.9); break;
      case 4: k.es.discount = Scalar(0.999); break;
      case 5: k.es.discount = Scalar(1) - L::epsilon(); break;
      case 6: k.es.discount = L::denorm_min(); break;
      case 7: k.es.discount = in.real<Scalar>(); break;
      default: k.es.discount = in.unit<Scalar>(); break;
    }
    k.es.discount_clock = in.flag() ? pbrl::DiscountClock::observations : pbrl::DiscountClock::row_visits;
    switch (in.byte() % 10) {
      case 0: k.es.count_cap = 2; break;
      case 1: k.es.count_cap = 3; break;
      case 2: k.es.count_cap = 5; break;
      case 3: k.es.count_cap = 16; break;
      case 4: k.es.count_cap = 64; break;
      case 5: k.es.count_cap = 65535; break;
      case 6: k.es.count_cap = pbrl::kMaxCountCap; break;
      case 7: k.es.count_cap = std::int64_t(in.u32()); break;
      default: k.es.count_cap = 2 + in.byte() % 200; break;
    }
    k.es.refresh_row_observations = in.byte() % 6;
    k.es.refresh_every = in.byte() % 8;
  }

  void setup(fuzz::Input& in, Device& d, const Key<Scalar>* copy) {
    Key<Scalar> k;
    if (copy != nullptr) {
      k = *copy;
    } else {
      draw_settings(in, k);
    }
    Status st = d.model.init(kind_->data(k.prior), k.strength, k.es);
    if (st != Status::ok) {  // e.g. integer counts with a discount, a cap out of range: fall back
      k.es.discount = Scalar(1);
      k.es.count_cap = 2 + k.es.count_cap % 60;
      if (!(k.strength > Scalar(1e-6) && k.strength < Scalar(1e6))) k.strength = Scalar(1);
      st = d.model.init(kind_->data(k.prior), k.strength, k.es);
    }
    FUZZ_CHECK(st == Status::ok);
    d.key = k;
    FUZZ_CHECK(init_solver(d.solver, d.model.problem(), sampled_, tolerance_) == Status::ok);
    d.shadow_next = -1;
    for (int i = 0; i < 2; ++i) {
      d.ab[i].assign(N, 0xFF);
      d.ab_full[i].clear();
    }
    d.last_ab.clear();
    check_device(d, snap(d), Commit{});
  }

  // ---- observations of the devices ----
  static Bytes encode(const State& s) {
    Bytes b(Field::size);
    unsigned char* p = b.data();
    Field::write(p, s);
    return b;
  }
  static State decode(const std::uint8_t* p) {
    State s;
    std::memset(static_cast<void*>(&s), 0, sizeof s);
    const unsigned char* q = p;
    Field::read(q, s);
    return s;
  }
  // The solver's state as a plain image holds it (its payload at the same offset), without the
  // header and the CRC: what snapshots compare (the CRC is the costly part of a save).
  static Bytes plain(const Solver& s) {
    Bytes b(kPlain, 0);
    pbrl::detail::StateWriter writer{b.data() + kPayloadAt};
    pbrl::CheckpointAccess::visit_state(s, writer);
    return b;
  }
  // A sealed plain image.
  static Bytes plain_image(const Solver& s) {
    Bytes b(kPlain);
    FUZZ_CHECK(pbrl::save_checkpoint(s, b.data(), b.size()) == Status::ok);
    return b;
  }
  static Bytes image(const Device& d) {
    Bytes b(N);
    FUZZ_CHECK(pbrl::save_checkpoint(d.solver, d.model.estimate(), b.data(), b.size()) == Status::ok);
    return b;
  }
  static Bytes model_bytes(const Device& d) {
    Bytes b(kModelBytes);
    std::memcpy(b.data(), d.model.model(), kModelBytes);
    return b;
  }
  static Snap snap(const Device& d) {
    return {encode(d.model.estimate().state()), plain(d.solver), model_bytes(d), d.model.model(),
            d.model.refresh_in_progress(), d.solver.step_in_progress(), d.solver.model_generation()};
  }
  static void check_same(const Snap& now, const Snap& was, int note) {
    same_bytes(now.estimate.data(), was.estimate.data(), was.estimate.size(), "estimate state unchanged", note);
    same_bytes(now.solver.data(), was.solver.data(), was.solver.size(), "solver state unchanged", note);
    same_bytes(now.model.data(), was.model.data(), was.model.size(), "model unchanged", note);
    FUZZ_CHECK(now.model_at == was.model_at);
    FUZZ_CHECK(now.refreshing == was.refreshing);
    FUZZ_CHECK(now.stepping == was.stepping);
  }

  // The mean of the estimate's state, written whole.
  static void mean(const Device& d, Scalar* out) {
    FUZZ_CHECK(d.model.estimate().write_mean(out) == Status::ok);
  }

  // Rows of a mean: valid distributions; the prior's zeros kept under support prior; without
  // aging, (a p + c/u) / (a + sum c/u) within rounding (u the row's unit; in long double).
  void check_rows(const Device& d, const Scalar* m, int first, int count) const {
    const Estimate& e = d.model.estimate();
    const Scalar* p = e.prior();
    const bool aging = e.settings().discount < Scalar(1) && e.settings().discount_clock == pbrl::DiscountClock::observations;
    const Scalar tol = std::numeric_limits<Scalar>::epsilon() * Scalar(64);
    for (int r = first; r < first + count; ++r) {
      FUZZ_CHECK((pbrl::detail::check_transition_rows(m + r * S, 1, S) == Status::ok));
      if (e.observations(r) == 0) {
        FUZZ_CHECK(std::memcmp(m + r * S, p + r * S, sizeof(Scalar) * S) == 0);
        continue;
      }
      if (e.settings().support == pbrl::EstimateSupport::prior)
        for (int i = 0; i < S; ++i)
          if (!(p[r * S + i] > Scalar(0))) FUZZ_CHECK(m[r * S + i] == Scalar(0));
      if (aging) continue;
      long double sum = 0;
      const Count* c = e.state().counts + r * S;
      const long double unit = (long double)e.state().unit[r];  // the row's counts are c / unit
      for (int i = 0; i < S; ++i) sum += (long double)e.strength() * p[r * S + i] + (long double)c[i] / unit;
      for (int i = 0; i < S; ++i) {
        const long double want = ((long double)e.strength() * p[r * S + i] + (long double)c[i] / unit) / sum;
        FUZZ_CHECK(std::fabs((long double)m[r * S + i] - want) <= (long double)tol);
      }
    }
  }

  // What earlier library versions accepted (PBRL_FUZZ_STRICT=0 tolerates it): restore took float counts summing up to twice
  // the cap whatever the row's total, so a restored row with sum c = 2 cap and a small total
  // observes on (the total, not the sum, decides the halving) past 2 cap, and the device's next
  // image is refused (bad_setting). Such a state has a row whose counts sum past 2 cap.
  static bool sum_past_cap(const State& s, std::int64_t cap) {
    if constexpr (kInteger) {
      (void)s, (void)cap;
      return false;
    } else {
      for (int r = 0; r < Rows; ++r) {
        Scalar sum(0);
        for (int i = 0; i < S; ++i) sum += Scalar(s.counts[r * S + i]);
        if (!(sum <= Scalar(2) * Scalar(cap) * std::max(Scalar(1), Scalar(s.unit[r])))) return true;
      }
      return false;
    }
  }
  // An image of this device's type and settings that restore must accept: no count at its end
  // (refused by design) and, unless strict, not the known finding above.
  bool restorable(const Bytes& img, std::int64_t cap) const {
    return roomy(img) && (strict || !sum_past_cap(decode(img.data() + kEstimateAt), cap));
  }

  // The state, for a finding's report.
  static void dump(const Estimate& e) {
    const State& s = e.state();
    std::fprintf(stderr, "estimate: strength %.17g, cap %lld, discount %.17g, clock %lld, refreshed_at %lld\n",
                 double(e.strength()), (long long)e.settings().count_cap, double(e.settings().discount),
                 (long long)s.clock, (long long)s.refreshed_at);
    for (int r = 0; r < Rows; ++r) {
      std::fprintf(stderr, "  row %2d: n %lld last %lld total %.9g counts", r, (long long)s.observations[r],
                   (long long)s.last[r], double(s.totals[r]));
      for (int i = 0; i < S; ++i) std::fprintf(stderr, " %.9g", double(s.counts[r * S + i]));
      std::fprintf(stderr, "\n");
    }
  }

  // After every operation: the model the solver reads, the estimate's own invariants, the shadow.
  void check_device(Device& d, const Snap& before, const Commit& commit) {
    const Scalar* m = d.model.model();
    FUZZ_CHECK((pbrl::validate_transition<Scalar, S, J>(m) == Status::ok));
    FUZZ_CHECK(d.solver.model_digest().transition == pbrl::detail::array_digest(m, std::size_t(Rows) * S));
    if constexpr (HasData<Problem>::value) FUZZ_CHECK(d.model.problem().data().transition == m);
    FUZZ_CHECK(d.model.refresh_in_progress() == (d.shadow_next >= 0));
    if (commit.done) {
      FUZZ_CHECK(std::memcmp(m, d.shadow, kModelBytes) == 0);
      FUZZ_CHECK(d.solver.model_generation() == (commit.generation >= 0 ? commit.generation : before.generation) + 1);
      FUZZ_CHECK(!d.solver.step_in_progress());
    } else {
      FUZZ_CHECK(m == before.model_at);
      same_bytes(reinterpret_cast<const std::uint8_t*>(m), before.model.data(), kModelBytes,
                       "the model changes only at a commit", 0);
    }
    Estimate& e = d.model.estimate();
    if (e.restore(e.state()) != Status::ok && (strict || !sum_past_cap(e.state(), e.settings().count_cap))) {
      dump(e);
      FUZZ_CHECK(!"a state the estimate reached is one its restore() accepts");
    }
    const State& s = e.state();
    for (int r = 0; r < Rows; ++r)
      FUZZ_CHECK(s.observations[r] == 0 || Scalar(s.totals[r]) < Scalar(e.settings().count_cap) * Scalar(s.unit[r]));
  }

  // ---- the operations ----
  void operation(fuzz::Input& in, int op, Device& d, Device& other, const Snap& before, Commit& committed) {
    switch (op) {
      case 0: {
        const int s = near(in, 0, S - 1), a1 = near(in, 0, A1 - 1), a2 = near(in, 0, A2 - 1), sn = near(in, 0, S - 1);
        const bool valid = s >= 0 && s < S && a1 >= 0 && a1 < A1 && a2 >= 0 && a2 < A2;
        observed(d, before, valid ? (s * A1 + a1) * A2 + a2 : -1, sn, d.model.observe(s, a1, a2, sn));
        break;
      }
      case 1: {
        const int r = near(in, 0, Rows - 1), sn = near(in, 0, S - 1);
        observed(d, before, r, sn, d.model.observe_row(r, sn));
        break;
      }
      case 2: {
        const int s = near(in, 0, S - 1), a = near(in, 0, J - 1), sn = near(in, 0, S - 1);
        const bool valid = s >= 0 && s < S && a >= 0 && a < J;
        observed(d, before, valid ? s * J + a : -1, sn, d.model.observe(s, a, sn));
        break;
      }
      case 3: burst(in, d); break;
      case 4: slice(in, d, other, before, committed); break;
      case 5: refresh(in, d, other, before, committed); break;
      case 6: step(d, before); break;
      case 7: step_slice(in, d, before); break;
      case 8: save(in, d); break;
      case 9: restore(in, d, other, before, committed); break;
      case 10: ab_save(in, d); break;
      case 11: reboot(in, d, before); break;
      case 12: restore_state(in, d, before); break;
      case 13: write_mean(in, d); break;
      case 14: sliced_refresh(in, d, before, committed); break;
      default: refresh_rule(in, d); break;
    }
  }

  // observe's status, predicted: out_of_bounds (an index, or s' outside the prior's support under
  // support prior), count_overflow (no room in the clock), else ok and one more observation.
  void observed(Device& d, const Snap& before, int row, int s_next, Status st) {
    const Estimate& e = d.model.estimate();
    Status want = Status::ok;
    if (row < 0 || row >= Rows || s_next < 0 || s_next >= S)
      want = Status::out_of_bounds;
    else if (e.settings().support == pbrl::EstimateSupport::prior && !(e.prior()[row * S + s_next] > Scalar(0)))
      want = Status::out_of_bounds;
    else if (decode(before.estimate.data()).clock == kMax)
      want = Status::count_overflow;
    FUZZ_CHECK(st == want);
    if (st != Status::ok) {
      check_same(snap(d), before, 1);
      return;
    }
    const State was = decode(before.estimate.data());
    FUZZ_CHECK(e.state().clock == was.clock + 1);
    FUZZ_CHECK(e.state().observations[row] == was.observations[row] + 1);
    FUZZ_CHECK(e.state().last[row] == e.state().clock);
  }

  void burst(fuzz::Input& in, Device& d) {
    const int row = in.byte() % Rows;
    const int n = 1 + in.byte();
    const int b0 = in.byte(), b1 = in.byte();
    Estimate& e = d.model.estimate();
    for (int i = 0; i < n; ++i) {
      const int sn = (b0 + i * b1) % S;
      const bool off_support = e.settings().support == pbrl::EstimateSupport::prior && !(e.prior()[row * S + sn] > Scalar(0));
      const Status want = off_support ? Status::out_of_bounds : e.state().clock == kMax ? Status::count_overflow : Status::ok;
      const Bytes was = want != Status::ok ? encode(e.state()) : Bytes();
      const Status st = d.model.observe_row(row, sn);
      FUZZ_CHECK(st == want);
      if (st != Status::ok) {
        FUZZ_CHECK(encode(e.state()) == was);
        continue;
      }
      FUZZ_CHECK(Scalar(e.state().totals[row]) < Scalar(e.settings().count_cap) * Scalar(e.state().unit[row]));
      FUZZ_CHECK(e.state().counts[row * S + sn] >= Count(0));
    }
  }

  static int max_rows(fuzz::Input& in) {
    switch (in.byte() % 12) {
      case 0: return 0;
      case 1: return -1;
      case 2: return std::numeric_limits<int>::min();
      case 3: return std::numeric_limits<int>::max();
      case 4: return Rows;
      case 5: return Rows + 1;
      case 6: return in.any_int();
      default: return 1 + in.byte() % 6;
    }
  }

  // The harness's copy of a slice that wrote rows (called after refresh_slice returned ok,
  // uncommitted: the state is the one the rows were written from).
  void shadow_slice(Device& d, int max_rows) {
    FUZZ_CHECK(max_rows >= 1);
    const bool started = d.shadow_next < 0;
    if (started) d.shadow_next = 0;
    FUZZ_CHECK(d.shadow_next < Rows);
    const int n = max_rows < Rows - d.shadow_next ? max_rows : Rows - d.shadow_next;
    FUZZ_CHECK(d.model.estimate().write_mean(d.shadow, d.shadow_next, n) == Status::ok);
    check_rows(d, d.shadow, d.shadow_next, n);
    d.shadow_next += n;
    if (started) FUZZ_CHECK(!d.model.refresh_due());  // marked refreshed as it started
  }

  void slice(fuzz::Input& in, Device& d, Device& other, const Snap& before, Commit& committed) {
    const int rows = max_rows(in);
    const bool foreign = in.byte() % 4 == 0;
    Solver& s = foreign ? other.solver : d.solver;
    bool c = true;
    const Status st = d.model.refresh_slice(s, rows, c);
    if (st != Status::ok) {
      FUZZ_CHECK(!c);
      FUZZ_CHECK(rows < 1 || foreign || d.solver.model_generation() == kMax);
      check_same(snap(d), before, 4);
      return;
    }
    if (c) {
      FUZZ_CHECK(!foreign && d.shadow_next == Rows);
      d.shadow_next = -1;
      committed.done = true;
      return;
    }
    FUZZ_CHECK(d.shadow_next != Rows);  // a pending commit commits or is refused
    shadow_slice(d, rows);
  }

  void refresh(fuzz::Input& in, Device& d, Device& other, const Snap& before, Commit& committed) {
    const bool foreign = in.byte() % 4 == 0;
    const Status st = d.model.refresh(foreign ? other.solver : d.solver);
    if (st == Status::ok) {
      FUZZ_CHECK(!foreign);
      mean(d, d.shadow);
      d.shadow_next = -1;
      committed.done = true;
      return;
    }
    FUZZ_CHECK(foreign || d.solver.model_generation() == kMax);
    // Refused before it starts: nothing changed, a refresh in progress included.
    check_same(snap(d), before, 5);
  }

  void step(Device& d, const Snap& before) {
    if (steps_++ >= kMaxSteps) return;
    typename Solver::Report report;
    const std::int64_t k = d.solver.iteration();
    const Status st = d.solver.step(&report);
    if (st != Status::ok) {
      fuzz::check_failed_step<Solver>(before.solver, plain(d.solver), st);
      return;
    }
    FUZZ_CHECK(d.solver.iteration() == k + 1);
    FUZZ_CHECK(!d.solver.step_in_progress());
  }

  void step_slice(fuzz::Input& in, Device& d, const Snap& before) {
    if (slices_++ >= kMaxSlices) return;
    int rollouts;
    switch (in.byte() % 6) {
      case 0: rollouts = 0; break;
      case 1: rollouts = -1; break;
      case 2: rollouts = in.any_int(); break;
      case 3: rollouts = pbrl::kAllRollouts; break;
      default: rollouts = 1 + in.byte() % 3; break;
    }
    pbrl::SliceResult out;
    const std::int64_t k = d.solver.iteration();
    const Status st = d.solver.step_slice(rollouts, out);
    if (st != Status::ok) {
      if (rollouts < 1) {
        FUZZ_CHECK(st == Status::bad_setting);
        check_same(snap(d), before, 7);
      } else {
        fuzz::check_failed_step<Solver>(before.solver, plain(d.solver), st);
        FUZZ_CHECK(!d.solver.step_in_progress());
      }
      return;
    }
    FUZZ_CHECK(d.solver.iteration() == k + (out.step_done ? 1 : 0));
    if (!out.step_done) check_same_estimate_model(d, before);
  }

  static void check_same_estimate_model(const Device& d, const Snap& before) {
    const Snap now = snap(d);
    same_bytes(now.estimate.data(), before.estimate.data(), before.estimate.size(), "a slice leaves the estimate", 7);
    same_bytes(now.solver.data(), before.solver.data(), before.solver.size(), "an uncommitted slice leaves the image", 7);
  }

  void keep(const Bytes& img, const Key<Scalar>& key) {
    if (store_.size() >= kStore) store_.erase(store_.begin());
    store_.push_back({img, key});
  }

  void save(fuzz::Input& in, Device& d) {
    if (in.byte() % 8 == 0) {  // calls that must be refused before writing
      Bytes b(N, 0x5A);
      FUZZ_CHECK(pbrl::save_checkpoint(d.solver, d.model.estimate(), b.data(), N - 1) == Status::buffer_too_small);
      FUZZ_CHECK(pbrl::save_checkpoint(d.solver, d.model.estimate(), nullptr, N) == Status::null_pointer);
      for (std::uint8_t x : b) FUZZ_CHECK(x == 0x5A);
      FUZZ_CHECK(pbrl::restore_checkpoint(d.solver, d.model.estimate(), b.data(), N - 1) == Status::buffer_too_small);
      return;
    }
    keep(image(d), d.key);
  }

  // No count of the image is at its maximum (restore refuses those by design: no room).
  static bool roomy(const Bytes& img) {
    for (int i = 0; i < 3; ++i)
      if (get_le(img.data() + kPayloadAt + 8 * i, 8) >= std::uint64_t(kMax)) return false;
    const std::size_t words = kEstimateAt + (Field::kCounts * Field::kCount);
    for (std::size_t i = 0; i < 2 * std::size_t(Rows) + 2; ++i)
      if (get_le(img.data() + words + 8 * i, 8) >= std::uint64_t(kMax)) return false;
    return true;
  }

  const Saved& pick(fuzz::Input& in, Device& d) {
    if (store_.empty()) keep(image(d), d.key);
    return store_[in.byte() % store_.size()];
  }

  // A state edited field by field, mostly keeping the observation counts adding up to the clock,
  // so that restore's later checks are reached.
  void forge(fuzz::Input& in, State& s, std::int64_t cap) {
    const int edits = 1 + in.byte() % 4;
    for (int k = 0; k < edits; ++k) {
      const int r = in.byte() % Rows, i = in.byte() % S;
      switch (in.byte() % 10) {
        case 0: s.counts[r * S + i] = count_value(in, cap); break;
        case 8: s.unit[r] = unit_value(in); break;
        case 1: s.totals[r] = count_value(in, cap); break;
        case 2: {  // the row's observations, the clock following
          const std::int64_t v = std::int64_t(in.byte() % 4 == 0 ? in.u64() >> 1 : in.byte());
          const std::int64_t delta = std::int64_t(std::uint64_t(v) - std::uint64_t(s.observations[r]));
          if (wrap_add(s.clock, delta) < 0) break;
          s.clock = wrap_add(s.clock, delta);
          s.observations[r] = v;
          s.last[r] = v > 0 ? s.clock : 0;
          if ((v > 0) != (s.unit[r] > Count(0))) s.unit[r] = Count(v > 0 ? 1 : 0);
          if (s.refreshed_at > s.clock) s.refreshed_at = s.clock;
          break;
        }
        case 3: s.last[r] = in.flag() ? std::int64_t(in.u64()) : (s.clock > 0 ? 1 + std::int64_t(in.u64() % std::uint64_t(s.clock)) : 0); break;
        case 4: {  // a clock near its end, one row holding the observations
          const std::int64_t room = std::int64_t(in.byte() % 4);
          const std::int64_t delta = kMax - room - s.clock;
          if (delta <= 0) break;
          s.clock += delta;
          s.observations[r] = wrap_add(s.observations[r], delta);
          s.last[r] = s.clock;
          break;
        }
        case 5: s.refreshed_at = in.flag() ? std::int64_t(in.u64()) : std::int64_t(in.u64() % (std::uint64_t(s.clock) + 1)); break;
        case 6: s.refresh_pending = !s.refresh_pending; break;
        case 7: {  // a row just below the cap: its next observation halves it
          if (s.observations[r] == 0) {
            if (s.clock == kMax) break;
            s.clock += 1;
            s.observations[r] = 1;
            s.last[r] = s.clock;
            s.unit[r] = Count(1);
          }
          for (int j = 0; j < S; ++j) s.counts[r * S + j] = Count(0);
          s.counts[r * S + i] = Count(cap - 1);
          s.totals[r] = Count(cap - 1);
          break;
        }
        default: {  // counts past the total (float counts: restore allows a sum up to 2 * cap)
          const Count extra = Count(in.byte() % 2 == 0 ? cap : cap / 2 + in.byte());
          s.counts[r * S + i] = Count(s.counts[r * S + i] + extra);
          if (kInteger) s.totals[r] = Count(s.totals[r] + extra);
          break;
        }
      }
    }
  }
  // A unit: the values a row's unit takes (0 before its first observation, 1, up to 2^32 with a
  // discount) and the ones past them.
  Count unit_value(fuzz::Input& in) {
    const int pick = in.byte() % 6;
    if constexpr (kInteger) {
      const Count values[4] = {Count(0), Count(1), Count(2), std::numeric_limits<Count>::max()};
      return pick < 4 ? values[pick] : Count(in.byte());
    } else {
      switch (pick) {
        case 0: return Count(0);
        case 1: return Count(1);
        case 2: return Count(4294967296.0);  // 2^32, the largest
        case 3: return Count(8589934592.0);
        case 4: return Count(std::ldexp(1.0, in.byte() % 64) * (0.5 + in.byte() / 256.0));
        default: return std::numeric_limits<Count>::quiet_NaN();
      }
    }
  }
  Count count_value(fuzz::Input& in, std::int64_t cap) {
    switch (in.byte() % 8) {
      case 0: return Count(0);
      case 1: return Count(1);
      case 2: return Count(cap - 1);
      case 3: return Count(cap);
      case 4: return Count(2 * cap);
      case 5:
        if constexpr (kInteger) return Count(in.u32());
        else return in.real<Count>();
      case 6:
        if constexpr (kInteger) return Count(in.byte());
        else return Count(0.5) * Count(in.byte());
      default:
        if constexpr (kInteger) return std::numeric_limits<Count>::max();
        else return -Count(1);
    }
  }

  // A copy of an image with patches of input bytes, resealed (and the commit word put in step
  // with the sequence number, which follows the iteration count unless the input says not).
  void patch(fuzz::Input& in, Bytes& img, std::size_t from, std::size_t to) {
    const int patches = 1 + in.byte() % 6;
    for (int k = 0; k < patches; ++k) {
      const std::size_t at = from + in.u32() % (to - from);
      const std::size_t len = 1 + in.byte() % 8;
      for (std::size_t i = 0; i < len && at + i < to; ++i) img[at + i] = in.byte();
    }
  }
  void seal(fuzz::Input& in, Bytes& img) {
    if (!in.flag()) set_sequence(img, get_le(img.data() + kPayloadAt, 8));
    reseal_crc(img);
  }

  // An accepted restore: the state is the image's, byte for byte; mostly then a refresh().
  void accepted(fuzz::Input& in, Device& d, const Bytes& img, Commit& committed) {
    const Bytes now = image(d);
    same_bytes(now.data(), img.data(), N, "an accepted image is the state restored", 0);
    if (in.byte() % 8 == 0) return;
    const std::int64_t generation = d.solver.model_generation();
    committed.generation = generation;
    const Status st = d.model.refresh(d.solver);
    if (generation == kMax) {
      FUZZ_CHECK(st == Status::count_overflow);
      mean(d, d.shadow);  // refused at its commit (see refresh())
      d.shadow_next = Rows;
      committed.done = false;
      return;
    }
    FUZZ_CHECK(st == Status::ok);
    mean(d, d.shadow);
    d.shadow_next = -1;
    committed.done = true;
  }

  void restore(fuzz::Input& in, Device& d, Device& other, const Snap& before, Commit& committed) {
    Bytes img;
    int expect = -1;                     // -1: any; 0: refused; 1: accepted unless a count has no room
    const Key<Scalar>* from = nullptr;   // the device settings the image was saved under, if known
    const int mode = in.byte() % 9;
    auto by_key = [&](const Key<Scalar>& k) {
      from = &k;
      return k == d.key ? 1 : 0;
    };
    switch (mode) {
      case 0: {
        const Saved& s = pick(in, d);
        img = s.image;
        expect = by_key(s.key);
        break;
      }
      case 1: {  // a write of image b cut short over image a or erased flash
        const Saved& a = pick(in, d);
        const Saved& b = pick(in, d);
        img.assign(N, 0xFF);
        if (in.flag()) img = a.image;
        const std::size_t cut = in.u32() % (N + 1);
        std::memcpy(img.data(), b.image.data(), cut);
        if (img == b.image) expect = by_key(b.key);
        else if (img == a.image) expect = by_key(a.key);
        else expect = 0;
        break;
      }
      case 2:
        img = pick(in, d).image;
        patch(in, img, 0, N);
        if (in.flag()) seal(in, img);
        break;
      case 3: {  // raw bytes
        img.assign(N, 0xFF);
        const std::size_t n = in.remaining() < N ? in.remaining() : N;
        std::memcpy(img.data(), in.here(), n);
        in.skip(n);
        if (in.flag()) seal(in, img);
        break;
      }
      case 4: {  // estimate counts forged
        img = in.flag() ? image(d) : pick(in, d).image;
        State s = decode(img.data() + kEstimateAt);
        forge(in, s, d.key.es.count_cap);
        const Bytes e = encode(s);
        std::memcpy(img.data() + kEstimateAt, e.data(), e.size());
        seal(in, img);
        break;
      }
      case 5: {  // solver counts forged (iteration, environment steps, model generation)
        img = in.flag() ? image(d) : pick(in, d).image;
        const int field = in.byte() % 3;
        std::uint64_t v;
        switch (in.byte() % 4) {
          case 0: v = std::uint64_t(kMax) - 1; break;
          case 1: v = std::uint64_t(kMax) - 1 - in.byte() % 4; break;
          case 2: v = std::uint64_t(1) << 62; break;
          default: v = in.u64(); break;
        }
        put_le(img.data() + kPayloadAt + 8 * field, v, 8);
        seal(in, img);
        break;
      }
      case 6: {  // a plain image (no estimate), 0xFF-padded: another type
        img.assign(N, 0xFF);
        const Bytes p = plain_image(in.flag() ? d.solver : other.solver);
        std::memcpy(img.data(), p.data(), p.size());
        expect = 0;
        break;
      }
      case 7:  // the other device's state now
        img = image(other);
        expect = by_key(other.key);
        break;
      default:
        img = pick(in, d).image;
        patch(in, img, kEstimateAt, N - pbrl::kCheckpointCommitSize);
        seal(in, img);
        break;
    }
    const Status st = pbrl::restore_checkpoint(d.solver, d.model.estimate(), img.data(), img.size());
    if (trace) std::fprintf(stderr, "  restore mode %d: status %d (expected %d)\n", mode, int(st), expect);
    if (st != Status::ok) {
      check_same(snap(d), before, 9);
      if (expect == 1) {
        FUZZ_CHECK(!restorable(img, d.key.es.count_cap));
        FUZZ_CHECK(st == (roomy(img) ? Status::bad_setting : Status::checkpoint_corrupt));
      }
      if (expect == 0 && from != nullptr)  // a complete image of another prior or other settings
        FUZZ_CHECK(st == (from->prior != d.key.prior ? Status::checkpoint_other_model : Status::checkpoint_other_settings));
      return;
    }
    FUZZ_CHECK(expect != 0);
    accepted(in, d, img, committed);
  }

  // ---- A/B storage ----
  // An image's age as A/B storage orders images: the sequence number, then the estimate's clock.
  static std::pair<std::uint64_t, std::int64_t> age(const Bytes& img) {
    return {get_le(img.data() + kSequenceAt, 8), decode(img.data() + kEstimateAt).clock};
  }
  void ab_save(fuzz::Input& in, Device& d) {
    const int slot = pbrl::checkpoint_slot_to_write<Solver, Estimate>(d.ab[0].data(), d.ab[1].data(), N);
    FUZZ_CHECK(slot == 0 || slot == 1);
    // The slot named holds no intact image, or the older (not newer) one.
    if (!d.ab_full[slot].empty() && !d.ab_full[1 - slot].empty())
      FUZZ_CHECK(age(d.ab_full[slot]) <= age(d.ab_full[1 - slot]));
    if (!d.ab_full[slot].empty() && d.ab_full[1 - slot].empty()) FUZZ_CHECK(!"a slot with an image named before an empty one");
    const Bytes img = image(d);
    Bytes& s = d.ab[slot];
    const bool torn = in.byte() % 4 == 0;
    const std::size_t cut = torn ? in.u32() % N : N;
    std::memcpy(s.data(), img.data(), cut);
    if (s == img) {
      d.ab_full[slot] = img;
      d.last_ab = img;
    } else if (!(s == d.ab_full[slot])) {
      d.ab_full[slot].clear();
    }
  }

  void reboot(fuzz::Input& in, Device& d, const Snap& before) {
    (void)in;
    const Status st = pbrl::restore_newest_checkpoint(d.solver, d.model.estimate(), d.ab[0].data(), d.ab[1].data(), N);
    // The documented choice: the intact image with the higher age (sequence number, then the
    // estimate's observations), slot 0 on a tie.
    int first = -1;
    for (int i = 0; i < 2; ++i) {
      if (d.ab_full[i].empty() || !restorable(d.ab_full[i], d.key.es.count_cap)) continue;
      if (first < 0 || age(d.ab_full[i]) > age(d.ab_full[first])) first = i;
    }
    if (first < 0) {
      if (st == Status::ok) {  // an image at a count's end may still be... no: those are refused
        FUZZ_CHECK(!"restore_newest accepted no intact image");
      }
      check_same(snap(d), before, 11);
      return;
    }
    FUZZ_CHECK(st == Status::ok);
    const Bytes now = image(d);
    FUZZ_CHECK(now == d.ab_full[first]);
    // The last complete save, not an older image of the same iteration: unless the device itself
    // went back in time since the other slot was written (a restore of an earlier image, which
    // the checkpoint documentation asks to answer by erasing both slots), so that the other slot's
    // image is the newer by A/B's order.
    if (strict && !d.last_ab.empty() && (d.last_ab == d.ab_full[0] || d.last_ab == d.ab_full[1]) &&
        restorable(d.last_ab, d.key.es.count_cap)) {
      const Bytes& other = d.last_ab == d.ab_full[0] ? d.ab_full[1] : d.ab_full[0];
      // Images of the same age (no step and no observation between the saves) hold the same
      // observations and differ at most in what the refresh after a restore resets (the model
      // generation, the verdict's counts, the refresh stamps): either may come back.
      if (other.empty() || !restorable(other, d.key.es.count_cap) || age(other) < age(d.last_ab))
        FUZZ_CHECK(now == d.last_ab);
    }
  }

  // ---- the estimate alone ----
  void restore_state(fuzz::Input& in, Device& d, const Snap& before) {
    Estimate& e = d.model.estimate();
    State s = in.flag() || store_.empty() ? e.state() : decode(pick(in, d).image.data() + kEstimateAt);
    forge(in, s, d.key.es.count_cap);
    const Status st = e.restore(s);
    if (st != Status::ok) {
      FUZZ_CHECK(st == Status::bad_setting);
      check_same(snap(d), before, 12);
      return;
    }
    const Bytes want = encode(s), got = encode(e.state());
    FUZZ_CHECK(want == got);
  }

  void write_mean(fuzz::Input& in, Device& d) {
    const Estimate& e = d.model.estimate();
    const int first = near(in, 0, Rows), count = near(in, 0, Rows);
    std::vector<Scalar> out(Rows * S, Scalar(-7));
    const std::uint8_t how = in.byte() % 8;
    if (how == 0) {
      FUZZ_CHECK(e.write_mean(nullptr, first, count) == Status::null_pointer);
      return;
    }
    const bool in_range = first >= 0 && count >= 0 && first <= Rows && count <= Rows - first;
    if (how == 1) {  // over the prior: refused before anything is written
      const Status st = e.write_mean(const_cast<Scalar*>(e.prior()), first, count);
      FUZZ_CHECK(st == (in_range ? Status::bad_setting : Status::out_of_bounds));
      return;
    }
    const Status st = e.write_mean(out.data(), first, count);
    if (!in_range) {
      FUZZ_CHECK(st == Status::out_of_bounds);
      for (Scalar v : out) FUZZ_CHECK(v == Scalar(-7));
      return;
    }
    FUZZ_CHECK(st == Status::ok);
    for (int i = 0; i < Rows * S; ++i)
      if (i < first * S || i >= (first + count) * S) FUZZ_CHECK(out[std::size_t(i)] == Scalar(-7));
    check_rows(d, out.data(), first, count);
  }

  // A whole refresh in slices of max_rows with a step slice between two: the steps read the old
  // model until the commit.
  void sliced_refresh(fuzz::Input& in, Device& d, const Snap& before, Commit& committed) {
    int rows = 1 + in.byte() % 5;
    const int rollouts = 1 + in.byte() % 3;
    for (int k = 0; k < Rows + 2; ++k) {
      const Bytes model_was = model_bytes(d);
      const Scalar* at = d.model.model();
      bool c = false;
      const Status st = d.model.refresh_slice(d.solver, rows, c);
      if (st != Status::ok) {
        // No room for a model generation: refused before a refresh starts, or at the commit of one
        // started before.
        FUZZ_CHECK(d.solver.model_generation() == kMax && (d.shadow_next < 0 || d.shadow_next == Rows));
        return;
      }
      if (c) {
        FUZZ_CHECK(d.shadow_next == Rows);
        d.shadow_next = -1;
        committed.done = true;
        return;
      }
      shadow_slice(d, rows);
      FUZZ_CHECK(d.model.model() == at && model_bytes(d) == model_was);
      if (slices_++ < kMaxSlices) {
        pbrl::SliceResult out;
        const Bytes solver_was = plain(d.solver);
        const Status s2 = d.solver.step_slice(rollouts, out);
        if (s2 != Status::ok) fuzz::check_failed_step<Solver>(solver_was, plain(d.solver), s2);
      }
      FUZZ_CHECK(d.model.model() == at && model_bytes(d) == model_was);
      FUZZ_CHECK(d.solver.model_digest().transition == pbrl::detail::array_digest(at, std::size_t(Rows) * S));
    }
    (void)before;
    FUZZ_CHECK(!"a refresh in slices ends");
  }

  void refresh_rule(fuzz::Input& in, Device& d) {
    Estimate& e = d.model.estimate();
    const State& s = e.state();
    const auto& es = e.settings();
    const bool want = s.refresh_pending || (es.refresh_every > 0 && s.clock - s.refreshed_at >= es.refresh_every);
    FUZZ_CHECK(d.model.refresh_due() == want);
    if (in.flag()) {
      e.mark_refreshed();
      FUZZ_CHECK(!d.model.refresh_due());
    }
  }

  const Kind* kind_;
  bool sampled_, tolerance_;
  std::unique_ptr<Device> dev_[2];
  std::vector<Saved> store_;
  int steps_ = 0, slices_ = 0;
};

// ---- the configurations ---------------------------------------------------------------------

struct Cases {
  std::unique_ptr<GameKind<double>> game{new GameKind<double>(31)};
  std::unique_ptr<GameKind<float>> game_f{new GameKind<float>(32)};
  std::unique_ptr<DesignKind<double>> design{new DesignKind<double>(33)};
  std::unique_ptr<DesignKind<float>> design_f{new DesignKind<float>(34)};
  std::vector<std::unique_ptr<CaseBase>> all;

  Cases() {
    using GD = GameKind<double>;
    using GF = GameKind<float>;
    using DD = DesignKind<double>;
    using DF = DesignKind<float>;
    // 0: Stackelberg, double, float counts, Pbrl, LU, exact, fixed penalty
    all.emplace_back(new Case<GD, pbrl::Pbrl<GD::Problem>, float>(game.get(), false, false));
    // 1: Stackelberg, float, float counts, Pbrl, LU, sampled (policy gradient), tolerance mode
    all.emplace_back(new Case<GF, pbrl::Pbrl<GF::Problem>, float>(game_f.get(), true, true));
    // 2: incentive design, double, double counts, PbrlZeroSum, LU, exact, tolerance mode
    all.emplace_back(new Case<DD, pbrl::PbrlZeroSum<DD::Problem>, double>(design.get(), false, true));
    // 3: incentive design, float, uint16 counts, PbrlZeroSum, LU, exact, fixed
    all.emplace_back(new Case<DF, pbrl::PbrlZeroSum<DF::Problem>, std::uint16_t>(design_f.get(), false, false));
    // 4: Stackelberg, double, uint32 counts, Pbrl, sweeps, exact, tolerance mode
    all.emplace_back(
        new Case<GD, pbrl::Pbrl<GD::Problem, EvaluationMethod::sweeps>, std::uint32_t>(game.get(), false, true));
  }
};

Cases* cases = nullptr;

// The seed corpus: per configuration, five programs written with the operations' encoding:
// a refresh in slices between steps, checkpoints of every restore mode and A/B slots, counts at a
// tiny cap with forgetting, counts at their ends (clock, model generation), and a device B of
// other settings whose images A must refuse.
struct Program {
  Bytes b;
  // Settings (draw_settings): prior, strength, support, discount, clock, cap, refresh rule.
  void settings(int prior, int strength, int dense, int discount, int clock, int cap, int m, int every) {
    b.insert(b.end(), {std::uint8_t(prior), std::uint8_t(strength), std::uint8_t(dense), std::uint8_t(discount),
                       std::uint8_t(clock), std::uint8_t(cap), std::uint8_t(m), std::uint8_t(every)});
  }
  void op(int device, int code, std::initializer_list<int> args = {}) {
    b.push_back(std::uint8_t((device << 7) | code));
    for (int a : args) b.push_back(std::uint8_t(a));
  }
  // Arguments read by near(lo, hi): the value v is the byte v - lo + 1.
  void observe(int dev, int s, int a1, int a2, int sn) { op(dev, 0, {s + 1, a1 + 1, a2 + 1, sn + 1}); }
  void burst(int dev, int row, int n, int b0, int b1) { op(dev, 3, {row, n - 1, b0, b1}); }
  void slice(int dev, int rows, bool foreign = false) { op(dev, 4, {7, rows - 1, foreign ? 0 : 1}); }
  void refresh(int dev, bool foreign = false) { op(dev, 5, {foreign ? 0 : 1}); }
  void step(int dev) { op(dev, 6); }
  void step_slice(int dev, int rollouts) { op(dev, 7, {4, rollouts - 1}); }
  void save(int dev) { op(dev, 8, {1}); }
};

void write_seeds(const std::string& dir) {
  for (std::size_t c = 0; c < cases->all.size(); ++c) {
    for (int variant = 0; variant < 5; ++variant) {
      Program p;
      p.b.push_back(std::uint8_t(c));
      switch (variant) {
        case 0:  // prior 0, strength 1, support prior, no forgetting, cap 16; B a copy
          p.settings(0, 0, 0, 0, 0, 3, 2, 0);
          p.b.push_back(0);
          for (int r = 0; r < Rows; r += 3) p.burst(0, r, 20 + r, r, 1);
          p.observe(0, 1, 1, 0, 2);
          for (int k = 0; k < 4; ++k) {
            p.slice(0, 3);
            p.step_slice(0, 2);
          }
          p.slice(0, 5);
          p.step(0);
          p.slice(0, 5);  // commit
          p.save(0);
          p.op(0, 14, {2, 1});  // sliced refresh
          p.save(0);
          p.op(0, 9, {0, 0, 1});  // restore stored image 0, refresh
          p.step(0);
          p.op(0, 13, {1, 13, 2});  // write_mean of every row
          p.op(0, 15, {1});
          break;
        case 1:  // checkpoints: every restore mode, A/B
          p.settings(1, 2, 1, 3, 1, 4, 3, 5);  // prior with zeros, dense, discount 0.9 by observations
          p.b.push_back(0);
          p.burst(0, 4, 100, 1, 1);
          p.save(0);
          p.burst(1, 7, 50, 2, 1);
          p.save(1);
          p.refresh(0);
          p.step(0);
          p.save(0);
          p.op(0, 9, {0, 1, 1});
          p.op(0, 9, {1, 0, 2, 1, 0x30, 0, 0, 0, 1});     // torn over image 0
          p.op(0, 9, {2, 1, 2, 60, 0, 1, 0xAB, 1, 0, 1}); // bytes flipped, resealed
          p.op(0, 9, {4, 1, 1, 2, 3, 7, 0, 1});           // estimate counts forged
          p.op(0, 9, {5, 1, 2, 0, 0, 1});                 // generation forged
          p.op(0, 9, {6, 1});                             // plain image
          p.op(0, 9, {7, 1});                             // B's image
          p.op(0, 9, {8, 2, 1, 8, 0, 3, 0x11, 0, 1});     // estimate bytes patched
          for (int k = 0; k < 3; ++k) {
            p.op(0, 10, {1});
            p.burst(0, 2 + k, 9, 0, 1);
          }
          p.op(0, 11);
          p.step(0);
          p.op(0, 10, {0, 0x20, 0, 0, 0});  // torn A/B save
          p.op(0, 11);
          break;
        case 2:  // saturation: cap 2, discount 0.5, halving on every other observation
          p.settings(0, 3, 0, 2, 1, 0, 1, 1);
          p.b.push_back(1);
          p.settings(0, 3, 0, 2, 0, 2, 1, 1);  // B: the other clock, cap 5
          for (int r = 0; r < Rows; ++r) p.burst(r % 2, r, 255, r, 2);
          p.refresh(0);
          p.refresh(1);
          p.op(0, 12, {1, 1, 3, 2, 7});  // estimate restore: a row at the cap
          p.burst(0, 3, 10, 0, 0);
          p.op(0, 13, {2, 5, 3});
          p.op(0, 9, {7, 1});  // B's image: other settings
          p.save(1);
          p.op(0, 9, {0, 0, 1});
          break;
        case 3:  // counts at their ends
          p.settings(2, 0, 1, 0, 0, 5, 0, 0);
          p.b.push_back(0);
          p.observe(0, 0, 0, 0, 0);
          p.op(0, 9, {4, 1, 1, 0, 0, 4, 1, 1});  // clock one below its maximum
          p.observe(0, 2, 1, 1, 2);
          p.observe(0, 2, 1, 1, 2);  // count_overflow
          p.op(0, 9, {5, 1, 2, 0, 0, 1});  // model generation at max - 1, refresh
          p.refresh(0);
          p.slice(0, 6);
          p.slice(0, 6);
          p.slice(0, 6);
          p.refresh(0, true);
          p.slice(1, 12, true);
          p.slice(1, 12, true);
          break;
        default:  // B with another prior and other settings; cross restores
          p.settings(0, 1, 0, 0, 0, 4, 2, 3);
          p.b.push_back(1);
          p.settings(1, 2, 1, 0, 0, 4, 2, 3);
          p.burst(0, 1, 30, 0, 1);
          p.burst(1, 2, 30, 0, 1);
          p.save(0);
          p.save(1);
          p.op(0, 9, {7, 1});
          p.op(1, 9, {7, 1});
          p.op(1, 9, {0, 0, 1});
          p.op(0, 9, {0, 1, 1});
          p.op(0, 12, {0, 0, 2, 5, 2, 8});
          p.op(1, 2, {2, 4, 1});
          p.step(1);
          p.op(1, 14, {4, 2});
          break;
      }
      fuzz::write_file(dir + "/c" + std::to_string(c) + "_v" + std::to_string(variant), p.b);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* s = std::getenv("PBRL_FUZZ_STRICT")) strict = s[0] != '0';
  if (const char* s = std::getenv("PBRL_FUZZ_TRACE")) trace = s[0] == '1';
  return fuzz::initialize(cases, write_seeds);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const int c = in.byte() % int(cases->all.size());
  cases->all[std::size_t(c)]->run(in);
  return 0;
}
