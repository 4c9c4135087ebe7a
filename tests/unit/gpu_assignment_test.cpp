// More than one GPU in a host: gpu.devices and pairs[].gpu_device are read and checked at their
// place, pairs are spread over the devices by pixels per second, and a reload moves only the
// pairs it must.
#include <gtest/gtest.h>

#include "config_issues.hpp"
#include "daemon_config.hpp"
#include "gpu_assignment.hpp"

using namespace stereod;

namespace {

// `pairs` rigs of two test cameras each; pair i is WxH at F frames/s from `sizes[i]`.
struct PairSpec {
  int width = 64, height = 48, fps = 30;
  int gpu_device = -1;
};
std::string config_text(const std::vector<PairSpec>& pairs, const std::string& gpu) {
  std::string t = "engine: cuda\ncameras:\n";
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    for (const char* side : {"l", "r"}) {
      t += "  - {name: " + std::string(side) + std::to_string(i) +
           ", source: 'test://', width: " + std::to_string(pairs[i].width) +
           ", height: " + std::to_string(pairs[i].height) +
           ", fps: " + std::to_string(pairs[i].fps) + "}\n";
    }
  }
  t += "rigs:\n";
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    t += "  - {name: rig" + std::to_string(i) + ", cameras: [l" + std::to_string(i) + ", r" +
         std::to_string(i) + "]}\n";
  }
  t += "pairs:\n";
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    t += "  - {name: p" + std::to_string(i) + ", left: l" + std::to_string(i) + ", right: r" +
         std::to_string(i) + ", stereo: {max_disparity: 16}";
    if (pairs[i].gpu_device >= 0) t += ", gpu_device: " + std::to_string(pairs[i].gpu_device);
    t += "}\n";
  }
  return t + gpu;
}

DaemonConfig parse(const std::vector<PairSpec>& pairs, const std::string& gpu) {
  return parse_daemon_config(config_text(pairs, gpu), "t.yaml");
}

using test::mentions;

}  // namespace

TEST(GpuConfig, DevicesAndPinnedPairsAreReadAndChecked) {
  DaemonConfig c = parse({{}, {}}, "");
  EXPECT_EQ(c.gpu.devices, std::vector<int>{0});  // the default: device 0
  c = parse({{}, {}}, "gpu: {device: 3}\n");
  EXPECT_EQ(c.gpu.devices, std::vector<int>{3});
  c = parse({{}, {64, 48, 30, 1}}, "gpu: {devices: [1, 0]}\n");
  EXPECT_EQ(c.gpu.devices, (std::vector<int>{1, 0}));
  EXPECT_EQ(c.pairs[0].gpu_device, -1);
  EXPECT_EQ(c.pairs[1].gpu_device, 1);

  auto v = test::config_issues(config_text({{}, {}}, "gpu: {device: 0, devices: [0, 1]}\n"));
  EXPECT_TRUE(mentions(v, "gpu.devices", "not both")) << test::all_issues(v);
  v = test::config_issues(config_text({{}, {}}, "gpu: {devices: [0, 0]}\n"));
  EXPECT_TRUE(mentions(v, "gpu.devices[1]", "listed twice")) << test::all_issues(v);
  v = test::config_issues(config_text({{}, {}}, "gpu: {devices: [0, 64]}\n"));
  EXPECT_TRUE(mentions(v, "gpu.devices[1]", "0-63")) << test::all_issues(v);
  v = test::config_issues(config_text({{}, {}}, "gpu: {devices: []}\n"));
  EXPECT_TRUE(mentions(v, "gpu.devices", "expected a list")) << test::all_issues(v);
  v = test::config_issues(config_text({{}, {}}, "gpu: {devices: gpu0}\n"));
  EXPECT_TRUE(mentions(v, "gpu.devices", "expected a list")) << test::all_issues(v);
  // A pair pinned to a device the configuration does not use.
  v = test::config_issues(config_text({{}, {64, 48, 30, 2}}, "gpu: {devices: [0, 1]}\n"));
  EXPECT_TRUE(mentions(v, "pairs[1].gpu_device", "device 2 is not in gpu.devices [0, 1]"))
      << test::all_issues(v);
  v = test::config_issues(config_text({{64, 48, 30, 70}, {}}, ""));
  EXPECT_TRUE(mentions(v, "pairs[0].gpu_device", "out of range")) << test::all_issues(v);
}

