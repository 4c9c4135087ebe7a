#include "device_pipeline.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "background/background_ops.hpp"
#include "kernels/shared_finest.cuh"
#include "stereo/sgm.hpp"

namespace stereod::cuda {
namespace {

template <typename T>
void ensure(DeviceBuffer<T>& b, std::size_t count) {
  if (b.size() != count) b.allocate(count);
}

template <typename T>
void keep_if(bool wanted, DeviceBuffer<T>& b, std::size_t count) {
  if (wanted)
    ensure(b, count);
  else
    b.release();
}

template <typename T>
std::vector<T> download(const DeviceBuffer<T>& b) {
  std::vector<T> out(b.size());
  if (!out.empty())
    STEREOD_CUDA(cudaMemcpy(out.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

int tiles_of(int side, int tile) {
  return (side + tile - 1) / tile;
}

int segments_of(int disparities, int segment = kSegment) {
  return (disparities + segment - 1) / segment;
}

}  // namespace

DevicePipeline::DevicePipeline(int width, int height, int slots)
    : width_(width),
      height_(height),
      workers_(match_window_workers()),
      frames_(static_cast<std::size_t>(slots)),
      io_(static_cast<std::size_t>(slots)) {
  args_.allocate(static_cast<std::size_t>(slots));
}

bool DevicePipeline::configure(const StereoParams& stereo, const BackgroundParams& background,
                               const PairLayout& layout) {
  const int levels = effective_levels(stereo);
  const bool color = background.enabled && background.color && layout.color_input;
  // The CPU model restarts when it is switched back on, or when its levels or channels change.
  const bool restart = !configured_ || levels != levels_ || color != color_ ||
                       (background.enabled && !background_.enabled);
  stereo_ = stereo;
  background_ = background;
  layout_ = layout;
  {
    const char* v = std::getenv("STEREOD_CUDA_SHARED_FINEST");
    bool refused = false;
    share_finest_ = shared_finest_override(v, &refused) == 1;
    // The engine has no logger; the daemon's stderr goes to the journal.
    if (refused) {
      std::fprintf(stderr,
                   "stereod: STEREOD_CUDA_SHARED_FINEST=\"%s\" ignored: it takes 0 or 1 (the "
                   "default, each view on its own, applies)\n",
                   v);
    }
  }
  tables_ = make_cost_tables(stereo);
  color_ = color;
  levels_ = levels;
  configured_ = true;

  level_.resize(static_cast<std::size_t>(levels));
  for (Frame& f : frames_) f.level.resize(static_cast<std::size_t>(levels));
  segment_.assign(static_cast<std::size_t>(levels), kSegment);
  const bool census = tables_.uses_census;
  const bool ad = stereo.ad_mean_radius > 0 && stereo.cost != MatchingCost::kCensus;
  const bool modeling = background.enabled;
  // Semi-global aggregation (paths over the volume) and cross-based aggregation (the volume's
  // region averages: aggregation cross, or sgm's cost) share the volume and its layout.
  const bool cross = uses_cross_aggregation(stereo);
  const bool volume = stereo.aggregation == Aggregation::kSgm || cross;
  // The volume holds at most kSgmMaxCells cells (a frame that needs more fails, as on the CPU),
  // and never more than a level whose every pixel searches its whole range.
  std::size_t capacity = 0;
  for (int s = 0; s < levels; ++s) {
    capacity = std::max(capacity,
                        static_cast<std::size_t>(level_side(width_, s)) *
                            static_cast<std::size_t>(level_side(height_, s)) *
                            static_cast<std::size_t>(level_disparities(stereo.max_disparity, s)));
  }
  sgm_capacity_ = volume ? std::min(capacity, kSgmMaxCells) : 0;
  // S for the paths; cross-based aggregation's iterations alternate between the two buffers.
  const bool sums =
      stereo.aggregation == Aggregation::kSgm || (cross && stereo.cross_iterations > 1);
  const std::size_t full = static_cast<std::size_t>(width_) * height_;
  for (int i = 0; i < 2; ++i) {
    keep_if(volume, sgm_cost_[i], sgm_capacity_);
    keep_if(sums, sgm_sum_[i], sgm_capacity_);
    keep_if(cross, cross_arms_[i], full);
    keep_if(cross, cross_hull_lo_[i], full);
    keep_if(cross, cross_hull_hi_[i], full);
    keep_if(cross, cross_hull_rel_[i], full);
    keep_if(cross, cross_hull_row_[i], static_cast<std::size_t>(height_));
    keep_if(cross, cross_partial_[i], sgm_capacity_);
    keep_if(cross && stereo.cross_iterations > 1, cross_counts_[i], sgm_capacity_);
  }
  keep_if(cross, cross_hull_cells_, 2);
  if (volume && sgm_cells_.size() != 2 * kMaxLevels) {
    sgm_cells_.allocate(2 * kMaxLevels);
    STEREOD_CUDA(cudaMemset(sgm_cells_.get(), 0, sgm_cells_.bytes()));
  } else if (!volume) {
    sgm_cells_.release();
  }
  for (int s = 0; s < levels; ++s) {
    Level& lv = level_[s];
    lv.w = level_side(width_, s);
    lv.h = level_side(height_, s);
    const std::size_t n = static_cast<std::size_t>(lv.w) * lv.h;
    const std::size_t tiles =
        static_cast<std::size_t>(tiles_of(lv.w, kTileW)) * tiles_of(lv.h, kTileH);
    const std::size_t blocks =
        static_cast<std::size_t>(tiles_of(lv.w, kBlockW)) * tiles_of(lv.h, kBlockH);
    // The coarsest level searches every disparity of every pixel: where it has too few tiles to
    // keep the GPU busy, its disparities are split into shorter segments (more, shorter items).
    // The levels between it and the finest split at 16 where their tiles are fewer than four per
    // resident block: their tiles' ranges are narrow but uneven, and the few wide ones held the
    // level back (1024x768 on an H100, level 1: 67 -> 57 us; docs/PERFORMANCE.md).
    const int nd = level_disparities(stereo.max_disparity, s);
    if (s == levels - 1) {
      segment_[s] = segment_length(static_cast<int>(tiles), nd, workers_);
    } else if (s > 0 && 2 * tiles < 4 * static_cast<std::size_t>(workers_)) {
      segment_[s] = kSegment / 2;
    }
    const int segments = segments_of(nd, segment_[s]);
    for (Frame& f : frames_) {
      FrameLevel& fl = f.level[static_cast<std::size_t>(s)];
      for (int i = 0; i < 2; ++i) {
        keep_if(s > 0 || layout.derive_gray, fl.gray[i], n);
        keep_if(modeling, fl.closed[i], n);
        keep_if(modeling, fl.mask[i], n);
        keep_if(modeling, fl.block_fg[i], blocks);
        keep_if(census, fl.census[i], n);
        keep_if(ad, fl.ad[i], n);
        ensure(fl.disp[i], n);
        ensure(fl.lo[i], n);
        ensure(fl.hi[i], n);
        ensure(fl.tile_done[i], tiles);
        keep_if(segments > 1, fl.key[i], n);
        keep_if(s == 0 && segments > 1, fl.cmcp[i], n * static_cast<std::size_t>(segments));
      }
      const bool shared = s == 0 && shares_finest();
      keep_if(shared, fl.shared_cands, n);
      keep_if(shared, fl.right_slots, kRightSlots * n);
      keep_if(shared, fl.shared_tiles, kSharedTileWords * tiles);
    }
    for (int i = 0; i < 2; ++i) {
      for (int c = 0; c < 3; ++c) {
        keep_if(modeling && color, lv.hsv[i][c], n);
        const bool plane = modeling && (color || c == kValue);
        for (int k = 0; k < 2; ++k) {
          keep_if(plane, lv.mean[k][i][c], n);
          keep_if(plane, lv.var[k][i][c], n);
        }
      }
      keep_if(modeling, lv.still[i], n);
      keep_if(modeling, lv.prev[i], n);
      keep_if(volume, lv.sgm_rel[i], n);
      keep_if(volume, lv.sgm_row[i], static_cast<std::size_t>(lv.h));
    }
  }
  const bool ghosts = modeling && background.depth_ghosts;
  keep_if(ghosts, depth_records_, kMaxDepthLag * full);
  keep_if(ghosts, depth_static_, full);
  keep_if(ghosts, depth_last_, full);
  const std::size_t tiles0 =
      static_cast<std::size_t>(tiles_of(width_, kTileW)) * tiles_of(height_, kTileH);
  keep_if(ghosts, depth_tiles_, kMaxDepthLag * tiles0);
  for (Frame& f : frames_) {
    for (int i = 0; i < 2; ++i) {
      ensure(f.q4[i], full);
      ensure(f.post_active[i], tiles0);
      const bool speckles = stereo.speckle_size > 0 && (i == 0 || layout.right_output);
      keep_if(speckles, f.label[i], full);
      keep_if(speckles, f.local_size[i], full);
      keep_if(speckles, f.size[i], full);
      const bool refine = stereo.refine && (i == 0 || layout.right_output);
      keep_if(refine, f.refine_arms[i], full);
      keep_if(refine, f.refine_changed[i], kMaxRefineIterations);
      // Round k writes map k & 1: one map is enough for a single round.
      keep_if(refine && stereo.refine_iterations > 0, f.refined[i][0], full);
      keep_if(refine && stereo.refine_iterations > 1, f.refined[i][1], full);
      keep_if(refine && stereo.refine_interpolate, f.refine_interpolated[i], full);
    }
  }
  write_args();
  return restart;
}

void DevicePipeline::set_rectification(const RectificationMap* left,
                                       const RectificationMap* right) {
  const RectificationMap* maps[2] = {left, right};
  for (int i = 0; i < 2; ++i) {
    if (!maps[i]) {
      map_[i].release();
      for (Frame& f : frames_) {
        f.rect_gray[i].release();
        f.rect_rgb[i].release();
      }
      continue;
    }
    map_[i].allocate(maps[i]->xy.size());
    STEREOD_CUDA(
        cudaMemcpy(map_[i].get(), maps[i]->xy.data(), map_[i].bytes(), cudaMemcpyHostToDevice));
    const std::size_t px = static_cast<std::size_t>(width_) * height_;
    for (Frame& f : frames_) {
      f.rect_gray[i].allocate(px);
      f.rect_rgb[i].allocate(3 * px);
    }
  }
  if (configured_) write_args();
}

void DevicePipeline::set_depth_from(long long frame) {
  depth_from_ = frame;
  if (configured_) write_args();
}

void DevicePipeline::set_slot_io(int slot, const SlotIo& io) {
  io_[static_cast<std::size_t>(slot)] = io;
  if (configured_) write_args();
}

MemberArgs DevicePipeline::make_args(int slot) const {
  const SlotIo& io = io_[static_cast<std::size_t>(slot)];
  const Frame& frame = frames_[static_cast<std::size_t>(slot)];
  MemberArgs a;
  a.width = width_;
  a.height = height_;
  a.levels = levels_;
  a.stereo = stereo_;
  a.tables = tables_;
  a.modeling = background_.enabled;
  a.color = color_;
  a.fixed = to_fixed(background_);
  a.initial_variance = static_cast<std::uint32_t>(background_.min_sigma * background_.min_sigma)
                       << 8;
  a.hierarchy = background_.hierarchy;
  a.closing_radius = background_.closing_radius;
  a.target_margin = background_.target_margin;
  a.warmup = background_.warmup;
  if (background_.enabled && background_.depth_ghosts) {
    a.depth_records = depth_records_.get();
    a.depth_static = depth_static_.get();
    a.depth_from = depth_from_;
    a.depth_tiles = depth_tiles_.get();
    a.depth_last = depth_last_.get();
  }
  const bool rectify = map_[0].get() != nullptr;
  for (int i = 0; i < 2; ++i) {
    a.in_gray[i] = layout_.derive_gray ? nullptr : io.gray[i];
    a.in_rgb[i] = layout_.color_input ? io.rgb[i] : nullptr;
    a.map[i] = map_[i].get();
    a.rect_gray[i] = rectify ? frame.rect_gray[i].get() : nullptr;
    a.rect_rgb[i] = rectify && color_ ? frame.rect_rgb[i].get() : nullptr;
    a.src_gray[i] = rectify ? frame.rect_gray[i].get() : a.in_gray[i];
    a.src_rgb[i] = rectify ? (color_ ? frame.rect_rgb[i].get() : nullptr) : a.in_rgb[i];
    a.q4[i] = frame.q4[i].get();
    a.label[i] = frame.label[i].get();
    a.local_size[i] = frame.local_size[i].get();
    a.size[i] = frame.size[i].get();
    a.post_active[i] = frame.post_active[i].get();
    a.refine_arms[i] = frame.refine_arms[i].get();
    a.refined[i][0] = frame.refined[i][0].get();
    a.refined[i][1] = frame.refined[i][1].get();
    a.refine_changed[i] = frame.refine_changed[i].get();
    a.refine_interpolated[i] = frame.refine_interpolated[i].get();
  }
  a.out_disp[0] = io.disparity[0];
  a.out_disp[1] = layout_.right_output ? io.disparity[1] : nullptr;
  a.out_fg = background_.enabled ? io.foreground : nullptr;
  a.out_cost_ratio = layout_.cost_ratio_output ? io.cost_ratio : nullptr;
  a.out_confidence = layout_.confidence ? io.confidence : nullptr;
  a.tested = io.tested;
  a.out_foreground_word = io.foreground_word;
  for (int i = 0; i < 2; ++i) {
    a.sgm_cost[i] = sgm_cost_[i].get();
    a.sgm_sum[i] = sgm_sum_[i].get();
  }
  a.sgm_capacity = sgm_capacity_;
  for (int i = 0; i < 2; ++i) {
    a.cross.arms[i] = cross_arms_[i].get();
    a.cross.hull_lo[i] = cross_hull_lo_[i].get();
    a.cross.hull_hi[i] = cross_hull_hi_[i].get();
    a.cross.hull_rel[i] = cross_hull_rel_[i].get();
    a.cross.hull_row[i] = cross_hull_row_[i].get();
    a.cross.partial[i] = cross_partial_[i].get();
    a.cross.counts[i] = cross_counts_[i].get();
  }
  a.cross.hull_cells = cross_hull_cells_.get();
  a.out_sgm_cells = sgm_capacity_ > 0 ? io.sgm_cells : nullptr;
  for (int s = 0; s < levels_; ++s) {
    const Level& lv = level_[s];
    const FrameLevel& fl = frame.level[static_cast<std::size_t>(s)];
    LevelBuffers& b = a.level[s];
    b.width = lv.w;
    b.height = lv.h;
    b.tiles_x = tiles_of(lv.w, kTileW);
    b.tiles_y = tiles_of(lv.h, kTileH);
    b.disparities = level_disparities(stereo_.max_disparity, s);
    b.segment = segment_[s];
    for (int i = 0; i < 2; ++i) {
      // Level 0's gray: the rectified frame, the input, or (color only, unrectified) the luma the
      // pyramid writes.
      const bool derived0 = s == 0 && a.src_gray[i] == nullptr;
      b.gray[i] = s > 0 || derived0 ? fl.gray[i].get() : a.src_gray[i];
      b.gray_out[i] = s > 0 || derived0 ? fl.gray[i].get() : nullptr;
      b.census[i] = fl.census[i].get();
      b.ad[i] = fl.ad[i].get();
      for (int c = 0; c < 3; ++c) {
        b.hsv[i][c] = lv.hsv[i][c].get();
        for (int k = 0; k < 2; ++k) {
          b.mean[k][i][c] = lv.mean[k][i][c].get();
          b.var[k][i][c] = lv.var[k][i][c].get();
        }
      }
      b.still[i] = lv.still[i].get();
      b.prev[i] = lv.prev[i].get();
      b.closed[i] = fl.closed[i].get();
      b.mask[i] = fl.mask[i].get();
      b.block_fg[i] = fl.block_fg[i].get();
      b.disp[i] = fl.disp[i].get();
      b.lo[i] = fl.lo[i].get();
      b.hi[i] = fl.hi[i].get();
      b.tile_done[i] = fl.tile_done[i].get();
      b.key[i] = fl.key[i].get();
      b.cmcp[i] = fl.cmcp[i].get();
      b.sgm_rel[i] = lv.sgm_rel[i].get();
      b.sgm_row[i] = lv.sgm_row[i].get();
      b.sgm_cells[i] = sgm_cells_.get() ? sgm_cells_.get() + 2 * s + i : nullptr;
    }
    b.shared_cands = fl.shared_cands.get();
    b.shared_tiles = fl.shared_tiles.get();
    b.right_slots = fl.right_slots.get();
  }
  return a;
}

void DevicePipeline::write_args() {
  std::vector<MemberArgs> host;
  for (std::size_t k = 0; k < io_.size(); ++k) host.push_back(make_args(static_cast<int>(k)));
  STEREOD_CUDA(cudaMemcpy(args_.get(), host.data(), sizeof(MemberArgs) * host.size(),
                          cudaMemcpyHostToDevice));
}

// The window path: s = 3, no uniqueness test, no semi-global or cross-based aggregation. It does
// not keep the runner-up cost the confidence needs: with confidence, the general matcher (which
// keeps the four lowest costs of each pixel anyway) runs instead.
bool DevicePipeline::window_path() const {
  return stereo_.aggregation != Aggregation::kSgm && !uses_cross_aggregation(stereo_) &&
         stereo_.subwindow == 3 && stereo_.uniqueness == 0 && !layout_.confidence;
}

// Off unless STEREOD_CUDA_SHARED_FINEST=1 (read at each configure) asks for it, and then only on
// the window path with more than one level (at one level every pixel searches the whole range, and
// no right pixel's needs would fit its slots). Measured on an H200 (docs/PERFORMANCE.md, "One
// volume for both views at the finest level", session 20): it gains 2-5 % on the generated
// benchmark pairs but loses 2-19 % on real Middlebury scenes, one pair or eight at once, and with
// the background model; so the default is each view on its own.
bool DevicePipeline::shares_finest() const {
  return share_finest_ && window_path() && levels_ >= 2;
}

BatchShape DevicePipeline::shape(int count) const {
  BatchShape s;
  s.count = count;
  s.width = width_;
  s.height = height_;
  s.levels = levels_;
  for (int l = 0; l < levels_; ++l) {
    s.level_width[l] = level_[l].w;
    s.level_height[l] = level_[l].h;
  }
  s.rectify = map_[0].get() != nullptr;
  s.derive_gray = layout_.derive_gray;
  s.color = color_;
  s.modeling = background_.enabled;
  s.widen = background_.enabled && background_.target_margin > 0;
  s.depth_ghosts = background_.enabled && background_.depth_ghosts;
  s.census = tables_.uses_census;
  s.mean_removal = stereo_.ad_mean_radius > 0 && stereo_.cost != MatchingCost::kCensus;
  s.sgm = stereo_.aggregation == Aggregation::kSgm;
  s.sgm_window_cost = stereo_.sgm_cost == SgmCost::kWindow;
  s.cross = uses_cross_aggregation(stereo_);
  s.cross_iterations = stereo_.cross_iterations;
  s.sgm_paths = stereo_.sgm_paths;
  s.max_disparity = stereo_.max_disparity;
  s.window_path = window_path();
  s.shared_finest = shares_finest();
  s.best4 = stereo_.best_k == 4;
  s.speckles = stereo_.speckle_size > 0;
  s.fill = stereo_.fill;
  s.right_output = layout_.right_output;
  s.cost_ratio = layout_.cost_ratio_output;
  s.confidence = layout_.confidence;
  s.max_segments = segments_of(stereo_.max_disparity, segment_.empty() ? kSegment : segment_[0]);
  s.refine_rounds = stereo_.refine ? stereo_.refine_iterations : -1;
  s.refine_interpolate = stereo_.refine && stereo_.refine_interpolate;
  return s;
}

std::string DevicePipeline::batch_key() const {
  const BatchShape s = shape(1);
  std::string key =
      std::to_string(width_) + "x" + std::to_string(height_) + "/L" + std::to_string(levels_) + "/";
  for (bool b : {s.rectify, s.derive_gray, s.color, s.modeling, s.widen, s.depth_ghosts, s.census,
                 s.mean_removal, s.window_path, s.shared_finest, s.best4, s.speckles, s.fill,
                 s.right_output, s.confidence, s.cost_ratio}) {
    key += b ? '1' : '0';
  }
  // The refinement's rounds are launches; its histograms follow the disparities.
  if (s.refine_rounds >= 0) {
    key += "/refine" + std::to_string(s.refine_rounds) + (s.refine_interpolate ? "i" : "") + "d" +
           std::to_string(s.max_disparity);
  }
  // The path kernel's grid and scratch follow the paths and the disparities.
  // Cross-based aggregation's launches follow its iterations.
  if (s.cross) key += "/cross" + std::to_string(s.cross_iterations);
  if (s.sgm) {
    key += "/sgm" + std::to_string(s.sgm_paths) + (s.sgm_window_cost ? "w" : "p") + "d" +
           std::to_string(s.max_disparity);
  }
  return key;
}

std::size_t DevicePipeline::scratch_items(int level) const {
  if (level >= levels_) return 0;
  const Level& lv = level_[static_cast<std::size_t>(level)];
  const std::size_t tiles =
      static_cast<std::size_t>(tiles_of(lv.w, kTileW)) * tiles_of(lv.h, kTileH);
  // The most pieces a tile can be cut into: its whole range in the shortest pieces.
  const int nd = level_disparities(stereo_.max_disparity, level);
  const int piece = piece_length(0, nd - 1, segment_[level], nd, level == 0);
  return 2 * tiles * static_cast<std::size_t>(segments_of(nd, piece));
}

std::vector<std::uint16_t> DevicePipeline::download_mean(int camera, int level, int channel,
                                                         long long frames) const {
  return download(level_[level].mean[model_copy_written(frames - 1)][camera][channel]);
}

std::vector<std::uint32_t> DevicePipeline::download_variance(int camera, int level, int channel,
                                                             long long frames) const {
  return download(level_[level].var[model_copy_written(frames - 1)][camera][channel]);
}

std::vector<std::uint8_t> DevicePipeline::download_mask(int camera, int level) const {
  return download(last_frame().level[level].mask[camera]);
}

std::vector<std::uint8_t> DevicePipeline::download_gray(int level, int image) const {
  return download(last_frame().level[level].gray[image]);
}

std::vector<std::uint64_t> DevicePipeline::download_census(int level, int image) const {
  return download(last_frame().level[level].census[image]);
}

std::vector<std::int16_t> DevicePipeline::download_disparity(int level, int view) const {
  return download(last_frame().level[level].disp[view]);
}

std::vector<std::uint16_t> DevicePipeline::download_q4(int view) const {
  return download(last_frame().q4[view]);
}

void DevicePipeline::free_buffer_for_test() {
  for (Frame& f : frames_) f.level[0].disp[0].release();
  write_args();  // the next frame writes through a null pointer: an illegal address
}

void BatchWorkspace::ensure(const std::vector<std::size_t>& items_per_level) {
  if (!counters_.get()) {
    counters_.allocate(kMaxLevels);
    ws_.counters = counters_.get();
    ws_.workers = match_window_workers();
  }
  for (std::size_t l = 0; l < items_per_level.size() && l < kMaxLevels; ++l) {
    if (l >= items_.size()) items_.push_back(0);
    if (items_per_level[l] > items_[l]) {
      items_[l] = items_per_level[l];
      heavy_[l].allocate(items_[l]);
      light_[l].allocate(items_[l]);
      ws_.heavy[l] = heavy_[l].get();
      ws_.light[l] = light_[l].get();
      resized_ = true;
    }
  }
}

namespace {

auto marker(StageMarks* marks, cudaStream_t stream) {
  return [marks, stream](const std::string& stage) {
    if (marks) marks->mark(stage, stream);
  };
}

}  // namespace

void enqueue_model(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                   cudaStream_t stream, StageMarks* marks, const ForegroundSignal* gate) {
  const auto mark = marker(marks, stream);
  if (shape.rectify) {
    launch_rectify(shape, batch, stream);
    mark("rectification");
  }
  launch_pyramid(shape, batch, ws.counters, kMaxLevels, stream);  // zeroes the counters too
  mark("pyramid");
  if (shape.modeling) {
    ForegroundSignal finest = gate ? *gate : ForegroundSignal{};
    finest.word = &ws.counters[0].foreground;
    for (int s = shape.levels - 1; s >= 0; --s) {
      launch_background_model(shape, batch, s, s == 0 ? finest : ForegroundSignal{}, stream);
      if (shape.widen) launch_background_widen(shape, batch, s, stream);
    }
    mark("background model");
  }
}

void enqueue_stereo(const BatchShape& batch_shape, const BatchRecord* batch, const Workspace& ws,
                    cudaStream_t stream, StageMarks* marks, bool after_model) {
  const auto mark = marker(marks, stream);
  // Each stage's launch overlaps the tail of the kernel before it (launch.cuh): the first one only
  // when the model's kernels precede it in the same sequence, none where event marks sit between.
  BatchShape shape = batch_shape;
  shape.chained = after_model && !marks;
  // After the model: with it, only where matching will read.
  if (shape.census || shape.mean_removal) {
    launch_census(shape, batch, stream);
    shape.chained = !marks;
  }
  mark("census, mean removal");
  for (int s = shape.levels - 1; s >= 0; --s) {
    launch_search_ranges(shape, batch, ws, s, stream);
    shape.chained = !marks;
    if (s == 0 && shape.shared_finest) launch_list_shared_tiles(shape, batch, ws, stream);
    mark("search ranges level " + std::to_string(s));
    if (shape.sgm || shape.cross) {
      // Marked apart for the profile (--profile): the costs, the paths, the winners.
      launch_sgm_volume(shape, batch, s, stream);
      mark((shape.cross ? "cross aggregation level " : "sgm costs level ") + std::to_string(s));
      if (shape.sgm) {
        launch_sgm_paths(shape, batch, s, stream);
        mark("sgm paths level " + std::to_string(s));
      }
      launch_sgm_winners(shape, batch, s, stream);
    } else if (shape.window_path) {
      launch_match_window(shape, batch, ws, s, stream);
    } else {
      launch_match_generic(shape, batch, s, stream);
    }
    mark("match level " + std::to_string(s) + " (" + std::to_string(shape.level_width[s]) + "x" +
         std::to_string(shape.level_height[s]) + ")");
    if (s == 0 && shape.shared_finest) {
      launch_right_winners(shape, batch, stream);
      mark("right view's shared winners level 0");
    }
  }
  launch_check_and_label(shape, batch, stream);
  if (shape.speckles) {
    launch_speckle_join(shape, batch, stream);
    launch_speckle_count(shape, batch, stream);
  }
  mark("cross-check, speckle labels");
  if (shape.refine_rounds >= 0) {
    launch_refine_prepare(shape, batch, stream);
    for (int k = 0; k < shape.refine_rounds; ++k) launch_refine_round(shape, batch, k, stream);
    if (shape.refine_interpolate) launch_refine_interpolate(shape, batch, stream);
    mark("speckle removal, refinement");
  }
  launch_speckle_median(shape, batch, stream);
  mark("speckle removal, median");
  if (shape.fill) {
    launch_fill(shape, batch, stream);
    mark("fill");
  }
}

void enqueue_batch(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                   cudaStream_t stream, StageMarks* marks) {
  enqueue_model(shape, batch, ws, stream, marks);
  enqueue_stereo(shape, batch, ws, stream, marks, true);
}

}  // namespace stereod::cuda
