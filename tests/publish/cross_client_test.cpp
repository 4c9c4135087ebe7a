// One publisher, three receivers: the C++ client in this process, stereod-sub and the Python
// client as separate programs. Each must receive exactly the bytes that were published.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "disparity_io.hpp"
#include "publish/points.hpp"
#include "publish_fixtures.hpp"
#include "test_wrapper.hpp"

extern char** environ;

using namespace stereod;
using namespace stereod::publish;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr int kWidth = 37;  // odd sizes: no row is a multiple of anything convenient
constexpr int kHeight = 23;
constexpr int kFrames = 5;

// A child process with stdout and stderr in `log`.
class Child {
 public:
  Child(std::vector<std::string> argv, const std::string& log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  bool running() {
    if (pid_ <= 0 || exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    return !exited_;
  }
  int exit_code() const { return code_; }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

// An empty folder of this test process's own.
fs::path fresh_dir(const std::string& tag) {
  const fs::path dir =
      fs::temp_directory_path() / ("stereod-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A private endpoint, no stats topic.
PublisherOptions quiet_options(const std::string& tag) {
  PublisherOptions o;
  o.endpoint = test::unique_ipc(tag);
  o.stats_interval_ms = 0;
  return o;
}

std::string read_file(const fs::path& p) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) return {};
  std::string out(size, '\0');
  std::ifstream(p, std::ios::binary).read(out.data(), static_cast<std::streamsize>(size));
  return out;
}

// The published payload bytes of frame `seq`, as they go on the wire (packed, little-endian).
std::string expected_disparity(std::uint64_t seq) {
  std::string out;
  for (int y = 0; y < kHeight; ++y) {
    for (int x = 0; x < kWidth; ++x) {
      const std::uint16_t v = test::pattern_value(seq, x, y);
      out.push_back(static_cast<char>(v & 0xFF));
      out.push_back(static_cast<char>(v >> 8));
    }
  }
  return out;
}
std::string expected_mask(std::uint64_t seq) {
  std::string out;
  for (int y = 0; y < kHeight; ++y) {
    for (int x = 0; x < kWidth; ++x) out.push_back(static_cast<char>(test::mask_value(seq, x, y)));
  }
  return out;
}
template <typename T>
std::string bytes_of(const Image<T>& img) {
  std::string out;
  for (const T v : img.pixels()) {
    for (std::size_t b = 0; b < sizeof(T); ++b) out.push_back(static_cast<char>(v >> (8 * b)));
  }
  return out;
}

}  // namespace

TEST(CrossClient, CppPythonAndStereodSubReceiveIdenticalBytes) {
  if (std::string(STEREOD_PYTHON).empty()) GTEST_SKIP() << "no python3 with zmq and numpy";
  const fs::path dir = fs::temp_directory_path() / ("stereod-cross-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  PublisherOptions o;
  o.endpoint = test::unique_ipc("cross");
  o.outputs = {true, true};
  o.stats_interval_ms = 0;
  Publisher pub(o);
  const std::string count = std::to_string(kFrames);

  Child sub(test::wrapped({STEREOD_SUB, "--endpoint", pub.endpoint(), "--count", count, "--timeout",
                           "30", "--save", (dir / "sub").string()}),
            (dir / "sub.log").string());
  Child py({STEREOD_PYTHON, STEREOD_PYTHON_CLIENT, "--endpoint", pub.endpoint(), "--count", count,
            "--timeout", "30", "--dump", (dir / "py").string()},
           (dir / "py.log").string());
  ASSERT_TRUE(sub.started() && py.started());
  client::SubscriberOptions so;
  so.endpoint = pub.endpoint();
  client::Subscriber cpp(so);

  std::map<std::uint64_t, std::array<std::string, 3>> cpp_got;  // disparity, mask, depth bytes
  std::uint64_t seq = 0;
  const auto end = std::chrono::steady_clock::now() + 40s;
  // Publish until every receiver has its frames; all of them may join at different times.
  while ((sub.running() || py.running() || cpp_got.size() < kFrames) &&
         std::chrono::steady_clock::now() < end) {
    pub.publish(test::pattern_frame("front", seq++, kWidth, kHeight));
    while (auto f = test::next_frame(cpp, 10ms)) {  // every frame: the others join later
      cpp_got[f->header().info.sequence] = {std::string(f->payload("disparity")),
                                            std::string(f->payload("mask")),
                                            std::string(f->payload("depth"))};
    }
    std::this_thread::sleep_for(20ms);
  }
  const std::string sub_log = read_file(dir / "sub.log"), py_log = read_file(dir / "py.log");
  ASSERT_EQ(sub.exit_code(), 0) << sub_log;
  ASSERT_EQ(py.exit_code(), 0) << py_log;
  ASSERT_GE(cpp_got.size(), static_cast<std::size_t>(kFrames));

  // C++: exactly the published bytes. The depth is computed by the publisher: all three must
  // agree on it with each other.
  for (const auto& [s, bytes] : cpp_got) {
    EXPECT_EQ(bytes[0], expected_disparity(s)) << "C++ client, frame " << s;
    EXPECT_EQ(bytes[1], expected_mask(s)) << "C++ client, frame " << s;
    EXPECT_EQ(bytes[2].size(), 2u * kWidth * kHeight);
  }
  // The receivers may join at different times (under load, Python starts last), so each one's
  // frames are compared with the C++ client's copy of the same frame: that one sees them all.
  int py_frames = 0, sub_frames = 0, py_depth = 0, sub_depth = 0;
  for (const auto& entry : fs::directory_iterator(dir / "py")) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 19 || name.substr(name.size() - 14) != "_disparity.bin") continue;
    const std::uint64_t s = std::stoull(name.substr(6, 8));  // front_00000012_disparity.bin
    const std::string base = (dir / "py" / name.substr(0, 14)).string();
    ++py_frames;
    EXPECT_EQ(read_file(base + "_disparity.bin"), expected_disparity(s)) << "Python, frame " << s;
    EXPECT_EQ(read_file(base + "_mask.bin"), expected_mask(s)) << "Python, frame " << s;
    if (cpp_got.count(s)) {
      ++py_depth;
      EXPECT_EQ(read_file(base + "_depth.bin"), cpp_got[s][2]) << "Python depth, frame " << s;
    }
  }
  for (const auto& entry : fs::directory_iterator(dir / "sub")) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 19 || name.substr(name.size() - 14) != "_disparity.png") continue;
    const std::uint64_t s = std::stoull(name.substr(6, 8));
    const std::string base = (dir / "sub" / name.substr(0, 14)).string();
    ++sub_frames;
    EXPECT_EQ(bytes_of(read_png16(base + "_disparity.png")), expected_disparity(s))
        << "stereod-sub, frame " << s;
    EXPECT_EQ(bytes_of(load_mask(base + "_mask.png")), expected_mask(s))
        << "stereod-sub, frame " << s;
    EXPECT_TRUE(fs::exists(base + "_color.png"));
    EXPECT_TRUE(fs::exists(base + "_header.json"));
    if (cpp_got.count(s)) {
      ++sub_depth;
      EXPECT_EQ(bytes_of(read_png16(base + "_depth.png")), cpp_got[s][2])
          << "stereod-sub depth, frame " << s;
    }
  }
  EXPECT_EQ(py_frames, kFrames) << py_log;
  EXPECT_EQ(sub_frames, kFrames) << sub_log;
  EXPECT_GT(py_depth, 0) << "no Python frame to compare with the C++ client's";
  EXPECT_GT(sub_depth, 0) << "no stereod-sub frame to compare with the C++ client's";
  // stereod-sub's report: one line per frame with the documented columns.
  EXPECT_NE(sub_log.find("front #"), std::string::npos) << sub_log;
  EXPECT_NE(sub_log.find("valid "), std::string::npos) << sub_log;
  EXPECT_NE(sub_log.find("latency "), std::string::npos) << sub_log;
  fs::remove_all(dir);
}

