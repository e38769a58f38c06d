#pragma once
// The generated headers, as text: <name>_model.hpp (the arrays as constexpr data, which stays
// in flash, with the sizes and scalars as constants) and <name>_pbrl.hpp (the Problem and Solver
// types, data() and settings()). Literals read back exactly: 9 significant digits for float, 17
// for double, as examples/firmware/generate_model.cpp writes them.

#include "model.hpp"
#include "settings_io.hpp"

#include <set>
#include <string>
#include <vector>

namespace codegen {

std::string literal(float v);
std::string literal(double v);

// "((i0*actions1 + i1)*actions2 + i2)*states + i3": where entry [i0, i1, i2, i3] of an array with
// these axes sits in its flat layout.
std::string layout(const std::vector<std::string>& axes);
// "actions1, actions2, states": the axes' names, comma-separated.
std::string axis_list(const std::vector<std::string>& axes);

// The C interface of the manifest's model (include/pbrl/c/detail/c_api.hpp runs it): <name>.h, the C
// declarations; <name>_c_api.cpp, their definitions; <name>_sizes.cpp, the probe from which the
// build measures the target's workspace size and alignment into <name>_sizes.h, which <name>.h
// includes (cmake/PbrlCApi.cmake). They depend on the manifest's name, kind, scalar and sizes only.
std::string c_header(const Manifest& m);
std::string c_api_source(const Manifest& m);
std::string sizes_source(const Manifest& m);

template <typename Scalar>
std::string model_header(const Model<Scalar>& model);

// Everything of pbrl_header but settings(), whose body is `settings_body`; `estimate`: the
// estimated model's declarations (Estimated, estimate_strength(), estimate_settings()), or "".
template <typename Scalar>
std::string pbrl_header(const Model<Scalar>& model, const std::string& settings_type, const std::string& settings_body,
                        const std::string& estimate = "");

// One assignment per settings field, in visit() order; fields the manifest does not set are
// written too (at the library's default), so the header says every setting the device runs.
struct SettingsWriter {
  std::string& out;
  const std::set<std::string>& given;

  template <class T>
  void operator()(const T& field, const pbrl::Domain&, const char* name) {
    std::string value;
    if constexpr (std::is_same<T, bool>::value)
      value = field ? "true" : "false";
    else if constexpr (std::is_enum<T>::value)
      value = "decltype(s." + std::string(name) + ")::" + pbrl::enum_name(field);
    else if constexpr (std::is_floating_point<T>::value)
      value = literal(field);
    else if constexpr (std::is_unsigned<T>::value)
      value = std::to_string(field) + "u";
    else
      value = std::to_string(field);
    out += "  s." + std::string(name) + " = " + value + ";" + (given.count(name) ? "\n" : "  // default\n");
  }
};

template <typename Scalar, class Settings>
std::string pbrl_header(const Model<Scalar>& model, const std::string& settings_type, const Settings& settings,
                        const std::set<std::string>& given, const std::string& estimate = "") {
  std::string body;
  SettingsWriter writer{body, given};
  settings.visit(writer);
  return pbrl_header(model, settings_type, body, estimate);
}

}  // namespace codegen
