#pragma once
// RL from human feedback, tabular (paper, Section 2.2 "RLHF", eq. "rlhf bilevel formulation",
// the Remark "Connection with DPO", and Section "Simulation / Deep RL from human feedback"):
//
//   min_{x in X, y}  f(x, y) = -E_{(d0, d1) ~ pi_y} [ l0 log P(d0 > d1 | r_x) + l1 log P(d1 > d0 | r_x) ]
//   s.t.             y in argmax_y V^{pi_y}_{M_tau(x)}(rho),   M_tau(x) = {S, A, r_x, P, tau*h}
//
// with the Bradley-Terry model P(d0 > d1 | r) = sigma(R(d0) - R(d1)), R(d) = sum_{(s,a) in d} r(s,a)
// (undiscounted), and the tabular reward model r_x(s,a) = x(s,a) in a box X = [lower, upper]^{S*A}.
//
// Pieces, in the order the paper's experiment uses them:
//   Segment              d = (s_t, a_t, ..., s_{t+T}, a_{t+T}): T + 1 state-action pairs
//   PreferenceBuffer     ring buffer of labeled pairs (d0, d1, l0) keeping the newest Capacity
//   SegmentSampler       draws segments from pi_y with the true P (deterministic Rng stream) and
//                        counts environment steps
//   Labeler              plain function pointer + void* context; ReturnLabeler ("higher true
//                        return wins", the paper's rule) and BradleyTerryLabeler (stochastic)
//   preference_loss      the mean Bradley-Terry negative log-likelihood over a buffer and its
//                        exact gradient, in log space (softplus)
//   RlhfProblem          the bilevel problem interface of pbrl/problem.hpp
//   RlhfOracle           the optimal regularized policy of the hidden true reward: the upper bound
//
// How f depends on y. In the paper, y enters f only through the distribution the segments are drawn
// from (d0, d1 ~ pi_y); the labels and the Bradley-Terry probabilities do not depend on y. The
// tabular problem treats the buffer as data: f(x, y) is the empirical mean over the buffer's pairs,
// grad_pi f = 0, and the caller redraws segments from the current pi_y into the buffer between
// solver steps (SegmentSampler::collect_pair). The score-function term of the on-policy expectation,
// E[loss(d0, d1) * grad log Pr_{pi_y}(d0, d1)], is not part of grad_pi f: it would need labels of
// pairs drawn from pi_y itself, while the buffer mixes pairs from past policies (an estimate from
// it would be biased), and the labels come from outside (a human), so f has no closed form in y.
// The policy is therefore moved by the penalty alone: PBRL's y tracks the optimum of M_tau(x).
//
// J^T(w, v) = w (flattened): r_x = x is linear in x with identity Jacobian and P does not depend
// on x, so the value and Bellman penalties' x-gradients are occupancy differences (ERRATA item 3:
// the Bellman term grad_x g starts with a_0 ~ pi_y and follows pi-hat from t = 1 on, which is what
// penalty/bellman.hpp's occupancy_from_start computes).

#include "pbrl/bilevel_value.hpp"
#include "pbrl/config.hpp"
#include "pbrl/evaluation.hpp"
#include "pbrl/mdp.hpp"
#include "pbrl/oracle/soft_value_iteration.hpp"
#include "pbrl/problem.hpp"
#include "pbrl/rng.hpp"
#include "pbrl/status.hpp"

#include <cstdint>
#include <type_traits>

namespace pbrl {

// Labels are stored as float on every platform (a probability needs no more), so a buffer filled
// on the host and one filled on a device hold the same bits.
using Label = float;

// ---- Segment ------------------------------------------------------------------------------------

// A fixed-capacity segment d = (s_t, a_t, ..., s_{t+T}, a_{t+T}) of a rollout.
// Length convention: `length` counts the state-action PAIRS, length = T + 1 with the paper's T, so
// 1 <= length <= MaxLen and T <= MaxLen - 1. T = 0 (length 1) is the single-pair segment of the
// Remark "Connection with DPO"; the paper's Atari experiment ("trajectories of 25 time steps")
// is length 25, T = 24. Pairs [0, length) are meaningful; the rest is ignored.
// States and actions are stored in the smallest unsigned type that holds them (one byte each for
// S, A <= 256), so a large buffer stays small.
template <int S, int A, int MaxLen>
struct Segment {
  static_assert(MaxLen >= 1, "a segment holds at least one state-action pair");
  static_assert(S <= 65536 && A <= 65536, "state and action indices are stored in 16 bits");
  using Index = std::conditional_t<(S <= 256 && A <= 256), std::uint8_t, std::uint16_t>;
  static constexpr int kMaxLength = MaxLen;

