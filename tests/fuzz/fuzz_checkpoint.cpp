// libFuzzer harness: checkpoint restore of Pbrl and PbrlZeroSum (checkpoint.hpp) in eight
// configurations (value and Bellman penalties; PMD, policy-gradient and soft-value-iteration
// oracles; LU and sweeps; exact and sampled; fixed and tolerance penalty modes; double and float).
//
// Input: byte 0 picks the configuration, byte 1 the mode, byte 2 the live solver's state before
// the restore (just init()'d, or restored from a valid image of iteration 1, 2, 4 or 7); the
// rest is mode data:
//   0 raw       the restore buffer is the input's bytes (the frame must refuse nearly all);
//   1 payload   a valid image with fuzzed bytes written into its payload, re-sealed (CRC, and
//               optionally the sequence number and commit word set to the payload's iteration
//               count), so that restore gets past the frame and judges the numbers;
//   2 header    a valid image with fuzzed header bytes, re-sealed;
//   3 torn      A/B slots: a write of one valid image cut at any byte over erased flash or over an
//               older image, the other slot valid, erased or torn; restore_newest_checkpoint;
//   4 A/B       both slots valid images, each possibly fuzzed and re-sealed; restore_newest;
//   5 calls     short buffers, null buffers, an uninitialized solver.
// Properties (abort() on violation, so libFuzzer records the input):
//   - refused: the solver's bytes are identical to before (memcmp of the whole object);
//   - accepted: the state is one a step could have left (x in the problem's box, y in its
//     policy set, every policy on the simplex: validate_policy, i.e. entries >= 0 and rows
//     summing to 1 within 64 * eps * A), and saving it gives back the image restored, byte for
//     byte (torn writes: one of the complete images, the newer one if both slots hold one);
//   - then up to three steps: each returns ok or a status; after ok the iteration count went
//     up by one (no overflow: UBSan traps signed overflow), the environment steps did not go
//     down, the iterates are finite and in their sets and the policies on the simplex; after a
//     status the saved state is unchanged but for the sweeps' evaluation warm starts, which the
//     step's contract leaves out (fuzz_solvers.hpp); the final state saves and restores into a fresh
//     solver (unless a count has no room left, which restore refuses by design).
// PBRL_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (tests/fuzz/corpus/fuzz_checkpoint) and exits.

#include "fuzz_solvers.hpp"
#include "fuzz_support.hpp"
#include "../game_arrays.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"
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
using pbrl::GradientMode;
using pbrl::OracleKind;
using pbrl::Parameterization;
using pbrl::PenaltyKind;
using pbrl::Status;
using fuzz::Bytes;

using fuzz::get_le;
using fuzz::kCrcAt;
using fuzz::kPayloadAt;
using fuzz::kSequenceAt;
using fuzz::put_le;
using fuzz::reseal_crc;
using fuzz::set_sequence;
constexpr int kImageIterations[] = {0, 1, 2, 4, 7};
constexpr int kImages = sizeof(kImageIterations) / sizeof(int);
constexpr int kSteps = 3;  // steps after an accepted restore


// ---- problems: small random instances, built once ---------------------------------------------

template <typename T, int S, int A>
struct ShapingFixture {
  T reward[S * A], transition[S * A * S], initial[S];
  pbrl::RewardShaping<T, S, A> problem;
  explicit ShapingFixture(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward, S * A);
    pbrl::random_transition(rng, transition, S * A, S);
    pbrl::random_distribution(rng, initial, S);
    typename pbrl::RewardShaping<T, S, A>::Data d;
    d.reward = reward;
    d.transition = transition;
    d.initial = initial;
    d.discount = T(0.9);
    d.lower.tau = T(0.1);
    FUZZ_CHECK(problem.init(d) == Status::ok);
  }
};

template <typename T, int S, int AL, int AF>
struct StackelbergFixture : StackelbergArrays<T, S, AL, AF> {
  pbrl::Stackelberg<T, S, AL, AF> problem;
  explicit StackelbergFixture(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    this->draw(rng);
    FUZZ_CHECK(problem.init(fuzz::harness_stackelberg(this->data())) == Status::ok);
  }
};

