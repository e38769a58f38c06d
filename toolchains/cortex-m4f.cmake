# Cortex-M4F (Armv7E-M, single-precision FPU, hard float) with newlib + ARM semihosting (rdimon).
# Test images run on QEMU's mps2-an386 board.
set(PBRL_TARGET_NAME "cortex-m4f" CACHE STRING "Target name for reports")
set(PBRL_BOARD "mps2-an386" CACHE STRING "QEMU board bare-metal images are linked for")
set(_pbrl_cpu "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(_pbrl_qemu_cpu cortex-m4)
include("${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi-common.cmake")