  Index state[MaxLen] = {};
  Index action[MaxLen] = {};
  int length = 0;  // T + 1

  int horizon() const { return length - 1; }  // the paper's T
  void clear() { length = 0; }

  // Appends (s, a); bad_setting when full, out_of_bounds when s or a is out of range.
  Status push_back(int s, int a) {
    if (length < 0 || length >= MaxLen) return Status::bad_setting;
    if (s < 0 || s >= S || a < 0 || a >= A) return Status::out_of_bounds;
    state[length] = static_cast<Index>(s);
    action[length] = static_cast<Index>(a);
    ++length;
    return Status::ok;
  }
};

// 1 <= length <= MaxLen (bad_setting); every state < S and action < A (out_of_bounds).
template <int S, int A, int MaxLen>
Status validate(const Segment<S, A, MaxLen>& d) {
  if (d.length < 1 || d.length > MaxLen) return Status::bad_setting;
  for (int t = 0; t < d.length; ++t)
    if (int(d.state[t]) >= S || int(d.action[t]) >= A) return Status::out_of_bounds;
  return Status::ok;
}

// R(d) = sum_t r(s_t, a_t), undiscounted, as in the Bradley-Terry model. d must be valid.
template <typename Scalar, int S, int A, int MaxLen>
Scalar segment_return(const Scalar* reward, const Segment<S, A, MaxLen>& d) {
  Scalar sum(0);
  for (int t = 0; t < d.length; ++t) sum += reward[int(d.state[t]) * A + int(d.action[t])];
  return sum;
}

// A label is l0 = the probability that d0 is preferred to d1, in [0, 1]; l1 = 1 - l0.
// (The paper's example "l1 = 1, l0 = 0: d1 is preferred" is label 0.)
inline Status validate_label(Label label) {
  if (!std::isfinite(label)) return Status::not_finite;
  if (label < Label(0) || label > Label(1)) return Status::out_of_bounds;
  return Status::ok;
}

// ---- PreferenceBuffer ---------------------------------------------------------------------------

// A ring buffer of the newest Capacity labeled pairs (the paper keeps the last 3000). Caller-owned
// and large (Capacity * (2 * sizeof(Segment) + 4) bytes): make it a static or a member, never a
// local of a small stack. Index 0 is the oldest pair held, size() - 1 the newest.
template <int S, int A, int MaxLen, int Capacity>
class PreferenceBuffer {
 public:
  static_assert(Capacity >= 1, "a preference buffer holds at least one pair");
  using SegmentType = Segment<S, A, MaxLen>;
  static constexpr int kCapacity = Capacity;

  struct Pair {
    SegmentType first;   // d0
    SegmentType second;  // d1
    Label label = Label(0.5);  // l0 = P(d0 preferred)
  };

  // Validates both segments and the label, then overwrites the oldest pair once full.
  // On error the buffer is unchanged.
  Status push(const SegmentType& d0, const SegmentType& d1, Label label) {
    if (Status st = validate(d0); st != Status::ok) return st;
    if (Status st = validate(d1); st != Status::ok) return st;
    if (Status st = validate_label(label); st != Status::ok) return st;
    Pair& slot = pairs_[next_];
    slot.first = d0;
    slot.second = d1;
    slot.label = label;
    next_ = next_ + 1 == Capacity ? 0 : next_ + 1;
    if (size_ < Capacity) ++size_;
    ++pushed_;
    return Status::ok;
  }

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == Capacity; }
  static constexpr int capacity() { return Capacity; }
  long pushed() const { return pushed_; }  // pairs pushed since construction or clear()

  // i-th oldest pair held; requires 0 <= i < size().
  const Pair& operator[](int i) const {
    int k = next_ - size_ + i;
    if (k < 0) k += Capacity;
    return pairs_[k];
  }
  const Pair& newest() const { return (*this)[size_ - 1]; }  // requires !empty()

  void clear() {
    next_ = size_ = 0;
    pushed_ = 0;
  }

