#pragma once
// A problem whose lower-level transition model the device learns from its own transitions: the
// problem, a TransitionEstimate around the caller's prior, and two RAM transition arrays, the one
// the solver reads and the one a refresh writes. docs/estimation.md has the rules and a loop.
//
// A refresh writes the estimate's mean into the array the solver does not read, in slices of at
// most max_rows rows (bounded work per tick), and hands it to the solver with swap_transition()
// (swap_model for the transition alone) in a slice of its own; the arrays then trade roles. The
// solver never reads a half-written model: a step in progress at the commit read the old one and
// is abandoned. Observations made while a refresh is in progress count toward the next one.
//
// The solver keeps a pointer to problem(): init the solver after init() here, and do not move or
// copy an EstimatedModel while a solver uses it. Every call validates its arguments and on an
// error status changes nothing.

#include "pbrl/estimate/transition_estimate.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace pbrl {

namespace detail {

template <class Problem, class = void>
struct HasLeaderActions : std::false_type {};
template <class Problem>
struct HasLeaderActions<Problem, std::void_t<decltype(Problem::kLeaderActions)>> : std::true_type {};
template <class Problem, class = void>
struct HasActions1 : std::false_type {};
template <class Problem>
struct HasActions1<Problem, std::void_t<decltype(Problem::kActions1)>> : std::true_type {};

// The actions of a problem's first lower-level player (Stackelberg: the leader's, whose actions
// index the transition; incentive design: agent 1's); single agent: all of them.
template <class Problem>
constexpr int first_actions() {
  if constexpr (HasLeaderActions<Problem>::value) {
    return Problem::kLeaderActions;
  } else if constexpr (HasActions1<Problem>::value) {
    return Problem::kActions1;
  } else {
    return Problem::kActions;
  }
}

}  // namespace detail

/// A problem whose lower-level transition model the device learns from its own transitions: the
/// problem, a TransitionEstimate around the caller's prior, and two RAM transition arrays, the one
/// the solver reads and the one a refresh writes (docs/estimation.md: the rules and a loop).
/// The solver keeps a pointer to problem(): init the solver after init() here, and do not move or
/// copy an EstimatedModel while a solver uses it. Every call validates its arguments and on an
/// error status changes nothing.
/// @tparam Problem a problem class with Data and replace_transition (problems/)
/// @tparam Count the estimate's count type (TransitionEstimate)
template <class Problem, typename Count = float>
class EstimatedModel {
 public:
  /// The problem's floating-point type.
  using Scalar = typename Problem::Scalar;
  /// The problem's data (its init()'s argument).
  using Data = typename Problem::Data;
  /// The number of states.
  static constexpr int S = Problem::kStates;
  /// The rows of the lower-level transition array.
  static constexpr int kRows = Problem::kTransitionRows;
  /// The first lower-level player's actions (Stackelberg: the leader's, whose actions index the
  /// transition; single agent: all of them).
  static constexpr int kActions1 = detail::first_actions<Problem>();  // joint rows: (s*A1 + a1)*A2 + a2
  /// The second player's actions (1 for a single agent).
  static constexpr int kActions2 = kRows / S / kActions1;
  /// The estimate's type.
  using Estimate = TransitionEstimate<Scalar, S, kRows, Count>;

  /// Starts on the prior: the problem's data; its transition array is the estimate's prior (the
  /// caller's, read in place, unchanged while used) and the model the solver starts on.
  /// Validates the data as the problem's init() does and the strength and settings as the
  /// estimate's init() does.
  /// @return ok; null_pointer (no transition array); the problem's init() statuses; the
  ///         estimate's init() statuses.
  Status init(const Data& prior, Scalar strength, const EstimateSettings<Scalar>& settings = {}) {
    if (prior.transition == nullptr) return Status::null_pointer;
    {
      Problem check;  // the data, on the stack: a view of pointers
      if (Status st = check.init(prior); st != Status::ok) return st;
    }
    if (Status st = estimate_.init(prior.transition, strength, settings); st != Status::ok) return st;
    std::memcpy(model_[0], prior.transition, sizeof(model_[0]));
    Data data = prior;
    data.transition = model_[0];
    front_ = 0;
    next_row_ = -1;
    const Status st = problem_.init(data);  // the same numbers init() accepted above
    initialized_ = st == Status::ok;
    return st;
  }
  /// Whether init() has succeeded.
  bool initialized() const { return initialized_; }

  /// The problem to hand to the solver's init(); it reads model().
  const Problem& problem() const { return problem_; }
  /// The problem to hand to the solver's init() (non-const: swap_model and swap_transition take it).
  Problem& problem() { return problem_; }
  /// The estimate: its observations, counts and state (save_checkpoint(solver, estimate(), ...)).
  const Estimate& estimate() const { return estimate_; }
  /// The estimate, for restore_checkpoint(solver, estimate(), ...).
  Estimate& estimate() { return estimate_; }
  /// The transition array the solver reads now.
  const Scalar* model() const { return model_[front_]; }

