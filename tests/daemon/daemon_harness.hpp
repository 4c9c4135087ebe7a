// The stereod binary as a child process, for the tests that run it (tests/daemon/ and the
// fault-injection suite in tests/fault/): its systemd notifications through a socket of the test's
// own, its output in a log file, subscriber processes (stereod-sub) to pause and kill, and a
// private folder per test.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "stereod_client.hpp"
#include "test_wrapper.hpp"

namespace stereod::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The stereod binary under test: the build's, or $STEREOD_TEST_BINARY (to run these tests against
// another build, e.g. the one before a fix).
inline std::string stereod_binary() {
  const char* other = std::getenv("STEREOD_TEST_BINARY");
  return other && *other ? other : STEREOD_BINARY;
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

// Counts the occurrences of `what` in `text`.
inline int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

// Waits until `done()` or the limit; true when done.
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// A unix datagram socket the daemon sends its systemd notifications to.
class NotifySocket {
 public:
  explicit NotifySocket(const fs::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ::unlink(path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{0, 100000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    thread_ = std::thread([this] {
      char buf[4096];
      while (!stop_) {
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) continue;
        std::lock_guard<std::mutex> lock(mutex_);
        messages_.emplace_back(buf, static_cast<std::size_t>(n));
      }
    });
  }
  ~NotifySocket() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  std::vector<std::string> messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }
  // Waits until some message after index `from` contains `what`; returns its index or -1.
  int wait_for(const std::string& what, std::size_t from, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      const auto m = messages();
      for (std::size_t i = from; i < m.size(); ++i) {
        if (m[i].find(what) != std::string::npos) return static_cast<int>(i);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }
  // The latest STATUS= text after index `from`, or "".
  std::string last_status(std::size_t from = 0) {
    const auto m = messages();
    for (std::size_t i = m.size(); i-- > from;) {
      const auto at = m[i].find("STATUS=");
      if (at != std::string::npos) {
        const auto end = m[i].find('\n', at);
        return m[i].substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
      }
    }
    return "";
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

// A child process running `argv` (one of the project's programs, so through $STEREOD_TEST_WRAPPER),
// its stdout and stderr in `log` (or /dev/null), with extra environment variables. Killed (SIGKILL)
// when still running at destruction.
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> argv, const fs::path& log,
               std::vector<std::pair<std::string, std::string>> env = {}) {
    argv = wrapped(std::move(argv));  // through the emulator, where the tests run under one
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const std::string out = log.empty() ? std::string("/dev/null") : log.string();
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      ::dup2(fd, 1);
      for (const auto& [k, v] : env) {
        if (v.empty()) {
          ::unsetenv(k.c_str());
        } else {
          ::setenv(k.c_str(), v.c_str(), 1);
        }
      }
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~ChildProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGCONT);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) { ::kill(pid_, sig); }
  // Waits for the exit; the exit code (128 + signal when killed by one), or -1 when it did not
  // exit in time.
  int wait_exit(std::chrono::milliseconds limit) {
    if (exited_) return code_;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return code_;
      }
      std::this_thread::sleep_for(5ms);
    }
    return -1;
  }
  bool running() { return wait_exit(0ms) == -1; }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

// The daemon (CPU engine), reporting to `notify`; `watchdog` sets WATCHDOG_USEC to 400 ms.
class DaemonProcess : public ChildProcess {
 public:
  DaemonProcess(const fs::path& config, const fs::path& log, const fs::path& notify,
                bool watchdog = false, std::vector<std::string> extra_args = {})
      : ChildProcess(arguments(config, std::move(extra_args)), log,
                     {{"NOTIFY_SOCKET", notify.string()},
                      {"WATCHDOG_USEC", watchdog ? "400000" : ""},
                      {"WATCHDOG_PID", ""}}) {}

