// The real stereod binary, spawned: frames arrive and match the synthetic ground truth, reloads
// apply (or are refused) without losing frames, systemd hears what it should, SIGTERM is quick,
// (a rig whose source dies and comes back: tests/fault/).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "daemon_config.hpp"
#include "daemon_harness.hpp"
#include "ingest/synthetic_source.hpp"
#include "stereo/pixel_ops.hpp"
#include "stereod_client.hpp"
#include "synthetic/synthetic_scene.hpp"

using namespace stereod;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

using namespace stereod::test;

// The shipped default configuration (config/stereod.yaml), publishing to the test's socket.
std::string default_config(const std::string& endpoint) {
  std::string text = read_text(STEREOD_CONFIG_DIR "/stereod.yaml");
  const std::string key = "\npublish:\n";
  const auto at = text.find(key);
  if (at == std::string::npos) throw std::runtime_error("config/stereod.yaml has no publish:");
  text.insert(at + key.size(), "  endpoint: '" + endpoint + "'\n");
  return text;
}

TEST(Daemon, DefaultRigFramesMatchTheGroundTruth) {
  Fixture f("truth");
  write_text(f.config, default_config(f.endpoint));
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path);
  ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
  client::Subscriber sub(f.endpoint);
  // The scene the daemon renders, for the ground truth of each frame.
  const DaemonConfig cfg = load_daemon_config(f.config.string());
  const auto scene = make_synthetic_scene(cfg.rigs[0]);
  ASSERT_TRUE(scene);
  const SyntheticCamera camera = synthetic_camera(scene->options());
  SyntheticFrame truth;
  long long estimated = 0, bad = 0, pixels = 0;
  // Depth (issue 14): depth_m() of every estimated pixel against the scene's true depth.
  std::vector<double> depth_error;  // relative
  long long left_checked = 0, left_equal = 0;
  std::uint64_t last = 0;
  int consecutive = 0, received = 0;
  bool first = true;
  while (consecutive < 100) {
    // The CPU engine needs most of the 100 ms frame budget while the background model warms up
    // (every pixel is matched then), so on a loaded two-core machine a frame set may be dropped as
    // "engine busy" early on. That is the daemon doing its job; what it must deliver is a run of
    // 100 consecutive frames, so a gap restarts the count, within a bound.
    ASSERT_LT(received, 300) << "no run of 100 consecutive frames in 300\n" << read_text(f.log);
    const client::Frame fr = next_frame(sub, 20s);
    ++received;
    const auto& h = fr.header();
    ASSERT_TRUE(h.ok()) << h.info.error;
    ASSERT_EQ(h.info.pair, "demo");
    if (!first && h.info.sequence != last + 1) {
      std::printf("sequence gap %llu -> %llu after %d consecutive frames; counting again\n",
                  static_cast<unsigned long long>(last),
                  static_cast<unsigned long long>(h.info.sequence), consecutive);
      consecutive = 0;
    }
    first = false;
    last = h.info.sequence;
    ++consecutive;
    // Header fields.
    EXPECT_EQ(h.info.engine, "cpu");
    EXPECT_EQ(h.info.max_disparity, 48);
    EXPECT_EQ(h.info.config_generation, 1u);
    ASSERT_EQ(h.info.cameras.size(), 2u);
    EXPECT_EQ(h.info.cameras[0].name, "left");
    EXPECT_EQ(h.info.cameras[1].name, "right");
    EXPECT_GT(h.info.capture_ns, 1'600'000'000'000'000'000LL);  // realtime nanoseconds
    EXPECT_GE(h.info.ready_ns, h.info.capture_ns);
    EXPECT_GE(h.info.source_index, 0);
    // The scene's own cameras, in every header.
    const publish::DepthCalibration& model = h.info.calibration;
    EXPECT_EQ(model.focal_px, camera.fx);
    EXPECT_EQ(model.fy_px, camera.fy);
    EXPECT_EQ(model.cx_px, camera.cx);
    EXPECT_EQ(model.cy_px, camera.cy);
    EXPECT_EQ(model.baseline_m, camera.baseline_m);
    EXPECT_EQ(model.doffs_px, 0.0);
    const auto disp = fr.disparity();
    ASSERT_EQ(disp.width, 320);
    ASSERT_EQ(disp.height, 240);
    scene->render(static_cast<int>(h.info.source_index), truth);
    for (int y = 0; y < disp.height; ++y) {
      for (int x = 0; x < disp.width; ++x) {
        ++pixels;
        const std::uint16_t v = disp(x, y);
        const float g = truth.disparity(x, y);
        if (v == kInvalidDisparity || !std::isfinite(g)) continue;
        ++estimated;
        bad += std::fabs(v / 16.0 - static_cast<double>(g)) > 1.0;
        const double true_depth = camera.depth_m(g);
        depth_error.push_back(std::fabs(fr.depth_m(x, y) - true_depth) / true_depth);
      }
    }
    // The left image (outputs.left: color) is the camera's, pixel for pixel.
    if (fr.left_channels() == 3) {
      ++left_checked;
      const auto left = fr.left();
      bool equal = left.width == 3 * 320 && left.height == 240;
      for (int y = 0; equal && y < 240; ++y) {
        equal = std::memcmp(left.row(y), truth.left.row(y), 3 * 320) == 0;
      }
      left_equal += equal;
    }
  }
  std::sort(depth_error.begin(), depth_error.end());
  const double median = depth_error[depth_error.size() / 2];
  const double within =
      static_cast<double>(std::upper_bound(depth_error.begin(), depth_error.end(), 0.01) -
                          depth_error.begin()) /
      static_cast<double>(depth_error.size());
  const double p90 = depth_error[depth_error.size() * 9 / 10];
  std::printf(
      "depth_m() against the true depth: median error %.3f %%, 90th percentile %.2f %%, "
      "%.1f %% of %zu pixels within 1 %%\n",
      100 * median, 100 * p90, 100 * within, depth_error.size());
  EXPECT_LT(median, 0.01);
  EXPECT_GT(within, 0.8);
  EXPECT_GT(left_checked, 90);
  EXPECT_EQ(left_equal, left_checked);
  const double rate = double(bad) / double(estimated);
  std::printf(
      "%d frames (the last 100 consecutive): bad 1.0 = %.2f %% of %lld estimated pixels "
      "(%.1f %% of all)\n",
      received, 100 * rate, estimated, 100.0 * double(estimated) / double(pixels));
  EXPECT_LT(rate, 0.10);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(5s), 0);
}

