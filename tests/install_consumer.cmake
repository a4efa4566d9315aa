# ctest InstallAndConsume: install tacos from a build tree into a fresh prefix, then configure,
# build and run tests/consumer against it through find_package(tacos).
#
#   cmake -DTACOS_BUILD_DIR=<build> -DCONSUMER_SOURCE_DIR=<tests/consumer> -DWORK_DIR=<scratch>
#         [-DCONFIG=Release] [-DGENERATOR=...] [-DMAKE_PROGRAM=...] [-DCXX_COMPILER=...]
#         [-DCXX_FLAGS=...] [-DLINKER_FLAGS=...] (a sanitizer build's flags: its library needs them)
#         -P install_consumer.cmake
#
# WORK_DIR is wiped at the start of every run (a fresh prefix and consumer build each time) and
# removed again when everything passed; on failure it is kept for inspection.
cmake_minimum_required(VERSION 3.20)

foreach(var TACOS_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED CONFIG OR "${CONFIG}" STREQUAL "")
  set(CONFIG Release)
endif()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc COMMAND_ECHO STDOUT)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "InstallAndConsume: ${what} failed (${rc}); files kept in ${WORK_DIR}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# 1. Install the already built project.
run_step("cmake --install" "${CMAKE_COMMAND}" --install "${TACOS_BUILD_DIR}" --prefix "${prefix}"
         --config "${CONFIG}")

# 2. Configure the consumer against the prefix only.
set(configure_args -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_BUILD_TYPE=${CONFIG}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(DEFINED GENERATOR AND NOT "${GENERATOR}" STREQUAL "")
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(DEFINED MAKE_PROGRAM AND NOT "${MAKE_PROGRAM}" STREQUAL "")
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(DEFINED CXX_COMPILER AND NOT "${CXX_COMPILER}" STREQUAL "")
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(DEFINED CXX_FLAGS AND NOT "${CXX_FLAGS}" STREQUAL "")
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
endif()
if(DEFINED LINKER_FLAGS AND NOT "${LINKER_FLAGS}" STREQUAL "")
  list(APPEND configure_args "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
endif()
run_step("configuring tests/consumer" "${CMAKE_COMMAND}" ${configure_args})

# The package must come from the fresh prefix, not from a tacos installed elsewhere.
file(STRINGS "${consumer_build}/CMakeCache.txt" tacos_dir_line REGEX "^tacos_DIR:")
string(REGEX REPLACE "^tacos_DIR:[A-Z]+=" "" tacos_dir "${tacos_dir_line}")
file(REAL_PATH "${prefix}" real_prefix)
if(EXISTS "${tacos_dir}")
  file(REAL_PATH "${tacos_dir}" tacos_dir)
endif()
string(FIND "${tacos_dir}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "InstallAndConsume: find_package(tacos) used '${tacos_dir}', "
                      "not the package installed under ${real_prefix}")
endif()

# 3. Build it.
run_step("building tests/consumer" "${CMAKE_COMMAND}" --build "${consumer_build}"
         --config "${CONFIG}" --parallel 2)

# 4. Run it (single-config generators put it at the top, multi-config ones under CONFIG/).
set(exe "")
foreach(candidate "${consumer_build}/tacos_consumer" "${consumer_build}/${CONFIG}/tacos_consumer"
                  "${consumer_build}/tacos_consumer.exe"
                  "${consumer_build}/${CONFIG}/tacos_consumer.exe")
  if(EXISTS "${candidate}")
    set(exe "${candidate}")
    break()
  endif()
endforeach()
if(exe STREQUAL "")
  message(FATAL_ERROR "InstallAndConsume: no tacos_consumer executable in ${consumer_build}")
endif()
run_step("running the consumer" "${exe}")

file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "InstallAndConsume: passed")
