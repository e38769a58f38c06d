#pragma once
// The bilevel problem interface (paper, problem BM): min_{x in X, y} f(x, y) s.t. y in
// argmax_y V^{pi_y}_{M_tau(x)}(rho). A problem is any class with these members; the solvers and
// penalties use nothing else (signatures and why: docs/algorithm.md#writing-a-problem; a complete
// problem: problems/reward_shaping.hpp):
//   Scalar, kStates, kActions, kParams, Params; Model, caller storage for what build() takes from x
//   build(x, model, mdp) -> Status   the only member that takes x: checks it, writes M(x) as a view
//   vjp(model, w, v, scale, grad)    grad += scale * J^T(w, v) at the x the model was built for
//   upper(pi, model, ws, scratch, f, grad_x, grad_pi) -> Status    f and its gradients at that x
//       (overwritten; grad_pi in probabilities); it may use model as scratch but must leave what
//       the MDP view, vjp() and sample_vjp() read unchanged
//   validate_parameters(x) -> Status; project_parameters(x)       x in X; projection onto X
// Optional: box() (X itself); vjp_pair(model, first, second, grad) (the value penalty's two
// products in one call, each a VjpTerm);
// sample_vjp(model, sample, grad) for sampled mode (sample: a VjpSample), called
// only where P_x(s_next|s,a) > 0 and sound only if P_x's support does not depend on x. A solver's
// sampled mode refuses a problem without sample_vjp (Status::bad_setting).

#include "pbrl/core/config.hpp"

#include <type_traits>
#include <utility>

namespace pbrl {

namespace detail {
template <class Problem, class Chain, class... Args>
auto upper_on_chain(int, const Problem& problem, const Chain* chain, Args&&... args)
    -> decltype(problem.upper(std::forward<Args>(args)..., chain)) {
  return problem.upper(std::forward<Args>(args)..., chain);
}
template <class Problem, class Chain, class... Args>
auto upper_on_chain(long, const Problem& problem, const Chain*, Args&&... args) {
  return problem.upper(std::forward<Args>(args)...);
}
}  // namespace detail

/// problem.upper(args...), passing `chain` as a last argument to a problem whose upper() takes
/// one: pi's evaluation on M(x) (or nullptr), which it may reuse (evaluate_on_chain) when its
/// own MDP shares M(x)'s chain. A problem without that argument is called without it.
/// @return what problem.upper returns.
template <class Problem, class Chain, class... Args>
auto upper_on_chain(const Problem& problem, const Chain* chain, Args&&... args) {
  return detail::upper_on_chain(0, problem, chain, std::forward<Args>(args)...);
}

/// One sampled step as sample_vjp reads it: the transition (s, a, s_next) of a rollout and the
/// weights of its two terms, grad += reward_weight * grad_x r_x(s,a) + transition_weight *
/// grad_x log P_x(s_next|s,a). Why a struct: the hook's unit is one sampled step, and as one
/// argument it keeps every problem's hook at three parameters.
template <typename Scalar>
struct VjpSample {
  int s;                     ///< the state
  int a;                     ///< the action taken in s (a game: the joint action)
  int s_next;                ///< the state drawn from P_x(.|s,a)
  Scalar reward_weight;      ///< the reward term's factor
  Scalar transition_weight;  ///< the transition term's factor
};

/// Whether Problem offers the per-sample hook sample_vjp (the interface above; sampled mode
/// needs it).
template <class Problem, class = void>
struct has_sample_vjp : std::false_type {};
template <class Problem>
struct has_sample_vjp<Problem, std::void_t<decltype(std::declval<const Problem&>().sample_vjp(
                                   std::declval<const typename Problem::Model&>(),
                                   std::declval<const VjpSample<typename Problem::Scalar>&>(),
                                   std::declval<typename Problem::Params&>()))>> : std::true_type {};

/// One of vjp_pair's two products, scale * J^T(mu, v) with mu(s,a) = occupancy(s) pi(a|s): its
/// role in the value penalty (pi-hat's or pi_y's occupancy, policy, values and sign times lambda).
template <typename Scalar, int S, int A>
struct VjpTerm {
  const StateVector<Scalar, S>& occupancy;        ///< d, the state occupancy of pi
  const StateActionMatrix<Scalar, S, A>& pi;      ///< the policy, in probabilities
  const StateVector<Scalar, S>& value;            ///< v, the values J^T reads
  Scalar scale;                                   ///< the product's factor
};

/// Whether Problem offers vjp_pair(model, first, second, grad) (the value penalty's two products
/// in one call; first and second are VjpTerm).
template <class Problem, class = void>
struct has_vjp_pair : std::false_type {};
template <class Problem>
struct has_vjp_pair<
    Problem,
    std::void_t<decltype(std::declval<const Problem&>().vjp_pair(
        std::declval<const typename Problem::Model&>(),
        std::declval<const VjpTerm<typename Problem::Scalar, Problem::kStates, Problem::kActions>&>(),
        std::declval<const VjpTerm<typename Problem::Scalar, Problem::kStates, Problem::kActions>&>(),
        std::declval<typename Problem::Params&>()))>> : std::true_type {};

/// Box X = [lower, upper]^d, the set the paper's projected update uses for x.
template <typename Scalar>
struct Box {
  /// Lower bound of every coordinate.
  Scalar lower = Scalar(-1);
  /// Upper bound of every coordinate (>= lower).
  Scalar upper = Scalar(1);
};

/// Whether box is a box: both bounds finite and lower <= upper.
template <typename Scalar>
bool valid(const Box<Scalar>& box) {
  return std::isfinite(box.lower) && std::isfinite(box.upper) && box.lower <= box.upper;
}

/// Whether every coordinate of x is finite and within [box.lower, box.upper] (x a stored vector).
template <typename Scalar, typename Derived>
bool contains(const Box<Scalar>& box, const Eigen::MatrixBase<Derived>& x) {
  static_assert(detail::contiguous<Derived>(), "parameters are stored vectors");
  return detail::all_within(x.derived().data(), int(x.size()), box.lower, box.upper);
}

/// Euclidean projection of x onto box, in place: each coordinate clamped to its bounds.
template <typename Scalar, typename Derived>
void project(const Box<Scalar>& box, Eigen::MatrixBase<Derived>& x) {
  x = x.cwiseMax(box.lower).cwiseMin(box.upper);
}

}  // namespace pbrl
