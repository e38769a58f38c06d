#pragma once
// Checkpoint and restore of a whole solver (Pbrl, PbrlZeroSum) to a caller byte buffer, e.g. a
// flash page, so that a device resumes after a reset where it was: a restored solver continues
// bit for bit like the one that was saved. The image format, why a write cut short by a power loss
// is always refused, what restore checks, estimated models and A/B storage: the comment after the
// includes (docs/reference/checkpoint.md renders it).

#include "pbrl/core/config.hpp"
#include "pbrl/model/evaluation.hpp"
#include "pbrl/model/detail/model_digest.hpp"
#include "pbrl/core/rng.hpp"
#include "pbrl/core/status.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

// Image: a fixed header, the payload, a commit word. Every number is little-endian and written
// byte by byte, so the image is the same on every target and never depends on struct padding.
//   offset  bytes  field
//        0      4  magic "PBCK"
//        4      8  sequence number: the solver's iteration count (the A/B selection compares it)
//       12      2  format version (kCheckpointVersion)
//       14      1  solver (CheckpointSolver)
//       15      1  sizeof(Scalar)
//       16      1  evaluation method (0 direct, 1 sweeps)
//       17      1  problem kind (ProblemKind, model_digest.hpp)
//       18      2  S
//       20      2  A (Pbrl) or A1 (PbrlZeroSum)
//       22      2  0 (Pbrl) or A2 (PbrlZeroSum)
//       24      4  parameter dimension (the problem's kParams)
//       28      4  payload size P
//       32      4  settings digest: CRC-32 of the solver's settings, field by field (visit_settings),
//                  then of the estimate's (strength and EstimateSettings), if the image has one
//       36      4  model digest: the problem's data and its lower-level transition array, or the
//                  estimate's prior in its place (model_digest.hpp)
//       40      1  estimate: 0 none, else its count type's code (TransitionEstimate::checkpoint_code)
//       41      3  0 (reserved)
//       44      4  CRC-32 of the whole image except these 4 bytes: bytes [0, 44), then [48, 56 + P)
//       48      P  payload: the solver's state, field by field (visit_state), then the estimate's
//   48 + P      8  commit word: the sequence number again, most significant byte first
// Scalars are stored as their IEEE-754 bits (a float image restores on every target with the same
// float solver); counts as 64-bit integers, below 2^63 - 1 (a count with no room for one more
// step is refused).
//
// Why a write cut short by a power loss is always refused. The slot then holds the new image's
// first c bytes followed by what was there before: erased flash (0xFF), or, where bytes are
// rewritten in place (EEPROM, FRAM), the older image of the same solver that A/B storage
// overwrites, whose sequence number is smaller. Restore accepts such a slot only if it is byte for
// byte a complete image (the old one when no written byte differed from it, or the new one when
// the bytes not written already held their new values), because it requires the sequence number
// (bytes 4-11, written early) to equal the commit word (the last 8 bytes, written last):
//   - over an older image the two come from different images and differ, unless the cut falls
//     inside one of them and the mixed number still equals the other: then every byte is the old
//     image's (cut in the sequence number) or the new image's (cut in the commit word);
//   - over erased flash the commit word is all ones, which no sequence number is (they are below
//     2^63), or, with the cut inside it, matches only if the new image has 0xFF where it was cut.
// The commit word ends with the sequence number's low byte, so a cut before the last byte leaves
// the new image complete only if it ends like the old content (iteration counts with the same low
// byte, or a low byte 0xFF over erased flash). The CRC catches every other damage: any error burst
// up to 32 bits, anything else with probability 1 - 2^-32.
//
// Restore checks everything before it writes: the frame (magic, CRC, commit word: else
// checkpoint_corrupt), then the format version, type tag and payload size (checkpoint_mismatch),
// the problem kind (checkpoint_other_problem), the model digest (checkpoint_other_model) and the
// settings digest (checkpoint_other_settings), then every number of the payload (a non-finite
// scalar: not_finite; a count with no room for another step or an all-zero random state:
// checkpoint_corrupt), then that the payload is a state the solver (and the estimate) could have
// written (x in its box, policies in their sets, the schedule consistent, the counts reachable:
// validate_checkpoint_state, on the image's bytes); only then does it decode, in place.
//
// An estimated model (estimate/transition_estimate.hpp): save_checkpoint(solver, estimate, ...)
// puts the estimate's state after the solver's, and its model digest names the estimate's prior
// where a plain image names the problem's transition array. After restoring such an image the
// solver still runs on the model it was init()'d with: write the estimate's mean and
// swap_model() it in (docs/estimation.md), so that no observation the image holds is lost.
//
// A/B storage: save each checkpoint into the slot checkpoint_slot_to_write() names (an invalid
// one, else the older), and at boot restore_newest_checkpoint(). A power cut during a save then
// costs at most the steps since the previous checkpoint. Erase both slots when starting over
// (after init() with other settings, or to run again from iteration 0): the sequence numbers
// compare iteration counts, so an image of an earlier, longer run would count as newer.

