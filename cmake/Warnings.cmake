# stereod_warnings(target): the project's warning set, for C++ and for nvcc's host compiler.
function(stereod_warnings target)
  set(flags -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
            -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2)
  if(STEREOD_WERROR)
    list(APPEND flags -Werror)
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${flags}>)
  # nvcc: warnings of the host compiler on the host part of .cu files.
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=cross-execution-space-call>)
  # Census costs are popcounts: without this, GCC calls libgcc's software popcount for each one
  # (16 % of the CPU engine's time). Every x86-64 CPU since 2008 has POPCNT; AArch64 (Jetson) has
  # a hardware popcount by default.
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-mpopcnt>
                                             $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-mpopcnt>)
  endif()
  if(STEREOD_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
