// YUV camera frames (pipeline/yuv.hpp): the integer BT.601 conversion against the formula in
// floating point and known colors, the two layouts against plain indexing, and the CPU engine's
// result from YUV frames against the same frames converted first.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "engine.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "yuv.hpp"
#include "yuv_encode.hpp"

namespace stereod {
namespace {

using namespace std::chrono_literals;

std::vector<std::uint8_t> rgb_of(int y, int u, int v) {
  std::vector<std::uint8_t> rgb(3);
  yuv_to_rgb_bt601(y, u, v, rgb.data());
  return rgb;
}

TEST(Yuv, KnownBt601Colors) {
  using V = std::vector<std::uint8_t>;
  EXPECT_EQ(rgb_of(16, 128, 128), (V{0, 0, 0}));         // black
  EXPECT_EQ(rgb_of(235, 128, 128), (V{255, 255, 255}));  // white
  EXPECT_EQ(rgb_of(126, 128, 128), (V{128, 128, 128}));  // mid gray
  EXPECT_EQ(rgb_of(81, 90, 240), (V{255, 0, 0}));        // red
  EXPECT_EQ(rgb_of(41, 240, 110), (V{0, 0, 255}));       // blue
  EXPECT_EQ(rgb_of(0, 0, 0), (V{0, 135, 0}));            // beyond the range: clamped
  EXPECT_EQ(rgb_of(255, 255, 255), (V{255, 125, 255}));
}

// Every (Y, U, V): within one step of the BT.601 formula rounded in floating point.
TEST(Yuv, EveryValueIsTheFormulaWithinOneStep) {
  int worst = 0;
  for (int y = 0; y < 256; ++y) {
    for (int u = 0; u < 256; u += 3) {
      for (int v = 0; v < 256; v += 3) {
        std::uint8_t got[3];
        yuv_to_rgb_bt601(y, u, v, got);
        const double c = 1.164383 * (y - 16);
        const double want[3] = {c + 1.596027 * (v - 128),
                                c - 0.391762 * (u - 128) - 0.812968 * (v - 128),
                                c + 2.017232 * (u - 128)};
        for (int k = 0; k < 3; ++k) {
          const int w = yuv_byte(want[k]);
          worst = std::max(worst, std::abs(w - got[k]));
        }
      }
    }
  }
  EXPECT_LE(worst, 1);
}

// Strided views of both layouts against plain indexing of the bytes.
TEST(Yuv, LayoutsReadTheirOwnChroma) {
  constexpr int w = 10, h = 6, pad = 7;
  std::mt19937 rng(5);
  std::vector<std::uint8_t> uyvy((2 * w + pad) * h), luma((w + pad) * h), uv((w + pad) * h / 2);
  for (auto* v : {&uyvy, &luma, &uv}) {
    for (auto& b : *v) b = static_cast<std::uint8_t>(rng());
  }
  const YuvView pu{YuvFormat::kUyvy, uyvy.data(), w, h, 2 * w + pad, nullptr, 0};
  const YuvView pn{YuvFormat::kNv12, luma.data(), w, h, w + pad, uv.data(), w + pad};
  RgbImage a, b;
  yuv_to_rgb(pu, a);
  yuv_to_rgb(pn, b);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const std::uint8_t* q = &uyvy[y * (2 * w + pad) + 4 * (x / 2)];
      const int yy = x % 2 == 0 ? q[1] : q[3];
      EXPECT_EQ(std::vector<std::uint8_t>(a.row(y) + 3 * x, a.row(y) + 3 * x + 3),
                rgb_of(yy, q[0], q[2]))
          << "UYVY " << x << "," << y;
      const std::uint8_t* c = &uv[(y / 2) * (w + pad) + 2 * (x / 2)];
      EXPECT_EQ(std::vector<std::uint8_t>(b.row(y) + 3 * x, b.row(y) + 3 * x + 3),
                rgb_of(luma[y * (w + pad) + x], c[0], c[1]))
          << "NV12 " << x << "," << y;
    }
  }
  // Packing keeps every pixel.
  for (const YuvView* v : {&pu, &pn}) {
    std::vector<std::uint8_t> packed(yuv_packed_bytes(v->format, w, h));
    copy_packed(*v, packed.data());
    RgbImage again;
    yuv_to_rgb(packed_yuv(v->format, packed.data(), w, h), again);
    EXPECT_EQ(again.pixels, (v == &pu ? a : b).pixels) << yuv_format_name(v->format);
  }
}