// outputs.confidence on the CPU engine: every frame carries the map, 0 wherever there is no
// disparity, graded where there is one; 0 also where the refinement (on by default) gave the
// disparity, which is not a match, and those are a small share.
TEST(Daemon, TheCpuEngineSendsConfidence) {
  Fixture f("confidence");
  std::string text = default_config(f.endpoint);
  const std::string off = "confidence: false";
  const auto at = text.find(off);
  ASSERT_NE(at, std::string::npos) << "config/stereod.yaml has no " << off;
  text.replace(at, off.size(), "confidence: true");
  write_text(f.config, text);
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path);
  ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
  client::Subscriber sub(f.endpoint);
  long long with_disparity = 0, graded = 0, unmatched = 0;
  for (int n = 0; n < 10; ++n) {
    const client::Frame fr = next_frame(sub, 20s);
    ASSERT_TRUE(fr.header().ok()) << fr.header().info.error;
    const auto disp = fr.disparity();
    const auto conf = fr.confidence();
    ASSERT_EQ(conf.width, disp.width);
    ASSERT_EQ(conf.height, disp.height);
    for (int y = 0; y < disp.height; ++y) {
      for (int x = 0; x < disp.width; ++x) {
        const bool has = disp(x, y) != kInvalidDisparity;
        if (!has) {
          ASSERT_EQ(conf(x, y), 0) << "pixel " << x << "," << y;
        }
        with_disparity += has;
        unmatched += has && conf(x, y) == 0;
        graded += conf(x, y) > 1 && conf(x, y) < 255;
      }
    }
  }
  EXPECT_GT(with_disparity, 0);
  EXPECT_GT(graded, 0);
  EXPECT_LT(unmatched, with_disparity / 5);
  EXPECT_EQ(read_text(f.log).find("computes no confidence"), std::string::npos) << read_text(f.log);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(5s), 0);
}

