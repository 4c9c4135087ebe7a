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
  # The x86-64 level the host code targets (STEREOD_X86_ARCH, CMakeLists.txt): census costs are
  # popcounts (without POPCNT, GCC calls libgcc's software popcount for each one), and the CPU
  # engine's vector loops want SSE4.1's 16-bit min/max. AArch64 (Jetson) has both (NEON) by
  # default.
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND STEREOD_X86_ARCH)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-march=${STEREOD_X86_ARCH}>
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-march=${STEREOD_X86_ARCH}>)
  endif()
  if(STEREOD_SANITIZE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
