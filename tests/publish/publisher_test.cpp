// The Publisher end to end through the C++ client: what arrives, payload copies and their
// keep-alives, slow, stalled and late subscribers, restarts, stats, and frames it refuses.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include "publish/depth.hpp"
#include "publish/frame_queue.hpp"
#include "publish_fixtures.hpp"

using namespace stereod;
using namespace stereod::publish;
using namespace std::chrono_literals;

namespace {

PublisherOptions local_options(const std::string& tag) {
  PublisherOptions o;
  o.endpoint = test::unique_ipc(tag);
  o.stats_interval_ms = 0;
  return o;
}

client::SubscriberOptions subscriber_for(const Publisher& pub) {
  client::SubscriberOptions o;
  o.endpoint = pub.endpoint();
  return o;
}

// Waits until `done()` or the deadline; true when done.
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds timeout = 10s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

std::uint64_t send_drops(Publisher& pub, const std::string& pair) {
  const auto s = pub.stats().snapshot();
  for (const auto& p : s.pairs) {
    if (p.pair == pair) return p.drops_total[static_cast<int>(stats::DropReason::kSend)];
  }
  return 0;
}

}  // namespace

TEST(DropOldestQueue, DropsTheOldestWhenFullAndRefusesOnceClosed) {
  DropOldestQueue<int> q(2);
  EXPECT_FALSE(q.push(1));
  EXPECT_FALSE(q.push(2));
  EXPECT_EQ(q.push(3), 1);  // the oldest makes room
  EXPECT_EQ(q.pop_until(std::chrono::steady_clock::now()), 2);
  q.close();
  EXPECT_EQ(q.push(4), 4);                                      // refused: handed back
  EXPECT_EQ(q.pop_until(std::chrono::steady_clock::now()), 3);  // what was queued still comes out
  EXPECT_FALSE(q.pop_until(std::chrono::steady_clock::now() + 1h));  // closed: no wait
}

TEST(Publisher, SendsHeaderAndEveryPayload) {
  PublisherOptions o = local_options("payloads");
  o.outputs = {true, true};
  Publisher pub(o);
  client::Subscriber sub(subscriber_for(pub));
  std::uint64_t next = 100;
  const std::optional<client::Frame> got = test::publish_until_received(pub, sub, "front", next);
  ASSERT_TRUE(got);
  const FrameHeader& h = got->header();
  const std::uint64_t seq = h.info.sequence;
  const FrameInfo expected = test::full_info("front", seq);
  EXPECT_EQ(h.info.pair, "front");
  EXPECT_EQ(h.info.capture_ns, expected.capture_ns);
  EXPECT_EQ(h.info.cameras, expected.cameras);
  EXPECT_EQ(h.info.calibration, expected.calibration);
  EXPECT_EQ(h.info.config_generation, 7u);
  EXPECT_EQ(h.info.engine, "cpu");
  EXPECT_TRUE(h.info.background);
  EXPECT_GE(h.publish_ns, h.info.ready_ns);
  // The daemon's stages, then the publisher's own two.
  ASSERT_EQ(h.info.latency.size(), expected.latency.size() + 2);
  EXPECT_EQ(h.info.latency[0], expected.latency[0]);
  EXPECT_EQ(h.info.latency[expected.latency.size()].stage, "publish");
  EXPECT_EQ(h.info.latency.back().stage, "total");
  EXPECT_NEAR(h.info.latency.back().ms, (h.publish_ns - h.info.capture_ns) / 1e6, 1e-6);

  ASSERT_EQ(got->disparity().width, 16);
  EXPECT_TRUE(test::image_matches(got->disparity(),
                                  [&](int x, int y) { return test::pattern_value(seq, x, y); }));
  EXPECT_TRUE(
      test::image_matches(got->mask(), [&](int x, int y) { return test::mask_value(seq, x, y); }));
  // depth = f * B / (d - doffs), in millimetres, 0 where there is none.
  const DepthCalibration& c = expected.calibration;
  EXPECT_TRUE(test::image_matches(got->depth(), [&](int x, int y) -> std::uint16_t {
    const std::uint16_t v = test::pattern_value(seq, x, y);
    const double d = v / 16.0 - c.doffs_px;
    if (v == 0xFFFF || d <= 0) return 0;
    const double mm = std::round(1000 * c.focal_px * c.baseline_m / d);
    return mm >= 1 && mm <= 65535 ? static_cast<std::uint16_t>(mm) : 0;
  }));
  EXPECT_EQ(got->payload("mask").size(), 16u * 8u);
}

