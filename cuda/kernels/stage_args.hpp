// What every stage kernel reads: one batch member's arguments (one camera pair's buffers for one
// in-flight slot, and its parameters), and the batch that lists the members of one launch.
//
// Why a batch: pairs of the same image size that are ready together run as ONE set of launches
// (one CUDA graph) instead of one set per pair; a kernel finds its pair through
// `batch->member[m]`. MemberArgs live in device memory, one per (pair, slot), written when the
// pair is configured; a BatchRecord is written per launch (which members, and the background
// model's frame count of each). See docs/ARCHITECTURE.md, "The CUDA engine".
#pragma once

#include <cstdint>

#include "background/background_params.hpp"
#include "stereo/cost.hpp"
#include "stereo/params.hpp"

namespace stereod::cuda {

constexpr int kMaxBatch = 32;  // pairs in one launch (a work item has 5 bits for the member)

// Thread blocks of the per-pixel kernels.
constexpr int kBlockW = 32;
constexpr int kBlockH = 8;
// Matching and post-processing tiles: 32 x 16 pixels, two rows per thread of a 32 x 8 block.
constexpr int kTileW = 32;
constexpr int kTileH = 16;
// Disparities per matching work item (at most): a tile whose candidates span more is split into
// segments that run on different blocks. LevelBuffers::segment is the level's own (shorter at a
// coarsest level too small to fill the GPU otherwise).
constexpr int kSegment = 32;

// The copy of the background model (LevelBuffers::mean, var) that the model's frame n reads:
// the one its frame n - 1 wrote. Frame n writes the other. n is the frame count the engine gives
// each modeling frame when it is submitted; a frame counted whose batch then failed to launch
// never writes its copy, so the next one reads the copy of two frames back: the model loses a
// frame of learning (as with one copy, only a model whose very first frame failed would read
// memory never written).
constexpr int model_copy_read(long long n) {
  return static_cast<int>(n & 1);
}
constexpr int model_copy_written(long long n) {
  return static_cast<int>((n + 1) & 1);
}

struct LevelBuffers {
  int width = 0, height = 0;
  int tiles_x = 0, tiles_y = 0;  // kTileW x kTileH tiles
  int disparities = 0;           // ceil(max_disparity / 2^level)
  int segment = kSegment;        // disparities per work item (a multiple of 4, <= kSegment)
  const std::uint8_t* gray[2] = {nullptr, nullptr};  // what matching reads (level 0: the input)
  std::uint8_t* gray_out[2] = {nullptr, nullptr};    // written by the pyramid (null: not here)
  std::uint64_t* census[2] = {nullptr, nullptr};     // null: no census term
  std::uint8_t* ad[2] = {nullptr, nullptr};          // mean-removed AD input (null: AD reads gray)
  // Background model (null when it is off).
  std::uint8_t* hsv[2][3] = {};  // color mode: H, S, V planes
  // The model, twice: frame n of the model reads the copy its frame n - 1 wrote and writes the
  // other (ModelPlanes in background.cu), so that a tile classifying its halo reads the
  // neighbours' models as they were before this frame's learning, as the CPU does, whatever the
  // order the tiles run in.
  std::uint16_t* mean[2][2][3] = {};  // [copy][camera][channel], Q8
  std::uint32_t* var[2][2][3] = {};   // Q8
  std::uint16_t* still[2] = {nullptr, nullptr};
  std::uint8_t* prev[2] = {nullptr, nullptr};
  std::uint8_t* closed[2] = {nullptr, nullptr};
  std::uint8_t* mask[2] = {nullptr, nullptr};      // what matching uses (1 = foreground)
  std::uint8_t* block_fg[2] = {nullptr, nullptr};  // per kBlockW x kBlockH block: any mask set
  // Matching.
  std::int16_t* disp[2] = {nullptr, nullptr};  // winners, kNoDisparity where none
  std::int16_t* lo[2] = {nullptr, nullptr};    // each pixel's candidates [lo, hi]
  std::int16_t* hi[2] = {nullptr, nullptr};
  std::uint32_t* tile_done[2] = {nullptr, nullptr};  // segments finished, for split tiles
  std::uint32_t* key[2] = {nullptr, nullptr};        // split tiles: (cost << 16) | d, the minimum
  std::uint32_t* cmcp[2] = {nullptr, nullptr};       // finest level, split tiles: [segment][pixel]
  // Finest level, aggregations shared by both views (shared_finest.cuh; null without): the right
  // pixels' packed candidates, the tiles' unions (kSharedTileWords each), and the right pixels'
  // aggregated costs, that of d in slot right_slot(d) of pixel i at right_slots[slot * width *
  // height + i].
  std::uint32_t* shared_cands = nullptr;
  std::uint32_t* shared_tiles = nullptr;
  std::uint16_t* right_slots = nullptr;
  // Semi-global aggregation (null without it): where each pixel's cells start in the member's
  // volume, row start + the pixel's offset within its row, and the level's cell count per view.
  std::uint32_t* sgm_rel[2] = {nullptr, nullptr};  // per pixel
  std::uint32_t* sgm_row[2] = {nullptr, nullptr};  // per row: its total, then its start
  unsigned long long* sgm_cells[2] = {nullptr, nullptr};
};

// Cross-based aggregation's scratch (cross.cu; null without it), per view, for the level being
// matched: each pixel's arms (left | right << 8 | up << 16 | down << 24), and per iteration the
// hulls (the candidates each pixel's inner sums are needed for), their layout (as sgm_rel /
// sgm_row), the cell count, the inner arms' sums over the hulls and (iterations after the first)
// how many values each holds.
struct CrossBuffers {
  std::uint32_t* arms[2] = {nullptr, nullptr};
  std::int16_t* hull_lo[2] = {nullptr, nullptr};
  std::int16_t* hull_hi[2] = {nullptr, nullptr};
  std::uint32_t* hull_rel[2] = {nullptr, nullptr};
  std::uint32_t* hull_row[2] = {nullptr, nullptr};
  unsigned long long* hull_cells = nullptr;  // [view]
  std::uint32_t* partial[2] = {nullptr, nullptr};
  std::uint16_t* counts[2] = {nullptr, nullptr};
};

struct MemberArgs {
  int width = 0, height = 0, levels = 0;
  StereoParams stereo;
  CostTables tables;
  // Background model.
  bool modeling = false;
  bool color = false;  // HSV model (else intensity)
  BackgroundFixed fixed;
  std::uint32_t initial_variance = 0;
  bool hierarchy = true;
  int closing_radius = 1;
  int target_margin = 0;  // the right camera's matching mask: its decision widened this much
  int warmup = 0;
  // Input of this slot: gray (null: derived from the color as BT.601 luma) and interleaved RGB
  // (null without color).
  const std::uint8_t* in_gray[2] = {nullptr, nullptr};
  const std::uint8_t* in_rgb[2] = {nullptr, nullptr};
  // Rectification (null: none), into the pair's rectified frame.
  const std::int32_t* map[2] = {nullptr, nullptr};
  std::uint8_t* rect_gray[2] = {nullptr, nullptr};
  std::uint8_t* rect_rgb[2] = {nullptr, nullptr};
  // What the pyramid reads: the rectified frame or the input (gray null: the luma of the color,
  // written to level[0].gray_out).
  const std::uint8_t* src_gray[2] = {nullptr, nullptr};
  const std::uint8_t* src_rgb[2] = {nullptr, nullptr};
  LevelBuffers level[kMaxLevels];
  // Finest level after matching: 16 d + subpixel, then checked, then speckle labels.
  std::uint16_t* q4[2] = {nullptr, nullptr};
  std::int32_t* label[2] = {nullptr, nullptr};        // union-find parent (pixel index)
  std::int32_t* local_size[2] = {nullptr, nullptr};   // tile-local component size at local roots
  std::int32_t* size[2] = {nullptr, nullptr};         // component size at global roots
  std::uint8_t* post_active[2] = {nullptr, nullptr};  // per tile: the finest level matched here
  // The multi-step refinement (refine.cu; null without stereo.refine): each pixel's cross arms on
  // the finest gray (left | right << 8 | up << 16 | down << 24), and the two maps the voting
  // rounds alternate between (round k writes refined[view][k & 1]).
  std::uint32_t* refine_arms[2] = {nullptr, nullptr};
  std::uint16_t* refined[2][2] = {};
  // Per view, kMaxRefineIterations words: round k sets word k when it changed a value (zeroed by
  // the prepare kernel each frame). A round after one that changed nothing has nothing to do.
  std::uint32_t* refine_changed[2] = {nullptr, nullptr};
  // With refine_interpolate: the map after the interpolation (refine.cu), which the median reads
  // instead of the last round's (null without it).
  std::uint16_t* refine_interpolated[2] = {nullptr, nullptr};
  // Output of this slot.
  std::uint16_t* out_disp[2] = {nullptr, nullptr};  // right: null unless asked for
  std::uint8_t* out_fg = nullptr;                   // left mask 0/255 (null: modeling off)
  std::uint8_t* out_confidence = nullptr;           // left confidence8 (null: not asked for)
  // The left view's finest-level winners' cost ratios (winner_cost_ratio), kNoCost where none
  // (null unless asked for: EngineOptions::cost_ratio_output). Set to kNoCost before the frame
  // (the engine clears it), then written by the matching kernels where they match.
  std::uint32_t* out_cost_ratio = nullptr;
  unsigned long long* tested = nullptr;  // [camera * levels + level]
  // Non-zero when either camera's finest mask holds foreground (modeling only; zeroed by the
  // pyramid, raised by the finest model kernel): comes back with the frame, and tells the engine
  // whether the next batch should be gated (batch_graph.hpp).
  std::uint32_t* out_foreground_word = nullptr;
  // Semi-global aggregation: each view's volume (C, then S; one level at a time) of
  // `sgm_capacity` cells, and this frame's error word in the slot's output: the cells of the first
  // view found over kSgmMaxCells (the frame then fails, as on the CPU), 0 when none was.
  std::uint32_t* sgm_cost[2] = {nullptr, nullptr};
  std::uint32_t* sgm_sum[2] = {nullptr, nullptr};
  unsigned long long sgm_capacity = 0;
  unsigned long long* out_sgm_cells = nullptr;
  // Cross-based aggregation: its scratch; the volume's E goes to sgm_cost (iterations alternate
  // between sgm_sum and sgm_cost, the last writing sgm_cost). The hull sums hold sgm_capacity
  // cells.
  CrossBuffers cross;
  // Ghosts seen in depth (background.depth_ghosts; null without): the left camera's records of the
  // last kMaxDepthLag frames at the finest level (frame n's at [n % kMaxDepthLag][pixel]:
  // depth_record, the decision written by the finest model kernel, the disparity by the output's
  // kernels; background.cu), its static depth, and the model frame from which records exist (the
  // model's start, or the frame the option was turned on). Last, so that the fields every kernel
  // reads keep their offsets.
  std::uint16_t* depth_records = nullptr;
  std::uint16_t* depth_static = nullptr;
  long long depth_from = 0;
  // Per record, per finest kTileW x kTileH tile (level 0's tiles_x x tiles_y): 1 where the left
  // decision had any foreground there, written with the decisions; after the warm-up a region
  // whose tiles had none holds no record the rule reads (pyramid.cu).
  std::uint8_t* depth_tiles = nullptr;
  // Per finest left pixel: shown_again's `last` (background_ops.hpp).
  std::uint32_t* depth_last = nullptr;
};

struct BatchRecord {
  int count = 0;
  const MemberArgs* member[kMaxBatch] = {};
  long long frames[kMaxBatch] = {};  // frames each member's background model has seen
};

// A work item of the matching and post-processing lists: member, view, segment, tile.
__host__ __device__ inline std::uint32_t pack_item(int member, int view, int segment, int tile) {
  return (static_cast<std::uint32_t>(member) << 27) | (static_cast<std::uint32_t>(view) << 26) |
         (static_cast<std::uint32_t>(segment) << 21) | static_cast<std::uint32_t>(tile);
}
__host__ __device__ inline int item_member(std::uint32_t item) {
  return static_cast<int>(item >> 27);
}
__host__ __device__ inline int item_view(std::uint32_t item) {
  return static_cast<int>((item >> 26) & 1u);
}
__host__ __device__ inline int item_segment(std::uint32_t item) {
  return static_cast<int>((item >> 21) & 31u);
}
__host__ __device__ inline int item_tile(std::uint32_t item) {
  return static_cast<int>(item & ((1u << 21) - 1u));
}
static_assert((kMaxDisparity + kSegment - 1) / kSegment <= 32, "5 bits for the segment");
// A list entry: the item (low word) and its tile's candidate bounds [lo, hi] (16 bits each, high
// word), which search_ranges.cu knows when it lists the tile: the matcher has them with the item
// instead of one global round trip later.
constexpr std::uint64_t kNoEntry = 0xFFFFFFFFu;  // no entry: an item no list holds
__host__ __device__ inline std::uint64_t list_entry(std::uint32_t item, int lo, int hi) {
  return item | (static_cast<std::uint64_t>(static_cast<std::uint16_t>(lo)) << 32) |
         (static_cast<std::uint64_t>(static_cast<std::uint16_t>(hi)) << 48);
}
__host__ __device__ inline std::uint32_t entry_item(std::uint64_t e) {
  return static_cast<std::uint32_t>(e);
}
__host__ __device__ inline int entry_lo(std::uint64_t e) {
  return static_cast<int>((e >> 32) & 0xFFFFu);
}
__host__ __device__ inline int entry_hi(std::uint64_t e) {
  return static_cast<int>(e >> 48);
}
static_assert(kMaxDisparity <= 0xFFFF, "16 bits for a tile's bounds");
// How a tile's candidates [lo, hi] are cut into work items at a level whose segment length is
// `segment`: one item when they fit it; otherwise, above the finest level, pieces of 16 (or of
// what keeps them to 32), so that a wide tile (an occlusion that searches the whole range) is
// spread over many blocks instead of holding one block long after the rest of the level is done.
// The finest level keeps `segment` for its pieces: each needs a plane of subpixel neighbours.
__host__ __device__ inline int piece_length(int lo, int hi, int segment, int disparities,
                                            bool finest) {
  if (hi - lo + 1 <= segment || finest) return segment;
  int len = segment < 16 ? segment : 16;
  while ((disparities + len - 1) / len > 32) len *= 2;
  return len;
}

// A level's segment length: kSegment, shorter (down to 4) where the level's full-range work would
// otherwise be too few items for the GPU (`blocks` resident blocks), never so short that a tile
// needs more than 32 segments.
__host__ __device__ inline int segment_length(int tiles, int disparities, int blocks) {
  int seg = kSegment;
  while (seg > 4 && 2 * tiles * ((disparities + seg - 1) / seg) < 2 * blocks &&
         (disparities + seg / 2 - 1) / (seg / 2) <= 32) {
    seg /= 2;
  }
  return seg;
}
static_assert(kMaxBatch <= 32, "5 bits for the member");

// Counters of one level's lists (zeroed at the start of each launch).
struct ListCounters {
  std::uint32_t heavy = 0;  // items of split tiles (taken first)
  std::uint32_t light = 0;  // whole tiles
  std::uint32_t taken = 0;
  // Finest level: non-zero once either camera's matching mask holds foreground in any member
  // (the background model sets it; the gate of batch_graph.cu reads it).
  std::uint32_t foreground = 0;
};

// One level's lists, as a kernel takes them (a kernel parameter indexed at run time would go to
// local memory: the launcher picks the level's pointers).
struct LevelLists {
  ListCounters* counters = nullptr;
  std::uint64_t* heavy = nullptr;  // list_entry values
  std::uint64_t* light = nullptr;
};

// Scratch shared by all members of a batch (launches of one group never overlap).
struct Workspace {
  ListCounters* counters = nullptr;  // [kMaxLevels]
  std::uint64_t* heavy[kMaxLevels] = {};
  std::uint64_t* light[kMaxLevels] = {};
  int workers = 0;  // blocks of the persistent matching kernel

  LevelLists level(int l) const { return {counters + l, heavy[l], light[l]}; }
};

}  // namespace stereod::cuda
