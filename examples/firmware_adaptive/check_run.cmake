# cmake -DQEMU=<qemu-system-arm> -DELF=<pbrl_firmware_adaptive.elf> [-DRATIO_PERCENT=25] [-DMIN_PRIOR_GAP_MICRO=100000] -P check_run.cmake
# Runs the adaptive firmware example under QEMU (instruction counting: SysTick counts
# instructions) and checks what it prints:
#   - the image exits 0 (it stops at the first tick whose device work overran, or a library error);
#   - both runs: "largest tick N of 60000" with N <= 60000;
#   - the second run: the power cut during a checkpoint write, and the reboot resumed from the
#     newest complete checkpoint ("resume: ... PASS");
#   - both runs' final line: the prior alone loses at least MIN_PRIOR_GAP_MICRO millionths on the
#     TRUE model (V(x_true) - V(x_prior): the adaptation has something to win), and the device's x
#     is within RATIO_PERCENT % of that gap of the true-model reference:
#     |V(x_true) - V(x)| <= RATIO_PERCENT % of (V(x_true) - V(x_prior)). 25 % from measurement: the
#     runs end at 7 % and 5 % (docs/adaptation.md, "On the Cortex-M4F").
if(NOT DEFINED RATIO_PERCENT)
  set(RATIO_PERCENT 25)
endif()
if(NOT DEFINED MIN_PRIOR_GAP_MICRO)
  set(MIN_PRIOR_GAP_MICRO 100000)  # 0.1 in millionths
endif()
execute_process(COMMAND ${QEMU} -M mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial none
                        -semihosting-config enable=on,target=native -icount shift=0,sleep=off -kernel ${ELF}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 500)
set(out "${out}${err}")  # semihosting writes to QEMU's stderr
message("${out}")
set(failures "")
if(NOT rc EQUAL 0)
  list(APPEND failures "the image exited with ${rc}")
endif()

# The matches of regex in the output, in var; a failure (naming what) unless there is one per run.
function(one_per_run var regex what)
  string(REGEX MATCHALL "${regex}" matches "${out}")
  list(LENGTH matches n)
  if(NOT n EQUAL 2)
    list(APPEND failures "expected ${what} of 2 runs, found ${n}")
    set(failures "${failures}" PARENT_SCOPE)
  endif()
  set(${var} "${matches}" PARENT_SCOPE)
endfunction()

# Ticks.
one_per_run(ticks "largest tick [0-9]+ of [0-9]+" "the largest tick")
foreach(t IN LISTS ticks)
  string(REGEX MATCH "largest tick ([0-9]+) of ([0-9]+)" _ "${t}")
  if(CMAKE_MATCH_1 GREATER CMAKE_MATCH_2)
    list(APPEND failures "a tick used ${CMAKE_MATCH_1} instructions of ${CMAKE_MATCH_2}")
  endif()
endforeach()

# The power cut and the resume.
if(NOT out MATCHES "power cut while writing checkpoint [0-9]+ ")
  list(APPEND failures "no power cut during a checkpoint write")
endif()
if(NOT out MATCHES "resume: the newest complete checkpoint \\(iteration [0-9]+, [0-9]+ observations\\): PASS")
  list(APPEND failures "the reboot did not resume from the newest complete checkpoint")
endif()

# The comparison, in millionths (the image prints 6 decimals).
function(micro text var)
  string(REPLACE "." "" v "${text}")
  string(REGEX REPLACE "^(-?)0+([0-9])" "\\1\\2" v "${v}")
  set(${var} ${v} PARENT_SCOPE)
endfunction()
one_per_run(finals "final: value -?[0-9]+\\.[0-9]+ x_true -?[0-9]+\\.[0-9]+ x_prior -?[0-9]+\\.[0-9]+"
            "the final values")
set(run 0)
foreach(f IN LISTS finals)
  math(EXPR run "${run} + 1")
  string(REGEX MATCH "value (-?[0-9.]+) x_true (-?[0-9.]+) x_prior (-?[0-9.]+)" _ "${f}")
  micro(${CMAKE_MATCH_1} value)
  micro(${CMAKE_MATCH_2} ref_true)
  micro(${CMAKE_MATCH_3} ref_prior)
  math(EXPR gap "${ref_true} - ${value}")
  math(EXPR prior_gap "${ref_true} - ${ref_prior}")
  if(gap LESS 0)
    math(EXPR gap "-${gap}")
  endif()
  math(EXPR bound "${prior_gap} * ${RATIO_PERCENT} / 100")
  message("run ${run}: |V(x_true) - V(x)| = ${gap}e-6, V(x_true) - V(x_prior) = ${prior_gap}e-6, bound ${bound}e-6")
  if(prior_gap LESS MIN_PRIOR_GAP_MICRO)
    list(APPEND failures "run ${run}: the prior alone's gap ${prior_gap}e-6 is under ${MIN_PRIOR_GAP_MICRO}e-6")
  endif()
  if(gap GREATER bound)
    list(APPEND failures "run ${run}: the device's gap ${gap}e-6 exceeds ${RATIO_PERCENT}% of the prior alone's (${bound}e-6)")
  endif()
endforeach()

if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "firmware_adaptive_run failed:\n  ${failures}")
endif()
message("firmware_adaptive_run: ticks, power-cut resume and the comparison with the references hold")
