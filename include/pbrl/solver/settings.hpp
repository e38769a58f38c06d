#pragma once
// Settings that every solver and baseline shares, with their enums and their validation, in one
// place: how the lower level's gradients are obtained (exact or sampled), and, for the penalty
// solvers (Pbrl, PbrlZeroSum), the oracle and the penalty schedule (fixed ramp or a lower-level
// gap tolerance; solver/penalty_schedule.hpp says how the tolerance mode adapts).
// Each struct lists its fields once, in visit(), each with its domain and its name (the member
// path, dotted for nested fields: "policy.floor"): validate() checks the domains through it, the
// checkpoint's settings digest hashes the fields through it, tools/codegen reads settings files by
// the names (enums by enum_names, enum_names.hpp). What relates two fields (lambda_max >=
// lambda_start, sampled mode needs the policy-gradient oracle) and what depends on the action
// count (PolicySet) is checked beside it.

#include "pbrl/core/detail/enum_names.hpp"
#include "pbrl/model/policy.hpp"
#include "pbrl/penalty/penalty_kind.hpp"
#include "pbrl/sampling/sampling_settings.hpp"
#include "pbrl/core/status.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace pbrl {

// Each enum with its enumerators' names (enum_names.hpp: settings files read them by name); the
// penalty's kind is PenaltyKind (penalty/penalty_kind.hpp).
/// The lower level's oracle: policy mirror descent, projected or softmax policy gradient, or soft
/// value iteration (oracle/). Sampled mode needs policy_gradient.
enum class OracleKind : unsigned char { policy_mirror_descent, policy_gradient, soft_value_iteration };
/// OracleKind's enumerator names, as settings files spell them.
constexpr EnumNames<OracleKind, 3> enum_names(OracleKind) {
  return {{"policy_mirror_descent", "policy_gradient", "soft_value_iteration"}};
}
static_assert(enum_names(OracleKind{}).size == int(OracleKind::soft_value_iteration) + 1, "a name per enumerator");
/// The geometry of the penalty solvers' step on the lower-level variables (softmax policies).
/// euclidean: the paper's projected gradient on the logits. natural: the natural policy gradient
/// (the Fisher metric of pi_y weighted by its state occupancy d): each state's row of dF/dpi,
/// centred under pi_y and divided by d(s), so that rarely visited states and nearly deterministic
/// policies are not slowed down (model/policy.hpp, natural_policy_gradient). automatic: natural in
/// tolerance mode with exact gradients and softmax policies, else euclidean (fixed mode: the
/// paper's step). How it was chosen: docs/tolerance.md.
enum class LowerGeometry : unsigned char { automatic, euclidean, natural };
/// LowerGeometry's enumerator names, as settings files spell them.
constexpr EnumNames<LowerGeometry, 3> enum_names(LowerGeometry) { return {{"automatic", "euclidean", "natural"}}; }
static_assert(enum_names(LowerGeometry{}).size == int(LowerGeometry::natural) + 1, "a name per enumerator");
/// Where the lower level's gradients come from. exact: every gradient from the model (policy
/// evaluations). sampled: from trajectories of the generative model (sampling/detail/estimators.hpp).
enum class GradientMode : unsigned char { exact, sampled };
/// GradientMode's enumerator names, as settings files spell them.
constexpr EnumNames<GradientMode, 2> enum_names(GradientMode) { return {{"exact", "sampled"}}; }
static_assert(enum_names(GradientMode{}).size == int(GradientMode::sampled) + 1, "a name per enumerator");

/// Which gradient sources a solver or baseline type carries, a template parameter as the
/// evaluation method is. exact_and_sampled (the default): settings.gradient chooses at init().
/// exact: the type holds no sampled-mode scratch (trajectory buffer, sampled-penalty state, second
/// random stream) and has no sampled code; init() refuses GradientMode::sampled. A solver's
/// checkpoint image is the same.
enum class GradientSources : unsigned char { exact_and_sampled, exact };

