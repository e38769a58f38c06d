#pragma once
// What every solver and baseline shares around its update: one block of a projected gradient
// step (and its one-pass form for a box: x's, softmax logits'), the counts a step advances
// (iteration, environment steps) with their overflow check, and run(). A step forms every new
// iterate in scratch, checks it, and only then commits: an error leaves the solver as it was.

#include "pbrl/model/policy.hpp"
#include "pbrl/model/problem.hpp"
#include "pbrl/core/status.hpp"

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace pbrl {

// next = Proj(z - alpha * grad) with project(next) in place; returns |(z - next) / alpha|^2, this
// block's part of the squared projected-gradient norm |G|^2. For a finite z (a solver's committed
// iterate) and a finite alpha > 0 the sum is finite only if every entry of next is (a NaN or an
// infinity in next makes its term NaN or +inf, and a sum of squares never cancels an infinity),
// so a solver checks the sum and not next again.
template <typename Scalar, class Block, class Gradient, class Project>
Scalar projected_step(const Block& z, Scalar alpha, const Gradient& grad, Block& next, Project&& project) {
  next = z - alpha * grad;
  project(next);
  return ((z - next) / alpha).squaredNorm();
}

// projected_step for a box: next = min(max(z - alpha * grad, lower), upper), entry by entry as
// project() clamps (a NaN stays NaN), and the sum, in one pass over the block instead of three
// (the step, the projection, the sum; on the Cortex-M4F 18 instructions an entry against 26).
// z, grad and next are stored blocks.
template <typename Scalar, class Block, class Gradient>
Scalar box_projected_step(const Block& z, Scalar alpha, const Gradient& grad, Block& next, const Box<Scalar>& box) {
  static_assert(detail::contiguous<Block>() && detail::contiguous<Gradient>(), "stored blocks");
  const Scalar* zp = z.data();
  const Scalar* gp = grad.data();
  Scalar* out = next.data();
  const Scalar lower = box.lower, upper = box.upper;
  Scalar sum(0);
  for (int i = 0; i < int(z.size()); ++i) {
    Scalar v = zp[i] - alpha * gp[i];
    v = v < lower ? lower : v;
    v = upper < v ? upper : v;
    out[i] = v;
    const Scalar g = (zp[i] - v) / alpha;
    sum += g * g;
  }
  return sum;
}

// Whether Problem offers box(), a Box<Scalar>: X = [box().lower, box().upper]^kParams (problem.hpp).
template <class Problem, class = void>
struct has_parameter_box : std::false_type {};
template <class Problem>
struct has_parameter_box<Problem, std::void_t<decltype(std::declval<const Problem&>().box())>>
    : std::is_same<std::decay_t<decltype(std::declval<const Problem&>().box())>, Box<typename Problem::Scalar>> {};

// The x block: clamped to problem.box() in the step's pass where the problem has one, else
// project_parameters() after the step.
template <class Problem, typename Scalar, class Params>
Scalar parameter_step(const Problem& problem, const Params& x, Scalar alpha, const Params& grad, Params& next) {
  if constexpr (has_parameter_box<Problem>::value)
    return box_projected_step(x, alpha, grad, next, problem.box());
  else
    return projected_step(x, alpha, grad, next, [&](Params& p) { problem.project_parameters(p); });
}

// A policy block: softmax logits are clamped to [-logit_bound, logit_bound] in the step's pass,
// direct rows projected onto the floored simplex after it (project_policy_set).
template <typename Scalar, int S, int A>
Scalar policy_step(const PolicySet<Scalar>& set, const StateActionMatrix<Scalar, S, A>& y, Scalar alpha,
                   const StateActionMatrix<Scalar, S, A>& grad, StateActionMatrix<Scalar, S, A>& next) {
  if (set.parameterization == Parameterization::softmax)
    return box_projected_step(y, alpha, grad, next, Box<Scalar>{-set.logit_bound, set.logit_bound});
  return projected_step(y, alpha, grad, next,
                        [&](StateActionMatrix<Scalar, S, A>& p) { project_policy_set<Scalar, S, A>(set, p); });
}

// The y block's part of |G|^2 after a natural step (settings.lower_geometry) on softmax logits:
// that of the euclidean step, whose gradient pi .* (g - <pi, g>) is formed here row by row, so that
// the verdict's stationarity measure is the paper's whichever step is taken (the natural direction
// does not vanish where the logits run to the box's edge). `taken` is the natural step's own sum:
// returned if it is not finite, so that the solver's check of the sum still sees a non-finite next.
template <typename Scalar, int S, int A>
Scalar euclidean_step_measure(const PolicySet<Scalar>& set, const StateActionMatrix<Scalar, S, A>& y, Scalar alpha,
                              const StateActionMatrix<Scalar, S, A>& pi,
                              const StateActionMatrix<Scalar, S, A>& grad_pi, Scalar taken) {
  if (!(taken < std::numeric_limits<Scalar>::infinity())) return taken;  // NaN or +inf
  Scalar sum(0);
  for (int s = 0; s < S; ++s) {
    const Scalar mean = pi.row(s).dot(grad_pi.row(s));
    for (int a = 0; a < A; ++a) {
      Scalar v = y(s, a) - alpha * pi(s, a) * (grad_pi(s, a) - mean);
      v = v < -set.logit_bound ? -set.logit_bound : v;
      v = set.logit_bound < v ? set.logit_bound : v;
      const Scalar g = (y(s, a) - v) / alpha;
      sum += g * g;
    }
  }
  return sum;
}

// The penalty solvers' lower-level block, in the step's geometry (settings.natural_lower_step()):
// the direction from dF/dpi (natural: over `occupancy`; euclidean: the chain rule), then the
// projected step along it and its part of |G|^2, the paper's measure whichever step is taken.
template <typename Scalar, int S, int A, class Settings>
void lower_step_direction(const Settings& s, const StateActionMatrix<Scalar, S, A>& pi,
                          const StateActionMatrix<Scalar, S, A>& grad_pi, const StateVector<Scalar, S>& occupancy,
                          StateActionMatrix<Scalar, S, A>& grad_y) {
  if (s.natural_lower_step())
    natural_policy_gradient<Scalar, S, A>(pi, grad_pi, occupancy, grad_y);
  else
    chain_policy_gradient<Scalar, S, A>(s.policy.parameterization, pi, grad_pi, grad_y);
}
template <typename Scalar, int S, int A, class Settings>
Scalar lower_step(const Settings& s, const StateActionMatrix<Scalar, S, A>& y, Scalar alpha,
                  const StateActionMatrix<Scalar, S, A>& pi, const StateActionMatrix<Scalar, S, A>& grad_pi,
                  const StateActionMatrix<Scalar, S, A>& grad_y, StateActionMatrix<Scalar, S, A>& next) {
  const Scalar taken = policy_step<Scalar, S, A>(s.policy, y, alpha, grad_y, next);
  return s.natural_lower_step() ? euclidean_step_measure<Scalar, S, A>(s.policy, y, alpha, pi, grad_pi, taken) : taken;
}

}  // namespace pbrl
