// One list per settings struct: each settings struct's visit() names every field (the digest and
// the checkpoint use it), and the checkpoint's settings digest changes when any one field does.
// A field added to a struct but not to its visit() fails here.
#include "support.hpp"

#include "pbrl/baselines/drlhf.hpp"
#include "pbrl/baselines/independent_pg.hpp"
#include "pbrl/baselines/meta_gradient.hpp"
#include "pbrl/checkpoint.hpp"
#include "pbrl/solver/pbrl.hpp"
#include "pbrl/solver/pbrl_zero_sum.hpp"

#include <algorithm>
#include <string>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace {

template <class>
constexpr bool kUnsupported = false;

// Where each visited field lies in the struct.
struct FieldLayout {
  std::size_t offset, size;
};

struct LayoutRecorder {
  const unsigned char* base;
  std::vector<FieldLayout> fields;
  template <class... Fields>
  void operator()(const Fields&... f) {
    (add(f), ...);
  }
  template <class T>
  void add(const T& f) {
    fields.push_back({static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&f) - base), sizeof(T)});
  }
};

// Changes the visited field number `target` of a non-const settings object to another value of
// its type (visit() hands out const references; the object itself is not const).
struct Perturb {
  int target, index = 0;
  template <class... Fields>
  void operator()(const Fields&... f) {
    (one(f), ...);
  }
  template <class T>
  void one(const T& f) {
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
  LayoutRecorder rec{reinterpret_cast<const unsigned char*>(&s), {}};
  s.visit(rec);
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
  LayoutRecorder rec{reinterpret_cast<const unsigned char*>(&base), {}};
  base.visit(rec);
  const std::uint32_t reference = digest(base);
  for (int i = 0; i < static_cast<int>(rec.fields.size()); ++i) {
    CAPTURE(i);
    Settings changed = base;
    Perturb p{i};
    changed.visit(p);
    CHECK(digest(changed) != reference);
  }
}

template <class Settings>
void check(const std::string& name) {
  check_every_field_is_visited<Settings>(name);
  check_digest_sees_every_field<Settings>(name);
}

}  // namespace

TEST_CASE("every settings struct visits every field, and the digest sees each one") {
  check<pbrl::GradientSettings>("GradientSettings");
  check<pbrl::PenaltySolverSettings<Real>>("PenaltySolverSettings");
  check<pbrl::PbrlSettings<Real>>("PbrlSettings");
  check<pbrl::PbrlZeroSumSettings<Real>>("PbrlZeroSumSettings");
  check<pbrl::IndependentPgSettings<Real>>("IndependentPgSettings");
  check<pbrl::MetaGradientSettings<Real>>("MetaGradientSettings");
  check<pbrl::DrlhfSettings<Real>>("DrlhfSettings");
}