namespace pbrl {

/// CRC-32 of IEEE 802.3 (zlib's crc32: reflected polynomial 0xEDB88320, register and result
/// complemented). Chains: crc32(b, nb, crc32(a, na)) is the CRC of a followed by b. Null data
/// counts as no bytes.
std::uint32_t crc32(const unsigned char* data, std::size_t size, std::uint32_t crc = 0u);

constexpr std::uint32_t kCheckpointMagic = 0x4B434250u;  ///< "PBCK" as the image's first 4 bytes (little-endian)
/// The image format's version: an image of another version is refused (checkpoint_mismatch).
constexpr std::uint16_t kCheckpointVersion = 7;
/// Bytes of an image's header, before the payload.
constexpr std::size_t kCheckpointHeaderSize = 48;
/// Bytes of an image's commit word, after the payload.
constexpr std::size_t kCheckpointCommitSize = 8;

/// The solver type an image holds (the header's byte 14).
enum class CheckpointSolver : unsigned char { pbrl = 1, pbrl_zero_sum = 2 };

/// What an image's type tag records about its solver; each solver's checkpoint_tag() says.
struct CheckpointTag {
  /// The solver type.
  CheckpointSolver solver;
  /// sizeof(Scalar).
  std::size_t scalar_size;
  /// The evaluation method.
  EvaluationMethod method;
  /// @{
  /// The sizes: S, A (Pbrl) or A1 and A2 (PbrlZeroSum, else 0), the parameter dimension.
  int states, actions1, actions2, parameters;
  /// @}
};

/// @cond internal
// The checkpoint functions' way into a solver's and an estimate's hooks, which those keep private
// (friend struct CheckpointAccess): their state and settings fields (visit_state, visit_settings),
// the checks of an image's state (validate_checkpoint_state) and the header's codes. Users
// checkpoint through save_checkpoint and restore_checkpoint below.
struct CheckpointAccess {
  template <class T, class Visitor>
  static decltype(auto) visit_state(T& t, Visitor& v) {
    return t.visit_state(v);
  }
  template <class T, class Visitor>
  static void visit_settings(const T& t, Visitor& v) {
    t.visit_settings(v);
  }
  template <class T, class... Args>
  static Status validate_checkpoint_state(const T& t, Args... args) {
    return t.validate_checkpoint_state(args...);
  }
  template <class T>
  static constexpr CheckpointTag checkpoint_tag() {
    return T::checkpoint_tag();
  }
  template <class T>
  static constexpr std::uint8_t checkpoint_code() {
    return T::checkpoint_code();
  }
  template <class T>
  static std::int64_t checkpoint_observations(const unsigned char* payload) {
    return T::checkpoint_observations(payload);
  }
  template <class T>
  static std::uint32_t prior_digest(const T& t) {
    return t.prior_digest();
  }
};

// In sweeps mode an evaluation starts from the previous solution: the value and occupancy of an
// Evaluation, or a state vector such as the Bellman penalty's start occupancy. A solver names
// such fields warm_start<Method>(field) in its visit_state(): a checkpoint carries them in sweeps
// mode and leaves them out in direct mode, where every solve starts from nothing.
template <EvaluationMethod M, typename T>
struct WarmStart {
  T& field;
};
template <EvaluationMethod M, typename T>
WarmStart<M, T> warm_start(T& field) {
  return {field};
}
/// @endcond

namespace detail {

inline void put_le(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline std::uint64_t get_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}

// How one field of a solver's state or settings is encoded: its size in the image, write (and,
// for state fields, check and read). The integers of a state are counts: they must fit the field.
template <typename T, typename Enable = void>
struct CheckpointField;

template <typename T>
struct CheckpointField<T, std::enable_if_t<std::is_floating_point<T>::value>> {
  static_assert(std::numeric_limits<T>::is_iec559 && (sizeof(T) == 4 || sizeof(T) == 8),
                "checkpoints store IEEE-754 binary32 or binary64 scalars");
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static constexpr std::size_t size = sizeof(T);
  static constexpr Bits kExponent = sizeof(T) == 4 ? Bits(0x7F800000u) : Bits(0x7FF0000000000000ull);

