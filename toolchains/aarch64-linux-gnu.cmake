# Linux user space on 64-bit ARM (Armv8-A AArch64, FP and Advanced SIMD) with Debian's cross GCC
# (g++-aarch64-linux-gnu). Tests run under QEMU user-mode emulation (qemu-aarch64) with the
# cross glibc as its library root.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(PBRL_TARGET_NAME "aarch64-linux-gnu" CACHE STRING "Target name for reports")

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# -Wno-psabi: silences GCC 9.1 ABI-change notes; everything is built by one compiler.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")

# Libraries and headers come only from the cross sysroot: host ones (/usr/include, /usr/lib)
# would break the cross build. Package configs may come from the host, which is how header-only
# Eigen (/usr/share/eigen3/cmake) is found; its include dir is /usr/include/eigen3, never
# /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# CTest runs each test program through this; -L finds the dynamic loader and glibc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
