# pbrl_add_c_api(<target> MANIFEST <manifest.json> [CODEGEN <pbrl-codegen>] [OUTPUT_DIR <dir>])
#
# A static library <target> holding the C interface of a pbrl-codegen manifest's model, for the
# tree's target, which C code links to call pbrl_<name>_*() (tools/codegen/README.md, "The C
# interface"); its users get the generated <name>.h on their include path. At build time:
#   1. pbrl-codegen writes <name>_model.hpp, <name>_pbrl.hpp, <name>.h, <name>_c_api.cpp and
#      <name>_sizes.cpp into OUTPUT_DIR (default: <current binary dir>/<target>); it runs again
#      when the manifest or an array file it read changes (its --depfile);
#   2. <name>_sizes.cpp is compiled with the target's compiler into the object library
#      <target>_sizes, and PbrlCApiSizes.cmake reads the sizes of its arrays (CMAKE_NM, nm -S)
#      into <name>_sizes.h: the workspace's bytes and alignment, which depend on the target's ABI
#      (pointer size, alignment), so that the host tool cannot know them; and the checkpoint's;
#   3. <name>_c_api.cpp is compiled into <target> (-fno-exceptions -fno-rtti); its static_asserts
#      refuse a <name>_sizes.h that does not fit the types.
# CODEGEN: the pbrl-codegen to run, a path or a target (required under add_subdirectory(pbrl),
# which builds no tools unless PBRL_BUILD_TOOLS is ON); default: the pbrl-codegen target of this
# build if there is one (a host tree), else a pbrl-codegen program found next to the installed
# package or on the PATH (a cross build runs a host's). Needs CMake 3.20 (the manifest's name is
# read with string(JSON), and DEPFILE with every generator).
include_guard(GLOBAL)

function(pbrl_add_c_api target)
  # The script beside this file, found from the function's own file: a variable set at include
  # time would live in pbrl's directory scope only, unseen by a caller in a parent project
  # (add_subdirectory(pbrl)).
  set(sizes_script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/PbrlCApiSizes.cmake")
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MANIFEST;CODEGEN;OUTPUT_DIR" "")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_MANIFEST)
    message(FATAL_ERROR "usage: pbrl_add_c_api(<target> MANIFEST <json> [CODEGEN <pbrl-codegen>] [OUTPUT_DIR <dir>])")
  endif()
  if(CMAKE_VERSION VERSION_LESS 3.20)
    message(FATAL_ERROR "pbrl_add_c_api needs CMake 3.20 or newer (this is ${CMAKE_VERSION})")
  endif()
  get_filename_component(manifest "${arg_MANIFEST}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  file(READ "${manifest}" json)
  string(JSON name ERROR_VARIABLE error GET "${json}" name)
  if(error)
    message(FATAL_ERROR "pbrl_add_c_api: ${manifest}: no name (${error})")
  endif()
  # The file names depend on the name: a renamed model reconfigures.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")

  if(arg_CODEGEN)
    set(codegen "${arg_CODEGEN}")
    if(TARGET "${arg_CODEGEN}")
      set(codegen "$<TARGET_FILE:${arg_CODEGEN}>")
    endif()
    # A target, or a file, which also orders the command after a rule that makes the file (an
    # ExternalProject's BUILD_BYPRODUCTS).
    set(codegen_depends "${arg_CODEGEN}")
  elseif(TARGET pbrl-codegen)
    set(codegen "$<TARGET_FILE:pbrl-codegen>")
    set(codegen_depends pbrl-codegen)
  else()
    find_program(PBRL_CODEGEN_EXECUTABLE pbrl-codegen HINTS ${PBRL_CODEGEN_HINTS})
    if(NOT PBRL_CODEGEN_EXECUTABLE)
      message(FATAL_ERROR "pbrl_add_c_api: no pbrl-codegen (build pbrl with -DPBRL_BUILD_TOOLS=ON on the host "
        "and install it, or pass CODEGEN <path>)")
    endif()
    set(codegen "${PBRL_CODEGEN_EXECUTABLE}")
    set(codegen_depends "${PBRL_CODEGEN_EXECUTABLE}")
  endif()

  set(dir "${arg_OUTPUT_DIR}")
  if(NOT dir)
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  endif()
  set(generated "${dir}/${name}_model.hpp" "${dir}/${name}_pbrl.hpp" "${dir}/${name}.h" "${dir}/${name}_c_api.cpp"
                "${dir}/${name}_sizes.cpp")
  # Depfile paths are absolute; NEW: CMake rewrites them for Ninja (no warning in subdirectories).
  cmake_policy(PUSH)
  cmake_policy(SET CMP0116 NEW)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND "${codegen}" "${manifest}" --out "${dir}" --depfile "${dir}/${name}.d"
    DEPENDS "${manifest}" ${codegen_depends}
    DEPFILE "${dir}/${name}.d"
    COMMENT "pbrl-codegen ${name}: model headers and C interface"
    VERBATIM)
  cmake_policy(POP)

  # One target owns the generated files (generators other than Ninja would otherwise run the
  # command once per target that lists them); the others wait for it.
  add_custom_target(${target}_generated DEPENDS ${generated})

  # The probe: compiled like the wrapper, never linked. Not instrumented: AddressSanitizer pads
  # globals, and Clang counts the padding in the symbol's size.
  add_library(${target}_sizes OBJECT "${dir}/${name}_sizes.cpp")
  add_dependencies(${target}_sizes ${target}_generated)
  target_link_libraries(${target}_sizes PRIVATE pbrl::pbrl)
  target_include_directories(${target}_sizes PRIVATE "${dir}")
  target_compile_options(${target}_sizes PRIVATE -fno-exceptions -fno-rtti
                         $<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-fno-sanitize=all>)
  add_custom_command(
    OUTPUT "${dir}/${name}_sizes.h"
    COMMAND "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DOBJECT=$<TARGET_OBJECTS:${target}_sizes>" "-DNAME=${name}"
            "-DCOMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} ${CMAKE_CXX_COMPILER}"
            "-DOUT=${dir}/${name}_sizes.h" -P "${sizes_script}"
    DEPENDS ${target}_sizes "$<TARGET_OBJECTS:${target}_sizes>" "${sizes_script}"
    COMMENT "pbrl ${name}: workspace and checkpoint sizes for this target"
    VERBATIM)
  # Users' sources include <name>.h, which includes <name>_sizes.h: both exist before they compile.
  add_custom_target(${target}_headers DEPENDS "${dir}/${name}_sizes.h")

  add_library(${target} STATIC "${dir}/${name}_c_api.cpp")
  add_dependencies(${target} ${target}_headers)
  target_include_directories(${target} PUBLIC "${dir}")
  target_link_libraries(${target} PUBLIC pbrl::pbrl)
  target_compile_options(${target} PRIVATE -fno-exceptions -fno-rtti -Wall -Wextra)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
endfunction()