// Old clients keep working (docs/PROTOCOL.md "Versioning"): the Python client as it was for
// protocol 1.2, a frozen copy, receives 1.3 frames with every new header field and payload, and
// reads the disparity, mask and depth it knows, refusing nothing.
TEST(CrossClient, AProtocol12ClientReadsProtocol13FramesWithEveryNewPayload) {
  if (std::string(STEREOD_PYTHON).empty()) GTEST_SKIP() << "no python3 with zmq and numpy";
  const fs::path dir = fresh_dir("legacy");
  Publisher pub(quiet_options("legacy"));
  const PublisherOutputs all = test::all_outputs();
  const std::string count = std::to_string(kFrames);
  Child old({STEREOD_PYTHON, STEREOD_LEGACY_PYTHON_CLIENT, "--endpoint", pub.endpoint(), "--count",
             count, "--timeout", "30", "--dump", (dir / "old").string()},
            (dir / "old.log").string());
  ASSERT_TRUE(old.started());
  client::SubscriberOptions so;
  so.endpoint = pub.endpoint();
  client::Subscriber cpp(so);
  std::map<std::uint64_t, std::string> depth;  // the C++ client's copy of each frame's depth
  std::uint64_t seq = 0;
  std::size_t payloads = 0;
  const auto end = std::chrono::steady_clock::now() + 40s;
  while (old.running() && std::chrono::steady_clock::now() < end) {
    pub.publish(test::rich_frame(seq++, kWidth, kHeight, all).frame);
    while (auto f = test::next_frame(cpp, 10ms)) {
      depth[f->header().info.sequence] = std::string(f->payload("depth"));
      payloads = f->header().payloads.size();
    }
    std::this_thread::sleep_for(20ms);
  }
  const std::string log = read_file(dir / "old.log");
  ASSERT_EQ(old.exit_code(), 0) << log;
  EXPECT_EQ(payloads, 6u) << "the frames carried every payload";
  EXPECT_NE(log.find("malformed 0"), std::string::npos) << log;
  int frames = 0, compared = 0;
  for (const auto& entry : fs::directory_iterator(dir / "old")) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 19 || name.substr(name.size() - 14) != "_disparity.bin") continue;
    const std::uint64_t s = std::stoull(name.substr(6, 8));
    const std::string base = (dir / "old" / name.substr(0, 14)).string();
    ++frames;
    EXPECT_EQ(read_file(base + "_disparity.bin"), expected_disparity(s)) << "frame " << s;
    EXPECT_EQ(read_file(base + "_mask.bin"), expected_mask(s)) << "frame " << s;
    // Payloads it does not know arrive as bytes (the rule that kept it working).
    EXPECT_EQ(read_file(base + "_points.bin").size(), 16u * kWidth * kHeight);
    if (depth.count(s)) {
      ++compared;
      EXPECT_EQ(read_file(base + "_depth.bin"), depth[s]) << "frame " << s;
    }
  }
  EXPECT_EQ(frames, kFrames) << log;
  EXPECT_GT(compared, 0);
  fs::remove_all(dir);
}

