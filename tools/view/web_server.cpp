#include "web_server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

namespace stereod::view {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxQueuedTexts = 64;          // stats and pair lists a page may lag behind
constexpr std::size_t kMaxRequestBytes = 16 * 1024;  // a page asks for little
constexpr std::size_t kMaxClientMessage = 4096;      // {"pair": "..."}

// Beast (Boost 1.74) has its own string_view.
std::string_view std_view(beast::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace

class WsSession;

struct WebServer::Impl {
  explicit Impl(WebServerOptions o) : options(std::move(o)), acceptor(ioc) {}

  WebServerOptions options;
  net::io_context ioc;
  tcp::acceptor acceptor;
  unsigned short bound_port = 0;
  std::string host_address;  // options.address as a Host header writes it ([::1] for IPv6)
  std::thread thread;
  std::atomic<bool> stopped{false};
  std::atomic<int> page_count{0};
  std::set<std::shared_ptr<WsSession>> sessions;                     // the io thread only
  std::map<std::string, std::shared_ptr<const std::string>> sticky;  // the io thread only

  // The Host header values this server answers to: its address and "localhost", with the port.
  bool host_ok(std::string_view host) const;
  void accept();
};

// One open page: frames of its pair (newest wins), text messages in order.
class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(tcp::socket socket, WebServer::Impl& server)
      : ws_(std::move(socket)), timer_(ws_.get_executor()), server_(&server) {}

  void run(http::request<http::string_body> request) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.read_message_max(kMaxClientMessage);
    ws_.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->server_->sessions.insert(self);
      ++self->server_->page_count;
      self->send_text(std::make_shared<const std::string>(self->server_->options.hello));
      for (const auto& [name, message] : self->server_->sticky) self->send_text(message);
      self->read();
    });
  }

  void offer_frame(const std::string& pair, std::shared_ptr<const std::string> message) {
    if (pair_.empty()) pair_ = pair;
    if (pair != pair_) return;
    pending_frame_ = std::move(message);
    write_next();
  }

  void send_text(std::shared_ptr<const std::string> message) {
    if (texts_.size() >= kMaxQueuedTexts) texts_.pop_front();
    texts_.push_back(std::move(message));
    write_next();
  }

  void close() {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

 private:
  void read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->gone();
      self->on_message(beast::buffers_to_string(self->in_.data()));
      self->in_.consume(self->in_.size());
      self->read();
    });
  }

  // {"pair": "name"}: the page chose a pair. Anything else is ignored (the page is ours; a
  // mistake there must not end the session).
  void on_message(const std::string& text) {
    const std::string key = "\"pair\"";
    const auto at = text.find(key);
    if (at == std::string::npos) return;
    const auto open = text.find('"', text.find(':', at + key.size()));
    const auto close = open == std::string::npos ? open : text.find('"', open + 1);
    if (close == std::string::npos) return;
    pair_ = text.substr(open + 1, close - open - 1);
    pending_frame_.reset();
  }

  void write_next() {
    if (writing_ || gone_) return;
    std::shared_ptr<const std::string> message;
    bool binary = false;
    if (!texts_.empty()) {
      message = std::move(texts_.front());
      texts_.pop_front();
    } else if (pending_frame_) {
      const auto interval = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(1.0 / server_->options.max_fps));
      const auto due = last_frame_ + interval;
      if (Clock::now() < due) {
        if (!timer_armed_) {
          timer_armed_ = true;
          timer_.expires_at(due);
          timer_.async_wait([self = shared_from_this()](beast::error_code) {
            self->timer_armed_ = false;
            self->write_next();
          });
        }
        return;
      }
      message = std::move(pending_frame_);
      pending_frame_.reset();
      last_frame_ = Clock::now();
      binary = true;
    } else {
      return;
    }
    writing_ = true;
    ws_.binary(binary);
    ws_.async_write(net::buffer(*message),
                    [self = shared_from_this(), message](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) return self->gone();
                      self->write_next();
                    });
  }

  void gone() {
    if (gone_) return;
    gone_ = true;
    timer_.cancel();
    if (server_->sessions.erase(shared_from_this()) > 0) --server_->page_count;
  }

  websocket::stream<beast::tcp_stream> ws_;
  net::steady_timer timer_;
  WebServer::Impl* server_;  // outlives every session: it owns the loop that runs them
  beast::flat_buffer in_;
  std::string pair_;
  std::shared_ptr<const std::string> pending_frame_;
  std::deque<std::shared_ptr<const std::string>> texts_;
  Clock::time_point last_frame_{};
  bool writing_ = false;
  bool timer_armed_ = false;
  bool gone_ = false;
};

namespace {

// One HTTP connection: the page's files, or the upgrade to a WebSocket on /ws.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, WebServer::Impl& server)
      : stream_(std::move(socket)), server_(&server) {}

