/* Console output for the C firmware example: one buffered line, written with SYS_WRITE0. */
#include "board.h"

#include <stdint.h>

enum { kCapacity = 158 };
static char line[kCapacity + 2];
static int used;

static void semihost(uint32_t op, const void* arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

void board_text(const char* s) {
  while (*s != '\0' && used < kCapacity) line[used++] = *s++;
}

void board_integer(long long v) {
  char digits[24];
  int k = 0;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do {
    digits[k++] = (char)('0' + u % 10u);
    u /= 10u;
  } while (u != 0u);
  if (v < 0) digits[k++] = '-';
  while (k > 0 && used < kCapacity) line[used++] = digits[--k];
}

void board_fixed(float v) {
  long long units;
  int div;
  if (v != v) {
    board_text("nan");
    return;
  }
  if (v < 0.0f) board_text("-");
  units = (long long)((v < 0.0f ? -(double)v : (double)v) * 10000.0 + 0.5);
  board_integer(units / 10000);
  board_text(".");
  for (div = 1000; div > 0; div /= 10) {
    const char digit[2] = {(char)('0' + units / div % 10), '\0'};
    board_text(digit);
  }
}

/* m * 10^k with one rounding while |k| <= 22 (10^k is exact in double), so that an exact tie of
 * the ninth digit stays one. */
static double times_ten_to(double m, int k) {
  double p = 1.0;
  int i;
  for (; k > 22; k -= 22) m *= 1e22;
  for (; k < -22; k += 22) m /= 1e22;
  for (i = 0; i < (k < 0 ? -k : k); ++i) p *= 10.0;
  return k < 0 ? m / p : m * p;
}

/* 9 significant digits, the text of printf's "%.8e" (-1.23456789e-05): enough to read the float
 * back exactly. Rounds to nearest, ties to even, as glibc does. */
void board_float(float v) {
  const double m = v < 0.0f ? -(double)v : (double)v; /* exact */
  double t = m, scaled;
  long long digits;
  int e = 0, div;
  if (v != v || m > 3.5e38) {
    board_text(v != v ? "nan" : v < 0.0f ? "-inf" : "inf");
    return;
  }
  if (v < 0.0f) board_text("-");
  for (; t >= 10.0; ++e) t /= 10.0; /* e = floor(log10(m)), give or take one... */
  for (; t != 0.0 && t < 1.0; --e) t *= 10.0;
  scaled = times_ten_to(m, 8 - e);
  if (scaled >= 1e9) scaled = times_ten_to(m, 8 - ++e); /* ...which this settles */
  if (m != 0.0 && scaled < 1e8) scaled = times_ten_to(m, 8 - --e);
  digits = (long long)scaled;
  if (scaled - (double)digits > 0.5 || (scaled - (double)digits == 0.5 && digits % 2 == 1)) ++digits;
  if (digits == 1000000000ll) { /* 9.999999996 rounds up to 1.00000000e+01 */
    digits /= 10;
    ++e;
  }
  board_integer(digits / 100000000ll);
  board_text(".");
  for (div = 10000000; div > 0; div /= 10) {
    const char digit[2] = {(char)('0' + digits / div % 10), '\0'};
    board_text(digit);
  }
  board_text(e < 0 ? "e-" : "e+");
  if (e > -10 && e < 10) board_text("0");
  board_integer(e < 0 ? -e : e);
}

void board_line_end(void) {
  line[used] = '\n'; /* used <= kCapacity: room for the newline and the terminator */
  line[used + 1] = '\0';
  semihost(0x04, line); /* SYS_WRITE0 */
  used = 0;
}

void board_rows(const char* name, const float* v, int rows, int columns) {
  int r, c;
  for (r = 0; r < rows; ++r) {
    board_text(name);
    board_text("[");
    board_integer(r);
    board_text("]");
    for (c = 0; c < columns; ++c) {
      board_text(" ");
      board_float(v[r * columns + c]);
    }
    board_line_end();
  }
}

/* startup.c's vector table names it; this example runs no timer. */
void SysTick_Handler(void);
void SysTick_Handler(void) {}
