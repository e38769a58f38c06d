#pragma once
// The penalty schedule of Pbrl and PbrlZeroSum, once: lambda_k, the step sizes at lambda_k, the
// oracle's step range and target, the rule that grows lambda in tolerance mode, and the verdict.
// Fixed mode (gap_tolerance = 0): lambda_k is the settings' linear ramp, the steps and T are the
// settings' own, and the schedule holds no state that changes. Tolerance mode (gap_tolerance =
// epsilon > 0): lambda grows while the measured gap stays above the current target and has stopped
// falling, the steps shrink with lambda (alpha_k = scale * alpha / (1 + alpha lambda_k L_p), the
// paper's alpha <= 1/(L_f + lambda L_p)), a gap that rises over its best halves the steps and takes
// the last growth back, and the target falls from max(epsilon, continuation_start) to epsilon. The
// rule step by step, and why each part: docs/algorithm.md, "The schedule's rule"; the defaults,
// measured: docs/tolerance.md. Worst case of one step(): inner_steps_max oracle steps (per player
// in PbrlZeroSum).

#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/solver/settings.hpp"

#include <cstdint>
#include <limits>

namespace pbrl {

/// What a step did with the schedule, in every solver's report.
template <typename Scalar>
struct ScheduleReport {
  Scalar lambda = Scalar(0);            ///< lambda_k of this step
  Scalar step_x = Scalar(0);            ///< alpha_x used (tolerance mode: scaled by lambda_k)
  std::int64_t inner_steps = 0;         ///< oracle steps taken (PbrlZeroSum: per player, the larger)
  Scalar oracle_gap = Scalar(0);        ///< certified bound on pi-hat's own gap on M(x_k) (both players' summed)
  Scalar gap_bound = Scalar(0);         ///< certified bound on the iterate's lower-level gap on M(x_k)
  Scalar gap_estimate = Scalar(0);      ///< the gap the schedule compared with epsilon after this step
  Scalar gap_target = Scalar(0);        ///< tolerance mode: the gap the schedule works toward after this step
                                        ///< (the continuation's, from max(epsilon, continuation_start) to epsilon)
  bool tolerance_met = false;           ///< tolerance mode and gap_bound <= gap_tolerance
  bool inner_converged = false;         ///< exact tolerance mode: the oracle (zero-sum: both) stopped on its
                                        ///< target; false: it ran to inner_steps_max, or no target (fixed, sampled)
  bool converged = false;               ///< the verdict after this step (PenaltySchedule::converged)
  std::int64_t lambda_growths = 0;      ///< tolerance mode: growths of lambda since init(), this step's included
  std::int64_t lambda_backoffs = 0;     ///< tolerance mode: back-offs since init() (each halves the steps)
};

/// The penalty schedule of Pbrl and PbrlZeroSum (the rule: the comment atop
/// solver/penalty_schedule.hpp, and docs/algorithm.md): lambda_k, the
/// step sizes at lambda_k, the oracle's step range and target, and the verdict. A solver's
/// schedule() returns it; the solver calls the members that change it.
template <typename Scalar>
class PenaltySchedule {
 public:
  /// The settings every member reads.
  using Settings = PenaltySolverSettings<Scalar>;

  /// The state after init() with settings s.
  void reset(const Settings& s) {
    lambda_ = s.lambda_start;
    above_ = 0;
    growths_ = 0;
    estimate_ = Scalar(0);
    window_start_ = Scalar(0);
    stationary_ = 0;
    converged_ = 0;
    scale_ = Scalar(1);
    previous_lambda_ = Scalar(0);
    best_ = Scalar(0);
    window_min_ = Scalar(0);
    backoffs_ = 0;
    level_ = 0;
    target_ = Scalar(0);
    target_steps_ = 0;
    if (s.tolerance_mode()) target_ = first_target(s);
    if (s.tolerance_mode() && s.lambda_step_limit > Scalar(0)) {  // the start's scale (above)
      const Scalar first = s.step_x * s.lambda_start;
      if (first > s.lambda_step_limit) scale_ = s.lambda_step_limit / first;
    }
  }

  /// lambda_k (tolerance mode: lambda of the next step, whatever k).
  Scalar lambda(const Settings& s, std::int64_t k) const {
    if (s.tolerance_mode()) return lambda_;
    if (s.lambda_ramp <= 0 || k >= s.lambda_ramp) return s.lambda_final;
    const Scalar t = Scalar(k) / Scalar(s.lambda_ramp);
    return s.lambda_start + t * (s.lambda_final - s.lambda_start);
  }

