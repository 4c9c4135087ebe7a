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
  const std::uint8_t* rgb_planar[2][3] = {};                    // levels above 0
  std::uint8_t* hsv[2][3] = {};
  std::uint8_t* down[2][3] = {};  // null at the coarsest level
  int width = 0, height = 0, down_width = 0, down_height = 0;
};
void launch_hsv_level(const HsvLevelArgs& a, cudaStream_t stream);

struct BackgroundCameraLevel {
  const std::uint8_t* planes[3] = {nullptr, nullptr, nullptr};  // H, S, V (V only for intensity)
  std::uint16_t* mean[3] = {nullptr, nullptr, nullptr};
  std::uint32_t* var[3] = {nullptr, nullptr, nullptr};
  std::uint16_t* still = nullptr;  // frames in a row a foreground pixel stayed still
  std::uint8_t* prev = nullptr;    // last frame's value channel
  std::uint8_t* raw = nullptr;     // decision before closing
  std::uint8_t* closed = nullptr;  // closed decision (drives the hierarchy and learning)
  std::uint8_t* mask = nullptr;    // what matching uses: the closed decision, or 1 while warming up
  const std::uint8_t* parent_closed =
      nullptr;                           // coarser level's closed decision; null at the coarsest
  unsigned long long* tested = nullptr;  // pixels given their own test
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
// Closes the decision and learns from the frame (not on the first, which only initialised).
void launch_background_close_learn(const BackgroundLevelArgs& a, cudaStream_t stream);
// Counts the frame: after every level is done.
void launch_background_advance(long long* frames, cudaStream_t stream);

}  // namespace stereod::cuda
