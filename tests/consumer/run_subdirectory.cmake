# cmake -P script behind the pbrl_subdirectory_consumer test (tests/host_tests.cmake): configures
# tests/consumer/subdirectory (add_subdirectory(pbrl) + pbrl_add_c_api with CODEGEN) with the same
# generator and compilers, builds it and runs it (its own CTest), which must exit 0.
cmake_minimum_required(VERSION 3.20)

foreach(var PBRL_SOURCE_DIR CODEGEN WORK_DIR GENERATOR C_COMPILER CXX_COMPILER CTEST)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_subdirectory.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${CODEGEN}")
  message(FATAL_ERROR "pbrl-codegen is not built (${CODEGEN} is missing): run `cmake --build` before ctest")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
function(run_step what)
  message(STATUS "[subdirectory consumer] ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[subdirectory consumer] ${what} failed (${rc})")
  endif()
endfunction()

set(args -S "${PBRL_SOURCE_DIR}/tests/consumer/subdirectory" -B "${WORK_DIR}" -G "${GENERATOR}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DCMAKE_BUILD_TYPE=Release
    "-DPBRL_SOURCE_DIR=${PBRL_SOURCE_DIR}" "-DPBRL_CODEGEN=${CODEGEN}")
if(NOT "${MAKE_PROGRAM}" STREQUAL "")
  list(APPEND args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(NOT "${EIGEN3_DIR}" STREQUAL "")
  list(APPEND args "-DEigen3_DIR=${EIGEN3_DIR}")
endif()
run_step("configure" "${CMAKE_COMMAND}" ${args})
run_step("build" "${CMAKE_COMMAND}" --build "${WORK_DIR}")
execute_process(COMMAND "${CTEST}" --output-on-failure WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "[subdirectory consumer] the C program failed (${rc})")
endif()
message(STATUS "[subdirectory consumer] ok")
