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
// optimizes it exactly; RlhfProblem::value_at_best_response) and the fraction of held-out pairs
// (uniform policy, true labels) whose order the learned reward predicts. The line "true optimum"
// is max_pi V^pi_true(rho).
// Every number comes from examples/experiment_settings.hpp (namespace settings::rlhf).

#include "experiment.hpp"
#include "experiment_settings.hpp"
#include "pbrl/pbrl.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/stat.h>
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
using Status = pbrl::Status;

constexpr int kPoints = 50;       // about this many checkpoints after the first rounds
constexpr long kDenseRounds = 10;  // checkpoints after each of the first rounds

enum class Method { pbrl_value, pbrl_bellman, drlhf, oracle };
const char* name(Method m) {
  switch (m) {
    case Method::pbrl_value: return "pbrl_value";
    case Method::pbrl_bellman: return "pbrl_bellman";
    case Method::drlhf: return "drlhf";
    case Method::oracle: return "oracle";
  }
  return "?";
}
bool labeled(Method m) { return m != Method::oracle; }

struct Options {
  bool sampled = false;
  bool bradley_terry = false;
  double bt_scale = 1;
  int instances = cfg::kInstances;
  unsigned seed = 1;
  long labels = cfg::kLabels;
  std::string out = "results";
  bool quiet = false;
  bool quick = false;
  std::vector<Method> methods;
  long rounds = 0;  // derived: (labels - warm-up) / pairs per round
};

[[noreturn]] void fail(const char* what, Status st) {
  std::fprintf(stderr, "\nerror: %s: %s\n", what, pbrl::to_string(st));
  std::exit(1);
}
void check(const char* what, Status st) {
  if (st != Status::ok) fail(what, st);
}

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
  Seeds(unsigned seed, int i) {
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

  void init(const Instance& inst, const Options& opt, const Seeds& seeds) {
    Problem::Data data;
    data.transition = inst.transition;
    data.initial = inst.initial;
    data.discount = Real(settings::kDiscount);
    data.lower = {pbrl::RegularizerKind::entropy, Real(cfg::kTau), nullptr};
    data.reward = {Real(-cfg::kRewardBound), Real(cfg::kRewardBound)};
    data.preferences = &buffer;
    check("problem init", problem.init(data));
    check("sampler init", sampler.init(inst.transition, inst.initial, seeds.sampler, cfg::kBurnIn));
    higher.reward = inst.reward;
    bradley_terry.reward = inst.reward;
    bradley_terry.scale = Real(opt.bt_scale);
    bradley_terry.rng.reseed(seeds.labeler);
    labeler = opt.bradley_terry ? bradley_terry.labeler<L>() : higher.labeler<L>();
  }
  void collect(const Matrix& pi, int pairs) {
    for (int i = 0; i < pairs; ++i) check("collect_pair", sampler.collect_pair(pi, L, labeler, buffer));
  }
  // The paper's reward warm-up: full-batch projected gradient steps on the Bradley-Terry loss.
  Params warm_up_reward() const {
    Params x = Params::Zero(), grad;
    Real f(0);
    for (int k = 0; k < cfg::kWarmupRewardSteps; ++k) {
      check("warm-up loss", problem.loss(x, f, grad));
      x -= Real(cfg::kRewardStep) * grad;
      problem.project_parameters(x);
    }
    return x;
  }
};

// Held-out pairs from the uniform policy with their true "higher return wins" labels (ties dropped).
struct HeldOut {
  std::vector<Segment> first, second;
  std::vector<float> label;  // 1: first preferred, 0: second preferred

