// libFuzzer harness: the RLHF preference buffer and labels (problems/rlhf.hpp). The input is a
// program of up to 64 operations on one PreferenceBuffer<4, 3, 4, 5> (a small capacity, so the
// ring wraps often), each decoded from the input:
//   push           two segments (any length, any state and action bytes) and a label (any float);
//   clear;
//   loss           preference_loss with a decoded reward (any floats) and, or not, a gradient;
//   segment        Segment::push_back with any indices;
//   problem        RlhfProblem::init (decoded transitions, initial distribution, discount,
//                  regularizer, box, l2) over the buffer, then loss() at a decoded x and, if it
//                  accepts it, build() and upper() there (upper() reads x from the model);
//   collect        SegmentSampler::init and collect_pair with a decoded policy and length, with
//                  the return labeler, the Bradley-Terry labeler or a labeler returning any float.
// Properties (abort() on violation): a refused call leaves every object it was given byte-
// identical (buffer, sampler with its Rng and step count, loss, gradient, problem); an accepted
// push stores exactly what it was given, as the newest pair; the buffer never holds more than
// its capacity or an invalid segment or label; an accepted loss and its gradient are finite;
// an accepted sample is a valid segment of the length asked for.
// PBRL_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (tests/fuzz/corpus/fuzz_rlhf_buffer) and exits.

#include "fuzz_support.hpp"

#include "pbrl/problems/rlhf.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using pbrl::Label;
using pbrl::Status;
using fuzz::Bytes;
using fuzz::bytes_of;
using fuzz::same_bytes;
using T = double;
constexpr int S = 4, A = 3, MaxLen = 4, Capacity = 5;
using Segment = pbrl::Segment<S, A, MaxLen>;
using Buffer = pbrl::PreferenceBuffer<S, A, MaxLen, Capacity>;
using Problem = pbrl::RlhfProblem<T, S, A, MaxLen, Capacity>;
using Sampler = pbrl::SegmentSampler<T, S, A>;
using Matrix = pbrl::StateActionMatrix<T, S, A>;

// A segment: its length (mostly 0..MaxLen+1, sometimes any int) and MaxLen state and action
// bytes (states and actions out of range too).
Segment segment(fuzz::Input& in) {
  Segment d;
  d.length = in.byte() < 240 ? in.range(0, MaxLen + 1) : in.any_int();
  for (int t = 0; t < MaxLen; ++t) {
    d.state[t] = static_cast<Segment::Index>(in.byte() % 8 < 7 ? in.byte() % S : in.byte());
    d.action[t] = static_cast<Segment::Index>(in.byte() % 8 < 7 ? in.byte() % A : in.byte());
  }
  return d;
}
bool same_segment(const Segment& a, const Segment& b) {
  if (a.length != b.length) return false;
  for (int t = 0; t < a.length; ++t)
    if (a.state[t] != b.state[t] || a.action[t] != b.action[t]) return false;
  return true;
}

template <typename V>
void distribution(fuzz::Input& in, V* p, int rows, int m) {
  if (in.byte() % 4 == 0) {
    for (int i = 0; i < rows * m; ++i) p[i] = in.real<V>();
    return;
  }
  fuzz::normalized_rows(in, p, rows, m);
}

void check_buffer(const Buffer& b) {
  FUZZ_CHECK(b.size() >= 0 && b.size() <= Capacity);
  FUZZ_CHECK(b.empty() == (b.size() == 0) && b.full() == (b.size() == Capacity));
  FUZZ_CHECK(b.pushed() >= b.size());
  for (int i = 0; i < b.size(); ++i) {
    FUZZ_CHECK(pbrl::validate(b[i].first) == Status::ok);
    FUZZ_CHECK(pbrl::validate(b[i].second) == Status::ok);
    FUZZ_CHECK(pbrl::validate_label(b[i].label) == Status::ok);
  }
}

// A labeler that returns a label decoded ahead of the call (any float).
struct FixedLabel {
  Label label;
  static Label call(void* context, const Segment&, const Segment&) { return static_cast<FixedLabel*>(context)->label; }
};

struct State {
  Buffer buffer;
  Problem problem;
  Sampler sampler;
  T transition[S * A * S], initial[S], reference[S * A], true_reward[S * A];
};
State* state = nullptr;