TEST(Publisher, DepthTableMatchesTheFormula) {
  DepthCalibration c{1000, 0.1, 2.0};
  EXPECT_EQ(depth_mm(0xFFFF, c), 0);
  EXPECT_EQ(depth_mm(32, c), 0);                        // d = 2 = doffs: infinitely far
  EXPECT_EQ(depth_mm(16 * 12, c), 10000);               // 100 / (12 - 2) m
  EXPECT_EQ(depth_mm(16 * 3, c), 0);                    // 100 m does not fit 16 bits of mm
  EXPECT_EQ(depth_mm(16 * 12, DepthCalibration{}), 0);  // no calibration, no depth
  DepthTable t;
  t.set_calibration(c);
  std::vector<std::uint16_t> in{0, 32, 16 * 12, 0xFFFF, 1000}, out(5);
  t.convert({in.data(), 5, 1}, {out.data(), 5, 1});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i], depth_mm(in[i], c));
}

TEST(Publisher, OutputsFollowTheOptionsAndChangeLive) {
  PublisherOptions o = local_options("outputs");
  Publisher pub(o);
  client::Subscriber sub(subscriber_for(pub));
  std::uint64_t seq = 0;
  const auto before = test::publish_until_received(pub, sub, "front", seq);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->header().payloads.size(), 1u);  // disparity only by default
  EXPECT_TRUE(before->mask().empty());
  pub.set_outputs({true, false});
  // Frames queued before the change may still arrive without a mask.
  bool masked = false, depth = false;
  test::publish_until(pub, "front", seq, [&] {
    if (auto f = test::next_frame(sub, 20ms)) {
      masked = !f->mask().empty();
      depth = !f->depth().empty();
    }
    return masked;
  });
  EXPECT_TRUE(masked);
  EXPECT_FALSE(depth);
}

TEST(Publisher, PacksStridedRowsAndCopiesWhatHasNoKeepAlive) {
  Publisher pub(local_options("strided"));
  client::Subscriber sub(subscriber_for(pub));
  // A 10x4 view into a buffer with 13-pixel rows.
  auto buffer = std::make_shared<std::vector<std::uint16_t>>(13 * 4, 0xBEEF);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 10; ++x) (*buffer)[y * 13 + x] = static_cast<std::uint16_t>(y * 100 + x);
  }
  std::optional<client::Frame> got;
  std::uint64_t seq = 0;
  ASSERT_TRUE(eventually([&] {
    PublishedFrame f;
    f.info = test::full_info("front", seq++);
    f.disparity = ImageView<const std::uint16_t>(buffer->data(), 10, 4, 13);
    f.disparity_keep_alive = buffer;
    pub.publish(std::move(f));
    got = test::next_frame(sub, 20ms);
    return got.has_value();
  }));
  EXPECT_EQ(got->header().payloads[0].stride, 20u);  // packed on the wire
  EXPECT_TRUE(test::image_matches(
      got->disparity(), [](int x, int y) { return static_cast<std::uint16_t>(y * 100 + x); }));
  EXPECT_EQ(pub.counters().zero_copy_payloads_total, 0u);
  EXPECT_GE(pub.counters().copied_payloads_total, 1u);

  // A view without a keep-alive: publish() copies it, so the buffer need only outlive the call.
  const auto copied = pub.counters().copied_payloads_total;
  const std::uint64_t unowned = seq;
  {
    PublishedFrame f = test::pattern_frame("front", unowned, 16, 8);
    std::shared_ptr<const void> caller_owned = std::move(f.disparity_keep_alive);
    f.mask = {};
    pub.publish(std::move(f));
  }  // the buffer is gone here, before the publisher thread sends the frame
  std::optional<client::Frame> copy;
  ASSERT_TRUE(eventually([&] {
    copy = test::next_frame(sub, 20ms);
    return copy && copy->header().info.sequence == unowned;
  }));
  EXPECT_TRUE(test::image_matches(
      copy->disparity(), [&](int x, int y) { return test::pattern_value(unowned, x, y); }));
  EXPECT_EQ(pub.counters().copied_payloads_total, copied + 1);
}

