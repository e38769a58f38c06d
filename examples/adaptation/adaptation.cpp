// Adaptation on the host (docs/adaptation.md): a device that starts from a prior model of its
// plant, observes the plant's transitions, keeps a Dirichlet posterior over them, hands the
// posterior mean to its running PBRL solver (EstimatedModel: the estimate, and the two model arrays
// its refresh writes and swaps in) and goes on solving; the plant is a World (world.hpp) whose TRUE
// model the device never sees. Both kinds: a Stackelberg leader (Pbrl; x = the leader's logits)
// and an incentive designer (PbrlZeroSum; x = the incentive), in double and, with --precision float
// or both, in float.
//
// Per kind, on one random instance (seed): the TRUE model P1, a second TRUE model P2 (the drift),
// the prior P0 = (1 - m) P1 + m Q (Q an independent random array, m = --prior-mix; rows drawn as
// u^peak normalized). The references, on one solver in tolerance mode with exact gradients:
//   x_prior  solved to the verdict on P0 from x = 0, y = 0: the device as deployed;
//   x_true   the device that knew the TRUE model: P1 swapped into that solver and solved to the
//            verdict (x_true on P1), then P2 likewise (x_true on P2).
// The runs: consistency (P1 throughout, no forgetting); drift (P2 from observation D on), without
// forgetting and with it (--discount, per row visit).
// A run's device solves on its prior as the reference did (so it starts at x_prior, bit for bit),
// then loops in ticks of --tick observations: the world draws each observation with the lower level
// responding to the device's current x, the estimated model observes it; after the tick, if
// refresh_due() (the doubling rule, or --refresh-every observations since the last refresh) the
// device refreshes it (EstimatedModel::refresh: the mean written into the array the solver does not
// read, swapped in); then solve(--steps) (a converged solver takes no step until the next swap).
// At each checkpoint the honest metric: V(x), the upper level's value at the exact lower-level
// solution of the TRUE model of that time under the device's x
// (World::value_at), gap_true = V(x_true) - V(x) and gap_prior_alone = V(x_true) - V(x_prior).
//
// Output: DIR/adaptation.csv, DIR/adaptation.png (gnuplot; DIR/adaptation.png.gp the script),
// `summary,...` lines on stdout. --check (usage below) makes the program a test.

#include "pbrl/pbrl.hpp"

#include "../experiment.hpp"
#include "pbrl/estimate/estimated_model.hpp"
#include "pbrl/problems/incentive_design.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/stackelberg.hpp"
#include "world.hpp"

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

// Sizes (compile-time). The incentive design is the firmware example's (the paper's Figure 3 size);
// the Stackelberg game is a small one.
constexpr int kStackelbergStates = 5, kLeaderActions = 3, kFollowerActions = 3;
constexpr int kIncentiveStates = 10, kIncentiveActions1 = 5, kIncentiveActions2 = 5;

struct Config {
  long seed = 1;
  long observations = 200000;  // per run
  long drift_at = -1;          // D (< 0: observations / 2)
  double discount = 0.99;      // beta of the forgetting run (per row visit)
  double strength = 10;        // the prior's pseudo-counts per row
  double prior_mix = 1;        // m
  double drift_mix = 1;        // P2 = (1 - d) P1 + d Q2
  long tick = 100;             // observations per tick
  long steps = 100;            // solve() cap per tick
  long refresh_every = 1000;   // also refresh every so many observations (0: the doubling rule only)
  long respond_every = 1;      // the world's response rule
  double restart = -1;         // the world's restart probability (< 0: 1 - gamma)
  double gap_tolerance = 0.01;
  double stationarity_tolerance = 0;  // the verdict's |G| bound (0: the kind's kStationarity)
  double step = 0;             // the lower level's learning rate (0: the kind's kStep)
  double step_x = 0;           // x's learning rate (0: the kind's kStepX)
  double smoothness = 0.01;
  // The lower level's step: the euclidean one, with which kStep, the checks' tolerances and
  // docs/adaptation.md's measurements were made (the natural step's runs: docs/adaptation.md).
  std::string lower_geometry = "euclidean";
  double incentive_scale = 0.2;  // c_x of the incentive design
  double incentive_bound = 10;   // its box [-B, B]
  double peak = 4;             // transition rows: entries u^peak, normalized (1: the paper's draw)
  long reference_steps = 50000;  // solve() cap of the references and of the device's first solve
  long points = 41;
  std::string kind = "both", precision = "double", out = "results/adaptation";
  std::string check = "none";  // none, consistency, drift or all: the checks made (and the runs done)
  bool quick = false, quiet = false;
  bool consistency() const { return check != "drift"; }  // runs the consistency run
  bool drift_runs() const { return check != "consistency"; }
  double consistency_tolerance = 0, consistency_ratio = 0.2, drift_tolerance = 0;  // 0: the kind's
  long drift_within = 10000;
  long drift() const { return drift_at >= 0 ? drift_at : observations / 2 / tick * tick; }
};

// ---- The two kinds ----------------------------------------------------------------------------

