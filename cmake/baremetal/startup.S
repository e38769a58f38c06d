/* Vector table and reset handler for QEMU mps2-an386 (Cortex-M4F).
 * Written in assembly because no C may run before the FPU is on: newlib and
 * libstdc++ are built for the hard-float ABI and may touch s/d registers anywhere. */
    .syntax unified
    .cpu cortex-m4
    .fpu fpv4-sp-d16
    .thumb

    .section .vectors, "a", %progbits
    .align 8                       /* VTOR: 48 entries need 256-byte alignment */
    .global __pbrl_vectors
__pbrl_vectors:
    .word __pbrl_msp_top           /* handlers run on their own stack (see below) */
    .word Reset_Handler
    .word NMI_Handler
    .word HardFault_Handler
    .word MemManage_Handler
    .word BusFault_Handler
    .word UsageFault_Handler
    .word 0, 0, 0, 0
    .word SVC_Handler
    .word DebugMon_Handler
    .word 0
    .word PendSV_Handler
    .word SysTick_Handler
    .rept 32                       /* AN386 has 32 external interrupts */
    .word Default_Handler
    .endr

    .text
    .thumb_func
    .global Reset_Handler
    .type Reset_Handler, %function
Reset_Handler:
    /* CPACR: full access to CP10/CP11 (the FPU). */
    ldr   r0, =0xE000ED88
    ldr   r1, [r0]
    orr   r1, r1, #(0xF << 20)
    str   r1, [r0]
    dsb
    isb

    /* QEMU loads segments at their load address (LMA), so .data sits in the
     * flash image and must be copied to RAM. */
    ldr   r0, =__data_start__
    ldr   r1, =__data_load__
    ldr   r2, =__data_end__
    cmp   r0, r1
    beq   2f
1:  cmp   r0, r2
    bhs   2f
    ldr   r3, [r1], #4
    str   r3, [r0], #4
    b     1b
2:
    /* MPU region 0: no-access guard at the bottom of the main stack, so an
     * overflow faults instead of silently overwriting the heap. PRIVDEFENA keeps
     * the default map everywhere else. */
    ldr   r0, =0xE000ED98          /* MPU_RNR */
    movs  r1, #0
    str   r1, [r0]
    ldr   r1, =__pbrl_stack_guard
    str   r1, [r0, #4]             /* MPU_RBAR */
    ldr   r1, =__pbrl_stack_guard_rasr  /* computed by the linker script */
    str   r1, [r0, #8]             /* MPU_RASR */
    ldr   r0, =0xE000ED94          /* MPU_CTRL */
    movs  r1, #5                   /* PRIVDEFENA | ENABLE */
    str   r1, [r0]
    dsb
    isb

    /* Thread mode runs on PSP (the big stack); MSP stays a small separate stack
     * for exceptions, so the fault handler still works after a stack overflow. */
    ldr   r0, =__stack_top
    msr   psp, r0
    movs  r0, #2                   /* CONTROL.SPSEL = PSP */
    msr   control, r0
    isb

    b     _start                   /* rdimon crt0: .bss, heap info, ctors, main, exit */
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
    ldr   r3, =__heap_limit        /* rdimon's _sbrk limit */
    ldr   r2, =__pbrl_heap_end
    str   r2, [r3]
    bx    lr
    .size _stack_init, . - _stack_init

/* Pass the exception frame (on whichever stack was active) to the C reporter. */
    .thumb_func
    .global HardFault_Handler
    .type HardFault_Handler, %function
HardFault_Handler:
    tst   lr, #4
    ite   eq
    mrseq r0, msp
    mrsne r0, psp
    mov   r1, lr
    b     __pbrl_fault
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
