/* Vector table and reset handler of the bare-metal test images, for every Cortex-M the
 * toolchains/ files name (M0+, M4F, M7, M33) on their QEMU MPS2 board. The compiler's -mcpu/-mfpu
 * macros select what the core has: an FPU (__ARM_FP), which MPU (Armv6-M/Armv7-M or Armv8-M) and
 * the Armv8-M stack limit registers. Code shared by all cores uses Thumb-1 instructions only, so
 * Armv6-M runs it.
 * Written in assembly because no C may run before the FPU is on: with a hard-float ABI newlib and
 * libstdc++ may touch s/d registers anywhere. */
    .syntax unified
    .thumb

#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__) || defined(__ARM_ARCH_8M_BASE__)
#define PBRL_PMSA_V8 1             /* Armv8-M MPU: MPU_RBAR/MPU_RLAR and MAIR attributes */
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define PBRL_STACK_LIMITS 1        /* MSPLIM/PSPLIM */
#endif

/* External interrupts of the board (cmake/PbrlTarget.cmake passes the board's count). */
#ifndef PBRL_BOARD_IRQS
#define PBRL_BOARD_IRQS 32
#endif

    .section .vectors, "a", %progbits
    .align 9                       /* VTOR: up to 128 entries need 512-byte alignment */
    .global __pbrl_vectors
__pbrl_vectors:
    .word __pbrl_msp_top           /* handlers run on their own stack (see below) */
    .word Reset_Handler
    .word NMI_Handler
    .word HardFault_Handler
    .word MemManage_Handler        /* MemManage, BusFault, UsageFault: reserved on Armv6-M */
    .word BusFault_Handler
    .word UsageFault_Handler
#if defined(__ARM_FEATURE_CMSE)
    .word SecureFault_Handler      /* Armv8-M with the Security Extension */
#else
    .word 0
#endif
    .word 0, 0, 0
    .word SVC_Handler
    .word DebugMon_Handler
    .word 0
    .word PendSV_Handler
    .word SysTick_Handler
    .rept PBRL_BOARD_IRQS
    .word Default_Handler
    .endr

    .text
    .thumb_func
    .global Reset_Handler
    .type Reset_Handler, %function
Reset_Handler:
#if defined(__ARM_FP)
    /* CPACR: full access to CP10/CP11 (the FPU). Only a core with an FPU has it; a soft-float
     * build (the M0+) never uses FP registers. */
    ldr   r0, =0xE000ED88
    ldr   r1, [r0]
    orr   r1, r1, #(0xF << 20)
    str   r1, [r0]
    dsb
    isb
#endif
#if defined(__ARM_ARCH_6M__)
    /* Armv6-M traps every unaligned access (CCR.UNALIGN_TRP reads as one there). An Armv7-M
     * core running this code (QEMU's M3 stands in for the M0+) would let them pass: make it
     * trap them too. */
    ldr   r0, =0xE000ED14          /* CCR */
    ldr   r1, [r0]
    movs  r2, #8                   /* UNALIGN_TRP */
    tst   r1, r2
    bne   4f
    orrs  r1, r1, r2
    str   r1, [r0]
    dsb
    isb
4:
#endif
#if defined(PBRL_STACK_LIMITS)
    /* The exception stack faults (STKOF) instead of running into .bss. */
    ldr   r0, =__pbrl_msp_limit
    msr   msplim, r0
#endif

    /* QEMU loads segments at their load address (LMA), so .data sits in the
     * flash image and must be copied to RAM. */
    ldr   r0, =__data_start__
    ldr   r1, =__data_load__
    ldr   r2, =__data_end__
    cmp   r0, r1
    beq   2f
1:  cmp   r0, r2
    bhs   2f
    ldr   r3, [r1]
    str   r3, [r0]
    adds  r0, r0, #4
    adds  r1, r1, #4
    b     1b
