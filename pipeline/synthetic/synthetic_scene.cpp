// The synthetic scene: validates the options, builds the static background, the object and shadow
// scripts and the sensor once, and composes a frame from them on demand. All per-frame state lives
// on the stack of render(), so frames can be rendered concurrently and in any order.
#include "synthetic/synthetic_scene.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "synthetic/background.hpp"
#include "synthetic/objects.hpp"
#include "synthetic/sensor.hpp"
#include "synthetic/shadow.hpp"

namespace stereod {
namespace {

using synth::ObjectView;
using synth::ShadowView;
using synth::StaticBackground;

template <typename T>
[[noreturn]] void reject(const char* option, T value, const std::string& why) {
  std::ostringstream s;
  s << "synthetic." << option << " = " << value << ": " << why;
  throw std::invalid_argument(s.str());
}

void check_options(const SyntheticOptions& o) {
  constexpr int kMinSize = 16, kMaxSize = 8192;
  const std::string sizes = "must be between 16 and 8192";
  if (o.width < kMinSize || o.width > kMaxSize) reject("width", o.width, sizes);
  if (o.height < kMinSize || o.height > kMaxSize) reject("height", o.height, sizes);
  if (o.objects < 0 || o.objects > 64) reject("objects", o.objects, "must be between 0 and 64");
  if (o.min_disparity < 0) reject("min_disparity", o.min_disparity, "must not be negative");
  if (o.max_disparity <= o.min_disparity + 8) {
    reject("max_disparity", o.max_disparity,
           "must exceed synthetic.min_disparity + 8 = " + std::to_string(o.min_disparity + 8));
  }
  if (o.max_disparity >= o.width / 2) {
    reject("max_disparity", o.max_disparity,
           "must be less than half the width (" + std::to_string(o.width / 2) + ")");
  }
  // Written so that NaN fails too.
  if (!(o.noise_sigma >= 0 && o.noise_sigma <= 100)) {
    reject("noise_sigma", o.noise_sigma, "must be between 0 and 100 grey levels");
  }
  if (!(o.flicker >= 0 && o.flicker < 0.5)) {
    reject("flicker", o.flicker, "must be at least 0 and less than 0.5");
  }
  if (o.vertical != SyntheticVertical::kNone && o.max_disparity >= o.height / 2) {
    reject("max_disparity", o.max_disparity,
           "must be less than half the height (" + std::to_string(o.height / 2) +
               ") with a vertical view");
  }
  if (o.frame_rate <= 0 || o.frame_rate > 1000) {
    reject("frame_rate", o.frame_rate, "must be between 1 and 1000");
  }
  if (!(o.speed >= 0.1 && o.speed <= 10)) reject("speed", o.speed, "must be between 0.1 and 10");
  if (!(o.object_size >= 0.1 && o.object_size <= 3)) {
    reject("object_size", o.object_size, "must be between 0.1 and 3");
  }
  if (o.stop_frames < 0 || o.stop_frames > 100000) {
    reject("stop_frames", o.stop_frames, "must be between 0 and 100000");
  }
  if (!(o.focal_px >= 0 && o.focal_px <= 1e6)) {
    reject("focal_px", o.focal_px, "must be between 0 (the image width) and 1000000 pixels");
  }
  if (!(o.baseline_m > 0 && o.baseline_m <= 1000)) {
    reject("baseline_m", o.baseline_m, "must be more than 0 and at most 1000 metres");
  }
}

constexpr int kLeft = 0, kRight = 1, kVertical = 2;

// One view's outputs.
struct ViewTarget {
  RgbImage& color;
  Image<float>& disparity;
  Gray8& mask;
  Gray8& gray;
};

void darken(std::uint8_t* rgb, int factor) {
  for (int c = 0; c < 3; ++c) rgb[c] = static_cast<std::uint8_t>((rgb[c] * factor + 128) >> 8);
}

}  // namespace

struct SyntheticScene::Impl {
  Impl(const SyntheticOptions& o, const std::optional<SyntheticBackground>& real,
       std::optional<RgbImage> photo)
      : options(o),
        background(real ? synth::crop_background(o, *real) : synth::generate_background(o)),
        object_texture(std::move(photo)),
        objects(o, background.nearest, object_texture ? &*object_texture : nullptr),
        shadow(o, background.shift_max),
        sensor(o) {}

