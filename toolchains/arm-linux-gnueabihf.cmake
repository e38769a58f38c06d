# Linux user space on 32-bit ARM (Debian armhf: Armv7-A, Thumb-2, VFPv3-D16, hard float) with
# Debian's cross GCC (g++-arm-linux-gnueabihf). Tests run under QEMU user-mode emulation
# (qemu-arm) with the cross glibc as its library root.
set(CMAKE_SYSTEM_PROCESSOR arm)
set(PBRL_TARGET_NAME "arm-linux-gnueabihf" CACHE STRING "Target name for reports")
set(_pbrl_triple arm-linux-gnueabihf)
set(_pbrl_qemu qemu-arm)
include("${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake")
