# Turns executables into programs for the configured target. Host builds need
# nothing; bare-metal builds (toolchains/cortex-*.cmake) get startup code and a
# linker script for the QEMU board their toolchain file names (PBRL_BOARD), where
# CTest runs them. Linux cross builds (toolchains/*-linux-*.cmake) are ordinary
# programs run by QEMU user-mode emulation.
include_guard(GLOBAL)

if(NOT DEFINED PBRL_BARE_METAL)
  if(CMAKE_SYSTEM_NAME STREQUAL "Generic")
    set(PBRL_BARE_METAL ON)
  else()
    set(PBRL_BARE_METAL OFF)
  endif()
endif()

# Toolchain files set their own name; this is the host's.
set(PBRL_TARGET_NAME "host-${CMAKE_SYSTEM_PROCESSOR}" CACHE STRING "Target name for reports")

set(PBRL_BAREMETAL_DIR "${CMAKE_CURRENT_LIST_DIR}/baremetal")

if(PBRL_BARE_METAL)
  # Toolchain files name their board; a toolchain file without one gets the M4F's.
  set(PBRL_BOARD "mps2-an386" CACHE STRING "QEMU board bare-metal images are linked for")
  # One linker script per memory map (AN385 and AN386 share one), and the board's count of
  # external interrupts for the vector table.
  if(PBRL_BOARD STREQUAL "mps2-an385" OR PBRL_BOARD STREQUAL "mps2-an386")
    set(_pbrl_memory_map mps2-an386)
    set(_pbrl_board_irqs 32)
  elseif(PBRL_BOARD STREQUAL "mps2-an500")
    set(_pbrl_memory_map mps2-an500)
    set(_pbrl_board_irqs 32)
  elseif(PBRL_BOARD STREQUAL "mps2-an505")
    set(_pbrl_memory_map mps2-an505)
    set(_pbrl_board_irqs 92)
  else()
    message(FATAL_ERROR "PBRL_BOARD=${PBRL_BOARD}: no linker script for this board "
      "(known: mps2-an385, mps2-an386, mps2-an500, mps2-an505)")
  endif()
  set(PBRL_LINKER_SCRIPT "${PBRL_BAREMETAL_DIR}/${_pbrl_memory_map}.ld")
  # The board's script INCLUDEs this one (found through -L).
  set(PBRL_LINKER_SCRIPTS "${PBRL_LINKER_SCRIPT}" "${PBRL_BAREMETAL_DIR}/sections.ld")

  enable_language(ASM)
  # One copy of the startup code, shared by every image.
  add_library(pbrl_baremetal_runtime OBJECT
    "${PBRL_BAREMETAL_DIR}/startup.S"
    "${PBRL_BAREMETAL_DIR}/runtime.c")
  target_compile_definitions(pbrl_baremetal_runtime PRIVATE PBRL_BOARD_IRQS=${_pbrl_board_irqs})
endif()

# pbrl_configure_executable(<target>)
# Bare metal: links the startup code and linker script into <target>, names it
# <target>.elf and writes <target>.elf.map. Host: does nothing.
function(pbrl_configure_executable target)
  if(NOT PBRL_BARE_METAL)
    return()
  endif()
  # target_sources, not target_link_libraries: callers may use either
  # target_link_libraries signature on the same target.
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:pbrl_baremetal_runtime>)
  target_link_options(${target} PRIVATE
    "-L${PBRL_BAREMETAL_DIR}"
    "-T${PBRL_LINKER_SCRIPT}"
    "-Wl,-Map=$<TARGET_FILE:${target}>.map"
    -Wl,--print-memory-usage)
  set_target_properties(${target} PROPERTIES
    SUFFIX ".elf"
    LINK_DEPENDS "${PBRL_LINKER_SCRIPTS}")
endfunction()

# pbrl_add_test(<name> <target> [args...])
# add_test() that also works on bare metal: the image runs under QEMU (the
# toolchain's CMAKE_CROSSCOMPILING_EMULATOR), arguments reach main() through
# semihosting, and a timeout turns a hung emulator into a failure (under QEMU
# user-mode emulation too; CTest adds the emulator to target commands itself).
function(pbrl_add_test name target)
  if(PBRL_BARE_METAL AND NOT "${ARGN}" STREQUAL "")
    # QEMU hands "-append" to the guest as its semihosting command line.
    list(JOIN ARGN " " args)
    add_test(NAME ${name} COMMAND ${CMAKE_CROSSCOMPILING_EMULATOR}
      "$<TARGET_FILE:${target}>" -append "${args}")
  else()
    add_test(NAME ${name} COMMAND ${target} ${ARGN})
  endif()
  if(CMAKE_CROSSCOMPILING)
    set_tests_properties(${name} PROPERTIES TIMEOUT 900)
  endif()