  /// The step size alpha at the current lambda and scale (fixed mode: alpha itself).
  Scalar step(const Settings& s, Scalar alpha) const {
    if (!s.tolerance_mode()) return alpha;
    return scale_ * alpha / (Scalar(1) + alpha * lambda_ * s.penalty_smoothness);
  }

  // Oracle steps: at least min, at most max; stop early once the oracle's certified gap is at most
  // target (0: never early).
  /// The least number of oracle steps of the next step: inner_steps.
  int inner_steps_min(const Settings& s) const { return s.inner_steps; }
  /// The most oracle steps of the next step: inner_steps in fixed mode, inner_steps_max in exact
  /// tolerance mode, inner_steps * (1 + growths not taken back) up to inner_steps_max in sampled
  /// tolerance mode.
  int inner_steps_max(const Settings& s) const {
    if (!s.tolerance_mode()) return s.inner_steps;
    if (s.gradient == GradientMode::exact) return s.inner_steps_max;
    // inner_steps * (level + 1), capped, with level the growths not taken back; the product is
    // formed only below the cap (a restored count may be as large as the iteration count).
    if (s.inner_steps == 0) return 0;
    if (level_ >= s.inner_steps_max / s.inner_steps) return s.inner_steps_max;
    const std::int64_t t = std::int64_t(s.inner_steps) * (level_ + 1);
    return t < s.inner_steps_max ? int(t) : s.inner_steps_max;
  }
  /// The oracle's target: it stops early once its certified gap is at most this (0: never early).
  /// Exact tolerance mode: oracle_gap_fraction * max(epsilon, the last measured gap); before the
  /// first measurement the largest Scalar; otherwise 0.
  Scalar oracle_target(const Settings& s) const {
    if (!s.tolerance_mode() || s.gradient != GradientMode::exact) return Scalar(0);
    if (!(estimate_ > Scalar(0))) return std::numeric_limits<Scalar>::max();
    return s.oracle_gap_fraction * (estimate_ > target_ ? estimate_ : target_);
  }

  /// Takes in a successful step k with measured gap `gap` (exact: the certified bound; sampled:
  /// the sampled penalty), its stationarity measure |G| and whether its certified gap bound met
  /// the tolerance (exact tolerance mode).
  /// @return the gap the rule compared with epsilon.
  Scalar observe(const Settings& s, std::int64_t k, Scalar gap, Scalar gradient_norm, bool tolerance_met) {
    const bool stationary = gradient_norm <= s.stationarity_tolerance;
    stationary_ = stationary ? stationary_ + 1 : 0;  // at most k + 1: no overflow before the step count's
    converged_ = stationary && tolerance_met ? converged_ + 1 : 0;
    if (!s.tolerance_mode()) return gap;
    const Scalar previous = estimate_;  // g_{k-1} (k > 0)
    if (s.gradient == GradientMode::sampled && k > 0)
      estimate_ += (gap - estimate_) / Scalar(s.lambda_patience);
    else
      estimate_ = gap;
    if (k == 0 || estimate_ < best_) best_ = estimate_;
    if (!(estimate_ > target_)) {
      above_ = 0;
      window_start_ = Scalar(0);  // the next window starts afresh
      // The continuation: at or below the target and stationary for convergence_window steps, or
      // (a positive continuation_patience) at or below it for that many steps in all: the next
      // target.
      ++target_steps_;
      if (target_ > s.gap_tolerance &&
          ((stationary_ >= s.convergence_window && target_steps_ >= s.convergence_window) ||
           (s.continuation_patience > 0 && target_steps_ >= s.continuation_patience))) {
        const Scalar next = target_ / s.continuation_divisor;
        target_ = next > s.gap_tolerance ? next : s.gap_tolerance;
        target_steps_ = 0;
      }
      return estimate_;
    }
    // The back-off: the gap is above lambda_backoff times the best gap since init() or the last
    // back-off (or epsilon, if larger): the steps overshoot at this lambda.
    const Scalar reference = best_ > target_ ? best_ : target_;
    if (k > 0 && estimate_ > s.lambda_backoff * reference) {
      back_off();
      above_ = 0;
      window_start_ = Scalar(0);
      return estimate_;
    }
    if (above_ == 0 || estimate_ < window_min_) window_min_ = estimate_;
    if (above_ == 0 && window_start_ == Scalar(0)) window_start_ = estimate_;
    if (++above_ >= s.lambda_patience) {
      const Scalar low = k > 0 && previous < estimate_ ? previous : estimate_;
      if (low > s.lambda_stall * window_start_ && lambda_ < s.lambda_max) {
        const Scalar grown = lambda_ * s.lambda_growth;
        previous_lambda_ = lambda_;
        lambda_ = grown < s.lambda_max ? grown : s.lambda_max;
        ++growths_;
        ++level_;
      }
      window_start_ = low;  // the next window's reference
      above_ = 0;
    }
    return estimate_;
  }