  static void write(unsigned char*& p, const T& v) {
    Bits b;
    std::memcpy(&b, &v, sizeof b);
    put_le(p, b, int(size));
    p += size;
  }
  static Bits bits(const unsigned char*& p) {
    const Bits b = static_cast<Bits>(get_le(p, int(size)));
    p += size;
    return b;
  }
  // On the bits, so that no floating-point operation (or fast-math flag) is involved.
  static Status check(const unsigned char*& p) {
    return (bits(p) & kExponent) == kExponent ? Status::not_finite : Status::ok;
  }
  static void read(const unsigned char*& p, T& v) {
    const Bits b = bits(p);
    std::memcpy(&v, &b, sizeof v);
  }
};

template <typename T>
struct CheckpointField<T, std::enable_if_t<std::is_integral<T>::value || std::is_enum<T>::value>> {
  static constexpr std::size_t size = 8;
  static std::uint64_t value(const T& v) {
    if constexpr (std::is_enum<T>::value) {
      return CheckpointField<std::underlying_type_t<T>>::value(static_cast<std::underlying_type_t<T>>(v));
    } else if constexpr (std::is_signed<T>::value) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    } else {
      return static_cast<std::uint64_t>(v);
    }
  }
  static void write(unsigned char*& p, const T& v) {
    put_le(p, value(v), 8);
    p += 8;
  }
  // A count: from 0 to below the largest T, so that the solver can count on from it (a negative
  // number reads as 2^63 or more).
  static Status check(const unsigned char*& p) {
    static_assert(std::is_integral<T>::value, "state integers are counts");
    const std::uint64_t v = get_le(p, 8);
    p += 8;
    return v < static_cast<std::uint64_t>(std::numeric_limits<T>::max()) ? Status::ok : Status::checkpoint_corrupt;
  }
  static void read(const unsigned char*& p, T& v) {
    v = static_cast<T>(get_le(p, 8));
    p += 8;
  }
};

template <typename Scalar, int R, int C, int O, int MR, int MC>
struct CheckpointField<Eigen::Matrix<Scalar, R, C, O, MR, MC>> {
  static_assert(R > 0 && C > 0, "checkpoints store fixed-size matrices");
  using Element = CheckpointField<Scalar>;
  static constexpr std::size_t size = std::size_t(R) * std::size_t(C) * Element::size;
  static void write(unsigned char*& p, const Eigen::Matrix<Scalar, R, C, O, MR, MC>& m) {
    for (int i = 0; i < R * C; ++i) Element::write(p, m.data()[i]);
  }
  static Status check(const unsigned char*& p) {
    for (int i = 0; i < R * C; ++i)
      if (Status st = Element::check(p); st != Status::ok) return st;
    return Status::ok;
  }
  static void read(const unsigned char*& p, Eigen::Matrix<Scalar, R, C, O, MR, MC>& m) {
    for (int i = 0; i < R * C; ++i) Element::read(p, m.data()[i]);
  }
};

template <>
struct CheckpointField<Rng> {
  static constexpr std::size_t size = 16;
  static void write(unsigned char*& p, const Rng& rng) {
    for (int i = 0; i < 4; ++i, p += 4) put_le(p, rng.state()[i], 4);
  }
  static void words(const unsigned char*& p, std::uint32_t (&w)[4]) {
    for (int i = 0; i < 4; ++i, p += 4) w[i] = static_cast<std::uint32_t>(get_le(p, 4));
  }
  // All zeros is no state of a seeded stream (Rng::set_state refuses it).
  static Status check(const unsigned char*& p) {
    std::uint32_t w[4];
    words(p, w);
    return (w[0] | w[1] | w[2] | w[3]) == 0u ? Status::checkpoint_corrupt : Status::ok;
  }
  static void read(const unsigned char*& p, Rng& rng) {
    std::uint32_t w[4];
    words(p, w);
    (void)rng.set_state(w);  // cannot fail: check() passed
  }
};

// Settings only: the sweep settings of an evaluation workspace change how a solver continues.
template <typename Scalar, int S>
struct CheckpointField<EvaluationWorkspace<Scalar, S, EvaluationMethod::direct>> {
  static constexpr std::size_t size = 0;
  static void write(unsigned char*&, const EvaluationWorkspace<Scalar, S, EvaluationMethod::direct>&) {}
};
template <typename Scalar, int S>
struct CheckpointField<EvaluationWorkspace<Scalar, S, EvaluationMethod::sweeps>> {
  static constexpr std::size_t size = CheckpointField<int>::size + CheckpointField<Scalar>::size;
  static void write(unsigned char*& p, const EvaluationWorkspace<Scalar, S, EvaluationMethod::sweeps>& ws) {
    CheckpointField<int>::write(p, ws.max_sweeps);
    CheckpointField<Scalar>::write(p, ws.tolerance);
  }
};

// The warm start of a field: all of a state vector, the value and occupancy of an Evaluation.
template <typename T>
struct WarmStartParts {
  using Field = CheckpointField<T>;
  static constexpr std::size_t size = Field::size;
  static void write(unsigned char*& p, const T& v) { Field::write(p, v); }
  static Status check(const unsigned char*& p) { return Field::check(p); }
  static void read(const unsigned char*& p, T& v) { Field::read(p, v); }
};
template <typename Scalar, int S, int A>
struct WarmStartParts<Evaluation<Scalar, S, A>> {
  using Field = CheckpointField<StateVector<Scalar, S>>;
  static constexpr std::size_t size = 2 * Field::size;
  static void write(unsigned char*& p, const Evaluation<Scalar, S, A>& e) {
    Field::write(p, e.value);
    Field::write(p, e.occupancy);
  }
  static Status check(const unsigned char*& p) {
    if (Status st = Field::check(p); st != Status::ok) return st;
    return Field::check(p);
  }
  static void read(const unsigned char*& p, Evaluation<Scalar, S, A>& e) {
    Field::read(p, e.value);
    Field::read(p, e.occupancy);
  }
};

template <typename Scalar, int S>
struct WarmStartParts<EvaluationWarmStart<Scalar, S>> {
  using Field = CheckpointField<StateVector<Scalar, S>>;
  static constexpr std::size_t size = 2 * Field::size;
  static void write(unsigned char*& p, const EvaluationWarmStart<Scalar, S>& e) {
    Field::write(p, e.value);
    Field::write(p, e.occupancy);
  }
  static Status check(const unsigned char*& p) {
    if (Status st = Field::check(p); st != Status::ok) return st;
    return Field::check(p);
  }
  static void read(const unsigned char*& p, EvaluationWarmStart<Scalar, S>& e) {
    Field::read(p, e.value);
    Field::read(p, e.occupancy);
  }
};

template <EvaluationMethod M, typename T>
struct CheckpointField<WarmStart<M, T>> {
  static constexpr bool kept = M == EvaluationMethod::sweeps;
  using Parts = WarmStartParts<std::remove_const_t<T>>;
  static constexpr std::size_t kept_size() {  // Parts only where kept (direct mode may keep nothing)
    if constexpr (kept) return Parts::size;
    return 0;
  }
  static constexpr std::size_t size = kept_size();
  static void write(unsigned char*& p, const WarmStart<M, T>& w) {
    if constexpr (kept) Parts::write(p, w.field);
    (void)p, (void)w;
  }
  static Status check(const unsigned char*& p) {
    if constexpr (kept) return Parts::check(p);
    (void)p;
    return Status::ok;
  }
  static void read(const unsigned char*& p, const WarmStart<M, T>& w) {
    if constexpr (kept) Parts::read(p, w.field);
    (void)p, (void)w;
  }
};

// Visitors of a solver's visit_state() (one call with every field, in image order) and
// visit_settings().
struct StateSize {  // the payload size, as a type: usable in constant expressions
  template <typename... Fields>
  std::integral_constant<std::size_t, (std::size_t(0) + ... + CheckpointField<std::decay_t<Fields>>::size)>
  operator()(const Fields&...) const {
    return {};
  }
};
struct StateWriter {
  unsigned char* p;
  template <typename... Fields>
  void operator()(const Fields&... fields) {
    (CheckpointField<std::decay_t<Fields>>::write(p, fields), ...);
  }
};
struct StateChecker {  // reads the buffer only; stops at the first field that fails
  const unsigned char* p;
  Status status = Status::ok;
  template <typename... Fields>
  void operator()(const Fields&...) {
    ((status = status == Status::ok ? CheckpointField<std::decay_t<Fields>>::check(p) : status), ...);
  }
};
struct StateReader {
  const unsigned char* p;
  template <typename... Fields>
  void operator()(Fields&&... fields) {
    (CheckpointField<std::decay_t<Fields>>::read(p, fields), ...);
  }
};
// Decodes the one field of an image's payload that visit_state() names `member` (found by its
// address) into `out`, and nothing else: a solver checks what its next step relies on (x in its
// box, policies in their sets) on these copies before restore writes anything. False if
// visit_state() has no such field.
template <typename T>
struct FieldDecoder {
  const unsigned char* p;
  const T* member;
  T& out;
  bool found = false;
  template <typename... Fields>
  void operator()(const Fields&... fields) {
    (next(fields), ...);
  }
  template <typename F>
  void next(const F& field) {
    if (found) return;
    if constexpr (std::is_same<F, T>::value) {
      if (&field == member) {
        const unsigned char* q = p;
        CheckpointField<T>::read(q, out);
        found = true;
        return;
      }
    }
    p += CheckpointField<F>::size;
  }
};
template <class Solver, typename T>
bool decode_state_field(const Solver& solver, const unsigned char* payload, const T& member, T& out) {
  FieldDecoder<T> decoder{payload, &member, out};
  CheckpointAccess::visit_state(solver, decoder);
  return decoder.found;
}

// One lower-level player's fields of a penalty solver's state: its policy parameters y and the
// oracle's warm start pi-hat (the solver's members; they locate the copies in a payload).
template <class Matrix>
struct PlayerStateFields {
  const Matrix& y;
  const Matrix& pi_hat;
};

// A player's part of validate_penalty_solver_state: y in the policy set `set`, pi-hat a policy.
template <class Solver, class Set, class Matrix>
Status validate_player_state(const Solver& solver, const unsigned char* payload, const Set& set,
                             const PlayerStateFields<Matrix>& player) {
  using Scalar = typename Matrix::Scalar;
  constexpr int S = Matrix::RowsAtCompileTime, A = Matrix::ColsAtCompileTime;
  Matrix m;
  if (!decode_state_field(solver, payload, player.y, m)) return Status::checkpoint_corrupt;
  if (Status st = validate_parameters<Scalar, S, A>(set, m); st != Status::ok) return st;
  if (!decode_state_field(solver, payload, player.pi_hat, m)) return Status::checkpoint_corrupt;
  return validate_policy<Scalar, S, A>(m);
}

// The penalty solvers' (Pbrl, PbrlZeroSum) validate_checkpoint_state, restore_checkpoint's last
// check, on copies decoded from the payload (whose numbers are known finite): a state the solver
// could have written at iteration `sequence`. The iteration count is the sequence number, the
// schedule's state is consistent with the settings and the count, x lies in the problem's box,
// and each player's y lies in the policy set and its pi-hat is a policy; the first refusal decides.
// iteration, schedule, x and the players' fields are the solver's members.
template <class Solver, class Problem, class Settings, class Schedule, class Params, class... Matrices>
Status validate_penalty_solver_state(const Solver& solver, const unsigned char* payload, std::uint64_t sequence,
                                     const Problem* problem, const Settings& settings,
                                     const std::int64_t& iteration, const std::int64_t& model_generation,
                                     const Schedule& schedule, const Params& x,
                                     const PlayerStateFields<Matrices>&... players) {
  if (problem == nullptr) return Status::not_initialized;
  Params x_copy;
  Schedule schedule_copy;
  std::int64_t k = 0, generation = 0;
  if (!decode_state_field(solver, payload, iteration, k) ||
      !decode_state_field(solver, payload, model_generation, generation) ||
      !decode_state_field(solver, payload, schedule, schedule_copy) || !decode_state_field(solver, payload, x, x_copy))
    return Status::checkpoint_corrupt;
  if (static_cast<std::uint64_t>(k) != sequence || generation < 0) return Status::checkpoint_corrupt;
  if (Status st = schedule_copy.validate_state(settings, k); st != Status::ok) return st;
  if (Status st = problem->validate_parameters(x_copy); st != Status::ok) return st;
  Status st = Status::ok;
  ((st = st == Status::ok ? validate_player_state(solver, payload, settings.policy, players) : st), ...);
  return st;
}

// Fields in visit() order; the domains (solver/settings.hpp) are validation's and the names are
// settings files', neither is hashed (an image's digest does not change with a field's name).
struct SettingsDigest {
  std::uint32_t crc = 0u;
  template <typename T, typename Domain>
  void operator()(const T& field, const Domain&, const char* /*name*/) {
    using Field = CheckpointField<T>;
    unsigned char bytes[Field::size > 0 ? Field::size : 1] = {};
    unsigned char* p = bytes;
    Field::write(p, field);
    crc = crc32(bytes, Field::size, crc);
  }
};

// The header's numbers (src/checkpoint.cpp encodes and decodes them).
struct CheckpointHeader {
  std::uint64_t sequence = 0;
  std::uint16_t version = 0;
  std::uint8_t solver = 0, scalar_size = 0, method = 0, problem = 0, estimate = 0;
  std::uint16_t states = 0, actions1 = 0, actions2 = 0;
  std::uint32_t parameters = 0, payload_size = 0, settings_digest = 0, model_digest = 0, reserved = 0;
};

// Writes the header and the commit word around the payload already at image + kCheckpointHeaderSize,
// then the CRC.
void seal_checkpoint(const CheckpointHeader& header, unsigned char* image);
// The header of the image at the start of buffer[0, size), if the image is intact: magic, an
// image that fits in size, CRC, commit word equal to the sequence number, which is below 2^63.
// Else checkpoint_corrupt.
Status read_checkpoint_header(const unsigned char* buffer, std::size_t size, CheckpointHeader& header);
// ok if the two headers agree on format version, type tag, estimate and payload size (else
// checkpoint_mismatch) and on the problem kind (else checkpoint_other_problem).
Status match_checkpoint_type(const CheckpointHeader& header, const CheckpointHeader& expected);

// No estimate in the image (a plain solver checkpoint).
struct NoEstimate {
  static constexpr std::uint8_t checkpoint_code() { return 0; }
};

template <class Solver>
constexpr std::size_t checkpoint_payload_size() {
  return decltype(CheckpointAccess::visit_state(std::declval<const Solver&>(), std::declval<StateSize&>()))::value;
}
template <class Estimate>
constexpr std::size_t estimate_payload_size() {
  if constexpr (std::is_same<Estimate, NoEstimate>::value) {
    return 0;
  } else {
    return decltype(CheckpointAccess::visit_state(std::declval<const Estimate&>(), std::declval<StateSize&>()))::value;
  }
}
template <class Solver, class Estimate>
constexpr std::size_t image_payload_size() {
  return checkpoint_payload_size<Solver>() + estimate_payload_size<Estimate>();
}

template <class Solver, class Estimate>
constexpr void check_estimate_fits() {
  if constexpr (!std::is_same<Estimate, NoEstimate>::value) {
    static_assert(std::is_same<typename Estimate::Scalar, typename Solver::Scalar>::value,
                  "the estimate's Scalar is the solver's");
    static_assert(Estimate::kStates == Solver::S, "the estimate's states are the solver's");
  }
}

// The header of the images of Solver (and Estimate), but for the sequence number and the digests.
template <class Solver, class Estimate = NoEstimate>
constexpr CheckpointHeader checkpoint_type_header() {
  check_estimate_fits<Solver, Estimate>();
  constexpr CheckpointTag tag = CheckpointAccess::checkpoint_tag<Solver>();
  static_assert(tag.scalar_size < 256 && tag.states < 65536 && tag.actions1 < 65536 && tag.actions2 < 65536,
                "type tag fields out of range");
  static_assert(image_payload_size<Solver, Estimate>() <= 0xFFFFFFFFu, "payload over 4 GiB");
  CheckpointHeader h;
  h.version = kCheckpointVersion;
  h.solver = static_cast<std::uint8_t>(tag.solver);
  h.scalar_size = static_cast<std::uint8_t>(tag.scalar_size);
  h.method = static_cast<std::uint8_t>(tag.method);
  h.problem = static_cast<std::uint8_t>(Solver::problem_kind());
  h.states = static_cast<std::uint16_t>(tag.states);
  h.actions1 = static_cast<std::uint16_t>(tag.actions1);
  h.actions2 = static_cast<std::uint16_t>(tag.actions2);
  h.parameters = static_cast<std::uint32_t>(tag.parameters);
  h.payload_size = static_cast<std::uint32_t>(image_payload_size<Solver, Estimate>());
  h.estimate = CheckpointAccess::checkpoint_code<Estimate>();
  return h;
}

// The digests an image of solver (and estimate) records.
template <class Solver, class Estimate>
std::uint32_t image_settings_digest(const Solver& solver, const Estimate* estimate) {
  SettingsDigest digest;
  CheckpointAccess::visit_settings(solver, digest);
  if constexpr (!std::is_same<Estimate, NoEstimate>::value) CheckpointAccess::visit_settings(*estimate, digest);
  (void)estimate;
  return digest.crc;
}
template <class Solver, class Estimate>
std::uint32_t image_model_digest(const Solver& solver, const Estimate* estimate) {
  const ModelDigest d = solver.model_digest();
  if constexpr (!std::is_same<Estimate, NoEstimate>::value) return combine_digest(d.data, CheckpointAccess::prior_digest(*estimate));
  (void)estimate;
  return combine_digest(d.data, d.transition);
}

// An image's place in time, for A/B storage: the solver's iteration count, then (an image with
// an estimate) the estimate's observation count, so that saves between which the device only
// observed are ordered too.
struct ImageAge {
  std::uint64_t sequence = 0;
  std::int64_t observations = 0;
  bool older_than(const ImageAge& o) const {
    return sequence < o.sequence || (sequence == o.sequence && observations < o.observations);
  }
};

// Whether a slot holds an intact image of this type (digests not compared); its age.
template <class Solver, class Estimate>
bool holds_checkpoint(const unsigned char* slot, std::size_t size, ImageAge& age) {
  CheckpointHeader h;
  if (slot == nullptr || read_checkpoint_header(slot, size, h) != Status::ok ||
      match_checkpoint_type(h, checkpoint_type_header<Solver, Estimate>()) != Status::ok)
    return false;
  age.sequence = h.sequence;
  if constexpr (!std::is_same<Estimate, NoEstimate>::value)
    age.observations =
        CheckpointAccess::checkpoint_observations<Estimate>(slot + kCheckpointHeaderSize + checkpoint_payload_size<Solver>());
  return true;
}

template <class Solver, class Estimate>
constexpr std::size_t image_size() {
  return kCheckpointHeaderSize + image_payload_size<Solver, Estimate>() + kCheckpointCommitSize;
}

template <class Solver, class Estimate>
Status save_image(const Solver& solver, const Estimate* estimate, unsigned char* buffer, std::size_t capacity) {
  if (buffer == nullptr) return Status::null_pointer;
  if (!solver.initialized()) return Status::not_initialized;
  if constexpr (!std::is_same<Estimate, NoEstimate>::value)
    if (!estimate->initialized()) return Status::not_initialized;
  if (capacity < image_size<Solver, Estimate>()) return Status::buffer_too_small;
  StateWriter writer{buffer + kCheckpointHeaderSize};
  CheckpointAccess::visit_state(solver, writer);
  if constexpr (!std::is_same<Estimate, NoEstimate>::value) CheckpointAccess::visit_state(*estimate, writer);
  CheckpointHeader header = checkpoint_type_header<Solver, Estimate>();
  header.sequence = static_cast<std::uint64_t>(solver.iteration());
  header.settings_digest = image_settings_digest(solver, estimate);
  header.model_digest = image_model_digest(solver, estimate);
  seal_checkpoint(header, buffer);
  return Status::ok;
}

template <class Solver, class Estimate>
Status restore_image(Solver& solver, Estimate* estimate, const unsigned char* buffer, std::size_t size) {
  if (buffer == nullptr) return Status::null_pointer;
  if (!solver.initialized()) return Status::not_initialized;
  if constexpr (!std::is_same<Estimate, NoEstimate>::value)
    if (!estimate->initialized()) return Status::not_initialized;
  if (size < image_size<Solver, Estimate>()) return Status::buffer_too_small;
  CheckpointHeader header;
  if (Status st = read_checkpoint_header(buffer, size, header); st != Status::ok) return st;
  if (Status st = match_checkpoint_type(header, checkpoint_type_header<Solver, Estimate>()); st != Status::ok)
    return st;
  if (header.model_digest != image_model_digest(solver, static_cast<const Estimate*>(estimate)))
    return Status::checkpoint_other_model;
  if (header.settings_digest != image_settings_digest(solver, static_cast<const Estimate*>(estimate)))
    return Status::checkpoint_other_settings;
  // The image is intact and of this type: a pre-pass over the buffer checks every number, so
  // the decode below cannot stop halfway.
  const unsigned char* const payload = buffer + kCheckpointHeaderSize;
  const unsigned char* const estimate_payload = payload + checkpoint_payload_size<Solver>();
  StateChecker checker{payload};
  CheckpointAccess::visit_state(static_cast<const Solver&>(solver), checker);
  if constexpr (!std::is_same<Estimate, NoEstimate>::value)
    CheckpointAccess::visit_state(static_cast<const Estimate&>(*estimate), checker);
  if (checker.status != Status::ok) return checker.status;
  // Then what the next step relies on, beyond each number's range: the image must hold a state
  // the solver (and the estimate) could have written.
  if (Status st = CheckpointAccess::validate_checkpoint_state(static_cast<const Solver&>(solver), payload, header.sequence);
      st != Status::ok)
    return st;
  if constexpr (!std::is_same<Estimate, NoEstimate>::value)
    if (Status st = CheckpointAccess::validate_checkpoint_state(*estimate, estimate_payload); st != Status::ok) return st;
  StateReader reader{payload};
  CheckpointAccess::visit_state(solver, reader);
  if constexpr (!std::is_same<Estimate, NoEstimate>::value) CheckpointAccess::visit_state(*estimate, reader);
  return Status::ok;
}

template <class Solver, class Estimate>
int slot_to_write(const unsigned char* slot0, const unsigned char* slot1, std::size_t slot_size) {
  ImageAge age0, age1;
  if (!holds_checkpoint<Solver, Estimate>(slot0, slot_size, age0)) return 0;
  if (!holds_checkpoint<Solver, Estimate>(slot1, slot_size, age1)) return 1;
  return age1.older_than(age0) ? 1 : age0.older_than(age1) ? 0 : 1;
}

template <class Solver, class Estimate>
Status restore_newest(Solver& solver, Estimate* estimate, const unsigned char* slot0, const unsigned char* slot1,
                      std::size_t slot_size) {
  if (slot0 == nullptr || slot1 == nullptr) return Status::null_pointer;
  if (!solver.initialized()) return Status::not_initialized;
  if constexpr (!std::is_same<Estimate, NoEstimate>::value)
    if (!estimate->initialized()) return Status::not_initialized;
  if (slot_size < image_size<Solver, Estimate>()) return Status::buffer_too_small;
  ImageAge age0, age1;
  const bool intact0 = holds_checkpoint<Solver, Estimate>(slot0, slot_size, age0);
  const bool intact1 = holds_checkpoint<Solver, Estimate>(slot1, slot_size, age1);
  const bool slot1_first = intact1 && (!intact0 || age0.older_than(age1));
  const unsigned char* first = slot1_first ? slot1 : slot0;
  const unsigned char* second = slot1_first ? slot0 : slot1;
  const Status st = restore_image(solver, estimate, first, slot_size);
  if (st == Status::ok) return st;
  if (restore_image(solver, estimate, second, slot_size) == Status::ok) return Status::ok;
  return st;
}

}  // namespace detail

