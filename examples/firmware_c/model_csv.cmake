# include(model_csv.cmake), then pbrl_model_csv(<incentive_model.hpp> <dir>)
# Writes each array of the C++ firmware example's model header (examples/firmware/
# incentive_model.hpp, written by pbrl_generate_model) to <dir>/<name>.csv, kReward -> reward.csv,
# kDesignerTransition -> designer_transition.csv: the same numbers (9 significant digits, which
# read back as the same floats) in the form pbrl-codegen reads, so that both examples run one model.
# A file is rewritten only when its numbers change.
function(pbrl_model_csv header dir)
  file(READ "${header}" text)
  string(REGEX MATCHALL "constexpr float k[A-Za-z]+\\[[0-9]+\\] = {[^}]*}" arrays "${text}")
  if(NOT arrays)
    message(FATAL_ERROR "${header}: no arrays")
  endif()
  foreach(array IN LISTS arrays)
    string(REGEX MATCH "k([A-Za-z]+)\\[[0-9]+\\] = {([^}]*)}" _ "${array}")
    set(numbers "${CMAKE_MATCH_2}")
    string(REGEX REPLACE "([A-Z])" "_\\1" name "${CMAKE_MATCH_1}")  # DesignerReward -> _Designer_Reward
    string(SUBSTRING "${name}" 1 -1 name)
    string(TOLOWER "${name}" name)
    string(REPLACE "f" "" numbers "${numbers}")  # 0.68938899f -> 0.68938899
    file(WRITE "${dir}/${name}.csv.tmp" "# ${header}\n${numbers}\n")
    configure_file("${dir}/${name}.csv.tmp" "${dir}/${name}.csv" COPYONLY)
    file(REMOVE "${dir}/${name}.csv.tmp")
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${header}")
endfunction()
