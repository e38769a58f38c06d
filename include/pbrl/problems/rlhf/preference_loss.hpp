#pragma once
// RLHF (problems/rlhf.hpp): the Bradley-Terry model P(d0 > d1 | r) = sigma(R(d0) - R(d1)) and the
// mean negative log-likelihood of a preference buffer under a reward, with its exact gradient, in
// log space (softplus).

#include "pbrl/core/config.hpp"
#include "pbrl/core/detail/exp.hpp"
#include "pbrl/problems/rlhf/preference_buffer.hpp"
#include "pbrl/problems/rlhf/segment.hpp"
#include "pbrl/core/status.hpp"

#include <cmath>
#include <limits>

namespace pbrl {

namespace detail {

// softplus(t) = log(1 + e^t) without overflow.
template <typename Scalar>
Scalar softplus(Scalar t) {
  return (t > Scalar(0) ? t : Scalar(0)) + std::log1p(exponential(-std::abs(t)));
}

}  // namespace detail

/// Mean Bradley-Terry negative log-likelihood of the buffer's pairs under reward r (S x A), and its
/// gradient:
///   - loss = (1/N) sum_i [ l0_i softplus(-z_i) + (1 - l0_i) softplus(z_i) ], z_i = R(d0_i) - R(d1_i)
///   - d loss / d r(s,a) = (1/N) sum_i (sigma(z_i) - l0_i) (n0_i(s,a) - n1_i(s,a))
///
/// where n(s,a) counts the pair (s,a) in a segment. An empty buffer gives loss 0 and gradient 0.
/// grad (S*A entries) may be null; it is overwritten. O(N * MaxLen), no scratch memory.
/// @return ok; null_pointer (reward); not_finite (reward); numerical_failure (|r| not below
///         max / (4 * MaxLen), so that a segment return could overflow). On error loss and grad
///         are unchanged.
template <typename Scalar, int S, int A, int MaxLen, int Capacity>
Status preference_loss(const Scalar* reward, const PreferenceBuffer<S, A, MaxLen, Capacity>& buffer,
                       Scalar& loss, Scalar* grad = nullptr) {
  if (reward == nullptr) return Status::null_pointer;
  if (!detail::all_finite(reward, S * A)) return Status::not_finite;
  if (!(detail::max_abs(reward, S * A) < std::numeric_limits<Scalar>::max() / Scalar(4 * MaxLen)))
    return Status::numerical_failure;
  const int n = buffer.size();
  if (grad != nullptr)
    for (int i = 0; i < S * A; ++i) grad[i] = Scalar(0);
  Scalar total(0);
  const Scalar inv = n > 0 ? Scalar(1) / Scalar(n) : Scalar(0);
  for (int i = 0; i < n; ++i) {
    const auto& pair = buffer[i];
    const Scalar l0 = Scalar(pair.label);
    const Scalar z = segment_return(reward, pair.first) - segment_return(reward, pair.second);
    total += l0 * detail::softplus(-z) + (Scalar(1) - l0) * detail::softplus(z);
    if (grad != nullptr) {
      const Scalar c = (sigmoid(z) - l0) * inv;
      for (int t = 0; t < pair.first.length; ++t) grad[int(pair.first.state[t]) * A + int(pair.first.action[t])] += c;
      for (int t = 0; t < pair.second.length; ++t)
        grad[int(pair.second.state[t]) * A + int(pair.second.action[t])] -= c;
    }
  }
  loss = total * inv;
  return Status::ok;
}

}  // namespace pbrl