template <typename T, int S, int A1, int A2>
struct IncentiveFixture : IncentiveArrays<T, S, A1, A2> {
  pbrl::IncentiveDesign<T, S, A1, A2> problem;
  explicit IncentiveFixture(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    this->draw(rng);
    FUZZ_CHECK(problem.init(fuzz::harness_incentive(this->data())) == Status::ok);
  }
};

// ---- the two solver kinds: init and the invariants of a state a step can leave ----------------

template <typename Settings>
void common_settings(Settings& s, OracleKind oracle, GradientMode gradient, bool tolerance) {
  s.oracle = oracle;
  s.gradient = gradient;
  s.inner_steps = 2;
  s.oracle_step = decltype(s.oracle_step)(0.5);
  s.step_x = decltype(s.step_x)(0.2);
  s.lambda_start = decltype(s.step_x)(0.5);
  s.lambda_final = decltype(s.step_x)(3);
  s.lambda_ramp = 5;
  s.sampling.horizon = 3;
  s.sampling.batch = 2;
  s.seed = 5u;
  if (tolerance) {  // grow lambda after every step above epsilon, so that images hold growths
    s.gap_tolerance = decltype(s.step_x)(1e-3);
    s.lambda_patience = 1;
    s.lambda_stall = decltype(s.step_x)(0);
    s.lambda_max = decltype(s.step_x)(64);
    s.inner_steps = 1;
    s.inner_steps_max = 4;
  }
}
template <typename Set>
void direct(Set& set) {
  set.parameterization = Parameterization::direct;
  set.floor = decltype(set.floor)(1e-3);
}

// A policy parameter matrix in its set, else print it (rows, row sums) and abort().
template <typename Scalar, int S, int A>
void check_in_set(const pbrl::PolicySet<Scalar>& set, const pbrl::StateActionMatrix<Scalar, S, A>& y, const char* what) {
  const Status st = pbrl::validate_parameters<Scalar, S, A>(set, y);
  if (st == Status::ok) return;
  std::fprintf(stderr, "%s outside its policy set (status %d, floor %.17g):\n", what, int(st), double(set.floor));
  for (int s = 0; s < S; ++s) {
    for (int a = 0; a < A; ++a) std::fprintf(stderr, " %.17g", double(y(s, a)));
    std::fprintf(stderr, "   sum - 1 = %.3g\n", double(y.row(s).sum() - Scalar(1)));
  }
  FUZZ_CHECK(!"policy parameters in their set");
}

template <class Problem, EvaluationMethod M>
struct PbrlKind {
  using Solver = pbrl::Pbrl<Problem, M>;
  using Matrix = typename Solver::Matrix;
  const Problem* problem;
  typename Solver::Settings settings;

  Status init(Solver& s) const { return fuzz::init_at_start(s, *problem, settings); }
  void check_state(const Solver& s) const {
    FUZZ_CHECK(problem->validate_parameters(s.x()) == Status::ok);
    check_in_set(settings.policy, s.y(), "y");
    Matrix pi;
    s.policy(pi);
    FUZZ_CHECK(pbrl::validate_policy(pi) == Status::ok);
    FUZZ_CHECK(pbrl::validate_policy(s.oracle_policy()) == Status::ok);
  }
};

template <class Problem, EvaluationMethod M>
struct ZeroSumKind {
  using Solver = pbrl::PbrlZeroSum<Problem, M>;
  using Matrix1 = typename Solver::Matrix1;
  using Matrix2 = typename Solver::Matrix2;
  const Problem* problem;
  typename Solver::Settings settings;

  Status init(Solver& s) const { return fuzz::init_at_start(s, *problem, settings); }
  void check_state(const Solver& s) const {
    FUZZ_CHECK(problem->validate_parameters(s.x()) == Status::ok);
    check_in_set(settings.policy, s.y1(), "y1");
    check_in_set(settings.policy, s.y2(), "y2");
    Matrix1 pi1;
    Matrix2 pi2;
    s.policy1(pi1);
    s.policy2(pi2);
    FUZZ_CHECK(pbrl::validate_policy(pi1) == Status::ok);
    FUZZ_CHECK(pbrl::validate_policy(pi2) == Status::ok);
    FUZZ_CHECK(pbrl::validate_policy(s.oracle_policy1()) == Status::ok);
    FUZZ_CHECK(pbrl::validate_policy(s.oracle_policy2()) == Status::ok);
  }
};

