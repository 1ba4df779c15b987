# SPDX-License-Identifier: MIT
# Run at build time (cmake -P): ask a cmocka test binary for its cases and
# write one ctest test per case, so each case runs in its own process with its
# own timeout. Fails the build if the binary lists nothing. TEST_PROCESSORS
# (default 1): the ctest slots each case takes; TEST_SLOW: the cases ('|'
# between them) that ctest -j starts early (COST 100; tests/CMakeLists.txt,
# the end).
cmake_policy(SET CMP0057 NEW) # if(... IN_LIST ...) in script mode
string(REPLACE "|" ";" TEST_ENV "${TEST_ENV}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${TEST_ENV} ${TEST_EXE} --list
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_EXE} --list failed (${rc})")
endif()
string(REPLACE "\n" ";" cases "${out}")
string(REPLACE "|" ";" TEST_SLOW "${TEST_SLOW}")
if(NOT TEST_PROCESSORS)
  set(TEST_PROCESSORS 1)
endif()
set(content "")
set(count 0)
foreach(case IN LISTS cases)
  if(case STREQUAL "")
    continue()
  endif()
  math(EXPR count "${count} + 1")
  string(APPEND content "add_test([=[${TEST_PREFIX}.${case}]=] [==[${TEST_EXE}]==] [=[${case}]=])\n")
  set(cost 0)
  if(case IN_LIST TEST_SLOW)
    set(cost 100)
  endif()
  string(APPEND content "set_tests_properties([=[${TEST_PREFIX}.${case}]=] PROPERTIES TIMEOUT ${TEST_TIMEOUT} LABELS [=[${TEST_LABELS}]=] ENVIRONMENT [=[${TEST_ENV}]=] PROCESSORS ${TEST_PROCESSORS} COST ${cost})\n")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXE} lists no test case")
endif()
file(WRITE ${OUT_FILE} "${content}")
