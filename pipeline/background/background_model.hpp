// The background model of one camera at every pyramid level (docs/ALGORITHM.md step 3; Zhao &
// Taubin 2011 section 3.2): a running mean and variance per pixel and channel, a k-sigma foreground
// test with shadow suppression, decided hierarchically from the coarsest level down, closed per
// level, and learned selectively (fast on background, slow on foreground).
#pragma once

#include <cstdint>
#include <vector>

#include "background/background_params.hpp"
#include "background/depth_ghosts.hpp"
#include "frame.hpp"
#include "image.hpp"

namespace stereod {

class ThreadPool;

// One camera's images at every level the matcher uses (index 0 = full resolution), as the model
// compares them: one plane (intensity) or three (hue, saturation, value).
struct BackgroundPlanes {
  int channels = 1;
  std::vector<std::vector<Gray8>> levels;  // levels[s][c]; c indexes BackgroundChannel (kValue
                                           // only when channels == 1)
  std::vector<Gray8> rgb[3];               // make_hsv_planes' R, G and B pyramids (scratch)
};

// Intensity planes from a gray image: its pyramid.
void make_gray_planes(ImageView<const std::uint8_t> gray, int levels, BackgroundPlanes& out);
// HSV planes from an RGB image: each of R, G, B downsampled like the gray pyramid, then HSV per
// pixel (hue cannot be averaged, so the conversion comes after the downsampling).
void make_hsv_planes(const RgbView& rgb, int levels, BackgroundPlanes& out);
inline void make_hsv_planes(const RgbImage& rgb, int levels, BackgroundPlanes& out) {
  make_hsv_planes(view_of(rgb), levels, out);
}

struct BackgroundStats {
  std::vector<long long> tested;  // per level: pixels given their own foreground test
  std::vector<long long> pixels;  // per level: all pixels
  bool warming_up = false;
};

class BackgroundModel {
 public:
  explicit BackgroundModel(const BackgroundParams& params = {});

  // Parameters change between frames; the learned state stays unless the channel count or the
  // sizes change. Throws ParameterError (keeping the old ones) when they are unusable.
  void set_params(const BackgroundParams& params);
  const BackgroundParams& params() const { return params_; }
  void reset();
  long long frames_seen() const { return frames_; }

  // Tests the frame against the model, then learns from it. masks[s] (1 = foreground) per level;
  // every pixel is foreground while warming up and when the model is disabled. pool: spreads each
  // level's rows (results do not depend on it).
  void process(const BackgroundPlanes& planes, std::vector<Gray8>& masks,
               BackgroundStats* stats = nullptr, ThreadPool* pool = nullptr);

  // The learned state of one level (tests compare engines with it).
  const std::vector<std::uint16_t>& mean(int level, int channel) const {
    return levels_[level].mean[channel];
  }
  const std::vector<std::uint32_t>& variance(int level, int channel) const {
    return levels_[level].var[channel];
  }
  // The decision before closing, of the last frame (tests check the hierarchy with it).
  const Gray8& raw_decision(int level) const { return levels_[level].raw; }
  // The closed decision of the last frame, also while warming up (when the output is all
  // foreground); it drives the hierarchy and the learning.
  const Gray8& decision(int level) const { return levels_[level].closed; }
  // The absorption counters (background_ops.hpp: still_run and model_support of each word).
  const std::vector<std::uint16_t>& still_frames(int level) const { return levels_[level].still; }

  // With depth_ghosts: the left disparity of the frame process() last decided (16 d,
  // kInvalidDisparity where there is none), which the frame depth_lag later reads.
  void record_disparity(const Image<std::uint16_t>& left);
  // The static depth learned from the warm-up (depth_ghosts; tests).
  const std::vector<std::uint16_t>& static_depth() const { return ghosts_.static_depth(); }

 private:
  struct Level {
    std::vector<std::uint16_t> mean[3];
    std::vector<std::uint32_t> var[3];
    std::vector<std::uint16_t> still;  // absorption counters: still run and model support
    std::vector<std::uint8_t> prev;    // last frame's intensity (value channel)
    Gray8 raw, closed, scratch;
    Gray8 uniform;  // scratch: per pixel of the coarser level, 1 where its 3x3 block is uniform
  };

  void initialise(const BackgroundPlanes& planes);
  // The decision before closing of every pixel of a level; returns how many were tested.
  template <int kChannels>
  long long decide(const BackgroundPlanes& planes, int level, ThreadPool* pool);
  template <int kChannels>
  void learn(const BackgroundPlanes& planes, int level, ThreadPool* pool);
  // Ghosts seen in depth: applies depth_flagged_counters with the finest level's flags
  // (DepthGhosts::flags) to every pixel; a pixel of a coarser level reads the finest pixel at its
  // top-left corner.
  void apply_depth_flags(const BackgroundPlanes& planes, const Gray8& flags, ThreadPool* pool);

  BackgroundParams params_;
  BackgroundFixed fixed_;
  std::vector<Level> levels_;
  DepthGhosts ghosts_;
  int channels_ = 0;
  long long frames_ = 0;
};

}  // namespace stereod
