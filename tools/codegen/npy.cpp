// The .npy format (numpy's NEP 1): the magic "\x93NUMPY", a major and minor version byte, the
// header length (2 bytes little-endian in version 1, 4 bytes in 2 and 3), then the header, a
// Python dict literal such as {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }, padded
// with spaces to a multiple of 64 bytes and ended by '\n', then the raw data.
#include "array_files.hpp"

#include <cstdint>
#include <cstring>

namespace codegen {

namespace {

// Reads the header dict: string values, True/False and tuples of integers are all numpy writes.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path, const std::string& field)
      : s_(text), path_(path), field_(field) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = string();
      expect(':');
      if (key == "descr") {
        if (!peek('\'') && !peek('"')) bad("descr is a structured dtype; save a plain float array");
        descr = string();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        bad("unexpected header key '" + key + "'");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    if (!have_descr || !have_fortran || !have_shape) bad("header lacks descr, fortran_order or shape");
  }

 private:
  [[noreturn]] void bad(const std::string& what) { refuse(path_, field_, "not a readable .npy file: " + what); }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  bool peek(char c) {
    skip_space();
    return i_ < s_.size() && s_[i_] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(std::string("header: expected '") + c + "' at byte " + std::to_string(i_));
    ++i_;
  }
  std::string string() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) bad("header: expected a quoted key");
    const char quote = s_[i_++];
    const std::size_t end = s_.find(quote, i_);
    if (end == std::string::npos) bad("header: unterminated string");
    std::string out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    for (const char* word : {"True", "False"})
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return word[0] == 'T';
      }
    bad("header: fortran_order is not True or False");
  }
  Shape tuple() {
    Shape shape;
    expect('(');
    while (!peek(')')) {
      skip_space();
      std::size_t digits = 0;
      std::size_t n = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9' && digits < 18) {
        n = n * 10 + std::size_t(s_[i_++] - '0');
        ++digits;
      }
      if (digits == 0) bad("header: shape is not a tuple of sizes");
      shape.push_back(n);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return shape;
  }

  const std::string& s_;
  const std::string& path_;
  const std::string& field_;
  std::size_t i_ = 0;
};

std::uint64_t little_endian(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// One stored element as a double.
double element(const unsigned char* p, char type, int size) {
  const std::uint64_t bits = little_endian(p, size);
  if (type == 'f' && size == 8) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (type == 'f') {
    const auto b32 = static_cast<std::uint32_t>(bits);
    float f;
    std::memcpy(&f, &b32, 4);
    return f;
  }
  if (size == 8) return static_cast<double>(static_cast<std::int64_t>(bits));
  return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits)));
}

}  // namespace

ArrayFile read_npy(const std::string& path, const std::string& field) {
  const std::string bytes = read_file(path, field);
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  auto bad = [&](const std::string& what) { refuse(path, field, "not a readable .npy file: " + what); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) bad("no \\x93NUMPY magic");
  const int major = data[6];
  if (major < 1 || major > 3) bad("format version " + std::to_string(major) + " (1, 2 and 3 are read)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + length_bytes) bad("truncated header");
  const std::size_t header_length = little_endian(data + 8, int(length_bytes));
  const std::size_t data_start = 8 + length_bytes + header_length;
  if (data_start > bytes.size()) bad("truncated header");

  std::string descr;
  bool fortran = false;
  ArrayFile out;
  HeaderParser(bytes.substr(8 + length_bytes, header_length), path, field).parse(descr, fortran, out.shape);

  if (descr.size() == 3 && descr[0] == '>' && (descr[1] == 'f' || descr[1] == 'i'))
    refuse(path, field,
           "dtype '" + descr + "' is big-endian; save it little-endian (a.astype('<" + descr.substr(1) + "'))");
  if (descr != "<f8" && descr != "<f4" && descr != "<i8" && descr != "<i4")
    refuse(path, field, "dtype '" + descr + "' is not read (<f8, <f4, <i8 or <i4)");
  if (fortran) refuse(path, field, "fortran_order is True; save a C-order array (numpy.ascontiguousarray(a))");

  const char type = descr[1];
  const int size = descr[2] - '0';
  const std::size_t count = element_count(out.shape);
  const std::size_t have = bytes.size() - data_start;
  if (count > have / std::size_t(size) || have != count * std::size_t(size))
    bad(std::to_string(have) + " data bytes, shape " + shape_text(out.shape) + " of " + descr + " needs " +
        std::to_string(count) + " x " + std::to_string(size));
  out.values.resize(count);
  for (std::size_t i = 0; i < count; ++i)
    out.values[i] = element(data + data_start + i * std::size_t(size), type, size);
  return out;
}

}  // namespace codegen
