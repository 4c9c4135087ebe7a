// The fuzz targets' common interface: libFuzzer's entry point. Each target is built twice: with
// mutation_driver.cpp (GCC, AddressSanitizer and UndefinedBehaviorSanitizer: a seeded mutation run
// of fixed length, in every CI run) and, where clang's libFuzzer is present, as a coverage-guided
// libFuzzer binary. A target returns 0; a failed property aborts (std::abort, or an exception
// that escapes), which both drivers report with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace stereod::fuzz {

// Aborts (reported as a crash) unless `ok`, saying what did not hold.
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz property failed: %s\n", what);
  std::abort();
}

}  // namespace stereod::fuzz
