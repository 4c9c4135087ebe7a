// stereod-sub: subscribe to a stereod stream; print a line per frame (or the stats topic), report
// sequence gaps, and optionally save what arrives.
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "frame_report.hpp"
#include "publish/endpoint.hpp"
#include "stereod_client.hpp"

using namespace stereod;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) {
  g_stop = true;
}

// What the command line asks for.
struct Args {
  client::SubscriberOptions options;
  std::vector<std::string> pairs;
  std::uint64_t count = 0;
  double timeout_s = 0;
  std::string save;
  bool stats = false;
  bool brief = false;
};

void declare_options(CLI::App& app, Args& a) {
  a.options.endpoint = publish::default_endpoint();
  app.add_option("--endpoint", a.options.endpoint, "Where the daemon publishes")
      ->capture_default_str();
  app.add_option("--pair", a.pairs, "Only pairs whose name starts with this (repeatable)");
  app.add_option("--count", a.count, "Stop after N frames (or N stats messages); 0 = never");
  app.add_option("--timeout", a.timeout_s,
                 "Give up (exit 1) when nothing arrives for this many seconds; 0 = wait forever");
  app.add_option("--save", a.save,
                 "Write each frame's pictures, point cloud and header into this folder (below)");
  app.add_flag("--stats", a.stats, "Print the stats topic instead of frames");
  app.add_flag("--brief", a.brief,
               "Per frame only the pair, sequence and latencies (no disparity summary: keeps up "
               "with many pairs at full rate)");
  app.add_option("--server-key", a.options.server_key,
                 "CURVE: the server's certificate (its .key file)")
      ->check(CLI::ExistingFile);
  app.add_option("--client-key", a.options.client_key,
                 "CURVE: this client's secret certificate, when the server lists its clients")
      ->check(CLI::ExistingFile);
  app.footer(std::string("\nThe default endpoint is the daemon's: ipc://$RUNTIME_DIRECTORY/"
                         "stereod.sock, else $XDG_RUNTIME_DIR, else /tmp (now: ") +
             publish::default_endpoint() + ").\n\n" + sub::kSavedFiles);
}

// What has arrived so far.
struct Tally {
  std::uint64_t received = 0, malformed = 0;
  client::SequenceTracker tracker;
};

// One frame's line (after a line for any gap in its pair's sequence), and its files with --save.
void show_frame(const client::Frame& frame, const Args& a, Tally& t) {
  const auto& info = frame.header().info;
  const auto step = t.tracker.next(info.pair, info.sequence);
  if (step.lost > 0) {
    std::cout << info.pair << ": " << step.lost << " frame(s) lost before #" << info.sequence
              << "\n";
  } else if (step.restart) {
    std::cout << info.pair << ": sequence restarted at #" << info.sequence << "\n";
  }
  std::cout << sub::frame_line(frame, publish::realtime_ns(), !a.brief) << "\n" << std::flush;
  if (!a.save.empty()) sub::save_frame(a.save, frame);
}

// Receives until a signal or --count messages; false when nothing came for --timeout. Throws
// when the subscriber cannot be made or a frame cannot be saved.
bool receive(const Args& a, Tally& t) {
  client::Subscriber sub(a.options);
  auto last_arrival = std::chrono::steady_clock::now();
  while (!g_stop && (a.count == 0 || t.received < a.count)) {
    std::optional<client::Received> msg;
    try {
      msg = sub.receive(std::chrono::milliseconds(200));
    } catch (const client::ProtocolError& e) {
      ++t.malformed;
      std::cerr << "malformed message: " << e.what() << "\n";
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!msg) {
      if (a.timeout_s > 0 && now - last_arrival > std::chrono::duration<double>(a.timeout_s)) {
        std::cerr << "stereod-sub: nothing from " << a.options.endpoint << " for " << a.timeout_s
                  << " s (is the daemon publishing there? It logs \"publishing on ...\")\n";
        return false;
      }
      continue;
    }
    last_arrival = now;
    ++t.received;
    if (msg->stats) {
      std::cout << sub::stats_lines(*msg->stats) << std::flush;
      continue;
    }
    show_frame(*msg->frame, a, t);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stereod-sub: receive a stereod disparity stream"};
  Args args;
  declare_options(app, args);
  CLI11_PARSE(app, argc, argv);

  if (args.stats) {
    args.options.pairs.clear();
    args.options.stats = true;
  } else if (!args.pairs.empty()) {
    args.options.pairs = args.pairs;
  }
  if (!args.save.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.save, ec);
    if (ec) {
      std::cerr << "stereod-sub: --save " << args.save << ": " << ec.message() << "\n";
      return 2;
    }
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  Tally tally;
  try {
    if (!receive(args, tally)) return 1;
  } catch (const std::exception& e) {
    std::cerr << "stereod-sub: " << e.what() << "\n";
    return 1;
  }
  if (!args.stats) {
    std::cerr << "received " << tally.received << " frame(s), lost " << tally.tracker.lost_total()
              << ", malformed " << tally.malformed << "\n";
  }
  return 0;
}