// The caller's buffers (engine slots) are copied into the messages and released as soon as each
// frame is sent; the depth the publisher computes is its own and goes without a copy.
TEST(Publisher, CallersBuffersAreCopiedAndReleasedOnceSent) {
  PublisherOptions o = local_options("copies");
  o.outputs.mask = true;
  std::vector<std::weak_ptr<std::vector<std::uint16_t>>> disparities;
  std::vector<std::weak_ptr<std::vector<std::uint8_t>>> masks;
  std::uint64_t received = 0;
  {
    Publisher pub(o);
    client::Subscriber sub(subscriber_for(pub));
    std::uint64_t seq = 0;
    while (received < 20 && seq < 5000) {
      PublishedFrame f = test::pattern_frame("front", seq++, 64, 48);
      disparities.push_back(std::static_pointer_cast<std::vector<std::uint16_t>>(
          std::const_pointer_cast<void>(f.disparity_keep_alive)));
      masks.push_back(std::static_pointer_cast<std::vector<std::uint8_t>>(
          std::const_pointer_cast<void>(f.mask_keep_alive)));
      pub.publish(std::move(f));
      if (auto got = test::next_frame(sub, 2ms)) {
        ++received;
        const auto s = got->header().info.sequence;
        EXPECT_TRUE(test::image_matches(
            got->disparity(), [&](int x, int y) { return test::pattern_value(s, x, y); }));
      }
    }
    ASSERT_EQ(received, 20u);
    ASSERT_TRUE(eventually([&] {
      const auto c = pub.counters();
      return c.frames_sent_total + send_drops(pub, "front") == seq;
    }));
    const auto c = pub.counters();
    EXPECT_EQ(c.zero_copy_payloads_total, 0u);
    EXPECT_EQ(c.copied_payloads_total, 2 * c.frames_sent_total);
    // Buffers of sent frames come back without stopping.
    EXPECT_TRUE(
        eventually([&] { return disparities.front().expired() && masks.front().expired(); }));
  }
  // And after stop(), every one of them.
  for (const auto& w : disparities) EXPECT_TRUE(w.expired());
  for (const auto& w : masks) EXPECT_TRUE(w.expired());
}

