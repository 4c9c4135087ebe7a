#include "systemd_notify.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace stereod::daemon {

SystemdNotifier::SystemdNotifier() {
  const char* socket_name = std::getenv("NOTIFY_SOCKET");
  if (socket_name && socket_name[0] != '\0' &&
      std::strlen(socket_name) < sizeof(sockaddr_un::sun_path)) {
    address_ = socket_name;
    if (address_[0] == '@') address_[0] = '\0';
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  }
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  if (usec && (!pid || std::strtol(pid, nullptr, 10) == static_cast<long>(::getpid()))) {
    const long long us = std::strtoll(usec, nullptr, 10);
    if (us > 0) interval_ = std::chrono::microseconds(us / 2);
  }
}

SystemdNotifier::~SystemdNotifier() {
  if (fd_ >= 0) ::close(fd_);
}

void SystemdNotifier::send(const std::string& message) {
  if (fd_ < 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, address_.data(), address_.size());
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
  if (::sendto(fd_, message.data(), message.size(), MSG_NOSIGNAL,
               reinterpret_cast<const sockaddr*>(&addr), len) < 0) {
    spdlog::debug("systemd notification \"{}\" not sent: {}", message, std::strerror(errno));
  }
}

void SystemdNotifier::ready(const std::string& status) {
  send("READY=1\nSTATUS=" + status);
}

void SystemdNotifier::reloading() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long usec = static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void SystemdNotifier::stopping() {
  send("STOPPING=1");
}
void SystemdNotifier::status(const std::string& line) {
  send("STATUS=" + line);
}
void SystemdNotifier::watchdog() {
  send("WATCHDOG=1");
}

}  // namespace stereod::daemon
