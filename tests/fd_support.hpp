#pragma once
// Finite-difference checks shared by the suites: random parameter vectors (symmetric_uniform
// draws, support.hpp), and a gradient in x, in a policy's direct coordinates or in its softmax
// logits against central differences.
#include "support.hpp"

// A vector (x, say) whose entries are symmetric_uniform draws, in order.
template <class Vector>
Vector uniform_vector(pbrl::Rng& rng) {
  Vector x;
  for (int k = 0; k < int(x.size()); ++k) x(k) = symmetric_uniform(rng);
  return x;
}

// Gradients against central differences of a scalar function, each within kFdTol of max(1, scale).
// gx at x, of fn(x), in each of x's coordinates (scale: max |gx|).
template <class Params, typename Fn>
void check_parameter_gradient(const Params& x, const Params& gx, Fn&& fn) {
  for (int k = 0; k < int(x.size()); ++k) {
    const Real fd = central_difference([&](Real h) {
      Params xh = x;
      xh(k) += h;
      return fn(xh);
    });
    CHECK_CLOSE(gx(k), fd, kFdTol, gx.cwiseAbs().maxCoeff());
  }
}

// grad_pi at pi, of fn(pi), in a policy's direct coordinates: along the simplex's tangents
// e_a - e_0 of each state.
template <int S, int A, typename Fn>
void check_simplex_gradient(const Mat<S, A>& pi, const Mat<S, A>& grad_pi, Real scale, Fn&& fn) {
  for (int s = 0; s < S; ++s)
    for (int a = 1; a < A; ++a) {
      const Real fd = central_difference([&](Real h) {
        Mat<S, A> ph = pi;
        ph(s, a) += h;
        ph(s, 0) -= h;
        return fn(ph);
      });
      CHECK_CLOSE(grad_pi(s, a) - grad_pi(s, 0), fd, kFdTol, scale);
    }
}

// grad_y at y, of fn(softmax(y)), in every softmax logit.
template <int S, int A, typename Fn>
void check_logit_gradient(const Mat<S, A>& y, const Mat<S, A>& grad_y, Real scale, Fn&& fn) {
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      const Real fd = central_difference([&](Real h) {
        Mat<S, A> yh = y, ph;
        yh(s, a) += h;
        pbrl::policy_from_parameters<Real, S, A>(pbrl::Parameterization::softmax, yh, ph);
        return fn(ph);
      });
      CHECK_CLOSE(grad_y(s, a), fd, kFdTol, scale);
    }
}

// Two x-gradients at x, gv of V(x) and gq of Q(x), where values(x, V, Q) gives both, against
// central differences with step kFdStep in each coordinate.
template <class Params, typename Values>
void check_value_pair_gradient(const Params& x, const Params& gv, const Params& gq, Values&& values) {
  for (int k = 0; k < int(x.size()); ++k) {
    Real vp, qp, vm, qm;
    Params xp = x, xm = x;
    xp(k) += kFdStep;
    xm(k) -= kFdStep;
    values(xp, vp, qp);
    values(xm, vm, qm);
    CHECK_CLOSE(gv(k), (vp - vm) / (2 * kFdStep), kFdTol, gv.cwiseAbs().maxCoeff());
    CHECK_CLOSE(gq(k), (qp - qm) / (2 * kFdStep), kFdTol, gq.cwiseAbs().maxCoeff());
  }
}
