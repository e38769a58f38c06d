# Cortex-M7 (Armv7E-M, double-precision FPU, hard float) with newlib + ARM semihosting (rdimon).
# Test images run on QEMU's mps2-an500 board, whose PSRAM sits at 0x60000000.
set(PBRL_TARGET_NAME "cortex-m7" CACHE STRING "Target name for reports")
set(PBRL_BOARD "mps2-an500" CACHE STRING "QEMU board bare-metal images are linked for")
set(_pbrl_cpu "-mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard")
set(_pbrl_qemu_cpu cortex-m7)
include("${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi-common.cmake")
