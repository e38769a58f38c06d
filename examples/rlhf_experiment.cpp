// Tabular RLHF (paper, Section 2.2 "RLHF" and Section "Deep reinforcement learning from human
// feedback"; its Atari experiment, scaled down to a random tabular MDP).
//
// A hidden true reward r_true (random, 70% of the entries 0) defines the task. The learners never
// see it: a synthetic labeler compares pairs of segments drawn from each learner's current policy
// ("higher true return wins", the paper's rule, or a stochastic Bradley-Terry labeler), the labeled
// pairs go into a fixed-capacity ring buffer, and a reward model r_x = x is fitted to them.
// Methods, on the same instances, seeds and label schedule:
//   pbrl_value / pbrl_bellman  Pbrl on RlhfProblem: the Bradley-Terry loss of the buffer is the upper
//                              level, M_tau(x) the lower level, value or Bellman penalty
//   drlhf                      the DRLHF-style baseline (Drlhf): reward fitting and RL on the fitted
//                              reward, alternating, no coupling
//   oracle                     the same policy learner and step budget on the true reward (Drlhf with
//                              x fixed at r_true and no reward steps). It uses no labels: its curve is
//                              plotted at the labeled methods' x positions (same steps per round).
// Schedule: a warm-up batch of pairs from the initial (uniform) policy and a warm-up of the reward
// model on it (shared by every labeled method), then rounds of: new pairs from the current
// policy, then a fixed number of outer iterations. Measured at checkpoints: the true return
// V^pi_true(rho) of the learner's current policy (hidden reward, unregularized, exact model-based
// evaluation; what the paper plots), the true return of the optimal regularized policy pi*(x) of
// the learned reward's M_tau(x) (the bilevel answer: what the learned reward gives a learner that
// optimizes it exactly; RlhfProblem::value_at_best_response), the learner's exact lower-level gap
// V^{pi*(x)}(rho) - V^pi(rho) on M_tau(x), and the fraction of held-out pairs (uniform policy,
// true labels) whose order the learned reward predicts. The line "true optimum" is
// max_pi V^pi_true(rho); the regret of a policy is that optimum minus its true return.
//
// The hyperparameters are options (--lambda-start, --inner-steps, ..., --gap-tolerance, --iterations);
// their defaults are the program's choices in examples/experiment_settings.hpp (namespace
// settings::rlhf). In tolerance mode (--gap-tolerance) PBRL's oracle takes T_k steps at iteration
// k; the work column counts (T_k + 2)*B*H environment steps per PBRL iteration (sampled mode: the
// solver's own count), T*B*H per DRLHF or oracle iteration. --sweep-lambda L1,L2,... runs the PBRL
// methods at each lambda in both gradient modes and once in tolerance mode.
// With exact gradients tolerance mode solves once the last labels are in: each PBRL run steps
// until solve()'s verdict (docs/solving.md) or --max-steps, and the outcome, steps and wall time
// print per instance.
//
// Output: DIR/rlhf_tabular.csv and DIR/rlhf_tabular.png (gnuplot), a table and
// `summary,rlhf,<method>,<metric>,<value>` lines on stdout, progress on stderr; with
// --sweep-lambda DIR/rlhf_lambda_sweep.csv and .png instead.

#include "experiment_driver.hpp"
#include "experiment_settings.hpp"
#include "pbrl/pbrl.hpp"
#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/problems/random_instance.hpp"
#include "pbrl/problems/rlhf.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace cfg = settings::rlhf;
using Real = double;
constexpr int S = cfg::kStates, A = cfg::kActions, L = cfg::kSegmentLength, C = cfg::kBufferCapacity;
using Problem = pbrl::RlhfProblem<Real, S, A, L, C>;
using Buffer = pbrl::PreferenceBuffer<S, A, L, C>;
using Segment = pbrl::Segment<S, A, L>;
using Matrix = pbrl::StateActionMatrix<Real, S, A>;
using Params = Problem::Params;
using Sampler = pbrl::SegmentSampler<Real, S, A>;
using PbrlSolver = pbrl::Pbrl<Problem>;
using DrlhfSolver = pbrl::Drlhf<Problem>;
using Workspace = pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct>;
using Status = pbrl::Status;

constexpr int kPoints = 50;        // about this many checkpoints after the first rounds
constexpr long kDenseRounds = 10;  // checkpoints after each of the first rounds
constexpr int kQuickInstances = 3;  // --quick
constexpr long kQuickLabels = 400;  // --quick
const long kBH = static_cast<long>(cfg::kBatch) * settings::kHorizon;

enum class Method { pbrl_value, pbrl_bellman, drlhf, oracle };
constexpr Method kMethods[] = {Method::pbrl_value, Method::pbrl_bellman, Method::drlhf, Method::oracle};
constexpr int kMethodCount = 4;
constexpr int kDrlhf = 2;  // index of drlhf in kMethods: the reference of the paired differences

const std::vector<const char*> kNames = {"pbrl_value", "pbrl_bellman", "drlhf", "oracle"};
const char* name(Method m) { return kNames[static_cast<std::size_t>(m)]; }
bool labeled(Method m) { return m != Method::oracle; }
bool is_pbrl(Method m) { return m == Method::pbrl_value || m == Method::pbrl_bellman; }

// The command line's common options and this program's.
struct Config : experiment::RunConfig<kMethodCount> {
  bool bradley_terry = false;
  double bt_scale = 1;
  long labels = cfg::kLabels;
  long rounds = 0;      // derived: (labels - warm-up) / pairs per round, or ceil(--iterations / steps per round)
  long iterations = 0;  // derived: outer iterations per method (rounds * steps per round, or --iterations)
};

// Outer iterations in label round r (1-based): kStepsPerRound, the last round of an --iterations run
// takes what is left.
long iterations_in_round(const Config& c, long round) {
  return round < c.rounds ? cfg::kStepsPerRound : c.iterations - (c.rounds - 1) * cfg::kStepsPerRound;
}

bool check(const char* what, Status st) {
  if (st == Status::ok) return true;
  std::fprintf(stderr, "\nerror: %s: %s\n", what, pbrl::to_string(st));
  return false;
}

using experiment::format;

// ---- Settings: the program's defaults, then the command line's hyperparameters --------------------
// One policy learner for every method (PBRL's oracle, DRLHF's and the oracle's RL steps): exact
// mode PMD, sampled mode softmax policy gradient; --inner-steps, --oracle and --oracle-step set it.

