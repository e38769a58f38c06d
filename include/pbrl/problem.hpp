#pragma once
// The bilevel problem interface (paper, problem BM):
//   min_{x in X, y in Y} f(x, y)   s.t.  y in argmax_y V^{pi_y}_{M_tau(x)}(rho).
// A problem is any class with the members below; the solver and the penalties use nothing else.
// Every x-gradient in the paper is an occupancy-weighted vector-Jacobian product through the
// parameterized MDP M(x), so a problem never hands out a dense Jacobian:
//   J^T(w, v) = sum_{s,a} w(s,a) * ( grad_x r_x(s,a) + gamma * sum_s' grad_x P_x(s'|s,a) v(s') )
//
//   using Scalar;  static constexpr int kStates, kActions, kParams;
//   using Params = Vector<Scalar, kParams>;
//   struct Model;                       // caller storage for what build() computes from x: the
//                                       // arrays of M(x) that depend on x and whatever vjp() and
//                                       // sample_vjp() need of x
//   Status build(const Params& x, Model& model, Mdp<...>& mdp) const;   // M(x) as a view
//   void vjp(const Model& model, const StateActionMatrix& w, const StateVector& v, Scalar scale,
//            Params& grad) const;       // grad += scale * J^T(w, v) at the x model was built for:
//                                       // what depends on x comes from build() once per x
//   template <EvaluationMethod M>
//   Status upper(const StateActionMatrix& pi, Model& model, EvaluationWorkspace<..., M>& ws,
//                Evaluation<...>& scratch, Scalar& f, Params& grad_x,
//                StateActionMatrix& grad_pi) const;
//                // f(x, pi) and its gradients (overwritten) at the x model was built for, like
//                // vjp(): what f needs of x is in the model (build() checked x; only build()
//                // takes x). It may use model as scratch but must leave what the MDP view, vjp()
//                // and sample_vjp() read unchanged
//   Status validate_parameters(const Params& x) const;  // x in X
//   void project_parameters(Params& x) const;           // Euclidean projection onto the box X
//
// Optional: const Box<Scalar>& box() const, the box X itself (project_parameters(x) is then
// project(box(), x)); the solvers clamp to it in the same pass as their step (parameter_step,
// solver/projected_step.hpp). Every problem of the library has it.
//
// Optional: the value penalty's two products in one call,
//   void vjp_pair(const Model& model, const StateVector& d1, const StateActionMatrix& pi1,
//                 const StateVector& v1, Scalar scale1, const StateVector& d2,
//                 const StateActionMatrix& pi2, const StateVector& v2, Scalar scale2,
//                 Params& grad) const;   // grad += scale1 * J^T(mu1, v1) + scale2 * J^T(mu2, v2),
//                                        // mu_i(s,a) = d_i(s) pi_i(a|s)
// for a problem whose P_x depends on x and whose two products can share their passes over the
// model (Stackelberg: one pass over P instead of two). Without it, value_penalty calls vjp() twice.
//
// grad_pi is the derivative with respect to the policy probabilities; the solver chains it to
// the parameterization of y.
//
// Optional, for sampled mode (sampling/estimators.hpp; PbrlSettings::gradient = sampled), the
// per-sample form of vjp():
//   void sample_vjp(const Model& model, int s, int a, int s_next, Scalar reward_weight,
//                   Scalar transition_weight, Params& grad) const;   // at the x model was built for
//                // grad += reward_weight * grad_x r_x(s,a)
//                //       + transition_weight * grad_x log P_x(s_next|s,a)
// The estimators call it once per step t of a trajectory with reward_weight = w*gamma^t and
// transition_weight = w*gamma^(t+1)*V_hat_{t+1} (the discount is the caller's), and only with
// P_x(s_next|s,a) > 0 (s_next was drawn from it). Its expectation along trajectories is vjp():
//   E[ sum_t gamma^t (grad r_x(s_t,a_t) + gamma grad log P_x(s_{t+1}|s_t,a_t) V_hat_{t+1}) ] = J^T(mu, V)
// which needs the support of P_x(.|s,a) not to depend on x (a likelihood ratio cannot see
// probability mass that appears where there was none). A problem whose P does not depend on x
// adds only the reward term. has_sample_vjp<Problem>::value tells whether a problem has it; the
// solver's sampled mode refuses (Status::bad_setting) a problem without it.

#include "pbrl/config.hpp"

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

// problem.upper(args...), passing `chain` as a last argument to a problem whose upper() takes
// one: pi's evaluation on M(x) (or nullptr), which it may reuse (evaluate_on_chain) when its
// own MDP shares M(x)'s chain. A problem without that argument is called without it.
template <class Problem, class Chain, class... Args>
auto upper_on_chain(const Problem& problem, const Chain* chain, Args&&... args) {
  return detail::upper_on_chain(0, problem, chain, std::forward<Args>(args)...);
}

// Whether Problem offers the per-sample hook sample_vjp (see above).
template <class Problem, class = void>
struct has_sample_vjp : std::false_type {};
template <class Problem>
struct has_sample_vjp<Problem, std::void_t<decltype(std::declval<const Problem&>().sample_vjp(
                                   std::declval<const typename Problem::Model&>(), 0, 0, 0,
                                   std::declval<typename Problem::Scalar>(),
                                   std::declval<typename Problem::Scalar>(),
                                   std::declval<typename Problem::Params&>()))>> : std::true_type {};

// Whether Problem offers vjp_pair (see above).
template <class Problem, class = void>
struct has_vjp_pair : std::false_type {};
template <class Problem>
struct has_vjp_pair<Problem, std::void_t<decltype(std::declval<const Problem&>().vjp_pair(
                                 std::declval<const typename Problem::Model&>(),
                                 std::declval<const StateVector<typename Problem::Scalar, Problem::kStates>&>(),
                                 std::declval<const StateActionMatrix<typename Problem::Scalar, Problem::kStates,
                                                                      Problem::kActions>&>(),
                                 std::declval<const StateVector<typename Problem::Scalar, Problem::kStates>&>(),
                                 std::declval<typename Problem::Scalar>(),
                                 std::declval<const StateVector<typename Problem::Scalar, Problem::kStates>&>(),
                                 std::declval<const StateActionMatrix<typename Problem::Scalar, Problem::kStates,
                                                                      Problem::kActions>&>(),
                                 std::declval<const StateVector<typename Problem::Scalar, Problem::kStates>&>(),
                                 std::declval<typename Problem::Scalar>(),
                                 std::declval<typename Problem::Params&>()))>> : std::true_type {};

// Box X = [lower, upper]^d, the set the paper's projected update uses for x.
template <typename Scalar>
struct Box {
  Scalar lower = Scalar(-1);
  Scalar upper = Scalar(1);
};

template <typename Scalar>
bool valid(const Box<Scalar>& box) {
  return std::isfinite(box.lower) && std::isfinite(box.upper) && box.lower <= box.upper;
}

template <typename Scalar, typename Derived>
bool contains(const Box<Scalar>& box, const Eigen::MatrixBase<Derived>& x) {
  static_assert(detail::contiguous<Derived>(), "parameters are stored vectors");
  return detail::all_within(x.derived().data(), int(x.size()), box.lower, box.upper);
}

template <typename Scalar, typename Derived>
void project(const Box<Scalar>& box, Eigen::MatrixBase<Derived>& x) {
  x = x.cwiseMax(box.lower).cwiseMin(box.upper);
}

}  // namespace pbrl