// Both kinds' solvers: exact gradients in tolerance mode, with the experiment programs' solving
// oracle (PMD, step 1) and the paper's learning rate 0.1.
template <typename Scalar>
void solving_settings(const Config& c, double step_x, double stationarity, pbrl::PenaltySolverSettings<Scalar>& s) {
  s.gradient = pbrl::GradientMode::exact;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.policy.logit_bound = Scalar(10);
  s.oracle = pbrl::OracleKind::policy_mirror_descent;
  s.oracle_step = Scalar(1);
  s.step_x = Scalar(step_x);
  s.gap_tolerance = Scalar(c.gap_tolerance);
  s.penalty_smoothness = Scalar(c.smoothness);
  pbrl::enum_from_name(c.lower_geometry.c_str(), s.lower_geometry);  // o.choice() checked the name
  s.stationarity_tolerance = Scalar(c.stationarity_tolerance > 0 ? c.stationarity_tolerance : stationarity);
}

// Each kind: its problem and solver, its instance (rewards etc.; the transition arrays are the
// caller's), the solver's settings and its init from x = 0, y = 0.
template <typename Scalar>
struct StackelbergKind {
  static constexpr const char* kName = "stackelberg";
  static constexpr std::uint32_t kStream = 1u;
  // Learning rate: at the paper's 0.1 the penalized leader's |G| oscillates around 0.1-0.3 on some
  // of these games and never meets the verdict; 0.02 reaches it on every seed tried (docs).
  static constexpr double kStep = 0.02;
  // |G| <= 0.001 is out of reach within 50,000 steps on most of these games (lambda grows, |G|
  // oscillates); 0.01 is met on every seed tried.
  static constexpr double kStationarity = 0.01;
  // The checks' tolerances (docs/adaptation.md has the measurements they come from): values are
  // about 5, the prior alone's gap 0.17-2.2 on seeds 1-5.
  static constexpr double kConsistencyTolerance = 0.02, kDriftTolerance = 0.1;
  static constexpr int S = kStackelbergStates, A1 = kLeaderActions, A2 = kFollowerActions, J = A1 * A2;
  using Problem = pbrl::Stackelberg<Scalar, S, A1, A2>;
  using Solver = pbrl::Pbrl<Problem, pbrl::EvaluationMethod::direct, pbrl::GradientSources::exact>;
  struct Instance {
    Scalar leader_reward[S * J], follower_reward[S * J], initial[S];
    Instance(pbrl::Rng& rng, const Config&) {
      pbrl::random_reward(rng, leader_reward, S * J, Scalar(0.7));  // the paper's sparsity
      pbrl::random_reward(rng, follower_reward, S * J, Scalar(0.7));
      for (int s = 0; s < S; ++s) initial[s] = Scalar(1) / Scalar(S);
    }
    typename Problem::Data data(const Scalar* transition) const {
      typename Problem::Data d;
      d.leader_reward = leader_reward;
      d.follower_reward = follower_reward;
      d.transition = transition;
      d.initial = initial;
      d.discount = Scalar(0.9);
      // An entropy-regularized leader plays every action, so every row gets observed.
      d.leader = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};
      d.follower = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};
      return d;
    }
  };
  static typename Solver::Settings settings(const Config& c) {
    typename Solver::Settings s;
    const double step = c.step > 0 ? c.step : kStep;
    solving_settings(c, c.step_x > 0 ? c.step_x : kStep, kStationarity, s);
    s.penalty_kind = pbrl::PenaltyKind::value;
    s.step_y = Scalar(step);
    s.lambda_start = Scalar(2);  // the paper's PBRL-value lambda
    return s;
  }
  static pbrl::Status init(Solver& solver, const Problem& p, const typename Solver::Settings& s) {
    return solver.init(p, s, Solver::Params::Zero(), Solver::Matrix::Zero());
  }
};

