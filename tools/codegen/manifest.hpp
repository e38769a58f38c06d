#pragma once
// Reading the JSON manifest: parsing (a key given twice is refused, not silently replaced) and a
// reader for one object that refuses missing keys, values of the wrong type and keys it was not
// told about, each with the key's dotted path ("solver.policy.floor").

#include "text.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace codegen {

using Json = nlohmann::json;

// The manifest at `path`; refusals name `path` as given.
Json parse_manifest(const std::string& path);

class ObjectReader {
 public:
  // `value` must be a JSON object; `prefix` is its path ("" at the top, "solver." below).
  ObjectReader(const Json& value, std::string file, std::string prefix);

  // Refuses the first key not in `known` (in the manifest's order).
  void only(const std::vector<std::string>& known, const char* what = "unknown key") const;
  bool has(const std::string& key) const { return object_.contains(key); }
  const Json& at(const std::string& key) const;  // refuses a missing key
  double number(const std::string& key) const;
  std::string text(const std::string& key) const;
  // An integer in [lo, hi].
  std::int64_t integer(const std::string& key, std::int64_t lo, std::int64_t hi) const;
  ObjectReader object(const std::string& key) const;

  std::string path(const std::string& key) const { return prefix_ + key; }
  const std::string& file() const { return file_; }
  const Json& json() const { return object_; }
  [[noreturn]] void refuse_key(const std::string& key, const std::string& what) const {
    refuse(file_, path(key), what);
  }

 private:
  const Json& object_;
  std::string file_, prefix_;
};

}  // namespace codegen
