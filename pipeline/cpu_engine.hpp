// The CPU engine: the reference matcher behind the Engine interface. Submitted frames run in order
// as tasks on a thread pool (the process's shared one unless EngineOptions::cpu_threads asks for
// its own), and each frame's stages spread their rows over the same pool.
#pragma once

#include <memory>

#include "engine.hpp"

namespace stereod {

std::unique_ptr<Engine> make_cpu_engine(const EngineOptions& options);

}  // namespace stereod
