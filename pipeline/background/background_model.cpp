#include "background/background_model.hpp"

#include <algorithm>
#include <atomic>

#include "background/background_ops.hpp"
#include "background/morphology.hpp"
#include "stereo/pyramid.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

void ensure_levels(BackgroundPlanes& out, int levels, int channels) {
  out.channels = channels;
  out.levels.resize(static_cast<std::size_t>(levels));
  for (auto& l : out.levels) l.resize(3);
}

// uniform(u, v) = 1 where the 3x3 block of `closed` around (u, v) (clipped to the image) holds one
// value: its min equals its max, both separable.
void uniform_blocks(const Gray8& closed, Gray8& uniform) {
  const int w = closed.width(), h = closed.height();
  uniform.ensure_size(w, h);
  thread_local std::vector<std::uint8_t> row_min, row_max;
  row_min.resize(static_cast<std::size_t>(w) * h);
  row_max.resize(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y) {
    const std::uint8_t* c = closed.row(y);
    std::uint8_t* mn = row_min.data() + static_cast<std::size_t>(y) * w;
    std::uint8_t* mx = row_max.data() + static_cast<std::size_t>(y) * w;
    for (int x = 0; x < w; ++x) {
      const std::uint8_t l = c[x > 0 ? x - 1 : x], r = c[x + 1 < w ? x + 1 : x];
      mn[x] = std::min({l, c[x], r});
      mx[x] = std::max({l, c[x], r});
    }
  }
  for (int y = 0; y < h; ++y) {
    const std::size_t up = static_cast<std::size_t>(y > 0 ? y - 1 : y) * w;
    const std::size_t me = static_cast<std::size_t>(y) * w;
    const std::size_t down = static_cast<std::size_t>(y + 1 < h ? y + 1 : y) * w;
    std::uint8_t* out = uniform.row(y);
    for (int x = 0; x < w; ++x) {
      const std::uint8_t mn = std::min({row_min[up + x], row_min[me + x], row_min[down + x]});
      const std::uint8_t mx = std::max({row_max[up + x], row_max[me + x], row_max[down + x]});
      out[x] = mn == mx;
    }
  }
}

}  // namespace

void make_gray_planes(ImageView<const std::uint8_t> gray, int levels, BackgroundPlanes& out) {
  ensure_levels(out, levels, 1);
  copy_into(gray, out.levels[0][kValue]);
  for (int s = 1; s < levels; ++s)
    downsample(out.levels[s - 1][kValue].view(), out.levels[s][kValue]);
}

void make_hsv_planes(const RgbView& rgb, int levels, BackgroundPlanes& out) {
  ensure_levels(out, levels, 3);
  // R, G, B pyramids (kept in `out` between frames), then HSV per level.
  for (auto& p : out.rgb) p.resize(static_cast<std::size_t>(levels));
  for (int c = 0; c < 3; ++c) out.rgb[c][0].ensure_size(rgb.width, rgb.height);
  for (int y = 0; y < rgb.height; ++y) {
    const std::uint8_t* src = rgb.row(y);
    std::uint8_t* r = out.rgb[0][0].row(y);
    std::uint8_t* g = out.rgb[1][0].row(y);
    std::uint8_t* b = out.rgb[2][0].row(y);
    for (int x = 0; x < rgb.width; ++x) {
      r[x] = src[3 * x];
      g[x] = src[3 * x + 1];
      b[x] = src[3 * x + 2];
    }
  }
  for (int c = 0; c < 3; ++c) {
    for (int s = 1; s < levels; ++s) downsample(out.rgb[c][s - 1].view(), out.rgb[c][s]);
  }
  for (int s = 0; s < levels; ++s) {
    const int w = out.rgb[0][s].width(), h = out.rgb[0][s].height();
    auto& lv = out.levels[s];
    for (auto& p : lv) p.ensure_size(w, h);
    for (std::size_t i = 0; i < static_cast<std::size_t>(w) * h; ++i) {
      rgb_to_hsv(out.rgb[0][s].data()[i], out.rgb[1][s].data()[i], out.rgb[2][s].data()[i],
                 lv[kHue].data()[i], lv[kSaturation].data()[i], lv[kValue].data()[i]);
    }
  }
}

BackgroundModel::BackgroundModel(const BackgroundParams& params) {
  set_params(params);
}

