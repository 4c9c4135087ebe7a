// The CUDA graph of one batch: device_pipeline.hpp's stages, captured once per batch shape and
// slot and replayed for every frame of that shape.
//
// With background modeling the graph has a gate between the model and matching (conditional
// graph nodes, CUDA 12.4 and later): a frame whose finest masks hold no foreground in any member
// skips the whole stereo part and gets its outputs from launch_empty_outputs, what those stages
// give such a frame. Empty frames then cost the model alone instead of the ~15 launches of
// matching and post-processing, each of which ran only to find no work.
#pragma once

#include <cuda_runtime.h>

#include "kernels/stages.hpp"

namespace stereod::cuda {

struct BatchGraph {
  cudaGraphExec_t exec = nullptr;
  bool gated = false;  // built with the foreground gate
};

// The executable graph of `shape`'s stages over `batch`, captured on `capture_stream` (which must
// be idle). Gated when modeling and the runtime and driver have conditional nodes; otherwise, or
// if building the gated graph fails, the plain sequence. Throws CudaError when neither builds.
BatchGraph instantiate_batch_graph(const BatchShape& shape, const BatchRecord* batch,
                                   const Workspace& ws, cudaStream_t capture_stream);

}  // namespace stereod::cuda
