# cmake -DNM=<nm> -DELF=<image> [-DARCHIVE=ON] -P check_symbols.cmake
# Fails if the linked image (or, with ARCHIVE, a static library's objects) defines or references
# heap allocation, C++ allocation or exception unwinding: a firmware linking pbrl must hold none
# of them.
execute_process(COMMAND ${NM} ${ELF} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${ELF} failed")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
list(LENGTH lines count)
if(count LESS 10 OR (NOT ARCHIVE AND NOT symbols MATCHES " T main\n"))
  message(FATAL_ERROR "${ELF}: no symbol table to check")
endif()
set(forbidden
  "malloc" "free" "calloc" "realloc" "_malloc_r" "_free_r" "_calloc_r" "_realloc_r" "_sbrk" "_sbrk_r"
  "_Znw[jm].*" "_Zna[jm].*" "_Zdl.*" "_Zda.*"                 # operator new/delete (all forms)
  "__cxa_allocate_exception" "__cxa_throw" "__cxa_begin_catch" "__cxa_guard_acquire"
  "__gxx_personality_v0" "_Unwind_[A-Za-z_]*" "__aeabi_unwind_cpp_pr[0-2]")
set(found "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F ]* ?[A-Za-z] ([^ ]+)$")
    set(name "${CMAKE_MATCH_1}")
    if(name MATCHES "^(_Zn[wa][jm]Pv|_Zd[la]PvS_)$")
      continue()  # placement new and delete: they construct in given storage, allocating nothing
    endif()
    foreach(pattern IN LISTS forbidden)
      if(name MATCHES "^${pattern}$")
        list(APPEND found "${name}")
      endif()
    endforeach()
  endif()
endforeach()
if(found)
  list(REMOVE_DUPLICATES found)
  # One unwrapped line (FATAL_ERROR wraps its text at the terminal width) for tests to match.
  string(JOIN " " listed ${found})
  message("pbrl-forbidden-symbols: ${listed}")
  message(FATAL_ERROR "${ELF} links forbidden symbols: ${found}")
endif()
message(STATUS "${ELF}: ${count} symbols, no heap, operator new/delete or unwinder")
