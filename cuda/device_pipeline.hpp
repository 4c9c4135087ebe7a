// One camera pair's device-side state and its per-frame kernel sequence: the pyramid and matching
// buffers, the background model of both cameras, and enqueue(), which puts every kernel of one
// frame on a stream without synchronising (so it can be captured once as a CUDA graph and
// replayed). Buffers are allocated when the parameters are set, never per frame.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "background/background_params.hpp"
#include "device_buffer.hpp"
#include "rectify/remap.hpp"
#include "stereo/cost.hpp"
#include "stereo/params.hpp"

namespace stereod::cuda {

// Where one frame's input and output live on the device (a slot's buffers, or mapped host memory).
struct FrameBuffers {
  const std::uint8_t* gray[2] = {nullptr, nullptr};
  const std::uint8_t* rgb[2] = {nullptr, nullptr};  // interleaved; null without color
  std::uint16_t* disparity[2] = {nullptr, nullptr};
  std::uint8_t* foreground = nullptr;    // left, 0/255
  unsigned long long* tested = nullptr;  // [camera * levels + level]
};

// Marks the end of each stage with an event (profiling only; never inside a captured graph).
class StageMarks {
 public:
  virtual ~StageMarks() = default;
  virtual void mark(const std::string& stage, cudaStream_t stream) = 0;
};

class DevicePipeline {
 public:
  DevicePipeline(int width, int height);

  // Sizes the buffers for these parameters (validated by the caller). `color`: the background
  // model compares HSV. Keeps the background state when the levels and color mode are unchanged,
  // like the CPU model; otherwise the next frame starts a new warm-up.
  void configure(const StereoParams& stereo, const BackgroundParams& background, bool color,
                 cudaStream_t stream);
  // Rectification maps (copied to the device once); both null: frames are already rectified.
  void set_rectification(const RectificationMap* left, const RectificationMap* right);

  // Forgets what the background model learned (the next frame starts a warm-up).
  void reset_background(cudaStream_t stream);

  void enqueue(const FrameBuffers& io, cudaStream_t stream, StageMarks* marks = nullptr);

  int levels() const { return levels_; }
  bool color() const { return color_; }
  int width() const { return width_; }
  int height() const { return height_; }

  // For tests: the model's state and masks after the last frame (synchronous copies).
  std::vector<std::uint16_t> download_mean(int camera, int level, int channel) const;
  std::vector<std::uint32_t> download_variance(int camera, int level, int channel) const;
  std::vector<std::uint8_t> download_mask(int camera, int level) const;
  // Intermediate results of the last frame, for stage-by-stage comparison with the CPU.
  std::vector<std::uint8_t> download_gray(int level, int image) const;
  std::vector<std::uint64_t> download_census(int level, int image) const;
  std::vector<std::int16_t> download_disparity(int level, int view) const;
  std::vector<std::uint16_t> download_q4(int view) const;  // after cross-check and speckles
  // Fault injection for the error-reporting test: frees a buffer the next frame reads.
  void free_buffer_for_test();

 private:
  struct Level {
    int w = 0, h = 0;
    DeviceBuffer<std::uint8_t> gray[2];  // levels above 0 (level 0 is the frame's input)
    DeviceBuffer<std::uint64_t> census[2];
    DeviceBuffer<std::uint8_t> ad[2];
    DeviceBuffer<std::int16_t> disp[2];
    // Scratch of the chunked matching path (kernels/stereo_kernels.hpp: MatchScratch).
    DeviceBuffer<std::int16_t> range_lo[2], range_hi[2];
    DeviceBuffer<std::int32_t> tile_lo[2], tile_hi[2];
    DeviceBuffer<std::uint32_t> key[2], cmcp[2];
    DeviceBuffer<std::uint32_t> work, work_counters;  // the chunked path's work list
    DeviceBuffer<std::uint8_t> rgb[2][3];             // planar RGB above level 0 (color mode)
    DeviceBuffer<std::uint8_t> hsv[2][3];
    DeviceBuffer<std::uint16_t> mean[2][3];
    DeviceBuffer<std::uint32_t> var[2][3];
    DeviceBuffer<std::uint8_t> raw[2], closed[2], mask[2];
    DeviceBuffer<std::uint16_t> still[2];
    DeviceBuffer<std::uint8_t> prev[2];
  };

  const std::uint8_t* gray_at(const FrameBuffers& io, int level, int image) const;
  const std::uint8_t* rgb_at(const FrameBuffers& io, int image) const;

  int width_, height_;
  int workers_;  // chunk_kernel blocks resident on this device (match_workers())
  StereoParams stereo_;
  BackgroundParams background_;
  CostTables tables_;
  bool color_ = false;
  bool configured_ = false;
  int levels_ = 0;
  std::vector<Level> level_;
  DeviceBuffer<std::uint16_t> q4_[2];
  DeviceBuffer<std::int32_t> speckle_parent_[2], speckle_count_[2];
  DeviceBuffer<long long> frames_;     // the background model's frame counter
  DeviceBuffer<std::int32_t> map_[2];  // rectification maps (empty: none)
  DeviceBuffer<std::uint8_t> rect_gray_[2], rect_rgb_[2];
};

}  // namespace stereod::cuda
