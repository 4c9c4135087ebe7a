// Host-side launchers of the background-model kernels: both cameras of a pair in one launch
// (blockIdx.z), one pyramid level at a time, coarsest first.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "background/background_params.hpp"

namespace stereod::cuda {

// HSV planes of one level from RGB (interleaved at level 0, planar above), and the next level's
// planar RGB (2x2 means, as the gray pyramid).
struct HsvLevelArgs {
  const std::uint8_t* rgb_interleaved[2] = {nullptr, nullptr};  // level 0
  const std::uint8_t* rgb_planar[2][3] = {};                     // levels above 0
  std::uint8_t* hsv[2][3] = {};
  std::uint8_t* down[2][3] = {};  // null at the coarsest level
  int width = 0, height = 0, down_width = 0, down_height = 0;
};
void launch_hsv_level(const HsvLevelArgs& a, cudaStream_t stream);

struct BackgroundCameraLevel {
  const std::uint8_t* planes[3] = {nullptr, nullptr, nullptr};  // H, S, V (V only for intensity)
  std::uint16_t* mean[3] = {nullptr, nullptr, nullptr};
  std::uint32_t* var[3] = {nullptr, nullptr, nullptr};
  std::uint8_t* raw = nullptr;   // decision before closing
  std::uint8_t* mask = nullptr;  // closed decision, 1 = foreground
  const std::uint8_t* parent_mask = nullptr;  // coarser level's closed mask; null at the coarsest
  unsigned long long* tested = nullptr;       // pixels given their own test
  std::uint8_t* output = nullptr;  // 0/255 copy of the mask (finest level, left camera), or null
};

struct BackgroundLevelArgs {
  BackgroundCameraLevel camera[2];
  int width = 0, height = 0, parent_width = 0, parent_height = 0;
  int channels = 1;
  BackgroundFixed fixed;
  std::uint32_t initial_variance = 0;  // Q8
  bool hierarchy = true;
  int closing_radius = 1;
  int warmup = 0;
  const long long* frames = nullptr;  // device counter of frames the model has seen
};
// Initialises the model on the first frame, then classifies (hierarchically).
void launch_background_classify(const BackgroundLevelArgs& a, cudaStream_t stream);
// Closes the decision and learns from the frame (or only learns, while warming up).
void launch_background_close_learn(const BackgroundLevelArgs& a, cudaStream_t stream);
// Counts the frame: after every level is done.
void launch_background_advance(long long* frames, cudaStream_t stream);

}  // namespace stereod::cuda
