#include "settings_io.hpp"

namespace codegen {

std::string domain_text(const pbrl::Domain& d) {
  using K = pbrl::Domain::Kind;
  switch (d.kind) {
    case K::step_size:
    case K::positive:
      return "must be finite and > 0";
    case K::non_negative:
      return "must be finite and >= 0";
    case K::above_one:
      return "must be finite and > 1";
    case K::unit:
      return "must be in [0, 1]";
    case K::unit_above_zero:
      return "must be in (0, 1]";
    case K::range:
      return "must be in [" + std::to_string(d.lo) + ", " + std::to_string(d.hi) + "]";
    case K::policy_set:
      return "checked for the problem's action counts";
    case K::any:
      break;
  }
  return "is refused";
}

void flatten(const Json& object, const std::string& prefix, std::map<std::string, const Json*>& out) {
  for (const auto& item : object.items()) {
    if (item.value().is_object())
      flatten(item.value(), prefix + item.key() + ".", out);
    else
      out[prefix + item.key()] = &item.value();
  }
}

}  // namespace codegen
