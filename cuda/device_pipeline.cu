#include "device_pipeline.hpp"

#include "background/background_ops.hpp"
#include "kernels/background_kernels.hpp"
#include "kernels/stereo_kernels.hpp"

namespace stereod::cuda {
namespace {

template <typename T>
void ensure(DeviceBuffer<T>& b, std::size_t count) {
  if (b.size() != count) b.allocate(count);
}

template <typename T>
std::vector<T> download(const DeviceBuffer<T>& b) {
  std::vector<T> out(b.size());
  if (!out.empty())
    STEREOD_CUDA(cudaMemcpy(out.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

DevicePipeline::DevicePipeline(int width, int height)
    : width_(width), height_(height), workers_(match_workers()) {
  frames_.allocate(1);
  STEREOD_CUDA(cudaMemset(frames_.get(), 0, sizeof(long long)));
}

void DevicePipeline::configure(const StereoParams& stereo, const BackgroundParams& background,
                               bool color, cudaStream_t stream) {
  const int levels = effective_levels(stereo);
  // The CPU model restarts when it is switched back on, or when its levels or channels change.
  const bool restart = !configured_ || levels != levels_ || color != color_ ||
                       (background.enabled && !background_.enabled);
  stereo_ = stereo;
  background_ = background;
  tables_ = make_cost_tables(stereo);
  color_ = color;
  levels_ = levels;
  configured_ = true;

  level_.resize(static_cast<std::size_t>(levels));
  const bool census = tables_.uses_census;
  const bool ad = stereo.ad_mean_radius > 0 && stereo.cost != MatchingCost::kCensus;
  for (int s = 0; s < levels; ++s) {
    Level& lv = level_[s];
    lv.w = level_side(width_, s);
    lv.h = level_side(height_, s);
    const std::size_t n = static_cast<std::size_t>(lv.w) * lv.h;
    for (int i = 0; i < 2; ++i) {
      if (s > 0) ensure(lv.gray[i], n);
      if (census)
        ensure(lv.census[i], n);
      else
        lv.census[i].release();
      if (ad)
        ensure(lv.ad[i], n);
      else
        lv.ad[i].release();
      ensure(lv.disp[i], n);
      const MatchScratchSizes z = match_scratch_sizes(
          lv.w, lv.h, level_disparities(stereo.max_disparity, s), stereo.subwindow);
      if (z.chunks > 0) {
        ensure(lv.range_lo[i], z.pixels);
        ensure(lv.range_hi[i], z.pixels);
        ensure(lv.tile_lo[i], z.tiles);
        ensure(lv.tile_hi[i], z.tiles);
        ensure(lv.key[i], z.pixels);
        if (i == 0) {
          ensure(lv.work, z.work_items);
          ensure(lv.work_counters, 2);
        }
        if (s == 0)
          ensure(lv.cmcp[i], z.pixels * z.chunks);
        else
          lv.cmcp[i].release();
      }
      if (background.enabled) {
        for (int c = 0; c < 3; ++c) {
          const bool plane = color || c == kValue;
          if (color && s > 0)
            ensure(lv.rgb[i][c], n);
          else
            lv.rgb[i][c].release();
          if (color)
            ensure(lv.hsv[i][c], n);
          else
            lv.hsv[i][c].release();
          if (plane) {
            ensure(lv.mean[i][c], n);
            ensure(lv.var[i][c], n);
          } else {
            lv.mean[i][c].release();
            lv.var[i][c].release();
          }
        }
        ensure(lv.raw[i], n);
        ensure(lv.closed[i], n);
        ensure(lv.mask[i], n);
        ensure(lv.still[i], n);
        ensure(lv.prev[i], n);
      }
    }
  }
  const std::size_t full = static_cast<std::size_t>(width_) * height_;
  for (int i = 0; i < 2; ++i) {
    ensure(q4_[i], full);
    if (stereo.speckle_size > 0) {
      ensure(speckle_parent_[i], full);
      ensure(speckle_count_[i], full);
    }
  }
  if (restart) reset_background(stream);
}

void DevicePipeline::set_rectification(const RectificationMap* left,
                                       const RectificationMap* right) {
  const RectificationMap* maps[2] = {left, right};
  for (int i = 0; i < 2; ++i) {
    if (!maps[i]) {
      map_[i].release();
      continue;
    }
    map_[i].allocate(maps[i]->xy.size());
    STEREOD_CUDA(
        cudaMemcpy(map_[i].get(), maps[i]->xy.data(), map_[i].bytes(), cudaMemcpyHostToDevice));
    const std::size_t px = static_cast<std::size_t>(width_) * height_;
    rect_gray_[i].allocate(px);
    rect_rgb_[i].allocate(3 * px);
  }
}

void DevicePipeline::reset_background(cudaStream_t stream) {
  STEREOD_CUDA(cudaMemsetAsync(frames_.get(), 0, sizeof(long long), stream));
}

const std::uint8_t* DevicePipeline::gray_at(const FrameBuffers& io, int level, int image) const {
  if (level > 0) return level_[level].gray[image].get();
  return map_[image].get() ? rect_gray_[image].get() : io.gray[image];
}

const std::uint8_t* DevicePipeline::rgb_at(const FrameBuffers& io, int image) const {
  if (!io.rgb[image]) return nullptr;
  return map_[image].get() ? rect_rgb_[image].get() : io.rgb[image];
}

void DevicePipeline::enqueue(const FrameBuffers& io, cudaStream_t stream, StageMarks* marks) {
  const StereoParams& p = stereo_;
  const int levels = levels_;
  auto mark = [&](const std::string& stage) {
    if (marks) marks->mark(stage, stream);
  };

  // Rectification first: everything after reads the rectified frame.
  if (map_[0].get()) {
    RectifyArgs r;
    for (int i = 0; i < 2; ++i) {
      r.gray[i] = io.gray[i];
      r.rgb[i] = color_ ? io.rgb[i] : nullptr;
      r.map[i] = map_[i].get();
      r.out_gray[i] = rect_gray_[i].get();
      r.out_rgb[i] = rect_rgb_[i].get();
    }
    r.width = width_;
    r.height = height_;
    launch_rectify(r, stream);
    mark("rectification");
  }

  // Pyramid, census and the AD term's input, finest first.
  for (int s = 0; s < levels; ++s) {
    const Level& lv = level_[s];
    PreprocessArgs a;
    for (int i = 0; i < 2; ++i) {
      a.gray[i] = gray_at(io, s, i);
      a.census[i] = lv.census[i].get();
      a.ad[i] = lv.ad[i].get();
      a.down[i] = s + 1 < levels ? level_[s + 1].gray[i].get() : nullptr;
    }
    a.width = lv.w;
    a.height = lv.h;
    if (s + 1 < levels) {
      a.down_width = level_[s + 1].w;
      a.down_height = level_[s + 1].h;
    }
    a.census_width = p.census_width;
    a.census_height = p.census_height;
    a.ad_radius = p.ad_mean_radius;
    launch_preprocess(a, stream);
  }
  mark("pyramid, census, mean removal");

  // Background model of both cameras, coarsest level first.
  const bool modeling = background_.enabled;
  if (modeling) {
    STEREOD_CUDA(cudaMemsetAsync(io.tested, 0, sizeof(unsigned long long) * 2 * levels, stream));
    if (color_) {
      for (int s = 0; s < levels; ++s) {
        Level& lv = level_[s];
        HsvLevelArgs a;
        for (int i = 0; i < 2; ++i) {
          a.rgb_interleaved[i] = s == 0 ? rgb_at(io, i) : nullptr;
          for (int c = 0; c < 3; ++c) {
            a.rgb_planar[i][c] = s == 0 ? nullptr : lv.rgb[i][c].get();
            a.hsv[i][c] = lv.hsv[i][c].get();
            a.down[i][c] = s + 1 < levels ? level_[s + 1].rgb[i][c].get() : nullptr;
          }
        }
        a.width = lv.w;
        a.height = lv.h;
        if (s + 1 < levels) {
          a.down_width = level_[s + 1].w;
          a.down_height = level_[s + 1].h;
        }
        launch_hsv_level(a, stream);
      }
    }
    const BackgroundFixed fixed = to_fixed(background_);
    for (int s = levels - 1; s >= 0; --s) {
      Level& lv = level_[s];
      BackgroundLevelArgs a;
      for (int i = 0; i < 2; ++i) {
        BackgroundCameraLevel& c = a.camera[i];
        for (int ch = 0; ch < 3; ++ch) {
          c.planes[ch] =
              color_ ? lv.hsv[i][ch].get() : (ch == kValue ? gray_at(io, s, i) : nullptr);
          c.mean[ch] = lv.mean[i][ch].get();
          c.var[ch] = lv.var[i][ch].get();
        }
        c.raw = lv.raw[i].get();
        c.closed = lv.closed[i].get();
        c.mask = lv.mask[i].get();
        c.still = lv.still[i].get();
        c.prev = lv.prev[i].get();
        c.parent_closed = s + 1 < levels ? level_[s + 1].closed[i].get() : nullptr;
        c.tested = io.tested + i * levels + s;
        c.output = (s == 0 && i == 0) ? io.foreground : nullptr;
      }
      a.width = lv.w;
      a.height = lv.h;
      if (s + 1 < levels) {
        a.parent_width = level_[s + 1].w;
        a.parent_height = level_[s + 1].h;
      }
      a.channels = color_ ? 3 : 1;
      a.fixed = fixed;
      a.initial_variance = static_cast<std::uint32_t>(background_.min_sigma * background_.min_sigma)
                           << 8;
      a.hierarchy = background_.hierarchy;
      a.closing_radius = background_.closing_radius;
      a.warmup = background_.warmup;
      a.frames = frames_.get();
      launch_background_classify(a, stream);
      launch_background_close_learn(a, stream);
    }
    launch_background_advance(frames_.get(), stream);
  } else {
    STEREOD_CUDA(
        cudaMemsetAsync(io.foreground, 255, static_cast<std::size_t>(width_) * height_, stream));
  }
  mark("background model");

  // Coarse to fine matching, both views per launch.
  for (int s = levels - 1; s >= 0; --s) {
    Level& lv = level_[s];
    MatchArgs a;
    for (int i = 0; i < 2; ++i) {
      MatchViewArgs& v = a.view[i];
      const int o = 1 - i;
      v.ref_ad = lv.ad[i].get() ? lv.ad[i].get() : gray_at(io, s, i);
      v.tgt_ad = lv.ad[o].get() ? lv.ad[o].get() : gray_at(io, s, o);
      v.ref_census = lv.census[i].get();
      v.tgt_census = lv.census[o].get();
      v.ref_fg = modeling ? lv.mask[i].get() : nullptr;
      v.tgt_fg = modeling ? lv.mask[o].get() : nullptr;
      v.parent_this = s + 1 < levels ? level_[s + 1].disp[i].get() : nullptr;
      v.parent_other = s + 1 < levels ? level_[s + 1].disp[o].get() : nullptr;
      v.out_disp = lv.disp[i].get();
      v.out_q4 = s == 0 ? q4_[i].get() : nullptr;
      v.direction = i == 0 ? -1 : 1;
    }
    a.width = lv.w;
    a.height = lv.h;
    if (s + 1 < levels) {
      a.parent_width = level_[s + 1].w;
      a.parent_height = level_[s + 1].h;
    }
    a.disparities = level_disparities(p.max_disparity, s);
    a.subwindow = p.subwindow;
    a.best_k = p.best_k;
    a.parent_radius = p.parent_radius;
    a.cross_check = p.cross_check;
    a.tolerance = p.cross_check_tolerance;
    a.subpixel = s == 0;
    a.uniqueness = p.uniqueness;
    a.tables = tables_;
    MatchScratch m;
    for (int i = 0; i < 2; ++i) {
      m.lo[i] = lv.range_lo[i].get();
      m.hi[i] = lv.range_hi[i].get();
      m.tile_lo[i] = lv.tile_lo[i].get();
      m.tile_hi[i] = lv.tile_hi[i].get();
      m.key[i] = lv.key[i].get();
      m.cmcp[i] = s == 0 ? lv.cmcp[i].get() : nullptr;
    }
    m.work = lv.work.get();
    m.counters = lv.work_counters.get();
    m.workers = workers_;
    launch_match(a, m, stream);
    mark("match level " + std::to_string(s) + " (" + std::to_string(lv.w) + "x" +
         std::to_string(lv.h) + ", D=" + std::to_string(a.disparities) + ")");
  }

  // Finest level: cross-check, speckles, median, filling.
  FinalCheckArgs fc;
  for (int i = 0; i < 2; ++i) {
    fc.disp[i] = level_[0].disp[i].get();
    fc.q4[i] = q4_[i].get();
  }
  fc.width = width_;
  fc.height = height_;
  fc.tolerance = p.cross_check_tolerance;
  fc.enabled = p.cross_check;
  launch_final_check(fc, stream);
  mark("cross-check");
  if (p.speckle_size > 0) {
    SpeckleArgs sp;
    for (int i = 0; i < 2; ++i) {
      sp.q4[i] = q4_[i].get();
      sp.parent[i] = speckle_parent_[i].get();
      sp.count[i] = speckle_count_[i].get();
    }
    sp.width = width_;
    sp.height = height_;
    sp.min_size = p.speckle_size;
    sp.max_step = p.speckle_range * kSubpixelScale;
    launch_speckle(sp, stream);
    mark("speckles");
  }
  MedianArgs md;
  for (int i = 0; i < 2; ++i) {
    md.in[i] = q4_[i].get();
    md.out[i] = io.disparity[i];
  }
  md.width = width_;
  md.height = height_;
  md.enabled = p.median;
  launch_median(md, stream);
  mark("median");
  if (p.fill) {
    FillArgs f;
    for (int i = 0; i < 2; ++i) {
      f.disp[i] = io.disparity[i];
      f.intensity[i] = gray_at(io, 0, i);
      f.fg[i] = modeling ? level_[0].mask[i].get() : nullptr;
    }
    f.width = width_;
    f.height = height_;
    f.background_mode = p.fill_mode == FillMode::kBackground;
    f.interpolate_max = p.fill_interpolate_max;
    launch_fill(f, stream);
    mark("fill");
  }
}

std::vector<std::uint16_t> DevicePipeline::download_mean(int camera, int level, int channel) const {
  return download(level_[level].mean[camera][channel]);
}

std::vector<std::uint32_t> DevicePipeline::download_variance(int camera, int level,
                                                             int channel) const {
  return download(level_[level].var[camera][channel]);
}

std::vector<std::uint8_t> DevicePipeline::download_mask(int camera, int level) const {
  return download(level_[level].mask[camera]);
}

std::vector<std::uint8_t> DevicePipeline::download_gray(int level, int image) const {
  return download(level_[level].gray[image]);  // levels above 0
}

std::vector<std::uint64_t> DevicePipeline::download_census(int level, int image) const {
  return download(level_[level].census[image]);
}

std::vector<std::int16_t> DevicePipeline::download_disparity(int level, int view) const {
  return download(level_[level].disp[view]);
}

std::vector<std::uint16_t> DevicePipeline::download_q4(int view) const {
  return download(q4_[view]);
}

void DevicePipeline::free_buffer_for_test() {
  level_[0].disp[0].release();
}

}  // namespace stereod::cuda
