// stereod-view: a live view of a stereod stream in a web browser. It subscribes like any client
// and serves one page (web/) on loopback: the colorized disparity or depth with a color bar in
// metres and the depth under the cursor, the foreground mask over the left image, a point cloud
// to turn, and the stats as small live plots, for any of the pairs.
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <iostream>
#include <set>

#include "page_messages.hpp"
#include "publish/endpoint.hpp"
#include "stereod_client.hpp"
#include "web_assets.hpp"
#include "web_server.hpp"

using namespace stereod;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) {
  g_stop = true;
}

bool is_loopback(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "::1" || address == "localhost";
}

// The command line.
struct Args {
  client::SubscriberOptions so;
  std::vector<std::string> pairs;
  view::WebServerOptions wo;
  bool remote = false;
};

void declare_options(CLI::App& app, Args& a) {
  a.so.endpoint = publish::default_endpoint();
  a.so.stats = true;
  app.add_option("--endpoint", a.so.endpoint, "Where the daemon publishes")->capture_default_str();
  app.add_option("--pair", a.pairs, "Only pairs whose name starts with this (repeatable)");
  app.add_option("--port", a.wo.port, "The page's TCP port (0: any free one, printed)")
      ->capture_default_str();
  app.add_option("--address", a.wo.address, "Where to listen; anything but loopback needs --remote")
      ->capture_default_str();
  app.add_flag("--remote", a.remote,
               "Allow an --address beyond loopback (the stream is then visible to that network, "
               "unencrypted)");
  app.add_option("--max-fps", a.wo.max_fps, "Frames a second to each page")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 240.0));
  app.add_option("--server-key", a.so.server_key, "CURVE: the server's certificate (its .key file)")
      ->check(CLI::ExistingFile);
  app.add_option("--client-key", a.so.client_key,
                 "CURVE: this client's secret certificate, when the server lists its clients")
      ->check(CLI::ExistingFile);
  app.footer(
      "\nOpen the address it prints (http://127.0.0.1:8090/ by default) in a browser on "
      "the same machine;\nfor another machine, forward the port: ssh -L 8090:127.0.0.1:8090 "
      "board.");
}

// Hands what arrives to the pages until a signal: frames and errors, the stats, and the list of
// pairs (`known`) each time it grows.
void relay(client::Subscriber& sub, view::WebServer& server, std::set<std::string>& known) {
  std::uint64_t malformed = 0;
  const auto learn = [&](const std::string& pair) {
    if (!known.insert(pair).second) return;
    server.publish_text(std::make_shared<const std::string>(view::pairs_message(known)), "pairs");
  };
  while (!g_stop) {
    std::optional<client::Received> msg;
    try {
      msg = sub.receive(std::chrono::milliseconds(200));
    } catch (const client::ProtocolError& e) {
      if (malformed++ % 100 == 0)
        std::cerr << "stereod-view: malformed message: " << e.what() << "\n";
      continue;
    }
    if (!msg) continue;
    if (msg->stats) {
      for (const auto& p : msg->stats->pairs) learn(p.pair);
      server.publish_text(std::make_shared<const std::string>(view::stats_message(*msg->stats)));
      continue;
    }
    const client::Frame& frame = *msg->frame;
    const std::string& pair = frame.header().info.pair;
    learn(pair);
    if (!frame.header().ok()) {
      server.publish_text(std::make_shared<const std::string>(view::error_message(frame)));
      continue;
    }
    server.publish_frame(pair, std::make_shared<const std::string>(view::frame_message(frame)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stereod-view: watch a stereod stream live in a web browser"};
  Args args;
  declare_options(app, args);
  CLI11_PARSE(app, argc, argv);
  client::SubscriberOptions& so = args.so;
  view::WebServerOptions& wo = args.wo;
  if (!is_loopback(wo.address) && !args.remote) {
    std::cerr << "stereod-view: --address " << wo.address
              << " is beyond loopback: add --remote if the stream may be seen from there\n";
    return 2;
  }
  if (wo.address == "localhost") wo.address = "127.0.0.1";
  wo.check_host = !args.remote;
  if (!args.pairs.empty()) so.pairs = args.pairs;
  wo.assets = view::web_assets();
  std::set<std::string> known;
  wo.hello = view::hello_message(known);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    client::Subscriber sub(so);
    view::WebServer server(wo);
    const std::string host =
        wo.address.find(':') != std::string::npos ? "[" + wo.address + "]" : wo.address;
    std::cout << "stereod-view: http://" << host << ":" << server.port() << "/ shows "
              << so.endpoint << std::endl;
    relay(sub, server, known);
    server.stop();
  } catch (const std::exception& e) {
    std::cerr << "stereod-view: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
