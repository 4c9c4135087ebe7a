#include "cpu_features.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace stereod {
namespace {

bool cpu_has_avx2() {
#if STEREOD_X86_AVX2_PATHS
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

std::atomic<bool>& wide() {
  static std::atomic<bool> on{[] {
    const char* env = std::getenv("STEREOD_CPU_VECTORS");
    return cpu_has_avx2() && !(env && std::strcmp(env, "baseline") == 0);
  }()};
  return on;
}

}  // namespace

bool wide_vectors() {
  return wide().load(std::memory_order_relaxed);
}

void set_wide_vectors(bool on) {
  wide().store(on && cpu_has_avx2(), std::memory_order_relaxed);
}

}  // namespace stereod
