# stereod_normalize_pkg_target(target): one stable form for an imported target made by
# pkg_check_modules(... IMPORTED_TARGET).
#
# A .pc file may give "-isystem DIR" in its Cflags (libzmq does, for /usr/include/mit-krb5 through
# its gssapi dependency). On the configure that runs pkg-config, CMake moves such directories into
# the target's include directories; on every later configure it rebuilds the target from the
# cache, where they are still compile options. The flags of every file that includes zmq.hpp then
# change between the first and the second configure, and Ninja rebuilds them all. This puts
# "-isystem DIR" into the include directories (which the target marks as system ones) every time.
function(stereod_normalize_pkg_target target)
  get_target_property(options ${target} INTERFACE_COMPILE_OPTIONS)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT options)
    set(options "")
  endif()
  if(NOT dirs)
    set(dirs "")
  endif()
  set(kept "")
  set(next_is_dir OFF)
  foreach(option IN LISTS options)
    if(next_is_dir)
      list(APPEND dirs "${option}")
      set(next_is_dir OFF)
    elseif(option STREQUAL "-isystem")
      set(next_is_dir ON)
    elseif(option MATCHES "^-isystem(.+)$")
      list(APPEND dirs "${CMAKE_MATCH_1}")
    else()
      list(APPEND kept "${option}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${dirs}")
  set_property(TARGET ${target} PROPERTY INTERFACE_COMPILE_OPTIONS "${kept}")
endfunction()
