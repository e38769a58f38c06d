# cmake -P script behind the pbrl_subdirectory_consumer test (tests/host_tests.cmake): configures
# tests/consumer/subdirectory (add_subdirectory(pbrl) + pbrl_add_c_api with CODEGEN) with the same
# generator and compilers, builds it and runs it (its own CTest), which must exit 0.
cmake_minimum_required(VERSION 3.20)

set(consumer_tag "subdirectory consumer")
include("${CMAKE_CURRENT_LIST_DIR}/steps.cmake")
consumer_require(run_subdirectory.cmake PBRL_SOURCE_DIR CODEGEN WORK_DIR GENERATOR C_COMPILER CXX_COMPILER CTEST)
consumer_require_built("${CODEGEN}" pbrl-codegen)

file(REMOVE_RECURSE "${WORK_DIR}")
set(args -S "${PBRL_SOURCE_DIR}/tests/consumer/subdirectory" -B "${WORK_DIR}" -G "${GENERATOR}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DCMAKE_BUILD_TYPE=Release
    "-DPBRL_SOURCE_DIR=${PBRL_SOURCE_DIR}" "-DPBRL_CODEGEN=${CODEGEN}")
consumer_optional_args(args MAKE_PROGRAM -DCMAKE_MAKE_PROGRAM= EIGEN3_DIR -DEigen3_DIR=)
run_step("configure" "${CMAKE_COMMAND}" ${args})
run_step("build" "${CMAKE_COMMAND}" --build "${WORK_DIR}")
consumer_ctest("${WORK_DIR}" "the C program" --output-on-failure)