  // The shadow on the background of one view. A right pixel's surface point lies at
  // x + right_shift in left-view coordinates; that is where the shadow is looked up, so both views
  // see it on the same surface points.
  void cast_shadow(const ShadowView& s, bool right, ViewTarget& out) const {
    const int w = options.width, h = options.height;
    const int lo = right ? background.shift_min : 0, hi = right ? background.shift_max : 0;
    const int x0 = std::max(0, s.centre.x - s.rx - hi),
              x1 = std::min(w - 1, s.centre.x + s.rx - lo);
    const int y0 = std::max(0, s.centre.y - s.ry), y1 = std::min(h - 1, s.centre.y + s.ry);
    for (int y = y0; y <= y1; ++y) {
      const std::int16_t* shift = right ? background.right_shift.row(y) : nullptr;
      std::uint8_t* rgb = out.color.row(y);
      std::uint8_t* mask = out.mask.row(y);
      for (int x = x0; x <= x1; ++x) {
        const int f = s.factor(shift ? x + shift[x] : x, y);
        if (f >= 256) continue;
        darken(rgb + 3 * x, f);
        if (f <= synth::kShadowMaskFactor) mask[x] = kMaskShadow;
      }
    }
  }

  // The shadow in the vertical view: its pixel (x, y) shows the surface point (x, y + dir * shift)
  // of the left view, dir = +1 for a camera below, -1 above.
  void cast_vertical_shadow(const ShadowView& s, ViewTarget& out) const {
    const int w = options.width, h = options.height;
    const int dir = options.vertical == SyntheticVertical::kBelow ? 1 : -1;
    const int lo = background.vertical_shift_min, hi = background.vertical_shift_max;
    const int x0 = std::max(0, s.centre.x - s.rx), x1 = std::min(w - 1, s.centre.x + s.rx);
    const int y0 = std::max(0, dir > 0 ? s.centre.y - s.ry - hi : s.centre.y - s.ry + lo);
    const int y1 = std::min(h - 1, dir > 0 ? s.centre.y + s.ry - lo : s.centre.y + s.ry + hi);
    for (int y = y0; y <= y1; ++y) {
      const std::int16_t* shift = background.vertical_shift.row(y);
      std::uint8_t* rgb = out.color.row(y);
      std::uint8_t* mask = out.mask.row(y);
      for (int x = x0; x <= x1; ++x) {
        const int f = s.factor(x, y + dir * shift[x]);
        if (f >= 256) continue;
        darken(rgb + 3 * x, f);
        if (f <= synth::kShadowMaskFactor) mask[x] = kMaskShadow;
      }
    }
  }

  // An object in one view: the right view sees left-view point (x, y) at (x - disparity, y), a
  // vertical view below at (x, y - disparity), above at (x, y + disparity).
  void paint(const ObjectView& o, int view, ViewTarget& out) const {
    const int w = options.width, h = options.height;
    const int cx = o.centre.x - (view == kRight ? o.disparity : 0);
    const int dy = view != kVertical                               ? 0
                   : options.vertical == SyntheticVertical::kBelow ? -o.disparity
                                                                   : o.disparity;
    const int cy = o.centre.y + dy;
    const int r = o.shape.bound;
    const auto d = static_cast<float>(o.disparity);
    for (int y = std::max(0, cy - r); y <= std::min(h - 1, cy + r); ++y) {
      const int v = y - cy;
      int first = 0, last = 0;
      if (!o.shape.span(v, first, last)) continue;
      std::uint8_t* rgb = out.color.row(y);
      float* disparity = out.disparity.row(y);
      std::uint8_t* mask = out.mask.row(y);
      for (int x = std::max(0, cx + first); x <= std::min(w - 1, cx + last); ++x) {
        const synth::Rgb c = o.color(x - cx, v);
        std::copy(c.begin(), c.end(), rgb + 3 * x);
        disparity[x] = d;
        mask[x] = kMaskForeground;
      }
    }
  }

  void render_view(int index, int view, const std::vector<ObjectView>& objs, const ShadowView* s,
                   int gain, ViewTarget out) const {
    const RgbImage* colors[3] = {&background.left, &background.right, &background.vertical};
    const Image<float>* truth[3] = {&background.left_disparity, &background.right_disparity,
                                    &background.vertical_disparity};
    out.color.pixels = colors[view]->pixels;
    out.disparity.pixels() = truth[view]->pixels();
    out.mask.fill(kMaskBackground);
    if (s && view == kVertical) cast_vertical_shadow(*s, out);
    if (s && view != kVertical) cast_shadow(*s, view == kRight, out);
    for (const auto& o : objs) paint(o, view, out);
    sensor.expose(out.color, gain, index, view);
    rgb_to_gray(out.color, out.gray);
  }

