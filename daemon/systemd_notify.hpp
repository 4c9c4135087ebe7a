// The systemd notification protocol (sd_notify(3)), implemented directly: one datagram per message
// to the socket named by $NOTIFY_SOCKET ('@' = abstract namespace). Does nothing when the variable
// is not set, so the daemon runs the same by hand.
#pragma once

#include <chrono>
#include <string>

namespace stereod::daemon {

class SystemdNotifier {
 public:
  SystemdNotifier();  // reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID
  ~SystemdNotifier();
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  bool enabled() const { return fd_ >= 0; }
  void ready(const std::string& status);
  void reloading();  // RELOADING=1 with MONOTONIC_USEC
  void stopping();
  void status(const std::string& line);
  void watchdog();
  // Half the watchdog timeout: how often to ping; zero when systemd wants no pings.
  std::chrono::microseconds watchdog_interval() const { return interval_; }

 private:
  void send(const std::string& message);

  int fd_ = -1;
  std::string address_;
  std::chrono::microseconds interval_{0};
};

}  // namespace stereod::daemon
