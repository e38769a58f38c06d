#pragma once
// The fuzz harnesses' shared plumbing around the input decoder (fuzz_input.hpp): the files of
// their seed corpora, PBRL_FUZZ_WRITE_SEEDS=DIR, which writes a harness's seed corpus into DIR
// and exits instead of fuzzing, and the state LLVMFuzzerInitialize makes for every input.

#include "fuzz_input.hpp"
#include "../visited_fields.hpp"

#include "pbrl/core/status.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace fuzz {

using Bytes = std::vector<std::uint8_t>;

// One seed of a corpus: the bytes b in the file path.
inline void write_file(const std::string& path, const Bytes& b) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(f != nullptr);
  FUZZ_CHECK(std::fwrite(b.data(), 1, b.size(), f) == b.size());
  std::fclose(f);
}

// Every number of a report returned with ok is finite (the library's promise), over every field its
// visit() lists; else names the field and aborts.
template <class Report>
void check_report_finite(const Report& report) {
  if (const char* field = non_finite_field(report)) {
    std::fprintf(stderr, "FUZZ_CHECK failed: the report's %s is not finite\n", field);
    std::abort();
  }
}

// An object's bytes, to check later that a refused call left it as it was (same_bytes).
template <class Object>
Bytes bytes_of(const Object& o) {
  Bytes b(sizeof(Object));
  std::memcpy(b.data(), static_cast<const void*>(&o), sizeof(Object));
  return b;
}
template <class Object>
bool same_bytes(const Object& o, const Bytes& b) {
  return std::memcmp(b.data(), static_cast<const void*>(&o), sizeof(Object)) == 0;
}

// n rows of m entries, each row normalized from m byte weights (uniform if they are all 0).
template <typename T>
void normalized_rows(Input& in, T* p, int rows, int m) {
  for (int r = 0; r < rows; ++r) {
    T sum(0);
    for (int j = 0; j < m; ++j) sum += p[r * m + j] = in.unit<T>();
    for (int j = 0; j < m; ++j) p[r * m + j] = sum > T(0) ? p[r * m + j] / sum : T(1) / T(m);
  }
}

// true if call() returns ok; else false, after checking that the refused call left every byte of
// object (the one it acts on) as it was.
template <class Object, class Call>
bool ok_or_unchanged(const Object& object, Call&& call) {
  const Bytes before = bytes_of(object);
  if (call() == pbrl::Status::ok) return true;
  FUZZ_CHECK(same_bytes(object, before));
  return false;
}

// Appends n bytes of a plausible run, drawn by a linear congruential generator from x: every
// period-th byte (the first included) an "ordinary" selector (>= 32), the others any byte.
inline void append_plausible(Bytes& b, std::uint32_t x, int n, int period) {
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    b.push_back(std::uint8_t(i % period == 0 ? 32 + (x >> 24) % 200 : (x >> 24)));
  }
}

// The end of a harness's LLVMFuzzerInitialize: with PBRL_FUZZ_WRITE_SEEDS=DIR, write_seeds(DIR)
// writes its seed corpus, then the process exits.
inline void write_seeds_if_asked(void (*write_seeds)(const std::string& dir)) {
  if (const char* dir = std::getenv("PBRL_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
}

// A harness's LLVMFuzzerInitialize: the state every input reuses, made once (on the heap: it is
// large, and it lives as long as the process), then write_seeds_if_asked.
template <class State>
int initialize(State*& state, void (*write_seeds)(const std::string& dir)) {
  state = new State();
  write_seeds_if_asked(write_seeds);
  return 0;
}

}  // namespace fuzz
