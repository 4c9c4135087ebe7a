// stereod-view's web server (Boost.Beast): one page and its scripts over HTTP, and a WebSocket
// (/ws) that carries frames and stats to each open page. One thread runs all of it; publish_*
// may be called from any thread. A page gets the newest frame of the pair it selected, at most
// max_fps a second: a frame that arrives while the previous one is still being sent replaces the
// one waiting, so a slow page skips frames instead of falling behind.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace stereod::view {

struct Asset {
  std::string_view content_type;
  std::string_view body;
};

struct WebServerOptions {
  std::string address = "127.0.0.1";  // where to listen (an IPv4 or IPv6 address)
  unsigned short port = 8090;         // 0: the system picks one (port() says which)
  // Requests must name this server as their Host (and WebSocket Origin): a page from elsewhere
  // cannot read the stream through the browser by DNS rebinding. Off when listening beyond
  // loopback on purpose (the host name users type is not known then).
  bool check_host = true;
  double max_fps = 15;                  // frames a second to each page
  std::map<std::string, Asset> assets;  // path ("/", "/viewer.js") -> content
  std::string hello;                    // the first text message of every WebSocket
};

class WebServer {
 public:
  // Binds and starts serving. Throws std::runtime_error naming the address and the reason.
  explicit WebServer(WebServerOptions options);
  ~WebServer();  // stop()
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  unsigned short port() const;
  // A binary frame message for the pages showing `pair` (a page that has chosen none takes the
  // first pair it is offered).
  void publish_frame(const std::string& pair, std::shared_ptr<const std::string> message);
  // A text (JSON) message for every page. With a `sticky` name, pages that connect later get the
  // latest message of that name too, after the hello.
  void publish_text(std::shared_ptr<const std::string> message, const std::string& sticky = "");
  // Pages connected now.
  int pages() const;
  void stop();

  struct Impl;  // web_server.cpp: the loop, the listener, the pages

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace stereod::view
