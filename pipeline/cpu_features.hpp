// The vector width of the CPU engine's hottest loops, chosen once per process. The code is plain
// C++ that the compiler vectorises; on x86-64 (GCC or Clang) those loops are also compiled for AVX2
// (twice the lanes of the SSE4.2 baseline, three-operand instructions) and run so where the CPU
// has it. Other targets use their baseline (NEON on arm64). Both paths compute the same integers;
// the tests run each (STEREOD_CPU_VECTORS=baseline in the environment turns AVX2 off).
#pragma once

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define STEREOD_X86_AVX2_PATHS 1
// Compiles a function for AVX2 (and what AVX2 implies), whatever the baseline.
#define STEREOD_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define STEREOD_X86_AVX2_PATHS 0
#define STEREOD_TARGET_AVX2
#endif

namespace stereod {

// True when the AVX2 versions run: built for x86-64, the CPU has AVX2, and neither the environment
// (STEREOD_CPU_VECTORS=baseline) nor set_wide_vectors(false) says otherwise.
bool wide_vectors();
// For tests: force the baseline (false) or AVX2 where the CPU has it (true).
void set_wide_vectors(bool on);

}  // namespace stereod
