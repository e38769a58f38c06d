// One list per settings struct: each settings struct's visit() names every field with its domain
// (validation, the digest and the checkpoint use it); the checkpoint's settings digest changes when
// any one field does, and validation refuses each field outside its domain. A field added to a
// struct but not to its visit() fails here.
#include "support.hpp"

#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/solver/checkpoint.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

#include <algorithm>
#include <string>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

namespace test_settings {  // one per suite, for unity builds (PBRL_TEST_UNITY, tests/CMakeLists.txt)

namespace {

template <class>
constexpr bool kUnsupported = false;

template <class T>
struct Type {
  using type = T;
};

// Every settings struct, each once: f(Type<Settings>{}, "Settings").
template <class F>
void for_each_settings_struct(F&& f) {
  f(Type<pbrl::GradientSettings>{}, "GradientSettings");
  f(Type<pbrl::PenaltySolverSettings<Real>>{}, "PenaltySolverSettings");
  f(Type<pbrl::PbrlSettings<Real>>{}, "PbrlSettings");
  f(Type<pbrl::PbrlZeroSumSettings<Real>>{}, "PbrlZeroSumSettings");
  f(Type<pbrl::IndependentPgSettings<Real>>{}, "IndependentPgSettings");
  f(Type<pbrl::MetaGradientSettings<Real>>{}, "MetaGradientSettings");
  f(Type<pbrl::DrlhfSettings<Real>>{}, "DrlhfSettings");
}

// Where each visited field lies in the struct.
struct FieldLayout {
  std::size_t offset, size;
};

struct LayoutRecorder {
  const unsigned char* base;
  std::vector<FieldLayout> fields;
  std::vector<pbrl::Domain> domains;
  template <class T>
  void operator()(const T& f, const pbrl::Domain& d, const char* /*name*/) {
    fields.push_back({static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&f) - base), sizeof(T)});
    domains.push_back(d);
  }
};

// Changes the visited field number `target` of a non-const settings object to another value of
// its type (visit() hands out const references; the object itself is not const).
struct Perturb {
  int target, index = 0;
  template <class T>
  void operator()(const T& f, const pbrl::Domain&, const char* /*name*/) {
    if (index++ == target) bump(const_cast<T&>(f));
  }
  template <class T>
  static void bump(T& v) {
    if constexpr (std::is_same<T, bool>::value)
      v = !v;
    else if constexpr (std::is_enum<T>::value)
      v = static_cast<T>(static_cast<std::underlying_type_t<T>>(v) + 1);
    else if constexpr (std::is_integral<T>::value)
      v = static_cast<T>(v + 1);
    else if constexpr (std::is_floating_point<T>::value)
      v = v * T(2) + T(1);
    else
      static_assert(kUnsupported<T>, "a settings field of a type the digest test cannot change");
  }
};

// A Recorder (LayoutRecorder, NameRecorder) of s's base address after s.visit() took it through
// every field.
template <class Recorder, class Settings>
Recorder recorded(const Settings& s) {
  Recorder rec{reinterpret_cast<const unsigned char*>(&s), {}, {}};
  s.visit(rec);
  return rec;
}

template <class Settings>
std::uint32_t digest(const Settings& s) {
  pbrl::detail::SettingsDigest d;
  s.visit(d);
  return d.crc;
}

// Every byte of the struct is a visited field or alignment padding: sorted by offset, the fields
// do not overlap, and each gap, the tail included, is smaller than the struct's alignment (nested
// structs such as PolicySet pad up to their own). A field missing from visit() leaves a gap of at
// least its own size: caught unless it is smaller than the struct's alignment and sits where
// padding would be.
template <class Settings>
void check_every_field_is_visited(const std::string& name) {
  CAPTURE(name);
  const Settings s{};
  const auto rec = recorded<LayoutRecorder>(s);
  auto fields = rec.fields;
  REQUIRE(!fields.empty());
  std::sort(fields.begin(), fields.end(), [](const FieldLayout& a, const FieldLayout& b) { return a.offset < b.offset; });
  std::size_t end = 0;
  for (const FieldLayout& f : fields) {
    CAPTURE(f.offset);
    CHECK(f.offset >= end);                  // no field visited twice
    CHECK(f.offset - end < alignof(Settings));  // no unvisited bytes before it but padding
    end = f.offset + f.size;
  }
  CHECK(sizeof(Settings) - end < alignof(Settings));
}

// Each field changed alone changes the digest.
template <class Settings>
void check_digest_sees_every_field(const std::string& name) {
  CAPTURE(name);
  const Settings base{};
  const auto rec = recorded<LayoutRecorder>(base);
  const std::uint32_t reference = digest(base);
  for (int i = 0; i < static_cast<int>(rec.fields.size()); ++i) {
    CAPTURE(i);
    Settings changed = base;
    Perturb p{i};
    changed.visit(p);
    CHECK(digest(changed) != reference);
  }
}