2:
    /* MPU region 0: guard at the bottom of the main stack, so an overflow faults instead of
     * silently overwriting the heap. PRIVDEFENA keeps the default map everywhere else. The MPU
     * is optional on every Cortex-M (the M0+ often has none): MPU_TYPE.DREGION = 0 skips it. */
    ldr   r0, =0xE000ED90          /* MPU_TYPE; MPU_CTRL, MPU_RNR, ... follow */
    ldr   r1, [r0]
    lsrs  r1, r1, #8
    uxtb  r1, r1
    cmp   r1, #0
    beq   3f
    movs  r1, #0
    str   r1, [r0, #0x08]          /* MPU_RNR = 0 */
#if defined(PBRL_PMSA_V8)
    /* Armv8-M: base and limit registers, attributes by index into MAIR0; attribute 0 = normal
     * write-back memory, like the RAM around the guard. AP cannot say "no access" here, so the
     * guard is read-only (the linker script computes the words); PSPLIM below catches the rest. */
    movs  r1, #0xFF
    str   r1, [r0, #0x30]          /* MPU_MAIR0 */
    ldr   r1, =__pbrl_stack_guard_rbar
    str   r1, [r0, #0x0C]          /* MPU_RBAR */
    ldr   r1, =__pbrl_stack_guard_rlar
    str   r1, [r0, #0x10]          /* MPU_RLAR */
#else
    /* Armv6-M and Armv7-M: base address and RASR (size, AP = no access, XN). */
    ldr   r1, =__pbrl_stack_guard
    str   r1, [r0, #0x0C]          /* MPU_RBAR */
    ldr   r1, =__pbrl_stack_guard_rasr
    str   r1, [r0, #0x10]          /* MPU_RASR */
#endif
    movs  r1, #5                   /* PRIVDEFENA | ENABLE */
    str   r1, [r0, #0x04]          /* MPU_CTRL */
    dsb
    isb
3:
    /* Thread mode runs on PSP (the big stack); MSP stays a small separate stack
     * for exceptions, so the fault handler still works after a stack overflow. */
    ldr   r0, =__stack_top
    msr   psp, r0
    movs  r0, #2                   /* CONTROL.SPSEL = PSP */
    msr   control, r0
    isb

    ldr   r0, =_start              /* rdimon crt0: .bss, heap info, ctors, main, exit */
    bx    r0                       /* (a Thumb-1 b cannot reach far) */
    .size Reset_Handler, . - Reset_Handler

/* rdimon's crt0 sets sp from the SYS_HEAPINFO answer, which depends on QEMU's
 * guess about the RAM layout, then calls this weak hook. Overriding it puts the
 * stack and heap limit back where the linker script says they are. */
    .thumb_func
    .global _stack_init
    .type _stack_init, %function
_stack_init:
    ldr   r3, =__stack_top
    mov   sp, r3
#if defined(PBRL_STACK_LIMITS)
    /* Set only now: crt0 moved sp to QEMU's guess before calling here, which may lie below it.
     * An SP below the guard's bottom faults (STKOF) even when a frame skips the guard region. */
    ldr   r3, =__pbrl_stack_guard
    msr   psplim, r3
#endif
    ldr   r3, =__heap_limit        /* rdimon's _sbrk limit */
    ldr   r2, =__pbrl_heap_end
    str   r2, [r3]
    bx    lr
    .size _stack_init, . - _stack_init

/* Pass the exception frame (on whichever stack was active, EXC_RETURN bit 2) to the C reporter. */
    .thumb_func
    .global HardFault_Handler
    .type HardFault_Handler, %function
HardFault_Handler:
    mov   r1, lr
    movs  r0, #4
    tst   r0, r1
    bne   1f
    mrs   r0, msp
    b     2f
1:  mrs   r0, psp
2:  ldr   r2, =__pbrl_fault
    bx    r2
    .size HardFault_Handler, . - HardFault_Handler

    .weak NMI_Handler, MemManage_Handler, BusFault_Handler, UsageFault_Handler
    .weak SVC_Handler, DebugMon_Handler, PendSV_Handler, SysTick_Handler, Default_Handler
    .thumb_set NMI_Handler, HardFault_Handler
    .thumb_set MemManage_Handler, HardFault_Handler
    .thumb_set BusFault_Handler, HardFault_Handler
    .thumb_set UsageFault_Handler, HardFault_Handler
    .thumb_set SVC_Handler, HardFault_Handler
    .thumb_set DebugMon_Handler, HardFault_Handler
    .thumb_set PendSV_Handler, HardFault_Handler
    .thumb_set SysTick_Handler, HardFault_Handler
    .thumb_set Default_Handler, HardFault_Handler
#if defined(__ARM_FEATURE_CMSE)
    .weak SecureFault_Handler
    .thumb_set SecureFault_Handler, HardFault_Handler
#endif
