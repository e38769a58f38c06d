#pragma once
// Solver settings by name. The names are the library's: each settings struct's visit() lists
// every field once with its domain and its dotted name (include/pbrl/solver/settings.hpp), and
// enums are read and written by their enum_names. So there is no list of settings here: a field
// added to the library is readable from a manifest, and written by the generator, as it is.

#include "manifest.hpp"
#include "renamed_settings.hpp"

#include <pbrl/core/detail/enum_names.hpp>
#include <pbrl/estimate/transition_estimate.hpp>  // EstimateSettings (manifest "estimate")
#include <pbrl/solver/settings.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <type_traits>

namespace codegen {

// "must be finite and > 0" and so on: what a value outside `d` fails.
std::string domain_text(const pbrl::Domain& d);
// The dotted names of a (nested) settings object's leaves: {"policy": {"floor": 0.1}} ->
// "policy.floor".
void flatten(const Json& object, const std::string& prefix, std::map<std::string, const Json*>& out);

template <class E>
std::string enumerator_list() {
  std::string s;
  constexpr auto table = pbrl::enum_names(E{});
  for (int i = 0; i < table.size; ++i) s += (i ? ", " : "") + std::string(table.names[i]);
  return s;
}

// Sets the fields the manifest names. visit() is const and hands out const references, as its
// library visitors only read; the settings object itself is not const, so writing is defined.
struct AssignSettings {
  const std::map<std::string, const Json*>& values;
  std::string file, prefix;  // for refusals: "solver."
  std::set<std::string> used;
  std::set<std::string> names;  // every field's name

  template <class T>
  void operator()(const T& field, const pbrl::Domain&, const char* name) {
    names.insert(name);
    const auto it = values.find(name);
    if (it == values.end()) return;
    used.insert(name);
    const Json& v = *it->second;
    T& f = const_cast<T&>(field);
    const std::string at = prefix + name;
    if constexpr (std::is_same<T, bool>::value) {
      if (!v.is_boolean()) refuse(file, at, "must be true or false");
      f = v.get<bool>();
    } else if constexpr (std::is_enum<T>::value) {
      if (!v.is_string() || !pbrl::enum_from_name(v.get<std::string>().c_str(), f))
        refuse(file, at, v.dump() + " is not one of " + enumerator_list<T>());
    } else if constexpr (std::is_integral<T>::value) {
      using L = std::numeric_limits<T>;
      const bool fits = v.is_number_unsigned()  ? v.get<std::uint64_t>() <= std::uint64_t(L::max())
                        : v.is_number_integer() ? v.get<std::int64_t>() >= std::int64_t(L::min()) &&
                                                      v.get<std::int64_t>() <= std::int64_t(L::max())
                                                : false;
      if (!fits)
        refuse(file, at,
               v.dump() + " is not an integer in [" + std::to_string(L::min()) + ", " + std::to_string(L::max()) + "]");
      f = static_cast<T>(v.get<std::int64_t>());
    } else {
      static_assert(std::is_floating_point<T>::value, "a settings field of a type the manifest cannot give");
      if (!v.is_number()) refuse(file, at, "must be a number");
      f = static_cast<T>(v.get<double>());
      // The generated header writes literals; an unused field (domain inactive) could otherwise
      // hold an infinity the library would accept but no literal spells.
      if (!std::isfinite(f)) refuse(file, at, v.dump() + " is not finite as " + (sizeof(T) == 4 ? "float" : "double"));
    }
  }
};

// The first field outside its domain, as a refusal.
struct DomainMessage {
  std::string file, prefix;
  template <class T>
  void operator()(const T& field, const pbrl::Domain& d, const char* name) {
    if (d.admits(field)) return;
    std::string value;
    if constexpr (std::is_enum<T>::value) {
      const char* n = pbrl::enum_name(field);
      value = n ? n : std::to_string(static_cast<long long>(field));
    } else if constexpr (std::is_floating_point<T>::value) {
      value = number_text(field);
    } else {
      value = std::to_string(field);
    }
    refuse(file, prefix + name, value + " " + domain_text(d));
  }
};

// The manifest's "solver" object (null: all defaults) read into Settings; `skip` names one field
// to leave at its default (to find which fields conflict). `key`: the object's manifest key, and
// `own`: keys of that object that are not Settings fields (read by the caller). A key that is not a
// field is refused: as renamed when renamed_settings.hpp maps it to a field of Settings, else as
// unknown.
template <class Settings>
Settings read_settings(const Json* solver, const std::string& file, const std::string& skip = "",
                       const std::string& key = "solver", const std::set<std::string>& own = {}) {
  Settings s{};
  if (solver == nullptr) return s;
  if (!solver->is_object()) refuse(file, key, "must be an object");
  std::map<std::string, const Json*> values;
  flatten(*solver, "", values);
  values.erase(skip);
  for (const std::string& k : own) values.erase(k);
  AssignSettings assign{values, file, key + ".", {}, {}};
  s.visit(assign);
  for (const auto& v : values) {
    if (assign.used.count(v.first)) continue;
    const char* renamed = renamed_setting(v.first);
    if (renamed != nullptr && assign.names.count(renamed))
      refuse(file, key + "." + v.first, renamed_message(v.first, renamed));
    refuse(file, key + "." + v.first, "unknown setting (pbrl-codegen --settings KIND lists them)");
  }
  return s;
}

// The library's verdict on the settings (validate, policy sets for the action counts); on a
// refusal, the message names the field: the first outside its domain, else a policy set's
// field, else the fields that conflict (those that, left at their default, make the rest valid).
template <class Settings, class Validate>
void check_settings(const Settings& s, const Json* solver, const std::string& file, Validate validate,
                    const std::vector<int>& policy_actions) {
  const pbrl::Status verdict = validate(s);
  if (verdict == pbrl::Status::ok) return;
  DomainMessage message{file, "solver."};
  s.visit(message);
  for (int actions : policy_actions)
    for (const auto* set : {&s.policy, &s.oracle_policy}) {
      if (pbrl::validate(*set, actions) == pbrl::Status::ok) continue;
      const std::string name = set == &s.policy ? "policy" : "oracle_policy";
      if (set->parameterization == pbrl::Parameterization::direct)
        refuse(file, "solver." + name + ".floor",
               number_text(set->floor) + " must be finite, > 0 and < 1/" + std::to_string(actions) + " for " +
                   std::to_string(actions) + " actions");
      refuse(file, "solver." + name + ".logit_bound", number_text(set->logit_bound) + " must be finite and > 0");
    }
  std::string conflicting;
  std::map<std::string, const Json*> values;
  if (solver != nullptr) flatten(*solver, "", values);
  for (const auto& v : values)
    if (validate(read_settings<Settings>(solver, file, v.first)) == pbrl::Status::ok)
      conflicting += (conflicting.empty() ? "" : ", ") + v.first;
  refuse(file, "solver",
         std::string("refused by pbrl::validate (") + pbrl::to_string(verdict) + ")" +
             (conflicting.empty() ? std::string() : "; valid with any one of these at its default: " + conflicting));
}

}  // namespace codegen