// Sets the visited field number `target` to a value outside its domain; false if every value is
// in it (Domain::any, the policy sets', checked against the action count elsewhere).
struct Violate {
  int target, index = 0;
  bool done = false;
  template <class T>
  void operator()(const T& f, const pbrl::Domain& d, const char* /*name*/) {
    if (index++ != target) return;
    T& v = const_cast<T&>(f);
    using K = pbrl::Domain::Kind;
    if constexpr (std::is_floating_point<T>::value) {
      switch (d.kind) {
        case K::step_size:
        case K::positive: v = T(0); done = true; break;
        case K::non_negative: v = T(-1); done = true; break;
        case K::above_one: v = T(1); done = true; break;
        case K::unit: v = T(1.5); done = true; break;
        case K::unit_above_zero: v = T(0); done = true; break;
        default: break;
      }
    } else if constexpr (std::is_enum<T>::value || (std::is_integral<T>::value && !std::is_same<T, bool>::value)) {
      if (d.kind == K::range) {
        v = static_cast<T>(d.hi < std::numeric_limits<int>::max() ? d.hi + 1 : d.lo - 1);
        done = true;
      }
    }
  }
};

// Each field with a domain, set alone outside it (in a mode where it is used), is refused, with
// bad_step_size for step sizes and bad_setting otherwise; the valid base passes. `unconstrained`
// counts the fields every value of which is valid (or which the policy set's check owns): a field
// whose domain is dropped to any() changes it.
template <class Settings, class Validate>
void check_validation_sees_every_field(const std::string& name, const Settings& base, int unconstrained,
                                       Validate validate) {
  CAPTURE(name);
  REQUIRE(validate(base) == pbrl::Status::ok);
  const auto rec = recorded<LayoutRecorder>(base);
  int checked = 0;
  for (int i = 0; i < static_cast<int>(rec.fields.size()); ++i) {
    CAPTURE(i);
    Settings bad = base;
    Violate violate{i};
    bad.visit(violate);
    if (!violate.done) {
      --unconstrained;
      continue;
    }
    ++checked;
    CHECK(rec.domains[static_cast<std::size_t>(i)].active);
    const pbrl::Status expected = rec.domains[static_cast<std::size_t>(i)].kind == pbrl::Domain::Kind::step_size
                                      ? pbrl::Status::bad_step_size
                                      : pbrl::Status::bad_setting;
    CHECK(validate(bad) == expected);
  }
  CHECK(checked > 0);
  CHECK(unconstrained == 0);
}

template <class Settings>
void check(const std::string& name) {
  check_every_field_is_visited<Settings>(name);
  check_digest_sees_every_field<Settings>(name);
}

// Sampled mode (the sampling fields are used) with the policy-gradient oracle it needs.
template <class Settings>
Settings sampled() {
  Settings s{};
  s.gradient = pbrl::GradientMode::sampled;
  return s;
}

// Sampled tolerance mode: every conditional field of the penalty solvers is in use.
template <class Settings>
Settings sampled_tolerance() {
  Settings s = sampled<Settings>();
  s.oracle = pbrl::OracleKind::policy_gradient;
  s.gap_tolerance = Real(0.01);
  return s;
}

}  // namespace

TEST_CASE("every settings struct visits every field, and the digest sees each one") {
  for_each_settings_struct([](auto type, const char* name) { check<typename decltype(type)::type>(name); });
}

TEST_CASE("validation refuses every field outside its domain, through the same visit()") {
  // Unconstrained: common_random_numbers and seed in every struct, learn_incentive, and three
  // fields per policy set.
  auto plain = [](const auto& s) { return pbrl::validate(s); };
  check_validation_sees_every_field("GradientSettings", sampled<pbrl::GradientSettings>(), 2, plain);
  check_validation_sees_every_field("PbrlSettings", sampled_tolerance<pbrl::PbrlSettings<Real>>(), 8,
                                    [](const auto& s) { return pbrl::validate(s, 3); });
  check_validation_sees_every_field("PbrlZeroSumSettings", sampled_tolerance<pbrl::PbrlZeroSumSettings<Real>>(), 8,
                                    plain);
  check_validation_sees_every_field("IndependentPgSettings", sampled<pbrl::IndependentPgSettings<Real>>(), 2, plain);
  check_validation_sees_every_field("MetaGradientSettings", sampled<pbrl::MetaGradientSettings<Real>>(), 6, plain);
  auto drlhf = sampled<pbrl::DrlhfSettings<Real>>();
  drlhf.policy_oracle = pbrl::OracleKind::policy_gradient;
  check_validation_sees_every_field("DrlhfSettings", drlhf, 5, plain);
}

