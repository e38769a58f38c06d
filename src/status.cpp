#include "pbrl/core/status.hpp"

namespace pbrl {

const char* to_string(Status status) noexcept {
  // static: the names stay in flash (enum_name's local table would be copied to the stack).
  static constexpr EnumNames<Status, kStatusCount> kNames = enum_names(Status{});
  const unsigned i = static_cast<unsigned>(status);
  return i < unsigned(kStatusCount) ? kNames.names[i] : "unknown";
}

}  // namespace pbrl
