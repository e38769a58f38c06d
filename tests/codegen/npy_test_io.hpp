#pragma once
// A .npy writer and reader for the codegen tests, written apart from the tool's reader so the
// tests do not check the tool against itself. The writer can write what numpy writes (format 1.0,
// 2.0 or 3.0, any descr and fortran_order) and the reader only what the committed models hold
// (format 1.0, little-endian data after the header).

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace npy_test {

// The raw little-endian bytes of values stored as T (float, double, int32_t, int64_t).
template <typename T>
std::string bytes_of(const std::vector<double>& values) {
  std::string out;
  for (double v : values) {
    const T t = static_cast<T>(v);
    unsigned char b[sizeof(T)];
    std::memcpy(b, &t, sizeof(T));  // the hosts the tests run on are little-endian
    out.append(reinterpret_cast<const char*>(b), sizeof(T));
  }
  return out;
}

// A whole .npy file: header dict {'descr': descr, 'fortran_order': ..., 'shape': shape} padded
// to a multiple of 64 bytes as numpy pads it, then `data`.
inline std::string npy_file(const std::string& descr, const std::vector<int>& shape, const std::string& data,
                            int major = 1, bool fortran = false) {
  std::string tuple = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) tuple += (i ? ", " : "") + std::to_string(shape[i]);
  tuple += shape.size() == 1 ? ",)" : ")";
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + tuple + ", }";
  const std::size_t prefix = 6 + 2 + (major == 1 ? 2 : 4);
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  const std::size_t n = dict.size();
  out += char(n & 0xFF);
  out += char((n >> 8) & 0xFF);
  if (major != 1) {
    out += char((n >> 16) & 0xFF);
    out += char((n >> 24) & 0xFF);
  }
  return out + dict + data;
}

inline bool write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return static_cast<bool>(out);
}

// The data of a format-1.0 .npy file of Ts, as Ts (empty if the file cannot be read).
template <typename T>
std::vector<T> read_data(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes[6] != 1) return {};
  const std::size_t start =
      10 + (std::size_t(static_cast<unsigned char>(bytes[8])) | std::size_t(static_cast<unsigned char>(bytes[9])) << 8);
  std::vector<T> out((bytes.size() - start) / sizeof(T));
  std::memcpy(out.data(), bytes.data() + start, out.size() * sizeof(T));
  return out;
}

}  // namespace npy_test
