#include "text.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace codegen {

std::size_t element_count(const Shape& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) {
    if (d != 0 && n > SIZE_MAX / d) return SIZE_MAX;  // a header's shape can be anything
    n *= d;
  }
  return n;
}

std::string shape_text(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string index_text(const Shape& shape, std::size_t flat, bool whole_row) {
  std::vector<std::size_t> index(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i) s += ",";
    s += whole_row && i + 1 == index.size() ? std::string(":") : std::to_string(index[i]);
  }
  return s + "]";
}

std::string camel(const std::string& snake) {
  std::string out;
  bool upper = true;
  for (char c : snake) {
    if (c == '_' || c == '.') {
      upper = true;
    } else {
      out += upper && c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c;
      upper = false;
    }
  }
  return out;
}

namespace {

template <typename T>
T parse(const char* text);
template <>
double parse<double>(const char* text) {
  return std::strtod(text, nullptr);
}
template <>
float parse<float>(const char* text) {
  return std::strtof(text, nullptr);
}

template <typename T>
std::string shortest(T v, int max_digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  int digits = 1;
  for (;; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
    if (digits >= max_digits || parse<T>(buf) == v) break;
  }
  // 50, not 5e+01: whole numbers of up to 16 digits without an exponent.
  for (; std::strchr(buf, 'e') && std::abs(v) >= T(1) && std::abs(v) < T(1e16) && digits < 17; ++digits)
    std::snprintf(buf, sizeof buf, "%.*g", digits + 1, static_cast<double>(v));
  return buf;
}

}  // namespace

std::string number_text(double v) { return shortest(v, 17); }
std::string number_text(float v) { return shortest(v, 9); }

}  // namespace codegen