int inner_steps(const Config& c) { return c.hp.inner_steps ? static_cast<int>(*c.hp.inner_steps) : cfg::kInner; }
pbrl::OracleKind policy_oracle(const Config& c) {
  if (c.hp.oracle) return *c.hp.oracle == "pmd" ? pbrl::OracleKind::policy_mirror_descent : pbrl::OracleKind::policy_gradient;
  return c.sampled ? pbrl::OracleKind::policy_gradient : pbrl::OracleKind::policy_mirror_descent;
}
// The policy learner's step: --oracle-step, else PMD's step (choice) or the paper's policy-gradient rate.
Real policy_step(const Config& c) {
  if (c.hp.oracle_step) return Real(*c.hp.oracle_step);
  return Real(policy_oracle(c) == pbrl::OracleKind::policy_mirror_descent ? cfg::kOracleStep : cfg::kPgStep);
}
// alpha_x: PBRL's x step and DRLHF's reward step (the reward warm-up keeps cfg::kRewardStep).
Real reward_step(const Config& c) { return Real(c.hp.step ? *c.hp.step : cfg::kRewardStep); }

pbrl::PbrlSettings<Real> pbrl_settings(const Config& c, Method m, std::uint32_t seed) {
  pbrl::PbrlSettings<Real> s;
  s.penalty_kind = m == Method::pbrl_value ? pbrl::PenaltyKind::value : pbrl::PenaltyKind::bellman;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle = policy_oracle(c);
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.inner_steps = cfg::kInner;
  s.oracle_step = policy_step(c);
  s.step_x = Real(cfg::kRewardStep);
  s.step_y = Real(cfg::kStepY);
  s.lambda_start = s.lambda_final = Real(cfg::kLambda);
  s.lambda_ramp = 0;
  c.hp.apply(s);  // the y step stays kStepY (y moves by the penalty only)
  c.hp.choose_solve_oracle(s, c.sampled);
  experiment::set_sampling(s, c.sampled, cfg::kBatch, seed);
  return s;
}

pbrl::DrlhfSettings<Real> drlhf_settings(const Config& c, Method m, std::uint32_t seed) {
  pbrl::DrlhfSettings<Real> s;
  s.reward_steps = m == Method::oracle ? 0 : cfg::kRewardStepsPerIteration;
  s.reward_step = reward_step(c);
  s.policy_oracle = policy_oracle(c);
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.policy_steps = inner_steps(c);
  s.policy_step = policy_step(c);
  experiment::set_sampling(s, c.sampled, cfg::kBatch, seed);
  return s;
}

// Legend (enhanced text): the method with the lambda and T it used.
std::string label(const Config& c, Method m) {
  if (m == Method::drlhf) return format("DRLHF (T %d)", inner_steps(c));
  if (m == Method::oracle) return format("oracle, true reward (T %d)", inner_steps(c));
  return experiment::pbrl_label(m == Method::pbrl_value ? "PBRL-value" : "PBRL-Bellman", pbrl_settings(c, m, 1));
}

// ---- One instance ------------------------------------------------------------------------------

// One random instance: the hidden true reward, P and rho (uniform, settings' shared choice).
struct Instance {
  Real reward[S * A];
  Real transition[S * A * S];
  Real initial[S];

  explicit Instance(std::uint32_t seed) {
    pbrl::Rng rng(seed);
    pbrl::random_reward(rng, reward, S * A, Real(cfg::kRewardSparsity));
    pbrl::random_transition(rng, transition, S * A, S);
    for (Real& p : initial) p = Real(1) / S;
  }
  // The task as scored: the hidden reward, unregularized (the paper's "episode return").
  pbrl::Mdp<Real, S, A> truth() const {
    return pbrl::Mdp<Real, S, A>{reward, transition, initial, Real(settings::kDiscount),
                                 {pbrl::RegularizerKind::entropy, Real(0), nullptr}};
  }
};

// Per-instance seeds: every labeled method gets the same sampler and labeler streams, so their
// warm-up buffers are identical and later differences come from the methods alone.
struct Seeds {
  std::uint32_t instance, sampler, labeler, held_out, solver;
  Seeds(unsigned seed, long i) {
    const std::uint32_t base = static_cast<std::uint32_t>(seed) * 1000003u + static_cast<std::uint32_t>(i) * 10u;
    instance = base + 1;
    sampler = base + 2;
    labeler = base + 3;
    held_out = base + 4;
    solver = base + 5;
  }
};

// A labeled method's data side: its buffer, the problem reading it, its segment sampler and labeler.
struct Learner {
  Buffer buffer;
  Problem problem;
  Sampler sampler;
  pbrl::ReturnLabeler<Real, S, A> higher;
  pbrl::BradleyTerryLabeler<Real, S, A> bradley_terry;
  pbrl::Labeler<S, A, L> labeler;

  bool init(const Instance& inst, const Config& c, const Seeds& seeds) {
    Problem::Data data;
    data.transition = inst.transition;
    data.initial = inst.initial;
    data.discount = Real(settings::kDiscount);
    data.lower = {pbrl::RegularizerKind::entropy, Real(cfg::kTau), nullptr};
    data.reward = {Real(-cfg::kRewardBound), Real(cfg::kRewardBound)};
    data.preferences = &buffer;
    if (!check("problem init", problem.init(data))) return false;
    if (!check("sampler init", sampler.init(inst.transition, inst.initial, seeds.sampler, cfg::kBurnIn))) return false;
    higher.reward = inst.reward;
    bradley_terry.reward = inst.reward;
    bradley_terry.scale = Real(c.bt_scale);
    bradley_terry.rng.reseed(seeds.labeler);
    labeler = c.bradley_terry ? bradley_terry.labeler<L>() : higher.labeler<L>();
    return true;
  }
  bool collect(const Matrix& pi, int pairs) {
    for (int i = 0; i < pairs; ++i)
      if (!check("collect_pair", sampler.collect_pair(pi, L, labeler, buffer))) return false;
    return true;
  }
  // The paper's reward warm-up: full-batch projected gradient steps on the Bradley-Terry loss.
  bool warm_up_reward(Params& x) const {
    x = Params::Zero();
    Params grad;
    Real f(0);
    for (int k = 0; k < cfg::kWarmupRewardSteps; ++k) {
      if (!check("warm-up loss", problem.loss(x, f, grad))) return false;
      x -= Real(cfg::kRewardStep) * grad;
      problem.project_parameters(x);
    }
    return true;
  }
};

// Held-out pairs from the uniform policy with their true "higher return wins" labels (ties dropped).
struct HeldOut {
  std::vector<Segment> first, second;
  std::vector<float> label;  // 1: first preferred, 0: second preferred