 private:
  static std::vector<std::string> arguments(const fs::path& config,
                                            std::vector<std::string> extra) {
    std::vector<std::string> a = {stereod_binary(), "--config", config.string(), "--engine", "cpu"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

// `stereod --check FILE`: the exit code, and what it printed in `output`.
inline int run_check(const fs::path& file, std::string& output,
                     std::chrono::milliseconds limit = 20s) {
  const fs::path out =
      file.empty() ? fs::temp_directory_path() / ("stereod-check-" + std::to_string(::getpid()))
                   : fs::path(file).concat(".check-output");
  ChildProcess check({stereod_binary(), "--check", file.string()}, out);
  const int code = check.wait_exit(limit);
  output = read_text(out);
  fs::remove(out);
  return code;
}

// A folder of its own for each test, removed afterwards: the configuration, the log, the
// notification socket and an ipc:// endpoint in it.
struct Fixture {
  fs::path dir;
  fs::path config, log, notify_path;
  std::string endpoint;

  explicit Fixture(const std::string& name) {
    dir = fs::temp_directory_path() / ("stereod-daemon-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    config = dir / "stereod.yaml";
    log = dir / "stereod.log";
    notify_path = dir / "notify";
    endpoint = "ipc://" + (dir / "s.sock").string();
  }
  ~Fixture() { fs::remove_all(dir); }
};

// A daemon started on the configuration `config(fixture)` returns, in a fixture of its own.
class RunningDaemon {
 public:
  template <typename MakeConfig>
  RunningDaemon(const std::string& name, MakeConfig config, bool watchdog = false,
                std::vector<std::string> extra_args = {})
      : fixture(name),
        notify((write_text(fixture.config, config(fixture)), fixture.notify_path)),
        process(fixture.config, fixture.log, fixture.notify_path, watchdog, std::move(extra_args)) {
  }

  // Waits for the first READY=1.
  bool ready(std::chrono::milliseconds limit = 20s) {
    return notify.wait_for("READY=1", 0, limit) >= 0;
  }
  std::string log() const { return read_text(fixture.log); }
  // SIGTERM, then the exit code (-1: it did not exit within `limit`).
  int stop(std::chrono::milliseconds limit = 10s) {
    process.signal(SIGTERM);
    return process.wait_exit(limit);
  }

  Fixture fixture;
  NotifySocket notify;
  DaemonProcess process;
};

// A small synthetic rig the CPU engine easily keeps up with on a busy machine; the extra lines go
// into the pair's map (indented by 4) and the publish map (indented by 2), which come last.
inline std::string synthetic_config(const std::string& endpoint,
                                    const std::string& extra_pair_keys = "",
                                    const std::string& extra_publish = "") {
  std::ostringstream c;
  c << "logging: {level: info}\n"
       "cameras:\n"
       "  - {name: left, source: 'synthetic://left?objects=3&seed=4&max_disparity=32', width: 192, "
       "height: 144, fps: 8, color: true}\n"
       "  - {name: right, source: 'synthetic://right?objects=3&seed=4&max_disparity=32', width: "
       "192, height: 144, fps: 8, color: true}\n"
       "rigs:\n"
       "  - {name: synth, cameras: [left, right]}\n"
       "pairs:\n"
       "  - name: front\n"
       "    left: left\n"
       "    right: right\n"
       "    stereo:\n"
       "      max_disparity: 32\n"
    << extra_pair_keys
    << "    background: {warmup: 10}\n"
       "publish:\n"
       "  endpoint: '"
    << endpoint
    << "'\n"
       "  stats_interval_ms: 500\n"
    << extra_publish;
  return c.str();
}

inline client::SubscriberOptions frames_and_stats(const std::string& endpoint) {
  client::SubscriberOptions so;
  so.endpoint = endpoint;
  so.stats = true;
  return so;
}

inline client::Frame next_frame(client::Subscriber& sub, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    auto m = sub.receive(200ms);
    if (m && m->frame) return std::move(*m->frame);
  }
  throw std::runtime_error("no frame within the time limit");
}

// The endpoint the daemon logged ("publishing on ENDPOINT"), the latest one, or "".
inline std::string logged_endpoint(const fs::path& log) {
  const std::string text = read_text(log);
  const std::string key = "publishing on ";
  const auto at = text.rfind(key);
  if (at == std::string::npos) return "";
  const auto end = text.find('\n', at);
  return text.substr(at + key.size(), end - at - key.size());
}

}  // namespace stereod::test