/// The sampled-mode scratch of an exact-only type: nothing.
struct NoSampledScratch {};
/// The sampled-mode scratch of a solver: State, or nothing for an exact-only type.
template <GradientSources Sources, class State>
using SampledScratch = std::conditional_t<Sources == GradientSources::exact, NoSampledScratch, State>;

/// Whether k is one of OracleKind's enumerators.
inline bool is_oracle_kind(OracleKind k) {
  return k == OracleKind::policy_mirror_descent || k == OracleKind::policy_gradient ||
         k == OracleKind::soft_value_iteration;
}

/// The values one setting accepts. inactive: the setting is not used in the current mode (a
/// tolerance-mode setting in fixed mode, a sampling setting in exact mode), and any value passes;
/// condition, if given, is the rule of the mode the setting is used in ("gap_tolerance > 0"), for
/// readers (docs/reference/settings.md), never evaluated.
struct Domain {
  /// The kinds of value sets.
  enum class Kind : unsigned char {
    any,            ///< every value
    step_size,      ///< finite and > 0 (Status::bad_step_size)
    positive,       ///< finite and > 0
    non_negative,   ///< finite and >= 0
    above_one,      ///< finite and > 1
    unit,           ///< in [0, 1]
    unit_above_zero,  ///< in (0, 1]
    range,          ///< an integer or enum in [lo, hi]
    policy_set      ///< every value here; validate(PolicySet, actions) checks it with the action count
  };
  /// The value set.
  Kind kind = Kind::any;
  /// @{
  /// Kind::range: the bounds, both included.
  std::int64_t lo = 0, hi = 0;
  /// @}
  /// Whether the setting is checked in the current mode (else every value passes).
  bool active = true;
  /// The rule of the mode the setting is used in, for readers; null if none.
  const char* condition = nullptr;

  /// The status a value outside the domain gets: bad_step_size for step sizes, else bad_setting.
  Status refusal() const { return kind == Kind::step_size ? Status::bad_step_size : Status::bad_setting; }

  /// Whether value is in the domain (always, when inactive); NaN is in no domain but any and
  /// policy_set.
  template <typename T>
  bool admits(const T& value) const {
    if (!active || kind == Kind::any || kind == Kind::policy_set) return true;
    if constexpr (std::is_floating_point<T>::value) {
      switch (kind) {
        case Kind::step_size:
        case Kind::positive: return std::isfinite(value) && value > T(0);
        case Kind::non_negative: return std::isfinite(value) && value >= T(0);
        case Kind::above_one: return std::isfinite(value) && value > T(1);
        case Kind::unit: return value >= T(0) && value <= T(1);
        case Kind::unit_above_zero: return value > T(0) && value <= T(1);
        default: return false;
      }
    } else if constexpr (std::is_enum<T>::value || std::is_integral<T>::value) {
      const auto v = static_cast<std::int64_t>(value);
      return kind == Kind::range && v >= lo && v <= hi;
    } else {
      return false;
    }
  }
};

/// The domains the settings' visit() gives their fields (Domain::Kind's sets, by name).
namespace domain {
/// Every value.
constexpr Domain any() { return {}; }
/// A step size: finite and > 0 (else bad_step_size).
constexpr Domain step_size() { return {Domain::Kind::step_size}; }
/// Finite and > 0.
constexpr Domain positive() { return {Domain::Kind::positive}; }
/// Finite and >= 0.
constexpr Domain non_negative() { return {Domain::Kind::non_negative}; }
/// Finite and > 1.
constexpr Domain above_one() { return {Domain::Kind::above_one}; }
/// In [0, 1].
constexpr Domain unit() { return {Domain::Kind::unit}; }
/// In (0, 1].
constexpr Domain unit_above_zero() { return {Domain::Kind::unit_above_zero}; }
/// An integer or enum in [lo, hi].
constexpr Domain range(std::int64_t lo, std::int64_t hi) { return {Domain::Kind::range, lo, hi}; }
/// An enum whose values run from 0 to last.
template <typename Enum>
constexpr Domain enumerator(Enum last) {
  return range(0, static_cast<std::int64_t>(last));
}
/// The policy set's fields: validate<Scalar, A>(PolicySet) checks them against the action count.
constexpr Domain policy_set() { return {Domain::Kind::policy_set}; }
/// A mode of the settings: whether it is on, and the rule that turns it on, as readers see it.
struct Mode {
  /// The mode is on.
  bool on;
  /// The rule that turns it on ("gap_tolerance > 0").
  const char* rule;
};
/// d, checked only in the mode.
constexpr Domain when(Mode mode, Domain d) {
  d.active = mode.on;
  d.condition = mode.rule;
  return d;
}
/// d, checked only if active (a mode without a rule to show).
constexpr Domain when(bool active, Domain d) {
  d.active = active;
  return d;
}
}  // namespace domain