void BackgroundModel::set_params(const BackgroundParams& params) {
  validate_background_params(params);
  const bool restart = params.enabled && !params_.enabled;
  // Ghosts seen in depth start afresh when turned on: records from that frame on, the static depth
  // learned anew (the CUDA engine does the same: DevicePipeline::set_depth_from).
  const bool ghosts_on = params.depth_ghosts && !params_.depth_ghosts;
  params_ = params;
  fixed_ = to_fixed(params);
  if (restart) reset();
  if (ghosts_on) ghosts_.reset();
}

void BackgroundModel::reset() {
  ghosts_.reset();
  levels_.clear();
  channels_ = 0;
  frames_ = 0;
}

std::uint32_t initial_variance(const BackgroundParams& p) {
  return static_cast<std::uint32_t>(p.min_sigma * p.min_sigma) << 8;
}

void BackgroundModel::initialise(const BackgroundPlanes& planes) {
  ghosts_.reset();
  levels_.assign(planes.levels.size(), Level{});
  channels_ = planes.channels;
  const std::uint32_t var0 = initial_variance(params_);
  for (std::size_t s = 0; s < planes.levels.size(); ++s) {
    Level& lv = levels_[s];
    for (int c = 0; c < 3; ++c) {
      if (channels_ == 1 && c != kValue) continue;
      const Gray8& img = planes.levels[s][c];
      lv.mean[c].resize(img.size());
      for (std::size_t i = 0; i < img.size(); ++i)
        lv.mean[c][i] = static_cast<std::uint16_t>(img.data()[i] << 8);
      lv.var[c].assign(img.size(), var0);
    }
    const Gray8& v = planes.levels[s][kValue];
    lv.still.assign(v.size(), 0);
    lv.prev.assign(v.pixels().begin(), v.pixels().end());
  }
}

template <int kChannels>
void BackgroundModel::learn(const BackgroundPlanes& planes, int s, ThreadPool* pool) {
  Level& lv = levels_[s];
  const std::uint32_t var0 = initial_variance(params_);
  const int w = lv.closed.width();
  // The channels the model keeps: value alone, or hue, saturation and value.
  constexpr int kFirst = kChannels == 1 ? kValue : 0;
  for_rows(pool, lv.closed.height(), [&](int y0, int y1) {
    std::uint8_t x[3] = {0, 0, 0};
    std::uint16_t* mean[3] = {nullptr, nullptr, nullptr};
    std::uint32_t* var[3] = {nullptr, nullptr, nullptr};
    for (std::size_t i = static_cast<std::size_t>(y0) * w; i < static_cast<std::size_t>(y1) * w;
         ++i) {
      for (int c = kFirst; c < 3; ++c) {
        x[c] = planes.levels[s][c].data()[i];
        mean[c] = &lv.mean[c][i];
        var[c] = &lv.var[c][i];
      }
      learn_pixel(x, mean, var, lv.still[i], lv.prev[i], kChannels, lv.closed.data()[i] != 0,
                  frames_, params_.warmup, var0, fixed_);
    }
  });
}

void BackgroundModel::apply_depth_flags(const BackgroundPlanes& planes, const Gray8& flags,
                                        ThreadPool* pool) {
  for (std::size_t s = 0; s < levels_.size(); ++s) {
    Level& lv = levels_[s];
    const int w = planes.levels[s][kValue].width();
    for_rows(pool, planes.levels[s][kValue].height(), [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        // The finest pixel at this one's top-left corner (levels halve, rounding up: it may lie
        // outside the finest image, where nothing is revealed).
        if ((y << s) >= flags.height()) continue;
        const std::uint8_t* row = flags.row(y << s);
        for (int px = 0; px < w && (px << s) < flags.width(); ++px) {
          std::uint16_t& counters = lv.still[static_cast<std::size_t>(y) * w + px];
          counters = depth_flagged_counters(counters, row[px << s], fixed_.depth_lag);
        }
      }
    });
  }
}

