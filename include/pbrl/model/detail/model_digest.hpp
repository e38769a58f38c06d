#pragma once
// What a checkpoint image records of the model it was taken on (checkpoint.hpp): the problem's
// kind and a digest of its data. A problem computes its digest in init() from its Data's visit(),
// which lists every field of the model (data_layout.hpp): arrays, scalars, regularizers, boxes.
// The lower level's transition array is digested apart from the rest, so that an image taken
// with an estimated model (estimate/transition_estimate.hpp) can name the estimate's prior in
// its place.
//
// The digest is a 32-bit hash of the fields' IEEE-754 bits in visit() order (MurmurHash3's
// block step over 32-bit words, then its finalizer): the same on every target, about two
// instructions a byte, so a model's digest costs less than its validation. It tells models
// apart; it is no defence against a forger.

#include "pbrl/model/data_layout.hpp"
#include "pbrl/model/mdp.hpp"
#include "pbrl/model/problem.hpp"
#include "pbrl/model/regularizer.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace pbrl {

/// The problem kinds of the library; a checkpoint image refuses to restore into another.
enum class ProblemKind : unsigned char { other = 0, reward_shaping, stackelberg, incentive_design, rlhf };
/// ProblemKind's enumerator names.
constexpr EnumNames<ProblemKind, 5> enum_names(ProblemKind) {
  return {{"other", "reward_shaping", "stackelberg", "incentive_design", "rlhf"}};
}
static_assert(enum_names(ProblemKind{}).size == int(ProblemKind::rlhf) + 1, "a name per enumerator");

/// A problem's model digest: everything but the lower level's transition array, and that array.
struct ModelDigest {
  /// The digest of the data but the lower level's transition array.
  std::uint32_t data = 0;
  /// The digest of the lower level's transition array.
  std::uint32_t transition = 0;
};

namespace detail {

// MurmurHash3 (x86, 32-bit) over a stream of 32-bit words.
class WordHash {
 public:
  void word(std::uint32_t k) {
    k *= 0xCC9E2D51u;
    k = rotate(k, 15);
    k *= 0x1B873593u;
    h_ ^= k;
    h_ = rotate(h_, 13);
    h_ = h_ * 5u + 0xE6546B64u;
    words_ += 1u;
  }
  template <typename Scalar>
  void scalar(Scalar v) {
    static_assert(std::is_floating_point<Scalar>::value && (sizeof(Scalar) == 4 || sizeof(Scalar) == 8),
                  "models are float or double");
    if constexpr (sizeof(Scalar) == 4) {
      std::uint32_t b;
      std::memcpy(&b, &v, 4);
      word(b);
    } else {
      std::uint64_t b;
      std::memcpy(&b, &v, 8);
      word(std::uint32_t(b));
      word(std::uint32_t(b >> 32));
    }
  }
  template <typename Scalar>
  void array(const Scalar* a, std::size_t n) {
    word(a == nullptr ? 0u : 1u);
    if (a != nullptr)
      for (std::size_t i = 0; i < n; ++i) scalar(a[i]);
  }
  std::uint32_t value() const {
    std::uint32_t h = h_ ^ (words_ * 4u);
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
  }

 private:
  static std::uint32_t rotate(std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
  std::uint32_t h_ = 0x9E3779B9u;
  std::uint32_t words_ = 0;
};

// The visitor of a Data's visit(): the field named "transition" into its own hash, every other
// field, in order, into the data hash. The layouts' overloads only forward the constant length
// (or nothing), so the code is one function per kind of field, whatever the layouts.
template <typename Scalar>
struct ModelDigestVisitor {
  WordHash data, transition;
  template <layout::Rows R, layout::Presence P, class... Axes>
  void operator()(const Scalar* a, layout::Array<R, P, Axes...>, const char* name) {
    array(a, layout::Array<R, P, Axes...>::length, name);
  }
  void operator()(Scalar v, const char*) { data.scalar(v); }
  template <int S, int A, class ActionAxis>
  void operator()(const Regularizer<Scalar, S, A>& r, ActionAxis, const char*) {
    static_assert(ActionAxis::extent == A, "a regularizer's axis is its action count");
    regularizer(r);
  }
  void operator()(const Box<Scalar>& b, const char*) {
    data.scalar(b.lower);
    data.scalar(b.upper);
  }

 private:
  void array(const Scalar* a, std::size_t n, const char* name) {
    if (std::strcmp(name, "transition") == 0)
      transition.array(a, n);
    else
      data.array(a, n);
  }
  template <int S, int A>
  void regularizer(const Regularizer<Scalar, S, A>& r) {
    data.word(std::uint32_t(r.kind));
    data.scalar(r.tau);
    data.array(r.kind == RegularizerKind::kl_reference ? r.reference : static_cast<const Scalar*>(nullptr),
               std::size_t(S) * std::size_t(A));
  }
};

template <typename Scalar, class Data>
ModelDigest model_digest(const Data& d) {
  ModelDigestVisitor<Scalar> v;
  d.visit(v);
  return {v.data.value(), v.transition.value()};
}

// One word of a checkpoint header from the two halves: the data's and the transition's (or the
// estimate's prior's, estimate/transition_estimate.hpp).
inline std::uint32_t combine_digest(std::uint32_t data, std::uint32_t transition) {
  WordHash h;
  h.word(data);
  h.word(transition);
  return h.value();
}

// A problem's kind and digest: its kProblemKind and model_digest(), where it has them (the
// library's problems); ProblemKind::other and a digest of zeros for any other problem class.
template <class Problem, class = void>
struct ProblemIdentity {
  static constexpr ProblemKind kind = ProblemKind::other;
  static ModelDigest digest(const Problem&) { return {}; }
};
template <class Problem>
struct ProblemIdentity<Problem, std::void_t<decltype(Problem::kProblemKind),
                                            decltype(std::declval<const Problem&>().model_digest())>> {
  static constexpr ProblemKind kind = Problem::kProblemKind;
  static ModelDigest digest(const Problem& p) { return p.model_digest(); }
};

// The array digest an estimate records of its prior: the same hash a problem's transition gets.
template <typename Scalar>
std::uint32_t array_digest(const Scalar* a, std::size_t n) {
  WordHash h;
  h.array(a, n);
  return h.value();
}

// A problem's replace_transition, once: `transition` (rows of S entries) validated as init()
// validates it, then stored in `slot` with the digest's transition half; on error nothing changes.
template <typename Scalar, int S, int Rows>
Status replace_transition(const Scalar*& slot, ModelDigest& digest, const Scalar* transition) {
  if (Status st = validate_transition<Scalar, S, Rows / S>(transition); st != Status::ok) return st;
  slot = transition;
  digest.transition = array_digest(transition, std::size_t(Rows) * S);
  return Status::ok;
}


}  // namespace detail

}  // namespace pbrl
