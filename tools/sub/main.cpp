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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stereod-sub: receive a stereod disparity stream"};
  client::SubscriberOptions options;
  options.endpoint = publish::default_endpoint();
  std::vector<std::string> pairs;
  std::uint64_t count = 0;
  double timeout_s = 0;
  std::string save;
  bool stats = false;
  bool brief = false;
  app.add_option("--endpoint", options.endpoint, "Where the daemon publishes")
      ->capture_default_str();
  app.add_option("--pair", pairs, "Only pairs whose name starts with this (repeatable)");
  app.add_option("--count", count, "Stop after N frames (or N stats messages); 0 = never");
  app.add_option("--timeout", timeout_s,
                 "Give up (exit 1) when nothing arrives for this many seconds; 0 = wait forever");
  app.add_option("--save", save,
                 "Write each frame's pictures, point cloud and header into this folder (below)");
  app.add_flag("--stats", stats, "Print the stats topic instead of frames");
  app.add_flag("--brief", brief,
               "Per frame only the pair, sequence and latencies (no disparity summary: keeps up "
               "with many pairs at full rate)");
  app.add_option("--server-key", options.server_key,
                 "CURVE: the server's certificate (its .key file)")
      ->check(CLI::ExistingFile);
  app.add_option("--client-key", options.client_key,
                 "CURVE: this client's secret certificate, when the server lists its clients")
      ->check(CLI::ExistingFile);
  app.footer(std::string("\nThe default endpoint is the daemon's: ipc://$RUNTIME_DIRECTORY/"
                         "stereod.sock, else $XDG_RUNTIME_DIR, else /tmp (now: ") +
             publish::default_endpoint() + ").\n\n" + sub::kSavedFiles);
  CLI11_PARSE(app, argc, argv);

  if (stats) {
    options.pairs.clear();
    options.stats = true;
  } else if (!pairs.empty()) {
    options.pairs = pairs;
  }
  if (!save.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(save, ec);
    if (ec) {
      std::cerr << "stereod-sub: --save " << save << ": " << ec.message() << "\n";
      return 2;
    }
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  std::uint64_t received = 0, malformed = 0;
  client::SequenceTracker tracker;
  try {
    client::Subscriber sub(options);
    auto last_arrival = std::chrono::steady_clock::now();
    while (!g_stop && (count == 0 || received < count)) {
      std::optional<client::Received> msg;
      try {
        msg = sub.receive(std::chrono::milliseconds(200));
      } catch (const client::ProtocolError& e) {
        ++malformed;
        std::cerr << "malformed message: " << e.what() << "\n";
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (!msg) {
        if (timeout_s > 0 && now - last_arrival > std::chrono::duration<double>(timeout_s)) {
          std::cerr << "stereod-sub: nothing from " << options.endpoint << " for " << timeout_s
                    << " s (is the daemon publishing there? It logs \"publishing on ...\")\n";
          return 1;
        }
        continue;
      }
      last_arrival = now;
      ++received;
      if (msg->stats) {
        std::cout << sub::stats_lines(*msg->stats) << std::flush;
        continue;
      }
      const client::Frame& frame = *msg->frame;
      const auto& info = frame.header().info;
      const auto step = tracker.next(info.pair, info.sequence);
      if (step.lost > 0) {
        std::cout << info.pair << ": " << step.lost << " frame(s) lost before #" << info.sequence
                  << "\n";
      } else if (step.restart) {
        std::cout << info.pair << ": sequence restarted at #" << info.sequence << "\n";
      }
      std::cout << sub::frame_line(frame, publish::realtime_ns(), !brief) << "\n" << std::flush;
      if (!save.empty()) sub::save_frame(save, frame);
    }
  } catch (const std::exception& e) {
    std::cerr << "stereod-sub: " << e.what() << "\n";
    return 1;
  }
  if (!stats) {
    std::cerr << "received " << received << " frame(s), lost " << tracker.lost_total()
              << ", malformed " << malformed << "\n";
  }
  return 0;
}
