// pbrl-codegen: reads a model that a numpy user wrote (a JSON manifest naming .npy or .csv
// arrays, README.md), validates all of it as the device will, and writes the C++ headers a
// firmware compiles: <name>_model.hpp (the arrays, in flash) and <name>_pbrl.hpp (the problem,
// its solver, data() and settings()), and the model's C interface: <name>.h, <name>_c_api.cpp and
// the size probe <name>_sizes.cpp (emit_c.cpp).
//
//   pbrl-codegen MANIFEST.json --out DIR [--depfile FILE]
//                                            exit 0: written; 1: refused (one line on stderr,
//                                            nothing written); 2: usage. --depfile: the files
//                                            read, as a make rule (CMake's DEPFILE)
//   pbrl-codegen --settings KIND             the solver settings of KIND, with defaults and domains
#include "emit.hpp"
#include "model.hpp"
#include "settings_io.hpp"

#include <pbrl/estimate/transition_estimate.hpp>
#include <pbrl/solver/pbrl.hpp>
#include <pbrl/solver/pbrl_zero_sum.hpp>

#include <climits>
#include <cmath>
#include <limits>

#include <exception>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace codegen {
namespace {

// The library's verdict on a solver's settings as its init() gives it: the settings' own
// validate, then both policy sets for each action count of the problem.
template <typename Scalar>
pbrl::Status library_validate(const pbrl::PbrlSettings<Scalar>& s, int actions) {
  return pbrl::validate(s, actions);
}
template <typename Scalar>
pbrl::Status library_validate(const pbrl::PbrlZeroSumSettings<Scalar>& s, int /*actions*/) {
  return pbrl::validate(s);
}

template <class Settings>
pbrl::Status validate_for(const Settings& s, const std::vector<int>& actions) {
  for (int a : actions) {
    if (pbrl::Status st = library_validate(s, a); st != pbrl::Status::ok) return st;
    if (pbrl::Status st = pbrl::validate(s.policy, a); st != pbrl::Status::ok) return st;
    if (pbrl::Status st = pbrl::validate(s.oracle_policy, a); st != pbrl::Status::ok) return st;
  }
  return pbrl::Status::ok;
}

// A make-style dependency file (CMake's DEPFILE, Ninja, make): the first output depends on the
// manifest and every array file read; absolute paths, spaces escaped.
std::string depfile_text(const std::filesystem::path& output, const std::vector<std::string>& inputs) {
  auto escaped = [](const std::filesystem::path& p) {
    std::string out;
    for (char c : std::filesystem::absolute(p).lexically_normal().string())
      out += c == ' ' ? std::string("\\ ") : std::string(1, c);
    return out;
  };
  std::string text = escaped(output) + ":";
  for (const std::string& in : inputs) text += " " + escaped(in);
  return text + "\n";
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) refuse(path.string(), "output", "cannot write");
}

