// Checkpoint framing (layout in include/pbrl/solver/checkpoint.hpp): the CRC-32 and the header.
#include "pbrl/solver/checkpoint.hpp"

namespace pbrl {

namespace {

// CRC-32 register update for one nibble of the reflected polynomial 0xEDB88320: 64 bytes of
// constant data instead of the usual 1 KiB table, at two lookups per byte.
constexpr std::uint32_t kCrcNibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

constexpr std::size_t kSequenceAt = 4, kVersionAt = 12, kSolverAt = 14, kScalarSizeAt = 15, kMethodAt = 16,
                      kProblemAt = 17, kStatesAt = 18, kActions1At = 20, kActions2At = 22, kParametersAt = 24,
                      kPayloadSizeAt = 28, kDigestAt = 32, kModelDigestAt = 36, kEstimateAt = 40, kReservedAt = 41,
                      kCrcAt = 44;
static_assert(kCrcAt + 4 == kCheckpointHeaderSize, "the CRC is the header's last field");

// The image's CRC: everything but the CRC field, i.e. [0, 44) and then the payload and the commit word.
std::uint32_t image_crc(const unsigned char* image, std::size_t payload_size) {
  const std::uint32_t head = crc32(image, kCrcAt);
  return crc32(image + kCheckpointHeaderSize, payload_size + kCheckpointCommitSize, head);
}

// The commit word holds the sequence number most significant byte first, so that the image's
// last byte is its low byte (see the header's note on torn writes).
std::uint64_t get_commit(const unsigned char* p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < kCheckpointCommitSize; ++i) v = (v << 8) | p[i];
  return v;
}
void put_commit(unsigned char* p, std::uint64_t v) {
  for (std::size_t i = kCheckpointCommitSize; i-- > 0; v >>= 8) p[i] = static_cast<unsigned char>(v);
}

}  // namespace

std::uint32_t crc32(const unsigned char* data, std::size_t size, std::uint32_t crc) {
  if (data == nullptr) return crc;
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    crc = (crc >> 4) ^ kCrcNibble[crc & 15u];
    crc = (crc >> 4) ^ kCrcNibble[crc & 15u];
  }
  return ~crc;
}

namespace detail {

void seal_checkpoint(const CheckpointHeader& h, unsigned char* image) {
  put_le(image, kCheckpointMagic, 4);
  put_le(image + kSequenceAt, h.sequence, 8);
  put_le(image + kVersionAt, h.version, 2);
  image[kSolverAt] = h.solver;
  image[kScalarSizeAt] = h.scalar_size;
  image[kMethodAt] = h.method;
  image[kProblemAt] = h.problem;
  put_le(image + kStatesAt, h.states, 2);
  put_le(image + kActions1At, h.actions1, 2);
  put_le(image + kActions2At, h.actions2, 2);
  put_le(image + kParametersAt, h.parameters, 4);
  put_le(image + kPayloadSizeAt, h.payload_size, 4);
  put_le(image + kDigestAt, h.settings_digest, 4);
  put_le(image + kModelDigestAt, h.model_digest, 4);
  image[kEstimateAt] = h.estimate;
  put_le(image + kReservedAt, h.reserved, 3);
  put_commit(image + kCheckpointHeaderSize + h.payload_size, h.sequence);
  put_le(image + kCrcAt, image_crc(image, h.payload_size), 4);
}

Status read_checkpoint_header(const unsigned char* buffer, std::size_t size, CheckpointHeader& out) {
  constexpr std::size_t frame = kCheckpointHeaderSize + kCheckpointCommitSize;
  if (buffer == nullptr || size < frame || get_le(buffer, 4) != kCheckpointMagic) return Status::checkpoint_corrupt;
  // The payload size is checked against the buffer before it is trusted to find the CRC's end.
  const std::uint64_t payload = get_le(buffer + kPayloadSizeAt, 4);
  if (payload > size - frame) return Status::checkpoint_corrupt;
  const std::size_t payload_size = static_cast<std::size_t>(payload);
  if (image_crc(buffer, payload_size) != get_le(buffer + kCrcAt, 4)) return Status::checkpoint_corrupt;
  const std::uint64_t sequence = get_le(buffer + kSequenceAt, 8);
  if (get_commit(buffer + kCheckpointHeaderSize + payload_size) != sequence ||
      sequence > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return Status::checkpoint_corrupt;
  CheckpointHeader h;
  h.sequence = sequence;
  h.version = static_cast<std::uint16_t>(get_le(buffer + kVersionAt, 2));
  h.solver = buffer[kSolverAt];
  h.scalar_size = buffer[kScalarSizeAt];
  h.method = buffer[kMethodAt];
  h.problem = buffer[kProblemAt];
  h.states = static_cast<std::uint16_t>(get_le(buffer + kStatesAt, 2));
  h.actions1 = static_cast<std::uint16_t>(get_le(buffer + kActions1At, 2));
  h.actions2 = static_cast<std::uint16_t>(get_le(buffer + kActions2At, 2));
  h.parameters = static_cast<std::uint32_t>(get_le(buffer + kParametersAt, 4));
  h.payload_size = static_cast<std::uint32_t>(payload);
  h.settings_digest = static_cast<std::uint32_t>(get_le(buffer + kDigestAt, 4));
  h.model_digest = static_cast<std::uint32_t>(get_le(buffer + kModelDigestAt, 4));
  h.estimate = buffer[kEstimateAt];
  h.reserved = static_cast<std::uint32_t>(get_le(buffer + kReservedAt, 3));
  out = h;
  return Status::ok;
}

Status match_checkpoint_type(const CheckpointHeader& h, const CheckpointHeader& e) {
  const bool same = h.version == e.version && h.solver == e.solver && h.scalar_size == e.scalar_size &&
                    h.method == e.method && h.reserved == e.reserved && h.states == e.states && h.actions1 == e.actions1 &&
                    h.actions2 == e.actions2 && h.parameters == e.parameters && h.payload_size == e.payload_size &&
                    h.estimate == e.estimate;
  if (!same) return Status::checkpoint_mismatch;
  return h.problem == e.problem ? Status::ok : Status::checkpoint_other_problem;
}

}  // namespace detail

}  // namespace pbrl