template <int kChannels>
long long BackgroundModel::decide(const BackgroundPlanes& planes, int s, ThreadPool* pool) {
  Level& lv = levels_[s];
  const auto& img = planes.levels[s];
  const int w = img[kValue].width(), h = img[kValue].height();
  lv.raw.ensure_size(w, h);
  constexpr int kFirst = kChannels == 1 ? kValue : 0;
  // Hierarchy: a pixel under a uniform 3x3 block of the coarser closed decision copies it.
  const bool hierarchy = params_.hierarchy && s + 1 < static_cast<int>(levels_.size());
  if (hierarchy) uniform_blocks(levels_[s + 1].closed, lv.uniform);
  const Gray8* parent = hierarchy ? &levels_[s + 1].closed : nullptr;
  std::atomic<long long> tested{0};
  for_rows(pool, h, [&](int y0, int y1) {
    std::uint8_t x[3] = {0, 0, 0};
    std::uint16_t mean[3] = {0, 0, 0};
    std::uint32_t var[3] = {0, 0, 0};
    long long local = 0;
    for (int y = y0; y < y1; ++y) {
      std::uint8_t* raw = lv.raw.row(y);
      const std::uint8_t* uniform = nullptr;
      const std::uint8_t* above = nullptr;
      int pw = 0;
      if (parent) {
        const int py = std::min(y / 2, parent->height() - 1);
        pw = parent->width();
        uniform = lv.uniform.row(py);
        above = parent->row(py);
      }
      for (int px_x = 0; px_x < w; ++px_x) {
        if (uniform) {
          const int cx = std::min(px_x / 2, pw - 1);
          if (uniform[cx]) {
            raw[px_x] = above[cx];
            continue;
          }
        }
        const std::size_t i = static_cast<std::size_t>(y) * w + px_x;
        for (int c = kFirst; c < 3; ++c) {
          x[c] = img[c].data()[i];
          mean[c] = lv.mean[c][i];
          var[c] = lv.var[c][i];
        }
        raw[px_x] = classify_pixel(x, mean, var, kChannels, fixed_);
        ++local;
      }
    }
    tested += local;
  });
  return tested.load();
}

void BackgroundModel::process(const BackgroundPlanes& planes, std::vector<Gray8>& masks,
                              BackgroundStats* stats, ThreadPool* pool) {
  const int levels = static_cast<int>(planes.levels.size());
  masks.resize(static_cast<std::size_t>(levels));
  if (stats) {
    stats->tested.assign(static_cast<std::size_t>(levels), 0);
    stats->pixels.assign(static_cast<std::size_t>(levels), 0);
    stats->warming_up = false;
  }
  if (!params_.enabled) {
    for (int s = 0; s < levels; ++s) {
      const Gray8& ref = planes.levels[s][kValue];
      masks[s].ensure_size(ref.width(), ref.height());
      masks[s].fill(1);
      if (stats) stats->pixels[s] = static_cast<long long>(ref.size());
    }
    return;
  }
  bool shape_changed = static_cast<int>(levels_.size()) != levels || channels_ != planes.channels;
  for (int s = 0; s < levels && !shape_changed; ++s) {
    shape_changed = levels_[s].still.size() != planes.levels[s][kValue].size();
  }
  if (shape_changed || frames_ == 0) {
    initialise(planes);
    frames_ = 0;
  }
  const bool warming = frames_ < params_.warmup;
  // Ghosts seen in depth, before any level learns: what the record of the frame depth_lag before
  // shows behind the learned model is absorbed after depth_lag still frames at most,
  // and what it shows in front of it waits absorb_frames.
  if (params_.depth_ghosts && frames_ > 0) {
    const Gray8* flags = ghosts_.flags(frames_, fixed_.depth_lag, params_.warmup,
                                       fixed_.depth_farther_q8, fixed_.depth_in_front, pool);
    if (flags) apply_depth_flags(planes, *flags, pool);
  }

  for (int s = levels - 1; s >= 0; --s) {
    Level& lv = levels_[s];
    const int w = planes.levels[s][kValue].width(), h = planes.levels[s][kValue].height();
    const long long tested =
        channels_ == 1 ? decide<1>(planes, s, pool) : decide<3>(planes, s, pool);
    close_mask(lv.raw, params_.closing_radius, lv.closed, lv.scratch);
    // The first frame only initialised the model; every later one teaches it.
    if (frames_ > 0) {
      if (channels_ == 1) {
        learn<1>(planes, s, pool);
      } else {
        learn<3>(planes, s, pool);
      }
    }
    masks[s].ensure_size(w, h);
    if (warming)
      masks[s].fill(1);
    else
      masks[s] = lv.closed;
    if (stats) {
      stats->tested[s] = tested;
      stats->pixels[s] = static_cast<long long>(w) * h;
    }
  }
  if (stats) stats->warming_up = warming;
  if (params_.depth_ghosts) ghosts_.record_decision(frames_, levels_[0].closed);
  ++frames_;
}

void BackgroundModel::record_disparity(const Image<std::uint16_t>& left) {
  if (!params_.enabled || !params_.depth_ghosts || frames_ == 0) return;
  ghosts_.record_disparity(frames_ - 1, left.data(), left.size());
}

}  // namespace stereod