TEST(Daemon, ReloadAppliesWithinTwoFramesWithoutAGap) {
  Fixture f("reload");
  write_text(f.config, synthetic_config(f.endpoint));
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path);
  ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
  client::Subscriber sub(f.endpoint);
  std::uint64_t last = next_frame(sub, 20s).header().info.sequence;
  for (int i = 0; i < 3; ++i) last = next_frame(sub, 20s).header().info.sequence;
  // A parameter change, saved the way editors do: a new file renamed over the old one. Messages
  // are counted before the rename: the daemon may notice it and say RELOADING=1 at once.
  const std::size_t before = notify.messages().size();
  write_text(f.dir / "new.yaml", synthetic_config(f.endpoint, "      median: false\n"));
  fs::rename(f.dir / "new.yaml", f.config);
  const int reloading = notify.wait_for("RELOADING=1", before, 10s);
  ASSERT_GE(reloading, 0) << "the rename was not noticed\n" << read_text(f.log);
  ASSERT_GE(notify.wait_for("READY=1", static_cast<std::size_t>(reloading), 10s), 0);
  // From here, at most the frames already in flight (2 slots) carry the old generation.
  int old_after = 0;
  for (int i = 0; i < 8; ++i) {
    const client::Frame fr = next_frame(sub, 20s);
    const auto& h = fr.header();
    ASSERT_EQ(h.info.sequence, last + 1) << "a frame was lost across the reload";
    last = h.info.sequence;
    if (h.info.config_generation == 1) ++old_after;
    if (i >= 3) {
      EXPECT_EQ(h.info.config_generation, 2u);
    }
  }
  EXPECT_LE(old_after, 2);
  EXPECT_NE(read_text(f.log).find("pairs retuned: front"), std::string::npos) << read_text(f.log);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(5s), 0);
}

TEST(Daemon, InvalidReloadKeepsRunningAndSaysWhy) {
  Fixture f("invalid");
  write_text(f.config, synthetic_config(f.endpoint));
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path);
  ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
  client::Subscriber sub(f.endpoint);
  next_frame(sub, 20s);
  const std::string bad = synthetic_config(f.endpoint, "      levels: 99\n");
  const std::string where =
      "stereod.yaml:" +
      std::to_string(
          1 + std::count(bad.begin(),
                         bad.begin() + static_cast<std::ptrdiff_t>(bad.find("levels: 99")), '\n')) +
      ":";
  const std::size_t before = notify.messages().size();  // the file watch may answer the write
  write_text(f.config, bad);
  d.signal(SIGHUP);
  const int status = notify.wait_for("reload failed", before, 10s);
  ASSERT_GE(status, 0) << read_text(f.log);
  EXPECT_NE(notify.messages()[static_cast<std::size_t>(status)].find(where), std::string::npos)
      << notify.messages()[static_cast<std::size_t>(status)];
  // Still publishing, on the old configuration.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(next_frame(sub, 20s).header().info.config_generation, 1u);
  const std::string log = read_text(f.log);
  EXPECT_NE(log.find(where), std::string::npos) << log;
  EXPECT_NE(log.find("pairs[0].stereo.levels"), std::string::npos) << log;
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(5s), 0);
}