  SyntheticOptions options;
  StaticBackground background;
  std::optional<RgbImage> object_texture;  // before `objects`, which points into it
  synth::ObjectScript objects;
  synth::ShadowScript shadow;
  synth::Sensor sensor;
};

void validate_synthetic_options(const SyntheticOptions& options) {
  check_options(options);
}

SyntheticScene::SyntheticScene(const SyntheticOptions& options,
                               std::optional<SyntheticBackground> background,
                               std::optional<RgbImage> object_texture) {
  check_options(options);
  if (object_texture && (object_texture->width < 16 || object_texture->height < 16)) {
    throw std::invalid_argument(
        "synthetic object texture: " + std::to_string(object_texture->width) + "x" +
        std::to_string(object_texture->height) + " is smaller than 16x16");
  }
  if (object_texture && !options.color) synth::to_grey(*object_texture);
  impl_ = std::make_unique<Impl>(options, background, std::move(object_texture));
}

SyntheticScene::~SyntheticScene() = default;
SyntheticScene::SyntheticScene(SyntheticScene&&) noexcept = default;
SyntheticScene& SyntheticScene::operator=(SyntheticScene&&) noexcept = default;

bool parse_synthetic_texture(const std::string& name, SyntheticTexture& out) {
  for (auto t : {SyntheticTexture::kAny, SyntheticTexture::kHorizontalStripes,
                 SyntheticTexture::kVerticalBars, SyntheticTexture::kMixed}) {
    if (name == to_string(t)) {
      out = t;
      return true;
    }
  }
  return false;
}

bool parse_synthetic_vertical(const std::string& name, SyntheticVertical& out) {
  for (auto v : {SyntheticVertical::kNone, SyntheticVertical::kAbove, SyntheticVertical::kBelow}) {
    if (name == to_string(v)) {
      out = v;
      return true;
    }
  }
  return false;
}

const char* to_string(SyntheticTexture t) {
  switch (t) {
    case SyntheticTexture::kHorizontalStripes:
      return "hstripes";
    case SyntheticTexture::kVerticalBars:
      return "vbars";
    case SyntheticTexture::kMixed:
      return "mixed";
    case SyntheticTexture::kAny:
      break;
  }
  return "any";
}

const char* to_string(SyntheticVertical v) {
  switch (v) {
    case SyntheticVertical::kAbove:
      return "above";
    case SyntheticVertical::kBelow:
      return "below";
    case SyntheticVertical::kNone:
      break;
  }
  return "none";
}

const SyntheticOptions& SyntheticScene::options() const {
  return impl_->options;
}

void SyntheticScene::render(int index, SyntheticFrame& out) const {
  if (index < 0) {
    throw std::invalid_argument("synthetic frame index " + std::to_string(index) +
                                ": must not be negative");
  }
  const Impl& s = *impl_;
  const int w = s.options.width, h = s.options.height;
  for (RgbImage* img : {&out.left, &out.right}) {
    if (img->width != w || img->height != h) img->resize(w, h);
  }
  out.disparity.ensure_size(w, h);
  out.right_disparity.ensure_size(w, h);
  out.mask.ensure_size(w, h);
  out.right_mask.ensure_size(w, h);
  out.index = index;
  out.time_ns = static_cast<std::int64_t>(index) * 1000000000 / s.options.frame_rate;

  std::vector<ObjectView> objs;
  s.objects.at(index, objs);
  const ShadowView shadow = s.shadow.at(index);
  const ShadowView* cast = s.options.shadow ? &shadow : nullptr;
  const int gain = s.sensor.gain(index);
  s.render_view(index, kLeft, objs, cast, gain, {out.left, out.disparity, out.mask, out.left_gray});
  s.render_view(index, kRight, objs, cast, gain,
                {out.right, out.right_disparity, out.right_mask, out.right_gray});
  if (s.options.vertical != SyntheticVertical::kNone) {
    if (out.vertical.width != w || out.vertical.height != h) out.vertical.resize(w, h);
    out.vertical_mask.ensure_size(w, h);
    out.vertical_disparity.ensure_size(w, h);
    s.render_view(index, kVertical, objs, cast, gain,
                  {out.vertical, out.vertical_disparity, out.vertical_mask, out.vertical_gray});
  } else {
    out.vertical = RgbImage{};
    out.vertical_gray = Gray8{};
    out.vertical_disparity = Image<float>{};
    out.vertical_mask = Gray8{};
  }
}

SyntheticCamera synthetic_camera(const SyntheticOptions& o) {
  SyntheticCamera c;
  c.fx = c.fy = o.focal_px > 0 ? o.focal_px : static_cast<double>(o.width);
  c.cx = (o.width - 1) / 2.0;
  c.cy = (o.height - 1) / 2.0;
  c.baseline_m = o.baseline_m;
  return c;
}

}  // namespace stereod
