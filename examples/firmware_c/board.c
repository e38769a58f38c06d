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

void board_line_end(void) {
  line[used] = '\n'; /* used <= kCapacity: room for the newline and the terminator */
  line[used + 1] = '\0';
  semihost(0x04, line); /* SYS_WRITE0 */
  used = 0;
}

/* startup.c's vector table names it; this example runs no timer. */
void SysTick_Handler(void);
void SysTick_Handler(void) {}