// A subscriber that stops reading (a paused process) must not keep the buffers of the frames
// queued for it: they are the engine's slots, and a paused stereod-sub holding them stopped the
// frames of every other client (issue 15, defect 1).
TEST(Publisher, AStalledSubscriberHoldsNoKeepAlive) {
  PublisherOptions o = local_options("stalled");
  o.outputs.mask = true;
  Publisher pub(o);
  // Subscribed and never reading; its own queue holds one message, so once the kernel's socket
  // buffers are full ZeroMQ keeps the next frames queued on the publisher's side.
  zmq::context_t context(1);
  zmq::socket_t stalled(context, zmq::socket_type::sub);
  stalled.set(zmq::sockopt::rcvhwm, 1);
  stalled.set(zmq::sockopt::rcvbuf, 4096);
  stalled.set(zmq::sockopt::linger, 0);
  stalled.set(zmq::sockopt::subscribe, "");
  stalled.connect(pub.endpoint());
  client::Subscriber active(subscriber_for(pub));
  std::uint64_t seq = 0;
  ASSERT_TRUE(test::publish_until_received(pub, active, "front", seq));
  std::vector<std::weak_ptr<const void>> buffers;
  std::uint64_t received = 0;
  for (int i = 0; i < 60; ++i) {
    PublishedFrame f = test::pattern_frame("front", seq++, 160, 120);
    buffers.push_back(f.disparity_keep_alive);
    buffers.push_back(f.mask_keep_alive);
    pub.publish(std::move(f));
    if (test::next_frame(active, 20ms)) ++received;
  }
  EXPECT_GT(received, 30u) << "the reading subscriber must go on receiving";
  // Every buffer comes back once its frame is sent, while the stalled subscriber still holds its
  // queued messages.
  EXPECT_TRUE(eventually(
      [&] {
        return std::all_of(buffers.begin(), buffers.end(),
                           [](const std::weak_ptr<const void>& w) { return w.expired(); });
      },
      5s));
}

TEST(Publisher, SlowSubscriberLosesFramesButDoesNotSlowThePublisher) {
  PublisherOptions o = local_options("slow");
  o.hwm = 2;
  o.outputs.mask = true;
  Publisher pub(o);
  client::SubscriberOptions so = subscriber_for(pub);
  so.rcvhwm = 1;
  client::Subscriber slow(so);
  // Make sure the subscription is in place before the burst.
  std::uint64_t seq = 0;
  ASSERT_TRUE(test::publish_until_received(pub, slow, "front", seq));
  while (slow.receive(50ms)) {
  }

  std::atomic<bool> done{false};
  std::vector<std::uint64_t> seen;
  std::thread reader([&] {
    while (!done) {
      if (auto got = test::next_frame(slow, 20ms)) {
        seen.push_back(got->header().info.sequence);
        std::this_thread::sleep_for(30ms);  // a subscriber far slower than the stream
      }
    }
  });
  const std::uint64_t first = seq;
  constexpr std::uint64_t kFrames = 200;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < kFrames; ++i) {
    pub.publish(test::pattern_frame("front", seq++, 320, 240));
    std::this_thread::sleep_for(1ms);
  }
  const bool all_sent = eventually(
      [&] { return pub.counters().frames_sent_total + send_drops(pub, "front") >= seq; }, 20s);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::this_thread::sleep_for(300ms);
  done = true;
  reader.join();

  EXPECT_TRUE(all_sent);
  // At 30 ms a frame, waiting for this subscriber would take 6 s; the publisher is not held up
  // (a generous bound: this checks "never blocks", not speed).
  EXPECT_LT(elapsed, 4s);
  std::vector<std::uint64_t> burst;
  for (auto s : seen) {
    if (s >= first) burst.push_back(s);
  }
  ASSERT_FALSE(burst.empty());
  client::SequenceTracker tracker;
  for (auto s : burst) tracker.next("front", s);
  EXPECT_GT(tracker.lost_total(), 0u);  // the losses show as gaps in the sequence
  EXPECT_LT(burst.size(), kFrames);
  EXPECT_EQ(burst.size() + tracker.lost_total(), burst.back() - burst.front() + 1);
}

