#include "publish/publisher.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <spdlog/spdlog.h>
#include <stdexcept>

#include "publish/curve_keys.hpp"
#include "publish/heap.hpp"
#include "publish/points.hpp"
#include "publish/zmq_payload.hpp"
#include "stereo/params.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::publish {
namespace {

double ms_between(std::int64_t from_ns, std::int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / 1e6;
}

// `frame` names the frame (only built when there is something to say).
template <typename Name, typename T>
void check_image(const Name& frame, const char* image, ImageView<const T> v) {
  if (v.width > kMaxImageSide || v.height > kMaxImageSide || v.stride < v.width ||
      static_cast<std::uint64_t>(v.stride) * sizeof(T) > kMaxStride) {
    throw std::invalid_argument(frame() + image + ": " + std::to_string(v.width) + "x" +
                                std::to_string(v.height) + " with stride " +
                                std::to_string(v.stride) + " is beyond what the protocol carries");
  }
}

// The 1.3 views: each of the disparity's size (color: 3 bytes a pixel).
template <typename Name>
void check_extras(const Name& frame, const PublishedFrame& f) {
  const int w = f.disparity.width, h = f.disparity.height;
  const auto check = [&](const char* image, ImageView<const std::uint8_t> v, int channels) {
    if (v.empty()) return;
    check_image(frame, image, v);
    if (v.width != w * channels || v.height != h) {
      throw std::invalid_argument(frame() + image + ": " + std::to_string(v.width / channels) +
                                  "x" + std::to_string(v.height) + ", the disparity is " +
                                  std::to_string(w) + "x" + std::to_string(h));
    }
  };
  check(": confidence", f.confidence, 1);
  check(": left image (gray)", f.left_gray, 1);
  check(": left image (color)", f.left_color, 3);
  check(": direction", f.direction, 1);
}

// A packed copy of `v` that owns its pixels: `v` and `keep_alive` then point at the copy.
template <typename T>
void take_copy(ImageView<const T>& v, std::shared_ptr<const void>& keep_alive) {
  auto copy = std::make_shared<std::vector<T>>(static_cast<std::size_t>(v.width) * v.height);
  for (int y = 0; y < v.height; ++y) {
    std::memcpy(copy->data() + static_cast<std::size_t>(y) * v.width, v.row(y),
                static_cast<std::size_t>(v.width) * sizeof(T));
  }
  v = ImageView<const T>(copy->data(), v.width, v.height);
  keep_alive = std::move(copy);
}

template <typename T>
PayloadLayout packed_layout(std::string_view name, std::string_view encoding,
                            ImageView<const T> v) {
  PayloadLayout p;
  p.name = std::string(name);
  p.encoding = std::string(encoding);
  p.width = v.width;
  p.height = v.height;
  p.stride = static_cast<std::uint64_t>(v.width) * sizeof(T);  // the wire rows are packed
  return p;
}

}  // namespace

Publisher::Publisher(const PublisherOptions& options, std::shared_ptr<stats::StatsAggregator> stats)
    : stats_interval_ms_(options.stats_interval_ms),
      hwm_(options.hwm),
      queue_per_pair_(std::max(options.queue, 1)),
      pairs_wanted_(std::max(options.pairs, 1)),
      stats_(stats ? std::move(stats) : std::make_shared<stats::StatsAggregator>()),
      outputs_(options.outputs),
      context_(1),
      queue_(static_cast<std::size_t>(queue_per_pair_) *
             static_cast<std::size_t>(std::max(options.pairs, 1))) {
  validate_publisher_options(options);
  check_endpoint_on_this_host(options);
  // Two daemons on one endpoint: ZeroMQ would let the second take over an ipc:// path (and
  // delete the first one's socket when it exits). Refuse instead.
  if (const std::string who = endpoint_in_use(options); !who.empty()) {
    throw std::runtime_error("publish.endpoint = " + resolve_endpoint(options) + ": " + who +
                             "; two daemons cannot share an endpoint: stop the other one or "
                             "choose another endpoint");
  }
  configure_socket(options);
  thread_ = std::thread([this] { run(); });
}

Publisher::~Publisher() {
  stop();
}

