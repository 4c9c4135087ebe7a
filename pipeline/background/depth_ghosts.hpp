// Ghosts seen in depth (BackgroundParams::depth_ghosts; docs/ALGORITHM.md, "Ghosts seen in
// depth"): the left camera's record of each frame's decision and disparity, kept for the frame
// depth_lag later (the last kMaxDepthLag frames), and the static depth learned from the warm-up's
// records. The per-pixel rules are background_ops.hpp's depth_revealed, shown_again and
// depth_in_front, which the CUDA engine shares (its pyramid kernel: pyramid.cu).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "background/background_ops.hpp"
#include "image.hpp"

namespace stereod {

class ThreadPool;

class DepthGhosts {
 public:
  // Forgets every record and the static depth (a new warm-up).
  void reset();

  // Frame `frame`'s closed finest-level decision (1 = foreground), once the model has made it.
  void record_decision(long long frame, const Gray8& decision);
  // Its left disparity (16 d, kInvalidDisparity where there is none) once matched. Ignored when
  // the decision of that frame was not recorded or the sizes differ.
  void record_disparity(long long frame, const std::uint16_t* q4, std::size_t pixels);

  // Before frame `frame` learns: reads the record of frame - lag (the static depth
  // learns from it while that frame was warming up, `warmup` frames), and returns per finest-level
  // pixel kDepthRevealed where it was revealed (depth_revealed with farther_q8), kDepthInFront
  // where it was shown in front (depth_in_front, when `in_front`), each by this record and the one
  // before it (shown_again), 0 elsewhere; or nullptr where there is no whole record of that frame
  // (the first frames, a frame not matched).
  const Gray8* flags(long long frame, int lag, int warmup, int farther_q8, bool in_front,
                     ThreadPool* pool);

  // The static depth (16 d, kDepthNone where unknown), for tests.
  const std::vector<std::uint16_t>& static_depth() const { return static_q4_; }

 private:
  struct Record {
    long long frame = -1;
    bool matched = false;
    int width = 0, height = 0;
    std::vector<std::uint16_t> pixels;  // depth_record per pixel
  };
  std::array<Record, kMaxDepthLag> ring_;
  std::vector<std::uint16_t> static_q4_;
  std::vector<std::uint32_t> last_shown_;  // shown_again's `last` per pixel
  Gray8 flags_;
};

}  // namespace stereod