// Rigs running at one rate finish their frames together, so every pair's frame reaches the socket
// at once. A subscriber that keeps up on average must not lose frames to that burst: the socket
// buffers hwm frames per pair (found on the GPU: 8 pairs at 30 fps lost 22 % of their frames to
// a per-socket limit of 4).
int received_from_a_burst(int pairs_declared) {
  constexpr int kPairs = 8, kRounds = 2;
  PublisherOptions o = local_options("burst" + std::to_string(pairs_declared));
  o.hwm = 4;
  o.pairs = pairs_declared;
  Publisher pub(o);
  client::SubscriberOptions so = subscriber_for(pub);
  so.rcvhwm = 4;
  client::Subscriber sub(so);
  std::uint64_t warm = 0;
  if (!test::publish_until_received(pub, sub, "p0", warm)) return -1;
  while (sub.receive(std::chrono::milliseconds(50))) {
  }
  // The burst, while the subscriber is busy elsewhere; frames as large as a 640x480 pair's.
  for (int r = 0; r < kRounds; ++r) {
    for (int p = 0; p < kPairs; ++p) {
      pub.publish(test::pattern_frame("p" + std::to_string(p), 1000 + r, 640, 480));
    }
  }
  eventually([&] { return pub.counters().frames_sent_total >= warm + kPairs * kRounds; }, 10s);
  std::this_thread::sleep_for(200ms);
  int received = 0;
  while (auto f = test::next_frame(sub, 300ms)) {
    if (f->header().info.sequence >= 1000) ++received;
  }
  return received;
}

TEST(Publisher, OneFrameFromEveryPairAtOnceIsNotLost) {
  const int with_pairs = received_from_a_burst(8);
  EXPECT_EQ(with_pairs, 16) << "hwm 4 per pair, 8 pairs: the burst of 16 frames fits";
  // The same burst through a socket sized for one pair does lose frames: this is what the test
  // guards against.
  const int one_pair = received_from_a_burst(1);
  EXPECT_GE(one_pair, 0);
  EXPECT_LT(one_pair, 16);
  std::printf("burst of 16 frames: %d received with hwm x 8 pairs, %d with hwm alone\n", with_pairs,
              one_pair);
}

TEST(Publisher, QueueGrowsWithThePairs) {
  PublisherOptions o = local_options("queue");
  o.queue = 3;
  o.pairs = 2;
  Publisher pub(o);
  EXPECT_EQ(pub.counters().queue_capacity, 6u);
  pub.set_pairs(5);
  EXPECT_EQ(pub.counters().queue_capacity, 15u);
}

TEST(Publisher, LateAndReconnectingSubscribersGetFramesAgain) {
  const std::string endpoint = test::unique_ipc("restart");
  PublisherOptions o = local_options("restart");
  o.endpoint = endpoint;
  client::SubscriberOptions so;
  so.endpoint = endpoint;
  std::uint64_t seq = 1000;
  {
    Publisher pub(o);
    for (int i = 0; i < 20; ++i) pub.publish(test::pattern_frame("front", seq++, 16, 8));
    // A subscriber that connects after frames have gone out.
    auto late = std::make_unique<client::Subscriber>(so);
    ASSERT_TRUE(test::publish_until_received(pub, *late, "front", seq));
    // A new subscriber in place of the old one.
    late.reset();
    client::Subscriber again(so);
    ASSERT_TRUE(test::publish_until_received(pub, again, "front", seq));
  }
  // The daemon restarts on the same endpoint while a subscriber stays connected.
  client::Subscriber stays(so);
  client::SequenceTracker tracker;
  {
    Publisher pub(o);
    seq = 5000;
    const auto got = test::publish_until_received(pub, stays, "front", seq);
    ASSERT_TRUE(got);
    tracker.next("front", got->header().info.sequence);
  }
  {
    Publisher pub(o);  // rebinds the same ipc path
    seq = 0;
    const auto got = test::publish_until_received(pub, stays, "front", seq);
    ASSERT_TRUE(got) << "no frame after the publisher came back";
    EXPECT_TRUE(tracker.next("front", got->header().info.sequence).restart);
  }
}

