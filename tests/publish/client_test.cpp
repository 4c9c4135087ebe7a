// The C++ client against hand-made messages on a plain PUB socket: malformed ones give a
// ProtocolError and the stream goes on; and the zero-copy message mechanism on its own.
#include <gtest/gtest.h>

#include <thread>

#include "publish/zmq_payload.hpp"
#include "publish_fixtures.hpp"

using namespace stereod;
using namespace stereod::publish;
using namespace std::chrono_literals;

namespace {

using Parts = std::vector<std::string>;

class RawPublisher {
 public:
  RawPublisher() : socket_(context_, zmq::socket_type::pub) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  }
  void send(const Parts& parts) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      zmq::message_t m(parts[i].data(), parts[i].size());
      static_cast<void>(
          socket_.send(m, i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none));
    }
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::string endpoint_;
};

Parts valid_parts(std::uint64_t seq) {
  FrameHeader h;
  h.info = test::full_info("front", seq);
  h.payloads.push_back({"disparity", "disp16q4", 4, 2, 8, kDisparityInvalid});
  std::string payload(16, '\0');
  for (int i = 0; i < 8; ++i) payload[2 * i] = static_cast<char>(i);
  return {frame_topic("front"), encode_header(h), payload};
}

// Sends `bad` then a valid frame, until the client reports the error and then gets the frame.
std::string error_then_frame(RawPublisher& pub, client::Subscriber& sub, const Parts& bad) {
  std::string error;
  for (int attempt = 0; attempt < 200; ++attempt) {
    pub.send(bad);
    pub.send(valid_parts(static_cast<std::uint64_t>(attempt)));
    for (int i = 0; i < 2; ++i) {
      try {
        auto msg = sub.receive(20ms);
        if (msg && msg->frame && !error.empty()) return error;
      } catch (const ProtocolError& e) {
        error = e.what();
      }
    }
  }
  return "no error seen: " + error;
}

}  // namespace

TEST(Client, MalformedMessagesGiveAClearErrorAndTheStreamGoesOn) {
  RawPublisher pub;
  client::SubscriberOptions so;
  so.endpoint = pub.endpoint();
  client::Subscriber sub(so);
  const Parts good = valid_parts(0);

  Parts v2 = good;
  v2[1] = R"({"version":{"major":2,"minor":0}})";
  EXPECT_NE(error_then_frame(pub, sub, v2).find("protocol 2.0 is not supported"),
            std::string::npos);
  EXPECT_NE(error_then_frame(pub, sub, {good[0]}).find("1 part(s)"), std::string::npos);
  EXPECT_NE(error_then_frame(pub, sub, {good[0], good[1]}).find("2 parts, the header names 1"),
            std::string::npos);
  Parts truncated = good;
  truncated[2].resize(7);
  EXPECT_NE(error_then_frame(pub, sub, truncated).find("part 3 (disparity): 7 bytes"),
            std::string::npos);
  Parts bad_json = good;
  bad_json[1] = "{\"version\":";
  EXPECT_NE(error_then_frame(pub, sub, bad_json).find("header: not valid JSON"), std::string::npos);
  Parts bad_size = good;
  Json wider = Json::parse(good[1]);
  wider["width"] = 5;
  bad_size[1] = wider.dump();
  EXPECT_NE(error_then_frame(pub, sub, bad_size).find("header.stride: 8 bytes does not fit"),
            std::string::npos);
  Parts too_many(40, good[0]);
  EXPECT_NE(error_then_frame(pub, sub, too_many).find("more than 31 parts"), std::string::npos);
  so.stats = true;
  client::Subscriber with_stats(so);
  EXPECT_NE(error_then_frame(pub, with_stats, {"stats", "{}"}).find("stats.version: missing"),
            std::string::npos);
  EXPECT_NE(error_then_frame(pub, with_stats, {"stats"}).find("stats message: 1 parts"),
            std::string::npos);
}

TEST(Client, SmallPayloadsAtOddAddressesAreRealigned) {
  // ZeroMQ stores parts of up to 33 bytes inside the message object and may deliver small parts
  // at any address; whatever it does, the views must be aligned and correct.
  RawPublisher pub;
  client::SubscriberOptions so;
  so.endpoint = pub.endpoint();
  client::Subscriber sub(so);
  std::optional<client::Frame> got;
  for (int i = 0; i < 200 && !got; ++i) {
    pub.send(valid_parts(1));
    got = test::next_frame(sub, 20ms);
  }
  ASSERT_TRUE(got);
  client::Frame moved = std::move(*got);  // views survive a move
  const auto d = moved.disparity();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(d.data) % 2, 0u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(d(i % 4, i / 4), i);
}

TEST(ZeroCopy, BorrowedMessageIsTheBufferItselfAndOwnsAReference) {
  auto buffer = std::make_shared<std::vector<std::uint16_t>>(1000, 7);
  std::weak_ptr<std::vector<std::uint16_t>> watch = buffer;
  zmq::context_t ctx;
  zmq::socket_t out(ctx, zmq::socket_type::pair), in(ctx, zmq::socket_type::pair);
  out.bind("inproc://zero-copy");
  in.connect("inproc://zero-copy");
  {
    zmq::message_t m = borrow_message(buffer->data(), 2000, buffer);
    EXPECT_EQ(m.data(), static_cast<void*>(buffer->data()));  // no copy was made
    EXPECT_EQ(buffer.use_count(), 2);                         // the message holds a reference
    ASSERT_TRUE(out.send(m, zmq::send_flags::none));
  }
  buffer.reset();
  EXPECT_FALSE(watch.expired()) << "released while the message is still in flight";
  zmq::message_t received;
  ASSERT_TRUE(in.recv(received, zmq::recv_flags::none));
  // inproc hands over the same message: the receiver reads the very buffer that was sent.
  {
    const auto alive = watch.lock();
    ASSERT_TRUE(alive);
    EXPECT_EQ(received.data(), static_cast<const void*>(alive->data()));
  }
  received = zmq::message_t();  // the last reference: ZeroMQ's free callback releases the buffer
  EXPECT_TRUE(watch.expired());
}
