/* Vector table and reset for the firmware example (Cortex-M4F). A product's startup file looks
 * the same: enable the FPU before any C runs (this code is built for the hard-float ABI), copy
 * .data from flash, zero .bss, run static constructors, call main. Two additions for the
 * example: the stack is painted so the firmware can report its deepest use, and main's return
 * value ends the QEMU run. Deliberately no C library startup (crt0): nothing here or in main
 * may pull in malloc, stdio or exception support, and the symbol check proves it. */
#include <stdint.h>

extern uint32_t __data_start__, __data_end__, __data_load__, __bss_start__, __bss_end__;
extern uint32_t __stack_limit, __stack_top;
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);
void SysTick_Handler(void);
void Reset_Handler(void);
void Fault_Handler(void);

/* Stack paint pattern; the firmware counts untouched words from the stack's low end. */
const uint32_t firmware_stack_paint = 0x5AFEC0DEu;

static uint32_t semihost(uint32_t op, const void *arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/* Exit with main's status: ADP_Stopped_ApplicationExit means 0 to QEMU, anything else 1. */
static void __attribute__((noreturn)) stop(int status) {
  semihost(0x18, (const void *)(status == 0 ? 0x20026u : 0x20023u));
  for (;;) {
  }
}

void Fault_Handler(void) {
  semihost(0x04, "firmware: fault\n");
  stop(1);
}

/* The C library's abort() and exit() end here if anything calls them. */
void _exit(int status) { stop(status); }

__attribute__((used, section(".vectors"))) static void (*const vectors[16 + 32])(void) = {
    (void (*)(void))(&__stack_top),
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMonitor */
    0,
    Fault_Handler, /* PendSV */
    SysTick_Handler,
    /* 32 external interrupts: none used. */
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
};

static void __attribute__((noreturn, used)) reset_continue(void) {
  for (uint32_t *dst = &__data_start__, *src = &__data_load__; dst < &__data_end__;) *dst++ = *src++;
  for (uint32_t *dst = &__bss_start__; dst < &__bss_end__;) *dst++ = 0u;
  /* Paint the stack below this frame (64 bytes of margin for it). */
  uint32_t *sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (uint32_t *p = &__stack_limit; p < sp - 16; ++p) *p = firmware_stack_paint;
  for (void (**ctor)(void) = __init_array_start; ctor < __init_array_end; ++ctor) (*ctor)();
  stop(main());
}

/* Naked: the FPU must be on before the compiler may touch an FP register. */
void __attribute__((naked, noreturn)) Reset_Handler(void) {
  __asm__ volatile(
      "ldr r0, =0xE000ED88\n" /* CPACR: full access to CP10 and CP11 */
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
      "b reset_continue\n");
}
