# SPDX-License-Identifier: MIT
# Runs examples/child_cpu_time on a shell loop that burns CPU and checks its
# output: exit code 0, a user time of at least 30 ms, a kernel time, and an
# elapsed time no shorter than the CPU time of the (single-threaded) child.
#   cmake -DEXAMPLE=/path/to/child_cpu_time -P check_child_cpu_time.cmake
set(cmdline "sh -c \"i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\"")
execute_process(COMMAND "${EXAMPLE}" "${cmdline}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "child_cpu_time printed:\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "child_cpu_time failed with ${rc}")
endif()

function(duration_ms label var)
  if(NOT out MATCHES "${label} +([0-9][0-9]):([0-9][0-9]):([0-9][0-9])\\.([0-9][0-9][0-9])")
    message(FATAL_ERROR "no '${label}' line")
  endif()
  set(parts ${CMAKE_MATCH_1} ${CMAKE_MATCH_2} ${CMAKE_MATCH_3} ${CMAKE_MATCH_4})
  # Leading zeros would read as octal in math(EXPR): strip them.
  set(i 0)
  foreach(part IN LISTS parts)
    math(EXPR i "${i} + 1")
    string(REGEX REPLACE "^0+([0-9])" "\\1" p${i} "${part}")
  endforeach()
  math(EXPR ms "((${p1} * 60 + ${p2}) * 60 + ${p3}) * 1000 + ${p4}")
  set(${var} ${ms} PARENT_SCOPE)
endfunction()

if(NOT out MATCHES "Exit code: +0\n")
  message(FATAL_ERROR "the child did not exit with 0")
endif()
if(NOT out MATCHES "Started: +20[0-9][0-9]-[01][0-9]-[0-3][0-9] ")
  message(FATAL_ERROR "no plausible start date")
endif()
duration_ms("Elapsed:" elapsed)
duration_ms("Kernel time:" kernel)
duration_ms("User time:" user)
if(user LESS 30)
  message(FATAL_ERROR "user time ${user} ms: the loop burns far more")
endif()
math(EXPR cpu "${user} + ${kernel}")
# Creation is floored to a 10 ms tick; the CPU time is in whole ms here.
math(EXPR limit "${elapsed} + 12")
if(cpu GREATER limit)
  message(FATAL_ERROR "CPU ${cpu} ms exceeds elapsed ${elapsed} ms for a single-threaded child")
endif()
message(STATUS "example OK: elapsed ${elapsed} ms, kernel ${kernel} ms, user ${user} ms")