  /// The model changed (swap_model): the verdict's counts and, in tolerance mode, the window and
  /// its stall reference, the best gap (the next measured gap starts it) and the last growth (no
  /// longer one to take back) start again; lambda, the step scale and the growth counts are kept, so the solve goes on warm.
  void model_changed(const Settings& s) {
    stationary_ = 0;
    converged_ = 0;
    if (!s.tolerance_mode()) return;
    above_ = 0;
    window_start_ = Scalar(0);
    best_ = std::numeric_limits<Scalar>::max();
    previous_lambda_ = Scalar(0);
    target_ = first_target(s);  // the continuation starts again on the new model
    target_steps_ = 0;
  }

  /// Growths of lambda since init().
  std::int64_t growths() const { return growths_; }
  /// Back-offs since init() (each halves the steps).
  std::int64_t backoffs() const { return backoffs_; }
  std::int64_t net_growths() const { return level_; }  ///< growths not taken back by a back-off
  Scalar step_scale() const { return scale_; }  ///< tolerance mode: the back-offs' factor on the steps
  /// The continuation's first target: max(epsilon, continuation_start).
  static Scalar first_target(const Settings& s) {
    return s.continuation_start > s.gap_tolerance ? s.continuation_start : s.gap_tolerance;
  }
  /// Tolerance mode: the gap the rule works toward now (the continuation: from max(epsilon,
  /// continuation_start) down to epsilon); 0 in fixed mode.
  Scalar gap_target() const { return target_; }
  /// The verdict: the last convergence_window steps were stationary and met the certified tolerance.
  bool converged(const Settings& s) const { return converged_ >= s.convergence_window; }
  /// Whether the last convergence_window steps were stationary (|G| <= stationarity_tolerance).
  bool stationary(const Settings& s) const { return stationary_ >= s.convergence_window; }

  /// Checks that this state (a checkpoint's) is one reset() and observe() can leave after
  /// `iteration` steps under s: in fixed mode reset()'s; in tolerance mode lambda in
  /// [lambda_start, lambda_max], fewer steps above epsilon than lambda_patience, at most one
  /// growth per step (so that no count can overflow before the iteration count does), the
  /// continuation's target in [epsilon, max(epsilon, continuation_start)]. The verdict's counts: at most the steps taken, the certified run within the stationary run,
  /// no certified run outside exact tolerance mode.
  /// @return ok or checkpoint_corrupt.
  Status validate_state(const Settings& s, std::int64_t iteration) const {
    const bool counts = above_ >= 0 && growths_ >= 0 && above_ <= iteration && growths_ <= iteration &&
                        backoffs_ >= 0 && backoffs_ <= iteration &&
                        level_ >= 0 && level_ <= growths_ && scale_ > Scalar(0) && scale_ <= Scalar(1) &&
                        target_ >= s.gap_tolerance && target_ <= first_target(s) && target_steps_ >= 0 &&
                        target_steps_ <= iteration &&
                        (previous_lambda_ == Scalar(0) ||
                         (previous_lambda_ >= s.lambda_start && previous_lambda_ < lambda_));
    const bool certifies = s.tolerance_mode() && s.gradient == GradientMode::exact;
    const bool verdict = stationary_ >= 0 && stationary_ <= iteration && converged_ >= 0 &&
                         converged_ <= stationary_ && (certifies || converged_ == 0);
    const bool valid = verdict && (s.tolerance_mode()
                                       ? counts && lambda_ >= s.lambda_start && lambda_ <= s.lambda_max &&
                                             above_ < s.lambda_patience
                                       : lambda_ == s.lambda_start && above_ == 0 && growths_ == 0 &&
                                             estimate_ == Scalar(0) && window_start_ == Scalar(0) &&
                                             scale_ == Scalar(1) && previous_lambda_ == Scalar(0) &&
                                             best_ == Scalar(0) && window_min_ == Scalar(0) &&
                                             backoffs_ == 0 && level_ == 0 && target_ == Scalar(0) &&
                                             target_steps_ == 0);
    return valid ? Status::ok : Status::checkpoint_corrupt;
  }

