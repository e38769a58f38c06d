#pragma once
// Refusals and the text they are written in. Every check of the tool throws a Refusal; main()
// prints its one line `FILE: FIELD[INDEX]: what is wrong` and exits with status 1, and since all
// checks run before the first output file is opened, a refused model leaves nothing behind.

#include <cstddef>
#include <string>
#include <vector>

namespace codegen {

struct Refusal {
  std::string file;   // the manifest or an array file, as the user would open it
  std::string field;  // manifest key or Data member, dotted, with an index where one applies
  std::string what;
  std::string line() const { return file + ": " + field + ": " + what; }
};

[[noreturn]] inline void refuse(const std::string& file, const std::string& field, const std::string& what) {
  throw Refusal{file, field, what};
}

using Shape = std::vector<std::size_t>;

// The product of the sizes; SIZE_MAX if it does not fit.
std::size_t element_count(const Shape& shape);
// "(3, 2, 2)", numpy's spelling (one axis: "(3,)").
std::string shape_text(const Shape& shape);
// "[3,1,2]": the C-order index of flat entry `flat`; with whole_row the last axis is ":" (the row
// that holds `flat`).
std::string index_text(const Shape& shape, std::size_t flat, bool whole_row = false);
// The shortest decimal that reads back as exactly v in its own type (messages only; generated
// literals use literal() in emit.cpp, which follows examples/firmware/generate_model.cpp).
std::string number_text(double v);
std::string number_text(float v);
// "designer_reward" -> "DesignerReward" (the generated constants' names: kDesignerReward).
std::string camel(const std::string& snake);

}  // namespace codegen