void push(fuzz::Input& in, Buffer& b) {
  const Segment d0 = segment(in), d1 = segment(in);
  const Label label = in.real<Label>();
  const bool valid = pbrl::validate(d0) == Status::ok && pbrl::validate(d1) == Status::ok &&
                     pbrl::validate_label(label) == Status::ok;
  const Bytes before = bytes_of(b);
  const int size = b.size();
  const long pushed = b.pushed();
  const Status st = b.push(d0, d1, label);
  FUZZ_CHECK((st == Status::ok) == valid);
  if (st != Status::ok) {
    FUZZ_CHECK(same_bytes(b, before));
    return;
  }
  FUZZ_CHECK(b.size() == (size < Capacity ? size + 1 : Capacity) && b.pushed() == pushed + 1);
  FUZZ_CHECK(same_segment(b.newest().first, d0) && same_segment(b.newest().second, d1));
  FUZZ_CHECK(std::memcmp(&b.newest().label, &label, sizeof label) == 0);
}

void loss(fuzz::Input& in, const Buffer& b) {
  T reward[S * A], grad[S * A];
  for (T& r : reward) r = in.real<T>();
  for (T& g : grad) g = in.real<T>();
  T value = in.real<T>();
  const T value_before = value;
  Bytes grad_before(sizeof grad);
  std::memcpy(grad_before.data(), grad, sizeof grad);
  const bool with_grad = in.flag();
  const Status st = pbrl::preference_loss(reward, b, value, with_grad ? grad : nullptr);
  if (st != Status::ok) {
    FUZZ_CHECK(std::memcmp(&value, &value_before, sizeof value) == 0);
    FUZZ_CHECK(std::memcmp(grad, grad_before.data(), sizeof grad) == 0);
    return;
  }
  FUZZ_CHECK(std::isfinite(value) && value >= T(0));
  if (with_grad)
    for (T g : grad) FUZZ_CHECK(std::isfinite(g));
}

void segment_push(fuzz::Input& in) {
  Segment d = segment(in);
  const int s = in.range(-2, S + 1), a = in.range(-2, A + 1);
  const Segment before = d;
  const Status st = d.push_back(s, a);
  const bool room = before.length >= 0 && before.length < MaxLen;
  const bool in_range = s >= 0 && s < S && a >= 0 && a < A;
  FUZZ_CHECK((st == Status::ok) == (room && in_range));
  if (st != Status::ok) {
    FUZZ_CHECK(std::memcmp(&d, &before, sizeof d) == 0);
  } else {
    FUZZ_CHECK(d.length == before.length + 1 && d.state[before.length] == s && d.action[before.length] == a);
  }
}

void problem(fuzz::Input& in, State& st) {
  Problem::Data d;
  distribution(in, st.transition, S * A, S);
  distribution(in, st.initial, 1, S);
  d.transition = st.transition;
  d.initial = st.initial;
  d.discount = in.flag() ? in.real<T>() : in.unit<T>();
  const std::uint8_t kind = in.byte() % 3;
  d.lower.kind = kind == 2 ? static_cast<pbrl::RegularizerKind>(3) : static_cast<pbrl::RegularizerKind>(kind);
  d.lower.tau = in.real<T>();
  if (d.lower.kind == pbrl::RegularizerKind::kl_reference) {
    distribution(in, st.reference, S, A);
    d.lower.reference = st.reference;
  }
  d.reward.lower = in.real<T>();
  d.reward.upper = in.real<T>();
  d.l2 = in.flag() ? in.real<T>() : T(0);
  d.preferences = in.byte() == 0 ? nullptr : &st.buffer;
  if (!fuzz::ok_or_unchanged(st.problem, [&] { return st.problem.init(d); })) return;
  Problem::Params x;
  for (int i = 0; i < Problem::kParams; ++i) x(i) = in.real<T>();
  Problem::Params grad = Problem::Params::Constant(T(7));
  T f = T(3);
  if (st.problem.loss(x, f, grad) != Status::ok) {
    FUZZ_CHECK(f == T(3) && grad == Problem::Params::Constant(T(7)));
    return;
  }
  FUZZ_CHECK(std::isfinite(f) && grad.allFinite());
  // upper() at the x build() was given (it reads x from the model): loss()'s f and gradient, to
  // the bit, and no policy gradient.
  Problem::Model model;
  pbrl::Mdp<T, S, A> mdp;
  FUZZ_CHECK(st.problem.build(x, model, mdp) == Status::ok);
  pbrl::EvaluationWorkspace<T, S, pbrl::EvaluationMethod::direct> ws;
  pbrl::Evaluation<T, S, A> scratch;
  Problem::Params grad_upper = Problem::Params::Constant(T(5));
  Matrix grad_pi = Matrix::Constant(T(5));
  T f_upper = T(4);
  FUZZ_CHECK(st.problem.upper(Matrix::Constant(T(1) / A), model, ws, scratch, f_upper, grad_upper, grad_pi) ==
             Status::ok);
  FUZZ_CHECK(std::memcmp(&f_upper, &f, sizeof f) == 0);
  FUZZ_CHECK(std::memcmp(grad_upper.data(), grad.data(), sizeof(T) * Problem::kParams) == 0);
  FUZZ_CHECK(grad_pi == Matrix::Zero());
}

