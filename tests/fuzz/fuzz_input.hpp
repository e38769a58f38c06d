#pragma once
// A byte-stream decoder for the fuzz harnesses: every value a harness needs is read from the
// input, and an exhausted input reads as zeros, so every input is a valid (if short) program.
// Not library code: the harnesses may use the heap and the standard library.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::size_t remaining() const { return size_ - at_; }
  const std::uint8_t* here() const { return data_ + at_; }
  void skip(std::size_t n) { at_ += n < remaining() ? n : remaining(); }

  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t(byte()) << (8 * i);
    return v;
  }
  std::uint64_t u64() { return std::uint64_t(u32()) | std::uint64_t(u32()) << 32; }
  bool flag() { return (byte() & 1u) != 0; }
  // An integer in [lo, hi] (hi - lo < 2^32).
  int range(int lo, int hi) { return lo + int(u32() % std::uint32_t(hi - lo + 1)); }
  // Any int: the caps and the signs of counts are what validation must catch.
  int any_int() { return static_cast<int>(u32()); }

  // A scalar: one selector byte, then raw IEEE bits (NaN, inf, subnormals, huge), a special
  // value, or a small "ordinary" number, so that inputs reach both the refusals and the math.
  template <typename T>
  T real() {
    static_assert(std::is_floating_point<T>::value, "scalars");
    const std::uint8_t sel = byte();
    if (sel < 16) return raw<T>();
    if (sel < 32) return special<T>(sel - 16);
    // (-4, 4) in steps of 1/128 from two more bytes.
    const int v = int(std::int16_t(std::uint16_t(byte()) | std::uint16_t(byte()) << 8)) % 512;
    return T(v) / T(128);
  }
  // A number in [0, 1] from one byte (weights of a distribution).
  template <typename T>
  T unit() {
    return T(byte()) / T(255);
  }

  template <typename T>
  T raw() {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    Bits b = sizeof(T) == 4 ? Bits(u32()) : Bits(u64());
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }

  template <typename T>
  static T special(int k) {
    using L = std::numeric_limits<T>;
    switch (k) {
      case 0: return L::quiet_NaN();
      case 1: return L::infinity();
      case 2: return -L::infinity();
      case 3: return T(0);
      case 4: return -T(0);
      case 5: return L::max();
      case 6: return L::lowest();
      case 7: return L::denorm_min();
      case 8: return L::min();
      case 9: return L::epsilon();
      case 10: return T(1);
      case 11: return -T(1);
      case 12: return T(1) - L::epsilon();
      case 13: return T(1e30);
      case 14: return T(-1e30);
      default: return T(0.5);
    }
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// Two byte strings are equal; else print the first offset where they differ and a note (for
// the finding's report), then abort().
inline void check_same(const std::uint8_t* a, const std::uint8_t* b, std::size_t n, const char* what, int note) {
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) {
      std::fprintf(stderr, "FUZZ_CHECK failed: %s: first difference at byte %zu of %zu (note %d)\n", what, i, n, note);
      std::abort();
    }
}

}  // namespace fuzz

// A failed property: print what and where, then abort() so libFuzzer saves the input.
#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
