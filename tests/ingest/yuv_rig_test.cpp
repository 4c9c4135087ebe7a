// Cameras with a raw_format (UYVY, NV12): videotestsrc frames reach the frame set in the
// camera's own format, one copy, and the CPU engine's disparity from them is the disparity of
// the same frames converted to RGB first.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "engine.hpp"
#include "rig_support.hpp"

namespace stereod {
namespace {

using namespace std::chrono_literals;
using test::Collector;
using test::rig_of;
using test::small_camera;

CameraConfig raw_camera(const std::string& name, const std::string& uri, const char* format) {
  CameraConfig c = small_camera(name, uri);
  c.color = true;
  c.raw_format = format;
  return c;
}

std::vector<FrameSet> run_rig(const RigConfig& config, std::size_t sets) {
  Collector got;
  RigSource rig(config, got.sets(), got.events());
  rig.start();
  EXPECT_TRUE(got.wait_sets(sets));
  rig.stop();
  return got.take_sets();
}

class RawFormatRig : public ::testing::TestWithParam<const char*> {};

TEST_P(RawFormatRig, WhiteArrivesAsYuvAndConvertsToWhite) {
  const std::string format = GetParam();
  const auto sets =
      run_rig(rig_of("raw", {raw_camera("c", "test://?pattern=white", GetParam())}), 3);
  ASSERT_FALSE(sets.empty());
  const CameraFrame& f = *sets.back().frames[0];
  EXPECT_TRUE(f.color.empty());
  EXPECT_TRUE(f.gray.empty());
  ASSERT_FALSE(f.yuv.empty());
  EXPECT_EQ(yuv_format_name(f.yuv.format), format);
  EXPECT_EQ(f.yuv.width, 64);
  EXPECT_EQ(f.yuv.height, 48);
  // Packed: 2 bytes a pixel (UYVY), or the Y plane then the chroma plane (NV12).
  EXPECT_EQ(f.yuv.stride, format == "UYVY" ? 128 : 64);
  if (format == "NV12") {
    EXPECT_EQ(f.yuv.chroma, f.yuv.data + 64 * 48);
  }
  RgbImage rgb;
  yuv_to_rgb(f.yuv, rgb);
  EXPECT_TRUE(
      std::all_of(rgb.pixels.begin(), rgb.pixels.end(), [](std::uint8_t v) { return v == 255; }));
  const Gray8 gray = gray_of(f);
  EXPECT_TRUE(std::all_of(gray.pixels().begin(), gray.pixels().end(),
                          [](std::uint8_t v) { return v == 255; }));
}

TEST_P(RawFormatRig, TheEngineMatchesRawFramesAsTheirRgb) {
  const auto sets = run_rig(rig_of("raw", {raw_camera("l", "test://?pattern=snow", GetParam()),
                                           raw_camera("r", "test://?pattern=snow", GetParam())}),
                            4);
  ASSERT_GE(sets.size(), 4u);
  EngineOptions o;
  o.width = 64;
  o.height = 48;
  o.stereo.max_disparity = 16;
  o.background.enabled = true;
  o.background.color = true;
  o.background.warmup = 1;
  auto raw = make_engine("cpu", o);
  auto converted = make_engine("cpu", o);
  for (std::size_t i = 0; i < 4; ++i) {
    const CameraFrame& l = *sets[i].frames[0];
    const CameraFrame& r = *sets[i].frames[1];
    FrameInput a;
    a.sequence = i;
    a.left_yuv = l.yuv;
    a.right_yuv = r.yuv;
    RgbImage lc, rc;
    yuv_to_rgb(l.yuv, lc);
    yuv_to_rgb(r.yuv, rc);
    FrameInput b;
    b.sequence = i;
    b.left_color = view_of(lc);
    b.right_color = view_of(rc);
    ASSERT_EQ(raw->submit(a), SubmitStatus::kAccepted);
    ASSERT_EQ(converted->submit(b), SubmitStatus::kAccepted);
    auto ra = raw->poll(30s);
    auto rb = converted->poll(30s);
    ASSERT_TRUE(ra && ra->ok && rb && rb->ok);
    Disparity16 da(64, 48), db(64, 48);
    copy_into(ra->disparity, da);
    copy_into(rb->disparity, db);
    EXPECT_EQ(da, db) << "frame " << i;
    Gray8 fa(64, 48), fb(64, 48);
    copy_into(ra->foreground, fa);
    copy_into(rb->foreground, fb);
    EXPECT_EQ(fa, fb) << "frame " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, RawFormatRig, ::testing::Values("UYVY", "NV12"));

}  // namespace
}  // namespace stereod
