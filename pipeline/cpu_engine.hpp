// The CPU engine: the reference matcher behind the Engine interface. One worker thread takes
// submitted frames in order; the matcher inside it spreads each frame's rows over a thread pool.
#pragma once

#include <memory>

#include "engine.hpp"

namespace stereod {

std::unique_ptr<Engine> make_cpu_engine(const EngineOptions& options);

}  // namespace stereod
