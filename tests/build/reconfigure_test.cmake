# A second configure of a build folder must not change a single build command (issue 14: it used
# to reorder an -isystem flag and so rebuild half the tree). Configures a fresh folder twice and
# compares every command Ninja would run.
#   cmake -DSOURCE=... -DWORK=... -DNINJA=... -P reconfigure_test.cmake
foreach(var SOURCE WORK NINJA)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "reconfigure_test: -D${var}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")

function(configure_and_list out)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G Ninja
            "-DCMAKE_MAKE_PROGRAM=${NINJA}" -DCMAKE_BUILD_TYPE=Release -DSTEREOD_WITH_CUDA=OFF
    RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure failed:\n${log}")
  endif()
  execute_process(COMMAND "${NINJA}" -C "${WORK}" -t commands
    RESULT_VARIABLE rc OUTPUT_VARIABLE commands ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ninja -t commands failed: ${err}")
  endif()
  set(${out} "${commands}" PARENT_SCOPE)
endfunction()

configure_and_list(first)
configure_and_list(second)
file(REMOVE_RECURSE "${WORK}")
if(NOT first STREQUAL second)
  string(REPLACE "\n" ";" a "${first}")
  string(REPLACE "\n" ";" b "${second}")
  list(LENGTH a n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    list(GET a ${i} la)
    list(GET b ${i} lb)
    if(NOT la STREQUAL lb)
      message(FATAL_ERROR "the second configure changed a build command:\nfirst:  ${la}\nsecond: ${lb}")
    endif()
  endforeach()
  message(FATAL_ERROR "the second configure changed the number of build commands")
endif()
string(REGEX MATCHALL "\n" lines "${first}")
list(LENGTH lines count)
message(STATUS "${count} build commands, the same after a second configure")
