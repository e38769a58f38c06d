#pragma once
// A step report's fields as its visit() lists them, for the checks of the doctest suites
// (support.hpp's same_report) and the fuzz harnesses: no doctest here, which the harnesses must not
// pull, and no heap (the Cortex-M4 runs the suites too).
#include <cmath>
#include <cstdint>

struct ReportFields {
  struct Field {
    const char* name;
    std::int64_t integer;  // an integer or a flag
    double number;         // a Scalar (float widens exactly)
  };
  static constexpr int kCapacity = 64;
  Field fields[kCapacity] = {};
  int count = 0;
  bool overflow = false;  // more fields than kCapacity: the collection is incomplete

  void add(const char* name, std::int64_t integer, double number) {
    if (count == kCapacity) {
      overflow = true;
      return;
    }
    fields[count++] = {name, integer, number};
  }
  void operator()(const std::int64_t& f, const char* name, const char*) { add(name, f, 0.0); }
  void operator()(const bool& f, const char* name, const char*) { add(name, f ? 1 : 0, 0.0); }
  void operator()(const float& f, const char* name, const char*) { add(name, 0, f); }
  void operator()(const double& f, const char* name, const char*) { add(name, 0, f); }
};

// The first field of the report's visit() whose number is not finite, or null when all are (the
// library's promise for a report returned with ok; a penalty solver's report, whose every field is
// a value: DrlhfReport::true_return is NaN by design without a true MDP).
template <class Report>
const char* non_finite_field(const Report& report) {
  ReportFields f;
  report.visit(f);
  if (f.overflow) return "(more fields than ReportFields holds)";
  for (int i = 0; i < f.count; ++i)
    if (!std::isfinite(f.fields[i].number)) return f.fields[i].name;
  return nullptr;
}
