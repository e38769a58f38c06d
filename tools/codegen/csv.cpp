// CSV arrays, and the dispatch by file extension. A CSV has no shape of its own: the manifest's
// sizes give it, and the numbers are read flat in C order, so any line layout works (savetxt of
// a.reshape(-1, S) writes one transition row per line).
#include "array_files.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace codegen {

std::string read_file(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(path, field, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) refuse(path, field, "read error");
  return bytes.str();
}

namespace {

std::string trim(const std::string& s) {
  const char* space = " \t\r";
  const std::size_t b = s.find_first_not_of(space);
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(space) - b + 1);
}

}  // namespace

ArrayFile read_csv(const std::string& path, const std::string& field, const Shape& shape) {
  std::istringstream text(read_file(path, field));
  ArrayFile out{shape, {}};
  const std::size_t count = element_count(shape);
  std::string line;
  for (int line_number = 1; std::getline(text, line); ++line_number) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    std::istringstream fields(line);
    std::string item;
    for (int column = 1; std::getline(fields, item, ','); ++column) {
      const std::string number = trim(item);
      char* end = nullptr;
      const double v = number.empty() ? 0.0 : std::strtod(number.c_str(), &end);
      if (number.empty() || *end != '\0') {
        const std::string at = out.values.size() < count ? index_text(shape, out.values.size()) : "";
        refuse(path, field + at,
               "'" + number + "' is not a number (line " + std::to_string(line_number) + ", field " +
                   std::to_string(column) + ")");
      }
      out.values.push_back(v);
    }
  }
  if (out.values.size() != count)
    refuse(
        path, field,
        std::to_string(out.values.size()) + " numbers, shape " + shape_text(shape) + " needs " + std::to_string(count));
  return out;
}

ArrayFile read_array(const std::string& path, const std::string& field, const Shape& shape,
                     const std::string& shape_names) {
  auto ends_with = [&](const char* suffix) {
    const std::size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  if (ends_with(".csv")) return read_csv(path, field, shape);
  if (!ends_with(".npy")) refuse(path, field, "not a .npy or .csv file name");
  ArrayFile a = read_npy(path, field);
  if (a.shape != shape)
    refuse(path, field, "shape " + shape_text(a.shape) + ", expected " + shape_text(shape) + " = " + shape_names);
  return a;
}

}  // namespace codegen