// ---- one configuration: the valid images and the fuzzing of its restore ----------------------

struct CaseBase {
  virtual ~CaseBase() = default;
  virtual void run(fuzz::Input& in, int mode) = 0;
  virtual std::size_t image_size() const = 0;
  virtual const Bytes& image(int i) const = 0;
};

template <class Kind>
class Case final : public CaseBase {
 public:
  using Solver = typename Kind::Solver;
  static constexpr std::size_t N = pbrl::checkpoint_size<Solver>();
  static constexpr std::size_t kPayload = N - kPayloadAt - 8;

  explicit Case(const Kind& kind) : kind_(kind) {
    live_ = std::make_unique<Solver>();
    probe_ = std::make_unique<Solver>();
    fresh_ = std::make_unique<Solver>();
    snapshot_.resize(sizeof(Solver));
    for (int i = 0; i < kImages; ++i) {
      FUZZ_CHECK(kind_.init(*live_) == Status::ok);
      FUZZ_CHECK(live_->run(kImageIterations[i]) == Status::ok);
      images_[i] = save(*live_);
    }
  }

  std::size_t image_size() const override { return N; }
  const Bytes& image(int i) const override { return images_[i]; }

  void run(fuzz::Input& in, int mode) override {
    const int start = in.byte() % kImages;
    FUZZ_CHECK(kind_.init(*live_) == Status::ok);
    if (start > 0) FUZZ_CHECK(pbrl::restore_checkpoint(*live_, images_[start].data(), N) == Status::ok);
    std::memcpy(snapshot_.data(), static_cast<const void*>(live_.get()), sizeof(Solver));

    Status st = Status::ok;
    const Bytes* expected = nullptr;  // what an accepted restore must reproduce
    switch (mode) {
      case 0: {  // raw bytes, as long as the input gives (at least an image's size, 0xFF-padded)
        const std::size_t n = in.remaining() > N ? in.remaining() : N;
        slot_[0].assign(n, 0xFF);
        std::memcpy(slot_[0].data(), in.here(), in.remaining());
        st = pbrl::restore_checkpoint(*live_, slot_[0].data(), n);
        slot_[0].resize(N);
        expected = &slot_[0];
        break;
      }
      case 1:
        fuzz_payload(in, slot_[0]);
        st = pbrl::restore_checkpoint(*live_, slot_[0].data(), N);
        expected = &slot_[0];
        break;
      case 2:
        fuzz_header(in, slot_[0]);
        st = pbrl::restore_checkpoint(*live_, slot_[0].data(), N);
        expected = &slot_[0];
        break;
      case 3:
        st = torn(in, expected);
        break;
      case 4: {
        for (Bytes& slot : slot_) {
          if (in.flag()) fuzz_payload(in, slot);
          else if (in.flag()) fuzz_header(in, slot);
          else slot = images_[in.byte() % kImages];
        }
        st = pbrl::restore_newest_checkpoint(*live_, slot_[0].data(), slot_[1].data(), N);
        if (st == Status::ok) {
          const Bytes now = save(*live_);
          FUZZ_CHECK(now == slot_[0] || now == slot_[1]);
        }
        break;
      }
      default:
        calls(in);
        return;
    }
    if (st != Status::ok) {
      FUZZ_CHECK(std::memcmp(snapshot_.data(), static_cast<const void*>(live_.get()), sizeof(Solver)) == 0);
      return;
    }
    kind_.check_state(*live_);
    if (expected != nullptr) FUZZ_CHECK(save(*live_) == *expected);
    steps();
  }

 private:
  static Bytes save(const Solver& s) {
    Bytes b(N, 0xA5);
    FUZZ_CHECK(pbrl::save_checkpoint(s, b.data(), N) == Status::ok);
    return b;
  }