template <typename Scalar>
struct IncentiveKind {
  static constexpr const char* kName = "incentive";
  static constexpr std::uint32_t kStream = 2u;
  static constexpr double kStep = 0.1;  // the paper's learning rate
  // x moves the rewards by at most c_x sigmoid'(x) <= 0.05: its gradient is small, and at 0.1 a solve takes
  // tens of thousands of steps to |G| <= 0.001 (docs).
  static constexpr double kStepX = 10;
  // The designer's value moves by a few 0.001 between |G| = 0.01 and 0.001 (a flat landscape).
  static constexpr double kStationarity = 0.001;
  // Values are about 6, the prior alone's gap 0.002-0.035 on seeds 1-5.
  static constexpr double kConsistencyTolerance = 0.005, kDriftTolerance = 0.005;
  static constexpr int S = kIncentiveStates, A1 = kIncentiveActions1, A2 = kIncentiveActions2, J = A1 * A2;
  using Problem = pbrl::IncentiveDesign<Scalar, S, A1, A2>;
  using Solver = pbrl::PbrlZeroSum<Problem, pbrl::EvaluationMethod::direct, pbrl::GradientSources::exact>;
  struct Instance {
    Scalar reward[S * J], designer_reward[S * J], designer_transition[S * J * S], initial[S];
    Scalar scale, bound;
    Instance(pbrl::Rng& rng, const Config& c) : scale(Scalar(c.incentive_scale)), bound(Scalar(c.incentive_bound)) {
      pbrl::random_reward(rng, reward, S * J);
      pbrl::random_reward(rng, designer_reward, S * J);
      pbrl::random_transition(rng, designer_transition, S * J, S);  // the designer's own model: known
      for (int s = 0; s < S; ++s) initial[s] = Scalar(1) / Scalar(S);
    }
    typename Problem::Data data(const Scalar* transition) const {
      typename Problem::Data d;
      d.reward = reward;
      d.transition = transition;
      d.initial = initial;
      d.discount = Scalar(0.9);
      d.regularizer1 = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};
      d.regularizer2 = {pbrl::RegularizerKind::entropy, Scalar(0.1), nullptr};
      d.designer_reward = designer_reward;
      d.designer_transition = designer_transition;
      d.incentive_scale = scale;
      d.incentive = {-bound, bound};
      return d;
    }
  };
  static typename Solver::Settings settings(const Config& c) {
    typename Solver::Settings s;
    const double step = c.step > 0 ? c.step : kStep;
    solving_settings(c, c.step_x > 0 ? c.step_x : kStepX, kStationarity, s);
    s.step_pi = Scalar(step);
    s.lambda_start = Scalar(4);  // the paper's PBRL-NI lambda
    // The schedule's start scale min(1, limit / (step_x * lambda_0)) reads step_x = 10 as a long
    // first step, but x's gradient is at most 0.05 per entry: it would cut every step to 1/53 and the
    // quick consistency run would end at a gap of 0.03 (against 0.0014). 0: the scale starts at 1.
    s.lambda_step_limit = Scalar(0);
    return s;
  }
  static pbrl::Status init(Solver& solver, const Problem& p, const typename Solver::Settings& s) {
    return solver.init(p, s, Solver::Params::Zero(), Solver::Matrix1::Zero(), Solver::Matrix2::Zero());
  }
};

// ---- One kind in one precision ------------------------------------------------------------------

struct Point {
  long observations = 0;
  int phase = 1;  // the TRUE model the point is scored on (1: P1, 2: P2)
  double value = 0, value_true = 0, value_prior = 0;
  long refreshes = 0, solver_steps = 0;
  bool converged = false;
  double gap_true() const { return value_true - value; }
  double gap_prior() const { return value_true - value_prior; }
};

struct Run {
  std::string name;  // consistency, drift_keep, drift_forget
  double discount = 1;
  bool drift = false;
  std::vector<Point> points;
  double seconds = 0;
  long responses = 0, uncertified = 0;
};

Run make_run(const char* name, double discount, bool drift) {
  Run r;
  r.name = name;
  r.discount = discount;
  r.drift = drift;
  return r;
}

bool check(pbrl::Status st, const char* what) {
  if (st == pbrl::Status::ok) return true;
  std::fprintf(stderr, "%s: %s\n", what, pbrl::to_string(st));
  return false;
}