TEST(Publisher, PairPrefixFilter) {
  Publisher pub(local_options("filter"));
  client::SubscriberOptions so = subscriber_for(pub);
  so.pairs = {"rear"};
  client::Subscriber sub(so);
  int rear = 0, other = 0;
  std::uint64_t seq = 0;
  ASSERT_TRUE(eventually([&] {
    pub.publish(test::pattern_frame("front", seq, 8, 4));
    pub.publish(test::pattern_frame("rear_left", seq++, 8, 4));
    while (auto got = test::next_frame(sub, 5ms)) {
      (got->header().info.pair == "rear_left" ? rear : other)++;
    }
    return rear >= 5;
  }));
  EXPECT_EQ(other, 0);
}

TEST(Publisher, FailedFramesArriveWithTheirErrorAndCountAsErrors) {
  Publisher pub(local_options("error"));
  client::Subscriber sub(subscriber_for(pub));
  std::optional<client::Frame> got;
  std::uint64_t seq = 0;
  ASSERT_TRUE(eventually([&] {
    PublishedFrame f;
    f.info = test::full_info("front", seq++);
    f.info.error = "engine: parameter out of range";
    pub.publish(std::move(f));
    return (got = test::next_frame(sub, 20ms)).has_value();
  }));
  EXPECT_FALSE(got->header().ok());
  EXPECT_EQ(got->header().info.error, "engine: parameter out of range");
  EXPECT_TRUE(got->disparity().empty());
  // The publisher counts a frame once it is sent, so a subscriber may hold it a moment before the
  // count: wait for the count (regression: read at once, this failed now and then under load).
  stats::StatsSnapshot s;
  ASSERT_TRUE(eventually([&] {
    s = pub.stats().snapshot();
    return s.pairs.size() == 1 && s.pairs[0].errors_total >= 1;
  }));
  EXPECT_EQ(s.pairs[0].last_error, "engine: parameter out of range");
  EXPECT_EQ(s.pairs[0].frames_total, 0u);
}

TEST(Publisher, RefusesInconsistentFramesWithAClearError) {
  Publisher pub(local_options("refuse"));
  PublishedFrame no_pixels;
  no_pixels.info = test::full_info("front", 1);
  try {
    pub.publish(no_pixels);
    ADD_FAILURE() << "an ok frame without disparity was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("frame front#1: ok but has no disparity"),
              std::string::npos)
        << e.what();
  }
  PublishedFrame bad = test::pattern_frame("front", 2, 4, 4);
  bad.info.latency.push_back({"engine", 1.0});  // a second "engine" stage
  EXPECT_THROW(pub.publish(bad), std::invalid_argument);
  PublishedFrame huge = test::pattern_frame("front", 3, 4, 4);
  huge.disparity.width = 1 << 16;
  EXPECT_THROW(pub.publish(huge), std::invalid_argument);
  PublishedFrame narrow = test::pattern_frame("front", 4, 4, 4);
  narrow.mask.stride = 2;  // rows overlap
  EXPECT_THROW(pub.publish(narrow), std::invalid_argument);
}

TEST(Publisher, AfterStopFramesAreDroppedAndCounted) {
  Publisher pub(local_options("stopped"));
  pub.stop();
  pub.stop();  // idempotent
  EXPECT_FALSE(pub.publish(test::pattern_frame("front", 1, 4, 4)));
  EXPECT_EQ(send_drops(pub, "front"), 1u);
}