/// Bytes of Solver's image: header, payload and commit word; with an Estimate
/// (estimate/transition_estimate.hpp), of the image that carries both. A compile-time constant.
template <class Solver, class Estimate = detail::NoEstimate>
constexpr std::size_t checkpoint_size() {
  return detail::image_size<Solver, Estimate>();
}

/// Writes the solver's image to buffer[0, checkpoint_size<Solver>()).
/// @param solver an init()'d Pbrl or PbrlZeroSum
/// @param buffer where the image goes (a flash page, an A/B slot: checkpoint_slot_to_write())
/// @param capacity the buffer's bytes, at least checkpoint_size<Solver>()
/// @return ok; null_pointer, not_initialized or buffer_too_small, which leave the buffer
///         untouched.
template <class Solver>
Status save_checkpoint(const Solver& solver, unsigned char* buffer, std::size_t capacity) {
  return detail::save_image(solver, static_cast<const detail::NoEstimate*>(nullptr), buffer, capacity);
}
/// The solver's and the estimate's image (checkpoint_size<Solver, Estimate>() bytes); its model
/// digest names the estimate's prior.
/// @return save_checkpoint(solver, buffer, capacity)'s statuses, not_initialized also for an
///         estimate not init()'d; on error the buffer is untouched.
template <class Solver, class Estimate>
Status save_checkpoint(const Solver& solver, const Estimate& estimate, unsigned char* buffer, std::size_t capacity) {
  return detail::save_image(solver, &estimate, buffer, capacity);
}