  /// The schedule's own part of a step's report, written into r after the step's measurements
  /// (lambda, step_x, the oracle's fields and the gaps, which the solver writes): the target, the
  /// verdicts and the counts.
  void describe(const Settings& s, ScheduleReport<Scalar>& r) const {
    r.gap_target = target_;
    r.tolerance_met = s.tolerance_mode() && r.gap_bound <= s.gap_tolerance;
    r.converged = converged(s);
    r.lambda_growths = growths_;
    r.lambda_backoffs = backoffs_;
  }

  /// The state a checkpoint carries, in image order: v(fields...).
  template <class Self, class Visitor>
  static void visit_state(Self& self, Visitor&& v) {
    v(self.lambda_, self.above_, self.growths_, self.estimate_, self.window_start_, self.stationary_, self.converged_,
      self.scale_, self.previous_lambda_, self.best_, self.window_min_, self.backoffs_, self.level_, self.target_,
      self.target_steps_);
  }

 private:
  // The steps changed (a back-off): the best gap starts again from here.
  void changed() { best_ = estimate_; }
  void back_off() {
    if (previous_lambda_ > Scalar(0)) {  // take the last growth back
      lambda_ = previous_lambda_;
      previous_lambda_ = Scalar(0);
      --level_;
    }
    if (backoffs_ < kMaxHalvings) scale_ /= Scalar(2);
    ++backoffs_;
    changed();
  }
  static constexpr std::int64_t kMaxHalvings = 30;

  Scalar lambda_ = Scalar(0);        // tolerance mode: lambda of the next step
  std::int64_t above_ = 0;           // consecutive steps with the gap above epsilon since the last growth
  std::int64_t growths_ = 0;         // growths of lambda since init()
  Scalar estimate_ = Scalar(0);      // the measured gap after the last step (sampled: averaged)
  Scalar window_start_ = Scalar(0);  // the stall test's reference: the previous window's low, or the
                                     // current window's first gap (0: none yet)
  std::int64_t stationary_ = 0;      // consecutive steps with |G| <= stationarity_tolerance
  std::int64_t converged_ = 0;       // ... of which the last ones met the certified tolerance
  Scalar scale_ = Scalar(1);         // tolerance mode: the steps' factor, halved by each back-off
  Scalar previous_lambda_ = Scalar(0);  // lambda before its last growth (0: the last change was no growth)
  Scalar best_ = Scalar(0);          // the smallest measured gap since init() or the last back-off
  Scalar window_min_ = Scalar(0);    // the smallest measured gap of the current window
  std::int64_t backoffs_ = 0;        // back-offs since init()
  std::int64_t level_ = 0;           // growths not taken back
  Scalar target_ = Scalar(0);        // tolerance mode: the gap the rule compares with (continuation: from
                                     // max(epsilon, continuation_start) down to epsilon)
  std::int64_t target_steps_ = 0;    // steps at or below target_ since it was set
};

namespace detail {

// A checkpoint carries the schedule's state: lambda, the counts, the measured gaps.
template <typename Scalar>
struct CheckpointField<PenaltySchedule<Scalar>> {
  using Real = CheckpointField<Scalar>;
  using Count = CheckpointField<std::int64_t>;
  static constexpr std::size_t size = 8 * Real::size + 7 * Count::size;
  // Each field in visit_state's order, by its own type's CheckpointField.
  template <class Schedule, class F>
  static void each(Schedule& s, F&& f) {
    PenaltySchedule<Scalar>::visit_state(s, [&](auto&... fields) { (f(fields), ...); });
  }
  static void write(unsigned char*& p, const PenaltySchedule<Scalar>& s) {
    each(s, [&](const auto& field) { CheckpointField<std::decay_t<decltype(field)>>::write(p, field); });
  }
  static Status check(const unsigned char*& p) {
    Status st = Status::ok;
    PenaltySchedule<Scalar> types;  // only the fields' types: check reads the image alone
    each(types, [&](const auto& field) {
      if (st == Status::ok) st = CheckpointField<std::decay_t<decltype(field)>>::check(p);
    });
    return st;
  }
  static void read(const unsigned char*& p, PenaltySchedule<Scalar>& s) {
    each(s, [&](auto& field) { CheckpointField<std::decay_t<decltype(field)>>::read(p, field); });
  }
};

}  // namespace detail

}  // namespace pbrl
