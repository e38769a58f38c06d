# Shared part of the cross Linux toolchain files (aarch64-linux-gnu.cmake,
# arm-linux-gnueabihf.cmake): Debian's cross GCC for Linux user space, tests run under QEMU
# user-mode emulation with the cross glibc as its library root. Not a toolchain file by itself:
# the including file first sets
#   CMAKE_SYSTEM_PROCESSOR  and PBRL_TARGET_NAME
#   _pbrl_triple            the GNU triple: the compilers' prefix and the sysroot /usr/<triple>
#   _pbrl_qemu              the QEMU user-mode emulator of the target
if(NOT DEFINED _pbrl_triple OR NOT DEFINED _pbrl_qemu)
  message(FATAL_ERROR "linux-gnu-common.cmake is included by toolchains/aarch64-linux-gnu.cmake and "
    "toolchains/arm-linux-gnueabihf.cmake; use one of those as CMAKE_TOOLCHAIN_FILE")
endif()

set(CMAKE_SYSTEM_NAME Linux)

set(CMAKE_C_COMPILER ${_pbrl_triple}-gcc)
set(CMAKE_CXX_COMPILER ${_pbrl_triple}-g++)
# -Wno-psabi: silences GCC's ABI-change notes (7.1 on armhf, 9.1 on AArch64); everything is
# built by one compiler.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")

# Libraries and headers come only from the cross sysroot: host ones (/usr/include, /usr/lib)
# would break the cross build. Package configs may come from the host, which is how header-only
# Eigen (/usr/share/eigen3/cmake) is found; its include dir is /usr/include/eigen3, never
# /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/${_pbrl_triple})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# CTest runs each test program through this; -L finds the dynamic loader and glibc.
set(CMAKE_CROSSCOMPILING_EMULATOR ${_pbrl_qemu} -L /usr/${_pbrl_triple})