void Publisher::configure_socket(const PublisherOptions& o) {
  const std::string endpoint = resolve_endpoint(o);
  // XPUB: a PUB socket that also hands the application its subscribers' (un)subscriptions, every
  // one of them (verboser), so that the publisher knows how many ZeroMQ keeps.
  socket_ = zmq::socket_t(context_, zmq::socket_type::xpub);
  socket_.set(zmq::sockopt::xpub_verboser, true);
  if (!o.curve_server_key.empty()) configure_curve(o);
  pairs_applied_ = std::max(o.pairs, 1);
  socket_.set(zmq::sockopt::sndhwm, socket_hwm(o.hwm, pairs_applied_));
  socket_.set(zmq::sockopt::linger, 0);  // closing never waits for a subscriber
  if (endpoint.find('[') != std::string::npos) socket_.set(zmq::sockopt::ipv6, true);
  try {
    socket_.bind(endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("publish.endpoint = " + endpoint + ": cannot bind (" + e.what() + ")");
  }
  endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  constexpr std::string_view kIpc = "ipc://";
  struct stat st {};
  if (endpoint_.compare(0, kIpc.size(), kIpc) == 0) {
    const std::string path = endpoint_.substr(kIpc.size());
    if (::stat(path.c_str(), &st) == 0) socket_file_ = {path, st.st_dev, st.st_ino};
  }
}

int Publisher::socket_hwm(int hwm, int pairs) {
  const long long total = static_cast<long long>(std::max(hwm, 1)) * std::max(pairs, 1);
  return static_cast<int>(std::min<long long>(total, 1'000'000));
}

void Publisher::set_pairs(int pairs) {
  pairs = std::max(pairs, 1);
  pairs_wanted_ = pairs;
  queue_.set_capacity(static_cast<std::size_t>(queue_per_pair_) * static_cast<std::size_t>(pairs));
}

void Publisher::apply_pairs() {
  const int wanted = pairs_wanted_.load();
  if (wanted == pairs_applied_) return;
  socket_.set(zmq::sockopt::sndhwm, socket_hwm(hwm_, wanted));
  pairs_applied_ = wanted;
}

void Publisher::configure_curve(const PublisherOptions& o) {
  require_curve("publish.curve.server_key");
  CurveCertificate server;
  try {
    server = read_server_certificate(o.curve_server_key);
  } catch (const std::runtime_error& e) {
    throw ParameterError("publish.curve.server_key",
                         "publish.curve.server_key: " + std::string(e.what()), e.what());
  }
  if (!o.curve_clients.empty()) {
    std::vector<std::string> clients;
    try {
      clients = read_public_keys(o.curve_clients);
    } catch (const std::runtime_error& e) {
      throw ParameterError("publish.curve.clients",
                           "publish.curve.clients: " + std::string(e.what()), e.what());
    }
    // Bound before the PUB socket binds, so that no handshake goes unchecked.
    zap_ = std::make_unique<ZapHandler>(context_, clients);
  }
  socket_.set(zmq::sockopt::curve_server, true);
  socket_.set(zmq::sockopt::curve_secretkey, server.secret_key);
  socket_.set(zmq::sockopt::curve_publickey, server.public_key);
  socket_.set(zmq::sockopt::zap_domain, "stereod");
}

void Publisher::remove_socket_file() {
  // libzmq leaves an ipc:// socket file behind. Remove it, but only if it is still the file this
  // publisher bound: a newer instance may have bound the same path since.
  struct stat st {};
  if (!socket_file_.path.empty() && ::stat(socket_file_.path.c_str(), &st) == 0 &&
      st.st_dev == socket_file_.device && st.st_ino == socket_file_.inode) {
    ::unlink(socket_file_.path.c_str());
  }
}

bool Publisher::publish(PublishedFrame frame) {
  check_frame_info(frame.info);
  const auto what = [&] {
    return "frame " + frame.info.pair + "#" + std::to_string(frame.info.sequence);
  };
  Queued item;
  if (frame.info.error.empty()) {
    if (frame.disparity.empty()) throw std::invalid_argument(what() + ": ok but has no disparity");
    check_image(what, ": disparity", frame.disparity);
    if (!frame.mask.empty()) check_image(what, ": mask", frame.mask);
    check_extras(what, frame);
    // Without a keep-alive nothing says how long the pixels stay valid, and the send happens
    // later on another thread: copy them now, before returning.
    if (!frame.disparity_keep_alive) {
      take_copy(frame.disparity, frame.disparity_keep_alive);
      item.disparity_copied = true;
    }
    if (!frame.mask.empty() && !frame.mask_keep_alive) {
      take_copy(frame.mask, frame.mask_keep_alive);
      item.mask_copied = true;
    }
    if (!frame.direction.empty() && !frame.direction_keep_alive) {
      take_copy(frame.direction, frame.direction_keep_alive);
      item.direction_copied = true;
    }
    if (!frame.confidence.empty() && !frame.confidence_keep_alive) {
      take_copy(frame.confidence, frame.confidence_keep_alive);
      item.confidence_copied = true;
    }
    if ((!frame.left_gray.empty() || !frame.left_color.empty()) && !frame.left_keep_alive) {
      // Both views share one keep-alive: copy both into one owner.
      auto gray = frame.left_gray;
      auto color = frame.left_color;
      std::shared_ptr<const void> gray_owner, color_owner;
      if (!gray.empty()) take_copy(gray, gray_owner);
      if (!color.empty()) take_copy(color, color_owner);
      frame.left_gray = gray;
      frame.left_color = color;
      frame.left_keep_alive =
          std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
              std::move(gray_owner), std::move(color_owner));
      item.left_copied = true;
    }
  }
  item.frame = std::move(frame);
  std::optional<Queued> dropped = queue_.push(std::move(item));
  if (!dropped) return true;
  stats_->record_drop(dropped->frame.info.pair, stats::DropReason::kSend);
  return false;  // `dropped` releases its keep-alives here, outside the queue's lock
}