 private:
  Pair pairs_[Capacity];
  int next_ = 0;  // slot of the next push
  int size_ = 0;
  long pushed_ = 0;
};

// ---- Labelers -----------------------------------------------------------------------------------

// A labeler: label = function(context, d0, d1) = l0, the probability that d0 is preferred.
// A plain function pointer and a context pointer, so a device can wire it to a button, a serial
// line or a synthetic rule without std::function. A value outside [0, 1] or NaN is refused by
// the buffer (collect_pair then pushes nothing).
template <int S, int A, int MaxLen>
struct Labeler {
  using Function = Label (*)(void* context, const Segment<S, A, MaxLen>& d0,
                             const Segment<S, A, MaxLen>& d1);
  Function function = nullptr;
  void* context = nullptr;
};

// "Higher true return wins" (the paper's preference generation, after Christiano et al.):
// label 1 if R(d0) > R(d1), 0 if R(d0) < R(d1), and 0.5 on a tie -- the Bradley-Terry-optimal
// "equally preferable" label, deterministic (no coin flip, no Rng). A difference within the
// rounding error of the two sums, |R0 - R1| <= (n0 + n1) * eps * (sum |r| over both), counts as a
// tie, so segments holding the same pairs in another order always tie.
// The reward (S x A row-major, the hidden true reward) is caller-owned; null gives a NaN label.
template <typename Scalar, int S, int A>
struct ReturnLabeler {
  const Scalar* reward = nullptr;

  template <int MaxLen>
  Label operator()(const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) const {
    if (reward == nullptr) return std::numeric_limits<Label>::quiet_NaN();
    Scalar r0(0), r1(0), magnitude(0);
    for (int t = 0; t < d0.length; ++t) {
      const Scalar r = reward[int(d0.state[t]) * A + int(d0.action[t])];
      r0 += r;
      magnitude += std::abs(r);
    }
    for (int t = 0; t < d1.length; ++t) {
      const Scalar r = reward[int(d1.state[t]) * A + int(d1.action[t])];
      r1 += r;
      magnitude += std::abs(r);
    }
    const Scalar tie = Scalar(d0.length + d1.length) * std::numeric_limits<Scalar>::epsilon() * magnitude;
    if (std::abs(r0 - r1) <= tie) return Label(0.5);
    return r0 > r1 ? Label(1) : Label(0);
  }

  template <int MaxLen>
  static Label call(void* context, const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) {
    return (*static_cast<const ReturnLabeler*>(context))(d0, d1);
  }
  template <int MaxLen>
  Labeler<S, A, MaxLen> labeler() {
    return Labeler<S, A, MaxLen>{&call<MaxLen>, this};
  }
};

// Stochastic Bradley-Terry labeler: label 1 with probability sigma(scale * (R(d0) - R(d1))), else 0,
// drawn from the context's own Rng (a deterministic stream). scale = 1 is the paper's model.
template <typename Scalar, int S, int A>
struct BradleyTerryLabeler {
  const Scalar* reward = nullptr;
  Scalar scale = Scalar(1);
  Rng rng{1u};

  // sigma(scale * (R(d0) - R(d1))), the probability that d0 is preferred.
  template <int MaxLen>
  Scalar probability(const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) const {
    const Scalar z = scale * (segment_return(reward, d0) - segment_return(reward, d1));
    if (z >= Scalar(0)) return Scalar(1) / (Scalar(1) + std::exp(-z));
    const Scalar e = std::exp(z);
    return e / (Scalar(1) + e);
  }

  template <int MaxLen>
  Label operator()(const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) {
    if (reward == nullptr || !std::isfinite(scale)) return std::numeric_limits<Label>::quiet_NaN();
    const Scalar p = probability(d0, d1);
    if (!std::isfinite(p)) return std::numeric_limits<Label>::quiet_NaN();
    return rng.uniform<Scalar>() < p ? Label(1) : Label(0);
  }

  template <int MaxLen>
  static Label call(void* context, const Segment<S, A, MaxLen>& d0, const Segment<S, A, MaxLen>& d1) {
    return (*static_cast<BradleyTerryLabeler*>(context))(d0, d1);
  }
  template <int MaxLen>
  Labeler<S, A, MaxLen> labeler() {
    return Labeler<S, A, MaxLen>{&call<MaxLen>, this};
  }
};