endfunction()

# doctest is header-only (Debian doctest-dev). Its directory is put on the
# include path by itself: in cross builds the host's /usr/include must stay out.
# PATHS because the Generic platform searches no system prefixes.
find_path(PBRL_DOCTEST_ROOT doctest/doctest.h PATHS /usr/include NO_CMAKE_FIND_ROOT_PATH)

# pbrl_add_doctest_executable(<target> [SOURCES] <source>...)
# A doctest program linked to pbrl::pbrl, with doctest's main() from one shared object
# (tests/main.cpp, compiled once per tree, not once per program). Built without exceptions
# or RTTI on every platform, so one set of tests behaves alike everywhere
# (REQUIRE then records the failure but does not leave the test case).
function(pbrl_add_doctest_executable target)
  set(sources ${ARGN})
  list(REMOVE_ITEM sources SOURCES)
  if(NOT PBRL_DOCTEST_ROOT)
    message(FATAL_ERROR "doctest/doctest.h not found (install doctest-dev)")
  endif()
  if(NOT TARGET pbrl_doctest_main)
    add_library(pbrl_doctest_main OBJECT "${PROJECT_SOURCE_DIR}/tests/main.cpp")
    _pbrl_doctest_settings(pbrl_doctest_main)
  endif()
  add_executable(${target} ${sources} $<TARGET_OBJECTS:pbrl_doctest_main>)
  _pbrl_doctest_settings(${target})
  pbrl_configure_executable(${target})
endfunction()

# The compile settings every doctest object shares (so main() and the test cases agree).
function(_pbrl_doctest_settings target)
  target_include_directories(${target} SYSTEM PRIVATE "${PBRL_DOCTEST_ROOT}/doctest")
  target_compile_definitions(${target} PRIVATE DOCTEST_CONFIG_NO_EXCEPTIONS_BUT_WITH_ALL_ASSERTS)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
  # After the build type's flags, so it wins (GCC and Clang take the last -O).
  target_compile_options(${target} PRIVATE ${PBRL_TEST_OPTIMIZATION})
  if(PBRL_BARE_METAL)
    # newlib has no sigaltstack and this libstdc++ has no std::mutex.
    target_compile_definitions(${target} PRIVATE
      DOCTEST_CONFIG_NO_POSIX_SIGNALS DOCTEST_CONFIG_NO_MULTITHREADING)
  endif()
  if(TARGET pbrl::pbrl)
    target_link_libraries(${target} PRIVATE pbrl::pbrl)
  endif()
endfunction()

# pbrl_use_native_isa(<target>...)
# -march=native on each of the named targets that exist (PBRL_MARCH_NATIVE): PRIVATE, so it never
# reaches a usage requirement. Host trees only: a bare-metal or cross tree runs its programs on
# another processor, so there it warns and does nothing.
function(pbrl_use_native_isa)
  if(PBRL_BARE_METAL OR CMAKE_CROSSCOMPILING)
    message(WARNING "PBRL_MARCH_NATIVE is for host trees; ignored in this one (${PBRL_TARGET_NAME})")
    return()
  endif()
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native PBRL_COMPILER_HAS_MARCH_NATIVE)
  if(NOT PBRL_COMPILER_HAS_MARCH_NATIVE)
    message(FATAL_ERROR "PBRL_MARCH_NATIVE: ${CMAKE_CXX_COMPILER} does not take -march=native")
  endif()
  set(flags -march=native)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12's AVX-512 intrinsics (reached through Eigen) warn about their own deliberately
    # undefined operands (GCC PR 105593), hundreds of times per program; the default build keeps
    # these warnings for the programs' own code.
    list(APPEND flags -Wno-uninitialized -Wno-maybe-uninitialized)
  endif()
  set(native "")
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      target_compile_options(${target} PRIVATE ${flags})
      list(APPEND native ${target})
    endif()
  endforeach()
  list(JOIN native ", " native)
  message(STATUS "pbrl: -march=native for ${native}")
endfunction()