void Publisher::set_outputs(const PublisherOutputs& outputs) {
  std::lock_guard<std::mutex> lock(outputs_mutex_);
  outputs_ = outputs;
}

void Publisher::stop() {
  if (stopped_) return;
  stopped_ = true;
  queue_.close();
  thread_.join();
  socket_.close();
  zap_.reset();
  context_.close();  // returns once ZeroMQ has freed every message
  remove_socket_file();
}

stats::PublisherStats Publisher::counters() const {
  stats::PublisherStats s;
  s.queued = queue_.size();
  s.queue_capacity = queue_.capacity();
  s.frames_sent_total = frames_sent_;
  s.zero_copy_payloads_total = zero_copy_payloads_;
  s.copied_payloads_total = copied_payloads_;
  return s;
}

void Publisher::run() {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::milliseconds(stats_interval_ms_);
  auto next_stats = Clock::now() + interval;
  for (;;) {
    // Awake at least every kSubscriptionPoll to take in what subscribers sent.
    const auto deadline =
        std::min(stats_interval_ms_ > 0 ? next_stats : Clock::now() + std::chrono::hours(1),
                 Clock::now() + kSubscriptionPoll);
    std::optional<Queued> item = queue_.pop_until(deadline);
    take_subscriptions();
    apply_pairs();
    if (item) {
      send_frame(*item);
    } else if (queue_.closed()) {
      return;
    }
    if (stats_interval_ms_ > 0 && Clock::now() >= next_stats) {
      send_stats();
      next_stats += interval;
      // After a stall, start afresh rather than send a burst of catch-up snapshots.
      if (next_stats < Clock::now()) next_stats = Clock::now() + interval;
    }
  }
}

void Publisher::take_subscriptions() {
  using Clock = std::chrono::steady_clock;
  // Bounded per call, so that a flood of subscriptions cannot hold frames up.
  for (int i = 0; i < 20000; ++i) {
    zmq::message_t m;
    if (!socket_.recv(m, zmq::recv_flags::dontwait)) break;
    if (m.size() == 0) continue;
    const auto kind = static_cast<const std::uint8_t*>(m.data())[0];
    if (kind == 1) {
      ++subscriptions_;
    } else if (kind == 0) {
      if (subscriptions_ > 0) --subscriptions_;
      ++unsubscribed_since_release_;
      last_unsubscribe_ = Clock::now();
    }
  }
  const std::uint64_t held = subscriptions_;
  if (held > kManySubscriptions && !warned_subscriptions_) {
    warned_subscriptions_ = true;
    spdlog::warn(
        "subscribers hold {} subscriptions (a client subscribing to ever more topics?): ZeroMQ "
        "keeps each, about a kilobyte, until its subscriber disconnects",
        held);
  } else if (held < kManySubscriptions / 2) {
    warned_subscriptions_ = false;
  }
  // Many subscriptions gone, and the stream of them over: ZeroMQ has freed their memory, give it
  // back to the system (glibc would keep it).
  if (unsubscribed_since_release_ >= 1000 &&
      Clock::now() - last_unsubscribe_ > std::chrono::seconds(1)) {
    unsubscribed_since_release_ = 0;
    release_free_heap();
    spdlog::info("subscriptions given up; {} remain", held);
  }
}

