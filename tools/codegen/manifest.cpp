#include "manifest.hpp"

#include "array_files.hpp"

#include <set>

namespace codegen {

Json parse_manifest(const std::string& path) {
  const std::string text = read_file(path, "manifest");
  // nlohmann keeps the last of two equal keys; the callback sees each key as it is parsed.
  std::vector<std::set<std::string>> keys;  // keys seen in each open object
  std::vector<std::string> names;           // the open objects' keys, for the dotted path
  std::string last_key;
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      keys.emplace_back();
      names.push_back(last_key);
    } else if (event == Json::parse_event_t::object_end) {
      keys.pop_back();
      names.pop_back();
    } else if (event == Json::parse_event_t::key) {
      last_key = parsed.get<std::string>();
      if (!keys.back().insert(last_key).second) {
        std::string field;
        for (std::size_t i = 1; i < names.size(); ++i) field += names[i] + ".";
        refuse(path, field + last_key, "given twice");
      }
    }
    return true;
  };
  try {
    Json manifest = Json::parse(text, callback);
    if (!manifest.is_object()) refuse(path, "manifest", "is not a JSON object");
    return manifest;
  } catch (const Json::exception& e) {
    // A syntax error or a number out of double's range; e.what() is "[json.exception.parse_error.101]
    // parse error at line L, column C: ...".
    std::string what = e.what();
    const std::size_t start = what.find("] ");
    refuse(path, "json", start == std::string::npos ? what : what.substr(start + 2));
  }
}

ObjectReader::ObjectReader(const Json& value, std::string file, std::string prefix)
    : object_(value), file_(std::move(file)), prefix_(std::move(prefix)) {}

void ObjectReader::only(const std::vector<std::string>& known, const char* what) const {
  for (const auto& item : object_.items()) {
    bool found = false;
    for (const auto& k : known) found = found || k == item.key();
    if (!found) refuse_key(item.key(), what);
  }
}

const Json& ObjectReader::at(const std::string& key) const {
  if (!object_.contains(key)) refuse_key(key, "missing");
  return object_.at(key);
}

double ObjectReader::number(const std::string& key) const {
  const Json& v = at(key);
  if (!v.is_number()) refuse_key(key, "must be a number");
  return v.get<double>();
}

std::string ObjectReader::text(const std::string& key) const {
  const Json& v = at(key);
  if (!v.is_string()) refuse_key(key, "must be a string");
  return v.get<std::string>();
}

std::int64_t ObjectReader::integer(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  const Json& v = at(key);
  const std::string range = "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_number_integer()) refuse_key(key, range);
  // Non-negative integers parse as unsigned, which may not fit int64.
  if (v.is_number_unsigned() ? v.get<std::uint64_t>() > std::uint64_t(hi)
                             : v.get<std::int64_t>() > hi || v.get<std::int64_t>() < lo)
    refuse_key(key, v.dump() + " " + range);
  if (v.get<std::int64_t>() < lo) refuse_key(key, v.dump() + " " + range);
  return v.get<std::int64_t>();
}

ObjectReader ObjectReader::object(const std::string& key) const {
  const Json& v = at(key);
  if (!v.is_object()) refuse_key(key, "must be an object");
  return ObjectReader(v, file_, prefix_ + key + ".");
}

}  // namespace codegen