void collect(fuzz::Input& in, State& st) {
  distribution(in, st.transition, S * A, S);
  distribution(in, st.initial, 1, S);
  const int burn_in = in.range(-1, 4);
  if (!fuzz::ok_or_unchanged(st.sampler,
                             [&] { return st.sampler.init(st.transition, st.initial, in.u32(), burn_in); }))
    return;
  Matrix pi;
  distribution(in, pi.data(), S, A);
  const int length = in.byte() < 240 ? in.range(0, MaxLen + 1) : in.any_int();
  // One segment, then a labeled pair.
  Segment d;
  const Segment d_before = d;
  const Bytes before = bytes_of(st.sampler);
  if (st.sampler.sample(pi, length, d) != Status::ok) {
    FUZZ_CHECK(same_bytes(st.sampler, before));
    FUZZ_CHECK(std::memcmp(&d, &d_before, sizeof d) == 0);
  } else {
    FUZZ_CHECK(pbrl::validate(d) == Status::ok && d.length == length);
  }
  pbrl::ReturnLabeler<T, S, A> by_return;
  pbrl::BradleyTerryLabeler<T, S, A> bradley_terry;
  FixedLabel fixed{in.real<Label>()};
  for (T& r : st.true_reward) r = in.real<T>();
  by_return.reward = in.byte() == 0 ? nullptr : st.true_reward;
  bradley_terry.reward = st.true_reward;
  bradley_terry.scale = in.real<T>();
  pbrl::Labeler<S, A, MaxLen> labeler;
  switch (in.byte() % 4) {
    case 0: labeler = by_return.labeler<MaxLen>(); break;
    case 1: labeler = bradley_terry.labeler<MaxLen>(); break;
    case 2: labeler = {&FixedLabel::call, &fixed}; break;
    default: break;  // no function: null_pointer
  }
  const Bytes sampler_mid = bytes_of(st.sampler), buffer_before = bytes_of(st.buffer);
  const long pushed = st.buffer.pushed();
  if (st.sampler.collect_pair(pi, length, labeler, st.buffer) != Status::ok) {
    // The labelers' own Rng may move; the sampler and the buffer may not.
    FUZZ_CHECK(same_bytes(st.sampler, sampler_mid));
    FUZZ_CHECK(same_bytes(st.buffer, buffer_before));
    return;
  }
  FUZZ_CHECK(st.buffer.pushed() == pushed + 1);
  FUZZ_CHECK(st.buffer.newest().first.length == length && st.buffer.newest().second.length == length);
}

void write_seeds(const std::string& dir) {
  for (int v = 0; v < 8; ++v) {
    Bytes seed;
    fuzz::append_plausible(seed, 40503u * std::uint32_t(v + 1), 600, 2);
    seed[0] = std::uint8_t(v);  // the first operation
    fuzz::write_file(dir + "/r" + std::to_string(v), seed);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  return fuzz::initialize(state, write_seeds);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  state->buffer.clear();  // each input starts from an empty buffer: executions are independent
  for (int op = 0; op < 64 && in.remaining() > 0; ++op) {
    switch (in.byte() % 8) {
      case 0:
      case 1:
      case 2: push(in, state->buffer); break;
      case 3: state->buffer.clear(); FUZZ_CHECK(state->buffer.empty() && state->buffer.pushed() == 0); break;
      case 4: loss(in, state->buffer); break;
      case 5: segment_push(in); break;
      case 6: problem(in, *state); break;
      default: collect(in, *state); break;
    }
    check_buffer(state->buffer);
  }
  return 0;
}
