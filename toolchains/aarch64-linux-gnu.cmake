# Linux user space on 64-bit ARM (Armv8-A AArch64, FP and Advanced SIMD) with Debian's cross GCC
# (g++-aarch64-linux-gnu). Tests run under QEMU user-mode emulation (qemu-aarch64) with the
# cross glibc as its library root.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(PBRL_TARGET_NAME "aarch64-linux-gnu" CACHE STRING "Target name for reports")
set(_pbrl_triple aarch64-linux-gnu)
set(_pbrl_qemu qemu-aarch64)
include("${CMAKE_CURRENT_LIST_DIR}/linux-gnu-common.cmake")