TEST(Daemon, NotifiesSystemdAndStopsQuicklyOnSigterm) {
  Fixture f("notify");
  write_text(f.config, synthetic_config(f.endpoint));
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path, /*watchdog=*/true);
  const int ready = notify.wait_for("READY=1", 0, 20s);
  ASSERT_GE(ready, 0) << read_text(f.log);
  EXPECT_NE(notify.messages()[static_cast<std::size_t>(ready)].find("STATUS="), std::string::npos);
  EXPECT_GE(notify.wait_for("WATCHDOG=1", 0, 5s), 0);
  EXPECT_GE(notify.wait_for("STATUS=1 pair", 0, 5s), 0);
  const std::size_t before = notify.messages().size();
  d.signal(SIGHUP);
  const int reloading = notify.wait_for("RELOADING=1", before, 10s);
  ASSERT_GE(reloading, 0);
  EXPECT_NE(notify.messages()[static_cast<std::size_t>(reloading)].find("MONOTONIC_USEC="),
            std::string::npos);
  EXPECT_GE(notify.wait_for("READY=1", static_cast<std::size_t>(reloading), 10s), 0);
  const auto t0 = std::chrono::steady_clock::now();
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(5s), 0) << read_text(f.log);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_GE(notify.wait_for("STOPPING=1", 0, 1s), 0);
}

// Frames that arrive after SIGTERM are not taken: nothing collects results any more, so they
// used to fill the slots and be counted (and logged) as "engine busy" drops. Found with 8 rigs
// on the GPU; here six fast rigs of test sources keep frames arriving while the rigs stop one by
// one.
TEST(Daemon, StoppingDoesNotCountEngineBusyDrops) {
  Fixture f("stopbusy");
  std::ostringstream c;
  c << "cameras:\n";
  for (int i = 0; i < 6; ++i) {
    for (const char* side : {"l", "r"}) {
      c << "  - {name: " << side << i
        << ", source: 'test://?pattern=snow', width: 32, height: 24, fps: 60}\n";
    }
  }
  c << "rigs:\n";
  for (int i = 0; i < 6; ++i)
    c << "  - {name: rig" << i << ", cameras: [l" << i << ", r" << i << "]}\n";
  c << "pairs:\n";
  for (int i = 0; i < 6; ++i) {
    c << "  - {name: p" << i << ", left: l" << i << ", right: r" << i
      << ", stereo: {max_disparity: 8, levels: 1}, background: {enabled: false}}\n";
  }
  c << "publish: {endpoint: '" << f.endpoint << "', stats_interval_ms: 200}\n";
  write_text(f.config, c.str());
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path);
  ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
  client::Subscriber sub(frames_and_stats(f.endpoint));
  // Busy drops while running (a start-up hiccup on a loaded machine) are not the point: remember
  // the totals of the last stats message before the signal.
  std::map<std::string, std::uint64_t> busy_before;
  const auto end = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < end) {
    auto m = sub.receive(100ms);
    if (!m || !m->stats) continue;
    for (const auto& p : m->stats->pairs) {
      busy_before[p.pair] = p.drops_total[static_cast<std::size_t>(stats::DropReason::kEngineBusy)];
    }
  }
  ASSERT_EQ(busy_before.size(), 6u);
  d.signal(SIGTERM);
  ASSERT_EQ(d.wait_exit(5s), 0);
  const std::string log = read_text(f.log);
  for (const auto& [pair, before] : busy_before) {
    const std::string key = "pair '" + pair + "': ";
    const auto at = log.rfind(key);  // the last line naming the pair: the summary at exit
    ASSERT_NE(at, std::string::npos) << log;
    const std::string line = log.substr(at, log.find('\n', at) - at);
    ASSERT_NE(line.find("frames published"), std::string::npos) << line;
    const auto b = line.find("busy ");
    ASSERT_NE(b, std::string::npos) << line;
    const std::uint64_t after = std::stoull(line.substr(b + 5));
    EXPECT_EQ(after, before) << pair << ": busy drops during the stop\n" << line;
  }
}

