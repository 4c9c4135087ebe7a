// stereod: the depth daemon. `stereod --config FILE` runs it; `stereod --check FILE` validates a
// configuration and says what is wrong with it.
#include <gst/gst.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "config_watcher.hpp"
#include "daemon.hpp"
#include "daemon_config.hpp"

using namespace stereod;

namespace {

int check(const std::string& file) {
  try {
    const DaemonConfig c = load_daemon_config(file);
    std::size_t cameras = 0;
    for (const auto& r : c.rigs) cameras += r.cameras.size();
    std::printf("%s: OK (cameras: %zu, rigs: %zu, pairs: %zu)\n", file.c_str(), cameras,
                c.rigs.size(), c.pairs.size());
    // Not a fault of the file (the running daemon's own endpoint is in use too), but a second
    // daemon would not start: say so.
    if (const std::string who = publish::endpoint_in_use(c.publish); !who.empty()) {
      std::printf("note: publish.endpoint = %s: %s now\n",
                  publish::resolve_endpoint(c.publish).c_str(), who.c_str());
    }
    return 0;
  } catch (const ConfigError& e) {
    for (const auto& issue : e.issues()) std::fprintf(stderr, "%s\n", issue.to_string().c_str());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Signals go to one thread that waits for them; every other thread has them blocked. Blocked
  // first thing: a SIGTERM that arrives while the command line is read (a stop right after the
  // start) is then taken as a request to stop, not the default action's death (found under
  // qemu, where starting takes long enough to hit). --check and --version take them as usual.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  CLI::App app{"stereod: real-time depth from camera pairs, published over ZeroMQ"};
  std::string config = "/etc/stereod/stereod.yaml", check_file, engine, log_level;
  bool version = false;
  app.add_option("--config", config, "Configuration file");
  CLI::Option* check_option =
      app.add_option("--check", check_file, "Validate this configuration file and exit");
  app.add_option("--engine", engine, "Override the engine: auto, cuda or cpu")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  app.add_option("--log-level", log_level, "Override the log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_flag("--version", version, "Print the version and exit");
  const auto unblock = [&] { pthread_sigmask(SIG_UNBLOCK, &signals, nullptr); };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    unblock();
    return app.exit(e);
  }
  if (version) {
    std::printf("stereod %s\n", STEREOD_VERSION);
    return 0;
  }
  // Given at all, --check checks (an empty name is an error, not a request to run the daemon).
  if (check_option->count() > 0) {
    unblock();  // Ctrl-C ends a check
    return check(check_file);
  }
  signal(SIGPIPE, SIG_IGN);
  gst_init(nullptr, nullptr);

  daemon::Options options;
  options.config_file = config;
  options.engine = engine;
  options.log_level = log_level;
  daemon::Daemon d(options);
  std::thread signal_thread([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (sig == SIGHUP) {
        d.request_reload("SIGHUP");
      } else {
        d.request_stop();
        return;
      }
    }
  });
  int code;
  {
    daemon::ConfigWatcher watcher(config, [&] { d.request_reload("the file changed"); });
    code = d.run();
  }
  // run() returns on a stop request or a start-up failure: wake the signal thread either way.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  if (d.abandoned_work()) {
    // Engines still computing a frame: their destructors (and the static ones) would wait for it.
    spdlog::shutdown();
    std::fflush(nullptr);
    std::quick_exit(code);
  }
  return code;
}
