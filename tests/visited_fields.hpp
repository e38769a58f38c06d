#pragma once
// The fields a library struct's visit() lists, for the checks of the doctest suites (support.hpp)
// and the fuzz harnesses: a report's v(field, name, meaning) and a settings struct's
// v(field, domain, name). No doctest here, which the harnesses must not pull, and no heap (the
// Cortex-M4 runs the suites too).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

struct VisitedFields {
  struct Field {
    const char* name;
    std::int64_t integer;  // an integer, an enumerator or a flag
    double number;         // a floating-point field (float widens exactly)
  };
  static constexpr int kCapacity = 64;
  Field fields[kCapacity] = {};
  int count = 0;
  bool overflow = false;  // more fields than kCapacity: the collection is incomplete

  template <class T>
  void add(const T& f, const char* name) {
    if (count == kCapacity) {
      overflow = true;
      return;
    }
    Field& out = fields[count++];
    out = {name, 0, 0.0};
    if constexpr (std::is_floating_point<T>::value) {
      out.number = double(f);
    } else {
      static_assert(std::is_integral<T>::value || std::is_enum<T>::value, "a field of a number type");
      out.integer = static_cast<std::int64_t>(f);
    }
  }
  // A report's v(field, name, meaning).
  template <class T>
  void operator()(const T& f, const char* name, const char*) {
    add(f, name);
  }
  // A settings struct's v(field, domain, name).
  template <class T, class Domain>
  void operator()(const T& f, const Domain&, const char* name) {
    add(f, name);
  }
};

// Whether two numbers are the same to the bit (NaN is its own bits, 0 and -0 differ).
inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The first field a's visit() lists that differs in b (integers unequal, numbers not the same to
// the bit), or null when none does.
template <class T>
const char* first_different_field(const T& a, const T& b) {
  VisitedFields fa, fb;
  a.visit(fa);
  b.visit(fb);
  if (fa.overflow || fb.overflow) return "(more fields than VisitedFields holds)";
  if (fa.count != fb.count) return "(a different number of fields)";
  for (int i = 0; i < fa.count; ++i)
    if (fa.fields[i].integer != fb.fields[i].integer || !same_bits(fa.fields[i].number, fb.fields[i].number))
      return fa.fields[i].name;
  return nullptr;
}

// Whether every field a's visit() lists is the same in b: integers equal, numbers to the bit.
template <class T>
bool same_values(const T& a, const T& b) {
  return first_different_field(a, b) == nullptr;
}

// The first field of the report's visit() whose number is not finite, or null when all are: the
// library's promise for a penalty solver's report returned with ok. (A baseline's may hold a NaN
// by design: DrlhfReport::true_return without a true MDP.)
template <class Report>
const char* non_finite_field(const Report& report) {
  VisitedFields f;
  report.visit(f);
  if (f.overflow) return "(more fields than VisitedFields holds)";
  for (int i = 0; i < f.count; ++i)
    if (!std::isfinite(f.fields[i].number)) return f.fields[i].name;
  return nullptr;
}
