# cmake -P script behind the pbrl_install_consumer and minimal_install_consumer tests (see
# tests/host_tests.cmake):
#   1. cmake --install <pbrl build tree> --prefix <WORK_DIR>/prefix
#   2. configure CONSUMER_SOURCE_DIR (tests/consumer, examples/minimal) against that prefix only,
#      with the same generator and compilers (and toolchain file, TOOLCHAIN_FILE, for a cross
#      build) and CONSUMER_ARGS; with COPY_SOURCE, a copy of it in <WORK_DIR>/source, so that it
#      reaches nothing of pbrl's tree but through the package. The package it found must be the
#      installed one.
#   3. build it and run it (through its own CTest), which must exit 0.
cmake_minimum_required(VERSION 3.16)

set(consumer_tag consumer)
include("${CMAKE_CURRENT_LIST_DIR}/steps.cmake")
consumer_require(run.cmake PBRL_BINARY_DIR PBRL_LIBRARY CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER CTEST)
consumer_require_built("${PBRL_LIBRARY}" pbrl)

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
set(source "${CONSUMER_SOURCE_DIR}")
file(REMOVE_RECURSE "${prefix}" "${build}" "${WORK_DIR}/source")
file(MAKE_DIRECTORY "${WORK_DIR}")
if(COPY_SOURCE)
  set(source "${WORK_DIR}/source")
  file(COPY "${CONSUMER_SOURCE_DIR}/" DESTINATION "${source}")
endif()

set(config_args "")
consumer_optional_args(config_args CONFIG --config)

# 1. Install.
run_step("install into ${prefix}"
  "${CMAKE_COMMAND}" --install "${PBRL_BINARY_DIR}" --prefix "${prefix}" ${config_args})
file(GLOB_RECURSE config_files "${prefix}/*/pbrlConfig.cmake")
file(GLOB_RECURSE archives "${prefix}/*/libpbrl.a" "${prefix}/*/pbrl.lib")
foreach(f include/pbrl/pbrl.hpp include/pbrl/solver/pbrl.hpp include/pbrl/c/pbrl_c.h include/pbrl/c/detail/c_api.hpp)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "[consumer] ${f} was not installed")
  endif()
endforeach()
if(NOT config_files OR NOT archives)
  message(FATAL_ERROR "[consumer] install is missing pbrlConfig.cmake or the library: ${config_files} ${archives}")
endif()

# 2. Configure the consumer. Only the prefix is searched for pbrl (no package registry, no
#    build tree); Eigen comes from where the library's own build found it.
# --no-warn-unused-cli: a consumer need not read the PBRL_EXPECTED_* checks' variables.
set(configure_args
  -S "${source}" -B "${build}" -G "${GENERATOR}" --no-warn-unused-cli
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"
  "-DPBRL_EXPECTED_PREFIX=${prefix}")
consumer_optional_args(configure_args
  PBRL_VERSION -DPBRL_EXPECTED_VERSION=
  GENERATOR_PLATFORM -A
  GENERATOR_TOOLSET -T
  MAKE_PROGRAM -DCMAKE_MAKE_PROGRAM=
  TOOLCHAIN_FILE -DCMAKE_TOOLCHAIN_FILE=
  EIGEN3_DIR -DEigen3_DIR=)
if(EXPECT_CODEGEN)
  list(APPEND configure_args "-DPBRL_EXPECT_CODEGEN=ON")
endif()
consumer_optional_args(configure_args
  CONFIG -DCMAKE_BUILD_TYPE=
  C_COMPILER -DCMAKE_C_COMPILER=)
list(APPEND configure_args ${CONSUMER_ARGS})
run_step("configure ${source}" "${CMAKE_COMMAND}" ${configure_args})
file(STRINGS "${build}/CMakeCache.txt" found REGEX "^pbrl_DIR:")
string(REGEX REPLACE "^[^=]*=" "" found "${found}")
get_filename_component(found "${found}" REALPATH)
get_filename_component(expected "${prefix}" REALPATH)
string(FIND "${found}/" "${expected}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "[consumer] pbrl found at '${found}', expected under ${prefix}")
endif()

# 3. Build and run.
run_step("build" "${CMAKE_COMMAND}" --build "${build}" ${config_args})
set(ctest_config "")
consumer_optional_args(ctest_config CONFIG -C)
message(STATUS "[consumer] run")
consumer_ctest("${build}" "the consumer program" ${ctest_config} --output-on-failure --verbose)
