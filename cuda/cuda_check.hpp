// Every CUDA call is checked; a failure becomes a CudaError carrying the call and CUDA's message,
// so it reaches the caller instead of being printed and forgotten.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace stereod {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& call, cudaError_t code, const char* file, int line)
      : std::runtime_error(call + " failed: " + cudaGetErrorName(code) + " (" +
                           cudaGetErrorString(code) + ") at " + file + ":" + std::to_string(line)),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// On failure the runtime's "last error" is cleared before throwing: a non-sticky error (an
// allocation that did not fit) must not resurface at the next, unrelated launch check.
#define STEREOD_CUDA(call)                                                 \
  do {                                                                     \
    const cudaError_t stereod_err_ = (call);                               \
    if (stereod_err_ != cudaSuccess) {                                     \
      cudaGetLastError();                                                  \
      throw ::stereod::CudaError(#call, stereod_err_, __FILE__, __LINE__); \
    }                                                                      \
  } while (0)

// After a kernel launch: launch errors (bad configuration) surface here, naming the kernel.
#define STEREOD_CUDA_LAUNCHED(name)                                                          \
  do {                                                                                       \
    const cudaError_t stereod_err_ = cudaGetLastError();                                     \
    if (stereod_err_ != cudaSuccess) {                                                       \
      throw ::stereod::CudaError(std::string("launch of ") + (name), stereod_err_, __FILE__, \
                                 __LINE__);                                                  \
    }                                                                                        \
  } while (0)

}  // namespace stereod
