// The CUDA engine: the whole algorithm on the GPU behind the Engine interface, bit-identical to
// the CPU engine. Per pair: `inflight` slots, each with pinned host input/output buffers, its own
// device input/output buffers, a stream and events, so the upload of frame N+1, the kernels of
// frame N and the download of frame N-1 overlap; the kernels of consecutive frames are ordered by
// an event (they share the pyramid and the background model). Each slot replays its frame as a
// CUDA graph, captured on first use and again after a parameter change.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine.hpp"

namespace stereod {

std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& options);

// Test hooks (gpu_tests): the device background state after the last finished frame, and fault
// injection. `engine` must come from make_cuda_engine.
struct CudaModelState {
  std::vector<std::uint16_t> mean;
  std::vector<std::uint32_t> variance;
  std::vector<std::uint8_t> mask;
};
CudaModelState cuda_engine_model_state(Engine& engine, int camera, int level, int channel);
void cuda_engine_free_buffer_for_test(Engine& engine);

struct CudaStages {
  std::vector<std::vector<std::uint8_t>> gray[2];     // per level (level 0 empty: the input)
  std::vector<std::vector<std::uint64_t>> census[2];  // per level
  std::vector<std::vector<std::int16_t>> disparity[2];
  std::vector<std::uint16_t> q4[2];
};
CudaStages cuda_engine_stages(Engine& engine);
// Device memory in use (cudaMemGetInfo: total - free), for the constant-memory test.
std::size_t cuda_device_memory_used();

// Runs one frame outside the graph with an event after each stage and returns each stage's time
// in milliseconds (upload and download included), in order. For the speed report.
std::vector<std::pair<std::string, double>> cuda_engine_profile(Engine& engine,
                                                                const FrameInput& frame);

}  // namespace stereod
