#pragma once
// The fuzz harnesses' shared plumbing around the input decoder (fuzz_input.hpp): the files of
// their seed corpora, and PBRL_FUZZ_WRITE_SEEDS=DIR, which writes a harness's seed corpus into DIR
// and exits instead of fuzzing.

#include "fuzz_input.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

}  // namespace fuzz
