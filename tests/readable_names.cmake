# Fails when a parameterised GoogleTest case is listed with raw bytes ("40-byte object <...>")
# or a bare index ("Suite/Test/3") instead of a readable name and value (tests/test_printers.h).
execute_process(COMMAND "${TESTS}" --gtest_list_tests OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TESTS} --gtest_list_tests failed (${rc})")
endif()
string(REGEX MATCHALL "[^\n]*byte object[^\n]*" raw "${listing}")
string(REGEX MATCHALL "\n  [^\n ]*/[0-9]+  #[^\n]*" numbered "${listing}")
if(raw OR numbered)
  list(LENGTH raw r)
  list(LENGTH numbered n)
  message(FATAL_ERROR "${r} case(s) print raw bytes and ${n} have a bare index as name, e.g. "
                      "${raw}${numbered}")
endif()
