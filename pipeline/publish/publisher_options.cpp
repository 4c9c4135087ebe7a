#include "publish/publisher_options.hpp"

#include <sys/un.h>

#include "stereo/params.hpp"

namespace stereod::publish {
namespace {

constexpr std::string_view kIpc = "ipc://";
constexpr std::string_view kTcp = "tcp://";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

[[noreturn]] void reject(const std::string& key, const std::string& value, const std::string& why) {
  throw ParameterError(key, key + " = " + value + ": " + why);
}

struct TcpAddress {
  std::string host;  // as written, brackets kept for IPv6
  std::string port;
};

TcpAddress split_tcp(const std::string& endpoint) {
  const std::string rest = endpoint.substr(kTcp.size());
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || (rest[0] == '[' && rest.find(']') > colon)) {
    reject("publish.endpoint", endpoint, "expected tcp://HOST:PORT (e.g. tcp://127.0.0.1:5555)");
  }
  return {rest.substr(0, colon), rest.substr(colon + 1)};
}

bool every_interface(const std::string& host) {
  return host == "*" || host == "0.0.0.0" || host == "[::]" || host == "::" || host == "[*]";
}

void check_port(const std::string& endpoint, const std::string& port) {
  if (port == "*") return;
  bool digits = !port.empty() && port.size() <= 5;
  for (const char c : port) digits = digits && c >= '0' && c <= '9';
  if (!digits || std::stol(port) > 65535) {
    reject("publish.endpoint", endpoint,
           "port \"" + port + "\" is not a number in 0..65535 (0 or * picks a free port)");
  }
}

}  // namespace

std::string resolve_endpoint(const PublisherOptions& o) {
  const std::string& e = o.endpoint;
  if (e.empty()) return default_endpoint();
  if (starts_with(e, kIpc)) {
    const std::string path = e.substr(kIpc.size());
    if (path.empty()) reject("publish.endpoint", e, "expected ipc://PATH, the path is empty");
    // The path must fit sockaddr_un::sun_path with its terminating zero.
    constexpr std::size_t kMaxPath = sizeof(sockaddr_un{}.sun_path) - 1;
    if (path.size() > kMaxPath) {
      reject("publish.endpoint", e,
             "the socket path has " + std::to_string(path.size()) + " characters, at most " +
                 std::to_string(kMaxPath) + " fit a Unix socket address");
    }
    return e;
  }
  if (starts_with(e, kTcp)) {
    TcpAddress a = split_tcp(e);
    check_port(e, a.port);
    if (a.host.empty()) a.host = "127.0.0.1";
    if (every_interface(a.host) && !o.bind_all) {
      reject("publish.endpoint", e,
             "binds every network interface; set publish.bind_all: true to allow that (and "
             "consider publish.curve), or name an address such as 127.0.0.1");
    }
    return std::string(kTcp) + a.host + ":" + a.port;
  }
  reject("publish.endpoint", e, "expected ipc://PATH or tcp://HOST:PORT");
}

void validate_publisher_options(const PublisherOptions& o) {
  resolve_endpoint(o);
  if (o.hwm < 1 || o.hwm > 1000) {
    reject("publish.hwm", std::to_string(o.hwm), "must be between 1 and 1000 frames");
  }
  if (o.queue < 1 || o.queue > 1024) {
    reject("publish.queue", std::to_string(o.queue), "must be between 1 and 1024 frames");
  }
  if (o.stats_interval_ms < 0 || o.stats_interval_ms > 3600000) {
    reject("publish.stats_interval_ms", std::to_string(o.stats_interval_ms),
           "must be between 0 (off) and 3600000");
  }
  if (!o.curve_clients.empty() && o.curve_server_key.empty()) {
    reject("publish.curve.clients", o.curve_clients,
           "needs publish.curve.server_key (clients are checked only when CURVE is on)");
  }
}

std::vector<std::string> publisher_warnings(const PublisherOptions& o) {
  std::vector<std::string> out;
  const std::string e = resolve_endpoint(o);
  if (starts_with(e, kTcp) && every_interface(split_tcp(e).host) && o.curve_server_key.empty()) {
    out.push_back("publish.endpoint = " + e +
                  " serves every network interface without CURVE: anyone who can reach this "
                  "host can read the depth stream (set publish.curve.server_key)");
  }
  return out;
}

}  // namespace stereod::publish
