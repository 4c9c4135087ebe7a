// Protocol 1.3 (issue 14): the camera model in the header, and the optional payloads a pair may
// ask for (confidence, the rectified left image, the point cloud), encoded, sent only when asked,
// and decoded by the C++ client.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "publish/points.hpp"
#include "publish_fixtures.hpp"

using namespace stereod;
using namespace stereod::publish;
using namespace std::chrono_literals;

namespace {

Json header_json(const FrameInfo& info, int width, int height) {
  FrameHeader h;
  h.info = info;
  h.publish_ns = info.ready_ns + 1000;
  PayloadLayout d;
  d.name = "disparity";
  d.encoding = std::string(kDisparityEncoding);
  d.width = width;
  d.height = height;
  d.stride = 2 * static_cast<std::uint64_t>(width);
  d.invalid = kDisparityInvalid;
  h.payloads.push_back(d);
  return Json::parse(encode_header(h));
}

std::string error_of(const std::string& json) {
  try {
    decode_header(json);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

std::optional<client::Frame> send_until_received(Publisher& pub, client::Subscriber& sub,
                                                 const PublisherOutputs& outputs, int w, int h,
                                                 test::RichFrame& sent) {
  const auto end = std::chrono::steady_clock::now() + 10s;
  for (std::uint64_t seq = 0; std::chrono::steady_clock::now() < end; ++seq) {
    sent = test::rich_frame(seq, w, h, outputs);
    PublishedFrame copy = sent.frame;
    pub.publish(std::move(copy));
    if (auto f = test::next_frame(sub, 20ms)) return f;
  }
  return std::nullopt;
}

bool same_float(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST(HeaderCameraModel, CarriesTheWholeModelAndRoundTrips) {
  const FrameInfo info = test::full_info("front", 3);
  const Json j = header_json(info, 16, 8);
  EXPECT_EQ(j["version"]["minor"], 3);
  EXPECT_EQ(j["focal_px"], 700.5);
  EXPECT_EQ(j["fy_px"], 701.25);
  EXPECT_EQ(j["cx_px"], 17.5);
  EXPECT_EQ(j["cy_px"], 10.25);
  const FrameHeader back = decode_header(j.dump());
  EXPECT_EQ(back.info.calibration, info.calibration);
  EXPECT_NEAR(back.info.calibration.depth_m(1.25 + 7.005), 0.12 * 100, 1e-9);
  EXPECT_TRUE(std::isnan(back.info.calibration.depth_m(1.0)));  // d <= doffs
}

TEST(HeaderCameraModel, Before13GetSquarePixelsAndTheImageCentre) {
  Json j = header_json(test::full_info("front", 3), 16, 8);
  j["version"]["minor"] = 2;
  for (const char* key : {"fy_px", "cx_px", "cy_px"}) j.erase(key);
  const DepthCalibration c = decode_header(j.dump()).info.calibration;
  EXPECT_EQ(c.fy_px, 700.5);
  EXPECT_EQ(c.cx_px, 7.5);
  EXPECT_EQ(c.cy_px, 3.5);
  // From 1.3 on the fields are required, and checked.
  j["version"]["minor"] = 3;
  EXPECT_NE(error_of(j.dump()).find("header.fy_px: missing"), std::string::npos)
      << error_of(j.dump());
  j = header_json(test::full_info("front", 3), 16, 8);
  j["fy_px"] = -1;
  EXPECT_NE(error_of(j.dump()).find("header.fy_px: negative"), std::string::npos);
  j["fy_px"] = "700";
  EXPECT_NE(error_of(j.dump()).find("header.fy_px"), std::string::npos);
}

TEST(Payloads, NewEncodingsAreCheckedLikeTheOldOnes) {
  Json j = header_json(test::full_info("front", 3), 4, 2);
  j["payloads"] = Json::array(
      {{{"name", "confidence"},
        {"encoding", "confidence8"},
        {"width", 4},
        {"height", 2},
        {"stride", 4},
        {"invalid", 0}},
       {{"name", "left"}, {"encoding", "rgb8"}, {"width", 4}, {"height", 2}, {"stride", 12}},
       {{"name", "points"},
        {"encoding", "xyzrgb32f"},
        {"width", 4},
        {"height", 2},
        {"stride", 64}}});
  EXPECT_EQ(error_of(j.dump()), "");
  Json bad = j;
  bad["payloads"][0]["invalid"] = 255;
  EXPECT_NE(error_of(bad.dump()).find("confidence8 marks missing values with 0"),
            std::string::npos);
  bad = j;
  bad["payloads"][1]["stride"] = 11;  // 4 RGB pixels need 12 bytes
  EXPECT_NE(error_of(bad.dump()).find("header.payloads[1].stride"), std::string::npos);
  bad = j;
  bad["payloads"][2]["stride"] = 66;  // float samples: a multiple of 4
  EXPECT_NE(error_of(bad.dump()).find("4-byte samples"), std::string::npos) << error_of(bad.dump());
}

TEST(Points, FollowTheFormulaWithNanWhereThereIsNoDepth) {
  DepthCalibration c;
  c.focal_px = 100;
  c.fy_px = 200;
  c.cx_px = 1;
  c.cy_px = 0.5;
  c.baseline_m = 0.5;
  c.doffs_px = 2;
  // 3 x 2 disparities: d = 7 px (d - doffs = 5: Z = 10 m), none, d = 2 (= doffs: no depth).
  std::vector<std::uint16_t> d = {112, 0xFFFF, 32, 112, 112, 112};
  std::vector<float> xyz(3 * 6, 1.0f);
  disparity_to_points({d.data(), 3, 2}, c, {xyz.data(), 9, 2}, 3);
  EXPECT_FLOAT_EQ(xyz[0], -0.1f);    // (0 - 1) * 10 / 100
  EXPECT_FLOAT_EQ(xyz[1], -0.025f);  // (0 - 0.5) * 10 / 200
  EXPECT_FLOAT_EQ(xyz[2], 10.0f);
  for (int i = 3; i < 9; ++i) EXPECT_TRUE(std::isnan(xyz[static_cast<std::size_t>(i)])) << i;
  EXPECT_FLOAT_EQ(xyz[9 + 6], 0.1f);    // x = 2
  EXPECT_FLOAT_EQ(xyz[9 + 7], 0.025f);  // y = 1
  // Four channels: the packed color from the color image, else from the gray one.
  std::vector<std::uint8_t> rgb(18, 0), gray(6, 0);
  rgb[0] = 10, rgb[1] = 20, rgb[2] = 30;
  gray[0] = 77;
  std::vector<float> xyzrgb(4 * 6);
  disparity_to_points({d.data(), 3, 2}, c, {xyzrgb.data(), 12, 2}, 4, {}, {rgb.data(), 9, 2});
  EXPECT_EQ(float_as_rgb(xyzrgb[3]), 0x000A141Eu);
  EXPECT_FLOAT_EQ(xyzrgb[2], 10.0f);
  disparity_to_points({d.data(), 3, 2}, c, {xyzrgb.data(), 12, 2}, 4, {gray.data(), 3, 2});
  EXPECT_EQ(float_as_rgb(xyzrgb[3]), 0x004D4D4Du);
  // Without a camera model: no point at all.
  disparity_to_points({d.data(), 3, 2}, DepthCalibration{}, {xyz.data(), 9, 2}, 3);
  EXPECT_TRUE(std::isnan(xyz[2]));
  EXPECT_THROW(disparity_to_points({d.data(), 3, 2}, c, {xyz.data(), 6, 2}, 3),
               std::invalid_argument);
}

TEST(Payloads, APairGetsWhatItsOutputsAskForInTheDocumentedOrder) {
  PublisherOptions o;
  o.endpoint = test::unique_ipc("payloads13");
  o.stats_interval_ms = 0;
  Publisher pub(o);
  client::SubscriberOptions so;
  so.endpoint = pub.endpoint();
  client::Subscriber sub(so);
  constexpr int w = 7, h = 5;
  const PublisherOutputs all = test::all_outputs();
  test::RichFrame sent;
  auto f = send_until_received(pub, sub, all, w, h, sent);
  ASSERT_TRUE(f);
  const auto& payloads = f->header().payloads;
  std::vector<std::string> names, encodings;
  for (const auto& p : payloads) {
    names.push_back(p.name);
    encodings.push_back(p.encoding);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"disparity", "mask", "depth", "confidence", "left",
                                             "points"}));
  EXPECT_EQ(encodings, (std::vector<std::string>{"disp16q4", "mask8", "depth16mm", "confidence8",
                                                 "rgb8", "xyzrgb32f"}));
  for (const auto& p : payloads) EXPECT_EQ(p.width, w) << p.name;
  EXPECT_EQ(f->header().find("points")->stride, 16u * w);
  const std::uint64_t seq = f->header().info.sequence;
  EXPECT_TRUE(test::image_matches(f->confidence(), [&](int x, int y) {
    return static_cast<std::uint8_t>((static_cast<std::uint64_t>(y * w + x) * 7 + seq) % 256);
  }));
  ASSERT_EQ(f->left_channels(), 3);
  EXPECT_EQ(std::string(f->payload("left")),
            std::string(reinterpret_cast<const char*>(sent.color->data()), sent.color->size()));
  // The points are disparity_to_points of the frame's own disparity and camera model.
  ASSERT_EQ(f->points_channels(), 4);
  std::vector<float> expected(static_cast<std::size_t>(4 * w * h));
  disparity_to_points(f->disparity(), f->header().info.calibration, {expected.data(), 4 * w, h}, 4,
                      {}, sent.frame.left_color);
  int valid = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < 4 * w; ++x) {
      const float want = expected[static_cast<std::size_t>(y * 4 * w + x)];
      EXPECT_TRUE(same_float(f->points()(x, y), want)) << x << "," << y;
      valid += x % 4 == 2 && std::isfinite(want);
    }
  }
  EXPECT_GT(valid, w * h / 2);
  // And the depth under a pixel agrees with the point's Z.
  for (int x = 0; x < w; ++x) {
    const double z = f->depth_m(x, 2);
    if (std::isfinite(z)) {
      EXPECT_NEAR(z, f->points()(4 * x + 2, 2), 1e-5 * z);
    }
  }

