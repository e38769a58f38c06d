# Cortex-M0+ (Armv6-M: Thumb-1 plus a few 32-bit instructions, no FPU, soft float) with newlib +
# ARM semihosting (rdimon).
# QEMU has no Cortex-M0/M0+ board with enough RAM for the test images, so they run on
# mps2-an385's Cortex-M3: Armv7-M executes every Armv6-M instruction. The images hold Armv6-M
# code only (compiler and assembler run for the M0+ and refuse anything else; newlib comes from
# its v6-m multilib), so the M3 runs what an M0+ would. Differences the startup code handles:
# the M3 has an MPU where an M0+ may have none (it checks MPU_TYPE), and it lets unaligned
# accesses pass where an M0+ faults (it sets CCR.UNALIGN_TRP). Timing is the M3's, not the M0+'s.
set(PBRL_TARGET_NAME "cortex-m0plus" CACHE STRING "Target name for reports")
set(PBRL_BOARD "mps2-an385" CACHE STRING "QEMU board bare-metal images are linked for")
set(_pbrl_cpu "-mcpu=cortex-m0plus -mthumb -mfloat-abi=soft")
set(_pbrl_qemu_cpu cortex-m3)
include("${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi-common.cmake")