  // A valid image with up to 8 runs of fuzzed bytes in its payload, re-sealed.
  void fuzz_payload(fuzz::Input& in, Bytes& out) {
    out = images_[in.byte() % kImages];
    const int patches = 1 + in.byte() % 8;
    for (int k = 0; k < patches; ++k) {
      const std::size_t at = kPayloadAt + in.u32() % kPayload;
      const std::size_t len = 1 + in.byte() % 16;
      for (std::size_t i = 0; i < len && at + i < kPayloadAt + kPayload; ++i) out[at + i] = in.byte();
    }
    // The sequence number follows the payload's iteration count (its first 8 bytes), as save
    // writes it, unless the input says otherwise.
    if (!in.flag()) set_sequence(out.data(), N, get_le(out.data() + kPayloadAt, 8));
    reseal_crc(out.data(), N);
  }

  // A valid image with fuzzed bytes in the header's fields before the CRC, re-sealed.
  void fuzz_header(fuzz::Input& in, Bytes& out) {
    out = images_[in.byte() % kImages];
    const int patches = 1 + in.byte() % 4;
    for (int k = 0; k < patches; ++k) {
      const std::size_t at = in.byte() % kCrcAt;
      const std::size_t len = 1 + in.byte() % 8;
      for (std::size_t i = 0; i < len && at + i < kCrcAt; ++i) out[at + i] = in.byte();
    }
    if (in.flag()) set_sequence(out.data(), N, get_le(out.data() + kSequenceAt, 8));  // keep the commit word in step
    reseal_crc(out.data(), N);
  }

  // A/B storage with a write of image b cut after `cut` bytes over erased flash or image a; the
  // other slot holds a valid image, erased flash or another torn write. Slots are 1-5 bytes
  // longer than an image. An accepted restore must give one of the complete images in the
  // slots (the newer if both hold one); with none complete, a refusal.
  Status torn(fuzz::Input& in, const Bytes*& expected) {
    const std::size_t slot_size = N + 1 + in.byte() % 5;
    auto tear = [&](Bytes& slot) {
      const int a = in.byte() % kImages, b = in.byte() % kImages;
      slot.assign(slot_size, 0xFF);
      if (in.flag()) std::memcpy(slot.data(), images_[a].data(), N);
      std::memcpy(slot.data(), images_[b].data(), in.u32() % (N + 1));
    };
    const int other = in.byte() % 3;
    const bool first = in.flag();
    Bytes& cut = slot_[first ? 0 : 1];
    Bytes& rest = slot_[first ? 1 : 0];
    tear(cut);
    if (other == 0) {
      rest.assign(slot_size, 0xFF);
      std::memcpy(rest.data(), images_[in.byte() % kImages].data(), N);
    } else if (other == 1) {
      rest.assign(slot_size, 0xFF);
    } else {
      tear(rest);
    }
    // The complete images present: slot content equal to one of the valid images.
    int complete[2] = {-1, -1};
    for (int s = 0; s < 2; ++s)
      for (int i = 0; i < kImages; ++i)
        if (std::memcmp(slot_[s].data(), images_[i].data(), N) == 0) complete[s] = i;
    const Status st = pbrl::restore_newest_checkpoint(*live_, slot_[0].data(), slot_[1].data(), slot_size);
    if (complete[0] < 0 && complete[1] < 0) {
      FUZZ_CHECK(st != Status::ok);
      return st;
    }
    FUZZ_CHECK(st == Status::ok);
    const int newest = complete[1] > complete[0] ? complete[1] : complete[0];
    expected = &images_[newest];
    return st;
  }

