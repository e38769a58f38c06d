/* Run-time support for test images under QEMU: fault reporting and the libc
 * hooks that newlib/rdimon leave undefined. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* ARM semihosting call (bkpt 0xab); works in handler mode too. */
static uint32_t semihost(uint32_t op, const void *arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* Output goes through SYS_WRITE0 so it needs neither stdio nor the heap, which
 * may be what got corrupted. */
static void put(const char *s) { semihost(0x04, s); }

static void put_hex(const char *label, uint32_t v) {
  char buf[] = " 0x00000000";
  for (int i = 0; i < 8; ++i) buf[10 - i] = "0123456789abcdef"[(v >> (4 * i)) & 0xF];
  put(label);
  put(buf);
  put("\n");
}

#define REG(a) (*(volatile uint32_t *)(a))

/* Armv6-M and Armv8-M baseline have no configurable fault status registers (CFSR and friends are
 * reserved addresses there); every fault is a HardFault. */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define PBRL_HAS_CFSR 0
#else
#define PBRL_HAS_CFSR 1
#endif

/* The main stack's guard region (linker script). */
extern const char __pbrl_stack_guard[], __pbrl_stack_guard_end[];

void __pbrl_fault(const uint32_t *frame, uint32_t exc_return)
    __attribute__((noreturn, used));
void __pbrl_fault(const uint32_t *frame, uint32_t exc_return) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  put("\n*** pbrl: unexpected exception ");
  put_hex("IPSR", ipsr & 0x1FF);
  /* A frame in the guard was never written (the push faulted, or on Armv8-M the stack limit
   * stopped it at the guard's bottom) and may not be readable. */
  const uintptr_t at = (uintptr_t)frame;
  int unreadable = at >= (uintptr_t)__pbrl_stack_guard && at < (uintptr_t)__pbrl_stack_guard_end;
#if PBRL_HAS_CFSR
  const uint32_t cfsr = REG(0xE000ED28);
  put_hex("CFSR", cfsr);
  put_hex("HFSR", REG(0xE000ED2C));
  if (cfsr & 0x80) put_hex("MMFAR", REG(0xE000ED34));
  if (cfsr & 0x8000) put_hex("BFAR", REG(0xE000ED38));
  /* Stacking errors (MSTKERR, MLSPERR, STKERR, LSPERR) also mean the frame was not written. */
  if (cfsr & ((1u << 4) | (1u << 5) | (1u << 12) | (1u << 13))) unreadable = 1;
  if (cfsr & (1u << 20)) put("stack pointer below its limit (STKOF): stack overflow\n");
#endif
  if (unreadable) {
    put("exception entry could not push its frame: stack overflow?\n");
  } else {
    put_hex("PC", frame[6]);
    put_hex("LR", frame[5]);
    put_hex("SP", (uint32_t)frame);
  }
  put_hex("EXC_RETURN", exc_return);
  semihost(0x18, (const void *)0x20023); /* SYS_EXIT, RunTimeErrorUnknown: QEMU exits 1 */
  for (;;) {
  }
}

/* libc's arc4random and libstdc++'s random_device reference this; a test image
 * has no entropy source, so say so instead of faking one. */
int getentropy(void *buf, size_t len) {
  (void)buf;
  (void)len;
  errno = ENOSYS;
  return -1;
}
