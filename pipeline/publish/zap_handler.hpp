// A ZeroMQ authentication (ZAP, RFC 27) handler that admits CURVE clients whose public key is in a
// fixed set. libzmq asks the handler bound at inproc://zeromq.zap.01 in the socket's context about
// every CURVE handshake; without one, any client that knows the server's public key is admitted.
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

namespace stereod::publish {

class ZapHandler {
 public:
  // Binds the handler in `context` (before the server socket binds, so no handshake is missed)
  // and answers requests on its own thread until destroyed. Keys are 32-byte binary strings.
  ZapHandler(zmq::context_t& context, const std::vector<std::string>& allowed_keys);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  std::uint64_t admitted() const { return admitted_; }
  std::uint64_t refused() const { return refused_; }

 private:
  void run();
  void answer();

  zmq::socket_t socket_;
  std::set<std::string> allowed_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> admitted_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::thread thread_;
};

}  // namespace stereod::publish