template <typename T>
zmq::message_t Publisher::payload_message(ImageView<const T> v,
                                          const std::shared_ptr<const void>& keep_alive, bool owned,
                                          bool copied_before) {
  const std::size_t row = static_cast<std::size_t>(v.width) * sizeof(T);
  if (owned && v.stride == v.width) {
    ++(copied_before ? copied_payloads_ : zero_copy_payloads_);
    return borrow_message(v.data, row * static_cast<std::size_t>(v.height), keep_alive);
  }
  // The caller's buffer (an engine slot), or padded rows: the message gets its own packed copy.
  ++copied_payloads_;
  zmq::message_t msg(row * static_cast<std::size_t>(v.height));
  auto* out = static_cast<std::uint8_t*>(msg.data());
  for (int y = 0; y < v.height; ++y) std::memcpy(out + row * y, v.row(y), row);
  return msg;
}

void Publisher::send_frame(Queued& item) {
  PublishedFrame& frame = item.frame;
  FrameHeader h;
  h.info = std::move(frame.info);
  FrameInfo& info = h.info;

  std::vector<zmq::message_t> parts;
  const std::string topic = frame_topic(info.pair);
  parts.emplace_back(topic.data(), topic.size());
  parts.emplace_back();  // the header, once the payload layouts are known
  if (h.ok()) {
    h.payloads.push_back(packed_layout(kDisparityPayload, kDisparityEncoding, frame.disparity));
    h.payloads.back().invalid = kDisparityInvalid;
    parts.push_back(payload_message(frame.disparity, frame.disparity_keep_alive,
                                    item.disparity_copied, item.disparity_copied));
    const PublisherOutputs outputs = frame.outputs ? *frame.outputs : [this] {
      std::lock_guard<std::mutex> lock(outputs_mutex_);
      return outputs_;
    }();
    if (outputs.mask && !frame.mask.empty()) {
      h.payloads.push_back(packed_layout(kMaskPayload, kMaskEncoding, frame.mask));
      parts.push_back(
          payload_message(frame.mask, frame.mask_keep_alive, item.mask_copied, item.mask_copied));
    }
    if (outputs.depth && info.calibration.usable()) {
      DepthTable& table = depth_tables_[info.pair];
      table.set_calibration(info.calibration);
      const int w = frame.disparity.width, hgt = frame.disparity.height;
      auto depth = std::make_shared<std::vector<std::uint16_t>>(static_cast<std::size_t>(w) * hgt);
      table.convert(frame.disparity, ImageView<std::uint16_t>(depth->data(), w, hgt));
      const ImageView<const std::uint16_t> view(depth->data(), w, hgt);
      h.payloads.push_back(packed_layout(kDepthPayload, kDepthEncoding, view));
      h.payloads.back().invalid = kDepthInvalid;
      parts.push_back(payload_message(view, depth, true, false));
    }
    add_v13_payloads(item, outputs, h, parts);
  }
  // Stamped once the payloads are ready (depth included): what remains, encoding the header and
  // handing the parts to ZeroMQ, takes microseconds.
  h.publish_ns = realtime_ns();
  if (info.ready_ns > 0) {
    info.latency.push_back({"publish", ms_between(info.ready_ns, h.publish_ns)});
  }
  if (info.capture_ns > 0) {
    info.latency.push_back({"total", ms_between(info.capture_ns, h.publish_ns)});
  }
  const std::string header = encode_header(h);
  parts[1] = zmq::message_t(header.data(), header.size());
  // The caller's buffers go back now (an engine slot is free again); what the messages borrowed
  // is the publisher's own.
  frame.disparity_keep_alive.reset();
  frame.mask_keep_alive.reset();
  frame.direction_keep_alive.reset();
  frame.confidence_keep_alive.reset();
  frame.left_keep_alive.reset();

  if (!send_parts(parts, info.pair)) return;
  ++frames_sent_;
  if (h.ok()) {
    stats_->record_frame(info.pair, info.latency);
  } else {
    stats_->record_error(info.pair, info.error);
  }
}