/// Restores the image at the start of buffer[0, size) into a solver init()'d with the same
/// problem data and settings; it continues bit for bit like the solver that was saved.
/// @return ok, or the refusals, in the order checked: null_pointer, not_initialized,
///   buffer_too_small (size < checkpoint_size<Solver>()), checkpoint_corrupt (not an intact image),
///   checkpoint_mismatch (another version, solver type, scalar, evaluation method or size, or an
///   image with an estimate), checkpoint_other_problem (another kind of problem),
///   checkpoint_other_model (another model: rewards, transitions, rho, gamma, tau, box),
///   checkpoint_other_settings, not_finite or checkpoint_corrupt (a number out of its range), then a
///   state the solver could not have written (its validate_checkpoint_state): out_of_bounds (x
///   outside the problem's box), bad_policy (y outside its policy set, an oracle policy off the
///   simplex), checkpoint_corrupt (an iteration count other than the sequence number, a penalty
///   schedule's state that does not fit the settings and the count). On any refusal the solver is
///   untouched.
template <class Solver>
Status restore_checkpoint(Solver& solver, const unsigned char* buffer, std::size_t size) {
  return detail::restore_image(solver, static_cast<detail::NoEstimate*>(nullptr), buffer, size);
}
/// The image of a solver and an estimate, into both; then write the estimate's mean and
/// swap_model() it in.
/// @return ok, or the refusals of restore_checkpoint(solver, buffer, size), with the estimate's
///         prior in the model digest (checkpoint_other_model), its strength and settings in the
///         settings digest (checkpoint_other_settings), its count type and size in the type
///         (checkpoint_mismatch), and bad_setting for counts the estimate could not have reached
///         (TransitionEstimate::restore's rules); on any refusal both are untouched.
template <class Solver, class Estimate>
Status restore_checkpoint(Solver& solver, Estimate& estimate, const unsigned char* buffer, std::size_t size) {
  return detail::restore_image(solver, &estimate, buffer, size);
}