// ---- Segment sampling ---------------------------------------------------------------------------

namespace detail {

// Index drawn from the n-entry distribution p with one uniform; rounding past the last cumulative
// sum falls to the last positive entry, so a zero-probability index is never returned.
template <typename Scalar>
int draw_categorical(Rng& rng, const Scalar* p, int n) {
  const Scalar u = rng.uniform<Scalar>();
  Scalar cumulative(0);
  int last = 0;
  for (int i = 0; i < n; ++i) {
    if (!(p[i] > Scalar(0))) continue;
    last = i;
    cumulative += p[i];
    if (u < cumulative) return i;
  }
  return last;
}

}  // namespace detail

// Draws segments from a policy with the true transitions P:
//   s_0 ~ rho, then `burn_in` steps of pi (a ~ pi(s), s' ~ P(.|s,a)) that are not recorded, then
//   the segment (s_0', a_0', ..., s_T', a_T') with a_t' ~ pi(s_t'), s_{t+1}' ~ P(.|s_t', a_t').
// burn_in = 0 starts segments at s ~ rho; burn_in = b starts them at a state visited by a rollout
// at time b (distribution rho^T P_pi^b), as clips cut from the agent's episodes are.
// steps() counts environment steps: every action taken, recorded or burn-in (burn_in + length per
// segment). The Rng is the sampler's own: the same seed gives the same segments.
template <typename Scalar, int S, int A>
class SegmentSampler {
 public:
  using Matrix = StateActionMatrix<Scalar, S, A>;

  // Validates P and rho once (they are read, never copied); on error the sampler is unchanged.
  Status init(const Scalar* transition, const Scalar* initial, std::uint32_t seed, int burn_in = 0) {
    check_sizes<S, A>();
    if (Status st = validate_transition<Scalar, S, A>(transition); st != Status::ok) return st;
    if (Status st = validate_initial<Scalar, S>(initial); st != Status::ok) return st;
    if (burn_in < 0) return Status::bad_setting;
    transition_ = transition;
    initial_ = initial;
    burn_in_ = burn_in;
    rng_.reseed(seed);
    steps_ = 0;
    return Status::ok;
  }

  // One segment of `length` pairs (T = length - 1) from pi (rows distributions).
  // On error the segment, the Rng and the step count are unchanged.
  template <int MaxLen>
  Status sample(const Matrix& pi, int length, Segment<S, A, MaxLen>& out) {
    if (transition_ == nullptr) return Status::not_initialized;
    if (length < 1 || length > MaxLen) return Status::bad_setting;
    if (Status st = validate_policy(pi); st != Status::ok) return st;
    // From here nothing can fail.
    int s = detail::draw_categorical(rng_, initial_, S);
    for (int t = 0; t < burn_in_; ++t) s = advance(s, draw_action(pi, s));
    out.length = length;
    for (int t = 0; t < length; ++t) {
      const int a = draw_action(pi, s);
      out.state[t] = static_cast<typename Segment<S, A, MaxLen>::Index>(s);
      out.action[t] = static_cast<typename Segment<S, A, MaxLen>::Index>(a);
      if (t + 1 < length) s = advance(s, a);
    }
    steps_ += burn_in_ + length;
    return Status::ok;
  }

  // Draws d0 and d1 from pi, asks the labeler, and pushes the labeled pair. All or nothing: on
  // error (including a label outside [0, 1]) the buffer, the Rng and the step count are unchanged.
  // Two segments live on the stack meanwhile (2 * sizeof(Segment<S, A, MaxLen>) bytes).
  template <int MaxLen, int Capacity>
  Status collect_pair(const Matrix& pi, int length, const Labeler<S, A, MaxLen>& labeler,
                      PreferenceBuffer<S, A, MaxLen, Capacity>& buffer) {
    if (labeler.function == nullptr) return Status::null_pointer;
    const Rng saved_rng = rng_;
    const long saved_steps = steps_;
    Segment<S, A, MaxLen> d0, d1;
    Status st = sample(pi, length, d0);
    if (st == Status::ok) st = sample(pi, length, d1);
    if (st == Status::ok) st = buffer.push(d0, d1, labeler.function(labeler.context, d0, d1));
    if (st != Status::ok) {
      rng_ = saved_rng;
      steps_ = saved_steps;
    }
    return st;
  }

