#include "publish/zap_handler.hpp"

#include <chrono>

namespace stereod::publish {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
// How long the thread waits for a request before it looks at the stop flag again.
constexpr long kPollMs = 50;

std::string part_text(const zmq::message_t& m) {
  return std::string(static_cast<const char*>(m.data()), m.size());
}

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& context, const std::vector<std::string>& allowed_keys)
    : socket_(context, zmq::socket_type::rep), allowed_(allowed_keys.begin(), allowed_keys.end()) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(kZapEndpoint);
  // The socket moves to the handler thread here; thread creation orders the hand-over.
  thread_ = std::thread([this] { run(); });
}

ZapHandler::~ZapHandler() {
  stop_ = true;
  thread_.join();
}

void ZapHandler::run() {
  while (!stop_) {
    zmq_pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, kPollMs) <= 0) continue;  // timeout, or EINTR: look at stop_ again
    try {
      answer();
    } catch (const zmq::error_t&) {
      // Only context termination can fail here, and the destructor stops the thread first.
    }
  }
}

void ZapHandler::answer() {
  // A request (RFC 27): version, request id, domain, address, routing id, mechanism, credentials.
  std::vector<zmq::message_t> request;
  do {
    zmq::message_t part;
    if (!socket_.recv(part, zmq::recv_flags::none)) return;
    request.push_back(std::move(part));
  } while (request.back().more() && request.size() < 16);
  while (request.back().more()) {  // drain an oversized request so the REP socket stays in step
    zmq::message_t rest;
    if (!socket_.recv(rest, zmq::recv_flags::none)) return;
    if (!rest.more()) break;
  }

  const bool well_formed = request.size() >= 7 && part_text(request[0]) == "1.0";
  const bool curve = well_formed && part_text(request[5]) == "CURVE";
  const bool allowed = curve && allowed_.count(part_text(request[6])) != 0;
  (allowed ? admitted_ : refused_)++;

  const std::string request_id = request.size() > 1 ? part_text(request[1]) : std::string();
  const char* status = allowed ? "200" : (well_formed ? "400" : "500");
  const char* text = allowed ? "OK" : (curve ? "client key not allowed" : "CURVE required");
  const std::string parts[] = {"1.0", request_id, status, text, "", ""};
  for (std::size_t i = 0; i < 6; ++i) {
    // A blocking send on REP: it only fails when the context ends, which throws.
    static_cast<void>(socket_.send(zmq::buffer(parts[i]),
                                   i < 5 ? zmq::send_flags::sndmore : zmq::send_flags::none));
  }
}

}  // namespace stereod::publish
