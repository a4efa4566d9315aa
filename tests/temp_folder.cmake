# The tests' system temp folder (TMPDIR for every GoogleTest case, see CMakeLists.txt):
# MODE=setup empties it before the tests, MODE=check fails when a test left anything in it
# (each test process keeps its files in a private folder that it removes at exit).
if(MODE STREQUAL "setup")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
elseif(MODE STREQUAL "check")
  file(GLOB left LIST_DIRECTORIES true "${DIR}/*")
  if(left)
    list(LENGTH left count)
    list(SUBLIST left 0 5 some)
    message(FATAL_ERROR "tests left ${count} file(s) in their temp folder ${DIR}: ${some}")
  endif()
else()
  message(FATAL_ERROR "MODE must be setup or check")
endif()