  // One observed transition (TransitionEstimate::observe): joint row, or (s, a) of a single agent,
  // or (s, a1, a2) of two players (Stackelberg: leader, follower).
  /// One observed transition from joint row `row` to s_next (TransitionEstimate::observe_row).
  /// @return the estimate's statuses; on error nothing changed.
  Status observe_row(int row, int s_next) { return estimate_.observe_row(row, s_next); }
  /// One observed transition (s, a) -> s_next of a single agent (TransitionEstimate::observe).
  /// @return the estimate's statuses; on error nothing changed.
  Status observe(int s, int a, int s_next) { return estimate_.observe(s, a, s_next); }
  /// One observed transition (s, a1, a2) -> s_next of two players (Stackelberg: leader, follower).
  /// @return the estimate's statuses; on error nothing changed.
  Status observe(int s, int a1, int a2, int s_next) {
    return estimate_.template observe<kActions1, kActions2>(s, a1, a2, s_next);
  }

  // The refresh rule (TransitionEstimate::refresh_due), and whether a refresh is under way.
  /// The refresh rule (TransitionEstimate::refresh_due): whether enough was observed since the
  /// last refresh.
  bool refresh_due() const { return estimate_.refresh_due(); }
  /// Whether a refresh is under way (refresh_slice() started one and has not committed).
  bool refresh_in_progress() const { return next_row_ >= 0; }

  /// One slice of a refresh. With none in progress it starts one (mark_refreshed); then it writes
  /// the next at most max_rows rows of the mean, or, once every row is written, commits:
  /// solver.swap_transition(problem(), ...) with the written array (committed = true). Work:
  /// max_rows * S (plus the discount's O(log d) per row), or the commit's: the array's validation
  /// and digest, O(kRows * S).
  /// @param solver the solver init()'d on problem()
  /// @param max_rows the most rows this slice writes (>= 1, else bad_setting)
  /// @param committed set to whether this slice committed the refresh
  /// @return ok; not_initialized (this or the solver); bad_setting (max_rows, a solver of another
  ///         problem); count_overflow (no room for a model generation); the estimate's or
  ///         swap_transition's statuses. A solver that could not take the commit is refused before
  ///         a refresh starts, with nothing changed.
  template <class Solver>
  Status refresh_slice(Solver& solver, int max_rows, bool& committed) {
    committed = false;
    if (!initialized_) return Status::not_initialized;
    if (max_rows < 1) return Status::bad_setting;
    if (next_row_ < 0) {
      if (Status st = can_commit(solver); st != Status::ok) return st;
      estimate_.mark_refreshed();
      next_row_ = 0;
    }
    if (!solver.initialized()) return Status::not_initialized;
    Scalar* const back = model_[1 - front_];
    if (next_row_ < kRows) {
      const int n = max_rows < kRows - next_row_ ? max_rows : kRows - next_row_;
      if (Status st = estimate_.write_mean(back, next_row_, n); st != Status::ok) return st;
      next_row_ += n;
      return Status::ok;
    }
    if (Status st = solver.swap_transition(problem_, back); st != Status::ok) return st;
    front_ = 1 - front_;
    next_row_ = -1;
    committed = true;
    return Status::ok;
  }

  /// A whole refresh at once, from row 0 (a refresh in progress starts over): after a restored
  /// checkpoint, or where the work need not be split. Work: kRows * S and the commit's.
  /// @return refresh_slice()'s statuses.
  template <class Solver>
  Status refresh(Solver& solver) {
    if (!initialized_) return Status::not_initialized;
    if (Status st = can_commit(solver); st != Status::ok) return st;
    next_row_ = -1;
    bool committed = false;
    for (;;) {
      if (Status st = refresh_slice(solver, kRows, committed); st != Status::ok) return st;
      if (committed) return Status::ok;
    }
  }

 private:
  // What a commit checks of the solver, checked before a refresh starts so that a refused refresh
  // changes nothing: init()'d, on problem(), with room for one more model generation. (The commit
  // also validates the written array, which a mean of a valid prior and counts always passes.)
  template <class Solver>
  Status can_commit(const Solver& solver) const {
    if (!solver.initialized()) return Status::not_initialized;
    if (solver.problem() != &problem_) return Status::bad_setting;
    if (solver.model_generation() == std::numeric_limits<std::int64_t>::max()) return Status::count_overflow;
    return Status::ok;
  }

  Problem problem_{};
  Estimate estimate_{};
  Scalar model_[2][kRows * S] = {};
  int front_ = 0;       // the array the solver reads
  int next_row_ = -1;   // the refresh's next row to write; kRows: the commit; -1: none in progress
  bool initialized_ = false;
};

}  // namespace pbrl