  bool draw(const Instance& inst, std::uint32_t seed) {
    Sampler sampler;
    if (!check("held-out sampler", sampler.init(inst.transition, inst.initial, seed, cfg::kBurnIn))) return false;
    const Matrix uniform = Matrix::Constant(Real(1) / A);
    pbrl::ReturnLabeler<Real, S, A> truth{inst.reward};
    Segment d0, d1;
    for (int i = 0; i < cfg::kHeldOutPairs; ++i) {
      if (!check("held-out sample", sampler.sample(uniform, L, d0))) return false;
      if (!check("held-out sample", sampler.sample(uniform, L, d1))) return false;
      const float l = truth(d0, d1);
      if (l == 0.5f) continue;
      first.push_back(d0);
      second.push_back(d1);
      label.push_back(l);
    }
    return true;
  }
  // Fraction whose order the reward x predicts (a predicted tie counts one half).
  double accuracy(const Params& x) const {
    if (label.empty()) return NAN;
    double correct = 0;
    for (std::size_t i = 0; i < label.size(); ++i) {
      const Real z = pbrl::segment_return(x.data(), first[i]) - pbrl::segment_return(x.data(), second[i]);
      const double predicted = z > 0 ? 1.0 : (z < 0 ? 0.0 : 0.5);
      correct += label[i] == 1.0f ? predicted : 1.0 - predicted;
    }
    return correct / static_cast<double>(label.size());
  }
};

// Every round of the first kDenseRounds (where the curves move most), then about kPoints more.
bool checkpoint(long round, long rounds) {
  const long every = std::max(1L, rounds / kPoints);
  return round <= kDenseRounds || round % every == 0 || round == rounds;
}

// One checkpoint of one method on one instance.
struct Point {
  double true_return = 0, best_response = 0, accuracy = 0, policy_steps = 0, segment_steps = 0;
  double iterations = 0, lambda = NAN, env_steps_equivalent = 0, lower_gap = 0;
  // Set when the instance is merged: the regrets to its optimum, and the true return minus DRLHF's.
  double regret = 0, regret_best_response = 0, paired = 0;
};

// One instance: the true optimum and every method's runs (solve: PBRL solving to the verdict after
// the last labels, steps counted from there).
struct InstanceResult : experiment::InstanceRecord<Point, kMethodCount> {
  double optimum = 0;
};

// Curves over instances (merged in instance order, so --jobs does not change them).
struct Results : experiment::Totals<Point, kMethodCount> {
  using Record = InstanceResult;
  std::vector<double> optimum;  // per instance

  void merge(const InstanceResult& r) {
    optimum.push_back(r.optimum);
    experiment::InstanceRecord<Point, kMethodCount> with = r;
    const auto& ref = r.points[kDrlhf];
    for (auto& points : with.points)
      for (std::size_t j = 0; j < points.size(); ++j) {
        Point& p = points[j];
        p.regret = r.optimum - p.true_return;
        p.regret_best_response = r.optimum - p.best_response;
        p.paired = j < ref.size() ? p.true_return - ref[j].true_return : NAN;
      }
    Totals::merge(with);
  }
  // The original program's mean of the optimum (same summation order, same digits).
  double optimum_mean() const {
    double m = 0;
    for (double v : optimum) m += v / static_cast<double>(optimum.size());
    return m;
  }
};

// Runs the selected methods on instances; one Runner per thread.
class Runner {
 public:
  explicit Runner(const Config& c) : c_(c) {}

  bool run_instance(long i, experiment::Progress& progress, InstanceResult& result) {
    const Seeds seeds(static_cast<unsigned>(c_.seed), i);
    inst_ = std::make_unique<Instance>(seeds.instance);
    auto best = std::make_unique<pbrl::RlhfOracle<Real, S, A>>();
    if (!check("optimum", best->solve(inst_->truth(), 100000, Real(1e-12)))) return false;
    result.optimum = best->value_rho();
    held_out_ = std::make_unique<HeldOut>();
    if (!held_out_->draw(*inst_, seeds.held_out)) return false;
    return experiment::run_methods(c_.run, result, [&](int mi) { return run_method(mi, seeds, progress, result); });
  }

 private:
  // One method on the current instance: one Point per checkpoint. Every object starts fresh (the
  // best-response warm start included), so a method's numbers do not depend on what ran before.
  bool run_method(int mi, const Seeds& seeds, experiment::Progress& progress, InstanceResult& result) {
    const Method method = kMethods[mi];
    const bool pbrl_method = is_pbrl(method);
    const auto truth = inst_->truth();
    ws_ = std::make_unique<Workspace>();
    gap_ws_ = std::make_unique<Workspace>();
    best_response_ = std::make_unique<Problem::BilevelValueWorkspace>();  // default settings
    learner_ = std::make_unique<Learner>();  // the oracle's buffer stays empty
    pbrl_ = std::make_unique<PbrlSolver>();
    drlhf_ = std::make_unique<DrlhfSolver>();
    pbrl::Evaluation<Real, S, A> eval, gap_eval;
    if (!learner_->init(*inst_, c_, seeds)) return false;
    const Matrix uniform = Matrix::Constant(Real(1) / A);

    Params x0;
    if (labeled(method)) {
      if (!learner_->collect(uniform, cfg::kWarmupPairs) || !learner_->warm_up_reward(x0)) return false;
    } else {
      x0 = Eigen::Map<const Params>(inst_->reward);  // the true reward, inside the box
    }
    const auto drlhf_s = drlhf_settings(c_, method, seeds.solver);
    if (pbrl_method) {
      if (!check("Pbrl init", pbrl_->init(learner_->problem, pbrl_settings(c_, method, seeds.solver), x0, Matrix::Zero())))
        return false;
    } else {
      if (!check("Drlhf init", drlhf_->init(learner_->problem, drlhf_s, x0, uniform))) return false;
    }

    Matrix pi;
    auto current_policy = [&]() -> const Matrix& {
      if (pbrl_method) {
        pbrl_->policy(pi);
        return pi;
      }
      return drlhf_->policy();
    };
    long k = 0, env = 0;
    double lambda = pbrl_method ? double(pbrl_->lambda(0)) : NAN;
    auto record = [&]() -> bool {
      const Matrix& policy = current_policy();
      const Params& x = pbrl_method ? pbrl_->x() : drlhf_->x();
      Point p;
      if (!check("true return", pbrl::evaluate(truth, policy, *ws_, eval))) return false;
      p.true_return = eval.value_rho;
      pbrl::BestResponseValue<Real> honest;
      if (!check("true return at the best response",
                 learner_->problem.value_at_best_response(x, truth, *best_response_, honest)))
        return false;
      p.best_response = honest.value;
      result.certify(honest);
      // The learner's lower-level gap on M_tau(x): V^{pi*(x)}(rho) - V^{pi}(rho) (pi*(x) certified above).
      Problem::Model model;
      pbrl::Mdp<Real, S, A> mdp;
      if (!check("M_tau(x)", learner_->problem.build(x, model, mdp))) return false;
      if (!check("lower-level gap", pbrl::evaluate(mdp, policy, *gap_ws_, gap_eval))) return false;
      p.lower_gap = best_response_->optimum.evaluation.value_rho - gap_eval.value_rho;
      p.accuracy = labeled(method) ? held_out_->accuracy(x) : NAN;
      p.policy_steps = static_cast<double>(pbrl_method ? pbrl_->environment_steps() : drlhf_->environment_steps());
      p.segment_steps = static_cast<double>(learner_->sampler.steps());
      p.iterations = static_cast<double>(k);
      p.lambda = lambda;
      p.env_steps_equivalent = static_cast<double>(env);
      result.points[mi].push_back(p);
      return true;
    };

    if (!record()) return false;  // after the warm-up, before any policy learning
    PbrlSolver::Report report;
    for (long round = 1; round <= c_.rounds; ++round) {
      if (labeled(method) && !learner_->collect(current_policy(), cfg::kPairsPerRound)) return false;
      for (long j = iterations_in_round(c_, round); j > 0; --j) {
        if (pbrl_method) {
          if (!check(name(method), pbrl_->step(&report))) return false;
          env += (static_cast<long>(report.inner_steps) + 2) * kBH;
          lambda = double(report.lambda);
          result.tolerance_met[mi] = report.tolerance_met ? 1 : 0;
        } else {
          if (!check(name(method), drlhf_->step())) return false;
          env += static_cast<long>(drlhf_s.policy_steps) * kBH;
        }
        ++k;
      }
      if (pbrl_method && round == c_.rounds && c_.hp.solves(c_.sampled)) {
        // The labels are all in: solve to the verdict. The first convergence_window steps are
        // plain steps, so that the verdict rests on steps with the final labels only.
        experiment::SolveRecord& record = result.solve[mi];
        const long window = pbrl_->settings().convergence_window;
        while (!record.done && record.steps < c_.hp.solve_cap(cfg::kSolveSteps)) {
          const long before = record.steps;
          if (record.steps < window) {
            const auto start = std::chrono::steady_clock::now();
            if (!check(name(method), pbrl_->step(&report))) return false;
            record.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            ++record.steps;
            record.gap_bound = double(report.gap_bound);
            record.lambda = double(report.lambda);
          } else {
            if (!check(name(method), experiment::solve_one_step(*pbrl_, report, record))) return false;
            if (record.steps == before) break;  // at its verdict: no step taken
          }
          env += (static_cast<long>(report.inner_steps) + 2) * kBH;
          lambda = double(report.lambda);
          result.tolerance_met[mi] = report.tolerance_met ? 1 : 0;
          ++k;
        }
      }
      if (checkpoint(round, c_.rounds)) {
        const std::int64_t counted = pbrl_method ? pbrl_->environment_steps() : drlhf_->environment_steps();
        if (c_.sampled && counted != env) {
          std::fprintf(stderr, "\n%s counted %" PRId64 " environment steps after %ld iterations, expected %ld\n",
                       name(method), counted, k, env);
          return false;
        }
        if (!record()) return false;
      }
      progress.add(1);
    }
    return true;
  }