// A point cloud written by stereod-sub opens in a viewer: load_ply.py reads it from its header
// alone and finds every pixel with depth, within the bounds the camera model gives.
TEST(CrossClient, StereodSubWritesPointCloudsThatLoadInPython) {
  if (std::string(STEREOD_PYTHON).empty()) GTEST_SKIP() << "no python3 with zmq and numpy";
  const fs::path dir = fresh_dir("ply");
  Publisher pub(quiet_options("ply"));
  PublisherOutputs outputs;
  outputs.left = LeftOutput::kColor;  // colored points, computed by stereod-sub
  Child sub({STEREOD_SUB, "--endpoint", pub.endpoint(), "--count", "1", "--timeout", "30", "--save",
             (dir / "sub").string()},
            (dir / "sub.log").string());
  ASSERT_TRUE(sub.started());
  std::uint64_t seq = 0;
  const auto end = std::chrono::steady_clock::now() + 40s;
  while (sub.running() && std::chrono::steady_clock::now() < end) {
    pub.publish(test::rich_frame(seq++, kWidth, kHeight, outputs).frame);
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(sub.exit_code(), 0) << read_file(dir / "sub.log");
  fs::path ply;
  for (const auto& entry : fs::directory_iterator(dir / "sub")) {
    if (entry.path().extension() == ".ply") ply = entry.path();
  }
  ASSERT_FALSE(ply.empty()) << "no .ply written";
  const std::uint64_t s = std::stoull(ply.filename().string().substr(6, 8));
  // What the cloud must hold: the points of the frame's disparity under its camera model.
  const FrameInfo info = test::full_info("front", s);
  const auto d = test::pattern_disparity(s, kWidth, kHeight);
  std::vector<float> xyz(3u * kWidth * kHeight);
  disparity_to_points(d.view, info.calibration, {xyz.data(), 3 * kWidth, kHeight}, 3);
  std::size_t count = 0;
  double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
  for (std::size_t i = 0; i < xyz.size(); i += 3) {
    if (!std::isfinite(xyz[i + 2])) continue;
    ++count;
    for (std::size_t k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], static_cast<double>(xyz[i + k]));
      hi[k] = std::max(hi[k], static_cast<double>(xyz[i + k]));
    }
  }
  ASSERT_GT(count, 0u);
  const std::string out = (dir / "ply.json").string();
  const std::string cmd = std::string(STEREOD_PYTHON) + " " + STEREOD_LOAD_PLY + " '" +
                          ply.string() + "' > '" + out + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(out);
  const Json j = Json::parse(read_file(out));
  EXPECT_EQ(j["count"].get<std::size_t>(), count);
  EXPECT_TRUE(j["color"].get<bool>());
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(j["min"][k].get<double>(), lo[k], 1e-6 * std::fabs(lo[k]) + 1e-9) << k;
    EXPECT_NEAR(j["max"][k].get<double>(), hi[k], 1e-6 * std::fabs(hi[k]) + 1e-9) << k;
  }
  fs::remove_all(dir);
}
