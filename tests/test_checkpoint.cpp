// Checkpoints (checkpoint.hpp): the CRC; a restored solver continues bit for bit like the saved
// one (Pbrl and PbrlZeroSum, exact and sampled, direct and sweeps); every refusal leaves the
// solver untouched; A/B storage survives a power cut at every byte of a write.
#include "game_support.hpp"
#include "solver_support.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/problems/incentive_design.hpp"

#include <cstring>

namespace test_checkpoint {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
using Bytes = std::unique_ptr<unsigned char[]>;
Bytes bytes(std::size_t n, unsigned char fill = 0xFF) {
  Bytes b(new unsigned char[n]);
  std::memset(b.get(), fill, n);
  return b;
}

// Offsets of the documented layout (checkpoint.hpp) that the tests patch.
constexpr std::size_t kVersionAt = 12, kProblemAt = 17, kModelDigestAt = 36, kEstimateAt = 40, kReservedAt = 41,
                      kCrcAt = 44, kPayloadAt = 48;
constexpr std::size_t kIterationAt = kPayloadAt, kStepsAt = kPayloadAt + 8, kGenerationAt = kPayloadAt + 16,
                      kRngAt = kPayloadAt + 24,
                      kScheduleAt = kPayloadAt + 40;  // the penalty schedule: 8 scalars and 7 counts
constexpr std::size_t kGrowthsAt = kScheduleAt + sizeof(Real) + 8;
constexpr std::size_t kStationaryAt = kScheduleAt + 16 + 3 * sizeof(Real), kConvergedAt = kStationaryAt + 8;
constexpr std::size_t kNetGrowthsAt = kScheduleAt + 40 + 7 * sizeof(Real);  // level_, before the continuation's two
constexpr std::size_t kFirstParameterAt = kScheduleAt + 7 * 8 + 8 * sizeof(Real);  // x(0): after the schedule

// Recomputes the CRC of a patched image of n bytes: [0, 44) then [48, n).
void reseal(unsigned char* image, std::size_t n) {
  const std::uint32_t crc = pbrl::crc32(image + kPayloadAt, n - kPayloadAt, pbrl::crc32(image, kCrcAt));
  for (int i = 0; i < 4; ++i) image[kCrcAt + i] = static_cast<unsigned char>(crc >> (8 * i));
}

// Writes v's IEEE bits little-endian, as the image stores scalars.
void put_scalar(unsigned char* p, Real v) {
  using Bits = std::conditional_t<sizeof(Real) == 4, std::uint32_t, std::uint64_t>;
  Bits bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (std::size_t i = 0; i < sizeof bits; ++i) p[i] = static_cast<unsigned char>(bits >> (8 * i));
}

// A count as the image stores it (64 bits, little-endian); the sequence number and commit word.
void put_count(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_sequence(unsigned char* image, std::size_t n, std::uint64_t v) {
  put_count(image + 4, v);
  for (int i = 0; i < 8; ++i) image[n - 1 - i] = static_cast<unsigned char>(v >> (8 * i));
}

template <class Solver>
Bytes image_of(const Solver& solver) {
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  Bytes b = bytes(n);
  REQUIRE(pbrl::save_checkpoint(solver, b.get(), n) == Status::ok);
  return b;
}

bool same_rng(const pbrl::Rng& a, const pbrl::Rng& b) { return std::memcmp(a.state(), b.state(), 16) == 0; }

// The unpatched image restores (the refusals before were for the patches): live at iteration 3.
template <class Solver>
void check_unpatched_restores(Solver& live, const Bytes& image) {
  CHECK(pbrl::restore_checkpoint(live, image.get(), pbrl::checkpoint_size<Solver>()) == Status::ok);
  CHECK(live.iteration() == 3);
}

// ---- fixtures: a Pbrl problem with x in rewards and transitions, and incentive design -------------

constexpr int S = 3, A = 2, K = 2;
using Mixture = MixtureProblem<S, A, K>;
template <pbrl::EvaluationMethod M>
using PbrlSolver = pbrl::Pbrl<Mixture, M>;

constexpr int A1 = 2, A2 = 2;
using Incentive = pbrl::IncentiveDesign<Real, S, A1, A2>;
template <pbrl::EvaluationMethod M>
using ZeroSumSolver = pbrl::PbrlZeroSum<Incentive, M>;

struct PbrlCase {
  const char* name;
  PenaltyKind penalty_kind;
  OracleKind oracle;
  GradientMode gradient;
};
const PbrlCase kPbrlCases[] = {
    {"value, PMD, exact", PenaltyKind::value, OracleKind::policy_mirror_descent, GradientMode::exact},
    {"Bellman, policy gradient, exact", PenaltyKind::bellman, OracleKind::policy_gradient, GradientMode::exact},
    {"value, soft value iteration, exact", PenaltyKind::value, OracleKind::soft_value_iteration, GradientMode::exact},
    {"value, sampled", PenaltyKind::value, OracleKind::policy_gradient, GradientMode::sampled},
    {"Bellman, sampled", PenaltyKind::bellman, OracleKind::policy_gradient, GradientMode::sampled},
};

pbrl::PbrlSettings<Real> pbrl_settings(const PbrlCase& c) {
  pbrl::PbrlSettings<Real> s;
  s.penalty_kind = c.penalty_kind;
  s.oracle = c.oracle;
  s.gradient = c.gradient;
  s.inner_steps = 2;
  s.oracle_step = Real(0.5);
  s.step_x = Real(0.05);
  s.step_y = Real(0.2);
  s.lambda_start = Real(1);
  s.lambda_final = Real(3);
  s.lambda_ramp = 4;
  s.sampling.horizon = 4;
  s.sampling.batch = 3;
  s.seed = 7u;
  return s;
}

// Few sweeps, so that a solve depends on where it starts (the warm starts must be restored).
constexpr int kFewSweeps = 3;

template <pbrl::EvaluationMethod M>
Status init_pbrl(PbrlSolver<M>& solver, const Mixture& problem, const pbrl::PbrlSettings<Real>& s) {
  if constexpr (M == pbrl::EvaluationMethod::sweeps) solver.evaluation_workspace().max_sweeps = kFewSweeps;
  return solver.init(problem, s, Mixture::Params::Zero(), Mat<S, A>::Zero());
}

pbrl::PbrlZeroSumSettings<Real> zero_sum_settings(GradientMode gradient) {
  pbrl::PbrlZeroSumSettings<Real> s;
  s.policy.logit_bound = Real(10);
  s.oracle = gradient == GradientMode::exact ? OracleKind::policy_mirror_descent : OracleKind::policy_gradient;
  s.inner_steps = 2;
  s.oracle_step = Real(0.5);
  s.step_x = Real(0.5);
  s.step_pi = Real(0.2);
  s.lambda_final = Real(4);
  s.gradient = gradient;
  s.sampling.horizon = 4;
  s.sampling.batch = 3;
  s.seed = 11u;
  return s;
}

template <pbrl::EvaluationMethod M>
Status init_zero_sum(ZeroSumSolver<M>& solver, const Incentive& problem, const pbrl::PbrlZeroSumSettings<Real>& s) {
  if constexpr (M == pbrl::EvaluationMethod::sweeps) solver.evaluation_workspace().max_sweeps = kFewSweeps;
  return solver.init(problem, s, Incentive::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero());
}

struct Fixtures {
  Mixture mixture{81};
  GameData<S, A1, A2> game{82};
  Incentive incentive;
  Fixtures() { REQUIRE(incentive.init(game.incentive(Real(0.8), Real(0.3))) == Status::ok); }
};

// Everything observable of two solvers is the same, to the bit.
template <class P, pbrl::EvaluationMethod M>
void check_same(const pbrl::Pbrl<P, M>& a, const pbrl::Pbrl<P, M>& b) {
  solver_support::same_common_state(a, b);
  CHECK(a.y() == b.y());
  CHECK(a.oracle_policy() == b.oracle_policy());
}
template <class P, pbrl::EvaluationMethod M>
void check_same(const pbrl::PbrlZeroSum<P, M>& a, const pbrl::PbrlZeroSum<P, M>& b) {
  solver_support::same_common_state(a, b);
  CHECK(a.y1() == b.y1());
  CHECK(a.y2() == b.y2());
  CHECK(a.oracle_policy1() == b.oracle_policy1());
  CHECK(a.oracle_policy2() == b.oracle_policy2());
}

// k steps, save, m more steps (state A); another solver, set up alike but moved elsewhere first,
// restores and takes m steps (state B): A == B, and B's image is A's byte for byte.
template <class Solver, typename Init>
void check_round_trip(Init&& init, int k, int m) {
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  auto a = std::make_unique<Solver>();
  auto b = std::make_unique<Solver>();
  REQUIRE(init(*a) == Status::ok);
  REQUIRE(a->run(k) == Status::ok);
  const Bytes saved = image_of(*a);
  typename Solver::Report ra, rb;
  REQUIRE(a->run(m, &ra) == Status::ok);

  REQUIRE(init(*b) == Status::ok);
  REQUIRE(b->run(k + 2) == Status::ok);
  REQUIRE(pbrl::restore_checkpoint(*b, saved.get(), n) == Status::ok);
  CHECK(b->iteration() == k);
  CHECK(std::memcmp(image_of(*b).get(), saved.get(), n) == 0);  // save(restore(image)) == image
  REQUIRE(b->run(m, &rb) == Status::ok);
  check_same(*a, *b);
  same_report(ra, rb);
  CHECK(std::memcmp(image_of(*a).get(), image_of(*b).get(), n) == 0);
}

// check_round_trip with either evaluation method: Solver<direct>, then Solver<sweeps>.
template <template <pbrl::EvaluationMethod> class Solver, typename Init>
void check_round_trip_both_methods(Init&& init, int k, int m) {
  check_round_trip<Solver<pbrl::EvaluationMethod::direct>>(init, k, m);
  check_round_trip<Solver<pbrl::EvaluationMethod::sweeps>>(init, k, m);
}
}  // namespace

TEST_CASE("crc32 is zlib's: check value, chaining, empty input") {
  const unsigned char digits[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  CHECK(pbrl::crc32(digits, 9) == 0xCBF43926u);
  for (std::size_t split = 0; split <= 9; ++split)
    CHECK(pbrl::crc32(digits + split, 9 - split, pbrl::crc32(digits, split)) == 0xCBF43926u);
  CHECK(pbrl::crc32(digits, 0) == 0u);
  CHECK(pbrl::crc32(nullptr, 5, 0x1234u) == 0x1234u);
  const unsigned char zeros[4] = {0, 0, 0, 0};
  CHECK(pbrl::crc32(zeros, 4) == 0x2144DF1Cu);
}

TEST_CASE("Rng::set_state continues a stream; refuses null and all zeros") {
  pbrl::Rng a(5u), b(9u);
  (void)a.next();
  REQUIRE(b.set_state(a.state()) == Status::ok);
  bool same = true;
  for (int i = 0; i < 10; ++i) same = same && a.next() == b.next();
  CHECK(same);
  const std::uint32_t zeros[4] = {0u, 0u, 0u, 0u};
  CHECK(b.set_state(zeros) == Status::bad_setting);
  CHECK(b.set_state(nullptr) == Status::null_pointer);
  CHECK(same_rng(a, b));
}

TEST_CASE("checkpoint sizes: header 48 + payload + commit 8; warm starts only with sweeps") {
  using Direct = PbrlSolver<pbrl::EvaluationMethod::direct>;
  using Sweeps = PbrlSolver<pbrl::EvaluationMethod::sweeps>;
  // The counts (iteration, environment steps, model generation), the Rng, the penalty schedule
  // (penalty_schedule.hpp's visit_state: 8 scalars, 7 counts).
  constexpr std::size_t counts_and_rng = 8 + 8 + 8 + 16 + 7 * 8 + 8 * sizeof(Real);
  // x, y, log pi-hat, pi-hat, the soft value iteration's V.
  constexpr std::size_t direct_scalars = K + 3 * S * A + S;
  static_assert(pbrl::checkpoint_size<Direct>() == 56 + counts_and_rng + direct_scalars * sizeof(Real), "Pbrl");
  // Sweeps add the start occupancy and the value and occupancy of three evaluations.
  static_assert(pbrl::checkpoint_size<Sweeps>() == pbrl::checkpoint_size<Direct>() + 7 * S * sizeof(Real), "sweeps");
  using ZeroSum = ZeroSumSolver<pbrl::EvaluationMethod::direct>;
  constexpr std::size_t zero_sum_scalars = S * A1 * A2 + 3 * S * A1 + 3 * S * A2 + 2 * S;
  static_assert(pbrl::checkpoint_size<ZeroSum>() == 56 + counts_and_rng + zero_sum_scalars * sizeof(Real), "zero-sum");
  static_assert(pbrl::checkpoint_size<ZeroSumSolver<pbrl::EvaluationMethod::sweeps>>() ==
                    pbrl::checkpoint_size<ZeroSum>() + 6 * S * sizeof(Real),
                "zero-sum sweeps");
  MESSAGE("checkpoint_size: Pbrl<Mixture<3,2,2>> ", pbrl::checkpoint_size<Direct>(), " (sweeps ",
          pbrl::checkpoint_size<Sweeps>(), "), PbrlZeroSum<IncentiveDesign<3,2,2>> ", pbrl::checkpoint_size<ZeroSum>());
}

TEST_CASE("a restored Pbrl continues bit for bit: value and Bellman, every oracle, exact and sampled, both methods") {
  const auto f = std::make_unique<Fixtures>();
  for (const PbrlCase& c : kPbrlCases) {
    CAPTURE(doctest::String(c.name));
    const auto s = pbrl_settings(c);
    check_round_trip_both_methods<PbrlSolver>([&](auto& solver) { return init_pbrl(solver, f->mixture, s); }, 3, 4);
  }
}

TEST_CASE("a restored PbrlZeroSum continues bit for bit: exact and sampled, both methods") {
  const auto f = std::make_unique<Fixtures>();
  for (auto gradient : {GradientMode::exact, GradientMode::sampled}) {
    CAPTURE(static_cast<int>(gradient));
    const auto s = zero_sum_settings(gradient);
    check_round_trip_both_methods<ZeroSumSolver>(
        [&](auto& solver) { return init_zero_sum(solver, f->incentive, s); }, 3, 4);
  }
}

TEST_CASE("what the image carries matters: the random stream in sampled mode, the warm starts with few sweeps") {
  const auto f = std::make_unique<Fixtures>();
  using Solver = PbrlSolver<pbrl::EvaluationMethod::sweeps>;
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  const auto s = pbrl_settings(kPbrlCases[4]);  // Bellman, sampled
  auto a = std::make_unique<Solver>();
  auto b = std::make_unique<Solver>();
  REQUIRE(init_pbrl(*a, f->mixture, s) == Status::ok);
  REQUIRE(a->run(3) == Status::ok);
  const Bytes saved = image_of(*a);
  REQUIRE(a->run(2) == Status::ok);
  REQUIRE(init_pbrl(*b, f->mixture, s) == Status::ok);
  REQUIRE(pbrl::restore_checkpoint(*b, saved.get(), n) == Status::ok);
  b->rng().reseed(99u);  // everything but the stream restored
  REQUIRE(b->run(2) == Status::ok);
  CHECK(!(a->x() == b->x()));

  // Exact Bellman with 3 sweeps per solve: a solver whose warm starts are those of another
  // iterate (here: of a run that went on) ends elsewhere, so the image's warm starts count.
  const auto e = pbrl_settings(kPbrlCases[1]);
  REQUIRE(init_pbrl(*a, f->mixture, e) == Status::ok);
  REQUIRE(a->run(3) == Status::ok);
  const Bytes at3 = image_of(*a);
  REQUIRE(a->run(5) == Status::ok);
  const Bytes at8 = image_of(*a);
  // Splice: iterates of iteration 3, warm starts of iteration 8.
  const Bytes spliced = bytes(n);
  std::memcpy(spliced.get(), at3.get(), n);
  const std::size_t warm_bytes = 7 * S * sizeof(Real);
  const std::size_t warm_at = n - pbrl::kCheckpointCommitSize - warm_bytes;
  std::memcpy(spliced.get() + warm_at, at8.get() + warm_at, warm_bytes);
  reseal(spliced.get(), n);
  REQUIRE(init_pbrl(*a, f->mixture, e) == Status::ok);
  REQUIRE(init_pbrl(*b, f->mixture, e) == Status::ok);
  REQUIRE(pbrl::restore_checkpoint(*a, at3.get(), n) == Status::ok);
  REQUIRE(pbrl::restore_checkpoint(*b, spliced.get(), n) == Status::ok);
  CHECK(a->x() == b->x());
  REQUIRE(a->run(2) == Status::ok);
  REQUIRE(b->run(2) == Status::ok);
  CHECK(!(a->x() == b->x()));
}

TEST_CASE("checkpoint refusals leave the solver and the buffer untouched") {
  const auto f = std::make_unique<Fixtures>();
  using Solver = PbrlSolver<pbrl::EvaluationMethod::sweeps>;
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  const auto s = pbrl_settings(kPbrlCases[4]);
  auto source = std::make_unique<Solver>();
  REQUIRE(init_pbrl(*source, f->mixture, s) == Status::ok);
  REQUIRE(source->run(3) == Status::ok);
  const Bytes image = image_of(*source);

  auto live = std::make_unique<Solver>();
  REQUIRE(init_pbrl(*live, f->mixture, s) == Status::ok);
  REQUIRE(live->run(5) == Status::ok);
  const Bytes before = image_of(*live);
  auto untouched = [&] { return std::memcmp(image_of(*live).get(), before.get(), n) == 0; };
  const Bytes patched = bytes(n);
  auto restore_patched = [&] { return pbrl::restore_checkpoint(*live, patched.get(), n); };

  SUBCASE("null pointers, short buffers") {
    const Bytes buffer = bytes(n, 0x5A);
    CHECK(pbrl::save_checkpoint(*source, buffer.get(), n - 1) == Status::buffer_too_small);
    CHECK(pbrl::save_checkpoint(*source, nullptr, n) == Status::null_pointer);
    bool buffer_untouched = true;
    for (std::size_t i = 0; i < n; ++i) buffer_untouched = buffer_untouched && buffer[i] == 0x5A;
    CHECK(buffer_untouched);
    CHECK(pbrl::restore_checkpoint(*live, image.get(), n - 1) == Status::buffer_too_small);
    CHECK(pbrl::restore_checkpoint(*live, nullptr, n) == Status::null_pointer);
    CHECK(pbrl::restore_newest_checkpoint(*live, image.get(), nullptr, n) == Status::null_pointer);
    CHECK(pbrl::restore_newest_checkpoint(*live, image.get(), image.get(), n - 1) == Status::buffer_too_small);
    CHECK(untouched());
  }

  SUBCASE("every single-bit flip and every erased byte is checkpoint_corrupt") {
    long wrong = 0, first_wrong = -1;
    for (std::size_t i = 0; i < n; ++i)
      for (int bit = 0; bit <= 8; ++bit) {  // bit 8: the byte erased to 0xFF
        std::memcpy(patched.get(), image.get(), n);
        if (bit < 8) patched[i] ^= static_cast<unsigned char>(1u << bit);
        else if (patched[i] != 0xFF) patched[i] = 0xFF;
        else continue;
        if (restore_patched() != Status::checkpoint_corrupt && wrong++ == 0) first_wrong = long(i * 9 + bit);
      }
    CAPTURE(first_wrong);
    CHECK(wrong == 0);
    CHECK(untouched());
  }

  SUBCASE("another format version, reserved byte, estimate, solver type, size or evaluation method: checkpoint_mismatch") {
    for (const std::size_t at : {kVersionAt, kReservedAt, kReservedAt + 2, kEstimateAt}) {
      std::memcpy(patched.get(), image.get(), n);
      patched[at] = static_cast<unsigned char>(patched[at] + 1);
      reseal(patched.get(), n);
      CHECK(restore_patched() == Status::checkpoint_mismatch);
    }
    // The previous format version: refused, whatever else its bytes say.
    std::memcpy(patched.get(), image.get(), n);
    patched[kVersionAt] = static_cast<unsigned char>(pbrl::kCheckpointVersion - 1);
    reseal(patched.get(), n);
    CHECK(restore_patched() == Status::checkpoint_mismatch);
    // Another problem kind, model digest: their own refusals.
    std::memcpy(patched.get(), image.get(), n);
    patched[kProblemAt] = static_cast<unsigned char>(pbrl::ProblemKind::stackelberg);
    reseal(patched.get(), n);
    CHECK(restore_patched() == Status::checkpoint_other_problem);
    std::memcpy(patched.get(), image.get(), n);
    patched[kModelDigestAt] ^= 1u;
    reseal(patched.get(), n);
    CHECK(restore_patched() == Status::checkpoint_other_model);

    // Images of other solvers, in a buffer big enough for any of them.
    constexpr std::size_t big = 4096;
    const Bytes other = bytes(big);
    auto restore_other = [&](auto& solver, auto&& init) {
      using Other = std::decay_t<decltype(solver)>;
      REQUIRE(init(solver) == Status::ok);
      REQUIRE(solver.run(3) == Status::ok);
      static_assert(pbrl::checkpoint_size<Other>() <= big, "buffer");
      REQUIRE(pbrl::save_checkpoint(solver, other.get(), big) == Status::ok);
      return pbrl::restore_checkpoint(*live, other.get(), big);
    };
    auto direct = std::make_unique<PbrlSolver<pbrl::EvaluationMethod::direct>>();
    CHECK(restore_other(*direct, [&](auto& o) { return init_pbrl(o, f->mixture, s); }) == Status::checkpoint_mismatch);
    const auto bigger = std::make_unique<MixtureProblem<4, 2, 2>>(83);
    auto four_states = std::make_unique<pbrl::Pbrl<MixtureProblem<4, 2, 2>, pbrl::EvaluationMethod::sweeps>>();
    CHECK(restore_other(*four_states, [&](auto& o) {
            return o.init(*bigger, s, MixtureProblem<4, 2, 2>::Params::Zero(), Mat<4, 2>::Zero());
          }) == Status::checkpoint_mismatch);
    const auto three_params = std::make_unique<MixtureProblem<3, 2, 3>>(84);
    auto more_params = std::make_unique<pbrl::Pbrl<MixtureProblem<3, 2, 3>, pbrl::EvaluationMethod::sweeps>>();
    CHECK(restore_other(*more_params, [&](auto& o) {
            return o.init(*three_params, s, MixtureProblem<3, 2, 3>::Params::Zero(), Mat<3, 2>::Zero());
          }) == Status::checkpoint_mismatch);
    auto zero_sum = std::make_unique<ZeroSumSolver<pbrl::EvaluationMethod::sweeps>>();
    CHECK(restore_other(*zero_sum, [&](auto& o) {
            return init_zero_sum(o, f->incentive, zero_sum_settings(GradientMode::sampled));
          }) == Status::checkpoint_mismatch);
    // And the other way: a Pbrl image into a PbrlZeroSum.
    static_assert(pbrl::checkpoint_size<ZeroSumSolver<pbrl::EvaluationMethod::sweeps>>() > n, "bigger");
    CHECK(pbrl::restore_checkpoint(*zero_sum, image.get(), n) == Status::buffer_too_small);
    std::memcpy(other.get(), image.get(), n);
    CHECK(pbrl::restore_checkpoint(*zero_sum, other.get(), big) == Status::checkpoint_mismatch);
    CHECK(untouched());
  }

  SUBCASE("other settings, other sweep settings, other seed: checkpoint_other_settings") {
    auto other = std::make_unique<Solver>();
    auto changed = s;
    changed.step_x = Real(0.06);
    REQUIRE(init_pbrl(*other, f->mixture, changed) == Status::ok);
    const Bytes other_before = image_of(*other);
    CHECK(pbrl::restore_checkpoint(*other, image.get(), n) == Status::checkpoint_other_settings);
    CHECK(std::memcmp(image_of(*other).get(), other_before.get(), n) == 0);
    changed = s;
    changed.seed = 8u;
    REQUIRE(init_pbrl(*other, f->mixture, changed) == Status::ok);
    CHECK(pbrl::restore_checkpoint(*other, image.get(), n) == Status::checkpoint_other_settings);
    REQUIRE(init_pbrl(*other, f->mixture, s) == Status::ok);
    other->evaluation_workspace().max_sweeps = kFewSweeps + 1;
    CHECK(pbrl::restore_checkpoint(*other, image.get(), n) == Status::checkpoint_other_settings);
    other->evaluation_workspace().max_sweeps = kFewSweeps;
    CHECK(pbrl::restore_checkpoint(*other, image.get(), n) == Status::ok);
  }

  SUBCASE("an uninitialized solver: not_initialized") {
    auto fresh = std::make_unique<Solver>();
    const Bytes buffer = bytes(n, 0x5A);
    CHECK(pbrl::save_checkpoint(*fresh, buffer.get(), n) == Status::not_initialized);
    CHECK(buffer[0] == 0x5A);
    CHECK(pbrl::restore_checkpoint(*fresh, image.get(), n) == Status::not_initialized);
    CHECK(pbrl::restore_newest_checkpoint(*fresh, image.get(), image.get(), n) == Status::not_initialized);
    CHECK(fresh->iteration() == 0);
    CHECK(fresh->x() == Mixture::Params::Zero());
    CHECK(!fresh->initialized());
  }

  SUBCASE("intact images with numbers out of range: not_finite or checkpoint_corrupt, checked before any write") {
    const std::size_t last_scalar = n - pbrl::kCheckpointCommitSize - sizeof(Real);
    for (std::size_t at : {kFirstParameterAt, last_scalar})
      for (Real bad : {std::numeric_limits<Real>::quiet_NaN(), std::numeric_limits<Real>::infinity(),
                       -std::numeric_limits<Real>::infinity()}) {
        CAPTURE(at);
        std::memcpy(patched.get(), image.get(), n);
        put_scalar(patched.get() + at, bad);
        reseal(patched.get(), n);
        CHECK(restore_patched() == Status::not_finite);
      }
    std::memcpy(patched.get(), image.get(), n);
    std::memset(patched.get() + kRngAt, 0, 16);  // an all-zero random state
    reseal(patched.get(), n);
    CHECK(restore_patched() == Status::checkpoint_corrupt);
    for (std::size_t at : {kIterationAt, kStepsAt, kGenerationAt}) {  // a negative count
      std::memcpy(patched.get(), image.get(), n);
      std::memset(patched.get() + at, 0xFF, 8);
      reseal(patched.get(), n);
      CHECK(restore_patched() == Status::checkpoint_corrupt);
    }
    // The sequence number must equal the commit word.
    std::memcpy(patched.get(), image.get(), n);
    patched[4] ^= 1u;
    reseal(patched.get(), n);
    CHECK(restore_patched() == Status::checkpoint_corrupt);
    CHECK(untouched());
    check_unpatched_restores(*live, image);
  }
}

TEST_CASE("A/B slots: the slot to write and the newest checkpoint") {
  const auto f = std::make_unique<Fixtures>();
  using Solver = ZeroSumSolver<pbrl::EvaluationMethod::direct>;
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  const std::size_t slot_size = n + 3;
  const auto s = zero_sum_settings(GradientMode::sampled);
  auto solver = std::make_unique<Solver>();
  REQUIRE(init_zero_sum(*solver, f->incentive, s) == Status::ok);
  const Bytes slot0 = bytes(slot_size), slot1 = bytes(slot_size);
  auto to_write = [&] { return pbrl::checkpoint_slot_to_write<Solver>(slot0.get(), slot1.get(), slot_size); };
  auto save_to = [&](const Bytes& slot) { REQUIRE(pbrl::save_checkpoint(*solver, slot.get(), slot_size) == Status::ok); };

  CHECK(to_write() == 0);  // both erased
  CHECK(pbrl::checkpoint_slot_to_write<Solver>(nullptr, nullptr, slot_size) == 0);
  REQUIRE(solver->run(1) == Status::ok);
  save_to(slot0);
  CHECK(to_write() == 1);
  REQUIRE(solver->run(1) == Status::ok);
  save_to(slot1);
  CHECK(to_write() == 0);  // slot 0 is older
  REQUIRE(solver->run(1) == Status::ok);
  save_to(slot0);
  CHECK(to_write() == 1);
  CHECK(pbrl::checkpoint_slot_to_write<Solver>(slot0.get(), slot0.get(), slot_size) == 1);  // a tie
  CHECK(pbrl::checkpoint_slot_to_write<Solver>(slot0.get(), slot1.get(), n - 1) == 0);     // too short

  // An image of another solver type is no valid slot.
  auto other = std::make_unique<PbrlSolver<pbrl::EvaluationMethod::direct>>();
  REQUIRE(init_pbrl(*other, f->mixture, pbrl_settings(kPbrlCases[0])) == Status::ok);
  REQUIRE(other->run(9) == Status::ok);
  const Bytes foreign = bytes(4096);
  REQUIRE(pbrl::save_checkpoint(*other, foreign.get(), 4096) == Status::ok);
  CHECK(pbrl::checkpoint_slot_to_write<Solver>(slot0.get(), foreign.get(), slot_size) == 1);

  // Newest: slot 0 (iteration 3) over slot 1 (iteration 2).
  auto probe = std::make_unique<Solver>();
  REQUIRE(init_zero_sum(*probe, f->incentive, s) == Status::ok);
  REQUIRE(pbrl::restore_newest_checkpoint(*probe, slot0.get(), slot1.get(), slot_size) == Status::ok);
  CHECK(probe->iteration() == 3);
  REQUIRE(pbrl::restore_newest_checkpoint(*probe, slot1.get(), slot0.get(), slot_size) == Status::ok);
  CHECK(probe->iteration() == 3);
  // The newest intact image refused (other settings): the older one that fits is restored.
  auto changed = s;
  changed.step_x = Real(0.25);
  auto reconfigured = std::make_unique<Solver>();
  REQUIRE(init_zero_sum(*reconfigured, f->incentive, changed) == Status::ok);
  REQUIRE(reconfigured->run(5) == Status::ok);
  const Bytes newer = bytes(slot_size);
  REQUIRE(pbrl::save_checkpoint(*reconfigured, newer.get(), slot_size) == Status::ok);
  REQUIRE(pbrl::restore_newest_checkpoint(*probe, newer.get(), slot1.get(), slot_size) == Status::ok);
  CHECK(probe->iteration() == 2);
  // Neither restorable: the refusal of the newer intact image.
  const Bytes erased = bytes(slot_size);
  const Bytes probe_before = image_of(*probe);
  CHECK(pbrl::restore_newest_checkpoint(*probe, erased.get(), newer.get(), slot_size) ==
        Status::checkpoint_other_settings);
  CHECK(pbrl::restore_newest_checkpoint(*probe, erased.get(), erased.get(), slot_size) == Status::checkpoint_corrupt);
  CHECK(std::memcmp(image_of(*probe).get(), probe_before.get(), n) == 0);
}

namespace {
// A flash with two slots. Checkpoint 0 (iteration 1) and checkpoint 1 (iteration 2) are saved
// where checkpoint_slot_to_write says; checkpoint 2 (iteration 4) then goes, byte by byte, to the
// slot it names (checkpoint 0's) and power fails after `cut` bytes: the rest of the slot is its old
// content (EEPROM, FRAM) or erased (NOR flash, erased before it is programmed). For every cut
// restore_newest_checkpoint yields exactly checkpoint 1's state, and checkpoint 2's once complete.
// (The images' last bytes, the low bytes of iterations 1, 2 and 4, differ from each other and from
// 0xFF: a cut before the last byte never leaves a complete image.)
template <class Solver, typename Init>
void check_power_cut_at_every_byte(Init&& init) {
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  const std::size_t slot_size = n + 5;  // a slot may be longer than the image
  auto solver = std::make_unique<Solver>();
  auto probe = std::make_unique<Solver>();
  REQUIRE(init(*solver) == Status::ok);
  REQUIRE(init(*probe) == Status::ok);
  const Bytes slot[2] = {bytes(slot_size), bytes(slot_size)};
  auto to_write = [&] { return pbrl::checkpoint_slot_to_write<Solver>(slot[0].get(), slot[1].get(), slot_size); };

  // Both slots erased, the first write cut anywhere: a refusal, the probe untouched.
  REQUIRE(solver->run(1) == Status::ok);
  const Bytes first = image_of(*solver);
  REQUIRE(to_write() == 0);
  const Bytes probe_before = image_of(*probe);
  long wrong = 0, first_wrong = -1;
  for (std::size_t cut = 0; cut < n; ++cut) {
    std::memset(slot[0].get(), 0xFF, slot_size);
    std::memcpy(slot[0].get(), first.get(), cut);
    const Status st = pbrl::restore_newest_checkpoint(*probe, slot[0].get(), slot[1].get(), slot_size);
    if ((st != Status::checkpoint_corrupt || std::memcmp(image_of(*probe).get(), probe_before.get(), n) != 0) &&
        wrong++ == 0)
      first_wrong = long(cut);
  }
  CAPTURE(first_wrong);
  CHECK(wrong == 0);
  std::memcpy(slot[0].get(), first.get(), n);  // checkpoint 0, complete

  REQUIRE(solver->run(1) == Status::ok);
  const Bytes one = image_of(*solver);
  REQUIRE(to_write() == 1);
  std::memcpy(slot[1].get(), one.get(), n);  // checkpoint 1
  REQUIRE(solver->run(2) == Status::ok);
  const Bytes two = image_of(*solver);
  const int target = to_write();
  REQUIRE(target == 0);
  const Bytes old = bytes(slot_size);
  std::memcpy(old.get(), slot[target].get(), slot_size);

  for (bool erased : {false, true}) {
    CAPTURE(erased);
    long bad = 0, first_bad = -1;
    for (std::size_t cut = 0; cut <= n; ++cut) {
      if (erased) std::memset(slot[target].get(), 0xFF, slot_size);
      else std::memcpy(slot[target].get(), old.get(), slot_size);
      std::memcpy(slot[target].get(), two.get(), cut);
      const Status st = pbrl::restore_newest_checkpoint(*probe, slot[0].get(), slot[1].get(), slot_size);
      const unsigned char* expected = cut < n ? one.get() : two.get();
      if ((st != Status::ok || std::memcmp(image_of(*probe).get(), expected, n) != 0) && bad++ == 0)
        first_bad = long(cut);
    }
    CAPTURE(first_bad);
    CHECK(bad == 0);
  }

  // Both slots torn: a refusal, the probe untouched.
  std::memset(slot[0].get(), 0xFF, slot_size);
  std::memcpy(slot[0].get(), two.get(), n / 2);
  std::memcpy(slot[1].get(), old.get(), slot_size);
  std::memcpy(slot[1].get(), one.get(), n - 1);  // over checkpoint 0, cut before the last byte
  const Bytes restored_before = image_of(*probe);
  CHECK(pbrl::restore_newest_checkpoint(*probe, slot[0].get(), slot[1].get(), slot_size) == Status::checkpoint_corrupt);
  CHECK(std::memcmp(image_of(*probe).get(), restored_before.get(), n) == 0);
}
}  // namespace

TEST_CASE("power cut at every byte of a checkpoint write: A/B storage restores the last complete checkpoint") {
  const auto f = std::make_unique<Fixtures>();
  SUBCASE("Pbrl, sampled Bellman, sweeps") {
    const auto s = pbrl_settings(kPbrlCases[4]);
    check_power_cut_at_every_byte<PbrlSolver<pbrl::EvaluationMethod::sweeps>>(
        [&](auto& solver) { return init_pbrl(solver, f->mixture, s); });
  }
  SUBCASE("PbrlZeroSum, sampled, direct") {
    const auto s = zero_sum_settings(GradientMode::sampled);
    check_power_cut_at_every_byte<ZeroSumSolver<pbrl::EvaluationMethod::direct>>(
        [&](auto& solver) { return init_zero_sum(solver, f->incentive, s); });
  }
}

// ---- exact-only solver types (GradientSources::exact) ---------------------------------------------

TEST_CASE("an exact-only solver type steps like the default type, writes the same image and holds no sampled scratch") {
  auto f = std::make_unique<Fixtures>();
  using Direct = pbrl::EvaluationMethod;
  using ExactPbrl = pbrl::Pbrl<Mixture, Direct::direct, pbrl::GradientSources::exact>;
  using ExactZeroSum = pbrl::PbrlZeroSum<Incentive, Direct::direct, pbrl::GradientSources::exact>;
  static_assert(sizeof(ExactPbrl) + sizeof(pbrl::Trajectory<Real, pbrl::kMaxHorizon>) <= sizeof(PbrlSolver<Direct::direct>),
                "the exact-only Pbrl holds no trajectory buffer");
  static_assert(sizeof(ExactZeroSum) + sizeof(pbrl::GameTrajectory<Real, pbrl::kMaxHorizon>) <=
                    sizeof(ZeroSumSolver<Direct::direct>),
                "the exact-only PbrlZeroSum holds no trajectory buffer");
  static_assert(pbrl::checkpoint_size<ExactPbrl>() == pbrl::checkpoint_size<PbrlSolver<Direct::direct>>(), "image");

  for (const PbrlCase& c : kPbrlCases) {
    if (c.gradient != GradientMode::exact) continue;
    CAPTURE(c.name);
    auto both = std::make_unique<PbrlSolver<Direct::direct>>();
    auto exact = std::make_unique<ExactPbrl>();
    const auto s = pbrl_settings(c);
    REQUIRE(both->init(f->mixture, s, Mixture::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    REQUIRE(exact->init(f->mixture, s, Mixture::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
    for (int k = 0; k < 5; ++k) {
      pbrl::PbrlReport<Real> ra, rb;
      REQUIRE(both->step(&ra) == Status::ok);
      REQUIRE(exact->step(&rb) == Status::ok);
      CHECK(ra.objective == rb.objective);
    }
    CHECK(both->x() == exact->x());
    CHECK(both->y() == exact->y());
    constexpr std::size_t n = pbrl::checkpoint_size<ExactPbrl>();
    Bytes a = image_of(*both), b = image_of(*exact);
    CHECK(std::memcmp(a.get(), b.get(), n) == 0);
    // Sampled mode is refused, and the solver is untouched.
    auto before = bytes(sizeof(ExactPbrl));
    std::memcpy(before.get(), exact.get(), sizeof(ExactPbrl));
    auto sampled = s;
    sampled.gradient = GradientMode::sampled;
    sampled.oracle = OracleKind::policy_gradient;
    CHECK(exact->init(f->mixture, sampled, Mixture::Params::Zero(), Mat<S, A>::Zero()) == Status::bad_setting);
    CHECK(std::memcmp(before.get(), exact.get(), sizeof(ExactPbrl)) == 0);
    CHECK(both->init(f->mixture, sampled, Mixture::Params::Zero(), Mat<S, A>::Zero()) == Status::ok);
  }

  auto both = std::make_unique<ZeroSumSolver<Direct::direct>>();
  auto exact = std::make_unique<ExactZeroSum>();
  const auto s = zero_sum_settings(GradientMode::exact);
  REQUIRE(both->init(f->incentive, s, Incentive::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) == Status::ok);
  REQUIRE(exact->init(f->incentive, s, Incentive::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) ==
          Status::ok);
  for (int k = 0; k < 5; ++k) {
    REQUIRE(both->step() == Status::ok);
    REQUIRE(exact->step() == Status::ok);
  }
  CHECK(both->x() == exact->x());
  CHECK(both->y1() == exact->y1());
  CHECK(both->y2() == exact->y2());
  constexpr std::size_t n = pbrl::checkpoint_size<ExactZeroSum>();
  Bytes a = image_of(*both), b = image_of(*exact);
  CHECK(std::memcmp(a.get(), b.get(), n) == 0);
  // An image of one type restores into the other, which then goes on alike.
  auto restored = std::make_unique<ExactZeroSum>();
  REQUIRE(restored->init(f->incentive, s, Incentive::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) ==
          Status::ok);
  REQUIRE(pbrl::restore_checkpoint(*restored, a.get(), n) == Status::ok);
  REQUIRE(both->step() == Status::ok);
  REQUIRE(restored->step() == Status::ok);
  CHECK(both->x() == restored->x());
  auto sampled = zero_sum_settings(GradientMode::sampled);
  CHECK(exact->init(f->incentive, sampled, Incentive::Params::Zero(), Mat<S, A1>::Zero(), Mat<S, A2>::Zero()) ==
        Status::bad_setting);
}

namespace {
// The solver object's bytes, for "refused: nothing changed, not even scratch".
template <class Solver>
Bytes object_bytes(const Solver& solver) {
  Bytes b = bytes(sizeof(Solver));
  std::memcpy(b.get(), static_cast<const void*>(&solver), sizeof(Solver));
  return b;
}
template <class Solver>
bool same_object(const Solver& solver, const Bytes& b) {
  return std::memcmp(b.get(), static_cast<const void*>(&solver), sizeof(Solver)) == 0;
}
}  // namespace

TEST_CASE("restore refuses an intact image of a state no step could leave, solver byte-identical") {
  const auto f = std::make_unique<Fixtures>();
  using Solver = PbrlSolver<pbrl::EvaluationMethod::direct>;
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  // Payload offsets after the schedule: x (K), y, log pi-hat, pi-hat (S x A each).
  constexpr std::size_t x_at = kFirstParameterAt, y_at = x_at + K * sizeof(Real),
                        pi_hat_at = y_at + 2 * S * A * sizeof(Real);
  auto run = [&](const pbrl::PbrlSettings<Real>& s, const Mat<S, A>& y0) {
    auto source = std::make_unique<Solver>();
    auto live = std::make_unique<Solver>();
    REQUIRE(source->init(f->mixture, s, Mixture::Params::Zero(), y0) == Status::ok);
    REQUIRE(source->run(3) == Status::ok);
    const Bytes image = image_of(*source);
    REQUIRE(live->init(f->mixture, s, Mixture::Params::Zero(), y0) == Status::ok);
    REQUIRE(live->run(5) == Status::ok);
    const Bytes before = object_bytes(*live);
    // Patches image with `patch`, re-seals the CRC, restores: the status; live must be unchanged.
    auto restore = [&](auto&& patch) {
      const Bytes patched = bytes(n);
      std::memcpy(patched.get(), image.get(), n);
      patch(patched.get());
      reseal(patched.get(), n);
      const Status st = pbrl::restore_checkpoint(*live, patched.get(), n);
      CHECK(same_object(*live, before));
      return st;
    };
    // The mixture problem's box is [-2, 2].
    CHECK(restore([](unsigned char* p) { put_scalar(p + x_at, Real(2.5)); }) == Status::out_of_bounds);
    CHECK(restore([](unsigned char* p) { put_scalar(p + x_at + sizeof(Real), Real(-2.01)); }) == Status::out_of_bounds);
    // pi-hat off the simplex: a row summing to 1.5, a negative entry.
    CHECK(restore([](unsigned char* p) { put_scalar(p + pi_hat_at, Real(1)); }) == Status::bad_policy);
    CHECK(restore([](unsigned char* p) {
            put_scalar(p + pi_hat_at, Real(-0.25));
            put_scalar(p + pi_hat_at + sizeof(Real), Real(1.25));
          }) == Status::bad_policy);
    // The iteration count must be the sequence number.
    CHECK(restore([](unsigned char* p) { put_count(p + kIterationAt, 4); }) == Status::checkpoint_corrupt);
    // More growths of lambda than steps.
    CHECK(restore([](unsigned char* p) { put_count(p + kGrowthsAt, 4); }) == Status::checkpoint_corrupt);
    // The verdict's counts: more stationary steps than steps, a certified run longer than the
    // stationary one (or any outside exact tolerance mode), a negative count.
    CHECK(restore([](unsigned char* p) { put_count(p + kStationaryAt, 4); }) == Status::checkpoint_corrupt);
    CHECK(restore([](unsigned char* p) { put_count(p + kConvergedAt, 1); }) == Status::checkpoint_corrupt);
    CHECK(restore([](unsigned char* p) { put_count(p + kStationaryAt, ~std::uint64_t(0)); }) == Status::checkpoint_corrupt);
    // A lambda the schedule cannot reach: fixed mode keeps lambda_start, tolerance mode stays
    // in [lambda_start, lambda_max].
    CHECK(restore([&](unsigned char* p) { put_scalar(p + kScheduleAt, s.lambda_max * Real(2)); }) ==
          Status::checkpoint_corrupt);
    CHECK(restore([&](unsigned char* p) { put_scalar(p + kScheduleAt, s.lambda_start / Real(2)); }) ==
          Status::checkpoint_corrupt);
    // The continuation's target outside [epsilon, max(epsilon, continuation_start)] (fixed mode: 0).
    const std::size_t target_at = kNetGrowthsAt + 8;
    const Real first_target = std::max(s.gap_tolerance, s.continuation_start);
    CHECK(restore([&](unsigned char* p) { put_scalar(p + target_at, first_target * Real(2)); }) ==
          Status::checkpoint_corrupt);
    if (s.gap_tolerance > Real(0))
      CHECK(restore([&](unsigned char* p) { put_scalar(p + target_at, s.gap_tolerance / Real(2)); }) ==
            Status::checkpoint_corrupt);
    // y outside its set: a direct row summing to 1 + y(0,1) - 1e-3, a logit beyond the bound 50.
    const bool direct = s.policy.parameterization == Parameterization::direct;
    CHECK(restore([&](unsigned char* p) { put_scalar(p + y_at, direct ? Real(0.999) : Real(60)); }) ==
          Status::bad_policy);
    if (direct)  // below the floor, the row still summing to 1
      CHECK(restore([&](unsigned char* p) {
              put_scalar(p + y_at, s.policy.floor / Real(2));
              put_scalar(p + y_at + sizeof(Real), Real(1) - s.policy.floor / Real(2));
            }) == Status::bad_policy);
    check_unpatched_restores(*live, image);
  };
  SUBCASE("softmax y, fixed mode") { run(pbrl_settings(kPbrlCases[0]), Mat<S, A>::Zero()); }
  SUBCASE("direct y, tolerance mode") {
    auto s = pbrl_settings(kPbrlCases[1]);
    s.policy.parameterization = Parameterization::direct;
    s.policy.floor = Real(1e-2);
    s.gap_tolerance = Real(1e-3);
    s.lambda_stall = Real(0);
    s.lambda_patience = 1;
    s.lambda_max = Real(8);
    run(s, Mat<S, A>::Constant(Real(1) / Real(A)));
  }
}

TEST_CASE("PbrlZeroSum restore refuses x outside its box and policies off their sets, solver byte-identical") {
  const auto f = std::make_unique<Fixtures>();
  using Solver = ZeroSumSolver<pbrl::EvaluationMethod::direct>;
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  // Payload after the schedule: x (S*A1*A2), y1, y2, log pi-hat1, pi-hat1, log pi-hat2, pi-hat2.
  constexpr std::size_t x_at = kFirstParameterAt, y2_at = x_at + (S * A1 * A2 + S * A1) * sizeof(Real),
                        pi2_hat_at = y2_at + (S * A2 + 2 * S * A1 + S * A2) * sizeof(Real);
  const auto s = zero_sum_settings(GradientMode::exact);  // softmax, logit bound 10
  auto source = std::make_unique<Solver>();
  auto live = std::make_unique<Solver>();
  REQUIRE(init_zero_sum(*source, f->incentive, s) == Status::ok);
  REQUIRE(source->run(3) == Status::ok);
  const Bytes image = image_of(*source);
  REQUIRE(init_zero_sum(*live, f->incentive, s) == Status::ok);
  REQUIRE(live->run(5) == Status::ok);
  const Bytes before = object_bytes(*live);
  auto restore = [&](std::size_t at, Real v) {
    const Bytes patched = bytes(n);
    std::memcpy(patched.get(), image.get(), n);
    put_scalar(patched.get() + at, v);
    reseal(patched.get(), n);
    const Status st = pbrl::restore_checkpoint(*live, patched.get(), n);
    CHECK(same_object(*live, before));
    return st;
  };
  CHECK(restore(x_at + 5 * sizeof(Real), Real(5.5)) == Status::out_of_bounds);  // box [-5, 5]
  CHECK(restore(y2_at, Real(-11)) == Status::bad_policy);
  CHECK(restore(pi2_hat_at + sizeof(Real), Real(0.75)) == Status::bad_policy);
  check_unpatched_restores(*live, image);
}

TEST_CASE("a restored growth count as large as the iteration count: the sampled oracle's step count does not overflow (regression)") {
  // Sampled tolerance mode runs inner_steps * (1 + growths) oracle steps, at most inner_steps_max.
  // The product overflowed (undefined behaviour; in practice a wrapped, small count) for a growth
  // count near 2^62, which an intact image could hold: restore accepts growths up to the
  // iteration count, and iteration counts up to 2^63 - 2.
  const auto f = std::make_unique<Fixtures>();
  using Solver = PbrlSolver<pbrl::EvaluationMethod::direct>;
  constexpr std::size_t n = pbrl::checkpoint_size<Solver>();
  auto s = pbrl_settings(kPbrlCases[3]);  // value, sampled
  s.gap_tolerance = Real(1e-3);
  s.inner_steps = 2;
  s.inner_steps_max = 5;
  auto solver = std::make_unique<Solver>();
  REQUIRE(init_pbrl(*solver, f->mixture, s) == Status::ok);
  REQUIRE(solver->run(1) == Status::ok);
  const Bytes patched = image_of(*solver);
  const std::uint64_t huge = std::uint64_t(1) << 62;
  put_count(patched.get() + kIterationAt, huge);
  put_count(patched.get() + kGrowthsAt, huge);
  put_count(patched.get() + kNetGrowthsAt, huge);  // none taken back
  put_sequence(patched.get(), n, huge);
  reseal(patched.get(), n);
  REQUIRE(pbrl::restore_checkpoint(*solver, patched.get(), n) == Status::ok);
  CHECK(solver->schedule().growths() == std::int64_t(huge));
  CHECK(solver->schedule().net_growths() == std::int64_t(huge));
  pbrl::PbrlReport<Real> report;
  REQUIRE(solver->step(&report) == Status::ok);
  CHECK(report.inner_steps == s.inner_steps_max);
  CHECK(solver->iteration() == std::int64_t(huge) + 1);
}

}  // namespace test_checkpoint
