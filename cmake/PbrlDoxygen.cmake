# The API reference (docs/Doxyfile.in): the target pbrl_doxygen runs Doxygen over the public headers
# (the Doxyfile's INPUT; an undocumented member there is a warning) into <build>/doxygen/html, where
# doxygen is found (scripts/install-deps installs it, Debian doxygen).
# Sets PBRL_DOXYFILE for the test that runs it (tests/CMakeLists.txt).
find_package(Doxygen QUIET)
if(NOT TARGET Doxygen::doxygen)
  message(STATUS "pbrl: doxygen not found: no API reference (target pbrl_doxygen)")
  return()
endif()
set(PBRL_DOXYGEN_DIR "${PROJECT_BINARY_DIR}/doxygen")
set(PBRL_DOXYFILE "${PROJECT_BINARY_DIR}/Doxyfile")
configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${PBRL_DOXYFILE}" @ONLY)
add_custom_target(pbrl_doxygen
  COMMAND Doxygen::doxygen "${PBRL_DOXYFILE}"
  COMMENT "Doxygen: the API reference in ${PBRL_DOXYGEN_DIR}/html"
  VERBATIM)