// The test encoder and the conversion agree: a color survives the round trip closely.
TEST(Yuv, EncodedFramesComeBackNearTheirColor) {
  RgbImage img;
  img.resize(8, 4);
  std::mt19937 rng(2);
  for (auto& b : img.pixels) b = static_cast<std::uint8_t>(rng());
  // Pairs of pixels share their chroma: make them equal so that only rounding is left.
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 8; x += 2) {
      for (int k = 0; k < 3; ++k) img.row(y)[3 * (x + 1) + k] = img.row(y)[3 * x + k];
    }
  }
  RgbImage back;
  yuv_to_rgb(encode_yuv(img, YuvFormat::kUyvy).view(), back);
  for (std::size_t i = 0; i < img.pixels.size(); ++i) {
    EXPECT_NEAR(back.pixels[i], img.pixels[i], 3) << i;
  }
}

struct EngineRun {
  std::vector<std::uint16_t> disparity;
  std::vector<std::uint8_t> foreground;
};

EngineRun run(Engine& e, const FrameInput& in) {
  EngineRun out;
  if (e.submit(in) != SubmitStatus::kAccepted) {
    ADD_FAILURE() << "busy";
    return out;
  }
  auto r = e.poll(30s);
  if (!r || !r->ok) {
    ADD_FAILURE() << (r ? r->error : "no result");
    return out;
  }
  for (int y = 0; y < r->disparity.height; ++y) {
    const auto* d = r->disparity.data + y * r->disparity.stride;
    out.disparity.insert(out.disparity.end(), d, d + r->disparity.width);
    const auto* f = r->foreground.data + y * r->foreground.stride;
    out.foreground.insert(out.foreground.end(), f, f + r->foreground.width);
  }
  return out;
}

// A YUV frame is to the CPU engine exactly the color-only frame of its RGB: disparity and the
// color background model's mask, frame after frame.
TEST(Yuv, CpuEngineMatchesYuvFramesAsTheirRgb) {
  SyntheticOptions so;
  so.width = 160;
  so.height = 120;
  so.max_disparity = 32;
  so.seed = 4;
  SyntheticScene scene(so);
  EngineOptions o;
  o.width = 160;
  o.height = 120;
  o.stereo.max_disparity = 32;
  o.background.enabled = true;
  o.background.color = true;
  o.background.warmup = 2;
  for (YuvFormat format : {YuvFormat::kUyvy, YuvFormat::kNv12}) {
    auto raw = make_engine("cpu", o);
    auto converted = make_engine("cpu", o);
    SyntheticFrame f;
    for (int i = 0; i < 5; ++i) {
      scene.render(i, f);
      const YuvFrame l = encode_yuv(f.left, format);
      const YuvFrame r = encode_yuv(f.right, format);
      FrameInput yuv;
      yuv.sequence = static_cast<std::uint64_t>(i);
      yuv.left_yuv = l.view();
      yuv.right_yuv = r.view();
      ASSERT_TRUE(yuv_input(yuv));
      RgbImage lc, rc;
      yuv_to_rgb(l.view(), lc);
      yuv_to_rgb(r.view(), rc);
      FrameInput color;
      color.sequence = yuv.sequence;
      color.left_color = view_of(lc);
      color.right_color = view_of(rc);
      const EngineRun a = run(*raw, yuv);
      const EngineRun b = run(*converted, color);
      ASSERT_FALSE(a.disparity.empty());
      EXPECT_EQ(a.disparity, b.disparity) << yuv_format_name(format) << " frame " << i;
      EXPECT_EQ(a.foreground, b.foreground) << yuv_format_name(format) << " frame " << i;
    }
  }
}

TEST(Yuv, FramesOfTheWrongSizeOrAnOddWidthAreRefused) {
  EngineOptions o;
  o.width = 64;
  o.height = 48;
  o.stereo.max_disparity = 16;
  auto engine = make_engine("cpu", o);
  RgbImage img;
  img.resize(32, 48);
  const YuvFrame small = encode_yuv(img, YuvFormat::kUyvy);
  FrameInput in;
  in.left_yuv = small.view();
  in.right_yuv = small.view();
  EXPECT_THROW(engine->submit(in), ParameterError);
  o.width = 63;
  o.stereo.max_disparity = 16;
  auto odd = make_engine("cpu", o);
  std::vector<std::uint8_t> bytes(2 * 64 * 48);
  const YuvView v = packed_yuv(YuvFormat::kUyvy, bytes.data(), 63, 48);
  in.left_yuv = v;
  in.right_yuv = v;
  EXPECT_THROW(odd->submit(in), ParameterError);
}

}  // namespace
}  // namespace stereod
