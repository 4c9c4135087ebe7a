#include "config_watcher.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace stereod::daemon {

ConfigWatcher::ConfigWatcher(const std::string& file, std::function<void()> changed)
    : changed_(std::move(changed)) {
  const std::filesystem::path p = std::filesystem::absolute(file);
  name_ = p.filename().string();
  inotify_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_ < 0 || ::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    spdlog::warn("not watching {} for changes (inotify: {}); reload with SIGHUP", file,
                 std::strerror(errno));
    if (inotify_ >= 0) ::close(inotify_);
    inotify_ = -1;
    return;
  }
  const std::string dir = p.parent_path().string();
  if (::inotify_add_watch(inotify_, dir.c_str(),
                          IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ATTRIB) < 0) {
    spdlog::warn("not watching {} for changes ({}: {}); reload with SIGHUP", file, dir,
                 std::strerror(errno));
    ::close(inotify_);
    inotify_ = -1;
    return;
  }
  thread_ = std::thread([this] { run(); });
}

ConfigWatcher::~ConfigWatcher() {
  if (thread_.joinable()) {
    const char c = 0;
    (void)!::write(stop_pipe_[1], &c, 1);
    thread_.join();
  }
  if (inotify_ >= 0) ::close(inotify_);
  for (int fd : stop_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

void ConfigWatcher::run() {
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    pollfd fds[2] = {{inotify_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    bool ours = false;
    for (;;) {
      const ssize_t n = ::read(inotify_, buffer, sizeof buffer);
      if (n <= 0) break;
      for (ssize_t i = 0; i < n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buffer + i);
        if (e->len > 0 && name_ == e->name) ours = true;
        i += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
    if (ours) changed_();
  }
}

}  // namespace stereod::daemon
