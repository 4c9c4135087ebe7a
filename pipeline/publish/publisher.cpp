#include "publish/publisher.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "publish/curve_keys.hpp"
#include "publish/zmq_payload.hpp"
#include "stereo/params.hpp"

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
      send_mask_(options.outputs.mask),
      send_depth_(options.outputs.depth),
      send_direction_(options.outputs.direction),
      context_(1),
      queue_(static_cast<std::size_t>(queue_per_pair_) *
             static_cast<std::size_t>(std::max(options.pairs, 1))) {
  validate_publisher_options(options);
  configure_socket(options);
  thread_ = std::thread([this] { run(); });
}

Publisher::~Publisher() {
  stop();
}

void Publisher::configure_socket(const PublisherOptions& o) {
  const std::string endpoint = resolve_endpoint(o);
  socket_ = zmq::socket_t(context_, zmq::socket_type::pub);
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
    server = read_certificate(o.curve_server_key);
  } catch (const std::runtime_error& e) {
    throw ParameterError("publish.curve.server_key",
                         "publish.curve.server_key: " + std::string(e.what()));
  }
  if (server.secret_key.empty()) {
    throw ParameterError("publish.curve.server_key",
                         "publish.curve.server_key = " + o.curve_server_key +
                             ": a public certificate; the server needs its secret one "
                             "(NAME.key_secret)");
  }
  if (!o.curve_clients.empty()) {
    std::vector<std::string> clients;
    try {
      clients = read_public_keys(o.curve_clients);
    } catch (const std::runtime_error& e) {
      throw ParameterError("publish.curve.clients",
                           "publish.curve.clients: " + std::string(e.what()));
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
    if (!frame.direction.empty()) check_image(what, ": direction", frame.direction);
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
  }
  item.frame = std::move(frame);
  std::optional<Queued> dropped = queue_.push(std::move(item));
  if (!dropped) return true;
  stats_->record_drop(dropped->frame.info.pair, stats::DropReason::kSend);
  return false;  // `dropped` releases its keep-alives here, outside the queue's lock
}

void Publisher::set_outputs(const PublisherOutputs& outputs) {
  send_mask_ = outputs.mask;
  send_depth_ = outputs.depth;
  send_direction_ = outputs.direction;
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
    const auto deadline =
        stats_interval_ms_ > 0 ? next_stats : Clock::now() + std::chrono::hours(1);
    std::optional<Queued> item = queue_.pop_until(deadline);
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

template <typename T>
zmq::message_t Publisher::payload_message(ImageView<const T> v,
                                          std::shared_ptr<const void> keep_alive,
                                          bool copied_before) {
  const std::size_t row = static_cast<std::size_t>(v.width) * sizeof(T);
  if (v.stride == v.width) {
    ++(copied_before ? copied_payloads_ : zero_copy_payloads_);
    return borrow_message(v.data, row * static_cast<std::size_t>(v.height), std::move(keep_alive));
  }
  // Padded rows: the wire carries packed ones, so copy them (keep_alive holds the source until
  // the copy is done).
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
    parts.push_back(payload_message(frame.disparity, std::move(frame.disparity_keep_alive),
                                    item.disparity_copied));
    if (send_mask_ && !frame.mask.empty()) {
      h.payloads.push_back(packed_layout(kMaskPayload, kMaskEncoding, frame.mask));
      parts.push_back(
          payload_message(frame.mask, std::move(frame.mask_keep_alive), item.mask_copied));
    }
    if (send_depth_ && info.calibration.usable()) {
      DepthTable& table = depth_tables_[info.pair];
      table.set_calibration(info.calibration);
      const int w = frame.disparity.width, hgt = frame.disparity.height;
      auto depth = std::make_shared<std::vector<std::uint16_t>>(static_cast<std::size_t>(w) * hgt);
      table.convert(frame.disparity, ImageView<std::uint16_t>(depth->data(), w, hgt));
      const ImageView<const std::uint16_t> view(depth->data(), w, hgt);
      h.payloads.push_back(packed_layout(kDepthPayload, kDepthEncoding, view));
      h.payloads.back().invalid = kDepthInvalid;
      parts.push_back(payload_message(view, std::move(depth), false));
    }
    if (send_direction_ && !frame.direction.empty()) {
      h.payloads.push_back(packed_layout(kDirectionPayload, kDirectionEncoding, frame.direction));
      parts.push_back(payload_message(frame.direction, std::move(frame.direction_keep_alive),
                                      item.direction_copied));
    }
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
  // The payloads' keep-alives now live in the messages alone; a mask that is not sent is let go
  // here rather than after the send.
  frame.mask_keep_alive.reset();
  frame.direction_keep_alive.reset();

  if (!send_parts(parts, info.pair)) return;
  ++frames_sent_;
  if (h.ok()) {
    stats_->record_frame(info.pair, info.latency);
  } else {
    stats_->record_error(info.pair, info.error);
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
