#include "model.hpp"

#include "array_files.hpp"

#include <pbrl/model/mdp.hpp>
#include <pbrl/solver/settings.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>

namespace codegen {

namespace {

// Names the generated code could not use as a namespace (C++17 keywords and alternative tokens),
// and the namespaces the generated headers already use.
bool reserved(const std::string& name) {
  static const char* const words[] = {
      "alignas",   "alignof",  "and",      "and_eq",    "asm",          "auto",          "bitand",
      "bitor",     "bool",     "break",    "case",      "catch",        "char",          "char16_t",
      "char32_t",  "class",    "compl",    "const",     "const_cast",   "constexpr",     "continue",
      "decltype",  "default",  "delete",   "do",        "double",       "dynamic_cast",  "else",
      "enum",      "explicit", "export",   "extern",    "false",        "float",         "for",
      "friend",    "goto",     "if",       "inline",    "int",          "long",          "mutable",
      "namespace", "new",      "noexcept", "not",       "not_eq",       "nullptr",       "operator",
      "or",        "or_eq",    "private",  "protected", "public",       "register",      "reinterpret_cast",
      "return",    "short",    "signed",   "sizeof",    "static",       "static_assert", "static_cast",
      "struct",    "switch",   "template", "this",      "thread_local", "throw",         "true",
      "try",       "typedef",  "typeid",   "typename",  "union",        "unsigned",      "using",
      "virtual",   "void",     "volatile", "wchar_t",   "while",        "xor",           "xor_eq",
      "pbrl",      "std",      "Eigen"};
  for (const char* w : words)
    if (name == w) return true;
  return false;
}

bool identifier(const std::string& name) {
  if (name.empty() || name[0] == '_' || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return name.find("__") == std::string::npos;
}

Shape array_shape(const Manifest& m, const std::vector<int>& dims) {
  Shape shape;
  for (int d : dims) shape.push_back(std::size_t(m.sizes[std::size_t(d)]));
  return shape;
}

std::string file_path(const Manifest& m, const std::string& name) {
  return (std::filesystem::path(m.dir) / name).lexically_normal().string();
}

}  // namespace

Manifest read_manifest(const std::string& path, const Json& root) {
  const ObjectReader top(root, path, "");
  Manifest m;
  m.path = path;
  m.dir = std::filesystem::path(path).parent_path().string();

  // The kind first: it decides which other keys exist.
  const std::string kind = top.text("kind");
  m.spec = find_kind(kind);
  if (m.spec == nullptr) top.refuse_key("kind", "'" + kind + "' is not one of " + kind_names());
  std::vector<std::string> known = {"name", "kind", "scalar", "solver", "ram_limit_bytes", "estimate"};
  for (const char* s : m.spec->sizes) known.push_back(s);
  for (const char* f : m.spec->fields) known.push_back(f);
  top.only(known, ("unknown key for kind " + kind).c_str());

  m.name = top.text("name");
  if (!identifier(m.name) || reserved(m.name))
    top.refuse_key("name", "'" + m.name +
                               "' is not a C identifier the generated namespaces can use (letters, digits and "
                               "single underscores, not leading; not a keyword, pbrl, std or Eigen)");
  const std::string scalar = top.text("scalar");
  if (scalar != "float" && scalar != "double") top.refuse_key("scalar", "'" + scalar + "' is not float or double");
  m.single = scalar == "float";

  // At least two of each (check_sizes, config.hpp); below 65536, the checkpoint's type tag.
  for (const char* s : m.spec->sizes) m.sizes.push_back(top.integer(s, 2, 65535));
  // The library indexes arrays with int.
  for (const ArraySpec& a : m.spec->arrays) {
    const Shape shape = array_shape(m, a.dims);
    if (element_count(shape) > std::size_t(INT_MAX))
      top.refuse_key(m.spec->sizes[0], "the " + std::string(a.field) + " array " + shape_text(shape) +
                                           " has more entries than an int counts");
  }
  if (top.has("ram_limit_bytes")) m.ram_limit_bytes = top.integer("ram_limit_bytes", 1, INT64_MAX);
  if (top.has("estimate")) {
    const ObjectReader estimate = top.object("estimate");
    m.estimated = true;
    if (estimate.has("count")) {
      m.count = estimate.text("count");
      bool known_count = false;
      std::string names;
      for (const auto& c : count_types()) {
        known_count = known_count || c.first == m.count;
        names += (names.empty() ? "" : ", ") + c.first;
      }
      if (!known_count) estimate.refuse_key("count", "'" + m.count + "' is not one of " + names);
    }
  }
  return m;
}

const std::vector<std::pair<std::string, std::string>>& count_types() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"float", "float"}, {"double", "double"}, {"uint16", "std::uint16_t"}, {"uint32", "std::uint32_t"}};
  return table;
}