/// validate()'s visitor: the first field outside its domain decides the status.
struct DomainCheck {
  /// ok, or the refusal of the first field outside its domain.
  Status status = Status::ok;
  /// Visits one field: value, its domain and its name.
  template <typename T>
  void operator()(const T& value, const Domain& d, const char* /*name*/) {
    if (status == Status::ok && !d.admits(value)) status = d.refusal();
  }
};

/// Checks every field of a settings struct against its domain (its visit()).
/// @return ok, or the first refused field's Domain::refusal(): bad_step_size or bad_setting.
template <class Settings>
Status check_domains(const Settings& s) {
  DomainCheck check;
  s.visit(check);
  return check.status;
}

/// Largest inner step count accepted (inner_steps, inner_steps_max; a work cap, config.hpp): keeps
/// the work of one step() bounded and known.
constexpr int kMaxInnerSteps = PBRL_MAX_INNER_STEPS;

/// Exact or sampled lower-level gradients; the random stream of sampled mode.
struct GradientSettings {
  GradientMode gradient = GradientMode::exact;  ///< sampled: Monte-Carlo lower-level gradients
  SamplingSettings sampling{};                  ///< sampled mode: horizon H <= kMaxHorizon, batch B
  std::uint32_t seed = 1u;                      ///< sampled mode: init() seeds the solver's Rng with it

  /// Each field once, with its domain and its name (visitor: v(field, Domain, name)).
  template <class Visitor>
  void visit(Visitor& v) const {
    const domain::Mode sampled{gradient == GradientMode::sampled, "gradient = sampled"};
    v(gradient, domain::enumerator(GradientMode::sampled), "gradient");
    v(sampling.horizon, domain::when(sampled, domain::range(1, kMaxHorizon)), "sampling.horizon");
    v(sampling.batch, domain::when(sampled, domain::range(1, kMaxBatch)), "sampling.batch");
    v(sampling.common_random_numbers, domain::any(), "sampling.common_random_numbers");
    v(seed, domain::any(), "seed");
  }
};

/// Checks every field's domain.
/// @return ok, bad_setting or bad_step_size (check_domains).
inline Status validate(const GradientSettings& s) { return check_domains(s); }

