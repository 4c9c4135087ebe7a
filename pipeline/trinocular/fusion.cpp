#include "trinocular/fusion.hpp"

#include <cmath>
#include <string>

#include "stereo/params.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {
namespace {

std::string size_text(int w, int h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

template <typename T>
void check_size(const ImageView<T>& img, int w, int h, const char* name) {
  if (img.width != w || img.height != h) {
    throw ParameterError(name, std::string(name) + " is " + size_text(img.width, img.height) +
                                   ", expected " + size_text(w, h));
  }
}

}  // namespace

void to_vertical_frame(ImageView<const std::uint8_t> src, const VerticalLayout& l, Gray8& dst) {
  dst.ensure_size(src.height, src.width);
  for (int x = 0; x < src.width; ++x) {
    std::uint8_t* out = dst.row(x);  // transposed row v = x
    for (int y = 0; y < src.height; ++y) out[l.u(y)] = src(x, y);
  }
}

void to_vertical_frame(const RgbView& src, const VerticalLayout& l, RgbImage& dst) {
  if (dst.width != src.height || dst.height != src.width) dst.resize(src.height, src.width);
  for (int x = 0; x < src.width; ++x) {
    std::uint8_t* out = dst.row(x);
    for (int y = 0; y < src.height; ++y) {
      const std::uint8_t* p = src.row(y) + 3 * x;
      std::uint8_t* q = out + 3 * l.u(y);
      q[0] = p[0];
      q[1] = p[1];
      q[2] = p[2];
    }
  }
}

int vertical_max_disparity(int horizontal_max_disparity, double scale) {
  if (!(scale > 0)) return horizontal_max_disparity;
  const double d = std::ceil(horizontal_max_disparity / scale - 1e-9);
  return d < 1 ? 1 : d > 1e6 ? 1000000 : static_cast<int>(d);
}

std::uint32_t cost_ratio_q8(double cost_ratio) {
  const double q = std::floor(cost_ratio * 256.0 + 0.5);
  return q < 0 ? 0u : q > 1e6 ? 1000000u : static_cast<std::uint32_t>(q);
}

std::uint16_t scale_vertical_disparity(std::uint16_t q4, double scale, int max_q4) {
  if (q4 == kInvalidDisparity) return kInvalidDisparity;
  const double v = std::floor(q4 * scale + 0.5);
  if (!(v >= 0) || v > max_q4) return kInvalidDisparity;
  return static_cast<std::uint16_t>(v);
}

void fuse_trinocular(const FusionInput& in, const FusionParams& p, FusionOutput& out) {
  const int w = in.layout.width, h = in.layout.height;
  check_size(in.horizontal, w, h, "horizontal disparity");
  check_size(in.horizontal_ratio, w, h, "horizontal cost ratio");
  check_size(in.vertical, h, w, "vertical disparity");
  check_size(in.vertical_ratio, h, w, "vertical cost ratio");
  out.fused.ensure_size(w, h);
  out.direction.ensure_size(w, h);
  out.vertical.ensure_size(w, h);
  const std::uint64_t ratio = cost_ratio_q8(p.cost_ratio);
  const int max_q4 = p.max_disparity_q4 < 0xFFFE ? p.max_disparity_q4 : 0xFFFE;
  // Transposed reads: the vertical pair's row v = x holds the reference's column x.
  for (int x = 0; x < w; ++x) {
    const std::uint16_t* vd = in.vertical.row(x);
    const std::uint32_t* vr = in.vertical_ratio.row(x);
    for (int y = 0; y < h; ++y) {
      const int u = in.layout.u(y);
      const std::uint16_t dv = scale_vertical_disparity(vd[u], p.scale, max_q4);
      const std::uint16_t dh = in.horizontal(x, y);
      out.vertical(x, y) = dv;
      std::uint8_t which = kFusedNone;
      if (dh != kInvalidDisparity && dv != kInvalidDisparity) {
        const std::uint64_t rh = in.horizontal_ratio(x, y), rv = vr[u];
        which = rv * 256u < ratio * rh ? kFusedVertical : kFusedHorizontal;
      } else if (dh != kInvalidDisparity) {
        which = kFusedHorizontal;
      } else if (dv != kInvalidDisparity) {
        which = kFusedVertical;
      }
      out.direction(x, y) = which;
      out.fused(x, y) = which == kFusedHorizontal ? dh
                        : which == kFusedVertical ? dv
                                                  : kInvalidDisparity;
    }
  }
}

}  // namespace stereod