  long steps() const { return steps_; }
  int burn_in() const { return burn_in_; }
  Rng& rng() { return rng_; }

 private:
  int draw_action(const Matrix& pi, int s) { return detail::draw_categorical(rng_, pi.row(s).data(), A); }
  int advance(int s, int a) {
    return detail::draw_categorical(rng_, transition_ + static_cast<long>(s * A + a) * S, S);
  }

  const Scalar* transition_ = nullptr;
  const Scalar* initial_ = nullptr;
  int burn_in_ = 0;
  long steps_ = 0;
  Rng rng_{1u};
};

// ---- Bradley-Terry loss -------------------------------------------------------------------------

namespace detail {

// softplus(t) = log(1 + e^t) without overflow.
template <typename Scalar>
Scalar softplus(Scalar t) {
  return (t > Scalar(0) ? t : Scalar(0)) + std::log1p(std::exp(-std::abs(t)));
}

template <typename Scalar>
Scalar sigmoid(Scalar t) {
  if (t >= Scalar(0)) return Scalar(1) / (Scalar(1) + std::exp(-t));
  const Scalar e = std::exp(t);
  return e / (Scalar(1) + e);
}

}  // namespace detail

// Mean Bradley-Terry negative log-likelihood of the buffer's pairs under reward r (S x A):
//   loss = (1/N) sum_i [ l0_i softplus(-z_i) + (1 - l0_i) softplus(z_i) ],  z_i = R(d0_i) - R(d1_i)
//   d loss / d r(s,a) = (1/N) sum_i (sigma(z_i) - l0_i) (n0_i(s,a) - n1_i(s,a))
// where n(s,a) counts the pair (s,a) in a segment. An empty buffer gives loss 0 and gradient 0.
// grad (S*A entries) may be null; it is overwritten. The reward must be finite and bounded so that
// no segment return overflows: |r| < max / (4 * MaxLen) (numerical_failure otherwise).
// On error loss and grad are unchanged. O(N * MaxLen), no scratch memory.
template <typename Scalar, int S, int A, int MaxLen, int Capacity>
Status preference_loss(const Scalar* reward, const PreferenceBuffer<S, A, MaxLen, Capacity>& buffer,
                       Scalar& loss, Scalar* grad = nullptr) {
  if (reward == nullptr) return Status::null_pointer;
  const ConstStateActionMap<Scalar, S, A> r(reward);
  if (!r.allFinite()) return Status::not_finite;
  if (!(r.cwiseAbs().maxCoeff() < std::numeric_limits<Scalar>::max() / Scalar(4 * MaxLen)))
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
      const Scalar c = (detail::sigmoid(z) - l0) * inv;
      for (int t = 0; t < pair.first.length; ++t) grad[int(pair.first.state[t]) * A + int(pair.first.action[t])] += c;
      for (int t = 0; t < pair.second.length; ++t)
        grad[int(pair.second.state[t]) * A + int(pair.second.action[t])] -= c;
    }
  }
  loss = total * inv;
  return Status::ok;
}

// ---- The bilevel problem ------------------------------------------------------------------------

template <typename Scalar_, int S, int A, int MaxLen, int Capacity>
class RlhfProblem {
 public:
  using Scalar = Scalar_;
  static constexpr int kStates = S;
  static constexpr int kActions = A;
  static constexpr int kParams = S * A;
  using Params = Vector<Scalar, kParams>;
  using Matrix = StateActionMatrix<Scalar, S, A>;
  using MdpType = Mdp<Scalar, S, A>;
  using Buffer = PreferenceBuffer<S, A, MaxLen, Capacity>;

  struct Model {
    Scalar reward[S * A];  // r_x = x
  };

  struct Data {
    const Scalar* transition = nullptr;  // the true P(s'|s,a), (S*A) x S row-major
    const Scalar* initial = nullptr;     // rho
    Scalar discount = Scalar(0.9);
    Regularizer<Scalar, S, A> lower{};   // tau*h of M_tau(x): entropy, or KL to a reference policy
    Box<Scalar> reward{Scalar(-1), Scalar(1)};  // X = [-B, B]^{S*A}, the reward model's range
    Scalar l2 = Scalar(0);               // optional weight decay: f += l2/2 |x|^2
    const Buffer* preferences = nullptr; // caller-owned; read at every upper() call
  };