/// The settings of a penalty solver (Pbrl, PbrlZeroSum) but the step size of the lower-level
/// variables and the penalty kind, which each solver adds.
///
/// Penalty constant lambda_k, two modes:
///   - fixed (gap_tolerance = 0): a linear ramp from lambda_start to lambda_final over
///     lambda_ramp iterations, then lambda_final; the steps and T are as given.
///   - tolerance (gap_tolerance = epsilon > 0): lambda starts at lambda_start and grows by
///     lambda_growth, up to lambda_max, while the measured lower-level gap stays above epsilon and
///     has stopped falling (over lambda_patience steps, by less than the factor lambda_stall);
///     the steps shrink as lambda grows, alpha_k = 1 / (1/alpha + lambda_k * penalty_smoothness)
///     (the paper's alpha <= 1/(L_f + lambda L_p), with L_f read as 1/alpha), times a scale that
///     starts at min(1, lambda_step_limit / (step_x * lambda_start)); the oracle runs at
///     least inner_steps and at most inner_steps_max steps, until its own gap is below
///     oracle_gap_fraction * max(epsilon, the last measured gap). lambda_final and lambda_ramp
///     are not used. The defaults of the tolerance settings are the ones measured best by
///     bench/tolerance.cpp (docs/tolerance.md).
///
/// Each field's domain and the mode it is checked in: visit() (docs/reference/settings.md).
template <typename Scalar>
struct PenaltySolverSettings : GradientSettings {
  PolicySet<Scalar> policy{};          ///< parameterization and set of the lower-level policies
  /// The lower level's oracle (sampled mode: policy_gradient).
  OracleKind oracle = OracleKind::policy_mirror_descent;
  PolicySet<Scalar> oracle_policy{};   ///< policy-gradient oracle: projected (direct) or softmax
  int inner_steps = 1;                 ///< T (tolerance mode: the least number of oracle steps)
  Scalar oracle_step = Scalar(1);      ///< eta of PMD or of the policy-gradient oracle
  Scalar step_x = Scalar(0.1);         ///< alpha for x
  Scalar lambda_start = Scalar(1);     ///< lambda at iteration 0
  Scalar lambda_final = Scalar(1);     ///< fixed mode: lambda once the ramp is over
  int lambda_ramp = 0;                 ///< fixed mode: iterations of the linear ramp (0: lambda = lambda_final)
  Scalar gap_tolerance = Scalar(0);    ///< epsilon > 0: tolerance mode; 0: fixed mode
  Scalar lambda_max = Scalar(1000);    ///< tolerance mode: the cap of lambda
  Scalar lambda_growth = Scalar(2);    ///< tolerance mode: lambda <- growth * lambda (> 1)
  int lambda_patience = 5;             ///< tolerance mode: steps above epsilon before lambda grows (>= 1)
  Scalar lambda_stall = Scalar(0.9);   ///< tolerance mode: ... and only if the gap fell by less than this
                                       ///< factor since the last window, in [0, 1] (0: whenever above epsilon)
  Scalar lambda_backoff = Scalar(2);   ///< tolerance mode: the gap's rise over its best that halves the steps (> 1)
  Scalar lambda_step_limit = Scalar(0.75);   ///< tolerance mode: the steps' scale starts at min(1, this /
                                             ///< (step_x * lambda_start)), so that a large lambda_start does
                                             ///< not begin with long steps (>= 0; 0: the scale starts at 1)
  Scalar penalty_smoothness = Scalar(0.01);  ///< tolerance mode: L_p in the step scaling (>= 0); the
                                             ///< theorem's L_p is problem-dependent (the default's
                                             ///< choice: docs/tolerance.md)
  Scalar continuation_start = Scalar(1e-2);  ///< tolerance mode: the schedule's first target for the gap,
                                             ///< max(gap_tolerance, this) (>= 0; at most gap_tolerance: epsilon
                                             ///< from the start)
  Scalar continuation_divisor = Scalar(10);  ///< tolerance mode: the target's divisor (down to gap_tolerance)
                                             ///< each time the iterates are stationary at it (> 1)
  int continuation_patience = 0;             ///< tolerance mode: if positive, ... or have been at or below it
                                             ///< this many steps (>= 0; 0: only once stationary, so that a
                                             ///< tighter epsilon costs steps, not answer quality)
  int inner_steps_max = 100;           ///< tolerance mode: T_max >= inner_steps
  Scalar oracle_gap_fraction = Scalar(0.1);  ///< tolerance mode: the oracle's target over max(epsilon, last
                                             ///< measured gap), in (0, 1]
  // The verdict (solver/penalty_schedule.hpp): converged once gap_bound <= gap_tolerance and
  // |G| <= stationarity_tolerance in each of the last convergence_window steps.
  Scalar stationarity_tolerance = Scalar(1e-2);  ///< on the projected-gradient mapping's norm |G| (>= 0)
  int convergence_window = 10;                   ///< consecutive steps (>= 1)
  /// The lower-level step's geometry (natural: exact gradients and softmax policies only).
  LowerGeometry lower_geometry = LowerGeometry::automatic;

  /// Whether the schedule is in tolerance mode: gap_tolerance > 0.
  bool tolerance_mode() const { return gap_tolerance > Scalar(0); }
  /// Whether the lower-level step is the natural one (lower_geometry, automatic resolved).
  bool natural_lower_step() const {
    if (lower_geometry == LowerGeometry::natural) return true;
    return lower_geometry == LowerGeometry::automatic && tolerance_mode() && gradient == GradientMode::exact &&
           policy.parameterization == Parameterization::softmax;
  }