void check_ram_limit(const Manifest& m, const Json& root) {
  if (m.ram_limit_bytes < 0) return;
  const ObjectReader top(root, m.path, "");
  const long long scalar = m.single ? 4 : 8;
  long long flash = 0;
  for (const ArraySpec& a : m.spec->arrays)
    if (!a.optional() || top.has(a.field))
      flash += scalar * static_cast<long long>(element_count(array_shape(m, a.dims)));
  for (const RegularizerSpec& r : m.spec->regularizers)
    if (top.has(r.field) && top.at(r.field).is_object() && top.at(r.field).contains("reference"))
      flash += scalar * m.sizes[0] * m.sizes[std::size_t(r.actions)];
  long long solver = scalar * m.spec->solver_scalars(m.sizes);
  if (m.estimated) {  // two RAM transition arrays, the counts and each row's totals and stamps
    long long rows = 0;
    for (const ArraySpec& a : m.spec->arrays)
      if (std::string(a.field) == "transition")
        rows = static_cast<long long>(element_count(array_shape(m, a.dims))) / m.sizes[0];
    const long long count = m.count == "double" ? 8 : m.count == "uint16" ? 2 : 4;
    solver += 2 * scalar * rows * m.sizes[0] + count * rows * m.sizes[0] + rows * (count + 16);
  }
  if (flash + solver > m.ram_limit_bytes)
    top.refuse_key("ram_limit_bytes", std::to_string(flash) + " bytes of model arrays + at least " +
                                          std::to_string(solver) + " bytes of solver state = " +
                                          std::to_string(flash + solver) + " > " + std::to_string(m.ram_limit_bytes));
}

template <typename Scalar>
std::string ModelArray<Scalar>::constant() const {
  return "k" + camel(field);
}

template <typename Scalar>
const ModelArray<Scalar>* Model<Scalar>::array(const std::string& field) const {
  for (const auto& a : arrays)
    if (a.field == field) return &a;
  return nullptr;
}

template <typename Scalar>
std::size_t Model<Scalar>::flash_bytes() const {
  std::size_t bytes = 0;
  for (const auto& a : arrays) bytes += a.values.size() * sizeof(Scalar);
  return bytes;
}

namespace {

template <typename Scalar>
std::string scalar_name() {
  return sizeof(Scalar) == 4 ? "float" : "double";
}

// Every entry finite once rounded to Scalar (pbrl::detail::all_finite decides).
template <typename Scalar>
void check_finite(const ModelArray<Scalar>& a, const std::vector<double>& source) {
  if (pbrl::detail::all_finite(a.values.data(), int(a.values.size()))) return;
  for (std::size_t i = 0; i < a.values.size(); ++i)
    if (!std::isfinite(a.values[i]))
      refuse(a.file, a.field + index_text(a.shape, i),
             number_text(source[i]) +
                 (std::isfinite(source[i]) ? " does not fit in " + scalar_name<Scalar>() : " is not finite"));
}

enum class RowCheck { transition, initial, reference };

// Distribution rows, with the library's check of each kind: the verdict on the whole array is
// the library's; on a refusal the failing row is found by running the same check row by row.
template <typename Scalar>
void check_rows(const ModelArray<Scalar>& a, RowCheck kind) {
  const int cols = int(a.shape.back());
  const int rows = int(a.values.size()) / cols;
  auto check = [&](const Scalar* p, int n) {
    switch (kind) {
      case RowCheck::transition:
        return pbrl::detail::check_transition_rows(p, n, cols);
      case RowCheck::initial:
        return pbrl::detail::check_initial(p, cols);
      case RowCheck::reference:
        return pbrl::detail::check_reference_rows(p, n, cols);
    }
    return pbrl::Status::bad_setting;
  };
  if (check(a.values.data(), rows) == pbrl::Status::ok) return;
  const bool positive = kind != RowCheck::transition;
  for (int r = 0; r < rows; ++r) {
    const Scalar* row = a.values.data() + std::size_t(r) * std::size_t(cols);
    if (check(row, 1) == pbrl::Status::ok) continue;
    const std::size_t start = std::size_t(r) * std::size_t(cols);
    for (int c = 0; c < cols; ++c) {
      if (positive ? !(row[c] > Scalar(0)) : row[c] < Scalar(0))
        refuse(a.file, a.field + index_text(a.shape, start + std::size_t(c)),
               number_text(row[c]) + (positive ? " is not > 0 (the library needs every entry positive)"
                                               : " is negative (a probability)"));
    }
    Scalar sum(0);  // in the library's order
    for (int c = 0; c < cols; ++c) sum += row[c];
    refuse(a.file, a.field + index_text(a.shape, start, true),
           std::string(a.shape.size() == 1 ? "sums" : "row sums") + " to " + number_text(sum) + ", not 1 within " +
               number_text(pbrl::distribution_tolerance<Scalar>(cols)));
  }
  refuse(a.file, a.field, "refused by the library's check");  // a row-wise check that passes row by row
}

template <typename Scalar>
ModelArray<Scalar> load_array(const Manifest& m, const ObjectReader& owner, const std::string& key,
                              const std::string& field, const std::vector<int>& dims) {
  ModelArray<Scalar> a;
  a.field = field;
  a.name = owner.text(key);
  a.file = file_path(m, a.name);
  a.shape = array_shape(m, dims);
  for (int d : dims) a.axes.push_back(m.spec->sizes[std::size_t(d)]);
  const ArrayFile source = read_array(a.file, field, a.shape, shape_names(*m.spec, dims));
  a.values.reserve(source.values.size());
  for (double v : source.values) a.values.push_back(static_cast<Scalar>(v));
  check_finite(a, source.values);
  return a;
}

template <typename Scalar>
void check_box(const ObjectReader& top, const char* field, pbrl::Box<Scalar>& box) {
  const ObjectReader b = top.object(field);
  b.only({"lower", "upper"});
  box = {static_cast<Scalar>(b.number("lower")), static_cast<Scalar>(b.number("upper"))};
  if (pbrl::valid(box)) return;
  if (!std::isfinite(box.lower)) b.refuse_key("lower", "must be finite in " + scalar_name<Scalar>());
  if (!std::isfinite(box.upper)) b.refuse_key("upper", "must be finite in " + scalar_name<Scalar>());
  top.refuse_key(field, "lower " + number_text(box.lower) + " > upper " + number_text(box.upper));
}

}  // namespace

