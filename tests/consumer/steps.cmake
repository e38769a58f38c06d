# Shared by the consumer tests' cmake -P scripts (run.cmake, run_subdirectory.cmake): the checks
# of their -D arguments and the steps they run. The including script sets consumer_tag, the tag
# of its messages ([consumer] ...), first.

# Fails unless each variable named is defined and not empty (script: the including script's name).
function(consumer_require script)
  foreach(var IN LISTS ARGN)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
      message(FATAL_ERROR "${script}: -D${var}=... is required")
    endif()
  endforeach()
endfunction()

# Fails unless the file at path, the built target what, exists: the tests run after the build.
function(consumer_require_built path what)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "${what} is not built (${path} is missing): run `cmake --build` before ctest")
  endif()
endfunction()

# Runs the command after what; fails unless it exits 0.
function(run_step what)
  message(STATUS "[${consumer_tag}] ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[${consumer_tag}] ${what} failed (${rc})")
  endif()
endfunction()

# Appends to the list named, for each pair <variable> <option> whose variable is not empty, the
# option with its value: one argument <option><value> for an option that ends in '=' (-DX=),
# the option and the value otherwise (-A <value>).
function(consumer_optional_args _consumer_list)
  # Prefixed names: the caller's variables, read by name here, must not be hidden by these.
  set(_consumer_out "${${_consumer_list}}")
  set(_consumer_pairs ${ARGN})
  while(_consumer_pairs)
    list(POP_FRONT _consumer_pairs _consumer_var _consumer_option)
    if(NOT "${${_consumer_var}}" STREQUAL "")
      if(_consumer_option MATCHES "=$")
        list(APPEND _consumer_out "${_consumer_option}${${_consumer_var}}")
      else()
        list(APPEND _consumer_out ${_consumer_option} "${${_consumer_var}}")
      endif()
    endif()
  endwhile()
  set(${_consumer_list} "${_consumer_out}" PARENT_SCOPE)
endfunction()

# Runs the consumer's own CTest in build (with the options given); fails with what unless it
# passes.
function(consumer_ctest build what)
  execute_process(COMMAND "${CTEST}" ${ARGN} WORKING_DIRECTORY "${build}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "[${consumer_tag}] ${what} failed (${rc})")
  endif()
  message(STATUS "[${consumer_tag}] ok")
endfunction()