TEST_CASE("a setting unused in the current mode is not checked, and what relates fields still is") {
  pbrl::PbrlSettings<Real> s{};  // fixed mode, exact
  s.lambda_growth = Real(0);     // tolerance mode only
  s.sampling.batch = 0;          // sampled mode only
  CHECK(pbrl::validate(s, 3) == pbrl::Status::ok);
  s = sampled_tolerance<pbrl::PbrlSettings<Real>>();
  s.lambda_max = s.lambda_start / Real(2);
  CHECK(pbrl::validate(s, 3) == pbrl::Status::bad_setting);
  s = sampled_tolerance<pbrl::PbrlSettings<Real>>();
  s.inner_steps_max = s.inner_steps - 1;
  CHECK(pbrl::validate(s, 3) == pbrl::Status::bad_setting);
  s = sampled_tolerance<pbrl::PbrlSettings<Real>>();
  s.oracle = pbrl::OracleKind::policy_mirror_descent;
  CHECK(pbrl::validate(s, 3) == pbrl::Status::bad_setting);
}

namespace {

// A visited field's name: identifiers joined by dots (the member path).
bool member_path(const std::string& name) {
  bool start = true;
  for (char c : name) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (c == '.' && !start) {
      start = true;
    } else if (letter || (digit && !start)) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

// Every enumerator's name reads back as that enumerator; a value outside the table has no name,
// a name outside it no value.
template <class E>
void check_enum_names() {
  constexpr auto table = pbrl::enum_names(E{});
  for (int i = 0; i < table.size; ++i) {
    CAPTURE(i);
    const char* name = pbrl::enum_name(static_cast<E>(i));
    REQUIRE(name != nullptr);
    if (name == nullptr) continue;
    CHECK(member_path(name));
    E back = static_cast<E>(table.size - 1 - i);
    CHECK(pbrl::enum_from_name(name, back));
    CHECK(back == static_cast<E>(i));
  }
  CHECK(pbrl::enum_name(static_cast<E>(table.size)) == nullptr);
  E unchanged = static_cast<E>(0);
  CHECK(!pbrl::enum_from_name("no_such_enumerator", unchanged));
  CHECK(!pbrl::enum_from_name("", unchanged));
  CHECK(unchanged == static_cast<E>(0));
}

struct NameRecorder {
  const unsigned char* base;
  std::vector<std::string> names;
  std::vector<std::size_t> offsets;
  template <class T>
  void operator()(const T& f, const pbrl::Domain& d, const char* name) {
    REQUIRE(name != nullptr);
    if (name == nullptr) return;  // REQUIRE does not leave the test case without exceptions
    names.emplace_back(name);
    offsets.push_back(static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&f) - base));
    CAPTURE(name);
    CHECK(member_path(name));
    // An enum setting accepts [0, hi] (validation) and each of those values has a name.
    if constexpr (std::is_enum<T>::value) {
      if (d.kind == pbrl::Domain::Kind::range) {
        CHECK(d.lo == 0);
        CHECK(pbrl::enum_names(T{}).size == d.hi + 1);
      } else {
        CHECK(d.kind == pbrl::Domain::Kind::policy_set);  // the policy sets' parameterization
      }
      check_enum_names<T>();
    }
  }
  // The name given to the field at `field`'s address (empty if none is).
  template <class T>
  std::string name_of(const T& field) const {
    const auto offset = static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&field) - base);
    for (std::size_t i = 0; i < offsets.size(); ++i)
      if (offsets[i] == offset) return names[i];
    return {};
  }
};

template <class Settings>
NameRecorder check_names(const std::string& type) {
  CAPTURE(type);
  const Settings s{};
  NameRecorder rec = recorded<NameRecorder>(s);
  std::vector<std::string> sorted = rec.names;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  return rec;
}

}  // namespace

TEST_CASE("every visited settings field has a name, its member path, and no two share one") {
  for_each_settings_struct([](auto type, const char* name) { check_names<typename decltype(type)::type>(name); });
  // The names are the member paths (spot checks: a field, a nested field, an enum, a subclass's).
  const pbrl::PbrlSettings<Real> s{};
  NameRecorder rec = recorded<NameRecorder>(s);
  CHECK(rec.name_of(s.step_x) == "step_x");
  CHECK(rec.name_of(s.policy.floor) == "policy.floor");
  CHECK(rec.name_of(s.oracle_policy.logit_bound) == "oracle_policy.logit_bound");
  CHECK(rec.name_of(s.sampling.batch) == "sampling.batch");
  CHECK(rec.name_of(s.oracle) == "oracle");
  CHECK(rec.name_of(s.penalty_kind) == "penalty_kind");
  CHECK(rec.name_of(s.step_y) == "step_y");
}

TEST_CASE("enum name tables read back every enumerator") {
  check_enum_names<pbrl::GradientMode>();
  check_enum_names<pbrl::OracleKind>();
  check_enum_names<pbrl::PenaltyKind>();
  check_enum_names<pbrl::Parameterization>();
  check_enum_names<pbrl::RegularizerKind>();
  CHECK(std::string(pbrl::enum_name(pbrl::OracleKind::soft_value_iteration)) == "soft_value_iteration");
  pbrl::Parameterization p = pbrl::Parameterization::softmax;
  CHECK(pbrl::enum_from_name("direct", p));
  CHECK(p == pbrl::Parameterization::direct);
  static_assert(pbrl::detail::same_text(pbrl::enum_name(pbrl::GradientMode::sampled), "sampled"),
                "names are constants");
}

}  // namespace test_settings
