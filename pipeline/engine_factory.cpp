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

std::shared_ptr<EngineGroup> make_engine_group() {
#if defined(STEREOD_HAVE_CUDA)
  return make_cuda_engine_group();
#else
  return std::make_shared<EngineGroup>();
#endif
}

std::shared_ptr<std::uint8_t> allocate_pinned(std::size_t bytes) {
#if defined(STEREOD_HAVE_CUDA)
  if (cuda_engine_available()) return allocate_cuda_pinned(bytes);
#endif
  return std::shared_ptr<std::uint8_t>(new std::uint8_t[bytes],
                                       std::default_delete<std::uint8_t[]>());
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
