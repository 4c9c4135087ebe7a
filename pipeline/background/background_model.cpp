#include "background/background_model.hpp"

#include <algorithm>

#include "background/background_ops.hpp"
#include "background/morphology.hpp"
#include "stereo/pyramid.hpp"

namespace stereod {
namespace {

void ensure_levels(BackgroundPlanes& out, int levels, int channels) {
  out.channels = channels;
  out.levels.resize(static_cast<std::size_t>(levels));
  for (auto& l : out.levels) l.resize(3);
}

}  // namespace

void make_gray_planes(ImageView<const std::uint8_t> gray, int levels, BackgroundPlanes& out) {
  ensure_levels(out, levels, 1);
  copy_into(gray, out.levels[0][kValue]);
  for (int s = 1; s < levels; ++s)
    downsample(out.levels[s - 1][kValue].view(), out.levels[s][kValue]);
}

void make_hsv_planes(const RgbImage& rgb, int levels, BackgroundPlanes& out) {
  ensure_levels(out, levels, 3);
  // R, G, B pyramids, then HSV per level.
  std::vector<Gray8> rgb_planes[3];
  for (auto& p : rgb_planes) p.resize(static_cast<std::size_t>(levels));
  for (int c = 0; c < 3; ++c) {
    Gray8& base = rgb_planes[c][0];
    base.ensure_size(rgb.width, rgb.height);
    for (int y = 0; y < rgb.height; ++y) {
      const std::uint8_t* src = rgb.row(y);
      std::uint8_t* dst = base.row(y);
      for (int x = 0; x < rgb.width; ++x) dst[x] = src[3 * x + c];
    }
    for (int s = 1; s < levels; ++s) downsample(rgb_planes[c][s - 1].view(), rgb_planes[c][s]);
  }
  for (int s = 0; s < levels; ++s) {
    const int w = rgb_planes[0][s].width(), h = rgb_planes[0][s].height();
    auto& lv = out.levels[s];
    for (auto& p : lv) p.ensure_size(w, h);
    for (std::size_t i = 0; i < static_cast<std::size_t>(w) * h; ++i) {
      rgb_to_hsv(rgb_planes[0][s].data()[i], rgb_planes[1][s].data()[i], rgb_planes[2][s].data()[i],
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
  params_ = params;
  fixed_ = to_fixed(params);
  if (restart) reset();
}

void BackgroundModel::reset() {
  levels_.clear();
  channels_ = 0;
  frames_ = 0;
}

std::uint32_t initial_variance(const BackgroundParams& p) {
  return static_cast<std::uint32_t>(p.min_sigma * p.min_sigma) << 8;
}

void BackgroundModel::initialise(const BackgroundPlanes& planes) {
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

void BackgroundModel::learn(const BackgroundPlanes& planes, int s) {
  Level& lv = levels_[s];
  const std::uint32_t var0 = initial_variance(params_);
  const std::size_t n = lv.still.size();
  std::uint8_t x[3] = {0, 0, 0};
  std::uint16_t* mean[3] = {nullptr, nullptr, nullptr};
  std::uint32_t* var[3] = {nullptr, nullptr, nullptr};
  for (std::size_t i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) {
      if (channels_ == 1 && c != kValue) continue;
      x[c] = planes.levels[s][c].data()[i];
      mean[c] = &lv.mean[c][i];
      var[c] = &lv.var[c][i];
    }
    learn_pixel(x, mean, var, lv.still[i], lv.prev[i], channels_, lv.closed.data()[i] != 0, frames_,
                params_.warmup, var0, fixed_);
  }
}

void BackgroundModel::process(const BackgroundPlanes& planes, std::vector<Gray8>& masks,
                              BackgroundStats* stats) {
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

  std::uint8_t x[3] = {0, 0, 0};
  std::uint16_t mean[3] = {0, 0, 0};
  std::uint32_t var[3] = {0, 0, 0};
  for (int s = levels - 1; s >= 0; --s) {
    Level& lv = levels_[s];
    const auto& img = planes.levels[s];
    const int w = img[kValue].width(), h = img[kValue].height();
    lv.raw.ensure_size(w, h);
    // Hierarchy: pixels under a uniform 3x3 block of the coarser closed decision copy it.
    const Gray8* parent = params_.hierarchy && s < levels - 1 ? &levels_[s + 1].closed : nullptr;
    long long tested = 0;
    for (int y = 0; y < h; ++y) {
      for (int px_x = 0; px_x < w; ++px_x) {
        if (parent) {
          const int pw = parent->width(), ph = parent->height();
          const int cx = std::min(px_x / 2, pw - 1), cy = std::min(y / 2, ph - 1);
          const std::uint8_t first = (*parent)(cx, cy);
          bool uniform = true;
          for (int v = std::max(0, cy - 1); v <= std::min(ph - 1, cy + 1) && uniform; ++v) {
            for (int u = std::max(0, cx - 1); u <= std::min(pw - 1, cx + 1); ++u) {
              if ((*parent)(u, v) != first) {
                uniform = false;
                break;
              }
            }
          }
          if (uniform) {
            lv.raw(px_x, y) = first;
            continue;
          }
        }
        const std::size_t i = static_cast<std::size_t>(y) * w + px_x;
        for (int c = 0; c < 3; ++c) {
          if (planes.channels == 1 && c != kValue) continue;
          x[c] = img[c].data()[i];
          mean[c] = lv.mean[c][i];
          var[c] = lv.var[c][i];
        }
        lv.raw(px_x, y) = classify_pixel(x, mean, var, planes.channels, fixed_);
        ++tested;
      }
    }
    close_mask(lv.raw, params_.closing_radius, lv.closed, lv.scratch);
    // The first frame only initialised the model; every later one teaches it.
    if (frames_ > 0) learn(planes, s);
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
  ++frames_;
}

}  // namespace stereod
