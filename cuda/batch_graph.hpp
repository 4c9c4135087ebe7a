// The CUDA graph of one batch: device_pipeline.hpp's stages, captured once per batch shape and
// slot and replayed for every frame of that shape.
//
// With background modeling the graph has a gate between the model and matching (a conditional
// graph node, CUDA 12.4 and later): a frame whose finest masks hold no foreground in any member
// skips the whole stereo part; the finest model kernel has written what those stages give such a
// frame (ForegroundSignal in kernels/stages.hpp), and a one-thread gate kernel opens the stereo
// branch from the model's word. Empty frames then cost the model alone instead of the ~15
// launches of matching and post-processing, each of which ran only to find no work. The gate is
// not free (a conditional node and its body launched from the device: 3-6 % of a frame with
// foreground on an H100), so the engine runs it only while the scene was empty (cuda_engine.cu).
//
// With background modeling a batch is two graphs: the model's part (rectification, pyramid, model)
// and the stereo part (the gate, then census to post-processing). The engine runs the model parts
// of its batches one after the other on a stream of their own, and each stereo part after its
// model part, on the stream of the stereo parts: the model of the next frame runs while the last
// frame is matched (what it writes for its stereo part is kept per slot: device_pipeline.hpp).
#pragma once

#include <cuda_runtime.h>

#include "kernels/stages.hpp"

namespace stereod::cuda {

struct BatchGraph {
  cudaGraphExec_t model = nullptr;  // the model's part; null: `exec` is the whole sequence
  cudaGraphExec_t exec = nullptr;   // the stereo part after `model`, or every stage
  bool gated = false;               // built with the foreground gate
};

// Destroys both executable graphs (either may be null).
void destroy_batch_graph(BatchGraph& g);

// Whether gated graphs can be had: a runtime and driver with conditional nodes (12.4 or later),
// and STEREOD_CUDA_GATE is not 0 in the environment.
bool batch_gate_available();

// The executable graphs of `shape`'s stages over `batch`, captured on `capture_stream` (which must
// be idle): with background modeling the model's part and the stereo part, else one graph. Gated
// when `gated` is asked for, the shape models the background and the gate is available;
// otherwise, or if building the gated graph fails, the plain stereo part. Throws CudaError when
// neither builds.
BatchGraph instantiate_batch_graph(const BatchShape& shape, const BatchRecord* batch,
                                   const Workspace& ws, cudaStream_t capture_stream, bool gated);

}  // namespace stereod::cuda