TEST(Daemon, CheckReportsErrorsWithTheirPlace) {
  Fixture f("check");
  write_text(f.config,
             "cameras:\n  - {name: a, source: 'test://', width: 64, height: 48}\n"
             "pairs: [{name: p, left: a, right: b}]\npublsh: {}\n");
  const std::string cmd = wrapped_command(std::string(STEREOD_BINARY) + " --check " +
                                          f.config.string() + " 2>" + (f.dir / "err").string());
  const int status = std::system(cmd.c_str());
  EXPECT_NE(WEXITSTATUS(status), 0);
  const std::string err = read_text(f.dir / "err");
  EXPECT_NE(err.find("stereod.yaml:4:1: publsh: unknown key; did you mean \"publish\"?"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("pairs[0].right: no camera named 'b'"), std::string::npos) << err;
  write_text(f.config, synthetic_config(f.endpoint));
  EXPECT_EQ(WEXITSTATUS(std::system(wrapped_command(std::string(STEREOD_BINARY) + " --check " +
                                                    f.config.string() + " >/dev/null")
                                        .c_str())),
            0);
}

// An L-shaped trinocular rig (issue 17) end to end on the CPU engine: three synthetic cameras,
// one trinocular pair; every frame carries the three cameras, the fused disparity in the
// horizontal pair's scale and the direction payload, and the fused map matches the ground truth.
TEST(Daemon, TrinocularRigEndToEnd) {
  Fixture f("trinocular");
  const std::string uri = "?objects=3&seed=6&max_disparity=32";
  std::ostringstream c;
  c << "cameras:\n"
       "  - {name: ref, source: 'synthetic://left"
    << uri
    << "', width: 192, height: 144, fps: 8}\n"
       "  - {name: beside, source: 'synthetic://right"
    << uri
    << "', width: 192, height: 144, fps: 8}\n"
       "  - {name: under, source: 'synthetic://below"
    << uri
    << "', width: 192, height: 144, fps: 8}\n"
       "pairs:\n"
       "  - name: tri\n"
       "    trinocular: {reference: ref, horizontal: beside, vertical: under, "
       "vertical_position: below}\n"
       "    stereo: {max_disparity: 32}\n"
       "    background: {warmup: 10}\n"
       "publish: {endpoint: '"
    << f.endpoint << "', outputs: {direction: true}}\n";
  write_text(f.config, c.str());
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path);
  ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
  client::Subscriber sub(f.endpoint);
  const DaemonConfig cfg = load_daemon_config(f.config.string());
  const auto scene = make_synthetic_scene(cfg.rigs[0]);
  ASSERT_TRUE(scene);
  EXPECT_EQ(scene->options().vertical, SyntheticVertical::kBelow);
  SyntheticFrame truth;
  long long estimated = 0, bad = 0, vertical_won = 0, directions = 0;
  for (int i = 0; i < 20; ++i) {
    const client::Frame fr = next_frame(sub, 20s);
    const auto& h = fr.header();
    ASSERT_TRUE(h.ok()) << h.info.error << "\n" << read_text(f.log);
    EXPECT_EQ(h.info.pair, "tri");
    ASSERT_EQ(h.info.cameras.size(), 3u);
    EXPECT_EQ(h.info.cameras[0].name, "ref");
    EXPECT_EQ(h.info.cameras[1].name, "beside");
    EXPECT_EQ(h.info.cameras[2].name, "under");
    EXPECT_EQ(h.info.max_disparity, 32);
    const auto disp = fr.disparity();
    ASSERT_EQ(disp.width, 192);
    ASSERT_EQ(disp.height, 144);
    const std::string_view dir = fr.payload("direction");
    ASSERT_EQ(dir.size(), 192u * 144u);
    ASSERT_GE(h.info.source_index, 0);
    scene->render(static_cast<int>(h.info.source_index), truth);
    for (int y = 0; y < disp.height; ++y) {
      for (int x = 0; x < disp.width; ++x) {
        const auto w = static_cast<std::uint8_t>(dir[static_cast<std::size_t>(y) * 192 + x]);
        ASSERT_LE(w, 2);
        const std::uint16_t v = disp(x, y);
        ASSERT_EQ(w == 0, v == kInvalidDisparity) << x << "," << y;
        directions += w != 0;
        vertical_won += w == 2;
        const float g = truth.disparity(x, y);
        if (v == kInvalidDisparity || !std::isfinite(g)) continue;
        ++estimated;
        bad += std::fabs(v / 16.0 - static_cast<double>(g)) > 1.0;
      }
    }
  }
  const double rate = double(bad) / double(estimated);
  std::printf(
      "trinocular rig: bad 1.0 = %.2f %% of %lld estimated pixels, %.1f %% from the "
      "vertical pair\n",
      100 * rate, estimated, 100.0 * double(vertical_won) / double(directions));
  EXPECT_LT(rate, 0.10);
  EXPECT_GT(vertical_won, 0);
  EXPECT_LT(vertical_won, directions);
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(5s), 0);
}

