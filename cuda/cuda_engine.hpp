// The CUDA engine: the whole algorithm on the GPU behind the Engine interface, bit-identical to
// the CPU engine.
//
// Pairs are served by a group per device and image size (one per EngineGroup, or a private one):
// whenever the GPU can take work, the frames that pairs have submitted go out together, one frame
// per pair, as one batch: one upload per pair, one CUDA graph for the batch (every stage kernel
// covers all its pairs), one download per pair. Batches of a group run in order (they share the
// work lists); with two batch slots the upload of the next and the download of the last overlap
// the kernels of the current one. Each pair keeps `inflight` slots of its own (pinned host input
// and output, device input and output); a slot stays reserved until the result's hold is dropped.
// A group's launcher thread wakes when a batch finishes (a host callback) and sends what is
// pending; submit() sends at once when the GPU has room.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine.hpp"

namespace stereod {

std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& options);
std::shared_ptr<EngineGroup> make_cuda_engine_group();
// Page-locked host memory (cudaHostAlloc), freed when the last copy of the pointer goes.
std::shared_ptr<std::uint8_t> allocate_cuda_pinned(std::size_t bytes);

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

// How the frames of an engine's group went out: batches launched and the pairs in them.
struct CudaBatchStats {
  std::uint64_t batches = 0;
  std::uint64_t frames = 0;
  // Batch graphs built (one per batch slot and shape): with the foreground gate, which lets a
  // frame without foreground skip matching (batch_graph.hpp), and without it.
  std::uint64_t gated_graphs = 0;
  std::uint64_t plain_graphs = 0;
  // Batches that modeled the background, by the graph they ran: gated (the scene was empty at
  // the last batch seen) or plain.
  std::uint64_t gated_batches = 0;
  std::uint64_t plain_batches = 0;
  // Batches whose end the launcher saw while it watched their event (EngineOptions::watch_ends),
  // rather than woken by the completion callback.
  std::uint64_t watched_ends = 0;
  // Batches whose finest level both views shared (BatchShape::shared_finest: only with
  // STEREOD_CUDA_SHARED_FINEST=1), so that a test or a benchmark can tell which path ran.
  std::uint64_t shared_finest_batches = 0;
  double graph_build_ms = 0;      // host time spent capturing and instantiating them, in all
  double graph_build_max_ms = 0;  // and the longest (the launch that needed it waited so long)
};
CudaBatchStats cuda_engine_batch_stats(Engine& engine);
// Test hook: while held, frames submitted to the engine's group wait; on release (false) they go
// out together, so a test can make a batch of several pairs on purpose.
void cuda_engine_hold_launches(Engine& engine, bool hold);

}  // namespace stereod
