# Shared part of the bare-metal toolchain files (cortex-*.cmake): arm-none-eabi GCC with newlib
# and ARM semihosting (rdimon); test images run on a QEMU MPS2 board, and cmake/PbrlTarget.cmake
# makes them bootable there. Not a toolchain file by itself: the including file first sets
#   _pbrl_cpu         -mcpu/-mthumb/-mfpu/-mfloat-abi flags (they pick newlib's multilib)
#   _pbrl_qemu_cpu    the -cpu QEMU runs the images on
#   PBRL_TARGET_NAME  and PBRL_BOARD (the QEMU machine, which selects the linker script)
if(NOT DEFINED _pbrl_cpu OR NOT DEFINED _pbrl_qemu_cpu OR NOT DEFINED PBRL_BOARD)
  message(FATAL_ERROR "arm-none-eabi-common.cmake is included by toolchains/cortex-*.cmake; "
    "use one of those as CMAKE_TOOLCHAIN_FILE")
endif()

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

set(CMAKE_C_FLAGS_INIT "${_pbrl_cpu} -ffunction-sections -fdata-sections")
# -Wno-psabi: silences GCC 7.1 ABI-change notes; everything is built by one compiler.
set(CMAKE_CXX_FLAGS_INIT "${_pbrl_cpu} -ffunction-sections -fdata-sections -Wno-psabi")
set(CMAKE_ASM_FLAGS_INIT "${_pbrl_cpu}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=rdimon.specs -Wl,--gc-sections")

# Compiler checks cannot link a bootable image without the startup code.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Libraries and headers come only from the newlib sysroot: host ones
# (/usr/include, /usr/lib) would break the cross build. Package configs may come
# from the host, which is how header-only Eigen (/usr/share/eigen3/cmake) is
# found; its include dir is /usr/include/eigen3, never /usr/include.
set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# CTest runs each test ELF with `<emulator> <elf>`; the exit code is main's,
# passed out through semihosting. -monitor/-serial none keep QEMU off the
# terminal (CI has no stdin). The ELF must come last, so arguments for main()
# go through QEMU's -append instead (pbrl_add_test does that).
set(CMAKE_CROSSCOMPILING_EMULATOR
  qemu-system-arm -M ${PBRL_BOARD} -cpu ${_pbrl_qemu_cpu} -nographic -monitor none -serial none
  -semihosting-config enable=on,target=native -kernel)
