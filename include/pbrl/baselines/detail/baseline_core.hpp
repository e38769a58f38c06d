#pragma once
// What the baselines (Drlhf, IndependentPolicyGradient, MetaGradient) share, written once: run()
// and the accessors of x, the counts, the settings, the workspace and the random stream; the
// shared part of init(), of a step's beginning and of its commit. A baseline derives from
// BaselineCore<itself, ...> (CRTP), declares it a friend and keeps these members of its own:
// problem_ (const Problem*), settings_, counts_ (StepCounts), x_ and x_next_ (Params), ws_ (the
// evaluation workspace), rng_ (Rng) and sampled_ (SampledScratch; with sampled mode, its Rng
// rng_next). Its report type derives from BaselineReport. The core holds no data: the members
// stay where each baseline declares them, since with EIGEN_MAX_STATIC_ALIGN_BYTES=0 a member's
// offset can change Eigen's rounding.
//
// A step's contract, kept here: sampled mode draws from sampled_.rng_next, a copy of rng_ made by
// begin_step(), and only commit_step() assigns it back; on error nothing has changed.

#include "pbrl/model/evaluation.hpp"
#include "pbrl/core/rng.hpp"
#include "pbrl/solver/settings.hpp"
#include "pbrl/solver/detail/step_counts.hpp"

#include <cstdint>

namespace pbrl {

// One step's bookkeeping, from begin_step() to commit_step().
struct BaselineStep {
  bool sampled = false;         // sampled mode (GradientMode::sampled in a type that has it)
  std::int64_t sweeps_hit = 0;  // max_sweeps_hit_total(ws_) when the step began
  std::int64_t steps = 0;       // environment steps of this step (the sampled estimators add theirs)
};

// The sampled-mode scratch of a baseline that draws rollouts (sampled_ of Drlhf and
// IndependentPolicyGradient): the step's copy of the random stream and the trajectory buffer.
template <class TrajectoryT>
struct BaselineRollouts {
  Rng rng_next{1u};
  TrajectoryT trajectory{};
};

// What every baseline's step report has, which BaselineCore::commit_step() fills: the iteration
// the numbers describe, sampled mode's environment steps and (EvaluationOutcome) the evaluations
// stopped at max_sweeps; each report's visit() lists them first (visit_counts).
struct BaselineReport : EvaluationOutcome {
  std::int64_t iteration = 0;          // k of the iterate the numbers describe
  std::int64_t environment_steps = 0;  // sampled mode: environment steps since init(), this step's included

 protected:
  template <class Visitor>
  void visit_counts(Visitor& v) const {
    v(iteration, "iteration", "k of the iterate the numbers describe");
    v(environment_steps, "environment_steps", "sampled mode: environment steps since init, this step's included");
    v(max_sweeps_hit, "max_sweeps_hit", "evaluations stopped at max_sweeps (0 with LU)");
  }
};

template <class Derived, class Problem, class SettingsT, class ReportT, EvaluationMethod Method,
          GradientSources Sources>
class BaselineCore {
 public:
  static constexpr bool kSampled = Sources == GradientSources::exact_and_sampled;
  using Scalar = typename Problem::Scalar;
  using Params = typename Problem::Params;
  using Workspace = EvaluationWorkspace<Scalar, Problem::kStates, Method>;

  // `iterations` steps (the caller's bound); stops at the first error. `last` gets the last report.
  Status run(std::int64_t iterations, ReportT* last = nullptr) { return run_steps(self(), iterations, last); }

  const Params& x() const { return self().x_; }
  std::int64_t iteration() const { return self().counts_.iteration; }
  const SettingsT& settings() const { return self().settings_; }
  Workspace& evaluation_workspace() { return self().ws_; }
  // Sampled mode: environment steps taken since init(), and the random stream (copy it to
  // checkpoint, assign it to restore; init() reseeds it from settings.seed).
  std::int64_t environment_steps() const { return self().counts_.environment_steps; }
  Rng& rng() { return self().rng_; }
  const Rng& rng() const { return self().rng_; }

 protected:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }

  // init()'s check of the mode: bad_setting for sampled mode in an exact-only type, or when the
  // problem has no sampled estimator the baseline needs (sampled_supported false).
  static Status check_mode(const SettingsT& settings, bool sampled_supported = true) {
    if (settings.gradient == GradientMode::sampled && (!kSampled || !sampled_supported)) return Status::bad_setting;
    return Status::ok;
  }

  // init()'s shared part, once all its checks passed: the problem, the settings, x, the counts and
  // the random stream.
  void start(const Problem& problem, const SettingsT& settings, const Params& x0) {
    Derived& d = self();
    d.problem_ = &problem;
    d.settings_ = settings;
    d.x_ = x0;
    d.counts_ = StepCounts{};
    d.rng_.reseed(settings.seed);
  }

  // A step's first checks and its bookkeeping: not_initialized before init(), count_overflow when
  // the iteration count is full, bad_setting for a workspace with bad sweep settings; nothing is
  // changed but sampled_.rng_next (scratch).
  Status begin_step(BaselineStep& b) {
    Derived& d = self();
    if (d.problem_ == nullptr) return Status::not_initialized;
    if (Status st = d.counts_.room_for_step(); st != Status::ok) return st;
    if (Status st = detail::check_workspace(d.ws_); st != Status::ok) return st;
    b.sweeps_hit = max_sweeps_hit_total(d.ws_);
    b.sampled = kSampled && d.settings_.gradient == GradientMode::sampled;
    if constexpr (kSampled)
      if (b.sampled) d.sampled_.rng_next = d.rng_;
    return Status::ok;
  }

  // The commit's shared part, once the step's numbers are checked finite: count_overflow (and
  // nothing changed) when the counts have no room for b.steps; else commits x_next_, the random
  // stream and the counts and fills the report's iteration, environment_steps and max_sweeps_hit.
  // The caller then commits its own iterates and report fields, and nothing after may fail.
  Status commit_step(const BaselineStep& b, ReportT* report) {
    Derived& d = self();
    if (Status st = d.counts_.room_for(b.steps); st != Status::ok) return st;
    if (report != nullptr) {
      report->iteration = d.counts_.iteration;
      report->environment_steps = d.counts_.environment_steps + b.steps;
      report->max_sweeps_hit = max_sweeps_hit_total(d.ws_) - b.sweeps_hit;
    }
    d.x_ = d.x_next_;
    if constexpr (kSampled)
      if (b.sampled) d.rng_ = d.sampled_.rng_next;
    d.counts_.commit(b.steps);
    return Status::ok;
  }
};

}  // namespace pbrl
