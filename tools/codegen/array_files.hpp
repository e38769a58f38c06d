#pragma once
// The model's array files: .npy (what numpy.save writes) and .csv (what numpy.savetxt writes with
// delimiter=","). Both give numbers in C order, as doubles; the caller rounds them to the model's
// scalar. A file that cannot be read as the array asked for is refused (text.hpp), naming the
// file and the manifest field.

#include "text.hpp"

#include <string>
#include <vector>

namespace codegen {

struct ArrayFile {
  Shape shape;                 // as stored (.npy) or as asked for (.csv)
  std::vector<double> values;  // C order: the last axis varies fastest
};

// A .npy file: format version 1.0, 2.0 or 3.0, dtype <f8, <f4, <i8 or <i4 (integers converted
// to double), C order. Big-endian data and fortran_order True are refused with what to do instead.
ArrayFile read_npy(const std::string& path, const std::string& field);

// A CSV file: numbers separated by commas, any number per line, lines starting with '#' skipped
// (savetxt's header); exactly element_count(shape) numbers in all, read flat in C order.
ArrayFile read_csv(const std::string& path, const std::string& field, const Shape& shape);

// By the file's extension (.npy or .csv); the result has exactly `shape` or is refused.
ArrayFile read_array(const std::string& path, const std::string& field, const Shape& shape,
                     const std::string& shape_names);

// The whole file, or a refusal that says why it could not be opened.
std::string read_file(const std::string& path, const std::string& field);

}  // namespace codegen
