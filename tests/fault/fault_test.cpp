// Fault injection against the running daemon (issue 15): hostile and stalled subscribers, reloads
// that fail at every stage, sources that die, stall or deliver gaps, signals at every phase. Each
// test runs the real stereod binary (CPU engine) with a counting subscriber and checks that the
// daemon does not crash, that an outage is never silent (the status and the log say what is
// wrong), that no frame is published from mismatched inputs and that other pairs go on.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "daemon_harness.hpp"
#include "image_file.hpp"
#include "publish/curve_keys.hpp"
#include "stereod_client.hpp"

#include <zmq.hpp>

using namespace stereod;
using namespace stereod::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// The daemon's resident memory in kB (VmRSS), or -1.
long rss_kb(pid_t pid) {
  const std::string status = read_text("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find("VmRSS:");
  return at == std::string::npos ? -1 : std::stol(status.substr(at + 6));
}

// Frames of every pair that `sub` receives within `window`, and the longest time between two.
struct Count {
  std::map<std::string, int> frames;
  std::chrono::milliseconds longest_gap{0};
  int total() const {
    int n = 0;
    for (const auto& [pair, k] : frames) n += k;
    return n;
  }
};

Count count_frames(client::Subscriber& sub, std::chrono::milliseconds window) {
  Count c;
  const auto start = Clock::now();
  auto last = start;
  while (Clock::now() - start < window) {
    auto m = sub.receive(50ms);
    if (!m || !m->frame) continue;
    ++c.frames[m->frame->header().info.pair];
    const auto now = Clock::now();
    c.longest_gap =
        std::max(c.longest_gap, std::chrono::duration_cast<std::chrono::milliseconds>(now - last));
    last = now;
  }
  c.longest_gap = std::max(
      c.longest_gap, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last));
  return c;
}

// A synthetic rig of 320x240 frames at 15 frames/s with the mask: about 3.5 MB/s of payload, so a
// subscriber that stops reading fills its socket buffers within seconds, tcp:// included. After
// the background model's short warm-up only the moving objects are matched, which the CPU engine
// does at this rate on a busy machine.
std::string busy_stream_config(const std::string& endpoint) {
  return "cameras:\n"
         "  - {name: left, source: 'synthetic://left?objects=2&seed=3&max_disparity=32', width: "
         "320, height: 240, fps: 15, color: true}\n"
         "  - {name: right, source: 'synthetic://right?objects=2&seed=3&max_disparity=32', width: "
         "320, height: 240, fps: 15, color: true}\n"
         "pairs:\n"
         "  - {name: front, left: left, right: right, stereo: {max_disparity: 16, levels: 2}, "
         "background: {warmup: 5}}\n"
         "publish: {endpoint: '" +
         endpoint + "', stats_interval_ms: 500, outputs: {mask: true}}\n";
}

// `stereod-sub` stopped with SIGSTOP (issue 15, defect 1): it stopped the frames of every other
// subscriber, over ipc:// (after 15 s) and tcp:// (26 s), because the frames queued for it held
// the engine's buffers. A slow subscriber loses its own frames; nobody else does.
void paused_subscriber_keeps_nobody_else_waiting(const std::string& tag, bool tcp) {
  RunningDaemon d(tag, [&](const Fixture& f) {
    return busy_stream_config(tcp ? "tcp://127.0.0.1:0" : f.endpoint);
  });
  ASSERT_TRUE(d.ready()) << d.log();
  const std::string endpoint = logged_endpoint(d.fixture.log);
  ASSERT_FALSE(endpoint.empty()) << d.log();
  client::Subscriber counter(endpoint);
  next_frame(counter, 20s);  // past the warm-up
  ChildProcess paused({STEREOD_SUB, "--endpoint", endpoint}, "");
  ASSERT_TRUE(eventually([&] { return count_frames(counter, 500ms).total() > 0; }, 20s));
  std::this_thread::sleep_for(1s);  // it receives; then it stops reading
  paused.signal(SIGSTOP);
  count_frames(counter, 2s);  // while its socket buffers fill
  const Count window = count_frames(counter, 6s);
  // 15 frames/s: 90 in the window. A loaded machine drops some as "engine busy"; the defect
  // dropped all of them.
  EXPECT_GE(window.total(), 30) << d.log();
  EXPECT_LT(window.longest_gap.count(), 2000) << d.log();
  EXPECT_TRUE(paused.running());
  paused.signal(SIGCONT);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

}  // namespace

TEST(Subscribers, APausedSubscriberOverIpcDoesNotStopTheOthers) {
  paused_subscriber_keeps_nobody_else_waiting("paused-ipc", false);
}