  // Gray asked for: gray8; xyz: three floats. Nothing asked for: the disparity alone.
  PublisherOutputs some;
  some.left = LeftOutput::kGray;
  some.points = PointsOutput::kXyz;
  f = send_until_received(pub, sub, some, w, h, sent);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->header().payloads.size(), 3u);
  EXPECT_EQ(f->header().find("left")->encoding, "gray8");
  EXPECT_EQ(f->left_channels(), 1);
  EXPECT_EQ(std::string(f->payload("left")),
            std::string(reinterpret_cast<const char*>(sent.gray->data()), sent.gray->size()));
  EXPECT_EQ(f->points_channels(), 3);
  EXPECT_EQ(f->header().find("points")->encoding, "xyz32f");
  f = send_until_received(pub, sub, PublisherOutputs{}, w, h, sent);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header().payloads.size(), 1u);
  EXPECT_TRUE(f->confidence().empty());
  EXPECT_TRUE(f->points().empty());
}

TEST(Payloads, NoPointsWithoutACameraModelAndGrayFromColorWhenOnlyColorIsThere) {
  PublisherOptions o;
  o.endpoint = test::unique_ipc("payloads13b");
  o.stats_interval_ms = 0;
  o.outputs.points = PointsOutput::kXyz;  // the Publisher's own outputs: frames that say none
  o.outputs.left = LeftOutput::kGray;
  Publisher pub(o);
  client::SubscriberOptions so;
  so.endpoint = pub.endpoint();
  client::Subscriber sub(so);
  std::optional<client::Frame> f;
  std::vector<std::uint8_t> color;
  for (std::uint64_t seq = 0; !f && seq < 500; ++seq) {
    PublishedFrame frame = test::pattern_frame("front", seq, 4, 2);
    frame.info.calibration = {};
    color.assign(24, 0);
    color[0] = 255;  // pixel (0, 0) pure red: luma (77 * 255 + 128) >> 8 = 77
    frame.left_color = ImageView<const std::uint8_t>(color.data(), 12, 2);  // copied: no keep-alive
    pub.publish(std::move(frame));
    f = test::next_frame(sub, 20ms);
  }
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header().find("points"), nullptr);
  ASSERT_EQ(f->left_channels(), 1);
  EXPECT_EQ(f->left()(0, 0), 77);
  EXPECT_EQ(f->left()(1, 0), 0);
}

TEST(Payloads, ALeftImageOfAnotherSizeIsRefusedWithItsName) {
  PublisherOptions o;
  o.endpoint = test::unique_ipc("payloads13c");
  o.stats_interval_ms = 0;
  Publisher pub(o);
  PublishedFrame frame = test::pattern_frame("front", 1, 4, 2);
  std::vector<std::uint8_t> gray(6);
  frame.left_gray = ImageView<const std::uint8_t>(gray.data(), 3, 2);
  try {
    pub.publish(std::move(frame));
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("frame front#1: left image (gray): 3x2, the disparity is 4x2"),
        std::string::npos)
        << e.what();
  }
}
