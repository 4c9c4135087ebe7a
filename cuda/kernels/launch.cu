#include "cuda_device.hpp"
#include "kernels/launch.cuh"

namespace stereod::cuda {

// STEREOD_CUDA_PDL=0 in the environment makes every launch plain (for comparisons, and to tell a
// fault of the overlap from others).
bool programmatic_launch() {
  if (CUDART_VERSION < 12030) return false;
  static const bool wanted = cuda_switch_on("STEREOD_CUDA_PDL");
  if (!wanted) return false;
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return major >= 9;
}

}  // namespace stereod::cuda