  // Calls that must be refused before reading: null buffers, short buffers, an uninitialized solver.
  void calls(fuzz::Input& in) {
    const Bytes& img = images_[in.byte() % kImages];
    const std::size_t n = in.u32() % N;  // shorter than an image
    FUZZ_CHECK(pbrl::restore_checkpoint(*live_, img.data(), n) == Status::buffer_too_small);
    FUZZ_CHECK(pbrl::restore_checkpoint(*live_, nullptr, N) == Status::null_pointer);
    FUZZ_CHECK(pbrl::restore_newest_checkpoint(*live_, img.data(), nullptr, N) == Status::null_pointer);
    FUZZ_CHECK(pbrl::restore_newest_checkpoint(*live_, img.data(), img.data(), n) == Status::buffer_too_small);
    FUZZ_CHECK(std::memcmp(snapshot_.data(), static_cast<const void*>(live_.get()), sizeof(Solver)) == 0);
    Bytes fresh_before(sizeof(Solver));
    std::memcpy(fresh_before.data(), static_cast<const void*>(fresh_.get()), sizeof(Solver));
    FUZZ_CHECK(pbrl::restore_checkpoint(*fresh_, img.data(), N) == Status::not_initialized);
    FUZZ_CHECK(std::memcmp(fresh_before.data(), static_cast<const void*>(fresh_.get()), sizeof(Solver)) == 0);
    Bytes buffer(N, 0x5A);
    FUZZ_CHECK(pbrl::save_checkpoint(*live_, buffer.data(), n) == Status::buffer_too_small);
    FUZZ_CHECK(pbrl::save_checkpoint(*fresh_, buffer.data(), N) == Status::not_initialized);
    for (std::uint8_t b : buffer) FUZZ_CHECK(b == 0x5A);
  }

  // Up to kSteps steps from the restored state, then a save/restore round trip.
  void steps() {
    using Report = typename Solver::Report;
    for (int i = 0; i < kSteps; ++i) {
      const Bytes before = save(*live_);
      const std::int64_t k = live_->iteration(), env = live_->environment_steps();
      Report report;
      const Status st = live_->step(&report);
      if (st != Status::ok) {
        fuzz::check_failed_step<Solver>(before, save(*live_), st);
        FUZZ_CHECK(k < std::numeric_limits<std::int64_t>::max() || st == Status::count_overflow);
        break;
      }
      FUZZ_CHECK(live_->iteration() == k + 1);
      FUZZ_CHECK(live_->environment_steps() >= env);
      kind_.check_state(*live_);
      fuzz::check_report_finite(report);
    }
    // A state a step leaves restores, unless a count has no room for another step.
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    if (live_->iteration() == kMax || live_->environment_steps() == kMax) return;
    const Bytes now = save(*live_);
    FUZZ_CHECK(kind_.init(*probe_) == Status::ok);
    FUZZ_CHECK(pbrl::restore_checkpoint(*probe_, now.data(), N) == Status::ok);
    FUZZ_CHECK(save(*probe_) == now);
  }

  Kind kind_;
  std::unique_ptr<Solver> live_, probe_, fresh_;
  Bytes images_[kImages];
  Bytes slot_[2];
  Bytes snapshot_;
};

// ---- the configurations ---------------------------------------------------------------------

struct Cases {
  std::unique_ptr<ShapingFixture<double, 4, 3>> shaping{new ShapingFixture<double, 4, 3>(21)};
  std::unique_ptr<ShapingFixture<float, 3, 2>> shaping_f{new ShapingFixture<float, 3, 2>(22)};
  std::unique_ptr<StackelbergFixture<double, 3, 2, 2>> stackelberg{new StackelbergFixture<double, 3, 2, 2>(23)};
  std::unique_ptr<IncentiveFixture<double, 3, 2, 2>> incentive{new IncentiveFixture<double, 3, 2, 2>(24)};
  std::unique_ptr<IncentiveFixture<float, 3, 2, 2>> incentive_f{new IncentiveFixture<float, 3, 2, 2>(25)};
  std::vector<std::unique_ptr<CaseBase>> all;

  template <class Kind>
  void add(const Kind& kind) {
    all.emplace_back(new Case<Kind>(kind));
  }

