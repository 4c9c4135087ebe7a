// A prototype of the finest level's matcher as ragged cost volumes (stereod-bench matcher-volume):
// one view, the default window (3 x 3 sub-windows, the 4 smallest of 8), no background model, the
// pixels whose windows stay inside the image. It exists to measure, before building it into the
// engine, what a matcher that computes each pixel cost and sub-window sum once per cell costs on
// the GPU against the tile design of cuda/kernels/match_window.cu (docs/PERFORMANCE.md, session
// 24). Host interface only: no CUDA types.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stereod::bench {

struct VolumeProtoInput {
  int width = 0, height = 0, disparities = 0;
  // The reference view (the left: partners at x - d) and its target, row-major width x height.
  const std::uint8_t* ref_ad = nullptr;  // the AD term's input (mean removed)
  const std::uint8_t* tgt_ad = nullptr;
  const std::uint64_t* ref_census = nullptr;
  const std::uint64_t* tgt_census = nullptr;
  // Candidates per pixel, hi within the image (x - hi >= 0); lo > hi: none.
  const int* lo = nullptr;
  const int* hi = nullptr;
  std::uint8_t ad_table[256] = {};
  std::uint8_t census_table[65] = {};
  std::uint32_t outside = 0;
  bool subpixel = true;
  int iterations = 100;  // timed repetitions of the whole chain
};

// One design's outputs, times and work.
struct VolumeDesignResult {
  std::string name;
  // Per pixel: kNoDisparity / kInvalidDisparity outside the covered pixels or without a winner.
  std::vector<std::int16_t> disparity;
  std::vector<std::uint16_t> q4;
  // Mean time of each kernel over the timed repetitions, in chain order, and of the whole chain.
  std::vector<std::pair<std::string, double>> stage_ms;
  double chain_ms = 0;
  // Work: 32-bit words (two disparities each) of the pixel-cost and sum volumes, and the
  // aggregations' words the kernels evaluate.
  long long cost_words = 0, sum_words = 0, aggregation_words = 0;
};

struct VolumeProtoResult {
  std::string error;                  // empty when it ran
  bool no_device = false;             // it did not run: no CUDA device here
  std::vector<std::uint8_t> covered;  // the pixel is matched by the prototypes
  // "ragged": each cell's own interval, the cells one after the other; "band": rows cut into
  // segments of 32 cells, each stored for the union of its cells' intervals with the 32 cells of
  // a disparity side by side (coalesced), read by a warp per segment.
  std::vector<VolumeDesignResult> designs;
};

VolumeProtoResult run_volume_proto(const VolumeProtoInput& in);

}  // namespace stereod::bench
