# Linux user space on 32-bit ARM (Debian armhf: Armv7-A, Thumb-2, VFPv3-D16, hard float) with
# Debian's cross GCC (g++-arm-linux-gnueabihf). Tests run under QEMU user-mode emulation
# (qemu-arm) with the cross glibc as its library root.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(PBRL_TARGET_NAME "arm-linux-gnueabihf" CACHE STRING "Target name for reports")

set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
# -Wno-psabi: silences GCC 7.1 ABI-change notes; everything is built by one compiler.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")

# Libraries and headers come only from the cross sysroot: host ones (/usr/include, /usr/lib)
# would break the cross build. Package configs may come from the host, which is how header-only
# Eigen (/usr/share/eigen3/cmake) is found; its include dir is /usr/include/eigen3, never
# /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# CTest runs each test program through this; -L finds the dynamic loader and glibc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)
