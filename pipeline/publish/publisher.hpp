// The Publisher (docs/ARCHITECTURE.md "Data flow", docs/PROTOCOL.md): one thread owns the ZeroMQ
// PUB socket and sends each frame as one multipart message, plus the stats topic once per interval.
// Frames arrive through a bounded queue that drops the oldest waiting frame when full, so publish()
// never waits; sends never block either (small high-water mark, non-blocking sends): a slow
// subscriber loses frames and sees the gap in the sequence numbers, the daemon carries on. The
// caller's pixels are copied into messages the publisher owns before they go to ZeroMQ, so what a
// stalled subscriber keeps queued is never an engine's buffer.
//
// publish(), set_outputs(), counters() and stats() may be called from any thread.
//
// Who records what in the StatsAggregator: the Publisher records every frame it sends (with its
// stage latencies), every failed frame (as an error) and its own drops ("send"); the daemon
// records sync and engine-busy drops and source errors.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "publish/depth.hpp"
#include "publish/frame_queue.hpp"
#include "publish/published_frame.hpp"
#include "publish/publisher_options.hpp"
#include "publish/zap_handler.hpp"
#include "stats/aggregator.hpp"

namespace stereod::publish {

class Publisher {
 public:
  // Validates the options, reads the CURVE certificates, binds the socket and starts the thread.
  // Throws ParameterError naming the option (bad value, an endpoint this host cannot bind,
  // unreadable or malformed key file) or std::runtime_error (another process serves the endpoint;
  // the bind failed: the endpoint and ZeroMQ's reason; no CURVE in libzmq).
  // `stats` may be shared with the daemon; nullptr makes a private one.
  explicit Publisher(const PublisherOptions& options,
                     std::shared_ptr<stats::StatsAggregator> stats = nullptr);
  ~Publisher();  // stop()
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Queues a frame for sending and returns at once (a view without keep-alive is copied first:
  // nothing else says how long its pixels stay valid). Returns false when a frame was dropped: the
  // oldest waiting one because the queue was full, or this one after stop(); the drop is counted
  // ("send") for that frame's pair. Throws std::invalid_argument naming the frame and the problem
  // when the frame is inconsistent (see check_frame_info; an ok frame without disparity; images
  // larger than the protocol allows).
  bool publish(PublishedFrame frame);

  // Which optional payloads go out for frames that do not say (PublishedFrame::outputs), from the
  // next frame the thread sends (a live reload may change these; the endpoint, hwm, queue and
  // CURVE need a new Publisher).
  void set_outputs(const PublisherOutputs& outputs);

  // How many pairs share the socket now (a reload added or removed some): the queue holds
  // queue x pairs frames from now on, and the per-subscriber limit becomes hwm x pairs, applied
  // by the publisher thread before its next send (libzmq 4.2 and newer apply it to connected
  // subscribers too, older ones to new connections).
  void set_pairs(int pairs);

  // Sends the frames already queued, then closes the socket (and removes an ipc:// socket file it
  // created). Every keep-alive has been released when it returns. Idempotent.
  void stop();

  // The endpoint as bound, e.g. tcp://127.0.0.1:41234 when the port was 0 or *.
  const std::string& endpoint() const { return endpoint_; }
  // Subscriptions the connected subscribers hold now (ZeroMQ keeps each while its subscriber is
  // connected; a client can make any number).
  std::uint64_t subscriptions() const { return subscriptions_; }
  static constexpr std::uint64_t kManySubscriptions = 10000;  // logged, and in the daemon's status
  stats::StatsAggregator& stats() { return *stats_; }
  stats::PublisherStats counters() const;

 private:
  // A frame waiting to be sent, and which of its views publish() had to copy.
  struct Queued {
    PublishedFrame frame;
    bool disparity_copied = false;
    bool mask_copied = false;
    bool confidence_copied = false;
    bool left_copied = false;
    bool direction_copied = false;
  };

  void configure_socket(const PublisherOptions& options);
  void configure_curve(const PublisherOptions& options);
  void remove_socket_file();
  void run();
  // Reads the (un)subscriptions waiting on the socket: counts them, warns when subscribers hold
  // very many, and gives the heap back once many are gone.
  void take_subscriptions();
  static constexpr auto kSubscriptionPoll = std::chrono::milliseconds(100);
  void send_frame(Queued& item);
  // The optional payloads 1.3 added (confidence, left image, points), after mask and depth.
  void add_v13_payloads(Queued& item, const PublisherOutputs& outputs, FrameHeader& h,
                        std::vector<zmq::message_t>& parts);
  void send_stats();
  // Sends every part; false (and the drop counted for `pair`) when ZeroMQ refused one.
  bool send_parts(std::vector<zmq::message_t>& parts, const std::string& pair);
  // The payload's message. `owned`: `view` is the publisher's own buffer (publish()'s copy, the
  // depth it computed): sent without a copy when its rows are packed, the message then owning
  // a reference to `keep_alive`. Otherwise the bytes are copied: a caller's buffer (an engine
  // slot) is never lent to ZeroMQ, where a subscriber that stops reading would keep it for as
  // long as its queue holds the message. copied_before: publish() made `view` a copy already
  // (for the counters).
  template <typename T>
  zmq::message_t payload_message(ImageView<const T> view,
                                 const std::shared_ptr<const void>& keep_alive, bool owned,
                                 bool copied_before);

  static int socket_hwm(int hwm, int pairs);
  void apply_pairs();

  const int stats_interval_ms_;
  const int hwm_;
  const int queue_per_pair_;
  std::atomic<int> pairs_wanted_;
  int pairs_applied_ = 0;  // publisher thread only (and the constructor)
  std::shared_ptr<stats::StatsAggregator> stats_;
  mutable std::mutex outputs_mutex_;
  PublisherOutputs outputs_;  // for frames that carry none
  // Destroyed in reverse order: socket, then the ZAP handler, then the context (whose termination
  // waits until ZeroMQ has freed every message, and so released every keep-alive).
  zmq::context_t context_;
  std::unique_ptr<ZapHandler> zap_;
  zmq::socket_t socket_;
  std::string endpoint_;
  struct SocketFile {  // the ipc:// socket file bound, and its identity
    std::string path;
    dev_t device = 0;
    ino_t inode = 0;
  } socket_file_;
  DropOldestQueue<Queued> queue_;
  std::map<std::string, DepthTable> depth_tables_;  // per pair; publisher thread only
  std::atomic<std::uint64_t> frames_sent_{0};
  std::atomic<std::uint64_t> zero_copy_payloads_{0};
  std::atomic<std::uint64_t> copied_payloads_{0};
  std::atomic<std::uint64_t> subscriptions_{0};
  std::uint64_t unsubscribed_since_release_ = 0;            // publisher thread only
  std::chrono::steady_clock::time_point last_unsubscribe_;  // publisher thread only
  bool warned_subscriptions_ = false;                       // publisher thread only
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace stereod::publish
