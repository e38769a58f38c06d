# cmake -DNM=<nm> -DOBJECT=<name>_sizes.cpp's object -DNAME=<name> -DCOMPILER=<what compiled it>
#       -DOUT=<name>_sizes.h -P PbrlCApiSizes.cmake
# Writes <name>_sizes.h from the probe object pbrl-codegen's <name>_sizes.cpp compiles to: each
# constant is the size of one array there (nm -S), measured for the compiler's target. The file is
# rewritten only when a number changes, so nothing recompiles otherwise (pbrl_add_c_api).
foreach(var NM OBJECT NAME OUT)
  if("${${var}}" STREQUAL "")
    message(FATAL_ERROR "PbrlCApiSizes.cmake: -D${var}=... is required")
  endif()
endforeach()
execute_process(COMMAND "${NM}" -S "${OBJECT}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -S ${OBJECT} failed")
endif()
string(TOUPPER "${NAME}" upper)
set(defines "")
foreach(what WORKSPACE_BYTES WORKSPACE_ALIGN CHECKPOINT_BYTES POINTER_BYTES VALUE_WORKSPACE_BYTES VALUE_WORKSPACE_ALIGN)
  string(TOLOWER "${what}" lower)
  # "<address> <size> <type> <name>", sizes in hex.
  if(NOT symbols MATCHES "[0-9a-fA-F]+ ([0-9a-fA-F]+) [A-Za-z] pbrl_${NAME}_probe_${lower}\r?\n")
    message(FATAL_ERROR "${OBJECT}: no size for pbrl_${NAME}_probe_${lower} in:\n${symbols}")
  endif()
  math(EXPR value "0x${CMAKE_MATCH_1}" OUTPUT_FORMAT DECIMAL)
  string(APPEND defines "#define PBRL_${upper}_${what} ${value}\n")
endforeach()
file(WRITE "${OUT}.tmp"
  "/* Measured by the build (PbrlCApiSizes.cmake) from ${NAME}_sizes.cpp as compiled by\n"
  " * ${COMPILER}; do not edit. The workspace's size and alignment\n"
  " * depend on the target's ABI; the checkpoint image is the same on every target. */\n"
  "#ifndef PBRL_${upper}_SIZES_H\n#define PBRL_${upper}_SIZES_H\n\n${defines}\n#endif\n")
configure_file("${OUT}.tmp" "${OUT}" COPYONLY)
file(REMOVE "${OUT}.tmp")
