# cmake -DPROGRAM=<experiment> -DARGS=<options;...> -DOUT=<dir> -DCSV=<file name> -P check_jobs.cmake
# The experiments run their instances on --jobs threads and merge the results in instance order:
# the CSV must not depend on the number of threads.
foreach(jobs IN ITEMS 1 2)
  execute_process(COMMAND ${PROGRAM} ${ARGS} --jobs ${jobs} --out ${OUT}/jobs${jobs} RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} --jobs ${jobs} failed")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/jobs1/${CSV} ${OUT}/jobs2/${CSV} RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "${CSV} differs between --jobs 1 and --jobs 2")
endif()
