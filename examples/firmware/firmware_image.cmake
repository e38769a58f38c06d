# pbrl_firmware_image(<target> <source>...): a Cortex-M4F image of the firmware examples
# (examples/firmware, examples/firmware_adaptive) with this directory's startup and linker script
# (no C library startup, no semihosting library: board.hpp talks to the debugger directly), so the
# linked image shows what a product firmware links: <target>.elf and its map <target>.elf.map.
# It also takes rdimon out of the calling directory's CMAKE_EXE_LINKER_FLAGS: the toolchain links
# test images with rdimon (semihosting newlib and its crt0); these images bring their own startup.
set(_pbrl_firmware_dir "${CMAKE_CURRENT_LIST_DIR}")

function(pbrl_firmware_image target)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE pbrl::pbrl)
  # -fno-threadsafe-statics: no guard calls (__cxa_guard_*) for function statics on a single core.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
    $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti -fno-threadsafe-statics>)
  target_link_options(${target} PRIVATE
    -nostartfiles --specs=nano.specs
    "-T${_pbrl_firmware_dir}/firmware.ld"
    "-Wl,-Map=$<TARGET_FILE:${target}>.map"
    -Wl,--print-memory-usage)
  set_target_properties(${target} PROPERTIES
    SUFFIX ".elf"
    LINK_DEPENDS "${_pbrl_firmware_dir}/firmware.ld")
  string(REPLACE "--specs=rdimon.specs" "" flags "${CMAKE_EXE_LINKER_FLAGS}")
  set(CMAKE_EXE_LINKER_FLAGS "${flags}" PARENT_SCOPE)
endfunction()
