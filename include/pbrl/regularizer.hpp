#pragma once
// The regularization tau * h_s(pi(s)) of a regularized MDP (paper, Section 2.1).
// h_s is 1-strongly convex and non-negative on the simplex (ERRATA item 4):
//   entropy:      h_s(p) = sum_a p_a log p_a + log|A|      (KL to the uniform policy)
//   kl_reference: h_s(p) = sum_a p_a log(p_a / ref(a|s))
// Both are evaluated with the same formula off the simplex, so derivatives with respect to
// unnormalized policies (finite-difference checks, direct parameterization) are consistent.

#include "pbrl/config.hpp"
#include "pbrl/status.hpp"

namespace pbrl {

enum class RegularizerKind : unsigned char { entropy, kl_reference };

template <typename Scalar, int S, int A>
struct Regularizer {
  RegularizerKind kind = RegularizerKind::entropy;
  Scalar tau = Scalar(0);
  const Scalar* reference = nullptr;  // S x A row-major, only for kl_reference

  // log ref(a|s); the uniform reference for the entropy.
  Scalar log_reference(int s, int a) const {
    if (kind == RegularizerKind::kl_reference) return std::log(reference[s * A + a]);
    return -std::log(Scalar(A));
  }

  // h_s(p) for one policy row.
  template <typename Row>
  Scalar value(int s, const Row& p) const {
    Scalar h(0);
    for (int a = 0; a < A; ++a) {
      const Scalar pa = p(a);
      if (pa > Scalar(0)) h += pa * (std::log(pa) - log_reference(s, a));
    }
    return h;
  }

  // d h_s / d p_a = log p_a + 1 - log ref(a|s); the floor keeps it finite at p_a = 0.
  Scalar derivative(int s, int a, Scalar pa) const {
    const Scalar floored = pa > log_floor<Scalar>() ? pa : log_floor<Scalar>();
    return std::log(floored) + Scalar(1) - log_reference(s, a);
  }
};

template <typename Scalar, int S, int A>
Status validate(const Regularizer<Scalar, S, A>& reg) {
  if (!std::isfinite(reg.tau) || reg.tau < Scalar(0)) return Status::bad_regularization;
  if (reg.kind == RegularizerKind::kl_reference) {
    if (reg.reference == nullptr) return Status::null_pointer;
    const ConstStateActionMap<Scalar, S, A> ref(reg.reference);
    if (!ref.allFinite()) return Status::not_finite;
    for (int s = 0; s < S; ++s) {
      if ((ref.row(s).array() <= Scalar(0)).any()) return Status::bad_regularization;
      if (std::abs(ref.row(s).sum() - Scalar(1)) > distribution_tolerance<Scalar>() * A)
        return Status::bad_regularization;
    }
  } else if (reg.kind != RegularizerKind::entropy) {
    return Status::bad_regularization;
  }
  return Status::ok;
}

}  // namespace pbrl
