// Checkpoints know their model (checkpoint.hpp, model_digest.hpp): an image names its problem's
// kind and a digest of the model, and restore refuses another kind, another model and other
// settings, each with its own status. Images that carry a TransitionEstimate: the estimate's
// state restores with the solver's, the prior and the estimate's settings are checked, a refused
// image changes neither, and a power cut at any byte loses at most the observations since the
// previous checkpoint.
#include "estimate_support.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/estimate/transition_estimate.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/reward_shaping.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "pbrl/solver/pbrl.hpp"

#include <cstring>
#include <memory>
#include <vector>

namespace test_checkpoint_model {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
using Bytes = std::vector<unsigned char>;

constexpr int S = 4, AL = 2, AF = 2, Rows = S * AL * AF;
using Game = pbrl::Stackelberg<Real, S, AL, AF>;
using Solver = pbrl::Pbrl<Game>;
using Estimate = pbrl::TransitionEstimate<Real, S, Rows>;

using GameArrays = estimate_support::StackelbergArrays<S, AL, AF>;

pbrl::PbrlSettings<Real> settings() {
  pbrl::PbrlSettings<Real> s;
  s.gradient = pbrl::GradientMode::exact;
  s.gap_tolerance = Real(0.01);
  return s;
}

// A solver of type SolverT on `problem`, set up with settings() from zero.
template <class SolverT, class Problem>
std::unique_ptr<SolverT> initialized_solver(const Problem& problem) {
  auto solver = std::make_unique<SolverT>();
  REQUIRE(solver->init(problem, settings(), SolverT::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  return solver;
}

template <class Solver>
Bytes image(const Solver& solver) {
  Bytes b(pbrl::checkpoint_size<Solver>());
  REQUIRE(pbrl::save_checkpoint(solver, b.data(), b.size()) == Status::ok);
  return b;
}
Bytes image(const Solver& solver, const Estimate& estimate) {
  Bytes b(pbrl::checkpoint_size<Solver, Estimate>());
  REQUIRE(pbrl::save_checkpoint(solver, estimate, b.data(), b.size()) == Status::ok);
  return b;
}
// The payload of a plain image: what the solver holds, without the header's model digest.
Bytes state_of(const Solver& solver) {
  const Bytes b = image(solver);
  return Bytes(b.begin() + pbrl::kCheckpointHeaderSize, b.end());
}

// One transition of the true model out of a uniformly drawn row.
void observe_one(Estimate& est, pbrl::Rng& rng, const Real* truth) {
  const int r = int(rng.below(Rows));
  const Real u = rng.uniform<Real>();
  Real c(0);
  int next = S - 1;
  for (int i = 0; i < S; ++i) {
    c += truth[r * S + i];
    if (u < c) {
      next = i;
      break;
    }
  }
  REQUIRE(est.observe_row(r, next) == Status::ok);
}

}  // namespace

TEST_CASE("checkpoint: an image of another problem kind of the same sizes is checkpoint_other_problem") {
  // A reward-shaping Pbrl of 4 states and 2 actions and a Stackelberg Pbrl of 4 states and
  // 2 x 2 actions have the same type tag and payload size.
  using Shaping = pbrl::RewardShaping<Real, S, AF>;
  using ShapingSolver = pbrl::Pbrl<Shaping>;
  static_assert(pbrl::checkpoint_size<ShapingSolver>() == pbrl::checkpoint_size<Solver>(), "same sizes");
  static_assert(ShapingSolver::problem_kind() == pbrl::ProblemKind::reward_shaping, "kind");
  static_assert(Solver::problem_kind() == pbrl::ProblemKind::stackelberg, "kind");
  auto arrays = std::make_unique<GameArrays>(3u);
  Shaping::Data sd;
  sd.reward = arrays->leader_reward;  // S*AF of its entries
  sd.transition = arrays->transition;  // S*AF rows of its S*AL*AF
  sd.initial = arrays->initial;
  sd.lower.tau = Real(0.1);
  Shaping shaping;
  REQUIRE(shaping.init(sd) == Status::ok);
  auto a = initialized_solver<ShapingSolver>(shaping);
  REQUIRE(a->run(2) == Status::ok);
  const Bytes shaped = image(*a);

  Game game;
  REQUIRE(game.init(arrays->data()) == Status::ok);
  auto b = initialized_solver<Solver>(game);
  REQUIRE(b->run(1) == Status::ok);
  const Bytes before = image(*b);
  CHECK(pbrl::restore_checkpoint(*b, shaped.data(), shaped.size()) == Status::checkpoint_other_problem);
  CHECK(image(*b) == before);
  // A/B storage does not take it for one of its own.
  CHECK(pbrl::checkpoint_slot_to_write<Solver>(shaped.data(), before.data(), before.size()) == 0);
}

TEST_CASE("checkpoint: an image taken on another model is checkpoint_other_model, field by field") {
  auto arrays = std::make_unique<GameArrays>(5u);
  Game game;
  REQUIRE(game.init(arrays->data()) == Status::ok);
  auto saved = initialized_solver<Solver>(game);
  REQUIRE(saved->run(3) == Status::ok);
  const Bytes img = image(*saved);

  // The same numbers in other arrays: the same model.
  auto copy = std::make_unique<GameArrays>(5u);
  Game same;
  REQUIRE(same.init(copy->data()) == Status::ok);
  auto restored = initialized_solver<Solver>(same);
  CHECK(pbrl::restore_checkpoint(*restored, img.data(), img.size()) == Status::ok);
  CHECK(state_of(*restored) == state_of(*saved));

  // Each field changed in turn: refused, the solver untouched.
  int refused = 0;
  for (int field = 0; field < 8; ++field) {
    CAPTURE(field);
    auto other = std::make_unique<GameArrays>(5u);
    Game::Data d = other->data();
    switch (field) {
      case 0: other->leader_reward[3] += Real(0.5); break;
      case 1: other->follower_reward[0] += Real(0.5); break;
      case 2: std::swap(other->transition[0], other->transition[1]); break;
      case 3: std::swap(other->initial[0], other->initial[1]); break;
      case 4: d.discount = Real(0.8); break;
      case 5: d.follower.tau = Real(0.2); break;
      case 6: d.leader.tau = Real(0.05); break;
      case 7: d.logit_bound = Real(6); break;
    }
    Game changed;
    REQUIRE(changed.init(d) == Status::ok);
    auto solver = initialized_solver<Solver>(changed);
    REQUIRE(solver->run(1) == Status::ok);
    const Bytes before = image(*solver);
    const Status st = pbrl::restore_checkpoint(*solver, img.data(), img.size());
    CHECK(st == Status::checkpoint_other_model);
    refused += st == Status::checkpoint_other_model;
    CHECK(image(*solver) == before);
  }
  CHECK(refused == 8);
}

TEST_CASE("checkpoint with an estimate: both restore, and the solve goes on as the saved one after a refresh") {
  auto truth = std::make_unique<GameArrays>(7u);   // the plant
  auto prior = std::make_unique<GameArrays>(8u);   // what the device starts from
  pbrl::EstimateSettings<Real> es;
  es.discount = Real(0.99);
  es.support = pbrl::EstimateSupport::dense;
  const Real strength = Real(5);

  // A device: the problem on a RAM model the estimate writes.
  struct Device {
    Game game;
    Solver solver;
    Estimate estimate;
    Real model[Rows * S];
  };
  auto init_device = [&](Device& d) {
    REQUIRE(d.estimate.init(prior->transition, strength, es) == Status::ok);
    std::memcpy(d.model, prior->transition, sizeof(d.model));
    REQUIRE(d.game.init(prior->data(d.model)) == Status::ok);
    REQUIRE(d.solver.init(d.game, settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  };
  auto refresh = [&](Device& d, Real* buffer) {
    REQUIRE(d.estimate.write_mean(buffer) == Status::ok);
    REQUIRE(d.solver.swap_model(d.game, prior->data(buffer)) == Status::ok);
  };
  auto a = std::make_unique<Device>();
  init_device(*a);
  std::vector<Real> spare(Rows * S);
  pbrl::Rng world(11u);
  for (int k = 0; k < 200; ++k) observe_one(a->estimate, world, truth->transition);
  refresh(*a, spare.data());
  REQUIRE(a->solver.run(5) == Status::ok);
  for (int k = 0; k < 50; ++k) observe_one(a->estimate, world, truth->transition);
  const Bytes img = image(a->solver, a->estimate);
  CHECK(img.size() == pbrl::checkpoint_size<Solver>() + pbrl::detail::CheckpointField<Estimate::State>::size);
  CHECK(img[40] == pbrl::CheckpointAccess::checkpoint_code<Estimate>());  // the header's estimate byte

  auto b = std::make_unique<Device>();
  init_device(*b);
  REQUIRE(pbrl::restore_checkpoint(b->solver, b->estimate, img.data(), img.size()) == Status::ok);
  CHECK(std::memcmp(&b->estimate.state(), &a->estimate.state(), sizeof(Estimate::State)) == 0);
  CHECK(b->solver.iteration() == a->solver.iteration());
  CHECK(b->solver.model_generation() == a->solver.model_generation());
  CHECK(b->solver.x() == a->solver.x());
  // Both refresh (the restored device must: it runs on its init() model) and go on alike.
  std::vector<Real> spare_b(Rows * S);
  refresh(*a, a->model);
  refresh(*b, spare_b.data());
  REQUIRE(a->solver.run(5) == Status::ok);
  REQUIRE(b->solver.run(5) == Status::ok);
  CHECK(b->solver.x() == a->solver.x());
  CHECK(b->solver.y() == a->solver.y());
  CHECK(b->solver.model_generation() == a->solver.model_generation());

  SUBCASE("refusals: another prior, strength, estimate settings, count type, or a plain restore; nothing changes") {
    auto c = std::make_unique<Device>();
    init_device(*c);
    REQUIRE(c->solver.run(1) == Status::ok);
    observe_one(c->estimate, world, truth->transition);
    const Bytes solver_before = image(c->solver);
    const Estimate::State* state = &c->estimate.state();
    const Bytes estimate_before(reinterpret_cast<const unsigned char*>(state),
                                reinterpret_cast<const unsigned char*>(state) + sizeof(Estimate::State));
    auto unchanged = [&] {
      return image(c->solver) == solver_before &&
             std::memcmp(&c->estimate.state(), estimate_before.data(), sizeof(Estimate::State)) == 0;
    };
    // Another prior (same strength and settings).
    auto other_prior = std::make_unique<Estimate>();
    REQUIRE(other_prior->init(truth->transition, strength, es) == Status::ok);
    CHECK(pbrl::restore_checkpoint(c->solver, *other_prior, img.data(), img.size()) == Status::checkpoint_other_model);
    // Another strength, another discount.
    auto weaker = std::make_unique<Estimate>();
    REQUIRE(weaker->init(prior->transition, strength / 2, es) == Status::ok);
    CHECK(pbrl::restore_checkpoint(c->solver, *weaker, img.data(), img.size()) == Status::checkpoint_other_settings);
    auto es2 = es;
    es2.discount = Real(0.98);
    auto forgetful = std::make_unique<Estimate>();
    REQUIRE(forgetful->init(prior->transition, strength, es2) == Status::ok);
    CHECK(pbrl::restore_checkpoint(c->solver, *forgetful, img.data(), img.size()) ==
          Status::checkpoint_other_settings);
    CHECK(unchanged());
    // Integer counts of the same width: another count type.
    using Whole = pbrl::TransitionEstimate<Real, S, Rows, std::uint32_t>;
    static_assert(pbrl::checkpoint_size<Solver, Whole>() == pbrl::checkpoint_size<Solver, Estimate>(), "same size");
    auto whole = std::make_unique<Whole>();
    auto es3 = es;
    es3.discount = Real(1);
    REQUIRE(whole->init(prior->transition, strength, es3) == Status::ok);
    CHECK(pbrl::restore_checkpoint(c->solver, *whole, img.data(), img.size()) == Status::checkpoint_mismatch);
    // A plain restore of an image with an estimate, and the other way.
    CHECK(pbrl::restore_checkpoint(c->solver, img.data(), img.size()) == Status::checkpoint_mismatch);
    const Bytes plain = image(a->solver);
    Bytes padded(img.size(), 0xFF);
    std::memcpy(padded.data(), plain.data(), plain.size());
    CHECK(pbrl::restore_checkpoint(c->solver, c->estimate, padded.data(), padded.size()) == Status::checkpoint_mismatch);
    CHECK(unchanged());

    // Counts the estimate could not have reached, resealed so that only that check can see them:
    // bad_setting; a NaN count: not_finite.
    const std::size_t counts_at = pbrl::kCheckpointHeaderSize + (pbrl::checkpoint_size<Solver>() -
                                                                 pbrl::kCheckpointHeaderSize - pbrl::kCheckpointCommitSize);
    auto reseal = [](Bytes& b) {
      const std::uint32_t crc = pbrl::crc32(b.data() + pbrl::kCheckpointHeaderSize, b.size() - pbrl::kCheckpointHeaderSize,
                                            pbrl::crc32(b.data(), pbrl::kCheckpointHeaderSize - 4));
      pbrl::detail::put_le(b.data() + pbrl::kCheckpointHeaderSize - 4, crc, 4);
    };
    const Real counts[2] = {Real(-1), std::numeric_limits<Real>::quiet_NaN()};
    const Status expected[2] = {Status::bad_setting, Status::not_finite};
    for (int i = 0; i < 2; ++i) {
      Bytes forged = img;
      unsigned char* p = forged.data() + counts_at;
      pbrl::detail::CheckpointField<Real>::write(p, counts[i]);
      reseal(forged);
      CHECK(pbrl::restore_checkpoint(c->solver, c->estimate, forged.data(), forged.size()) == expected[i]);
    }
    // An observation count that does not add up to the clock.
    Bytes forged = img;
    const std::size_t observations_at = counts_at + std::size_t(Rows * S + 2 * Rows) * sizeof(float);  // after counts, totals, units
    forged[observations_at] ^= 1u;
    reseal(forged);
    CHECK(pbrl::restore_checkpoint(c->solver, c->estimate, forged.data(), forged.size()) == Status::bad_setting);
    CHECK(unchanged());
  }

  SUBCASE("a power cut at any byte of an A/B write loses at most the observations since the previous image") {
    const std::size_t n = pbrl::checkpoint_size<Solver, Estimate>();
    Bytes slot0 = img, slot1(n, 0xFF);
    const std::int64_t saved_observations = a->estimate.observations();
    for (int k = 0; k < 30; ++k) observe_one(a->estimate, world, truth->transition);
    REQUIRE(a->solver.run(1) == Status::ok);
    REQUIRE(pbrl::checkpoint_slot_to_write<Solver, Estimate>(slot0.data(), slot1.data(), n) == 1);
    const Bytes next = image(a->solver, a->estimate);
    long wrong = 0;
    for (std::size_t cut = 0; cut <= n; ++cut) {
      Bytes torn = slot1;
      std::memcpy(torn.data(), next.data(), cut);
      auto d = std::make_unique<Device>();
      init_device(*d);
      const Status st = pbrl::restore_newest_checkpoint(d->solver, d->estimate, slot0.data(), torn.data(), n);
      const std::int64_t got = d->estimate.observations();
      const bool ok = st == Status::ok &&
                      (cut == n ? got == a->estimate.observations() : got == saved_observations);
      wrong += !ok;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("A/B with an estimate: saves between which the device only observed are ordered by the observations") {
  // The sequence number is the solver's iteration count; saves with no step between them tie on
  // it, and the newest must still win (a fuzzing find: three saves of 10 observations each went to
  // slots 0, 1, 1, and the restore brought back 10 of 30).
  auto truth = std::make_unique<GameArrays>(21u);
  auto prior = std::make_unique<GameArrays>(22u);
  Game game;
  REQUIRE(game.init(prior->data()) == Status::ok);
  auto solver = initialized_solver<Solver>(game);
  auto est = std::make_unique<Estimate>();
  REQUIRE(est->init(prior->transition, Real(2)) == Status::ok);
  const std::size_t n = pbrl::checkpoint_size<Solver, Estimate>();
  Bytes slots[2] = {Bytes(n, 0xFF), Bytes(n, 0xFF)};
  pbrl::Rng world(5u);
  for (int save = 0; save < 3; ++save) {
    for (int k = 0; k < 10; ++k) observe_one(*est, world, truth->transition);
    const int slot = pbrl::checkpoint_slot_to_write<Solver, Estimate>(slots[0].data(), slots[1].data(), n);
    REQUIRE(pbrl::save_checkpoint(*solver, *est, slots[slot].data(), n) == Status::ok);
  }
  auto fresh = initialized_solver<Solver>(game);
  auto restored = std::make_unique<Estimate>();
  REQUIRE(restored->init(prior->transition, Real(2)) == Status::ok);
  REQUIRE(pbrl::restore_newest_checkpoint(*fresh, *restored, slots[0].data(), slots[1].data(), n) == Status::ok);
  CHECK(restored->observations() == 30);
}

}  // namespace test_checkpoint_model