  const Config& c_;
  std::unique_ptr<Instance> inst_;
  std::unique_ptr<HeldOut> held_out_;
  std::unique_ptr<Workspace> ws_, gap_ws_;
  std::unique_ptr<Problem::BilevelValueWorkspace> best_response_;
  std::unique_ptr<Learner> learner_;
  std::unique_ptr<PbrlSolver> pbrl_;
  std::unique_ptr<DrlhfSolver> drlhf_;
};

// Checkpoint positions: labels collected when the point is recorded.
std::vector<long> labels_at(const Config& c) {
  std::vector<long> v;
  for (long r = 0; r <= c.rounds; ++r)
    if (checkpoint(r, c.rounds)) v.push_back(cfg::kWarmupPairs + r * cfg::kPairsPerRound);
  return v;
}

// Every instance on c.jobs threads (one Runner each), merged in instance order.
bool run_all(const Config& c, Results& results, double& seconds) {
  long methods = 0;
  for (bool r : c.run) methods += r ? 1 : 0;
  return experiment::run_all<Runner>(c, "rlhf (label rounds, all instances and methods)", c.instances * methods * c.rounds,
                                     results, seconds);
}

// ---- Output ------------------------------------------------------------------------------------

// The part of the settings that depends on the gradient mode: the policy learners, the PBRL
// methods' solver settings (experiment::describe), DRLHF and the oracle.
std::string mode_text(const Config& c) {
  std::string t;
  const bool pmd = policy_oracle(c) == pbrl::OracleKind::policy_mirror_descent;
  const bool default_learner = !c.hp.oracle && !c.hp.oracle_step;
  if (c.sampled)
    t += format("gradient: sampled; policy learners: softmax policy gradient, step %g (%s), H %d (paper), B %d (paper)\n",
                double(policy_step(c)), c.hp.oracle_step ? "--oracle-step" : "paper", settings::kHorizon, cfg::kBatch);
  else
    t += format("gradient: exact; policy learners: %s, step %g (%s)\n", pmd ? "PMD" : "softmax policy gradient",
                double(policy_step(c)), default_learner ? "choice" : "command line");
  for (int mi = 0; mi < kMethodCount; ++mi)
    if (c.run[mi] && is_pbrl(kMethods[mi])) {
      const auto s = pbrl_settings(c, kMethods[mi], 1);
      t += std::string(name(kMethods[mi])) + ": " + experiment::describe(s) + ", step_y " + format("%g", double(s.step_y)) +
           "; softmax y\n";
    }
  if (c.run[kDrlhf])
    t += format("drlhf: %d reward step(s) of %g per iteration, then %d policy-learner steps of %g\n",
                cfg::kRewardStepsPerIteration, double(reward_step(c)), inner_steps(c), double(policy_step(c)));
  if (c.run[3])
    t += format("oracle: %d policy-learner steps of %g per iteration on M_tau(r_true), no labels (plotted at the same x)\n",
                inner_steps(c), double(policy_step(c)));
  t += format("work per iteration (env_steps_equivalent): PBRL (T_k+2)*B*H with T_k the oracle steps of iteration k, "
              "DRLHF and oracle T*B*H; B*H = %ld; %s\n",
              kBH, c.sampled ? "sampled mode: the solvers' own count" : "exact mode: the steps sampled mode would take");
  return t;
}