  // Caller storage of value_at_best_response (bilevel_value.hpp).
  struct BilevelValueWorkspace {
    BestResponseSettings<Scalar> settings{};
    Model model;                                // r_x = x
    RegularizedOptimum<Scalar, S, A> optimum{};  // after a success: pi*(x) in optimum.pi; warm start
    Evaluation<Scalar, S, A> task_evaluation{};  // after a success: pi*(x) on the task
  };

  // Validates all data; on error the problem stays as it was.
  Status init(const Data& data) {
    check_sizes<S, A>();
    if (Status st = validate_transition<Scalar, S, A>(data.transition); st != Status::ok) return st;
    if (Status st = validate_initial<Scalar, S>(data.initial); st != Status::ok) return st;
    if (Status st = validate_discount(data.discount); st != Status::ok) return st;
    if (Status st = validate(data.lower); st != Status::ok) return st;
    if (!valid(data.reward)) return Status::bad_setting;
    // The box keeps every segment return far from overflow (preference_loss's requirement).
    const Scalar limit = std::numeric_limits<Scalar>::max() / Scalar(4 * MaxLen);
    if (!(std::abs(data.reward.lower) < limit) || !(std::abs(data.reward.upper) < limit))
      return Status::bad_setting;
    if (!std::isfinite(data.l2) || data.l2 < Scalar(0)) return Status::bad_setting;
    if (data.preferences == nullptr) return Status::null_pointer;
    data_ = data;
    initialized_ = true;
    return Status::ok;
  }

  const Data& data() const { return data_; }
  const Buffer& preferences() const { return *data_.preferences; }
  const Box<Scalar>& box() const { return data_.reward; }

  Status validate_parameters(const Params& x) const {
    if (!initialized_) return Status::not_initialized;
    if (!x.allFinite()) return Status::not_finite;
    return contains(data_.reward, x) ? Status::ok : Status::out_of_bounds;
  }
  void project_parameters(Params& x) const { project(data_.reward, x); }

  Status build(const Params& x, Model& model, MdpType& mdp) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    Eigen::Map<Params>(model.reward) = x;
    mdp = MdpType{model.reward, data_.transition, data_.initial, data_.discount, data_.lower};
    return Status::ok;
  }

  // J^T(w, v) = w: r_x = x, P independent of x.
  void vjp(const Params& /*x*/, const Matrix& w, const StateVector<Scalar, S>& /*v*/, Scalar scale,
           Params& grad) const {
    grad += scale * Eigen::Map<const Params>(w.data());
  }

  // Per-sample form of vjp() for a sampled lower level (the optional hook of problem.hpp):
  // grad_x r_x(s,a) = e_{(s,a)}; P does not depend on x, so the transition term is zero.
  void sample_vjp(const Params& /*x*/, int s, int a, int /*s_next*/, Scalar reward_weight,
                  Scalar /*transition_weight*/, Params& grad) const {
    grad(s * A + a) += reward_weight;
  }

  // f(x) = mean Bradley-Terry NLL of the buffer under r_x (+ l2/2 |x|^2) and grad_x f; on error
  // f and grad_x are unchanged.
  Status loss(const Params& x, Scalar& f, Params& grad_x) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    const Scalar decay = Scalar(0.5) * data_.l2 * x.squaredNorm();
    if (!(decay < std::numeric_limits<Scalar>::max() / Scalar(4))) return Status::numerical_failure;
    // From here nothing can fail: the box bounds every return (init) and the decay term.
    Scalar value(0);
    if (Status st = preference_loss(x.data(), *data_.preferences, value, grad_x.data()); st != Status::ok)
      return st;
    if (data_.l2 > Scalar(0)) grad_x += data_.l2 * x;
    f = value + decay;
    return Status::ok;
  }

  // f(x, pi) and its gradients: grad_x f as loss(); grad_pi f = 0 (the buffer is data; see the
  // file comment).
  template <EvaluationMethod M>
  Status upper(const Params& x, const Matrix& /*pi*/, Model& /*model*/, EvaluationWorkspace<Scalar, S, M>& /*ws*/,
               Evaluation<Scalar, S, A>& /*scratch*/, Scalar& f, Params& grad_x, Matrix& grad_pi) const {
    if (Status st = loss(x, f, grad_x); st != Status::ok) return st;
    grad_pi.setZero();
    return Status::ok;
  }

  // The bilevel answer: the true return V^{pi*(x)}_task(rho) of the learner's exact regularized
  // optimum pi*(x) on M_tau(x) (soft value iteration, regularized_best_response), not of the
  // solver's current y. `task` is the task as scored, usually {r_true, P, rho, gamma, tau = 0}
  // (the hidden reward the problem never sees); it is validated in full. out.lower_level_gap
  // certifies pi*(x) on M_tau(x) (optimality_gap_bound), out.converged = it <=
  // ws.settings.tolerance, out.iterations = sweeps. On error out is unchanged (ws is scratch;
  // optimum.value changes only on success). Work: at most settings.max_iterations sweeps of
  // O(S*A*S), two S x S LU factorizations.
  Status value_at_best_response(const Params& x, const MdpType& task, BilevelValueWorkspace& ws,
                                BestResponseValue<Scalar>& out) const {
    if (Status st = validate_parameters(x); st != Status::ok) return st;
    if (Status st = validate(task); st != Status::ok) return st;
    MdpType learner;
    if (Status st = build(x, ws.model, learner); st != Status::ok) return st;
    BestResponseValue<Scalar> lower;
    if (Status st = regularized_best_response(learner, ws.settings, ws.optimum, lower); st != Status::ok) return st;
    if (Status st = evaluate(task, ws.optimum.pi, ws.optimum.workspace, ws.task_evaluation); st != Status::ok)
      return st;
    out = lower;
    out.value = ws.task_evaluation.value_rho;
    return Status::ok;
  }

 private:
  Data data_{};
  bool initialized_ = false;
};