// The manifest's "estimate" (docs/estimation.md): the prior's strength, the count type and the
// EstimateSettings, checked as TransitionEstimate::init checks them (the first fault refused with
// its key), as the declarations pbrl_header appends; "" when the model is not estimated.
template <typename Scalar>
std::string estimate_text(const Manifest& m, const Json& root) {
  if (!m.estimated) return "";
  const Json& e = root.at("estimate");
  const ObjectReader reader(e, m.path, "estimate.");
  const double given_strength = reader.number("strength");
  const Scalar strength = static_cast<Scalar>(given_strength);
  const Scalar eps = std::numeric_limits<Scalar>::epsilon();
  if (!std::isfinite(strength) || !(strength >= eps * eps) || !(strength <= Scalar(1) / (eps * eps)))
    reader.refuse_key("strength", number_text(given_strength) + " must be finite and in [eps^2, 1/eps^2] of " +
                                      (m.single ? "float" : "double"));
  using Settings = pbrl::EstimateSettings<Scalar>;
  const Settings s = read_settings<Settings>(&e, m.path, "", "estimate", {"strength", "count"});
  if (pbrl::validate(s) != pbrl::Status::ok) {
    DomainMessage message{m.path, "estimate."};
    s.visit(message);
    refuse(m.path, "estimate", "refused by pbrl::validate");
  }
  const bool whole = m.count == "uint16" || m.count == "uint32";
  if (whole && s.discount < Scalar(1))
    refuse(m.path, "estimate.discount", "integer counts (" + m.count + ") take no discount: use float or double counts");
  const std::int64_t count_max = m.count == "uint16" ? 65535 : INT64_MAX;
  if (s.count_cap > count_max)
    refuse(m.path, "estimate.count_cap", std::to_string(s.count_cap) + " is above the largest " + m.count);
  std::map<std::string, const Json*> values;
  flatten(e, "", values);
  std::set<std::string> given;
  for (const auto& v : values) given.insert(v.first);
  std::string body;
  SettingsWriter writer{body, given};
  s.visit(writer);
  std::string count;
  for (const auto& c : count_types())
    if (c.first == m.count) count = c.second;
  const std::string scalar = m.single ? "float" : "double";
  std::string out = "// The transition model is estimated on the device (manifest \"estimate\"): the manifest's\n";
  out += "// transition array is the prior of the estimate, of the given strength in pseudo-counts per row.\n";
  out += "using Estimated = pbrl::EstimatedModel<Problem, " + count + ">;\n\n";
  out += "inline " + scalar + " estimate_strength() { return " + literal(strength) + "; }\n\n";
  out += "inline pbrl::EstimateSettings<" + scalar + "> estimate_settings() {\n  pbrl::EstimateSettings<" + scalar +
         "> s;\n" + body + "  return s;\n}\n\n";
  return out;
}

template <typename Scalar, class Settings>
int generate(const Manifest& m, const Json& root, const std::string& settings_type, const std::string& out_dir,
             const std::string& depfile) {
  // Cheap checks first: sizes against the limit, then the settings, then the arrays.
  check_ram_limit(m, root);
  std::vector<int> actions;
  for (int i : m.spec->policy_actions) actions.push_back(int(m.sizes[std::size_t(i)]));
  const Json* solver = root.contains("solver") ? &root.at("solver") : nullptr;
  const Settings settings = read_settings<Settings>(solver, m.path);
  auto validate = [&](const Settings& s) { return validate_for(s, actions); };
  check_settings(settings, solver, m.path, validate, actions);
  const std::string estimate = estimate_text<Scalar>(m, root);
  const Model<Scalar> model = load_model<Scalar>(m, root);

  std::map<std::string, const Json*> values;
  if (solver != nullptr) flatten(*solver, "", values);
  std::set<std::string> given;
  for (const auto& v : values) given.insert(v.first);
  const std::string model_text = model_header(model);
  const std::string pbrl_text = pbrl_header(model, settings_type, settings, given, estimate);

  // Everything is checked: now the files.
  const std::filesystem::path dir(out_dir);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) refuse(out_dir, "--out", "cannot create: " + error.message());
  const std::vector<std::pair<std::filesystem::path, std::string>> files = {
      {dir / (m.name + "_model.hpp"), model_text}, {dir / (m.name + "_pbrl.hpp"), pbrl_text},
      {dir / (m.name + ".h"), c_header(m)},        {dir / (m.name + "_c_api.cpp"), c_api_source(m)},
      {dir / (m.name + "_sizes.cpp"), sizes_source(m)}};
  try {
    for (const auto& f : files) write_file(f.first, f.second);
    if (!depfile.empty()) {
      std::vector<std::string> inputs = {m.path};
      for (const auto& a : model.arrays) inputs.push_back(a.file);
      write_file(depfile, depfile_text(files.front().first, inputs));
    }
  } catch (const Refusal&) {
    for (const auto& f : files) std::filesystem::remove(f.first, error);
    throw;
  }

  std::cout << "pbrl-codegen: " << m.name << ": " << m.spec->kind << " in " << (m.single ? "float" : "double");
  for (std::size_t i = 0; i < m.sizes.size(); ++i) std::cout << ", " << m.spec->sizes[i] << " " << m.sizes[i];
  std::cout << "\n";
  for (const auto& f : files) std::cout << "wrote " << f.first.string() << "\n";
  std::cout << "flash bytes of model arrays: " << model.flash_bytes() << " (";
  for (std::size_t i = 0; i < model.arrays.size(); ++i)
    std::cout << (i ? ", " : "") << model.arrays[i].field << " " << model.arrays[i].values.size() * sizeof(Scalar);
  std::cout << ")\n";
  return 0;
}