// The settings block, written as the CSV's comment header and printed with the results: every value
// the run used.
std::string settings_text(const Config& c) {
  std::string t;
  t += format("tabular RLHF: %d states, %d actions, gamma %g (choice), rho uniform (choice)\n", S, A, settings::kDiscount);
  t += format("hidden true reward: uniform [0,1), entries < %g set to 0 (choice); true return unregularized\n",
              cfg::kRewardSparsity);
  t += format("learners' M_tau(x): entropy tau %g (paper); reward model r_x = x in [-%g, %g]^{S*A} (choice)\n", cfg::kTau,
              cfg::kRewardBound, cfg::kRewardBound);
  t += c.bradley_terry ? format("labeler: Bradley-Terry, scale %g\n", c.bt_scale)
                       : std::string("labeler: higher true return wins (paper), ties 0.5\n");
  t += format("segments: %d state-action pairs (choice; paper 25), burn-in %d (choice), from each learner's policy\n", L,
              cfg::kBurnIn);
  t += format("labels: warm-up %d pairs (choice; paper 576), then %d per round (choice; paper 16), buffer %d (choice; "
              "paper 3000), total %ld (%ld rounds)\n",
              cfg::kWarmupPairs, cfg::kPairsPerRound, cfg::kBufferCapacity,
              cfg::kWarmupPairs + c.rounds * cfg::kPairsPerRound, c.rounds);
  t += format("reward warm-up: %d full-batch gradient steps of %g (paper: 500 epochs; not changed by --step)\n",
              cfg::kWarmupRewardSteps, cfg::kRewardStep);
  if (c.hp.iterations)
    t += format("run length: %ld outer iterations per method (--iterations) = %ld label rounds of %d iterations, the "
                "last one %ld\n",
                c.iterations, c.rounds, cfg::kStepsPerRound, iterations_in_round(c, c.rounds));
  else
    t += format("run length: %d outer iterations per round (choice) = %ld outer iterations per method\n",
                cfg::kStepsPerRound, c.iterations);
  t += format("T = %d policy-learner steps per iteration for every method (%s; tolerance mode: PBRL's least number)\n",
              inner_steps(c), c.hp.inner_steps ? "--inner-steps" : "choice");
  t += format("alpha_x = %g: PBRL's x step and DRLHF's reward step (%s); PBRL's alpha_y %g (choice); lambda default %g "
              "(choice)\n",
              double(reward_step(c)), c.hp.step ? "--step" : "choice", cfg::kStepY, cfg::kLambda);
  t += mode_text(c);
  t += format("held-out accuracy: %d pairs from the uniform policy, true labels, ties dropped (choice)\n",
              cfg::kHeldOutPairs);
  t += format("instances %ld (%s), seed %u: instance i uses seeds %u*1000003 + 10 i + 1..5\n", c.instances,
              c.quick ? "--quick" : "choice", static_cast<unsigned>(c.seed), static_cast<unsigned>(c.seed));
  t += format("checkpoints: after every one of the first %ld rounds, then every max(1, rounds/%d) rounds and the last\n",
              kDenseRounds, kPoints);
  t += format("pi*(x): soft value iteration on M_tau(x), certified optimality gap <= %.1e\n",
              static_cast<double>(pbrl::BestResponseSettings<Real>{}.tolerance));
  return t;
}

bool write_csv(const std::string& path, const Config& c, const Results& r, const std::vector<long>& at) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "%s", experiment::prefixed(settings_text(c), "# ").c_str());
  std::fprintf(f, "# true optimum V*_true(rho), mean over instances: %.6f\n", r.optimum_mean());
  std::fprintf(f, "# columns: true_return_current_policy = V^pi_true(rho) of the learner's current policy (mean and\n"
                  "# standard error over instances; the paper plots this one); true_return_best_response =\n"
                  "# V^{pi*(x)}_true(rho) of the optimal regularized policy pi*(x) of the learned reward's M_tau(x)\n"
                  "# (soft value iteration, certified optimality gap <= %.1e: what the learned reward is worth to a\n"
                  "# learner that optimizes it exactly);\n"
                  "# heldout_accuracy = fraction of held-out pairs ordered right by the learned reward (nan: oracle);\n"
                  "# policy_env_steps = environment steps of the policy learners (sampled mode), segment_env_steps =\n"
                  "# steps taken to draw labeled segments; both means over instances;\n"
                  "# iterations = outer iterations so far; lambda = PBRL's penalty constant of the last step (tolerance\n"
                  "# mode: as adapted; nan: DRLHF, oracle); env_steps_equivalent = (T_k+2)*B*H per PBRL iteration,\n"
                  "# T*B*H per DRLHF or oracle iteration, summed (exact mode: what sampled mode would take);\n"
                  "# lower_level_gap = V^{pi*(x)}(rho) - V^pi(rho) on the learner's M_tau(x), exact;\n"
                  "# regret_current_policy = V*_true(rho) - V^pi_true(rho), regret_best_response = V*_true(rho) -\n"
                  "# V^{pi*(x)}_true(rho), per instance; paired_diff_drlhf = V^pi_true(rho) of this method minus DRLHF's\n"
                  "# on the same instance (nan when DRLHF did not run); each mean and standard error over instances\n",
               static_cast<double>(pbrl::BestResponseSettings<Real>{}.tolerance));
  std::fprintf(f, "method,labels,true_return_current_policy_mean,true_return_current_policy_se,"
                  "true_return_best_response_mean,true_return_best_response_se,heldout_accuracy_mean,"
                  "heldout_accuracy_se,policy_env_steps_mean,segment_env_steps_mean,iterations_mean,lambda_mean,"
                  "env_steps_equivalent_mean,lower_level_gap_mean,lower_level_gap_se,regret_current_policy_mean,"
                  "regret_current_policy_se,regret_best_response_mean,regret_best_response_se,paired_diff_drlhf_mean,"
                  "paired_diff_drlhf_se\n");
  for (int mi = 0; mi < kMethodCount; ++mi)
    for (std::size_t p = 0; p < r.curve(mi, &Point::true_return).values.size() && p < at.size(); ++p)
      std::fprintf(f, "%s,%ld,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%.0f,%.0f,%.0f,%.6g,%.0f,%.6e,%.3e,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n",
                   name(kMethods[mi]), at[p], r.curve(mi, &Point::true_return).mean(p), r.curve(mi, &Point::true_return).stderr_of_mean(p),
                   r.curve(mi, &Point::best_response).mean(p), r.curve(mi, &Point::best_response).stderr_of_mean(p), r.curve(mi, &Point::accuracy).mean(p),
                   r.curve(mi, &Point::accuracy).stderr_of_mean(p), r.curve(mi, &Point::policy_steps).mean(p), r.curve(mi, &Point::segment_steps).mean(p),
                   r.curve(mi, &Point::iterations).mean(p), r.curve(mi, &Point::lambda).mean(p), r.curve(mi, &Point::env_steps_equivalent).mean(p),
                   r.curve(mi, &Point::lower_gap).mean(p), r.curve(mi, &Point::lower_gap).stderr_of_mean(p), r.curve(mi, &Point::regret).mean(p),
                   r.curve(mi, &Point::regret).stderr_of_mean(p), r.curve(mi, &Point::regret_best_response).mean(p),
                   r.curve(mi, &Point::regret_best_response).stderr_of_mean(p), r.curve(mi, &Point::paired).mean(p), r.curve(mi, &Point::paired).stderr_of_mean(p));
  return std::fclose(f) == 0;
}

