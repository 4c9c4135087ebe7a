#include "stereod_client.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "publish/curve_keys.hpp"

namespace stereod::client {
namespace {

// More parts than any message has (a frame has at most 19: topic, header, disparity and the 16
// payloads a header may list): a longer message is refused without holding all of it.
constexpr std::size_t kMaxParts = 32;

std::string_view bytes_of(const zmq::message_t& m) {
  return {static_cast<const char*>(m.data()), m.size()};
}

void set_curve(zmq::socket_t& s, const SubscriberOptions& o) {
  publish::require_curve("server key");
  const publish::CurveCertificate server = publish::read_certificate(o.server_key);
  publish::CurveCertificate client;
  if (!o.client_key.empty()) {
    client = publish::read_certificate(o.client_key);
    if (client.secret_key.empty()) {
      throw std::runtime_error(o.client_key +
                               ": a public certificate; the client needs its secret one");
    }
  } else {
    char pub[41] = {}, sec[41] = {};
    if (zmq_curve_keypair(pub, sec) != 0) throw std::runtime_error("zmq_curve_keypair failed");
    client.public_key = publish::z85_decode_key(std::string_view(pub, 40));
    client.secret_key = publish::z85_decode_key(std::string_view(sec, 40));
  }
  s.set(zmq::sockopt::curve_serverkey, server.public_key);
  s.set(zmq::sockopt::curve_publickey, client.public_key);
  s.set(zmq::sockopt::curve_secretkey, client.secret_key);
}

}  // namespace

std::string_view Frame::header_json() const {
  return bytes_of(storage_->parts[1]);
}

std::string_view Frame::payload(std::string_view name) const {
  const auto& d = storage_->decoded;
  for (std::size_t i = 0; i < d.header.payloads.size(); ++i) {
    if (d.header.payloads[i].name == name) return d.payload_bytes[i];
  }
  return {};
}

double Frame::depth_m(int x, int y) const {
  const auto d = disparity();
  if (x < 0 || y < 0 || x >= d.width || y >= d.height || d(x, y) == publish::kDisparityInvalid) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return header().info.calibration.depth_m(d(x, y) / 16.0);
}

Frame Frame::decode(std::vector<zmq::message_t> parts) {
  Frame f;
  f.storage_ = std::make_unique<Storage>();
  Storage& s = *f.storage_;
  s.parts = std::move(parts);  // never moved again: small parts live inside the message objects
  std::vector<std::string_view> views;
  for (std::size_t i = 0; i < s.parts.size(); ++i) {
    std::string_view b = bytes_of(s.parts[i]);
    if (i >= 2 && publish::needs_realignment(b.data())) {
      auto& copy = s.realigned.emplace_back((b.size() + 3) / 4);
      std::memcpy(copy.data(), b.data(), b.size());
      b = std::string_view(reinterpret_cast<const char*>(copy.data()), b.size());
    }
    views.push_back(b);
  }
  s.decoded = publish::decode_frame(views);
  return f;
}

Subscriber::Subscriber(const SubscriberOptions& o)
    : context_(1), socket_(context_, zmq::socket_type::sub) {
  socket_.set(zmq::sockopt::rcvhwm, o.rcvhwm);
  socket_.set(zmq::sockopt::linger, 0);
  if (!o.server_key.empty()) set_curve(socket_, o);
  for (const auto& p : o.pairs) socket_.set(zmq::sockopt::subscribe, publish::frame_topic(p));
  if (o.stats) socket_.set(zmq::sockopt::subscribe, std::string(publish::kStatsTopic));
  try {
    socket_.connect(o.endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(o.endpoint + ": cannot connect (" + e.what() + ")");
  }
}

Subscriber::Subscriber(const std::string& endpoint)
    : Subscriber([&] {
        SubscriberOptions o;
        o.endpoint = endpoint;
        return o;
      }()) {}

std::optional<Received> Subscriber::receive(std::chrono::milliseconds timeout) {
  zmq_pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&item, 1, static_cast<long>(timeout.count())) <= 0) return std::nullopt;
  std::vector<zmq::message_t> parts;
  bool more = true;
  while (more) {  // all parts of one message are there once the first is
    zmq::message_t m;
    if (!socket_.recv(m, zmq::recv_flags::dontwait)) return std::nullopt;
    more = m.more();
    if (parts.size() < kMaxParts) parts.push_back(std::move(m));
  }
  if (parts.size() >= kMaxParts) {
    throw ProtocolError("message: more than " + std::to_string(kMaxParts - 1) +
                        " parts, no stereod message has that many");
  }
  Received r;
  r.topic = std::string(bytes_of(parts[0]));
  if (r.topic == publish::kStatsTopic) {
    if (parts.size() != 2) {
      throw ProtocolError("stats message: " + std::to_string(parts.size()) +
                          " parts, expected 2 (topic, JSON)");
    }
    r.stats = stats::decode_stats(bytes_of(parts[1]));
  } else {
    r.frame = Frame::decode(std::move(parts));
  }
  return r;
}

SequenceTracker::Step SequenceTracker::next(const std::string& pair, std::uint64_t sequence) {
  Step s;
  const auto it = last_.find(pair);
  if (it == last_.end()) {
    s.first = true;
  } else if (sequence <= it->second) {
    s.restart = true;
  } else {
    s.lost = sequence - it->second - 1;
    lost_total_ += s.lost;
  }
  last_[pair] = sequence;
  return s;
}

}  // namespace stereod::client