  void draw(const Instance& inst, std::uint32_t seed) {
    Sampler sampler;
    check("held-out sampler", sampler.init(inst.transition, inst.initial, seed, cfg::kBurnIn));
    const Matrix uniform = Matrix::Constant(Real(1) / A);
    pbrl::ReturnLabeler<Real, S, A> truth{inst.reward};
    Segment d0, d1;
    for (int i = 0; i < cfg::kHeldOutPairs; ++i) {
      check("held-out sample", sampler.sample(uniform, L, d0));
      check("held-out sample", sampler.sample(uniform, L, d1));
      const float l = truth(d0, d1);
      if (l == 0.5f) continue;
      first.push_back(d0);
      second.push_back(d1);
      label.push_back(l);
    }
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

// The curves of one method, indexed by checkpoint, one value per instance.
struct Curves {
  // true_return: of the current policy; true_return_best_response: of pi*(x), the optimum of M_tau(x).
  experiment::Curve true_return, true_return_best_response, accuracy, policy_steps, segment_steps;
  // Certificates of pi*(x): the largest certified optimality gap, and checkpoints above tolerance.
  double worst_certificate = 0;
  long not_converged = 0;
};

pbrl::PbrlSettings<Real> pbrl_settings(const Options& opt, pbrl::PenaltyKind penalty, std::uint32_t seed) {
  pbrl::PbrlSettings<Real> s;
  s.penalty = penalty;
  s.policy.parameterization = pbrl::Parameterization::softmax;
  s.oracle = opt.sampled ? pbrl::OracleKind::policy_gradient : pbrl::OracleKind::policy_mirror_descent;
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.inner_steps = cfg::kInner;
  s.oracle_step = Real(opt.sampled ? cfg::kPgStep : cfg::kOracleStep);
  s.step_x = Real(cfg::kRewardStep);
  s.step_y = Real(cfg::kStepY);
  s.penalty_start = s.penalty_final = Real(cfg::kLambda);
  s.penalty_ramp = 0;
  s.gradient = opt.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  s.sampling.horizon = settings::kHorizon;
  s.sampling.batch = cfg::kBatch;
  s.seed = seed;
  return s;
}

pbrl::DrlhfSettings<Real> drlhf_settings(const Options& opt, int reward_steps, std::uint32_t seed) {
  pbrl::DrlhfSettings<Real> s;
  s.reward_steps = reward_steps;
  s.reward_step = Real(cfg::kRewardStep);
  s.policy_oracle = opt.sampled ? pbrl::OracleKind::policy_gradient : pbrl::OracleKind::policy_mirror_descent;
  s.oracle_policy.parameterization = pbrl::Parameterization::softmax;
  s.policy_steps = cfg::kInner;
  s.policy_step = Real(opt.sampled ? cfg::kPgStep : cfg::kOracleStep);
  s.gradient = opt.sampled ? pbrl::GradientMode::sampled : pbrl::GradientMode::exact;
  s.sampling.horizon = settings::kHorizon;
  s.sampling.batch = cfg::kBatch;
  s.seed = seed;
  return s;
}

// Every round of the first kDenseRounds (where the curves move most), then about kPoints more.
bool checkpoint(long round, long rounds) {
  const long every = std::max(1L, rounds / kPoints);
  return round <= kDenseRounds || round % every == 0 || round == rounds;
}

// One method on one instance: fills one value per checkpoint into `curves`.
void run_method(Method method, const Options& opt, const Instance& inst, const Seeds& seeds,
                const HeldOut& held_out, Curves& curves, experiment::Progress& progress, long& done) {
  const auto truth = inst.truth();
  auto ws = std::make_unique<pbrl::EvaluationWorkspace<Real, S, pbrl::EvaluationMethod::direct>>();
  pbrl::Evaluation<Real, S, A> eval;
  auto best_response = std::make_unique<Problem::BilevelValueWorkspace>();  // default settings
  auto learner = std::make_unique<Learner>();  // the oracle's buffer stays empty
  learner->init(inst, opt, seeds);
  const Matrix uniform = Matrix::Constant(Real(1) / A);

  Params x0;
  if (labeled(method)) {
    learner->collect(uniform, cfg::kWarmupPairs);
    x0 = learner->warm_up_reward();
  } else {
    x0 = Eigen::Map<const Params>(inst.reward);  // the true reward, inside the box
  }

  auto pbrl_solver = std::make_unique<PbrlSolver>();
  auto drlhf_solver = std::make_unique<DrlhfSolver>();
  const bool is_pbrl = method == Method::pbrl_value || method == Method::pbrl_bellman;
  if (is_pbrl) {
    const auto penalty = method == Method::pbrl_value ? pbrl::PenaltyKind::value : pbrl::PenaltyKind::bellman;
    check("Pbrl init", pbrl_solver->init(learner->problem, pbrl_settings(opt, penalty, seeds.solver), x0,
                                         Matrix::Zero()));
  } else {
    const int reward_steps = method == Method::oracle ? 0 : cfg::kRewardStepsPerIteration;
    check("Drlhf init", drlhf_solver->init(learner->problem, drlhf_settings(opt, reward_steps, seeds.solver), x0,
                                           uniform));
  }

  Matrix pi;
  auto current_policy = [&]() -> const Matrix& {
    if (is_pbrl) {
      pbrl_solver->policy(pi);
      return pi;
    }
    return drlhf_solver->policy();
  };
  std::size_t point = 0;
  auto record = [&] {
    check("true return", pbrl::evaluate(truth, current_policy(), *ws, eval));
    curves.true_return.add(point, eval.value_rho);
    pbrl::BestResponseValue<Real> honest;
    check("true return at the best response",
          learner->problem.value_at_best_response(is_pbrl ? pbrl_solver->x() : drlhf_solver->x(), truth,
                                                  *best_response, honest));
    curves.true_return_best_response.add(point, honest.value);
    curves.worst_certificate = std::max(curves.worst_certificate, static_cast<double>(honest.lower_level_gap));
    if (!honest.converged) ++curves.not_converged;
    curves.accuracy.add(point, labeled(method) ? held_out.accuracy(is_pbrl ? pbrl_solver->x() : drlhf_solver->x())
                                               : NAN);
    curves.policy_steps.add(point, static_cast<double>(is_pbrl ? pbrl_solver->environment_steps()
                                                               : drlhf_solver->environment_steps()));
    curves.segment_steps.add(point, static_cast<double>(learner->sampler.steps()));
    ++point;
  };

  record();  // after the warm-up, before any policy learning
  for (long round = 1; round <= opt.rounds; ++round) {
    if (labeled(method)) learner->collect(current_policy(), cfg::kPairsPerRound);
    for (int k = 0; k < cfg::kStepsPerRound; ++k)
      check(name(method), is_pbrl ? pbrl_solver->step() : drlhf_solver->step());
    if (checkpoint(round, opt.rounds)) record();
    progress.update(++done);
  }
}

std::string usage() {
  return "usage: rlhf_experiment [options]\n"
         "Tabular RLHF: true return against preference labels for PBRL (value and Bellman penalty),\n"
         "the DRLHF-style baseline and an oracle trained on the true reward; the true return of the\n"
         "learner's current policy (the paper's metric) and of the optimal regularized policy of the\n"
         "learned reward (the bilevel answer).\n"
         "  --gradient exact|sampled        model-based gradients (default), or every policy learner\n"
         "                                  from sampled policy gradients (Pbrl GradientMode::sampled)\n"
         "  --labeler return|bradley-terry  higher true return wins (default, the paper's), or\n"
         "                                  stochastic Bradley-Terry labels\n"
         "  --bt-scale X                    Bradley-Terry scale (default 1, the paper's model)\n"
         "  --penalty value|bellman|both    PBRL penalties to run (default both)\n"
         "  --instances N                   random instances (default " +
         std::to_string(cfg::kInstances) +
         ")\n"
         "  --seed N                        base seed (default 1)\n"
         "  --labels N                      total labels, warm-up included (default " +
         std::to_string(cfg::kLabels) + ", at least " + std::to_string(cfg::kWarmupPairs + cfg::kPairsPerRound) +
         ")\n"
         "  --out DIR                       output directory (default results)\n"
         "  --quick                         3 instances, 400 labels (a demo of a few seconds)\n"
         "  --quiet                         no progress on stderr\n"
         "  --help                          this text\n"
         "Writes DIR/rlhf_tabular.csv and DIR/rlhf_tabular.png; prints a table and lines\n"
         "summary,rlhf,<method>,<metric>,<value>.\n";
}


void write_settings(FILE* f, const Options& opt, const std::string& prefix) {
  const char* p = prefix.c_str();
  std::fprintf(f, "%stabular RLHF: %d states, %d actions, gamma %g (choice), rho uniform (choice)\n", p, S, A,
               settings::kDiscount);
  std::fprintf(f, "%shidden true reward: uniform [0,1), entries < %g set to 0 (choice); true return unregularized\n",
               p, cfg::kRewardSparsity);
  std::fprintf(f, "%slearners' M_tau(x): entropy tau %g (paper); reward model r_x = x in [-%g, %g]^{S*A} (choice)\n",
               p, cfg::kTau, cfg::kRewardBound, cfg::kRewardBound);
  std::fprintf(f, "%slabeler: %s\n", p,
               opt.bradley_terry ? ("Bradley-Terry, scale " + std::to_string(opt.bt_scale)).c_str()
                                 : "higher true return wins (paper), ties 0.5");
  std::fprintf(f, "%ssegments: %d state-action pairs (choice; paper 25), burn-in %d (choice), from each learner's policy\n",
               p, L, cfg::kBurnIn);
  std::fprintf(f, "%slabels: warm-up %d pairs (choice; paper 576), then %d per round (choice; paper 16), buffer %d (choice; paper 3000), total %ld (%ld rounds)\n",
               p, cfg::kWarmupPairs, cfg::kPairsPerRound, cfg::kBufferCapacity,
               cfg::kWarmupPairs + opt.rounds * cfg::kPairsPerRound, opt.rounds);
  std::fprintf(f, "%sreward warm-up: %d full-batch gradient steps of %g (paper: 500 epochs)\n", p,
               cfg::kWarmupRewardSteps, cfg::kRewardStep);
  std::fprintf(f, "%s%d outer iterations per round (choice), T = %d oracle steps per iteration (choice)\n", p,
               cfg::kStepsPerRound, cfg::kInner);
  if (opt.sampled)
    std::fprintf(f, "%sgradient: sampled; policy learners: softmax policy gradient, step %g (paper), H %d (paper), B %d (paper)\n",
                 p, cfg::kPgStep, settings::kHorizon, cfg::kBatch);
  else
    std::fprintf(f, "%sgradient: exact; policy learners: PMD, step %g (choice)\n", p, cfg::kOracleStep);
  std::fprintf(f, "%sPBRL: softmax y, alpha_x %g, alpha_y %g, lambda %g (choices)\n", p, cfg::kRewardStep,
               cfg::kStepY, cfg::kLambda);
  std::fprintf(f, "%sDRLHF: %d reward step(s) of %g per iteration (choice), then the policy learner\n", p,
               cfg::kRewardStepsPerIteration, cfg::kRewardStep);
  std::fprintf(f, "%soracle: the policy learner on M_tau(r_true), same steps per round, no labels (plotted at the same x)\n", p);
  std::fprintf(f, "%sheld-out accuracy: %d pairs from the uniform policy, true labels, ties dropped (choice)\n", p,
               cfg::kHeldOutPairs);
  std::fprintf(f, "%sinstances %d, seed %u\n", p, opt.instances, opt.seed);
}

}  // namespace

int main(int argc, char** argv) {
  experiment::Options args(argc, argv, usage());
  Options opt;
  opt.quick = args.flag("quick");
  opt.sampled = args.choice("gradient", "exact", {"exact", "sampled"}) == "sampled";
  opt.bradley_terry = args.choice("labeler", "return", {"return", "bradley-terry"}) == "bradley-terry";
  opt.bt_scale = args.real("bt-scale", 1.0);
  const std::string penalty = args.choice("penalty", "both", {"value", "bellman", "both"});
  opt.instances = static_cast<int>(args.integer("instances", opt.quick ? 3 : cfg::kInstances, 1));
  opt.seed = static_cast<unsigned>(args.integer("seed", 1, 0));
  opt.labels = args.integer("labels", opt.quick ? 400 : cfg::kLabels, cfg::kWarmupPairs + cfg::kPairsPerRound);
  opt.out = args.text("out", "results");
  opt.quiet = args.flag("quiet");
  if (const int code = args.finish(); code >= 0) return code;
  if (!(opt.bt_scale > 0)) {
    std::fprintf(stderr, "error: --bt-scale must be positive\n");
    return 2;
  }
  opt.rounds = (opt.labels - cfg::kWarmupPairs) / cfg::kPairsPerRound;
  if (penalty != "bellman") opt.methods.push_back(Method::pbrl_value);
  if (penalty != "value") opt.methods.push_back(Method::pbrl_bellman);
  opt.methods.push_back(Method::drlhf);
  opt.methods.push_back(Method::oracle);
  if (!experiment::make_directories(opt.out)) return 1;

  // Checkpoint positions: labels collected when the point is recorded.
  std::vector<long> labels_at;
  for (long r = 0; r <= opt.rounds; ++r)
    if (checkpoint(r, opt.rounds)) labels_at.push_back(cfg::kWarmupPairs + r * cfg::kPairsPerRound);

  const std::size_t M = opt.methods.size();
  std::vector<Curves> curves(M);
  std::vector<double> optimum, uniform_return;
  experiment::Progress progress("rlhf", static_cast<long>(opt.instances) * static_cast<long>(M) * opt.rounds,
                                opt.quiet);
  long done = 0;
  for (int i = 0; i < opt.instances; ++i) {
    const Seeds seeds(opt.seed, i);
    auto inst = std::make_unique<Instance>(seeds.instance);
    auto best = std::make_unique<pbrl::RlhfOracle<Real, S, A>>();
    check("optimum", best->solve(inst->truth(), 100000, Real(1e-12)));
    optimum.push_back(best->value_rho());
    HeldOut held_out;
    held_out.draw(*inst, seeds.held_out);
    for (std::size_t m = 0; m < M; ++m) run_method(opt.methods[m], opt, *inst, seeds, held_out, curves[m], progress, done);
  }
  const double seconds = progress.seconds();
  double optimum_mean = 0;
  for (double v : optimum) optimum_mean += v / static_cast<double>(optimum.size());

  // CSV.
  const std::string csv = opt.out + "/rlhf_tabular.csv";
  FILE* f = std::fopen(csv.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "error: cannot write %s\n", csv.c_str());
    return 1;
  }
  write_settings(f, opt, "# ");
  std::fprintf(f, "# true optimum V*_true(rho), mean over instances: %.6f\n", optimum_mean);
  std::fprintf(f, "# columns: true_return_current_policy = V^pi_true(rho) of the learner's current policy (mean and\n"
                  "# standard error over instances; the paper plots this one); true_return_best_response =\n"
                  "# V^{pi*(x)}_true(rho) of the optimal regularized policy pi*(x) of the learned reward's M_tau(x)\n"
                  "# (soft value iteration, certified optimality gap <= %.1e: what the learned reward is worth to a\n"
                  "# learner that optimizes it exactly);\n"
                  "# heldout_accuracy = fraction of held-out pairs ordered right by the learned reward (nan: oracle);\n"
                  "# policy_env_steps = environment steps of the policy learners (sampled mode), segment_env_steps =\n"
                  "# steps taken to draw labeled segments; both means over instances\n",
               static_cast<double>(pbrl::BestResponseSettings<Real>{}.tolerance));
  std::fprintf(f, "method,labels,true_return_current_policy_mean,true_return_current_policy_se,"
                  "true_return_best_response_mean,true_return_best_response_se,heldout_accuracy_mean,"
                  "heldout_accuracy_se,policy_env_steps_mean,segment_env_steps_mean\n");
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t p = 0; p < labels_at.size(); ++p) {
      const Curves& c = curves[m];
      std::fprintf(f, "%s,%ld,%.6f,%.6f,%.6f,%.6f,%.4f,%.4f,%.0f,%.0f\n", name(opt.methods[m]), labels_at[p],
                   c.true_return.mean(p), c.true_return.stderr_of_mean(p), c.true_return_best_response.mean(p),
                   c.true_return_best_response.stderr_of_mean(p), c.accuracy.mean(p), c.accuracy.stderr_of_mean(p),
                   c.policy_steps.mean(p), c.segment_steps.mean(p));
    }
  std::fclose(f);

  // Plot: true return of the current policy (left), of pi*(x) (middle) and held-out accuracy (right)
  // against labels.
  std::string script =
      "set datafile separator ','\nset multiplot layout 1,3 title 'RLHF, " +
      std::string(opt.sampled ? "sampled" : "exact") + ", " +
      (opt.bradley_terry ? "Bradley-Terry" : "higher-return-wins") + " labels, " + std::to_string(opt.instances) +
      " instances (mean, s.e.)'\nset grid\nset key bottom right\nset pointsize 0.6\n";
  script += "set xrange [" + std::to_string(labels_at.front()) + ":" + std::to_string(labels_at.back()) + "]\n";
  script += "set xlabel 'preference labels collected (oracle: none, same schedule)'\n";
  script += "set ylabel 'true return V^pi_true(rho)'\nset title 'true return of the current policy (paper)'\n";
  script += "optimum = " + std::to_string(optimum_mean) + "\n";
  std::string lines = "plot optimum title 'true optimum' with lines dashtype 2 lc rgb 'black'";
  std::string best_lines = lines;
  std::string acc_lines;
  for (std::size_t m = 0; m < M; ++m) {
    const std::string n = name(opt.methods[m]);
    lines += ", '" + csv + "' every ::1 using 2:(strcol(1) eq '" + n + "' ? $3 : 1/0):4 with yerrorlines lc " +
             std::to_string(m + 1) + " title '" + n + "'";
    best_lines += ", '" + csv + "' every ::1 using 2:(strcol(1) eq '" + n + "' ? $5 : 1/0):6 with yerrorlines lc " +
                  std::to_string(m + 1) + " title '" + n + "'";
    if (labeled(opt.methods[m]))
      acc_lines += std::string(acc_lines.empty() ? "plot " : ", ") + "'" + csv + "' every ::1 using 2:(strcol(1) eq '" +
                   n + "' ? $7 : 1/0):8 with yerrorlines lc " + std::to_string(m + 1) + " title '" + n + "'";
  }
  script += lines + "\n";
  script += "set ylabel 'true return V^{pi*(x)}_true(rho)'\n"
            "set title 'true return of pi*(x), the optimum of M_tau(x)'\n";
  script += best_lines + "\n";
  script += "set ylabel 'held-out pairs ordered right'\nset title 'learned reward vs true preferences'\n"
            "set key bottom right\n";
  script += acc_lines + "\nunset multiplot\n";
  const std::string png = opt.out + "/rlhf_tabular.png";
  const bool plotted = experiment::plot(png, script, 1800);

  // Table and summary lines.
  const std::size_t last = labels_at.size() - 1;
  std::printf("\ntabular RLHF, %d instances, %s gradients, %s labels, %ld labels (%d warm-up + %ld rounds of %d)\n",
              opt.instances, opt.sampled ? "sampled" : "exact", opt.bradley_terry ? "Bradley-Terry" : "higher-return-wins",
              labels_at[last], cfg::kWarmupPairs, opt.rounds, cfg::kPairsPerRound);
  std::printf("true return V^pi_true(rho), mean +- s.e. over instances; true optimum %.4f\n", optimum_mean);
  std::printf("current policy: the learner's policy (the paper's metric); pi*(x): the optimal regularized policy of\n"
              "the learned reward's M_tau(x), solved exactly (what the learned reward is worth)\n");
  std::printf("%-13s %18s %18s %10s %18s %18s %16s\n", "method", "start", "end", "gap closed", "pi*(x) start",
              "pi*(x) end", "held-out acc end");
  for (std::size_t m = 0; m < M; ++m) {
    const Curves& c = curves[m];
    const double start = c.true_return.mean(0), end = c.true_return.mean(last);
    const double closed = (end - start) / (optimum_mean - start);
    char acc[32];
    if (labeled(opt.methods[m]))
      std::snprintf(acc, sizeof acc, "%.3f +- %.3f", c.accuracy.mean(last), c.accuracy.stderr_of_mean(last));
    else
      std::snprintf(acc, sizeof acc, "(true reward)");
    const experiment::Curve& b = c.true_return_best_response;
    std::printf("%-13s %9.4f +- %6.4f %9.4f +- %6.4f %9.1f%% %9.4f +- %6.4f %9.4f +- %6.4f %16s\n",
                name(opt.methods[m]), start, c.true_return.stderr_of_mean(0), end, c.true_return.stderr_of_mean(last),
                100 * closed, b.mean(0), b.stderr_of_mean(0), b.mean(last), b.stderr_of_mean(last), acc);
  }
  {
    double worst = 0;
    long not_converged = 0;
    for (const Curves& c : curves) {
      worst = std::max(worst, c.worst_certificate);
      not_converged += c.not_converged;
    }
    std::printf("(pi*(x) certified: largest certified optimality gap on M_tau(x) %.2e; %ld checkpoint(s) above the "
                "tolerance)\n",
                worst, not_converged);
  }
  // Paired differences at the end (the same instances, seeds and warm-up for every method).
  auto paired = [&](Method a, Method b) {
    std::size_t ia = M, ib = M;
    for (std::size_t m = 0; m < M; ++m) {
      if (opt.methods[m] == a) ia = m;
      if (opt.methods[m] == b) ib = m;
    }
    if (ia == M || ib == M) return;
    experiment::Curve d;
    for (int i = 0; i < opt.instances; ++i)
      d.add(0, curves[ia].true_return.values[last][i] - curves[ib].true_return.values[last][i]);
    int wins = 0;
    for (int i = 0; i < opt.instances; ++i)
      wins += curves[ia].true_return.values[last][i] > curves[ib].true_return.values[last][i] ? 1 : 0;
    std::printf("paired end difference %s - %s: %+.4f +- %.4f (higher on %d of %d instances)\n", name(a), name(b),
                d.mean(0), d.stderr_of_mean(0), wins, opt.instances);
  };
  paired(Method::pbrl_value, Method::drlhf);
  paired(Method::pbrl_bellman, Method::drlhf);
  paired(Method::oracle, Method::pbrl_value);
  paired(Method::oracle, Method::pbrl_bellman);
  paired(Method::oracle, Method::drlhf);
  std::printf("wrote %s%s%s (%.1f s)\n", csv.c_str(), plotted ? " and " : "", plotted ? png.c_str() : "", seconds);
  for (std::size_t m = 0; m < M; ++m) {
    const Curves& c = curves[m];
    std::printf("summary,rlhf,%s,true_return_current_policy_start,%.6f\n", name(opt.methods[m]),
                c.true_return.mean(0));
    std::printf("summary,rlhf,%s,true_return_current_policy_end,%.6f\n", name(opt.methods[m]),
                c.true_return.mean(last));
    std::printf("summary,rlhf,%s,true_return_best_response_start,%.6f\n", name(opt.methods[m]),
                c.true_return_best_response.mean(0));
    std::printf("summary,rlhf,%s,true_return_best_response_end,%.6f\n", name(opt.methods[m]),
                c.true_return_best_response.mean(last));
    std::printf("summary,rlhf,%s,optimal_return,%.6f\n", name(opt.methods[m]), optimum_mean);
  }
  return 0;
}