TEST(GpuAssignment, BalancesPixelsPerSecond) {
  // One big pair (1280x720) and four small ones (320x240: 1/12 of it each) on two GPUs: the big
  // one alone on one device, the small ones together on the other.
  const DaemonConfig c = parse({{1280, 720}, {320, 240}, {320, 240}, {320, 240}, {320, 240}},
                               "gpu: {devices: [0, 1]}\n");
  const GpuAssignment a = assign_gpus(c);
  ASSERT_EQ(a.size(), 5u);
  const int big = a.at("p0");
  for (const char* small : {"p1", "p2", "p3", "p4"}) EXPECT_NE(a.at(small), big) << small;
  // Equal pairs split evenly, in order, over three devices.
  const DaemonConfig even = parse(std::vector<PairSpec>(6), "gpu: {devices: [0, 1, 2]}\n");
  const auto loads = gpu_loads(even, assign_gpus(even));
  ASSERT_EQ(loads.size(), 3u);
  EXPECT_EQ(loads.at(0), loads.at(1));
  EXPECT_EQ(loads.at(1), loads.at(2));
  // The rate counts too: a pair at 60 frames/s weighs two at 30.
  const DaemonConfig rates = parse({{64, 48, 60}, {}, {}}, "gpu: {devices: [0, 1]}\n");
  const GpuAssignment r = assign_gpus(rates);
  EXPECT_NE(r.at("p0"), r.at("p1"));
  EXPECT_EQ(r.at("p1"), r.at("p2"));
  // One device: everything on it.
  for (const auto& [pair, device] : assign_gpus(parse({{}, {}}, "gpu: {device: 2}\n"))) {
    EXPECT_EQ(device, 2) << pair;
  }
}

TEST(GpuAssignment, PinnedPairsGoWhereTheySay) {
  const DaemonConfig c =
      parse({{64, 48, 30, 1}, {64, 48, 30, 1}, {}, {}}, "gpu: {devices: [0, 1]}\n");
  const GpuAssignment a = assign_gpus(c);
  EXPECT_EQ(a.at("p0"), 1);
  EXPECT_EQ(a.at("p1"), 1);
  // The free pairs fill the other device first.
  EXPECT_EQ(a.at("p2"), 0);
  EXPECT_EQ(a.at("p3"), 0);
}

TEST(GpuAssignment, AReloadMovesOnlyThePairsItMust) {
  const DaemonConfig before = parse(std::vector<PairSpec>(4), "gpu: {devices: [0, 1]}\n");
  const GpuAssignment running = assign_gpus(before);
  // A fifth pair: it goes to the lighter device (a tie: the first listed), nobody else moves.
  const DaemonConfig more = parse(std::vector<PairSpec>(5), "gpu: {devices: [0, 1]}\n");
  GpuAssignment next = assign_gpus(more, running);
  for (const auto& [pair, device] : running) EXPECT_EQ(next.at(pair), device) << pair;
  EXPECT_EQ(next.at("p4"), 0);
  // Pinning one pair to the other device moves that pair only.
  std::vector<PairSpec> pinned(4);
  const std::string which = running.at("p2") == 0 ? "1" : "0";
  pinned[2].gpu_device = std::stoi(which);
  next = assign_gpus(parse(pinned, "gpu: {devices: [0, 1]}\n"), running);
  for (const auto& [pair, device] : running) {
    if (pair == "p2") {
      EXPECT_NE(next.at(pair), device);
    } else {
      EXPECT_EQ(next.at(pair), device) << pair;
    }
  }
  // A device that leaves the list: its pairs move to the one left, the others stay.
  next = assign_gpus(parse(std::vector<PairSpec>(4), "gpu: {devices: [1]}\n"), running);
  for (const auto& [pair, device] : next) EXPECT_EQ(device, 1) << pair;
  // A device added: nothing moves (a restart rebalances).
  next = assign_gpus(parse(std::vector<PairSpec>(4), "gpu: {devices: [0, 1, 2]}\n"), running);
  EXPECT_EQ(next, running);
}

TEST(GpuAssignment, TheDiffSaysWhenPlacementChanged) {
  const DaemonConfig a = parse({{}, {}}, "gpu: {devices: [0, 1]}\n");
  EXPECT_TRUE(diff_configs(a, a).empty());
  // Other devices, or a pair pinned elsewhere: the daemon works out who moves; the engines of
  // the others stay.
  ConfigDiff d = diff_configs(a, parse({{}, {}}, "gpu: {devices: [0]}\n"));
  EXPECT_TRUE(d.gpu_placement);
  EXPECT_FALSE(d.engines_rebuilt);
  EXPECT_TRUE(d.pairs_rebuilt.empty());
  d = diff_configs(a, parse({{}, {64, 48, 30, 0}}, "gpu: {devices: [0, 1]}\n"));
  EXPECT_TRUE(d.gpu_placement);
  EXPECT_FALSE(d.empty());
  EXPECT_NE(d.summary().find("GPU placement changed"), std::string::npos);
  // What every engine depends on rebuilds them all.
  d = diff_configs(a, parse({{}, {}}, "gpu: {devices: [0, 1], inflight: 3}\n"));
  EXPECT_TRUE(d.engines_rebuilt);
  EXPECT_FALSE(d.gpu_placement);
}