// ---- Oracle: the optimal regularized policy of the true reward ----------------------------------

// Soft value iteration on the true MDP truth = {S, A, r_true, P, tau*h}: the best any learner can
// do, the upper-bound curve of the experiment (the paper's A2C-on-true-reward "oracle"). The caller
// chooses the regularization the true return is measured with (tau = 0: the plain optimum).
// The object holds the result and its own scratch (caller-owned, about 8*S*A scalars).
template <typename Scalar, int S, int A>
class RlhfOracle {
 public:
  using Matrix = StateActionMatrix<Scalar, S, A>;

  // Warm-started from value() (zero at construction); at most max_iterations sweeps, stopping
  // once the sup-norm change is <= tolerance. The true MDP is validated in full. On error the
  // previous result is unchanged.
  Status solve(const Mdp<Scalar, S, A>& truth, int max_iterations, Scalar tolerance) {
    if (Status st = validate(truth); st != Status::ok) return st;
    if (max_iterations < 1 || !(tolerance >= Scalar(0))) return Status::bad_setting;
    value_next_ = value_;
    SoftValueIterationResult<Scalar> result;
    if (Status st = soft_value_iteration(truth, max_iterations, tolerance, value_next_, q_next_, log_pi_next_,
                                         pi_next_, &result);
        st != Status::ok)
      return st;
    const Scalar value_rho = truth.rho().dot(value_next_);
    if (!std::isfinite(value_rho) || !pi_next_.allFinite() || !q_next_.allFinite())
      return Status::numerical_failure;
    value_ = value_next_;
    q_ = q_next_;
    log_pi_ = log_pi_next_;
    pi_ = pi_next_;
    value_rho_ = value_rho;
    result_ = result;
    return Status::ok;
  }

  const StateVector<Scalar, S>& value() const { return value_; }  // V*
  const Matrix& q() const { return q_; }                          // Q*
  const Matrix& log_pi() const { return log_pi_; }
  const Matrix& policy() const { return pi_; }                    // pi*
  Scalar value_rho() const { return value_rho_; }                 // V*(rho): the upper bound
  const SoftValueIterationResult<Scalar>& result() const { return result_; }

 private:
  StateVector<Scalar, S> value_ = StateVector<Scalar, S>::Zero();
  Matrix q_ = Matrix::Zero(), log_pi_ = Matrix::Zero(), pi_ = Matrix::Zero();
  Scalar value_rho_ = Scalar(0);
  SoftValueIterationResult<Scalar> result_{};
  StateVector<Scalar, S> value_next_ = StateVector<Scalar, S>::Zero();
  Matrix q_next_ = Matrix::Zero(), log_pi_next_ = Matrix::Zero(), pi_next_ = Matrix::Zero();
};

}  // namespace pbrl