// Regrets of the current policy (left), paired differences to DRLHF (middle), regret of pi*(x)
// (right), against labels. The two regret panels share one y range, logarithmic when every band is
// above zero.
bool write_plot(const std::string& png, const std::string& csv, const Config& c, const Results& r) {
  std::vector<experiment::Series> all, pbrl_only;
  std::vector<double> values;
  bool positive = true;
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    all.push_back({name(kMethods[mi]), label(c, kMethods[mi])});
    if (is_pbrl(kMethods[mi])) pbrl_only.push_back(all.back());
    for (const experiment::Curve& curve : {r.curve(mi, &Point::regret), r.curve(mi, &Point::regret_best_response)})
      for (std::size_t j = 0; j < curve.values.size(); ++j) {
        const double lo = curve.mean(j) - curve.stderr_of_mean(j), hi = curve.mean(j) + curve.stderr_of_mean(j);
        positive = positive && lo > 0;
        values.push_back(lo);
        values.push_back(hi);
      }
  }
  std::string range;
  if (positive) {
    double lo = INFINITY, hi = 0;
    for (double v : values) lo = std::min(lo, v), hi = std::max(hi, v);
    range = format("%.6g:%.6g", lo / 1.5, hi * 1.5);
  } else {
    range = experiment::common_range(values);
  }
  const std::string xlabel = "preference labels collected (oracle: none, same schedule)";
  const std::string title =
      format("tabular RLHF, %s gradients, %s labels, %ld instances (mean ± standard error over instances; optimum V^{*}_{true}(ρ) = %.3f)",
             c.sampled ? "sampled" : "exact", c.bradley_terry ? "Bradley-Terry" : "higher-return-wins", c.instances,
             r.optimum_mean());
  const std::string log_on = positive ? "set logscale y\n" : "unset logscale y\n";
  std::string script = experiment::figure_head(title, 3);
  script += log_on;
  script += experiment::band_panel(csv, all, 2, 1, 16, xlabel, "regret V^{*}_{true}(ρ) - V^{π}_{true}(ρ)",
                                   "regret of the current policy π (the paper's metric)", range);
  script += "unset logscale y\n";
  if (c.run[kDrlhf] && !pbrl_only.empty()) {
    script += "set arrow from graph 0, first 0 to graph 1, first 0 nohead lw 1.5 lc rgb 'black'\n";
    // y range from the checkpoints after the first kDenseRounds rounds (and 0): the first rounds,
    // where a method may still be far behind, would squeeze the differences of the rest.
    std::vector<double> diffs = {0.0};
    for (int mi = 0; mi < kMethodCount; ++mi)
      if (c.run[mi] && is_pbrl(kMethods[mi]))
        for (std::size_t j = 0; j < r.curve(mi, &Point::paired).values.size(); ++j)
          if (static_cast<long>(j) > kDenseRounds || r.curve(mi, &Point::paired).values.size() <= static_cast<std::size_t>(kDenseRounds) + 1) {
            diffs.push_back(r.curve(mi, &Point::paired).mean(j) - r.curve(mi, &Point::paired).stderr_of_mean(j));
            diffs.push_back(r.curve(mi, &Point::paired).mean(j) + r.curve(mi, &Point::paired).stderr_of_mean(j));
          }
    script += experiment::band_panel(csv, pbrl_only, 2, 1, 20, xlabel, "V^{π}_{true}(ρ) of PBRL - of DRLHF",
                                     format("paired difference to DRLHF per instance (> 0: PBRL better; y range from round %ld)",
                                            kDenseRounds + 1),
                                     experiment::common_range(diffs));
    script += "unset arrow\n";
  } else {
    script += "set multiplot next\n";
  }
  script += log_on;
  script += experiment::band_panel(csv, all, 2, 1, 18, xlabel, "regret V^{*}_{true}(ρ) - V^{π^*(x)}_{true}(ρ)",
                                   "regret of π^*(x), the exact solution of M_{τ}(x)", range);
  script += "unset logscale y\nunset multiplot\n";
  return experiment::plot(png, script, 1800, 520);
}

void print_table(const Config& c, const Results& r, long last_labels) {
  int first = 0;
  while (!c.run[first]) ++first;
  const std::size_t last = r.last(first);
  const double optimum_mean = r.optimum_mean();
  std::printf("\ntabular RLHF, %ld instances, %s gradients, %s labels, %ld labels (%d warm-up + %ld rounds of %d)\n",
              c.instances, c.sampled ? "sampled" : "exact", c.bradley_terry ? "Bradley-Terry" : "higher-return-wins",
              last_labels, cfg::kWarmupPairs, c.rounds, cfg::kPairsPerRound);
  std::printf("true return V^pi_true(rho), mean +- s.e. over instances; true optimum %.4f\n", optimum_mean);
  std::printf("current policy: the learner's policy (the paper's metric); pi*(x): the optimal regularized policy of\n"
              "the learned reward's M_tau(x), solved exactly (what the learned reward is worth)\n");
  std::printf("%-13s %18s %18s %10s %18s %18s %16s\n", "method", "start", "end", "gap closed", "pi*(x) start",
              "pi*(x) end", "held-out acc end");
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    const experiment::Curve& t = r.curve(mi, &Point::true_return);
    const double start = t.mean(0), end = t.mean(last);
    const double closed = (end - start) / (optimum_mean - start);
    char acc[32];
    if (labeled(kMethods[mi]))
      std::snprintf(acc, sizeof acc, "%.3f +- %.3f", r.curve(mi, &Point::accuracy).mean(last), r.curve(mi, &Point::accuracy).stderr_of_mean(last));
    else
      std::snprintf(acc, sizeof acc, "(true reward)");
    const experiment::Curve& b = r.curve(mi, &Point::best_response);
    std::printf("%-13s %9.4f +- %6.4f %9.4f +- %6.4f %9.1f%% %9.4f +- %6.4f %9.4f +- %6.4f %16s\n", name(kMethods[mi]),
                start, t.stderr_of_mean(0), end, t.stderr_of_mean(last), 100 * closed, b.mean(0), b.stderr_of_mean(0),
                b.mean(last), b.stderr_of_mean(last), acc);
  }
  std::printf("(pi*(x) certified: largest certified optimality gap on M_tau(x) %.2e; %ld checkpoint(s) above the "
              "tolerance)\n",
              r.worst_certificate, r.not_converged);
  // Paired differences at the end (the same instances, seeds and warm-up for every method).
  auto paired = [&](Method a, Method b) {
    const int ia = static_cast<int>(a), ib = static_cast<int>(b);
    if (!c.run[ia] || !c.run[ib]) return;
    experiment::Curve d;
    int wins = 0;
    for (long i = 0; i < c.instances; ++i) {
      const double va = r.curve(ia, &Point::true_return).values[last][static_cast<std::size_t>(i)];
      const double vb = r.curve(ib, &Point::true_return).values[last][static_cast<std::size_t>(i)];
      d.add(0, va - vb);
      wins += va > vb ? 1 : 0;
    }
    std::printf("paired end difference %s - %s: %+.4f +- %.4f (higher on %d of %ld instances)\n", name(a), name(b),
                d.mean(0), d.stderr_of_mean(0), wins, c.instances);
  };
  paired(Method::pbrl_value, Method::drlhf);
  paired(Method::pbrl_bellman, Method::drlhf);
  paired(Method::oracle, Method::pbrl_value);
  paired(Method::oracle, Method::pbrl_bellman);
  paired(Method::oracle, Method::drlhf);
  // Regrets, gaps and the schedule at the end.
  std::printf("%-13s %9s %10s %20s %20s %20s %9s %8s\n", "method (end)", "iters", "env eq.", "regret current",
              "regret pi*(x)", "lower-level gap", "lambda", "wall s");
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    std::printf("%-13s %9.0f %10.0f %11.4f +- %-6.4f %11.4f +- %-6.4f %11.3e +- %-6.1e %9.4g %8.2f\n", name(kMethods[mi]),
                r.curve(mi, &Point::iterations).mean(last), r.curve(mi, &Point::env_steps_equivalent).mean(last), r.curve(mi, &Point::regret).mean(last),
                r.curve(mi, &Point::regret).stderr_of_mean(last), r.curve(mi, &Point::regret_best_response).mean(last),
                r.curve(mi, &Point::regret_best_response).stderr_of_mean(last), r.curve(mi, &Point::lower_gap).mean(last),
                r.curve(mi, &Point::lower_gap).stderr_of_mean(last), r.curve(mi, &Point::lambda).mean(last), r.seconds[mi]);
  }
  std::printf("(regret: optimum minus true return per instance; lower-level gap: V^{pi*(x)}(rho) - V^pi(rho) on the\n"
              " learner's own M_tau(x); env eq.: (T_k+2)*B*H per PBRL iteration, T*B*H per DRLHF/oracle iteration)\n");
  for (int mi = 0; mi < kMethodCount; ++mi)
    if (c.run[mi] && is_pbrl(kMethods[mi]) && c.hp.tolerance())
      std::printf("%s: final lambda %.4g (mean); tolerance met at the end in %ld of %ld instances\n", name(kMethods[mi]),
                  r.curve(mi, &Point::lambda).mean(last), r.tolerance_met[mi], c.instances);
  for (int mi = 0; mi < kMethodCount; ++mi)
    if (c.run[mi] && is_pbrl(kMethods[mi]) && c.hp.solves(c.sampled))
      experiment::print_solve_records("rlhf", name(kMethods[mi]), r.solves[mi], "instance (steps after the last labels)");
}