// The next three frames are whole, and every byte of their 64x48 left image (`channels` per
// pixel) is `value`.
namespace {
void expect_uniform_left(client::Subscriber& sub, int channels, int value) {
  for (int n = 0; n < 3; ++n) {
    const client::Frame fr = next_frame(sub, 20s);
    ASSERT_TRUE(fr.header().ok()) << fr.header().info.error;
    ASSERT_EQ(fr.left_channels(), channels);
    const auto img = fr.left();
    ASSERT_EQ(img.height, 48);
    for (int y = 0; y < img.height; ++y) {
      for (int x = 0; x < img.width; ++x) ASSERT_EQ(img(x, y), value) << x << "," << y;
    }
  }
}
}  // namespace

// A color camera paired with a gray one: both are matched gray, the color one by its BT.601 luma
// (Daemon::replace_with_luma), and its published gray left image is that luma: pure red,
// (77 * 255 + 128) >> 8 = 77.
TEST(Daemon, AColorCameraBesideAGrayOneIsMatchedByItsLuma) {
  Fixture f("mixed");
  std::ostringstream c;
  c << "engine: cpu\n"
       "cameras:\n"
       "  - {name: a, source: 'test://?pattern=red', width: 64, height: 48, fps: 10, color: true}\n"
       "  - {name: b, source: 'test://?pattern=white', width: 64, height: 48, fps: 10, "
       "color: false}\n"
       "pairs:\n"
       "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n"
       "publish: {endpoint: '"
    << f.endpoint << "', outputs: {left: gray}}\n";
  write_text(f.config, c.str());
  NotifySocket notify(f.notify_path);
  DaemonProcess d(f.config, f.log, f.notify_path);
  ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
  client::Subscriber sub(f.endpoint);
  ASSERT_NO_FATAL_FAILURE(expect_uniform_left(sub, 1, 77));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(5s), 0);
}

// Cameras with a raw_format reach the engine as YUV: frames come out, and the published left
// image is their RGB (white stays white in color, and in gray). The same for RGB cameras: asked
// for gray, their left image is their luma (regression: a color camera's frame has no gray of its
// own, and `left: gray` sent no left image at all).
TEST(Daemon, RawFormatCamerasEndToEnd) {
  for (const char* left : {"color", "gray", "gray-rgb"}) {
    const bool rgb = std::string(left) == "gray-rgb";
    Fixture f(std::string("raw_") + left);
    std::ostringstream c;
    c << "engine: cpu\n"
         "cameras:\n"
         "  - {name: a, source: 'test://?pattern=white', width: 64, height: 48, fps: 10, "
         "color: true"
      << (rgb ? "" : ", raw_format: UYVY")
      << "}\n"
         "  - {name: b, source: 'test://?pattern=white', width: 64, height: 48, fps: 10, "
         "color: true"
      << (rgb ? "" : ", raw_format: NV12")
      << "}\n"
         "pairs:\n"
         "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n"
         "publish: {endpoint: '"
      << f.endpoint << "', outputs: {left: " << (rgb ? "gray" : left) << "}}\n";
    write_text(f.config, c.str());
    NotifySocket notify(f.notify_path);
    DaemonProcess d(f.config, f.log, f.notify_path);
    ASSERT_GE(notify.wait_for("READY=1", 0, 20s), 0) << read_text(f.log);
    client::Subscriber sub(f.endpoint);
    ASSERT_NO_FATAL_FAILURE(expect_uniform_left(sub, std::string(left) == "color" ? 3 : 1, 255));
    d.signal(SIGTERM);
    EXPECT_EQ(d.wait_exit(5s), 0);
  }
}
