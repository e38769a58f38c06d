// EstimatedModel (estimate/estimated_model.hpp): a problem on a learned transition model, refreshed
// in slices into the array the solver does not read and swapped in between steps. A sliced
// refresh writes the bits of a whole one; a step in progress never reads a half-written model;
// the answer on the estimate tends to the answer on the true model as observations grow; images
// with the estimate restore and go on after a refresh.
#include "estimate_support.hpp"

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/estimate/estimated_model.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace test_estimated_model {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {
constexpr int S = 4, AL = 2, AF = 3, Rows = S * AL * AF;
using Game = pbrl::Stackelberg<Real, S, AL, AF>;
using Solver = pbrl::Pbrl<Game>;
using Model = pbrl::EstimatedModel<Game>;
static_assert(Model::kRows == Rows && Model::kActions1 == AL && Model::kActions2 == AF, "joint rows");

// The suite's games: gamma 0.8.
struct GameArrays : estimate_support::StackelbergArrays<S, AL, AF> {
  explicit GameArrays(std::uint32_t seed) : StackelbergArrays(seed, Real(0.8)) {}
};

pbrl::PbrlSettings<Real> settings() {
  pbrl::PbrlSettings<Real> s;
  s.gradient = pbrl::GradientMode::exact;
  s.gap_tolerance = Real(0.01);
  s.stationarity_tolerance = Real(0.01);
  return s;
}

// s' drawn from a transition row.
int draw(pbrl::Rng& rng, const Real* row) {
  const Real u = rng.uniform<Real>();
  Real c(0);
  for (int i = 0; i < S - 1; ++i) {
    c += row[i];
    if (u < c) return i;
  }
  return S - 1;
}

// n observations of the true model, rows drawn uniformly, through (s, a_l, a_f).
void observe(Model& m, pbrl::Rng& rng, const Real* truth, long n) {
  for (long k = 0; k < n; ++k) {
    const int s = int(rng.below(S)), al = int(rng.below(AL)), af = int(rng.below(AF));
    const int row = (s * AL + al) * AF + af;
    REQUIRE(m.observe(s, al, af, draw(rng, truth + row * S)) == Status::ok);
  }
}

struct Device {
  Model model;
  Solver solver;
};

}  // namespace

TEST_CASE("EstimatedModel: init validates the prior, the strength and the settings; refusals change nothing") {
  auto prior = std::make_unique<GameArrays>(1u);
  auto m = std::make_unique<Model>();
  Game::Data d = prior->data();
  d.transition = nullptr;
  CHECK(m->init(d, Real(5)) == Status::null_pointer);
  std::vector<Real> bad(prior->transition, prior->transition + Rows * S);
  bad[0] += Real(1);
  CHECK(m->init(prior->data(bad.data()), Real(5)) == Status::bad_transition);
  d = prior->data();
  d.discount = Real(1);
  CHECK(m->init(d, Real(5)) == Status::bad_discount);
  CHECK(m->init(prior->data(), Real(0)) == Status::bad_setting);
  pbrl::EstimateSettings<Real> es;
  es.discount = Real(0);
  CHECK(m->init(prior->data(), Real(5), es) == Status::bad_setting);
  CHECK_FALSE(m->initialized());
  auto solver = std::make_unique<Solver>();
  bool committed = true;
  CHECK(m->refresh_slice(*solver, 4, committed) == Status::not_initialized);
  CHECK_FALSE(committed);
  REQUIRE(m->init(prior->data(), Real(5)) == Status::ok);
  CHECK(std::memcmp(m->model(), prior->transition, sizeof(Real) * Rows * S) == 0);
  CHECK(m->model() != prior->transition);  // a RAM copy; the prior stays the estimate's
  CHECK(m->observe(S, 0, 0, 0) == Status::out_of_bounds);
  CHECK(m->observe(0, AL, 0, 0) == Status::out_of_bounds);
  CHECK(m->observe(0, 0, AF, 0) == Status::out_of_bounds);
  CHECK(m->estimate().observations() == 0);
  CHECK(m->refresh_slice(*solver, 4, committed) == Status::not_initialized);  // the solver
  REQUIRE(solver->init(m->problem(), settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  CHECK(m->refresh_slice(*solver, 0, committed) == Status::bad_setting);
  CHECK_FALSE(m->refresh_in_progress());
  // A solver of another problem could not take the commit: refused before a refresh starts, the
  // estimate's refresh stamps as they were.
  Game other;
  REQUIRE(other.init(prior->data()) == Status::ok);
  auto stranger = std::make_unique<Solver>();
  REQUIRE(stranger->init(other, settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  pbrl::Rng rng(3u);
  observe(*m, rng, prior->transition, 40);
  REQUIRE(m->refresh_due());
  const auto stamps = m->estimate().state().refreshed_at;
  CHECK(m->refresh_slice(*stranger, Rows, committed) == Status::bad_setting);
  CHECK(m->refresh(*stranger) == Status::bad_setting);
  CHECK_FALSE(m->refresh_in_progress());
  CHECK(m->refresh_due());
  CHECK(m->estimate().state().refreshed_at == stamps);
  CHECK(stranger->model_generation() == 0);
}

TEST_CASE("EstimatedModel: a refresh in slices writes the bits of a whole one; steps meanwhile read the old model") {
  auto truth = std::make_unique<GameArrays>(2u);
  auto prior = std::make_unique<GameArrays>(3u);
  pbrl::EstimateSettings<Real> es;
  es.support = pbrl::EstimateSupport::dense;
  auto a = std::make_unique<Device>(), b = std::make_unique<Device>(), still = std::make_unique<Device>();
  for (Device* d : {a.get(), b.get(), still.get()}) {
    REQUIRE(d->model.init(prior->data(), Real(4), es) == Status::ok);
    REQUIRE(d->solver.init(d->model.problem(), settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  }
  pbrl::Rng ra(9u), rb(9u), rc(9u);
  observe(a->model, ra, truth->transition, 500);
  observe(b->model, rb, truth->transition, 500);
  observe(still->model, rc, truth->transition, 500);
  REQUIRE(a->model.refresh_due());

  // a: one whole refresh. b: slices of 5 rows with a step after each; still: the same steps, no refresh.
  REQUIRE(a->model.refresh(a->solver) == Status::ok);
  CHECK_FALSE(a->model.refresh_due());
  int slices = 0;
  bool committed = false;
  while (!committed) {
    REQUIRE(b->model.refresh_slice(b->solver, 5, committed) == Status::ok);
    ++slices;
    if (committed) break;
    CHECK(b->model.refresh_in_progress());
    REQUIRE(b->solver.step() == Status::ok);
    REQUIRE(still->solver.step() == Status::ok);
    CHECK(b->solver.x() == still->solver.x());  // the old model, whatever the slices wrote
    CHECK(b->solver.model_generation() == 0);
  }
  CHECK(slices == (Rows + 4) / 5 + 1);  // the rows, then the commit alone
  CHECK(std::memcmp(a->model.model(), b->model.model(), sizeof(Real) * Rows * S) == 0);
  CHECK(a->solver.model_generation() == 1);
  CHECK(b->solver.model_generation() == 1);
  // Each written row is a distribution the problem accepts (swap_model validated it too).
  CHECK(pbrl::validate_transition<Real, S, AL * AF>(b->model.model()) == Status::ok);
  CHECK(std::memcmp(b->model.model(), prior->transition, sizeof(Real) * Rows * S) != 0);
}

TEST_CASE("EstimatedModel: as observations of a fixed true model grow, the answer tends to the true model's") {
  // The leader's value against the follower's exact best response ON THE TRUE MODEL, at the x a
  // solve from x = 0 reaches on the device's estimate, against the x the same solve reaches on the
  // true model. (The bilevel problem is not convex: a device that goes on warm from its previous
  // x may settle at another stationary point, docs/adaptation.md; from one start, the answer is
  // continuous in the model.)
  auto truth = std::make_unique<GameArrays>(4u);
  auto prior = std::make_unique<GameArrays>(5u);
  Game true_game;
  REQUIRE(true_game.init(truth->data()) == Status::ok);
  auto ws = std::make_unique<Game::BilevelValueWorkspace>();
  pbrl::BestResponseValue<Real> v;
  pbrl::SolveResult result;
  auto solve_on = [&](const Game& game) {
    auto solver = std::make_unique<Solver>();
    REQUIRE(solver->init(game, settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
    REQUIRE(solver->solve(20000, result) == Status::ok);
    REQUIRE(true_game.value_at_best_response(solver->x(), *ws, v) == Status::ok);
    return v.value;
  };
  const Real best = solve_on(true_game);

  // The device knows the rewards; its transitions start from another model's.
  auto d = std::make_unique<Device>();
  REQUIRE(d->model.init(truth->data(prior->transition), Real(2)) == Status::ok);
  REQUIRE(d->solver.init(d->model.problem(), settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  const Real on_prior = std::abs(best - solve_on(d->model.problem()));
  MESSAGE("gap to the true-model answer on the prior alone: ", on_prior);
  pbrl::Rng rng(6u);
  long observed = 0;
  std::vector<Real> gaps, errors;
  for (const long target : {100L, 1000L, 10000L, 100000L}) {
    observe(d->model, rng, truth->transition, target - observed);
    observed = target;
    REQUIRE(d->model.refresh(d->solver) == Status::ok);
    gaps.push_back(std::abs(best - solve_on(d->model.problem())));
    Real error(0);
    for (int i = 0; i < Rows * S; ++i) error = std::max(error, std::abs(d->model.model()[i] - truth->transition[i]));
    errors.push_back(error);
    MESSAGE("observations ", target, ": model error ", error, ", gap to the true-model answer ", gaps.back(),
            ", outcome ", int(result.outcome));
  }
  // The estimate converges at the sampling rate: about sqrt(p(1-p)/n_row), n_row = n / Rows.
  CHECK(errors.back() < Real(0.02));
  CHECK(errors.back() < errors.front() / 5);
  CHECK(gaps.back() < Real(kDouble ? 0.01 : 0.02));
  CHECK(gaps.back() < on_prior / 5);
}

TEST_CASE("EstimatedModel: an image with the estimate restores into a fresh device, which goes on after a refresh") {
  auto truth = std::make_unique<GameArrays>(7u);
  auto prior = std::make_unique<GameArrays>(8u);
  auto a = std::make_unique<Device>(), b = std::make_unique<Device>();
  for (Device* d : {a.get(), b.get()}) {
    REQUIRE(d->model.init(prior->data(), Real(3)) == Status::ok);
    REQUIRE(d->solver.init(d->model.problem(), settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  }
  pbrl::Rng rng(10u);
  observe(a->model, rng, truth->transition, 300);
  REQUIRE(a->model.refresh(a->solver) == Status::ok);
  REQUIRE(a->solver.run(4) == Status::ok);
  observe(a->model, rng, truth->transition, 40);
  bool committed = false;
  REQUIRE(a->model.refresh_slice(a->solver, 3, committed) == Status::ok);  // a refresh under way
  using Estimate = Model::Estimate;
  std::vector<unsigned char> image(pbrl::checkpoint_size<Solver, Estimate>());
  REQUIRE(pbrl::save_checkpoint(a->solver, a->model.estimate(), image.data(), image.size()) == Status::ok);
  REQUIRE(pbrl::restore_checkpoint(b->solver, b->model.estimate(), image.data(), image.size()) == Status::ok);
  CHECK(b->model.estimate().observations() == 340);
  REQUIRE(a->model.refresh(a->solver) == Status::ok);  // starts over from row 0
  REQUIRE(b->model.refresh(b->solver) == Status::ok);
  CHECK(std::memcmp(a->model.model(), b->model.model(), sizeof(Real) * Rows * S) == 0);
  REQUIRE(a->solver.run(4) == Status::ok);
  REQUIRE(b->solver.run(4) == Status::ok);
  CHECK(a->solver.x() == b->solver.x());
  CHECK(a->solver.model_generation() == b->solver.model_generation());
}

TEST_CASE("EstimatedModel: an incentive design's agents' transitions, observed by (s, a1, a2)") {
  using Design = pbrl::IncentiveDesign<Real, 3, 2, 2>;
  using DesignModel = pbrl::EstimatedModel<Design>;
  static_assert(DesignModel::kActions1 == 2 && DesignModel::kActions2 == 2 && DesignModel::kRows == 12, "rows");
  constexpr int N = 3, J = 4;
  pbrl::Rng rng(12u);
  Real reward[N * J], transition[N * J * N], initial[N], designer_reward[N * J], designer_transition[N * J * N];
  pbrl::random_reward(rng, reward, N * J);
  pbrl::random_transition(rng, transition, N * J, N);
  pbrl::random_distribution(rng, initial, N);
  pbrl::random_reward(rng, designer_reward, N * J);
  pbrl::random_transition(rng, designer_transition, N * J, N);
  Design::Data d;
  d.reward = reward;
  d.transition = transition;
  d.initial = initial;
  d.regularizer1.tau = d.regularizer2.tau = Real(0.1);
  d.designer_reward = designer_reward;
  d.designer_transition = designer_transition;
  auto m = std::make_unique<DesignModel>();
  REQUIRE(m->init(d, Real(1)) == Status::ok);
  using ZeroSum = pbrl::PbrlZeroSum<Design>;
  auto solver = std::make_unique<ZeroSum>();
  pbrl::PbrlZeroSumSettings<Real> s;
  REQUIRE(solver->init(m->problem(), s, ZeroSum::Params::Zero(), Mat<N, 2>::Zero(), Mat<N, 2>::Zero()) ==
          Status::ok);
  REQUIRE(m->observe(2, 1, 0, 1) == Status::ok);
  CHECK(m->estimate().observations((2 * 2 + 1) * 2 + 0) == 1);
  CHECK(m->observe(2, 2, 0, 1) == Status::out_of_bounds);
  REQUIRE(m->refresh(*solver) == Status::ok);
  CHECK(solver->model_generation() == 1);
  const Real* row = m->model() + ((2 * 2 + 1) * 2 + 0) * N;
  CHECK(row[1] > transition[((2 * 2 + 1) * 2 + 0) * N + 1]);  // the observed s' gained mass
  REQUIRE(solver->step() == Status::ok);
}

TEST_CASE("swap_transition: swap_model for the transition alone, the same iterates; refusals change nothing") {
  auto truth = std::make_unique<GameArrays>(13u);
  auto prior = std::make_unique<GameArrays>(14u);
  Game ga, gb;
  REQUIRE(ga.init(prior->data()) == Status::ok);
  REQUIRE(gb.init(prior->data()) == Status::ok);
  auto a = std::make_unique<Solver>(), b = std::make_unique<Solver>();
  REQUIRE(a->init(ga, settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  REQUIRE(b->init(gb, settings(), Solver::Params::Zero(), Mat<S, AF>::Zero()) == Status::ok);
  CHECK(b->swap_transition(ga, truth->transition) == Status::bad_setting);  // not b's problem
  REQUIRE(a->run(3) == Status::ok);
  REQUIRE(b->run(3) == Status::ok);
  std::vector<Real> bad(truth->transition, truth->transition + Rows * S);
  bad[S + 1] = Real(-0.25);
  bad[S] += Real(0.25);
  const pbrl::ModelDigest before = gb.model_digest();
  CHECK(b->swap_transition(gb, bad.data()) == Status::bad_transition);
  CHECK(b->swap_transition(gb, nullptr) == Status::null_pointer);
  CHECK(b->model_generation() == 0);
  CHECK(gb.data().transition == prior->transition);
  CHECK(gb.model_digest().transition == before.transition);
  pbrl::SliceResult slice;
  REQUIRE(b->step_slice(1, slice) == Status::ok);
  REQUIRE(a->step_slice(1, slice) == Status::ok);
  REQUIRE(a->swap_model(ga, prior->data(truth->transition)) == Status::ok);
  REQUIRE(b->swap_transition(gb, truth->transition) == Status::ok);
  CHECK_FALSE(b->step_in_progress());
  CHECK(b->model_generation() == 1);
  CHECK(gb.model_digest().transition == ga.model_digest().transition);
  CHECK(gb.model_digest().data == ga.model_digest().data);
  REQUIRE(a->run(5) == Status::ok);
  REQUIRE(b->run(5) == Status::ok);
  CHECK(a->x() == b->x());
  CHECK(a->y() == b->y());
}

}  // namespace test_estimated_model
