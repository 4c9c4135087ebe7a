// Source URIs, camera and rig configuration checks, and the per-scheme pipeline descriptions:
// every scheme parses into what GStreamer will be given; every mistake is reported with the URI
// (or the camera and key) and what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "ingest/camera_config.hpp"
#include "ingest/pipeline_description.hpp"
#include "ingest/source_uri.hpp"

using namespace stereod;

namespace {

std::string error_of(const std::string& uri) {
  try {
    parse_source_uri(uri);
  } catch (const SourceUriError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

CameraConfig camera(const std::string& name, const std::string& uri) {
  CameraConfig c;
  c.name = name;
  c.uri = uri;
  return c;
}

}  // namespace

TEST(SourceUri, ParsesEveryScheme) {
  auto v = parse_source_uri("v4l2:///dev/video0");
  EXPECT_EQ(v.scheme, SourceScheme::kV4l2);
  EXPECT_EQ(v.location, "/dev/video0");

  auto c = parse_source_uri("csi://1?sensor_mode=2&flip=2");
  EXPECT_EQ(c.scheme, SourceScheme::kCsi);
  EXPECT_EQ(c.location, "1");
  EXPECT_EQ(c.option_int("sensor_mode", -1), 2);
  EXPECT_EQ(c.option_int("flip", 0), 2);

  auto r = parse_source_uri("rtsp://user:pw@cam.local:554/live?channel=1#latency=50&protocols=tcp");
  EXPECT_EQ(r.scheme, SourceScheme::kRtsp);
  EXPECT_EQ(r.location, "rtsp://user:pw@cam.local:554/live?channel=1");  // untouched
  EXPECT_EQ(r.option_int("latency", 200), 50);
  EXPECT_EQ(r.option("protocols", ""), "tcp");

  auto f = parse_source_uri("file:///data/my%20video.mkv");
  EXPECT_EQ(f.scheme, SourceScheme::kFile);
  EXPECT_EQ(f.location, "/data/my video.mkv");
  EXPECT_TRUE(f.is_file());
  EXPECT_EQ(parse_source_uri("file://relative/clip.avi").location, "relative/clip.avi");

  auto i = parse_source_uri("images:///data/left_%06d.png?start=1");
  EXPECT_EQ(i.scheme, SourceScheme::kImages);
  EXPECT_EQ(i.location, "/data/left_%06d.png");
  EXPECT_EQ(i.option_int("start", 0), 1);

  auto t = parse_source_uri("test://?pattern=ball&live=false&num_buffers=10");
  EXPECT_EQ(t.scheme, SourceScheme::kTest);
  EXPECT_EQ(t.option("pattern", ""), "ball");
  EXPECT_FALSE(t.option_bool("live", true));
  EXPECT_EQ(t.option_int("num_buffers", 0), 10);
  EXPECT_EQ(parse_source_uri("TEST://").scheme, SourceScheme::kTest);

  auto s = parse_source_uri("synthetic://right?objects=3&seed=1&max_disparity=64&noise_sigma=0");
  EXPECT_EQ(s.scheme, SourceScheme::kSynthetic);
  EXPECT_EQ(s.location, "right");
  EXPECT_EQ(s.option_int("max_disparity", 0), 64);
  EXPECT_EQ(s.option_double("noise_sigma", 2.0), 0.0);

  auto g = parse_source_uri("gst://videotestsrc pattern=snow ! videoflip method=rotate-180");
  EXPECT_EQ(g.scheme, SourceScheme::kGst);
  EXPECT_EQ(g.location, "videotestsrc pattern=snow ! videoflip method=rotate-180");
}

TEST(SourceUri, UnknownSchemeListsTheKnownOnes) {
  const std::string e = error_of("usb://0");
  EXPECT_TRUE(contains(e, "\"usb://0\"")) << e;
  EXPECT_TRUE(contains(e, "unknown scheme \"usb\"")) << e;
  EXPECT_TRUE(contains(e, "v4l2, csi, rtsp, file, images, test, synthetic, gst")) << e;
  EXPECT_TRUE(contains(error_of("/dev/video0"), "expected scheme://"));
  EXPECT_TRUE(contains(error_of(""), "expected scheme://"));
}

TEST(SourceUri, BadLocationsSayWhatIsExpected) {
  EXPECT_TRUE(contains(error_of("v4l2://video0"), "expected a device path"));
  EXPECT_TRUE(contains(error_of("csi://front"), "expected a sensor id"));
  EXPECT_TRUE(contains(error_of("csi://16"), "expected a sensor id"));
  EXPECT_TRUE(contains(error_of("rtsp:///stream"), "expected a host"));
  EXPECT_TRUE(contains(error_of("file://"), "expected a file path"));
  EXPECT_TRUE(contains(error_of("test://ball"), "test:// takes options only"));
  EXPECT_TRUE(contains(error_of("synthetic://middle"), "synthetic://left"));
  EXPECT_TRUE(contains(error_of("gst://  "), "launch description"));
  EXPECT_TRUE(contains(error_of("file:///a%2"), "bad percent escape"));
}

TEST(SourceUri, ImagePatternsMustHoldOneIntegerConversion) {
  EXPECT_TRUE(contains(error_of("images:///data/left.png"), "exactly one integer conversion"));
  EXPECT_TRUE(contains(error_of("images:///data/%d_%d.png"), "exactly one integer conversion"));
  // printf would read a string pointer for %s: refused before it reaches multifilesrc.
  EXPECT_TRUE(contains(error_of("images:///data/%s.png"), "only one integer conversion"));
  EXPECT_TRUE(contains(error_of("images:///data/x_%06d.bmp"), ".png, .jpg or .jpeg"));
  EXPECT_NO_THROW(parse_source_uri("images:///data/100%%_%04d.JPG"));
}

TEST(SourceUri, OptionsAreCheckedByName) {
  std::string e = error_of("test://?patern=ball");
  EXPECT_TRUE(contains(e, "unknown option \"patern\" for test://")) << e;
  EXPECT_TRUE(contains(e, "known: pattern, live, num_buffers, horizontal_speed")) << e;
  EXPECT_TRUE(contains(error_of("v4l2:///dev/video0?fps=30"), "(known: none)"));
  e = error_of("test://?pattern=plaid");
  EXPECT_TRUE(contains(e, "option pattern=\"plaid\": expected one of:")) << e;
  EXPECT_TRUE(contains(e, "ball")) << e;
  EXPECT_TRUE(contains(error_of("test://?live=maybe"), "expected true or false"));
  EXPECT_TRUE(contains(error_of("test://?num_buffers=0"), "out of range [1, 2147483647]"));
  EXPECT_TRUE(contains(error_of("test://?num_buffers=ten"), "expected an integer"));
  EXPECT_TRUE(contains(error_of("synthetic://?flicker=0.9"), "out of range [0, 0.5]"));
  EXPECT_TRUE(contains(error_of("test://?pattern"), "has no value"));
  EXPECT_TRUE(contains(error_of("test://?live=1&live=0"), "given twice"));
  EXPECT_TRUE(contains(error_of("rtsp://h/s#latency=-1"), "out of range"));
}

TEST(SourceUri, RedactsCredentials) {
  EXPECT_EQ(redact_uri("rtsp://admin:secret@10.0.0.2:554/s"), "rtsp://***@10.0.0.2:554/s");
  EXPECT_EQ(redact_uri("rtsp://10.0.0.2/s@x"), "rtsp://10.0.0.2/s@x");
  EXPECT_TRUE(contains(error_of("rtsp://admin:secret@/x"), "***@"));
  EXPECT_FALSE(contains(error_of("rtsp://admin:secret@/x"), "secret"));
}

TEST(FrameRate, ParsesIntegersDecimalsAndFractions) {
  EXPECT_EQ(parse_frame_rate("30").to_string(), "30/1");
  EXPECT_EQ(parse_frame_rate("29.97").to_string(), "30000/1001");
  EXPECT_EQ(parse_frame_rate("59.94").to_string(), "60000/1001");
  EXPECT_EQ(parse_frame_rate("12.5").to_string(), "25/2");
  EXPECT_EQ(parse_frame_rate("30000/1001").to_string(), "30000/1001");
  EXPECT_EQ(parse_frame_rate("30").interval_ns(), 33333333);
  EXPECT_THROW(parse_frame_rate("0"), std::invalid_argument);
  EXPECT_THROW(parse_frame_rate("fast"), std::invalid_argument);
  EXPECT_THROW(parse_frame_rate("30/0"), std::invalid_argument);
  EXPECT_THROW(parse_frame_rate("2000"), std::invalid_argument);
}

TEST(CameraConfig, IssuesNameTheCameraAndKey) {
  CameraConfig c = camera("left", "tset://");
  c.width = 1;
  c.fps = {0, 1};
  c.source_format = "MJPG";
  const auto issues = validate_camera(c);
  ASSERT_EQ(issues.size(), 3u) << to_string(issues);
  EXPECT_EQ(issues[0].camera, "left");
  EXPECT_EQ(issues[0].key, "uri");
  EXPECT_TRUE(contains(issues[0].message, "unknown scheme \"tset\""));
  EXPECT_EQ(issues[1].key, "width");
  EXPECT_EQ(issues[2].key, "fps");
  EXPECT_EQ(issues[1].to_string(), "camera 'left': width: 1 is out of range [2, 16384]");

  CameraConfig f = camera("left", "file:///x.mkv");
  f.source_format = "MJPG";
  ASSERT_EQ(validate_camera(f).size(), 1u);
  EXPECT_EQ(validate_camera(f)[0].key, "source_format");
  EXPECT_TRUE(validate_camera(camera("bad name", "test://"))[0].key == "name");
}

TEST(RigConfig, ChecksTheRigAsAWhole) {
  RigConfig rig;
  rig.name = "front";
  rig.cameras = {camera("left", "test://"), camera("left", "file:///a.mkv")};
  auto issues = validate_rig(rig);
  ASSERT_EQ(issues.size(), 2u) << to_string(issues);
  EXPECT_TRUE(contains(issues[0].message, "used twice"));
  EXPECT_TRUE(contains(issues[1].message, "mixes recordings"));

  rig.cameras = {camera("a", "synthetic://?seed=1"), camera("b", "synthetic://?seed=2")};
  issues = validate_rig(rig);
  ASSERT_EQ(issues.size(), 1u) << to_string(issues);
  EXPECT_TRUE(contains(issues[0].to_string(), "camera 'b': uri: synthetic options differ"));

  rig.cameras = {camera("a", "synthetic://right"), camera("b", "synthetic://")};
  issues = validate_rig(rig);
  ASSERT_EQ(issues.size(), 1u) << to_string(issues);
  EXPECT_TRUE(contains(issues[0].message, "two synthetic cameras"));

  // An L-shaped rig: a third camera above or below the left one, only one of them.
  rig.cameras = {camera("a", "synthetic://left"), camera("b", "synthetic://right"),
                 camera("c", "synthetic://below")};
  EXPECT_TRUE(validate_rig(rig).empty()) << to_string(validate_rig(rig));
  rig.cameras = {camera("a", "synthetic://above"), camera("b", "synthetic://right"),
                 camera("c", "synthetic://below")};
  EXPECT_TRUE(contains(to_string(validate_rig(rig)), "show the vertical"));
  rig.cameras.push_back(camera("d", "synthetic://left"));
  EXPECT_TRUE(contains(to_string(validate_rig(rig)), "one to three cameras"));
  EXPECT_THROW(parse_source_uri("synthetic://beside"), SourceUriError);
  EXPECT_THROW(parse_source_uri("synthetic://left?texture=plaid"), SourceUriError);
  EXPECT_NO_THROW(parse_source_uri("synthetic://above?texture=hstripes"));

  rig.cameras = {camera("a", "synthetic://"), camera("b", "test://")};
  EXPECT_TRUE(contains(to_string(validate_rig(rig)), "mixes synthetic://"));

  rig.cameras = {camera("a", "images:///a_%d.png"), camera("b", "images:///b_%d.png")};
  rig.cameras[1].loop = false;
  EXPECT_TRUE(contains(to_string(validate_rig(rig)), "camera 'b': loop: differs"));
  // Image sequences are read in lockstep: not with a video file in one rig.
  rig.cameras = {camera("a", "file:///a.mkv"), camera("b", "images:///b_%d.png")};
  EXPECT_TRUE(contains(to_string(validate_rig(rig)), "mixes images:// with file://"));

  rig.cameras = {camera("a", "test://"), camera("b", "test://")};
  EXPECT_TRUE(validate_rig(rig).empty());
  rig.cameras[1].fps = {60, 1};
  EXPECT_EQ(rig.effective_sync_tolerance_ns(), 16666666 / 2);
  rig.sync_tolerance_ns = 0;
  EXPECT_EQ(rig.effective_sync_tolerance_ns(), 0);
}

TEST(RigConfig, ReplayIsCheckedForTheRig) {
  EXPECT_TRUE(contains(error_of("synthetic://?replay=-1"), "out of range [0, 100000]"));
  EXPECT_TRUE(contains(error_of("images:///a_%d.png?replay=x"), "expected an integer"));
  EXPECT_TRUE(contains(error_of("test://?replay=3"), "unknown option \"replay\""));
  RigConfig rig;
  rig.name = "r";
  rig.cameras = {camera("a", "synthetic://?replay=30"), camera("b", "synthetic://?replay=30")};
  EXPECT_TRUE(validate_rig(rig).empty()) << to_string(validate_rig(rig));
  EXPECT_EQ(replay_count(rig), 30);
  // One scene renders both views: the count is one of its options, so it must agree.
  rig.cameras[1].uri = "synthetic://?replay=31";
  EXPECT_TRUE(contains(to_string(validate_rig(rig)), "synthetic options differ"));
  // Image sequences of a rig replay together.
  rig.cameras = {camera("a", "images:///a_%d.png?replay=8"), camera("b", "images:///b_%d.png")};
  EXPECT_TRUE(contains(to_string(validate_rig(rig)),
                       "camera 'b': uri: replay=0 differs from camera 'a' (replay=8)"))
      << to_string(validate_rig(rig));
  // What a rig may hold in memory: 100000 frames of two 1280x720 RGB cameras are 515 GiB.
  rig.cameras = {camera("a", "synthetic://?replay=100000"),
                 camera("b", "synthetic://?replay=100000")};
  for (auto& c : rig.cameras) {
    c.width = 1280;
    c.height = 720;
    c.color = true;
  }
  const std::string too_big = to_string(validate_rig(rig));
  EXPECT_TRUE(contains(too_big, "camera 'a': uri: replay=100000 would hold 527343 MiB")) << too_big;
  EXPECT_TRUE(contains(too_big, "a rig may hold 8192 MiB")) << too_big;
  rig.cameras = {camera("a", "test://"), camera("b", "test://")};
  EXPECT_EQ(replay_count(rig), 0);
}

TEST(RigConfig, PairsMustShareASize) {
  CameraConfig l = camera("left", "test://"), r = camera("right", "test://");
  EXPECT_EQ(check_pair_sizes(l, r), "");
  r.width = 1280;
  r.height = 720;
  EXPECT_EQ(check_pair_sizes(l, r),
            "cameras 'left' (640x480) and 'right' (1280x720) form a pair but deliver different "
            "sizes");
}

TEST(PipelineDescription, EachSchemeBuildsItsSource) {
  CameraConfig c = camera("cam", "");
  c.width = 320;
  c.height = 240;
  c.source_format = "MJPG";
  EXPECT_EQ(source_fragment(c, parse_source_uri("v4l2:///dev/video1")),
            "v4l2src device=\"/dev/video1\" ! image/jpeg,width=320,height=240,framerate=30/1 ! "
            "jpegdec");
  c.source_format = "YUY2";
  EXPECT_EQ(source_fragment(c, parse_source_uri("v4l2:///dev/video1")),
            "v4l2src device=\"/dev/video1\" ! "
            "video/x-raw,format=YUY2,width=320,height=240,framerate=30/1");
  c.source_format.clear();
  EXPECT_EQ(source_fragment(c, parse_source_uri("csi://0?sensor_mode=3")),
            "nvarguscamerasrc sensor-id=0 sensor-mode=3 ! "
            "video/x-raw(memory:NVMM),width=320,height=240,framerate=30/1 ! "
            "nvvidconv flip-method=0 ! video/x-raw,format=GRAY8");
  EXPECT_EQ(source_fragment(c, parse_source_uri("rtsp://cam/s#protocols=tcp")),
            "rtspsrc location=\"rtsp://cam/s\" latency=200 protocols=tcp ! decodebin");
  // The rig's ImageFeeder reads the files (and knows the start number): an appsrc and a decoder.
  EXPECT_EQ(source_fragment(c, parse_source_uri("images:///d/x_%03d.png?start=2")),
            "appsrc name=stereod_src_image is-live=true format=time do-timestamp=false "
            "caps=\"image/png,framerate=(fraction)30/1\" ! pngdec");
  EXPECT_EQ(source_fragment(c, parse_source_uri("test://?pattern=ball")),
            "videotestsrc is-live=true pattern=ball");
  EXPECT_EQ(quote_gst_value("a \"b\" \\c"), "\"a \\\"b\\\" \\\\c\"");
}

TEST(PipelineDescription, ConversionEndsInNonBlockingAppsinks) {
  CameraConfig c = camera("cam", "");
  const std::string gray = camera_branch_description(c, parse_source_uri("test://"));
  EXPECT_EQ(gray,
            "videotestsrc is-live=true pattern=smpte ! videorate drop-only=true ! videoscale ! "
            "videoconvert ! video/x-raw,format=GRAY8,width=640,height=480,framerate=30/1 ! "
            "appsink name=stereod_gray sync=false max-buffers=2 drop=true "
            "enable-last-sample=false qos=false");
  // Recordings are paced to the clock; a color camera is converted once, to RGB only (the
  // engines derive the gray): no tee, no second conversion, one appsink.
  c.color = true;
  const std::string color = camera_branch_description(c, parse_source_uri("file:///v.avi"));
  EXPECT_EQ(color,
            "filesrc location=\"/v.avi\" ! decodebin ! videorate ! videoscale ! videoconvert ! "
            "video/x-raw,format=RGB,width=640,height=480,framerate=30/1 ! identity "
            "name=stereod_pace sync=true ! appsink name=stereod_rgb sync=false max-buffers=2 "
            "drop=true enable-last-sample=false qos=false");
  EXPECT_FALSE(contains(color, "GRAY8")) << color;
}

TEST(PipelineDescription, SyntheticAndReplayedCamerasAreOneRawAppsrc) {
  CameraConfig c = camera("cam", "");
  c.width = 320;
  c.height = 240;
  c.color = true;
  const std::string raw =
      "appsrc name=stereod_src_raw is-live=true format=time do-timestamp=false "
      "caps=\"video/x-raw,format=RGB,width=320,height=240,framerate=30/1\" ! appsink "
      "name=stereod_rgb sync=false max-buffers=2 drop=true enable-last-sample=false qos=false";
  EXPECT_EQ(camera_branch_description(c, parse_source_uri("synthetic://left")), raw);
  EXPECT_EQ(camera_branch_description(c, parse_source_uri("synthetic://left?replay=30")), raw);
  // Replayed images were decoded at start-up: no decoder in the pipeline.
  EXPECT_EQ(camera_branch_description(c, parse_source_uri("images:///d/l_%03d.png?replay=5")), raw);
  EXPECT_TRUE(
      contains(camera_branch_description(c, parse_source_uri("images:///d/l_%03d.png")), "pngdec"));
  c.color = false;
  EXPECT_TRUE(contains(camera_branch_description(c, parse_source_uri("synthetic://right")),
                       "format=GRAY8,width=320,height=240,framerate=30/1\" ! appsink "
                       "name=stereod_gray"));
}

// A color camera with a raw_format ends in that format at the color appsink; videoconvert stays
// (a no-op when the source delivers the format already).
TEST(PipelineDescription, RawFormatCamerasEndInTheirFormat) {
  CameraConfig c = camera("cam", "");
  c.color = true;
  c.raw_format = "NV12";
  EXPECT_EQ(camera_branch_description(c, parse_source_uri("test://")),
            "videotestsrc is-live=true pattern=smpte ! videorate drop-only=true ! videoscale ! "
            "videoconvert ! video/x-raw,format=NV12,width=640,height=480,framerate=30/1 ! "
            "appsink name=stereod_rgb sync=false max-buffers=2 drop=true "
            "enable-last-sample=false qos=false");
}
