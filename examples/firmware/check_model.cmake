# cmake -DGENERATOR=<pbrl_generate_model> -DEXPECTED=<committed header> -DOUT=<scratch file> -P check_model.cmake
# The firmware's model header is generated but committed (a cross build cannot run host tools);
# this regenerates it with the seed it records and fails if the committed copy differs.
file(STRINGS ${EXPECTED} first LIMIT_COUNT 1)
if(NOT first MATCHES "--seed ([0-9]+)")
  message(FATAL_ERROR "${EXPECTED}: no seed in its first line")
endif()
execute_process(COMMAND ${GENERATOR} --seed ${CMAKE_MATCH_1} --out ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GENERATOR} failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${EXPECTED} RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "${EXPECTED} is stale: regenerate it with ${GENERATOR} --seed ${CMAKE_MATCH_1} --out ${EXPECTED}")
endif()
