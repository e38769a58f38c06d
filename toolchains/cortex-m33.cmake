# Cortex-M33 (Armv8-M mainline, single-precision FPU, hard float) with newlib + ARM semihosting
# (rdimon). Test images run on QEMU's mps2-an505 board, in Secure state (where the core boots;
# nothing here needs a Non-secure side), linked at the board's Secure memory aliases.
set(PBRL_TARGET_NAME "cortex-m33" CACHE STRING "Target name for reports")
set(PBRL_BOARD "mps2-an505" CACHE STRING "QEMU board bare-metal images are linked for")
set(_pbrl_cpu "-mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
set(_pbrl_qemu_cpu cortex-m33)
include("${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi-common.cmake")