  Cases() {
    {  // 0: RewardShaping, value penalty, PMD, LU, exact, fixed mode with a ramp, softmax y
      PbrlKind<pbrl::RewardShaping<double, 4, 3>, EvaluationMethod::direct> k{&shaping->problem, {}};
      common_settings(k.settings, OracleKind::policy_mirror_descent, GradientMode::exact, false);
      add(k);
    }
    {  // 1: RewardShaping, Bellman penalty, projected policy gradient, sweeps, exact, tolerance, direct y
      PbrlKind<pbrl::RewardShaping<double, 4, 3>, EvaluationMethod::sweeps> k{&shaping->problem, {}};
      common_settings(k.settings, OracleKind::policy_gradient, GradientMode::exact, true);
      k.settings.penalty_kind = PenaltyKind::bellman;
      direct(k.settings.policy);
      direct(k.settings.oracle_policy);
      add(k);
    }
    {  // 2: Stackelberg, value penalty, soft value iteration, LU, exact, tolerance
      PbrlKind<pbrl::Stackelberg<double, 3, 2, 2>, EvaluationMethod::direct> k{&stackelberg->problem, {}};
      common_settings(k.settings, OracleKind::soft_value_iteration, GradientMode::exact, true);
      add(k);
    }
    {  // 3: Stackelberg, Bellman penalty, softmax policy gradient, sweeps, sampled, fixed
      PbrlKind<pbrl::Stackelberg<double, 3, 2, 2>, EvaluationMethod::sweeps> k{&stackelberg->problem, {}};
      common_settings(k.settings, OracleKind::policy_gradient, GradientMode::sampled, false);
      k.settings.penalty_kind = PenaltyKind::bellman;
      add(k);
    }
    {  // 4: RewardShaping in float, value penalty, policy gradient, LU, sampled, tolerance, direct y
      PbrlKind<pbrl::RewardShaping<float, 3, 2>, EvaluationMethod::direct> k{&shaping_f->problem, {}};
      common_settings(k.settings, OracleKind::policy_gradient, GradientMode::sampled, true);
      direct(k.settings.policy);
      add(k);
    }
    {  // 5: IncentiveDesign, PMD, LU, exact, fixed
      ZeroSumKind<pbrl::IncentiveDesign<double, 3, 2, 2>, EvaluationMethod::direct> k{&incentive->problem, {}};
      common_settings(k.settings, OracleKind::policy_mirror_descent, GradientMode::exact, false);
      add(k);
    }
    {  // 6: IncentiveDesign, projected policy gradient, sweeps, sampled, tolerance, direct y
      ZeroSumKind<pbrl::IncentiveDesign<double, 3, 2, 2>, EvaluationMethod::sweeps> k{&incentive->problem, {}};
      common_settings(k.settings, OracleKind::policy_gradient, GradientMode::sampled, true);
      direct(k.settings.policy);
      direct(k.settings.oracle_policy);
      add(k);
    }
    {  // 7: IncentiveDesign in float, soft value iteration, LU, exact, tolerance
      ZeroSumKind<pbrl::IncentiveDesign<float, 3, 2, 2>, EvaluationMethod::direct> k{&incentive_f->problem, {}};
      common_settings(k.settings, OracleKind::soft_value_iteration, GradientMode::exact, true);
      add(k);
    }
  }
};

Cases* cases = nullptr;
constexpr int kModes = 6;

// The seed corpus: per configuration, a valid image in raw mode and a short program per mode.
void write_seeds(const std::string& dir) {
  for (std::size_t c = 0; c < cases->all.size(); ++c) {
    const CaseBase& k = *cases->all[c];
    for (int mode = 0; mode < kModes; ++mode) {
      Bytes seed = {std::uint8_t(c), std::uint8_t(mode), std::uint8_t(c % kImages)};
      if (mode == 0) {
        const Bytes& img = k.image(int(c + 2) % kImages);
        seed.insert(seed.end(), img.begin(), img.end());
      } else {
        for (int i = 0; i < 24; ++i) seed.push_back(std::uint8_t(37 * i + 11 * int(c) + mode));
      }
      fuzz::write_file(dir + "/c" + std::to_string(c) + "_m" + std::to_string(mode), seed);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  return fuzz::initialize(cases, write_seeds);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const int c = in.byte() % int(cases->all.size());
  const int mode = in.byte() % kModes;
  cases->all[std::size_t(c)]->run(in, mode);
  return 0;
}