  /// Each field once, with its domain (and the mode it is checked in) and its name
  /// (visitor: v(field, Domain, name)).
  template <class Visitor>
  void visit(Visitor& v) const {
    using namespace domain;
    GradientSettings::visit(v);
    const Mode tolerance{tolerance_mode(), "gap_tolerance > 0"};
    v(policy.parameterization, policy_set(), "policy.parameterization");
    v(policy.floor, policy_set(), "policy.floor");
    v(policy.logit_bound, policy_set(), "policy.logit_bound");
    v(oracle, enumerator(OracleKind::soft_value_iteration), "oracle");
    v(oracle_policy.parameterization, policy_set(), "oracle_policy.parameterization");
    v(oracle_policy.floor, policy_set(), "oracle_policy.floor");
    v(oracle_policy.logit_bound, policy_set(), "oracle_policy.logit_bound");
    v(inner_steps, range(0, kMaxInnerSteps), "inner_steps");
    v(oracle_step, step_size(), "oracle_step");
    v(step_x, step_size(), "step_x");
    v(lambda_start, non_negative(), "lambda_start");
    v(lambda_final, non_negative(), "lambda_final");
    v(lambda_ramp, range(0, std::numeric_limits<int>::max()), "lambda_ramp");
    v(gap_tolerance, non_negative(), "gap_tolerance");
    v(lambda_max, when(tolerance, positive()), "lambda_max");
    v(lambda_growth, when(tolerance, above_one()), "lambda_growth");
    v(lambda_patience, when(tolerance, range(1, std::numeric_limits<int>::max())),
      "lambda_patience");
    v(lambda_stall, when(tolerance, unit()), "lambda_stall");
    v(lambda_backoff, when(tolerance, above_one()), "lambda_backoff");
    v(lambda_step_limit, when(tolerance, non_negative()), "lambda_step_limit");
    v(penalty_smoothness, when(tolerance, non_negative()), "penalty_smoothness");
    v(continuation_start, when(tolerance, non_negative()), "continuation_start");
    v(continuation_divisor, when(tolerance, above_one()), "continuation_divisor");
    v(continuation_patience, when(tolerance, range(0, std::numeric_limits<int>::max())), "continuation_patience");
    v(inner_steps_max, when(tolerance, range(1, kMaxInnerSteps)), "inner_steps_max");
    v(oracle_gap_fraction, when(tolerance, unit_above_zero()), "oracle_gap_fraction");
    v(stationarity_tolerance, non_negative(), "stationarity_tolerance");
    v(convergence_window, range(1, std::numeric_limits<int>::max()), "convergence_window");
    v(lower_geometry, enumerator(LowerGeometry::natural), "lower_geometry");
  }
};

/// Checks every field's domain, then what relates fields; the policy sets are the solver's to
/// check (they depend on its action counts).
/// @return ok; bad_step_size or bad_setting (a domain); bad_setting (tolerance mode with
///         lambda_start not > 0, lambda_max < lambda_start or inner_steps_max < inner_steps;
///         sampled mode with an oracle other than policy_gradient; lower_geometry natural with
///         sampled gradients or direct policies).
template <typename Scalar>
Status validate(const PenaltySolverSettings<Scalar>& s) {
  if (Status st = check_domains(s); st != Status::ok) return st;
  if (s.tolerance_mode() &&
      (!(s.lambda_start > Scalar(0)) || s.lambda_max < s.lambda_start || s.inner_steps_max < s.inner_steps))
    return Status::bad_setting;
  if (s.gradient == GradientMode::sampled && s.oracle != OracleKind::policy_gradient) return Status::bad_setting;
  if (s.lower_geometry == LowerGeometry::natural &&
      (s.gradient == GradientMode::sampled || s.policy.parameterization != Parameterization::softmax))
    return Status::bad_setting;
  return Status::ok;
}

}  // namespace pbrl
