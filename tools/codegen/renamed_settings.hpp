#pragma once
// Settings names that settings files (a manifest's "solver" object, bench/tolerance.cpp's --set)
// no longer accept, each with the name of the same field in the library's visit() lists
// (include/pbrl/solver/settings.hpp, solver/pbrl.hpp). A reader refuses an old name with
// renamed_message(), which names both, instead of calling it unknown. Header-only, no
// dependencies: the bench includes it too.

#include <string>

namespace codegen {

struct RenamedSetting {
  const char* old_name;
  const char* new_name;
};

inline constexpr RenamedSetting kRenamedSettings[] = {
    {"penalty_start", "lambda_start"},
    {"penalty_final", "lambda_final"},
    {"penalty_ramp", "lambda_ramp"},
    {"penalty_max", "lambda_max"},
    {"penalty_growth", "lambda_growth"},
    {"penalty_patience", "lambda_patience"},
    {"penalty_stall", "lambda_stall"},
    {"penalty_backoff", "lambda_backoff"},
    {"penalty_step_limit", "lambda_step_limit"},
    {"penalty", "penalty_kind"},
};

// The field's name now, if `name` is an old one; else null.
inline const char* renamed_setting(const std::string& name) {
  for (const RenamedSetting& r : kRenamedSettings)
    if (name == r.old_name) return r.new_name;
  return nullptr;
}

// setting "OLD" was renamed "NEW"
inline std::string renamed_message(const std::string& old_name, const char* new_name) {
  return "setting \"" + old_name + "\" was renamed \"" + new_name + "\"";
}

}  // namespace codegen
