// Chained stage launches: programmatic dependent launch (compute capability 9.0 and later; the
// runtime captures such launches into graphs from 12.3 on). A frame's stages are a chain of
// dependent kernels on one stream; launched plainly, each one's blocks are scheduled only after the
// last one has drained and flushed, and the GPU idles meanwhile (on an H100 the model's four levels
// gained ~5 us a boundary from overlapping: docs/PERFORMANCE.md). Launched with the attribute, a
// stage's blocks may start as soon as every block of the stage before has passed its own
// after_previous_stage(); they wait there until that stage has finished and its writes are
// visible. Elsewhere (Orin's 8.7, older runtimes, STEREOD_CUDA_PDL=0) the same code runs as plain
// launches, where both device calls below return at once.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "cuda_check.hpp"

namespace stereod::cuda {

// Whether launches may overlap on the current device (see above). Read once per process for the
// environment, per call for the device.
bool programmatic_launch();

// First thing in every kernel that launch_stage may start early: nothing before it may read what
// an earlier stage wrote, or write what it reads. Then lets the next stage's blocks be scheduled
// (they wait in turn), so at most two stages' blocks share the GPU.
__device__ __forceinline__ void after_previous_stage() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// Launches `kernel` on `stream`, overlapping the kernel before it when `chained` (the previous
// operation on the stream is a kernel of the same frame) and the device allows it; checks the
// launch, naming the kernel.
template <typename... Params, typename... Args>
void launch_stage(const char* name, bool chained, void (*kernel)(Params...), dim3 grid, dim3 block,
                  std::size_t shared, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  cudaLaunchAttribute attribute[1] = {};
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = chained && programmatic_launch() ? 1 : 0;
  const cudaError_t err = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw CudaError(std::string("launch of ") + name, err, __FILE__, __LINE__);
  }
}

}  // namespace stereod::cuda