// The checkpoints: every tick-aligned multiple of observations / (points - 1), the ticks at
// tick * 2^k (the early, fast part of the curve), and D.
std::vector<long> checkpoints(const Config& c) {
  std::vector<long> t{0, c.drift()};
  for (long j = 1; j < c.points; ++j) t.push_back((c.observations * j / (c.points - 1)) / c.tick * c.tick);
  for (long k = c.tick; k < c.observations; k *= 2) t.push_back(k);
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

template <template <typename> class Kind, typename Scalar>
class Experiment {
 public:
  using K = Kind<Scalar>;
  using Problem = typename K::Problem;
  using Solver = typename K::Solver;
  using Params = typename Problem::Params;
  using World = adaptation::World<Problem>;
  static constexpr int S = K::S, A1 = K::A1, A2 = K::A2, kRows = S * A1 * A2;
  using Model = pbrl::EstimatedModel<Problem>;  // the device's problem on its estimate
  static_assert(Model::kActions1 == A1 && Model::kActions2 == A2 && Model::kRows == kRows, "the world's rows");

  explicit Experiment(const Config& c) : c_(c) {
    // One stream per kind and seed: rewards, P1, Q, Q2 (the float and double instances see the
    // same uniforms, pbrl::Rng).
    pbrl::Rng rng(static_cast<std::uint32_t>(c.seed) * 7919u + K::kStream);
    instance_ = std::make_unique<typename K::Instance>(rng, c);
    std::vector<Scalar> q(kRows * S), q2(kRows * S);
    random_rows(rng, true1_.data());
    random_rows(rng, q.data());
    random_rows(rng, q2.data());
    const Scalar m = Scalar(c.prior_mix), d = Scalar(c.drift_mix);
    for (int i = 0; i < kRows * S; ++i) {
      prior_[i] = (Scalar(1) - m) * true1_[i] + m * q[i];
      true2_[i] = (Scalar(1) - d) * true1_[i] + d * q2[i];
    }
  }

  // Rows of entries u^peak, u uniform in [0, 1), normalized: peak 1 is the paper's draw; a larger
  // peak concentrates each row on fewer next states, so that the model matters more.
  void random_rows(pbrl::Rng& rng, Scalar* p) const {
    for (int r = 0; r < kRows; ++r) {
      Scalar* row = p + r * S;
      Scalar sum(0);
      for (int j = 0; j < S; ++j) sum += row[j] = Scalar(std::pow(double(rng.uniform<Scalar>()), c_.peak));
      for (int j = 0; j < S; ++j) row[j] /= sum;
    }
  }

  // The references, then the three runs. false after a message on a library error.
  bool run(std::vector<Run>& runs, std::string& notes) {
    // The device as deployed: solved on its prior from x = 0, y = 0 (x_prior). The device that knew
    // the TRUE model goes on from there: P1 swapped in and solved (x_true on P1), then P2 (x_true
    // on P2, the same solver going on as a device that saw the drift at once would).
    if (!deploy(prior_.data(), "reference on the prior")) return false;
    x_prior_ = solver_->x();
    if (!solve_on(true1_.data(), "reference on P1")) return false;
    x_true1_ = solver_->x();
    if (!solve_on(true2_.data(), "reference on P2")) return false;
    x_true2_ = solver_->x();
    for (int phase = 1; phase <= 2; ++phase) {
      World& scorer = phase == 1 ? *scorer1_ : *scorer2_;
      if (!check(scorer.init(instance_->data(phase == 1 ? true1_.data() : true2_.data()), nullptr,
                             world_settings(), Params::Zero()),
                 "scorer"))
        return false;
      if (!score(scorer, phase == 1 ? x_true1_ : x_true2_, value_true_[phase - 1]) ||
          !score(scorer, x_prior_, value_prior_[phase - 1]))
        return false;
    }
    notes = reference_notes_;
    runs.clear();
    if (c_.consistency()) runs.push_back(make_run("consistency", 1.0, false));
    if (c_.drift_runs()) {
      runs.push_back(make_run("drift_keep", 1.0, true));
      runs.push_back(make_run("drift_forget", c_.discount, true));
    }
    for (Run& r : runs)
      if (!device(r)) return false;
    return true;
  }

  double value_true(int phase) const { return value_true_[phase - 1]; }
  double value_prior(int phase) const { return value_prior_[phase - 1]; }
  // The device's x at D scored on P2 (the drift's size), from the drift run without forgetting.
  double drift_gap_at_drift() const { return gap_at_drift_; }

 private:
  // Every run's world draws the same stream (seed): the runs see the same plant until D.
  adaptation::WorldSettings<Scalar> world_settings(bool drift = false) const {
    adaptation::WorldSettings<Scalar> w;
    w.drift_at = drift ? c_.drift() : 0;
    w.restart = Scalar(c_.restart);
    w.respond_every = c_.respond_every;
    w.seed = static_cast<std::uint32_t>(c_.seed);
    return w;
  }

  bool score(World& scorer, const Params& x, double& value) {
    pbrl::BestResponseValue<Scalar> v;
    if (!check(scorer.value_at(x, v), "value at the exact lower-level solution")) return false;
    if (!v.converged) ++uncertified_scores_;
    value = double(v.value);
    return true;
  }

  // The solver on `transition` from x = 0, y = 0, solved to the verdict (cap reference_steps).
  bool deploy(const Scalar* transition, const char* what) {
    data_ = instance_->data(transition);
    if (!check(problem_->init(data_), what)) return false;
    return deploy(*problem_, what);
  }
  // ... on `problem` (problem_, or the device's estimated model's).
  bool deploy(Problem& problem, const char* what) {
    if (!check(K::init(*solver_, problem, K::settings(c_)), what)) return false;
    return solve(what);
  }
  // `transition` swapped into the running solver, solved to the verdict.
  bool solve_on(const Scalar* transition, const char* what) {
    data_.transition = transition;
    if (!check(solver_->swap_model(*problem_, data_), what)) return false;
    return solve(what);
  }
  bool solve(const char* what) {
    pbrl::SolveResult result;
    typename Solver::Report report;
    if (!check(solver_->solve(c_.reference_steps, result, &report), what)) return false;
    char b[256];
    std::snprintf(b, sizeof b, "%s: %s after %lld steps (gap bound %.3g, |G| %.3g, lambda %g)\n", what,
                  pbrl::enum_name(result.outcome), static_cast<long long>(result.steps), double(report.gap_bound),
                  double(report.projected_gradient_norm), double(report.lambda));
    reference_notes_ += b;
    return true;
  }

  // One device run: solve on the prior, then observe, refresh, swap and solve tick by tick.
  bool device(Run& run) {
    const auto start = std::chrono::steady_clock::now();
    const long D = c_.drift();
    pbrl::EstimateSettings<Scalar> es;
    es.support = pbrl::EstimateSupport::dense;  // the prior's zeros are a guess
    es.discount = Scalar(run.discount);
    es.refresh_every = c_.refresh_every;
    // The model starts as a copy of the prior, bit for bit.
    if (!check(model_->init(instance_->data(prior_.data()), Scalar(c_.strength), es), "estimated model init"))
      return false;
    if (!deploy(model_->problem(), "device on its prior")) return false;
    if (solver_->x() != x_prior_) {  // the same solve on the same numbers
      std::fprintf(stderr, "the device's solve on its prior did not reproduce x_prior\n");
      return false;
    }
    pbrl::SolveResult result;
    if (!check(world_->init(instance_->data(true1_.data()), run.drift ? true2_.data() : nullptr,
                            world_settings(run.drift), solver_->x()),
               "world"))
      return false;

    const std::vector<long> targets = checkpoints(c_);
    std::size_t next_target = 0;
    long refreshes = 0, steps = 0;
    adaptation::Observation o;
    for (long n = 0;; n += c_.tick) {
      if (next_target < targets.size() && n == targets[next_target]) {
        const int phase = run.drift && n >= D ? 2 : 1;
        Point p;
        p.observations = n;
        p.phase = phase;
        if (!score(phase == 1 ? *scorer1_ : *scorer2_, solver_->x(), p.value)) return false;
        p.value_true = value_true_[phase - 1];
        p.value_prior = value_prior_[phase - 1];
        p.refreshes = refreshes;
        p.solver_steps = steps;
        p.converged = solver_->converged();
        run.points.push_back(p);
        if (run.drift && run.discount == 1.0 && n == D) gap_at_drift_ = p.gap_true();
        ++next_target;
      }
      if (n >= c_.observations) break;
      for (long i = 0; i < c_.tick; ++i) {
        if (!check(world_->observe(solver_->x(), o), "world")) return false;
        if (!check(model_->observe(o.state, o.action1, o.action2, o.next_state), "observe")) return false;
      }
      if (model_->refresh_due()) {
        if (!check(model_->refresh(*solver_), "refresh")) return false;
        ++refreshes;
      }
      if (!check(solver_->solve(c_.steps, result), "solve")) return false;
      steps += result.steps;
    }
    run.responses = world_->responses();
    run.uncertified = world_->uncertified_responses();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return true;
  }

  const Config& c_;
  std::unique_ptr<typename K::Instance> instance_;
  std::vector<Scalar> true1_ = std::vector<Scalar>(kRows * S), true2_ = std::vector<Scalar>(kRows * S);
  std::vector<Scalar> prior_ = std::vector<Scalar>(kRows * S);
  std::unique_ptr<Problem> problem_ = std::make_unique<Problem>();
  std::unique_ptr<Solver> solver_ = std::make_unique<Solver>();
  std::unique_ptr<Model> model_ = std::make_unique<Model>();
  std::unique_ptr<World> world_ = std::make_unique<World>();
  std::unique_ptr<World> scorer1_ = std::make_unique<World>(), scorer2_ = std::make_unique<World>();
  typename Problem::Data data_{};  // the references' problem's data
  Params x_true1_ = Params::Zero(), x_true2_ = Params::Zero(), x_prior_ = Params::Zero();
  double value_true_[2] = {}, value_prior_[2] = {};
  double gap_at_drift_ = 0;
  long uncertified_scores_ = 0;
  std::string reference_notes_;
};

// ---- Results: CSV, summary, checks, figure ------------------------------------------------------

struct KindResult {
  std::string kind, precision;
  std::vector<Run> runs;
  std::string notes;
  long drift_at = 0;
  double drift_gap = 0;  // the device's x at D scored on P2 (no forgetting run)
  double consistency_tolerance = 0, drift_tolerance = 0;
};

template <template <typename> class Kind, typename Scalar>
bool run_kind(const Config& c, const char* precision, std::vector<KindResult>& out) {
  KindResult r;
  r.kind = Kind<Scalar>::kName;
  r.precision = precision;
  r.drift_at = c.drift();
  using K = Kind<Scalar>;
  r.consistency_tolerance = c.consistency_tolerance > 0 ? c.consistency_tolerance : K::kConsistencyTolerance;
  r.drift_tolerance = c.drift_tolerance > 0 ? c.drift_tolerance : K::kDriftTolerance;
  auto experiment = std::make_unique<Experiment<Kind, Scalar>>(c);
  if (!c.quiet) std::fprintf(stderr, "%s (%s): references and three runs of %ld observations\n", r.kind.c_str(),
                             precision, c.observations);
  if (!experiment->run(r.runs, r.notes)) return false;
  r.drift_gap = experiment->drift_gap_at_drift();
  out.push_back(std::move(r));
  return true;
}

const Point& last(const Run& r) { return r.points.back(); }
const Run* find(const KindResult& k, const char* name) {
  for (const Run& r : k.runs)
    if (r.name == name) return &r;
  return nullptr;
}

// The first checkpoint at or after `from` from which every later checkpoint has gap_true <= tol
// (-1: none).
long recovered_at(const Run& r, long from, double tol) {
  long at = -1;
  for (const Point& p : r.points) {
    if (p.observations < from) continue;
    if (std::fabs(p.gap_true()) <= tol) {
      if (at < 0) at = p.observations;
    } else {
      at = -1;
    }
  }
  return at;
}

bool write_csv(const std::string& path, const Config& c, const std::vector<KindResult>& results) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(f, "# adaptation --seed %ld --observations %ld --drift-at %ld --discount %g --strength %g --prior-mix %g "
                  "--drift-mix %g --tick %ld --steps %ld --refresh-every %ld --gap-tolerance %g\n",
               c.seed, c.observations, c.drift(), c.discount, c.strength, c.prior_mix, c.drift_mix, c.tick, c.steps,
               c.refresh_every, c.gap_tolerance);
  std::fprintf(f, "kind,precision,run,observations,phase,value,value_true_optimum,value_prior_optimum,gap_true,"
                  "gap_prior_alone,refreshes,solver_steps,converged\n");
  for (const KindResult& k : results)
    for (const Run& r : k.runs)
      for (const Point& p : r.points)
        std::fprintf(f, "%s,%s,%s,%ld,%d,%.10g,%.10g,%.10g,%.6g,%.6g,%ld,%ld,%d\n", k.kind.c_str(), k.precision.c_str(),
                     r.name.c_str(), p.observations, p.phase, p.value, p.value_true, p.value_prior, p.gap_true(),
                     p.gap_prior(), p.refreshes, p.solver_steps, p.converged ? 1 : 0);
  std::fclose(f);
  return true;
}