// --sweep-lambda: the PBRL methods at each fixed lambda, exact and sampled, then tolerance mode.
int run_sweep(Config c) {
  const double tolerance = experiment::sweep_tolerance(c.hp);
  for (int mi = 0; mi < kMethodCount; ++mi) c.run[mi] = c.run[mi] && is_pbrl(kMethods[mi]);
  Config exact = c, sampled = c;
  exact.sampled = false, sampled.sampled = true;
  exact.hp.lambda_start.reset(), sampled.hp.lambda_start.reset();
  exact.hp.gap_tolerance.reset(), sampled.hp.gap_tolerance.reset();
  const experiment::SweepOutput o{
      "rlhf", "rlhf_lambda_sweep", "true_return_best_response", "true_return_current_policy", true,
      settings_text(exact) + "sampled-mode runs:\n" + mode_text(sampled) + "sweep: lambda in {" +
          experiment::lambda_list(c.sweep, "%g") +
          "}, exact and sampled (the lambda above is replaced); tolerance mode at epsilon " + format("%g", tolerance) +
          "\n" +
          "gap = final V^{pi*(x)}(rho) - V^{pi_y}(rho) on M_tau(x); value = final true return of "
          "pi*(x); value_current = final true return of pi_y; paper_lambda = this program's default "
          "lambda (a choice)\n",
      format("tabular RLHF, %ld instances: λ sweep, tolerance ε = %g", c.instances, tolerance),
      "lower-level gap on M_{τ}(x)", "V^{π^*(x)}_{true}(ρ)",
      format("dotted: this program's default λ = %g, a choice; the paper's RLHF ran on Atari", cfg::kLambda)};
  return experiment::run_sweep<Results>(c, o, run_all, [](const Results& r, int mi) {
    const std::size_t last = r.last(mi);
    const experiment::Curve gap = r.curve(mi, &Point::lower_gap), value = r.curve(mi, &Point::best_response),
                            current = r.curve(mi, &Point::true_return);
    experiment::SweepRow row;
    row.method = name(kMethods[mi]);
    row.label = kMethods[mi] == Method::pbrl_value ? "PBRL-value" : "PBRL-Bellman";
    row.lambda = r.curve(mi, &Point::lambda).mean(last);
    row.paper_lambda = cfg::kLambda;  // the program's default (a choice; the paper's RLHF ran on Atari)
    row.gap = gap.mean(last), row.gap_se = gap.stderr_of_mean(last);
    row.value = value.mean(last), row.value_se = value.stderr_of_mean(last);
    row.value_current = current.mean(last), row.value_current_se = current.stderr_of_mean(last);
    row.seconds = r.seconds[mi];
    return row;
  });
}

int run(const Config& c) {
  if (!experiment::make_directories(c.out)) return 1;
  if (!c.sweep.empty()) return run_sweep(c);
  Results results;
  double seconds = 0;
  if (!run_all(c, results, seconds)) return 1;
  const std::vector<long> at = labels_at(c);
  const int code = experiment::write_outputs(
      c.out, "rlhf_tabular", settings_text(c), seconds, "error: ",
      [&](const std::string& csv) { return write_csv(csv, c, results, at); },
      [&](const std::string& png, const std::string& csv) { return write_plot(png, csv, c, results); },
      [&] { print_table(c, results, at.back()); });
  if (code != 0) return code;
  const double optimum_mean = results.optimum_mean();
  for (int mi = 0; mi < kMethodCount; ++mi) {
    if (!c.run[mi]) continue;
    const std::size_t last = results.last(mi);
    const char* n = name(kMethods[mi]);
    const experiment::Curve current = results.curve(mi, &Point::true_return), best = results.curve(mi, &Point::best_response);
    experiment::print_summary("rlhf", n,
                              {{"true_return_current_policy_start", current.mean(0)},
                               {"true_return_current_policy_end", current.mean(last)},
                               {"true_return_best_response_start", best.mean(0)},
                               {"true_return_best_response_end", best.mean(last)},
                               {"optimal_return", optimum_mean},
                               {"regret_current_policy_end", results.curve(mi, &Point::regret).mean(last)},
                               {"lower_level_gap_end", results.curve(mi, &Point::lower_gap).mean(last), "%.6g"}});
    if (mi != kDrlhf && c.run[kDrlhf])
      experiment::print_summary("rlhf", n, {{"paired_diff_drlhf_end", results.curve(mi, &Point::paired).mean(last)}});
  }
  return 0;
}