TEST(Subscribers, APausedSubscriberOverTcpDoesNotStopTheOthers) {
  paused_subscriber_keeps_nobody_else_waiting("paused-tcp", true);
}

// Issue 15, defect 2: a pair name of more than 256 characters passed --check, and the daemon then
// aborted at the first frame (`what(): ... pair must have 1 to 256 characters`, rc 134), also
// through a live reload. Now --check and the reload refuse it, and the daemon runs on.
TEST(Reloads, AnOverlongPairNameIsRefusedByCheckAndByReload) {
  RunningDaemon d("longname", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  next_frame(sub, 20s);

  std::string text = synthetic_config(d.fixture.endpoint);
  text.replace(text.find("name: front"), 11, "name: " + std::string(300, 'p'));
  const fs::path bad = d.fixture.dir / "bad.yaml";
  write_text(bad, text);
  std::string out;
  EXPECT_EQ(run_check(bad, out), 1) << out;
  EXPECT_NE(out.find("pairs[0].name: expected a name of 1 to 256"), std::string::npos) << out;

  const std::size_t before = d.notify.messages().size();
  fs::rename(bad, d.fixture.config);
  ASSERT_GE(d.notify.wait_for("reload failed", before, 10s), 0) << d.log();
  EXPECT_NE(d.notify.last_status().find("pairs[0].name"), std::string::npos)
      << d.notify.last_status();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(next_frame(sub, 20s).header().info.pair, "front");
  EXPECT_TRUE(d.process.running());
  EXPECT_EQ(d.stop(), 0) << d.log();
}

namespace {

// A TCP port on 127.0.0.1 held by the test (listening), so that binding it fails.
class TakenPort {
 public:
  TakenPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~TakenPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace

// Issue 15, defect 3: a reload that moved the endpoint to a port that cannot be bound logged
// "still running on the previous configuration", but the old socket was already closed: nothing
// listened any more, and SIGHUP then said "no changes". A reload is all or nothing.
TEST(Reloads, AReloadToAnUnbindableEndpointKeepsTheOldOne) {
  RunningDaemon d("unbindable", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  next_frame(sub, 20s);
  TakenPort taken;
  const std::string moved = "tcp://127.0.0.1:" + std::to_string(taken.port());
  write_text(d.fixture.dir / "new.yaml", synthetic_config(moved));
  std::string out;
  EXPECT_EQ(run_check(d.fixture.dir / "new.yaml", out), 0) << out;  // a valid file
  std::size_t before = d.notify.messages().size();
  fs::rename(d.fixture.dir / "new.yaml", d.fixture.config);
  ASSERT_GE(d.notify.wait_for("reload failed", before, 10s), 0) << d.log();
  EXPECT_NE(d.notify.last_status().find("is taken by another process"), std::string::npos)
      << d.notify.last_status();
  // The old socket still serves, on the old configuration.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(next_frame(sub, 10s).header().info.config_generation, 1u);
  // Asked again, the daemon tries again (and fails again) rather than finding "no changes".
  before = d.notify.messages().size();
  d.process.signal(SIGHUP);
  ASSERT_GE(d.notify.wait_for("RELOADING=1", before, 10s), 0);
  ASSERT_GE(d.notify.wait_for("reload failed", before, 10s), 0) << d.log();
  EXPECT_EQ(d.log().find("no changes"), std::string::npos) << d.log();
  next_frame(sub, 10s);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// The all-or-nothing reload still applies what it should: a rig rebuilt with another frame size,
// and a new pair of its own rig added beside it.
TEST(Reloads, ARebuiltRigAndANewRigApply) {
  RunningDaemon d("rebuild", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  EXPECT_EQ(next_frame(sub, 20s).disparity().width, 192);
  std::string text = synthetic_config(d.fixture.endpoint);
  for (auto at = text.find("width: 192"); at != std::string::npos; at = text.find("width: 192"))
    text.replace(at, 10, "width: 160");
  text.replace(text.find("rigs:\n"), 6,
               "  - {name: tl, source: 'test://?pattern=ball', width: 64, height: 48, fps: 8}\n"
               "  - {name: tr, source: 'test://?pattern=ball', width: 64, height: 48, fps: 8}\n"
               "rigs:\n  - {name: test, cameras: [tl, tr]}\n");
  text.replace(text.find("publish:"), 0,
               "  - {name: extra, left: tl, right: tr, stereo: {max_disparity: 8, levels: 1}, "
               "background: {enabled: false}}\n");
  const std::size_t before = d.notify.messages().size();
  write_text(d.fixture.dir / "new.yaml", text);
  fs::rename(d.fixture.dir / "new.yaml", d.fixture.config);
  ASSERT_GE(d.notify.wait_for("READY=1", before + 1, 10s), 0) << d.log();
  std::map<std::string, int> widths;
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (widths.size() < 2 && std::chrono::steady_clock::now() < end) {
    const client::Frame f = next_frame(sub, 10s);
    if (f.header().info.config_generation == 2) widths[f.header().info.pair] = f.disparity().width;
  }
  EXPECT_EQ(widths["front"], 160) << d.log();
  EXPECT_EQ(widths["extra"], 64) << d.log();
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// Issue 15, defect 3: a reload that set publish.curve.server_key to the public certificate passed
// the loader and left nothing listening. --check and the reload now refuse it.
TEST(Reloads, APublicKeyAsTheServerKeyIsRefusedByCheckAndByReload) {
  if (!publish::curve_available()) GTEST_SKIP() << "libzmq without CURVE";
  RunningDaemon d("publickey", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  next_frame(sub, 20s);
  const auto keys = publish::write_new_certificate(d.fixture.dir.string(), "server");
  const fs::path bad = d.fixture.dir / "bad.yaml";
  write_text(bad, synthetic_config("tcp://127.0.0.1:0", "",
                                   "  curve: {server_key: '" + keys.public_file + "'}\n"));
  std::string out;
  EXPECT_EQ(run_check(bad, out), 1) << read_text(bad);
  EXPECT_NE(out.find("publish.curve.server_key: " + keys.public_file + ": a public certificate"),
            std::string::npos)
      << out;
  const std::size_t before = d.notify.messages().size();
  fs::rename(bad, d.fixture.config);
  ASSERT_GE(d.notify.wait_for("reload failed", before, 10s), 0) << d.log();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(next_frame(sub, 10s).header().info.config_generation, 1u);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

namespace {

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port() {
  TakenPort probe;
  return probe.port();
}

}  // namespace

// Issue 15, defect 7: tcp://localhost:PORT passed --check and the daemon then failed with "cannot
// bind (No such device)". localhost is the loopback now; what this host cannot bind is refused by
// --check.
TEST(Endpoints, LocalhostIsTheLoopbackAndAnUnknownHostIsRefusedByCheck) {
  const int port = free_port();
  RunningDaemon d("localhost", [&](const Fixture&) {
    return synthetic_config("tcp://localhost:" + std::to_string(port));
  });
  std::string out;
  EXPECT_EQ(run_check(d.fixture.config, out), 0) << out;
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub("tcp://127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(next_frame(sub, 20s).header().info.pair, "front");
  EXPECT_EQ(d.stop(), 0) << d.log();

  write_text(d.fixture.config, synthetic_config("tcp://stereod-no-such-host:5593"));
  EXPECT_EQ(run_check(d.fixture.config, out), 1) << out;
  EXPECT_NE(out.find("neither an IP address of this host"), std::string::npos) << out;
}

// Issue 15, defect 9: a second daemon on the same ipc:// path bound it silently (ZeroMQ replaces
// the socket file), and when it exited it deleted the file: the first daemon, still running, could
// no longer be reached. Now the second refuses to start and says why; --check says the endpoint
// is taken.
TEST(Instances, ASecondDaemonOnTheSameIpcPathIsRefused) {
  RunningDaemon first("first", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(first.ready()) << first.log();
  const fs::path second_config = first.fixture.dir / "second.yaml";
  write_text(second_config, synthetic_config(first.fixture.endpoint));
  std::string out;
  EXPECT_EQ(run_check(second_config, out), 0) << out;
  EXPECT_NE(out.find("note: publish.endpoint"), std::string::npos) << out;
  const fs::path second_log = first.fixture.dir / "second.log";
  {
    NotifySocket notify(first.fixture.dir / "notify2");
    DaemonProcess second(second_config, second_log, notify.path());
    EXPECT_EQ(second.wait_exit(20s), 1) << read_text(second_log);
    EXPECT_NE(read_text(second_log).find("being served by another process"), std::string::npos)
        << read_text(second_log);
  }
  // A subscriber arriving now still reaches the first daemon.
  client::Subscriber late(first.fixture.endpoint);
  EXPECT_EQ(next_frame(late, 20s).header().info.pair, "front");
  EXPECT_EQ(first.stop(), 0) << first.log();
}

// `stereod --check ''` started the daemon (an empty name read as "no --check").
TEST(CommandLine, CheckWithAnEmptyNameIsAnError) {
  std::string out;
  EXPECT_EQ(run_check("", out, 10s), 1) << out;
  EXPECT_NE(out.find("no file given"), std::string::npos) << out;
}

namespace {

// `lines` pairs with a mistake each: every one is an issue.
std::string runaway_config(const std::string& endpoint, std::size_t bytes) {
  std::string text = synthetic_config(endpoint);
  std::string pairs;
  for (int i = 0; pairs.size() < bytes; ++i) {
    pairs += "  - {name: p" + std::to_string(i) + ", left: left, right: nowhere}\n";
  }
  text.insert(text.find("  - name: front"), pairs);
  return text;
}

}  // namespace

// Issue 15, defect 5: a 10 MB configuration stopped the frames for 9.3 s on reload, took RSS from
// 50 to 975 MB for good and wrote 874k log lines. Now it is refused unread, at once.
TEST(Reloads, ATenMegabyteConfigurationIsRefusedAtOnce) {
  RunningDaemon d("huge", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  next_frame(sub, 20s);
  const long rss_before = rss_kb(d.process.pid());
  write_text(d.fixture.dir / "huge.yaml", runaway_config(d.fixture.endpoint, 10 << 20));
  const std::size_t before = d.notify.messages().size();
  fs::rename(d.fixture.dir / "huge.yaml", d.fixture.config);
  ASSERT_GE(d.notify.wait_for("reload failed", before, 10s), 0) << d.log();
  EXPECT_NE(d.notify.last_status().find("at most 1 MiB"), std::string::npos)
      << d.notify.last_status();
  const Count after = count_frames(sub, 2s);
  EXPECT_GE(after.total(), 8);
  EXPECT_LT(after.longest_gap.count(), 1000);
  EXPECT_LT(rss_kb(d.process.pid()) - rss_before, 50 * 1024);
  EXPECT_LT(count_of(d.log(), "\n"), 100);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// Just under the limit, a file that takes long to check is read beside the running daemon: frames
// go on while it is checked, its issues are capped, and SIGTERM during the check is still quick.
TEST(Reloads, ABigConfigurationIsCheckedWhileFramesGoOn) {
  RunningDaemon d("big", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  next_frame(sub, 20s);
  write_text(d.fixture.dir / "big.yaml", runaway_config(d.fixture.endpoint, 1000 * 1000));
  std::size_t before = d.notify.messages().size();
  fs::rename(d.fixture.dir / "big.yaml", d.fixture.config);
  const Count during = count_frames(sub, 2s);
  EXPECT_LT(during.longest_gap.count(), 1000) << d.log();
  ASSERT_GE(d.notify.wait_for("reload failed", before, 20s), 0) << d.log();
  EXPECT_LT(count_of(d.log(), "reload rejected"), 110);
  // Asked again, and stopped while it reads.
  before = d.notify.messages().size();
  d.process.signal(SIGHUP);
  ASSERT_GE(d.notify.wait_for("RELOADING=1", before, 10s), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(d.stop(), 0) << d.log();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

namespace {

// A 1280x720 synthetic pair at 30 frames/s: on the CPU engine of a small machine a frame takes
// longer than the whole stop may.
std::string hd_config(const std::string& endpoint) {
  return "cameras:\n"
         "  - {name: left, source: 'synthetic://left?seed=1&max_disparity=64', width: 1280, "
         "height: 720, fps: 30, color: true}\n"
         "  - {name: right, source: 'synthetic://right?seed=1&max_disparity=64', width: 1280, "
         "height: 720, fps: 30, color: true}\n"
         "pairs:\n"
         "  - {name: hd, left: left, right: right, stereo: {max_disparity: 64}}\n"
         "publish: {endpoint: '" +
         endpoint + "'}\n";
}

// SIGTERM, and how long until the exit; the exit code in `code`.
std::chrono::milliseconds time_to_exit(RunningDaemon& d, int& code) {
  const auto t0 = std::chrono::steady_clock::now();
  code = d.stop(10s);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               t0);
}

}  // namespace

// Issue 15, defect 8: SIGTERM with a 1280x720 pair took 2.9-3.3 s; the documented limit is 2 s.
// The stop waited for the frames being computed, twice (the drain, then the engines' destructors).
TEST(Signals, SigtermWithAnHdPairExitsWithinTwoSeconds) {
  RunningDaemon d("hd", [](const Fixture& f) { return hd_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  std::this_thread::sleep_for(2s);  // frames in flight
  int code = -1;
  const auto took = time_to_exit(d, code);
  EXPECT_EQ(code, 0) << d.log();
  EXPECT_LT(took.count(), 2000) << d.log();
}

// SIGTERM before the daemon is ready (its rig still starting) stops it just as quickly.
TEST(Signals, SigtermDuringStartUp) {
  RunningDaemon d("early", [](const Fixture& f) { return hd_config(f.endpoint); });
  std::this_thread::sleep_for(100ms);
  int code = -1;
  const auto took = time_to_exit(d, code);
  EXPECT_EQ(code, 0) << d.log();
  EXPECT_LT(took.count(), 2000) << d.log();
}

// A storm of SIGHUPs (and SIGINT at the end): every one is a reload of the same file, none
// crashes the daemon or stops its frames.
TEST(Signals, AStormOfSighupsStopsNothing) {
  RunningDaemon d("storm", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  next_frame(sub, 20s);
  for (int i = 0; i < 200; ++i) {
    d.process.signal(SIGHUP);
    std::this_thread::sleep_for(2ms);
  }
  const Count c = count_frames(sub, 2s);
  EXPECT_GE(c.total(), 8) << d.log();
  EXPECT_TRUE(d.process.running());
  d.process.signal(SIGINT);
  EXPECT_EQ(d.process.wait_exit(5s), 0) << d.log();
}

// Issue 15, defect 6: one client with 200k subscriptions took the daemon's RSS from 52 to 253 MB,
// and it stayed there after the client left. ZeroMQ keeps every subscription (about a kilobyte
// each) while its subscriber is connected; the daemon now says when subscribers hold that many,
// and gives the memory back when they leave.
TEST(Subscribers, AClientWithAHundredThousandSubscriptionsLeavesNoMemoryBehind) {
  RunningDaemon d("subscriptions", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  {
    client::Subscriber sub(d.fixture.endpoint);
    next_frame(sub, 20s);
  }
  const long before = rss_kb(d.process.pid());
  long peak = before;
  {
    zmq::context_t context(1);
    zmq::socket_t hoarder(context, zmq::socket_type::sub);
    hoarder.set(zmq::sockopt::sndhwm, 0);  // every subscription goes out
    hoarder.set(zmq::sockopt::linger, 0);
    hoarder.connect(d.fixture.endpoint);
    char topic[32];
    for (int i = 0; i < 100000; ++i) {
      std::snprintf(topic, sizeof topic, "disparity.x%07d", i);
      hoarder.set(zmq::sockopt::subscribe, topic);
    }
    // Until the daemon has taken them all in (its memory stops growing).
    for (int still = 0; still < 3;) {
      std::this_thread::sleep_for(500ms);
      const long now = rss_kb(d.process.pid());
      still = now > peak ? 0 : still + 1;
      peak = std::max(peak, now);
    }
  }
  EXPECT_GT(peak - before, 10 * 1024) << "the subscriptions did not reach the daemon";
  // Gone with the client (a margin for what a running daemon allocates anyway).
  long after = 0;
  EXPECT_TRUE(eventually(
      [&] {
        after = rss_kb(d.process.pid());
        return after - before < 4 * 1024;
      },
      10s))
      << "RSS before " << before << " kB, peak " << peak << " kB, after " << after << " kB\n"
      << d.log();
  EXPECT_NE(d.log().find("subscriptions"), std::string::npos) << d.log();
  EXPECT_EQ(d.stop(), 0) << d.log();
}

namespace {

// Frame i of a stereo image sequence: a texture of its own (hash noise of x, y and i), the right
// view the left one moved 8 pixels left, so a pair of one number has disparity 8 everywhere and a
// pair of two numbers has nothing in common.
void write_textured_pair(const fs::path& dir, int i, int w, int h) {
  std::vector<std::uint8_t> left(static_cast<std::size_t>(w * h)), right(left.size());
  const auto texture = [&](int x, int y) {
    std::uint32_t v = static_cast<std::uint32_t>(x) * 73856093u ^
                      static_cast<std::uint32_t>(y) * 19349663u ^
                      static_cast<std::uint32_t>(i + 1) * 83492791u;
    v ^= v >> 13;
    v *= 0x5bd1e995u;
    return static_cast<std::uint8_t>(v >> 24);
  };
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      left[static_cast<std::size_t>(y * w + x)] = texture(x, y);
      right[static_cast<std::size_t>(y * w + x)] = texture(x + 8, y);
    }
  }
  char name[64];
  std::snprintf(name, sizeof name, "left_%06d.png", i);
  write_png_file((dir / name).string(), left.data(), w, h, 1, 8);
  std::snprintf(name, sizeof name, "right_%06d.png", i);
  write_png_file((dir / name).string(), right.data(), w, h, 1, 8);
}

}  // namespace

// Issue 15, defect 4, through the daemon: images:// with 5 of 30 left frames missing published 20
// of every 30 sets from frames of different times (2-5 % valid pixels) and logged nothing. Now the
// missing numbers are skipped for both cameras, counted as sync drops and logged, and every
// published frame comes from one number of both sequences.
TEST(Sources, AnImageSequenceWithMissingFramesPublishesOnlyMatchedSets) {
  RunningDaemon d("gaps", [](const Fixture& f) {
    const fs::path frames = f.dir / "frames";
    fs::create_directories(frames);
    for (int i = 0; i < 30; ++i) {
      if (i < 10 || i >= 15) {
        write_textured_pair(frames, i, 128, 96);
      } else {  // the right view only
        write_textured_pair(f.dir, i, 128, 96);
        fs::rename(f.dir / ("right_0000" + std::to_string(i) + ".png"),
                   frames / ("right_0000" + std::to_string(i) + ".png"));
      }
    }
    const std::string images = "images://" + frames.string() + "/";
    return "cameras:\n"
           "  - {name: left, source: '" +
           images + "left_%06d.png', width: 128, height: 96, fps: 15}\n" +
           "  - {name: right, source: '" + images +
           "right_%06d.png', width: 128, height: 96, fps: 15}\n" +
           "pairs:\n"
           "  - {name: replay, left: left, right: right, stereo: {max_disparity: 16, levels: 1}, "
           "background: {enabled: false}}\n"
           "publish: {endpoint: '" +
           f.endpoint + "', stats_interval_ms: 500}\n";
  });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(frames_and_stats(d.fixture.endpoint));
  int published = 0, mismatched = 0;
  std::uint64_t sync_drops = 0;
  const auto end = std::chrono::steady_clock::now() + 6s;
  while (std::chrono::steady_clock::now() < end) {
    auto m = sub.receive(200ms);
    if (m && m->stats && !m->stats->pairs.empty()) {
      sync_drops =
          m->stats->pairs[0].drops_total[static_cast<std::size_t>(stats::DropReason::kSync)];
    }
    if (!m || !m->frame) continue;
    const auto& h = m->frame->header();
    ASSERT_TRUE(h.ok()) << h.info.error;
    const auto disp = m->frame->disparity();
    long at_eight = 0;
    for (int y = 0; y < disp.height; ++y) {
      for (int x = 0; x < disp.width - 8; ++x) at_eight += disp(x, y) == 8 * 16;
    }
    // One number: disparity 8 nearly everywhere. Two numbers: textures with nothing in common.
    if (at_eight < (disp.width - 8) * disp.height / 2) ++mismatched;
    ++published;
  }
  EXPECT_GE(published, 30);
  EXPECT_EQ(mismatched, 0) << "of " << published << " frames";
  EXPECT_GE(sync_drops, 5u) << d.log();
  EXPECT_NE(d.log().find("left_000010.png"), std::string::npos) << d.log();
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// A source that dies again and again (test:// that ends after 12 frames): its rig is restarted
// (after 200 ms) and delivers again each time, each failure is logged once (it was logged twice, by
// the rig and by the daemon) and counted in the stats with the camera's name, and the other rig's
// frames go on without a gap.
TEST(Sources, ADyingSourceIsLoggedOnceAndTheOtherRigRunsOn) {
  RunningDaemon d("dying", [](const Fixture& f) {
    std::string cfg = synthetic_config(f.endpoint);
    cfg.replace(cfg.find("rigs:\n"), 6,
                "  - {name: tl, source: 'test://?pattern=ball&num_buffers=12', width: 64, "
                "height: 48, fps: 15}\n"
                "  - {name: tr, source: 'test://?pattern=ball&num_buffers=12', width: 64, "
                "height: 48, fps: 15}\n"
                "rigs:\n"
                "  - {name: test, cameras: [tl, tr], restart: {initial_ms: 200, max_ms: 400}}\n");
    cfg.replace(cfg.find("publish:"), 0,
                "  - {name: test, left: tl, right: tr, stereo: {max_disparity: 16}, "
                "background: {enabled: false}}\n");
    return cfg;
  });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(frames_and_stats(d.fixture.endpoint));
  std::uint64_t errors = 0;
  std::string last_error;
  std::map<std::string, std::vector<std::uint64_t>> sequences;
  const auto end = std::chrono::steady_clock::now() + 8s;
  while (std::chrono::steady_clock::now() < end) {
    auto m = sub.receive(100ms);
    if (!m) continue;
    if (m->frame) {
      sequences[m->frame->header().info.pair].push_back(m->frame->header().info.sequence);
    }
    if (m->stats) {
      for (const auto& p : m->stats->pairs) {
        if (p.pair != "test") continue;
        errors = p.errors_total;
        last_error = p.last_error;
      }
    }
  }
  const int logged = count_of(d.log(), "end of stream");
  EXPECT_GE(errors, 2u) << d.log();
  EXPECT_TRUE(last_error.find("camera 'tl'") != std::string::npos ||
              last_error.find("camera 'tr'") != std::string::npos)
      << last_error;
  EXPECT_GT(sequences["test"].size(), 24u) << "frames from the restarted rig";
  const auto& front = sequences["front"];
  EXPECT_LE(logged, static_cast<int>(errors) + 1) << d.log();
  ASSERT_GT(front.size(), 20u);
  for (std::size_t i = 1; i < front.size(); ++i) EXPECT_EQ(front[i], front[i - 1] + 1);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// Subscribers that connect and leave in a loop, connections that send garbage, and a subscriber
// that reads one frame a second, all at once: the counting subscriber still gets its frames, and
// the daemon neither dies nor grows.
TEST(Subscribers, ChurningHostileAndSlowClientsDisturbNobody) {
  const int port = free_port();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  RunningDaemon d("hostile", [&](const Fixture&) { return synthetic_config(endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber counter(endpoint);
  next_frame(counter, 20s);
  const long rss_before = rss_kb(d.process.pid());
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  clients.emplace_back([&] {  // churn: connect, subscribe, leave
    while (!stop) {
      client::Subscriber s(endpoint);
      s.receive(5ms);
    }
  });
  clients.emplace_back([&] {  // garbage: raw TCP connections that send bytes that are no ZMTP
    std::uint32_t x = 12345;
    while (!stop) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<std::uint16_t>(port));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        char junk[512];
        for (auto& c : junk) c = static_cast<char>(x = x * 1103515245u + 12345u);
        static_cast<void>(::send(fd, junk, sizeof junk, MSG_NOSIGNAL));
      }
      ::close(fd);
      std::this_thread::sleep_for(2ms);
    }
  });
  clients.emplace_back([&] {  // slow: one frame a second
    client::Subscriber s(endpoint);
    while (!stop) {
      s.receive(10ms);
      std::this_thread::sleep_for(1s);
    }
  });
  const Count c = count_frames(counter, 5s);
  stop = true;
  for (auto& t : clients) t.join();
  EXPECT_GE(c.total(), 25) << d.log();  // 8 frames/s: 40 in the window
  EXPECT_LT(c.longest_gap.count(), 1000) << d.log();
  EXPECT_TRUE(d.process.running());
  EXPECT_LT(rss_kb(d.process.pid()) - rss_before, 20 * 1024);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// A camera that stops delivering without an error (a hung USB device): after the rig's stall
// timeout the rig is restarted, the status says which camera and why, and the other rig's frames
// go on.
TEST(Sources, AStalledSourceIsRestartedAndTheStatusSaysWhy) {
  RunningDaemon d("stall", [](const Fixture& f) {
    std::string cfg = synthetic_config(f.endpoint);
    // Live, and silent: an appsrc nobody feeds (no error, no end of stream).
    const std::string stalling =
        "gst://appsrc is-live=true format=time "
        "caps=video/x-raw,format=GRAY8,width=64,height=48,framerate=15/1";
    cfg.replace(cfg.find("rigs:\n"), 6,
                "  - {name: sl, source: '" + stalling + "', width: 64, height: 48, fps: 15}\n" +
                    "  - {name: sr, source: '" + stalling +
                    "', width: 64, height: 48, fps: 15}\n"
                    "rigs:\n"
                    "  - {name: stalling, cameras: [sl, sr], restart: {initial_ms: 5000, "
                    "stall_timeout_ms: 1000}}\n");
    cfg.replace(cfg.find("publish:"), 0,
                "  - {name: stalled, left: sl, right: sr, stereo: {max_disparity: 16}, "
                "background: {enabled: false}}\n");
    return cfg;
  });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  ASSERT_GE(d.notify.wait_for("no frame in 1.0 s after start", 0, 20s), 0)
      << d.notify.last_status() << "\n"
      << d.log();
  EXPECT_NE(d.notify.last_status().find("rig 'stalling' restarting"), std::string::npos)
      << d.notify.last_status();
  Count c = count_frames(sub, 2s);
  EXPECT_GE(c.frames["front"], 8) << d.log();
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// A reload that adds a rig whose camera cannot be opened: the reload applies (a camera that fails
// is not a configuration error), the rig is retried with backoff, the status names the camera,
// and the running pair goes on.
TEST(Reloads, ASourceThatCannotStartIsRetriedAndShown) {
  RunningDaemon d("nostart", [](const Fixture& f) { return synthetic_config(f.endpoint); });
  ASSERT_TRUE(d.ready()) << d.log();
  client::Subscriber sub(d.fixture.endpoint);
  next_frame(sub, 20s);
  std::string cfg = synthetic_config(d.fixture.endpoint);
  cfg.replace(
      cfg.find("rigs:\n"), 6,
      "  - {name: ul, source: 'v4l2:///dev/stereod-no-such-video0', width: 64, height: 48}\n"
      "  - {name: ur, source: 'v4l2:///dev/stereod-no-such-video1', width: 64, height: 48}\n"
      "rigs:\n  - {name: usb, cameras: [ul, ur]}\n");
  cfg.replace(cfg.find("publish:"), 0,
              "  - {name: usb, left: ul, right: ur, stereo: {max_disparity: 16}}\n");
  const std::size_t before = d.notify.messages().size();
  write_text(d.fixture.dir / "new.yaml", cfg);
  fs::rename(d.fixture.dir / "new.yaml", d.fixture.config);
  ASSERT_GE(d.notify.wait_for("rig 'usb' restarting", before, 20s), 0)
      << d.notify.last_status() << "\n"
      << d.log();
  EXPECT_NE(d.notify.last_status().find("stereod-no-such-video"), std::string::npos)
      << d.notify.last_status();
  EXPECT_EQ(d.log().find("reload failed"), std::string::npos) << d.log();
  Count c = count_frames(sub, 2s);
  EXPECT_GE(c.frames["front"], 8) << d.log();
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// A source whose streaming thread is stuck where GStreamer cannot interrupt it (a hung driver; here
// an identity element sleeping 30 s per buffer): stopping its rig waits for that thread, and
// SIGTERM waited with it. The stop now leaves such a rig behind and still exits within 2 s.
TEST(Signals, SigtermWithAStuckSourceExitsWithinTwoSeconds) {
  RunningDaemon d("stuck", [](const Fixture& f) {
    std::string cfg = synthetic_config(f.endpoint);
    const std::string stuck = "gst://videotestsrc is-live=true ! identity sleep-time=30000000";
    cfg.replace(cfg.find("rigs:\n"), 6,
                "  - {name: kl, source: '" + stuck + "', width: 64, height: 48, fps: 15}\n" +
                    "  - {name: kr, source: '" + stuck + "', width: 64, height: 48, fps: 15}\n" +
                    "rigs:\n  - {name: stuck, cameras: [kl, kr]}\n");
    cfg.replace(cfg.find("publish:"), 0,
                "  - {name: stuck, left: kl, right: kr, stereo: {max_disparity: 16}}\n");
    return cfg;
  });
  ASSERT_TRUE(d.ready(30s)) << d.log();
  int code = -1;
  const auto took = time_to_exit(d, code);
  EXPECT_EQ(code, 0) << d.log();
  EXPECT_LT(took.count(), 2000) << d.log();
}

// A pair whose engine cannot finish a frame (here 1920x1080 with 256 disparities on the CPU
// engine: minutes a frame) while its cameras deliver: the status said "0.0 frames/s" and nothing
// else. It now names the pair and how long it has been silent, and the log says it once.
TEST(Engines, APairThatPublishesNothingIsNamedInTheStatus) {
  RunningDaemon d("silent", [](const Fixture& f) {
    return "cameras:\n"
           "  - {name: l, source: 'test://?pattern=snow', width: 1920, height: 1080, fps: 5}\n"
           "  - {name: r, source: 'test://?pattern=snow', width: 1920, height: 1080, fps: 5}\n"
           "pairs:\n"
           "  - {name: slow, left: l, right: r, stereo: {max_disparity: 256, levels: 1}, "
           "background: {enabled: false}}\n"
           "publish: {endpoint: '" +
           f.endpoint + "'}\n";
  });
  ASSERT_TRUE(d.ready(30s)) << d.log();
  ASSERT_GE(d.notify.wait_for("pair 'slow' published nothing for", 0, 30s), 0)
      << d.notify.last_status() << "\n"
      << d.log();
  EXPECT_NE(d.log().find("pair 'slow' has published nothing"), std::string::npos) << d.log();
  int code = -1;
  EXPECT_LT(time_to_exit(d, code).count(), 2000);
  EXPECT_EQ(code, 0) << d.log();
}
