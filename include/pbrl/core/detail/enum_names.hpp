#pragma once
// Names of an enum's enumerators, so that settings files, generated code and logs can say
// `softmax` rather than 1. Each enum with names declares, next to it,
//   constexpr EnumNames<E, N> enum_names(E) { return {{"first", "second", ...}}; }
// in the enumerators' order (values 0 .. N-1), found by argument-dependent lookup, and a
// static_assert that N is the enumerator count. No storage: the tables are constants.

namespace pbrl {

/// The names of enum E's N enumerators, in value order: what enum_names(E) returns.
template <typename E, int N>
struct EnumNames {
  /// The name of value i at [i].
  const char* names[N];
  /// N, the enumerator count.
  static constexpr int size = N;
};

namespace detail {

constexpr bool same_text(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

}  // namespace detail

/// The name of an enumerator; nullptr for a value outside the table.
template <typename E>
constexpr const char* enum_name(E value) {
  constexpr auto table = enum_names(E{});
  const auto i = static_cast<long long>(value);
  return i >= 0 && i < table.size ? table.names[i] : nullptr;
}

/// The enumerator called `name` into value; false (value unchanged) if there is none.
template <typename E>
constexpr bool enum_from_name(const char* name, E& value) {
  constexpr auto table = enum_names(E{});
  for (int i = 0; i < table.size; ++i)
    if (detail::same_text(name, table.names[i])) {
      value = static_cast<E>(i);
      return true;
    }
  return false;
}

}  // namespace pbrl
