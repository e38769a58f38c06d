# Tests for programs with an operating system (included by tests/CMakeLists.txt when
# PBRL_BARE_METAL is OFF): the host, and the Linux cross builds, whose programs run under QEMU
# user-mode emulation (CTest puts CMAKE_CROSSCOMPILING_EMULATOR in front of them).

# --- No heap use in any API call ---------------------------------------------------------------
# test_no_allocation.cpp replaces malloc/calloc/realloc/free and every operator new/delete of
# its program and forwards them to glibc's __libc_* allocator, so it is a program of its own and
# needs glibc. Sanitizers replace the allocator themselves, so the test is left out with them.
# Under qemu-user the trap works as on the host: it replaces the allocator of the emulated program
# and its cross glibc; the emulator's own allocations are host code it never sees.
include(CheckCXXSourceCompiles)
check_cxx_source_compiles([=[
#include <cstddef>
extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_memalign(std::size_t, std::size_t);
extern "C" void __libc_free(void*);
int main() {
  void* p = __libc_malloc(8);
  void* q = __libc_memalign(64, 8);
  __libc_free(p);
  __libc_free(q);
  return 0;
}
]=] PBRL_HAVE_LIBC_ALLOCATOR)

if(PBRL_HAVE_LIBC_ALLOCATOR AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  pbrl_add_doctest_executable(pbrl_no_allocation_tests test_no_allocation.cpp)
  target_compile_definitions(pbrl_no_allocation_tests PRIVATE PBRL_TEST_SCALAR=${PBRL_TEST_SCALAR})
  # Bind every symbol at load time: lazy binding must not run inside an armed region.
  target_link_options(pbrl_no_allocation_tests PRIVATE -Wl,-z,now)
  pbrl_add_test(pbrl_no_allocation_tests pbrl_no_allocation_tests)
else()
  message(STATUS "pbrl: allocation-trap test skipped (needs glibc's __libc_malloc, no sanitizers)")
endif()

# --- The installed package works for a separate project ----------------------------------------
# consumer/run.cmake installs this build tree into a prefix under the build directory, then
# configures, builds and runs tests/consumer (find_package(pbrl CONFIG REQUIRED) + pbrl::pbrl)
# with the same generator, compilers and toolchain file. CTest runs after the build, and the
# script refuses to run if the library file is missing. A cross build hands its toolchain file on,
# so the consumer finds Eigen and pbrl the same way and its own CTest runs it under the same
# emulator. A cross build without a toolchain file (compilers given on the command line) could
# not run the consumer, so it gets no such test.
set(_pbrl_consumer ON)
set(_pbrl_toolchain "")
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  # The consumer is built without the sanitizer flags, so it could not link a sanitized libpbrl.a.
  set(_pbrl_consumer OFF)
  message(STATUS "pbrl: install-consumer test skipped (sanitizer build)")
endif()
if(_pbrl_consumer AND CMAKE_CROSSCOMPILING)
  if(CMAKE_TOOLCHAIN_FILE)
    # CMake accepts a toolchain path relative to the build or the source directory.
    get_filename_component(_pbrl_toolchain "${CMAKE_TOOLCHAIN_FILE}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
    if(NOT EXISTS "${_pbrl_toolchain}")
      get_filename_component(_pbrl_toolchain "${CMAKE_TOOLCHAIN_FILE}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}")
    endif()
  else()
    set(_pbrl_consumer OFF)
    message(STATUS "pbrl: install-consumer test skipped (a cross build needs a toolchain file for it)")
  endif()
endif()
if(_pbrl_consumer)
  add_test(NAME pbrl_install_consumer
    COMMAND "${CMAKE_COMMAND}"
      "-DPBRL_BINARY_DIR=${pbrl_BINARY_DIR}"
      "-DPBRL_LIBRARY=$<TARGET_FILE:pbrl>"
      "-DPBRL_VERSION=${pbrl_VERSION}"
      "-DCONSUMER_SOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/consumer"
      "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer"
      "-DCONFIG=$<CONFIG>"
      "-DGENERATOR=${CMAKE_GENERATOR}"
      "-DGENERATOR_PLATFORM=${CMAKE_GENERATOR_PLATFORM}"
      "-DGENERATOR_TOOLSET=${CMAKE_GENERATOR_TOOLSET}"
      "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DTOOLCHAIN_FILE=${_pbrl_toolchain}"
      "-DEIGEN3_DIR=${Eigen3_DIR}"
      "-DCTEST=${CMAKE_CTEST_COMMAND}"
      "-DEXPECT_CODEGEN=${PBRL_BUILD_TOOLS}"
      -P "${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.cmake")
  set_tests_properties(pbrl_install_consumer PROPERTIES TIMEOUT 900 LABELS "install")
endif()
# The same script with a copy of examples/minimal out of the tree (docs/firmware.md, "The minimal
# example out of the tree"): built against the installed package and pbrl-codegen, its host run
# compared with reference.txt by its own CTest. Host trees with the tools and the examples, whose
# configure found the Python with numpy that the copy's search finds again (or PBRL_PYTHON's).
if(_pbrl_consumer AND NOT CMAKE_CROSSCOMPILING AND TARGET pbrl-codegen AND PBRL_BUILD_EXAMPLES)
  add_test(NAME minimal_install_consumer
    COMMAND "${CMAKE_COMMAND}"
      "-DPBRL_BINARY_DIR=${pbrl_BINARY_DIR}"
      "-DPBRL_LIBRARY=$<TARGET_FILE:pbrl>"
      "-DCONSUMER_SOURCE_DIR=${PROJECT_SOURCE_DIR}/examples/minimal"
      -DCOPY_SOURCE=ON
      "-DCONSUMER_ARGS=-DPBRL_PYTHON=${PBRL_PYTHON}"
      "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/minimal_consumer"
      "-DCONFIG=$<CONFIG>"
      "-DGENERATOR=${CMAKE_GENERATOR}"
      "-DGENERATOR_PLATFORM=${CMAKE_GENERATOR_PLATFORM}"
      "-DGENERATOR_TOOLSET=${CMAKE_GENERATOR_TOOLSET}"
      "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      "-DC_COMPILER=${CMAKE_C_COMPILER}"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DEIGEN3_DIR=${Eigen3_DIR}"
      "-DCTEST=${CMAKE_CTEST_COMMAND}"
      -P "${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.cmake")
  set_tests_properties(minimal_install_consumer PROPERTIES TIMEOUT 900 LABELS "install")
endif()
# consumer/run_subdirectory.cmake: the other documented route, add_subdirectory(pbrl) and
# pbrl_add_c_api(... CODEGEN <this tree's pbrl-codegen>), on host trees that build the tool.
if(_pbrl_consumer AND NOT CMAKE_CROSSCOMPILING AND TARGET pbrl-codegen)
  add_test(NAME pbrl_subdirectory_consumer
    COMMAND "${CMAKE_COMMAND}"
      "-DPBRL_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "-DCODEGEN=$<TARGET_FILE:pbrl-codegen>"
      "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/subdirectory_consumer"
      "-DGENERATOR=${CMAKE_GENERATOR}"
      "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      "-DC_COMPILER=${CMAKE_C_COMPILER}"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DEIGEN3_DIR=${Eigen3_DIR}"
      "-DCTEST=${CMAKE_CTEST_COMMAND}"
      -P "${CMAKE_CURRENT_SOURCE_DIR}/consumer/run_subdirectory.cmake")
  set_tests_properties(pbrl_subdirectory_consumer PROPERTIES TIMEOUT 900 LABELS "install")
endif()