/// A/B storage: the slot (0 or 1) the next save should go to: one that holds no intact image of
/// Solver's type, else the one with the older image (smaller sequence number, then, with an
/// Estimate, fewer observations; slot 1 on a tie, which restore_newest_checkpoint() reads second).
/// Slots are slot_size bytes. With an Estimate: of the images that carry both.
template <class Solver, class Estimate = detail::NoEstimate>
int checkpoint_slot_to_write(const unsigned char* slot0, const unsigned char* slot1, std::size_t slot_size) {
  return detail::slot_to_write<Solver, Estimate>(slot0, slot1, slot_size);
}

/// A/B storage: restores the newest image restore_checkpoint() accepts (by the order above; slot 0
/// first on a tie).
/// @return ok; null_pointer (a null slot), not_initialized, buffer_too_small (slots shorter than
///         an image); if neither slot has an image it accepts, the refusal of the slot tried first
///         (the newer intact image, else slot 0). On error the solver is untouched.
template <class Solver>
Status restore_newest_checkpoint(Solver& solver, const unsigned char* slot0, const unsigned char* slot1,
                                 std::size_t slot_size) {
  return detail::restore_newest(solver, static_cast<detail::NoEstimate*>(nullptr), slot0, slot1, slot_size);
}
/// restore_newest_checkpoint() of a solver and an estimate, into both (their images:
/// save_checkpoint(solver, estimate, ...)); on error both are untouched.
template <class Solver, class Estimate>
Status restore_newest_checkpoint(Solver& solver, Estimate& estimate, const unsigned char* slot0,
                                 const unsigned char* slot1, std::size_t slot_size) {
  return detail::restore_newest(solver, &estimate, slot0, slot1, slot_size);
}

}  // namespace pbrl