// Per kind (rows): the consistency run's gap against observations (log axis) with the prior-alone
// gap, and the drift runs' gaps (linear axis) with D marked. The first precision's curves.
bool write_plot(const std::string& dir, const Config& c, const std::vector<KindResult>& results) {
  const std::string csv = dir + "/adaptation.csv";
  std::vector<const KindResult*> shown;
  for (const KindResult& k : results)
    if (k.precision == results.front().precision) shown.push_back(&k);
  std::string s = "set datafile separator ','\nset grid\nset key top right\nset multiplot layout " +
                  std::to_string(shown.size()) + ",2 title " +
                  experiment::quoted("Adaptation: gap to the true-model optimum, V(x_{true}) - V(x), on the TRUE model") +
                  "\n";
  auto sel = [&](const KindResult& k, const std::string& run, const std::string& column) {
    return "'" + csv + "' using 4:((strcol(1) eq '" + k.kind + "' && strcol(2) eq '" + k.precision +
           "' && strcol(3) eq '" + run + "') ? $" + column + " : 1/0)";
  };
  for (const KindResult* k : shown) {
    char tol[64];
    std::snprintf(tol, sizeof tol, "%g", k->consistency_tolerance);
    s += "set title " + experiment::quoted(k->kind + " (" + k->precision + "): fixed TRUE model") +
         "\nset logscale x\nset xlabel 'observations'\nset ylabel 'gap'\nset autoscale y\n";
    s += "plot " + sel(*k, "consistency", "9") + " with linespoints lw 2 pt 7 ps 0.5 lc rgb '" +
         experiment::color(0) + "' title 'device', \\\n     " + sel(*k, "consistency", "10") +
         " with lines dt 2 lw 2 lc rgb '" + experiment::color(1) + "' title 'prior alone', \\\n     " + tol +
         " with lines dt 3 lc rgb 'black' title 'tolerance'\n";
    std::snprintf(tol, sizeof tol, "%g", k->drift_tolerance);
    char drift[64];
    std::snprintf(drift, sizeof drift, "%ld", k->drift_at);
    s += "unset logscale x\nset title " +
         experiment::quoted(k->kind + " (" + k->precision + "): TRUE model changes at " + drift) +
         "\nset arrow 1 from " + drift + ", graph 0 to " + drift + ", graph 1 nohead dt 2 lc rgb 'gray'\n";
    char forget[96];
    std::snprintf(forget, sizeof forget, "forgetting, β = %g", c.discount);
    s += "plot " + sel(*k, "drift_keep", "9") + " with linespoints lw 2 pt 7 ps 0.5 lc rgb '" + experiment::color(1) +
         "' title 'no forgetting', \\\n     " + sel(*k, "drift_forget", "9") +
         " with linespoints lw 2 pt 7 ps 0.5 lc rgb '" + experiment::color(2) + "' title " +
         experiment::quoted(forget) + ", \\\n     " + tol + " with lines dt 3 lc rgb 'black' title 'tolerance'\n";
    s += "unset arrow 1\n";
  }
  s += "unset multiplot\n";
  return experiment::plot(dir + "/adaptation.png", s, 1200, 420 * static_cast<int>(shown.size()));
}