TEST(Publisher, StatsTopicCarriesRatesDropsAndLatencies) {
  PublisherOptions o = local_options("stats");
  o.stats_interval_ms = 100;
  auto aggregator = std::make_shared<stats::StatsAggregator>();
  aggregator->add_pair("rear");
  Publisher pub(o, aggregator);
  client::SubscriberOptions so = subscriber_for(pub);
  so.pairs.clear();
  so.stats = true;
  client::Subscriber sub(so);
  aggregator->record_drop("rear", stats::DropReason::kEngineBusy, 4);
  std::optional<stats::StatsSnapshot> snap;
  std::uint64_t seq = 0;
  ASSERT_TRUE(eventually([&] {
    pub.publish(test::pattern_frame("front", seq++, 8, 4));
    auto msg = sub.receive(5ms);
    EXPECT_FALSE(msg && msg->frame) << "a frame reached a stats-only subscriber";
    if (msg && msg->stats) {
      for (const auto& p : msg->stats->pairs) {
        if (p.pair == "front" && p.frames > 0) snap = msg->stats;
      }
    }
    return snap.has_value();
  }));
  ASSERT_EQ(snap->pairs.size(), 2u);
  const auto& front = snap->pairs[0];
  EXPECT_EQ(front.pair, "front");
  EXPECT_GT(front.fps, 0);
  bool has_total = false;
  for (const auto& st : front.latency)
    has_total = has_total || (st.stage == "total" && st.latency.count > 0);
  EXPECT_TRUE(has_total);
  EXPECT_EQ(snap->pairs[1].drops_total[static_cast<int>(stats::DropReason::kEngineBusy)], 4u);
  EXPECT_EQ(snap->publisher.queue_capacity, 16u);
  EXPECT_GT(snap->publisher.frames_sent_total, 0u);
}

TEST(Publisher, RemovesItsIpcSocketFileButNotANewerOne) {
  const PublisherOptions o = local_options("file");
  const std::string path = o.endpoint.substr(std::string("ipc://").size());
  {
    Publisher pub(o);
    EXPECT_TRUE(std::filesystem::exists(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "libzmq leaves the file; stop() removes it";
  // A second publisher on a path another one serves is refused (issue 15, defect 9: it used to
  // take the path over, and delete the first one's socket file when it stopped).
  auto first = std::make_unique<Publisher>(o);
  try {
    Publisher second(o);
    ADD_FAILURE() << "a second publisher bound a served path";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("being served by another process"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  first.reset();
  // A socket file nobody serves any more (a daemon that was killed) is taken over.
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof(address.sun_path) - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ::close(fd);  // the file stays, with no listener
  }
  Publisher again(o);
  EXPECT_TRUE(std::filesystem::exists(path));
}

// A trinocular pair's direction payload: sent (copied when it has no keep-alive) when
// outputs.direction is on, listed in the header as "direction" / "direction8"; not sent when off.
TEST(Publisher, DirectionPayloadFollowsItsOption) {
  for (bool on : {true, false}) {
    PublisherOptions o = local_options(on ? "direction-on" : "direction-off");
    o.outputs.direction = on;
    Publisher pub(o);
    client::Subscriber sub(subscriber_for(pub));
    std::optional<client::Frame> got;
    std::uint64_t seq = 0;
    ASSERT_TRUE(eventually([&] {
      PublishedFrame f = test::pattern_frame("front", seq, 16, 8);
      f.mask = {};
      std::vector<std::uint8_t> direction(16 * 8);
      for (std::size_t i = 0; i < direction.size(); ++i) {
        direction[i] = static_cast<std::uint8_t>((i + seq) % 3);
      }
      f.direction = ImageView<const std::uint8_t>(direction.data(), 16, 8);
      pub.publish(std::move(f));  // copied: `direction` is gone after this scope
      ++seq;
      got = test::next_frame(sub, 20ms);
      return got.has_value();
    }));
    const auto& payloads = got->header().payloads;
    const std::string_view bytes = got->payload("direction");
    if (!on) {
      EXPECT_TRUE(bytes.empty());
      EXPECT_EQ(payloads.size(), 1u);  // the disparity alone
      continue;
    }
    ASSERT_EQ(payloads.size(), 2u);
    EXPECT_EQ(payloads[1].name, "direction");
    EXPECT_EQ(payloads[1].encoding, "direction8");
    ASSERT_EQ(bytes.size(), 16u * 8u);
    const std::uint64_t s = got->header().info.sequence;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      ASSERT_EQ(static_cast<std::uint8_t>(bytes[i]), (i + s) % 3) << i;
    }
  }
}