template <typename Scalar>
Model<Scalar> load_model(const Manifest& m, const Json& root) {
  const ObjectReader top(root, m.path, "");
  Model<Scalar> model;
  model.manifest = m;
  const KindSpec& spec = *m.spec;

  // Scalars first: they are in the manifest itself.
  model.discount = static_cast<Scalar>(top.number("discount"));
  if (pbrl::validate_discount(model.discount) != pbrl::Status::ok)
    top.refuse_key("discount", number_text(model.discount) + " is outside [0, 1)");

  std::vector<std::string> reference_files;
  for (const RegularizerSpec& rs : spec.regularizers) {
    const ObjectReader r = top.object(rs.field);
    r.only({"kind", "tau", "reference"});
    ModelRegularizer<Scalar> reg;
    reg.spec = &rs;
    const std::string kind = r.text("kind");
    if (!pbrl::enum_from_name(kind.c_str(), reg.kind))
      r.refuse_key("kind", "'" + kind + "' is not entropy or kl_reference");
    reg.tau = static_cast<Scalar>(r.number("tau"));
    if (pbrl::detail::check_tau(reg.tau) != pbrl::Status::ok)
      r.refuse_key("tau", number_text(reg.tau) + " must be finite and >= 0");
    if (reg.kind == pbrl::RegularizerKind::kl_reference && !r.has("reference"))
      r.refuse_key("reference", "missing (kind kl_reference needs a reference policy)");
    if (reg.kind != pbrl::RegularizerKind::kl_reference && r.has("reference"))
      r.refuse_key("reference", "given, but only kind kl_reference uses one");
    model.regularizers.push_back(reg);
  }
  if (spec.same_tau && model.regularizers.size() == 2 && model.regularizers[0].tau != model.regularizers[1].tau)
    top.refuse_key(std::string(spec.regularizers[1].field) + ".tau",
                   number_text(model.regularizers[1].tau) + " differs from " + spec.regularizers[0].field + ".tau " +
                       number_text(model.regularizers[0].tau) + " (the game has one tau)");
  if (spec.box) check_box(top, spec.box, model.box);
  for (const ScalarSpec& ss : spec.scalars) {
    ModelScalar<Scalar> s;
    s.spec = &ss;
    s.library_default = ss.need == InManifest::optional && !top.has(ss.field);
    s.value = s.library_default ? ss.library_default<Scalar>() : static_cast<Scalar>(top.number(ss.field));
    switch (ss.check) {
      case ScalarCheck::positive:
        if (!pbrl::domain::positive().admits(s.value))
          top.refuse_key(ss.field, number_text(s.value) + " must be finite and > 0");
        break;
      case ScalarCheck::finite:
        if (!std::isfinite(s.value)) top.refuse_key(ss.field, "must be finite in " + scalar_name<Scalar>());
        break;
    }
    model.scalars.push_back(s);
  }

  // Then the arrays, file by file.
  for (const ArraySpec& as : spec.arrays) {
    if (as.optional() && !top.has(as.field)) continue;
    model.arrays.push_back(load_array<Scalar>(m, top, as.field, as.field, as.dims));
    if (as.rows == pbrl::layout::Rows::transition) check_rows(model.arrays.back(), RowCheck::transition);
    if (as.rows == pbrl::layout::Rows::initial) check_rows(model.arrays.back(), RowCheck::initial);
  }
  for (auto& reg : model.regularizers) {
    if (reg.kind != pbrl::RegularizerKind::kl_reference) continue;
    const ObjectReader r = top.object(reg.spec->field);
    model.arrays.push_back(
        load_array<Scalar>(m, r, "reference", std::string(reg.spec->field) + ".reference", {0, reg.spec->actions}));
    check_rows(model.arrays.back(), RowCheck::reference);
    reg.reference = int(model.arrays.size()) - 1;
  }
  return model;
}

template struct ModelArray<float>;
template struct ModelArray<double>;
template struct Model<float>;
template struct Model<double>;
template Model<float> load_model<float>(const Manifest&, const Json&);
template Model<double> load_model<double>(const Manifest&, const Json&);

}  // namespace codegen