std::string usage() {
  return format(
             "usage: rlhf_experiment [options]\n"
             "Tabular RLHF: true return against preference labels for PBRL (value and Bellman penalty,\n"
             "lambda %g, T %d), the DRLHF-style baseline and an oracle trained on the true reward; the true\n"
             "return of the learner's current policy (the paper's metric) and of the optimal regularized\n"
             "policy pi*(x) of the learned reward (the bilevel answer). The plot shows regrets to the\n"
             "optimum and the paired difference of each PBRL method to DRLHF on the same instances.\n"
             "  --gradient exact|sampled        model-based gradients (default), or every policy learner\n"
             "                                  from sampled policy gradients (B = %d, H = %d)\n"
             "  --labeler return|bradley-terry  higher true return wins (default, the paper's), or\n"
             "                                  stochastic Bradley-Terry labels\n"
             "  --bt-scale X                    Bradley-Terry scale (default 1, the paper's model)\n"
             "  --methods LIST                  comma-separated subset of pbrl_value,pbrl_bellman,drlhf,oracle\n"
             "  --penalty-kind value|bellman|both  PBRL penalties to run (default both; with --methods: both apply)\n"
             "  --instances N                   random instances (default %d)\n"
             "  --seed N                        base seed (default 1)\n"
             "  --labels N                      total labels, warm-up included (default %d, at least %d):\n"
             "                                  %d warm-up pairs, then rounds of %d pairs and %d outer iterations\n",
             cfg::kLambda, cfg::kInner, cfg::kBatch, settings::kHorizon, cfg::kInstances, cfg::kLabels,
             cfg::kWarmupPairs + cfg::kPairsPerRound, cfg::kWarmupPairs, cfg::kPairsPerRound, cfg::kStepsPerRound) +
         "Hyperparameters (--lambda-start ... --inner-steps-max: PBRL-value and PBRL-Bellman alike):\n" +
         experiment::Hyperparameters::usage() +
         format("  Here: --step is the reward (x) step alpha_x of PBRL and DRLHF's reward step (default %g;\n"
                "  PBRL's y step stays %g, the reward warm-up keeps %g); --inner-steps, --oracle and\n"
                "  --oracle-step set the policy learner of every method (PBRL's oracle, DRLHF's and the\n"
                "  oracle's RL steps; default T %d, PMD step %g exact, policy gradient step %g sampled);\n"
                "  --iterations N: N outer iterations per method, run as ceil(N/%d) label rounds of %d\n"
                "  iterations (the last one shorter); the labels follow (%d + %d per round); not with --labels.\n",
                cfg::kRewardStep, cfg::kStepY, cfg::kRewardStep, cfg::kInner, cfg::kOracleStep, cfg::kPgStep,
                cfg::kStepsPerRound, cfg::kStepsPerRound, cfg::kWarmupPairs, cfg::kPairsPerRound) +
         "  --sweep-lambda L1,L2,...        the PBRL methods at each fixed lambda, exact and sampled, and in\n"
         "                                  tolerance mode (--gap-tolerance, default 0.01): final lower-level\n"
         "                                  gap and true returns against lambda in DIR/rlhf_lambda_sweep.csv/.png\n"
         "  --jobs N                        instances run on N threads (default 1; results do not depend on it)\n"
         "  --out DIR                       output directory (default results)\n" +
         format("  --quick                         %d instances, %ld labels (a demo of a few seconds)\n", kQuickInstances,
                kQuickLabels) +
         "  --quiet                         no progress on stderr\n"
         "  --help                          this text\n"
         "Writes DIR/rlhf_tabular.csv and DIR/rlhf_tabular.png; prints the settings, a table and lines\n"
         "summary,rlhf,<method>,<metric>,<value>.\n";
}

}  // namespace

int main(int argc, char** argv) {
  experiment::Options args(argc, argv, usage());
  Config c;
  const experiment::Program program = {"instances", "exact", kNames,
                                       "--oracle pmd needs exact gradients: sampled mode learns the policies from "
                                       "rollouts by policy gradient (a sweep's sampled runs fall back to it)"};
  std::string penalty_kind;
  bool labels_given = false;
  const experiment::OptionTexts texts = experiment::read_options(
      args, c, program, cfg::kInstances, kQuickInstances,
      [&] {
        c.bradley_terry = args.choice("labeler", "return", {"return", "bradley-terry"}) == "bradley-terry";
        c.bt_scale = args.real("bt-scale", 1.0);
        penalty_kind = args.choice("penalty-kind", "both", {"value", "bellman", "both"});
      },
      [&] {
        labels_given = args.has("labels");
        c.labels =
            args.integer("labels", c.quick ? kQuickLabels : cfg::kLabels, cfg::kWarmupPairs + cfg::kPairsPerRound);
      });
  const int code = experiment::check_options(
      args, c, texts, program,
      [&](experiment::Stage stage) -> std::string {
        switch (stage) {
          case experiment::Stage::start:
            if (!(c.bt_scale > 0)) return "--bt-scale must be positive";
            break;
          case experiment::Stage::after_out:
            if (c.hp.inner_steps && *c.hp.inner_steps > pbrl::kMaxInnerSteps)
              return "--inner-steps must be at most " + std::to_string(pbrl::kMaxInnerSteps);
            if (c.hp.iterations) {
              if (labels_given) return "--iterations and --labels both set the run length: give one";
              if (*c.hp.iterations > 10000000L) return "--iterations must be at most 10000000";
              c.iterations = *c.hp.iterations;
              c.rounds = (c.iterations + cfg::kStepsPerRound - 1) / cfg::kStepsPerRound;
            } else {
              c.rounds = (c.labels - cfg::kWarmupPairs) / cfg::kPairsPerRound;
              c.iterations = c.rounds * cfg::kStepsPerRound;
            }
            break;
          case experiment::Stage::after_methods:
            if (penalty_kind == "value") c.run[1] = false;
            if (penalty_kind == "bellman") c.run[0] = false;
            if (!c.run[0] && !c.run[1] && !c.run[2] && !c.run[3]) return "no method left to run (--methods, --penalty-kind)";
            break;
          case experiment::Stage::after_sweep:
            if (!c.sweep.empty() && !c.run[0] && !c.run[1]) return "--sweep-lambda runs the PBRL methods: --methods has none";
            break;
        }
        return {};
      },
      // A sweep: both gradient modes.
      [](const Config& run) -> std::string {
        for (Method m : {Method::pbrl_value, Method::pbrl_bellman})
          if (pbrl::validate(pbrl_settings(run, m, 1), A) != Status::ok)
            return "these hyperparameters are not valid PBRL settings (see --help and solver/settings.hpp)";
        for (Method m : {Method::drlhf, Method::oracle})
          if (pbrl::validate(drlhf_settings(run, m, 1)) != Status::ok)
            return "these hyperparameters are not valid DRLHF settings (--step, --inner-steps, --oracle-step)";
        return {};
      });
  if (code >= 0) return code;
  return run(c);
}
