#pragma once
// The little a firmware needs from its board, for QEMU's mps2-an386 (Cortex-M4F): console output
// and exit over ARM semihosting, and SysTick as the control loop's tick. On a product the console
// would be a UART or RTT and exit would not exist; the rest is the same on any Cortex-M.
// No printf: formatting is done here into a small buffer, so no libc stdio (and no heap) is linked.

#include <cstdint>

namespace board {

// ARM semihosting call (bkpt 0xab): the debugger or QEMU services it.
inline std::uint32_t semihost(std::uint32_t op, const void* arg) {
  register std::uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

inline void write(const char* text) { semihost(0x04, text); }  // SYS_WRITE0

// ADP_Stopped_ApplicationExit ends QEMU with status 0; any other reason with status 1.
[[noreturn]] inline void exit(bool success) {
  semihost(0x18, reinterpret_cast<const void*>(success ? 0x20026u : 0x20023u));  // SYS_EXIT
  for (;;) {
  }
}

// A line assembled piece by piece, then written at once.
class Line {
 public:
  Line& text(const char* s) {
    while (*s != '\0' && n_ < kCapacity) buf_[n_++] = *s++;
    return *this;
  }
  Line& integer(long long v) {
    char digits[24];
    int k = 0;
    const bool negative = v < 0;
    unsigned long long u = negative ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do {
      digits[k++] = static_cast<char>('0' + u % 10u);
      u /= 10u;
    } while (u != 0u);
    if (negative) digits[k++] = '-';
    while (k > 0 && n_ < kCapacity) buf_[n_++] = digits[--k];
    return *this;
  }
  // Fixed point with `decimals` digits (enough for progress lines; not a general float printer).
  Line& fixed(float v, int decimals = 4) {
    if (!(v == v)) return text("nan");
    if (v < 0.0f) {
      text("-");
      v = -v;
    }
    long long scale = 1;
    for (int i = 0; i < decimals; ++i) scale *= 10;
    const long long units = static_cast<long long>(static_cast<double>(v) * static_cast<double>(scale) + 0.5);
    integer(units / scale);
    text(".");
    long long frac = units % scale;
    for (long long div = scale / 10; div > 0; div /= 10) {
      const char digit[2] = {static_cast<char>('0' + frac / div), '\0'};
      text(digit);
      frac %= div;
    }
    return *this;
  }
  // 9 significant digits, the text of printf's "%.8e" (-1.23456789e-05): enough to read the float
  // back exactly. Rounds to nearest, ties to even, as glibc does (examples/firmware_c/board.c's
  // board_float is the same for C).
  Line& real(float v) {
    const double m = v < 0.0f ? -static_cast<double>(v) : static_cast<double>(v);  // exact
    if (!(v == v) || m > 3.5e38) return text(!(v == v) ? "nan" : v < 0.0f ? "-inf" : "inf");
    if (v < 0.0f) text("-");
    int e = 0;
    double t = m;
    for (; t >= 10.0; ++e) t /= 10.0;  // e = floor(log10(m)), give or take one...
    for (; t != 0.0 && t < 1.0; --e) t *= 10.0;
    double scaled = times_ten_to(m, 8 - e);
    if (scaled >= 1e9) scaled = times_ten_to(m, 8 - ++e);  // ...which this settles
    if (m != 0.0 && scaled < 1e8) scaled = times_ten_to(m, 8 - --e);
    long long digits = static_cast<long long>(scaled);
    const double rest = scaled - static_cast<double>(digits);
    if (rest > 0.5 || (rest == 0.5 && digits % 2 == 1)) ++digits;
    if (digits == 1000000000ll) {  // 9.999999996 rounds up to 1.00000000e+01
      digits /= 10;
      ++e;
    }
    integer(digits / 100000000ll).text(".");
    for (long long div = 10000000; div > 0; div /= 10) {
      const char digit[2] = {static_cast<char>('0' + digits / div % 10), '\0'};
      text(digit);
    }
    text(e < 0 ? "e-" : "e+");
    if (e > -10 && e < 10) text("0");
    return integer(e < 0 ? -e : e);
  }
  void print() {
    buf_[n_] = '\n';  // n_ <= kCapacity: room for the newline and the terminator is reserved
    buf_[n_ + 1] = '\0';
    write(buf_);
    n_ = 0;
  }

 private:
  // m * 10^k with one rounding while |k| <= 22 (10^k is exact in double), so that an exact tie of
  // the ninth digit stays one.
  static double times_ten_to(double m, int k) {
    for (; k > 22; k -= 22) m *= 1e22;
    for (; k < -22; k += 22) m /= 1e22;
    double p = 1.0;
    for (int i = 0; i < (k < 0 ? -k : k); ++i) p *= 10.0;
    return k < 0 ? m / p : m * p;
  }

  static constexpr int kCapacity = 158;
  char buf_[kCapacity + 2] = {};
  int n_ = 0;
};

// SysTick on the processor clock. QEMU's mps2 boards clock it at 25 MHz; run with
// -icount shift=0 (one instruction per virtual nanosecond) one count is 40 instructions, the same
// on every run. QEMU counts instructions, not cycles: on hardware, read cycles from DWT->CYCCNT.
namespace systick {
inline volatile std::uint32_t& csr() { return *reinterpret_cast<volatile std::uint32_t*>(0xE000E010u); }
inline volatile std::uint32_t& rvr() { return *reinterpret_cast<volatile std::uint32_t*>(0xE000E014u); }
inline volatile std::uint32_t& cvr() { return *reinterpret_cast<volatile std::uint32_t*>(0xE000E018u); }
constexpr std::uint32_t kInstructionsPerCount = 40;  // QEMU -icount shift=0, 25 MHz SysTick

// Interrupt every `counts` counts (at most 2^24).
inline void start(std::uint32_t counts) {
  csr() = 0u;
  rvr() = counts - 1u;
  cvr() = 0u;
  csr() = 7u;  // ENABLE | TICKINT | CLKSOURCE = processor clock
}
inline void stop() { csr() = 0u; }

// Counts from reading `start` to reading `end` of a timer with `period` counts, if less than one
// period passed. A read right at the reload may give 0, which stands for `period`.
inline std::uint32_t elapsed(std::uint32_t start, std::uint32_t end, std::uint32_t period) {
  return (start + period - end) % period;
}
}  // namespace systick

inline void wait_for_interrupt() { __asm__ volatile("wfi" ::: "memory"); }

}  // namespace board
