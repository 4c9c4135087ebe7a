#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "cuda_device.hpp"

namespace stereod {
namespace {

__global__ void probe_kernel(int* out) {
  *out = 1;
}

}  // namespace

bool cuda_device_usable(int device, std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
    cudaGetLastError();
    return false;
  }
  if (device < 0 || device >= count) {
    if (why)
      *why =
          "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " present)";
    return false;
  }
  // A kernel this binary has no code for fails here rather than on the first frame.
  cudaFuncAttributes attr{};
  err = cudaFuncGetAttributes(&attr, probe_kernel);
  if (err != cudaSuccess) {
    if (why)
      *why = std::string("device ") + std::to_string(device) +
             " cannot run this build's kernels: " + cudaGetErrorString(err);
    cudaGetLastError();
    return false;
  }
  return true;
}

bool cuda_switch_on(const char* variable) {
  const char* value = std::getenv(variable);
  return !(value && std::strcmp(value, "0") == 0);
}

std::string cuda_device_summary(int device) {
  cudaDeviceProp prop{};
  const cudaError_t err = cudaGetDeviceProperties(&prop, device);
  if (err != cudaSuccess) return std::string("no device: ") + cudaGetErrorString(err);
  std::ostringstream out;
  out << prop.name << " (sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount
      << " SMs, " << static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024) << " GiB)";
  return out.str();
}

}  // namespace stereod