// Summary lines and the checks; returns whether every check held.
bool summarize(const Config& c, const std::vector<KindResult>& results) {
  bool ok = true;
  auto fail = [&](const KindResult& k, const char* what, double got, double bound) {
    std::printf("check_failed,%s,%s,%s,%.6g,%.6g\n", k.kind.c_str(), k.precision.c_str(), what, got, bound);
    ok = false;
  };
  for (const KindResult& k : results) {
    std::printf("%s", experiment::prefixed(k.notes, ("# " + k.kind + " " + k.precision + ": ").c_str()).c_str());
    const char* kp[2] = {k.kind.c_str(), k.precision.c_str()};
    for (const Run& r : k.runs) {
      const Point& p = last(r);
      std::printf("summary,adaptation,%s,%s,%s,final_gap_true,%.6g\n", kp[0], kp[1], r.name.c_str(), p.gap_true());
      std::printf("summary,adaptation,%s,%s,%s,final_value,%.6g\n", kp[0], kp[1], r.name.c_str(), p.value);
      std::printf("summary,adaptation,%s,%s,%s,gap_prior_alone,%.6g\n", kp[0], kp[1], r.name.c_str(), p.gap_prior());
      std::printf("summary,adaptation,%s,%s,%s,refreshes,%ld\n", kp[0], kp[1], r.name.c_str(), p.refreshes);
      std::printf("summary,adaptation,%s,%s,%s,solver_steps,%ld\n", kp[0], kp[1], r.name.c_str(), p.solver_steps);
      std::printf("summary,adaptation,%s,%s,%s,responses,%ld\n", kp[0], kp[1], r.name.c_str(), r.responses);
      std::printf("summary,adaptation,%s,%s,%s,seconds,%.2f\n", kp[0], kp[1], r.name.c_str(), r.seconds);
      if (r.drift)
        std::printf("summary,adaptation,%s,%s,%s,recovered_at,%ld\n", kp[0], kp[1], r.name.c_str(),
                    recovered_at(r, k.drift_at, k.drift_tolerance));
      if (r.uncertified > 0) fail(k, "uncertified_lower_level_responses", double(r.uncertified), 0);
    }
    std::printf("summary,adaptation,%s,%s,drift,gap_at_drift,%.6g\n", kp[0], kp[1], k.drift_gap);
    const Run* consistency = find(k, "consistency");
    const Run* forget = find(k, "drift_forget");
    if (consistency != nullptr && (c.check == "consistency" || c.check == "all")) {
      // The final gap is small, and well below the prior alone's (either sign: the device must
      // match the true-model optimum, not merely beat it).
      const Point& p = last(*consistency);
      const double gap = std::fabs(p.gap_true());
      if (!(gap <= k.consistency_tolerance)) fail(k, "consistency_final_gap", gap, k.consistency_tolerance);
      if (!(gap <= c.consistency_ratio * p.gap_prior()))
        fail(k, "consistency_against_prior_alone", gap, c.consistency_ratio * p.gap_prior());
    }
    if (forget != nullptr && (c.check == "drift" || c.check == "all")) {
      // Material, then back under the tolerance within drift_within observations, for good.
      if (!(k.drift_gap > k.drift_tolerance)) fail(k, "drift_not_material", k.drift_gap, k.drift_tolerance);
      for (const Point& q : forget->points)
        if (q.observations >= k.drift_at + c.drift_within && !(std::fabs(q.gap_true()) <= k.drift_tolerance)) {
          fail(k, "drift_forgetting_gap", q.gap_true(), k.drift_tolerance);
          break;
        }
    }
  }
  if (c.check != "none") std::printf("summary,adaptation,checks,%s\n", ok ? "passed" : "failed");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  experiment::Options o(
      argc, argv,
      "usage: adaptation [options]   (docs/adaptation.md)\n"
      "  --kind K              stackelberg, incentive or both (both)\n"
      "  --precision P         double, float or both (double)\n"
      "  --seed N              instance and world seed (1)\n"
      "  --observations N      observations per run (200000; --quick 40000)\n"
      "  --drift-at D          observation at which the TRUE model changes (observations / 2)\n"
      "  --discount B          forgetting beta of the drift run with forgetting, per row visit (0.99)\n"
      "  --strength A          the prior's pseudo-counts per row (10)\n"
      "  --prior-mix M         prior = (1 - M) P1 + M Q (1: an independent random model)\n"
      "  --drift-mix M         P2 = (1 - M) P1 + M Q2 (1)\n"
      "  --peak K              transition rows u^K normalized (4; 1: the paper's draw)\n"
      "  --tick N              observations between refresh checks and solves (100)\n"
      "  --steps N             solve() step cap per tick (100)\n"
      "  --refresh-every N     also refresh every N observations (1000; 0: the doubling rule only)\n"
      "  --respond-every K     the lower level takes up a new x every K observations (1)\n"
      "  --restart P           the world's restart probability (1 - gamma)\n"
      "  --gap-tolerance E     the solvers' certified lower-level gap (0.01)\n"
      "  --stationarity-tolerance G   the verdict's |G| bound (Stackelberg 0.01, incentive 0.001)\n"
      "  --step A, --step-x A  learning rates (Stackelberg 0.02 and 0.02, incentive 0.1 and 10)\n"
      "  --smoothness L        the schedule's L_p (0.01)\n"
      "  --lower-geometry G    the lower level's step: euclidean (the default here), natural or automatic\n"
      "  --incentive-scale C, --incentive-bound B   r_x = r + C sigmoid(x), x in [-B, B] (0.2, 10)\n"
      "  --reference-steps N   step cap of the reference solves and the device's first solve (50000)\n"
      "  --points N            linear checkpoints per run (41; --quick 21)\n"
      "  --out DIR             output directory (results/adaptation)\n"
      "  --check C             consistency, drift or all: run those runs only and exit 1 unless:\n"
      "                        consistency: |final gap| <= --consistency-tolerance (Stackelberg 0.02,\n"
      "                        incentive 0.005) and <= --consistency-ratio (0.2) x the prior alone's\n"
      "                        gap; drift: the drift is material and, with forgetting, |gap| <=\n"
      "                        --drift-tolerance (Stackelberg 0.1, incentive 0.005) from D +\n"
      "                        --drift-within (10000) on\n"
      "  --quick               the CTest size; --quiet: no progress\n");
  Config c;
  c.quick = o.flag("quick");
  if (c.quick) {
    c.observations = 40000;
    c.points = 21;
  }
  c.kind = o.choice("kind", c.kind, {"stackelberg", "incentive", "both"});
  c.precision = o.choice("precision", c.precision, {"double", "float", "both"});
  c.seed = o.integer("seed", c.seed, 0);
  c.observations = o.integer("observations", c.observations, 1);
  c.drift_at = o.integer("drift-at", c.drift_at, 0);
  c.discount = o.real("discount", c.discount);
  c.strength = o.real("strength", c.strength);
  c.prior_mix = o.real("prior-mix", c.prior_mix);
  c.drift_mix = o.real("drift-mix", c.drift_mix);
  c.tick = o.integer("tick", c.tick, 1);
  c.steps = o.integer("steps", c.steps, 0);
  c.refresh_every = o.integer("refresh-every", c.refresh_every, 0);
  c.respond_every = o.integer("respond-every", c.respond_every, 1);
  c.restart = o.real("restart", c.restart);
  c.gap_tolerance = o.real("gap-tolerance", c.gap_tolerance);
  c.step = o.real("step", c.step);
  c.step_x = o.real("step-x", c.step_x);
  c.smoothness = o.real("smoothness", c.smoothness);
  c.lower_geometry = o.choice("lower-geometry", c.lower_geometry, {"euclidean", "natural", "automatic"});
  c.peak = o.real("peak", c.peak);
  c.incentive_scale = o.real("incentive-scale", c.incentive_scale);
  c.incentive_bound = o.real("incentive-bound", c.incentive_bound);
  c.stationarity_tolerance = o.real("stationarity-tolerance", c.stationarity_tolerance);
  c.reference_steps = o.integer("reference-steps", c.reference_steps, 1);
  c.points = o.integer("points", c.points, 2);
  c.out = o.text("out", c.out);
  c.check = o.choice("check", c.check, {"none", "consistency", "drift", "all"});
  c.quiet = o.flag("quiet");
  c.consistency_tolerance = o.real("consistency-tolerance", c.consistency_tolerance);
  c.consistency_ratio = o.real("consistency-ratio", c.consistency_ratio);
  c.drift_tolerance = o.real("drift-tolerance", c.drift_tolerance);
  c.drift_within = o.integer("drift-within", c.drift_within, 0);
  if (const int code = o.finish(); code >= 0) return code;
  const bool bad_mix = !(c.prior_mix >= 0 && c.prior_mix <= 1) || !(c.drift_mix >= 0 && c.drift_mix <= 1);
  if (c.observations % c.tick != 0 || c.drift() % c.tick != 0 || c.drift() > c.observations || bad_mix ||
      !(c.discount > 0 && c.discount <= 1) || !(c.gap_tolerance > 0)) {
    std::fprintf(stderr, "error: observations and drift-at must be multiples of tick, drift-at <= observations, "
                         "mixes in [0, 1], discount in (0, 1], gap tolerance > 0\n");
    return 2;
  }
  if (!experiment::make_directories(c.out)) return 2;

  std::vector<KindResult> results;
  const bool stackelberg = c.kind != "incentive", incentive = c.kind != "stackelberg";
  for (const char* p : {"double", "float"}) {
    if (c.precision != "both" && c.precision != p) continue;
    const bool dbl = std::string(p) == "double";
    bool ok = true;
    if (stackelberg)
      ok = ok && (dbl ? run_kind<StackelbergKind, double>(c, p, results) : run_kind<StackelbergKind, float>(c, p, results));
    if (incentive)
      ok = ok && (dbl ? run_kind<IncentiveKind, double>(c, p, results) : run_kind<IncentiveKind, float>(c, p, results));
    if (!ok) return 1;
  }
  if (!write_csv(c.out + "/adaptation.csv", c, results)) return 1;
  if (c.consistency() && c.drift_runs()) write_plot(c.out, c, results);  // the CSV is the result; the PNG a view
  return summarize(c, results) ? 0 : 1;
}
