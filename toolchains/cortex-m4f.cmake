# Cortex-M4F (hard float) with newlib + ARM semihosting (rdimon).
# Test images run on QEMU's mps2-an386 board; cmake/PbrlTarget.cmake makes
# them bootable.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(PBRL_TARGET_NAME "cortex-m4f" CACHE STRING "Target name for reports")

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

set(_pbrl_cpu "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
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
  qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial none
  -semihosting-config enable=on,target=native -kernel)
