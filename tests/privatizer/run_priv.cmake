# Runs LAUNCH -n RANKS --workers WORKERS EXE and checks EXPECT:
#   pass        exit code 0, a "PASS " line and no "FAIL " line;
#   wrong:RE    the program must detect that it computed the wrong thing: a non-zero exit
#               code and output matching RE (the unprivatized builds).
execute_process(COMMAND ${LAUNCH} -n ${RANKS} --workers ${WORKERS} ${EXE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
set(all "${out}${err}")
string(LENGTH "${all}" len)
if(len GREATER 3000)
  string(SUBSTRING "${all}" 0 3000 all)
endif()
message("${all}")
if(EXPECT STREQUAL "pass")
  if(NOT rc EQUAL 0 OR NOT all MATCHES "(^|\n)PASS " OR all MATCHES "(^|\n)FAIL ")
    message(FATAL_ERROR "expected a passing run (exit code ${rc})")
  endif()
elseif(EXPECT MATCHES "^wrong:(.*)$")
  if(rc EQUAL 0 OR NOT all MATCHES "${CMAKE_MATCH_1}")
    message(FATAL_ERROR "the unprivatized program should have failed its check (exit code ${rc})")
  endif()
else()
  message(FATAL_ERROR "unknown expectation ${EXPECT}")
endif()
