#include "publish/publisher_options.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "stereo/params.hpp"

namespace stereod::publish {
namespace {

constexpr std::string_view kIpc = "ipc://";
constexpr std::string_view kTcp = "tcp://";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

[[noreturn]] void reject(const std::string& key, const std::string& value, const std::string& why) {
  throw ParameterError::bad_value(key, value, why);
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
    // ZeroMQ binds addresses and interface names, not host names: localhost is the loopback.
    if (a.host.empty() || a.host == "localhost") a.host = "127.0.0.1";
    if (every_interface(a.host) && !o.bind_all) {
      reject("publish.endpoint", e,
             "binds every network interface; set publish.bind_all: true to allow that (and "
             "consider publish.curve), or name an address such as 127.0.0.1");
    }
    return std::string(kTcp) + a.host + ":" + a.port;
  }
  reject("publish.endpoint", e, "expected ipc://PATH or tcp://HOST:PORT");
}

void check_endpoint_on_this_host(const PublisherOptions& o) {
  const std::string e = resolve_endpoint(o);
  if (starts_with(e, kIpc)) {
    const std::string path = e.substr(kIpc.size());
    const std::string folder = path.rfind('/') == std::string::npos
                                   ? std::string(".")
                                   : path.substr(0, std::max<std::size_t>(path.rfind('/'), 1));
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      reject("publish.endpoint", e, "no folder " + folder + " for the socket");
    }
    if (::lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode)) {
      reject("publish.endpoint", e,
             path + " exists and is not a socket (binding would delete it); choose another path");
    }
    return;
  }
  const TcpAddress a = split_tcp(e);
  if (every_interface(a.host)) return;
  const bool v6 = a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']';
  const std::string literal = v6 ? a.host.substr(1, a.host.size() - 2) : a.host;
  sockaddr_storage address{};
  socklen_t length = 0;
  if (!v6 && ::inet_pton(AF_INET, literal.c_str(),
                         &reinterpret_cast<sockaddr_in*>(&address)->sin_addr) == 1) {
    address.ss_family = AF_INET;
    length = sizeof(sockaddr_in);
  } else if (v6 && ::inet_pton(AF_INET6, literal.c_str(),
                               &reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr) == 1) {
    address.ss_family = AF_INET6;
    length = sizeof(sockaddr_in6);
  } else {
    if (!v6 && ::if_nametoindex(literal.c_str()) != 0) return;  // an interface ZeroMQ can bind
    reject("publish.endpoint", e,
           "\"" + a.host +
               "\" is neither an IP address of this host nor one of its network interfaces "
               "(ZeroMQ binds addresses and interface names, not host names; localhost means "
               "127.0.0.1)");
  }
  // Port 0: whether the address is this host's, whatever ports are taken.
  const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;  // no such protocol here: leave it to the bind
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), length);
  const int err = errno;
  ::close(fd);
  if (bound != 0 && err == EADDRNOTAVAIL) {
    reject("publish.endpoint", e, "no network interface of this host has the address " + literal);
  }
}

std::string endpoint_in_use(const PublisherOptions& o) {
  const std::string e = resolve_endpoint(o);
  if (starts_with(e, kIpc)) {
    const std::string path = e.substr(kIpc.size());
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return "";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof(address.sun_path) - 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return "";
    // A listening socket accepts; a file left by a process that has gone refuses.
    const bool served =
        ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    return served ? path + " is being served by another process (a second stereod?)" : "";
  }
  const TcpAddress a = split_tcp(e);
  if (a.port == "0" || a.port == "*") return "";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  const bool v6 = a.host.size() > 2 && a.host.front() == '[';
  const std::string host = every_interface(a.host) ? std::string(v6 ? "::" : "0.0.0.0")
                           : v6                    ? a.host.substr(1, a.host.size() - 2)
                                                   : a.host;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), a.port.c_str(), &hints, &found) != 0) return "";  // a name
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // as ZeroMQ binds
  const bool taken =
      fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) != 0 && errno == EADDRINUSE;
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return taken ? "port " + a.port + " on " + a.host + " is taken by another process" : "";
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
