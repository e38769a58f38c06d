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

#include "pbrl/config.hpp"
#include "pbrl/evaluation.hpp"

namespace pbrl {

template <typename Scalar, int S, int A, bool Evaluated>
struct PolicyY;
template <typename Scalar, int S, int A>
struct PolicyY<Scalar, S, A, false> {
  const StateActionMatrix<Scalar, S, A>& pi;
  const StateActionMatrix<Scalar, S, A>* log_pi = nullptr;  // log pi, or nullptr: taken where needed
};
template <typename Scalar, int S, int A>
struct PolicyY<Scalar, S, A, true> {
  const StateActionMatrix<Scalar, S, A>& pi;
  const Evaluation<Scalar, S, A>& eval;
  const StateActionMatrix<Scalar, S, A>* log_pi = nullptr;
};
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&) -> PolicyY<Scalar, S, A, false>;
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&, const StateActionMatrix<Scalar, S, A>*) -> PolicyY<Scalar, S, A, false>;
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&) -> PolicyY<Scalar, S, A, true>;
template <typename Scalar, int S, int A>
PolicyY(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&, const StateActionMatrix<Scalar, S, A>*)
    -> PolicyY<Scalar, S, A, true>;

template <typename Scalar, int S, int A, bool Evaluated>
struct PolicyHat;
template <typename Scalar, int S, int A>
struct PolicyHat<Scalar, S, A, false> {
  const StateActionMatrix<Scalar, S, A>& pi;
};
template <typename Scalar, int S, int A>
struct PolicyHat<Scalar, S, A, true> {
  const StateActionMatrix<Scalar, S, A>& pi;
  const Evaluation<Scalar, S, A>& eval;
  const StateActionMatrix<Scalar, S, A>* log_pi = nullptr;  // log pi, or nullptr: taken where needed
};
template <typename Scalar, int S, int A>
PolicyHat(const StateActionMatrix<Scalar, S, A>&) -> PolicyHat<Scalar, S, A, false>;
template <typename Scalar, int S, int A>
PolicyHat(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&) -> PolicyHat<Scalar, S, A, true>;
template <typename Scalar, int S, int A>
PolicyHat(const StateActionMatrix<Scalar, S, A>&, const Evaluation<Scalar, S, A>&, const StateActionMatrix<Scalar, S, A>*)
    -> PolicyHat<Scalar, S, A, true>;

}  // namespace pbrl
