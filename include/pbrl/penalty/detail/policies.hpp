#pragma once
// The policies a penalty compares, bundled by role in the paper's notation: PolicyY is the lower
// level's pi_y, the variable the solver moves (in a game, one player's pi_i), PolicyHat the
// oracle's pi-hat, its approximation of pi*(x) (in a game, one player's approximate best
// response). pi_y and pi-hat are the same Eigen type, so positional lists of them compiled when
// swapped; as distinct types, a call that swaps them does not compile. The exact penalties read
// each policy with its evaluation on M(x), the sampled ones the policy alone:
//   PolicyY{pi_y}    PolicyY{pi_y, eval_y}    PolicyHat{pi_hat}    PolicyHat{pi_hat, eval_hat}
// Either policy may carry the logs its owner keeps beside it (pi-hat: its oracle's; pi_y: a
// softmax's, policy_from_parameters), PolicyHat{pi_hat, eval_hat, &log_pi_hat},
// PolicyY{pi_y, &log_pi_y}, so a penalty forms h and dh/dpi without taking logarithms.
// A bundle holds references to the caller's objects (nothing is copied): build it in the call.

#include "pbrl/core/config.hpp"
#include "pbrl/model/evaluation.hpp"

namespace pbrl {

/// The lower level's pi_y (in a game, one player's pi_i) as a penalty reads it: the policy and,
/// if Evaluated, its evaluation on M(x); references to the caller's objects.
template <typename Scalar, int S, int A, bool Evaluated>
struct PolicyY;
/// pi_y alone (the sampled penalties, the Bellman penalty).
template <typename Scalar, int S, int A>
struct PolicyY<Scalar, S, A, false> {
  /// The policy (probabilities).
  const StateActionMatrix<Scalar, S, A>& pi;
  const StateActionMatrix<Scalar, S, A>* log_pi = nullptr;  ///< log pi, or nullptr: taken where needed
};
/// pi_y with its evaluation on M(x) (the value penalty).
template <typename Scalar, int S, int A>
struct PolicyY<Scalar, S, A, true> {
  /// The policy (probabilities).
  const StateActionMatrix<Scalar, S, A>& pi;
  /// Its evaluation on M(x).
  const Evaluation<Scalar, S, A>& eval;
  /// log pi, or nullptr: taken where needed.
  const StateActionMatrix<Scalar, S, A>* log_pi = nullptr;
};
/// @cond internal
// The deduction guides: PolicyY{pi}, PolicyY{pi, &log_pi}, PolicyY{pi, eval}, PolicyY{pi, eval, &log_pi}.
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&) -> PolicyY<Scalar, S, A, false>;
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&, const StateActionMatrix<Scalar, S, A>*) -> PolicyY<Scalar, S, A, false>;
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&) -> PolicyY<Scalar, S, A, true>;
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&, const StateActionMatrix<Scalar, S, A>*)
    -> PolicyY<Scalar, S, A, true>;
/// @endcond

/// The oracle's pi-hat, its approximation of pi*(x) (in a game, one player's approximate best
/// response), as a penalty reads it: the policy and, if Evaluated, its evaluation on M(x).
template <typename Scalar, int S, int A, bool Evaluated>
struct PolicyHat;
/// pi-hat alone (the sampled penalties).
template <typename Scalar, int S, int A>
struct PolicyHat<Scalar, S, A, false> {
  /// The policy (probabilities).
  const StateActionMatrix<Scalar, S, A>& pi;
};
/// pi-hat with its evaluation on M(x) (the exact penalties).
template <typename Scalar, int S, int A>
struct PolicyHat<Scalar, S, A, true> {
  /// The policy (probabilities).
  const StateActionMatrix<Scalar, S, A>& pi;
  /// Its evaluation on M(x).
  const Evaluation<Scalar, S, A>& eval;
  const StateActionMatrix<Scalar, S, A>* log_pi = nullptr;  ///< log pi, or nullptr: taken where needed
};
/// @cond internal
// The deduction guides: PolicyHat{pi}, PolicyHat{pi, eval}, PolicyHat{pi, eval, &log_pi}.
template <typename Scalar, int S, int A>
PolicyHat(const StateActionMatrix<Scalar, S, A>&) -> PolicyHat<Scalar, S, A, false>;
template <typename Scalar, int S, int A>
PolicyHat(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&) -> PolicyHat<Scalar, S, A, true>;
template <typename Scalar, int S, int A>
PolicyHat(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&, const StateActionMatrix<Scalar, S, A>*)
    -> PolicyHat<Scalar, S, A, true>;
/// @endcond

/// Where an exact penalty adds lambda * grad p: x's gradient and pi_y's (in probabilities).
/// References to the caller's objects: build it in the call, {grad_x, grad_pi}. Why a struct:
/// grad_pi has the type of the penalties' scratch matrix, and a positional swap would compile.
template <class Params, typename Scalar, int S, int A>
struct PenaltyGradient {
  Params& grad_x;                             ///< += lambda * grad_x p
  StateActionMatrix<Scalar, S, A>& grad_pi;   ///< += lambda * grad_pi p
};

}  // namespace pbrl