template <typename Scalar>
int generate(const Manifest& m, const Json& root, const std::string& out_dir, const std::string& depfile) {
  const std::string scalar = m.single ? "float" : "double";
  if (m.spec->zero_sum)
    return generate<Scalar, pbrl::PbrlZeroSumSettings<Scalar>>(m, root, "pbrl::PbrlZeroSumSettings<" + scalar + ">",
                                                               out_dir, depfile);
  return generate<Scalar, pbrl::PbrlSettings<Scalar>>(m, root, "pbrl::PbrlSettings<" + scalar + ">", out_dir, depfile);
}

// --settings KIND: one line per field, `name = default  (what it accepts)`.
struct SettingsLister {
  template <class T>
  void operator()(const T& field, const pbrl::Domain& d, const char* name) {
    std::string value, notes;
    if constexpr (std::is_same<T, bool>::value) {
      value = field ? "true" : "false";
    } else if constexpr (std::is_enum<T>::value) {
      value = pbrl::enum_name(field);
      notes = enumerator_list<T>();
    } else if constexpr (std::is_floating_point<T>::value) {
      value = number_text(field);
    } else {
      value = std::to_string(field);
    }
    if (d.kind == pbrl::Domain::Kind::policy_set || (d.kind != pbrl::Domain::Kind::any && !std::is_enum<T>::value))
      notes += (notes.empty() ? "" : "; ") + domain_text(d);
    if (!d.active) notes += "; not used at the defaults";
    std::cout << name << " = " << value << (notes.empty() ? "" : "  (" + notes + ")") << "\n";
  }
};

int list_settings(const std::string& kind) {
  const KindSpec* spec = find_kind(kind);
  if (spec == nullptr) {
    std::cerr << "pbrl-codegen: no kind '" << kind << "'\n";
    return 2;
  }
  SettingsLister lister;
  if (spec->zero_sum)
    pbrl::PbrlZeroSumSettings<double>{}.visit(lister);
  else
    pbrl::PbrlSettings<double>{}.visit(lister);
  return 0;
}

int usage() {
  std::cerr << "usage: pbrl-codegen MANIFEST.json --out DIR [--depfile FILE]\n"
               "       pbrl-codegen --settings KIND   (KIND: "
            << kind_names() << ")\n";
  return 2;
}

}  // namespace
}  // namespace codegen

int main(int argc, char** argv) {
  using namespace codegen;
  std::string manifest_path, out_dir, depfile;
  if (argc == 3 && std::strcmp(argv[1], "--settings") == 0) return list_settings(argv[2]);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out_dir = argv[++i];
    else if (std::strcmp(argv[i], "--depfile") == 0 && i + 1 < argc)
      depfile = argv[++i];
    else if (manifest_path.empty() && argv[i][0] != '-')
      manifest_path = argv[i];
    else
      return usage();
  }
  if (manifest_path.empty() || out_dir.empty()) return usage();
  try {
    const Json root = parse_manifest(manifest_path);
    const Manifest m = read_manifest(manifest_path, root);
    return m.single ? generate<float>(m, root, out_dir, depfile) : generate<double>(m, root, out_dir, depfile);
  } catch (const Refusal& r) {
    std::cerr << r.line() << "\n";
    return 1;
  } catch (const std::exception& e) {  // not a fault of the model the checks name (out of memory, I/O)
    std::cerr << manifest_path << ": error: " << e.what() << "\n";
    return 1;
  }
}