  void read() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestBytes);
    parser_->body_limit(kMaxRequestBytes);
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return;
                       self->handle(self->parser_->release());
                     });
  }

 private:
  void handle(http::request<http::string_body> req) {
    const auto reply = [&](http::status status, std::string_view type, std::string body) {
      auto res = std::make_shared<http::response<http::string_body>>(status, req.version());
      res->set(http::field::server, "stereod-view");
      res->set(http::field::content_type, beast::string_view(type.data(), type.size()));
      res->set(http::field::cache_control, "no-store");
      res->set("X-Content-Type-Options", "nosniff");
      res->keep_alive(req.keep_alive());
      res->body() = std::move(body);
      res->prepare_payload();
      http::async_write(stream_, *res,
                        [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
                          if (ec || !res->keep_alive()) {
                            beast::error_code ignored;
                            self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                            return;
                          }
                          self->read();
                        });
    };
    if (server_->options.check_host && !server_->host_ok(std_view(req[http::field::host]))) {
      return reply(http::status::misdirected_request, "text/plain",
                   "stereod-view answers to its own address only\n");
    }
    std::string target(req.target());
    if (const auto q = target.find('?'); q != std::string::npos) target.resize(q);
    if (target == "/ws" && websocket::is_upgrade(req)) {
      // A page served by someone else must not read the stream: its Origin names that site.
      const std::string_view origin = std_view(req[http::field::origin]);
      const auto scheme = origin.find("://");
      if (server_->options.check_host &&
          (scheme == std::string_view::npos || !server_->host_ok(origin.substr(scheme + 3)))) {
        return reply(http::status::forbidden, "text/plain", "foreign origin\n");
      }
      stream_.expires_never();
      std::make_shared<WsSession>(stream_.release_socket(), *server_)->run(std::move(req));
      return;
    }
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      return reply(http::status::method_not_allowed, "text/plain", "GET only\n");
    }
    const auto it = server_->options.assets.find(target);
    if (it == server_->options.assets.end()) {
      return reply(http::status::not_found, "text/plain", "not found\n");
    }
    reply(http::status::ok, it->second.content_type, std::string(it->second.body));
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  WebServer::Impl* server_;
};

}  // namespace

bool WebServer::Impl::host_ok(std::string_view host) const {
  const std::string port = ":" + std::to_string(bound_port);
  return host == host_address + port || host == "localhost" + port;
}

void WebServer::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == net::error::operation_aborted) return;  // stopping
    } else {
      std::make_shared<HttpSession>(std::move(socket), *this)->read();
    }
    accept();
  });
}

WebServer::WebServer(WebServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& s = *impl_;
  const std::string where = s.options.address + ":" + std::to_string(s.options.port);
  try {
    const tcp::endpoint endpoint(net::ip::make_address(s.options.address), s.options.port);
    s.acceptor.open(endpoint.protocol());
    s.acceptor.set_option(net::socket_base::reuse_address(true));
    s.acceptor.bind(endpoint);
    s.acceptor.listen();
    s.bound_port = s.acceptor.local_endpoint().port();
    s.host_address = endpoint.address().is_v6() ? "[" + s.options.address + "]" : s.options.address;
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error("cannot listen on " + where + ": " + e.code().message());
  }
  s.accept();
  s.thread = std::thread([&s] { s.ioc.run(); });
}

WebServer::~WebServer() {
  stop();
}

unsigned short WebServer::port() const {
  return impl_->bound_port;
}

int WebServer::pages() const {
  return impl_->page_count.load();
}

void WebServer::publish_frame(const std::string& pair, std::shared_ptr<const std::string> message) {
  net::post(impl_->ioc, [impl = impl_.get(), pair, message = std::move(message)] {
    // A copy: a session that fails while being offered leaves the set.
    const auto sessions = impl->sessions;
    for (const auto& s : sessions) s->offer_frame(pair, message);
  });
}

void WebServer::publish_text(std::shared_ptr<const std::string> message,
                             const std::string& sticky) {
  net::post(impl_->ioc, [impl = impl_.get(), message = std::move(message), sticky] {
    if (!sticky.empty()) impl->sticky[sticky] = message;
    const auto sessions = impl->sessions;
    for (const auto& s : sessions) s->send_text(message);
  });
}

void WebServer::stop() {
  if (impl_->stopped.exchange(true)) return;
  net::post(impl_->ioc, [impl = impl_.get()] {
    beast::error_code ec;
    impl->acceptor.close(ec);
    for (const auto& s : impl->sessions) s->close();
    impl->sessions.clear();
  });
  // Give the closes a moment to reach the pages, then end the loop.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace stereod::view