void Publisher::add_v13_payloads(Queued& item, const PublisherOutputs& outputs, FrameHeader& h,
                                 std::vector<zmq::message_t>& parts) {
  PublishedFrame& frame = item.frame;
  const FrameInfo& info = h.info;
  const int w = frame.disparity.width, hgt = frame.disparity.height;
  if (outputs.confidence && !frame.confidence.empty()) {
    h.payloads.push_back(packed_layout(kConfidencePayload, kConfidenceEncoding, frame.confidence));
    h.payloads.back().invalid = kConfidenceInvalid;
    parts.push_back(payload_message(frame.confidence, frame.confidence_keep_alive,
                                    item.confidence_copied, item.confidence_copied));
  }
  if (outputs.left != LeftOutput::kNone) {
    const bool color = outputs.left == LeftOutput::kColor && !frame.left_color.empty();
    if (color) {
      PayloadLayout p = packed_layout(kLeftPayload, kRgbEncoding, frame.left_color);
      p.width = w;  // pixels, not bytes
      h.payloads.push_back(p);
      parts.push_back(payload_message(frame.left_color, frame.left_keep_alive, item.left_copied,
                                      item.left_copied));
    } else if (!frame.left_gray.empty()) {
      h.payloads.push_back(packed_layout(kLeftPayload, kGrayEncoding, frame.left_gray));
      parts.push_back(payload_message(frame.left_gray, frame.left_keep_alive, item.left_copied,
                                      item.left_copied));
    } else if (!frame.left_color.empty()) {
      // Gray asked for, only color at hand: its BT.601 luma, as the engines match.
      auto gray = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(w) * hgt);
      for (int y = 0; y < hgt; ++y) {
        const std::uint8_t* c = frame.left_color.row(y);
        for (int x = 0; x < w; ++x) {
          (*gray)[static_cast<std::size_t>(y) * w + x] =
              luma_bt601(c[3 * x], c[3 * x + 1], c[3 * x + 2]);
        }
      }
      const ImageView<const std::uint8_t> view(gray->data(), w, hgt);
      h.payloads.push_back(packed_layout(kLeftPayload, kGrayEncoding, view));
      parts.push_back(payload_message(view, gray, true, false));
    }
  }
  if (outputs.points != PointsOutput::kNone && info.calibration.usable()) {
    const bool color = outputs.points == PointsOutput::kXyzRgb &&
                       (!frame.left_color.empty() || !frame.left_gray.empty());
    const int channels = color ? 4 : 3;
    auto points = std::make_shared<std::vector<float>>(static_cast<std::size_t>(w) * hgt *
                                                       static_cast<std::size_t>(channels));
    const ImageView<float> out(points->data(), w * channels, hgt);
    disparity_to_points(frame.disparity, info.calibration, out, channels, frame.left_gray,
                        frame.left_color);
    const ImageView<const float> view = out;
    PayloadLayout p =
        packed_layout(kPointsPayload, color ? kColorPointsEncoding : kPointsEncoding, view);
    p.width = w;
    h.payloads.push_back(p);
    parts.push_back(payload_message(view, points, true, false));
  }
  if (outputs.direction && !frame.direction.empty()) {
    h.payloads.push_back(packed_layout(kDirectionPayload, kDirectionEncoding, frame.direction));
    parts.push_back(payload_message(frame.direction, frame.direction_keep_alive,
                                    item.direction_copied, item.direction_copied));
  }
}

void Publisher::send_stats() {
  stats::StatsSnapshot s = stats_->snapshot();
  s.publisher = counters();
  const std::string json = stats::encode_stats(s);
  std::vector<zmq::message_t> parts;
  parts.emplace_back(kStatsTopic.data(), kStatsTopic.size());
  parts.emplace_back(json.data(), json.size());
  send_parts(parts, "");
}

bool Publisher::send_parts(std::vector<zmq::message_t>& parts, const std::string& pair) {
  try {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto flags = i + 1 < parts.size() ? zmq::send_flags::sndmore | zmq::send_flags::dontwait
                                              : zmq::send_flags::dontwait;
      // A PUB socket never refuses for a slow subscriber (it drops that subscriber's copy), so
      // a refusal here is the socket failing; count it and go on with the next frame.
      if (!socket_.send(parts[i], flags)) throw zmq::error_t();
    }
    return true;
  } catch (const zmq::error_t&) {
    if (!pair.empty()) stats_->record_drop(pair, stats::DropReason::kSend);
    return false;
  }
}

}  // namespace stereod::publish
