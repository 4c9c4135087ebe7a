// Which CUDA device the engine can use, asked without creating anything on it.
#pragma once

#include <string>

namespace stereod {

// True when `device` exists and this build has code for it; otherwise `why` says what is missing
// (no driver, no device, an architecture this binary was not built for).
bool cuda_device_usable(int device, std::string* why = nullptr);
// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)", or the CUDA error when there is none.
std::string cuda_device_summary(int device);
// False when the environment sets `variable` to 0: the engine's switches for comparisons
// (STEREOD_CUDA_GATE, STEREOD_CUDA_PDL, STEREOD_CUDA_OVERLAP; docs/ARCHITECTURE.md).
bool cuda_switch_on(const char* variable);

}  // namespace stereod
