#include <stdexcept>

#include "cpu_engine.hpp"
#include "engine.hpp"

#if defined(STEREOD_HAVE_CUDA)
#include "cuda_device.hpp"
#include "cuda_engine.hpp"
#endif

namespace stereod {

bool cuda_engine_available(std::string* why) {
#if defined(STEREOD_HAVE_CUDA)
  return cuda_device_usable(0, why);
#else
  if (why) *why = "this build has no CUDA engine (no CUDA compiler at configure time)";
  return false;
#endif
}

std::unique_ptr<Engine> make_engine(std::string_view kind, const EngineOptions& options) {
  if (kind == "cpu") return make_cpu_engine(options);
  if (kind == "cuda" || kind == "auto") {
    std::string why;
    if (cuda_engine_available(&why)) {
#if defined(STEREOD_HAVE_CUDA)
      return make_cuda_engine(options);
#endif
    }
    if (kind == "cuda") throw std::runtime_error("cuda engine unavailable: " + why);
    return make_cpu_engine(options);
  }
  throw std::invalid_argument("engine = \"" + std::string(kind) +
                              "\": unknown engine (expected auto, cuda or cpu)");
}

}  // namespace stereod
