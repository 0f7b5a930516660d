#include "launcher/observability/metrics_server.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <list>

#include "common/exit_codes.h"

namespace tv {

namespace beast = boost::beast;
namespace http = beast::http;
using boost::asio::ip::tcp;

namespace {
class Session;
}

// Open sessions, oldest first (each removes itself when it closes).
struct MetricsServer::Shared {
  Render render;
  boost::asio::io_context* io;
  LoopTime* time;
  std::list<std::weak_ptr<Session>> sessions;
};

namespace {

constexpr auto kWriteDeadline = std::chrono::seconds(10);

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, boost::asio::ip::address peer,
          std::shared_ptr<MetricsServer::Shared> shared)
      : socket_(std::move(socket)),
        deadline_(*shared->io, *shared->time),
        peer_(std::move(peer)),
        shared_(std::move(shared)) {}

  void read() {
    busy_ = false;
    parser_.emplace();
    parser_->header_limit(MetricsServer::kMaxRequestBytes);
    parser_->body_limit(MetricsServer::kMaxRequestBytes);
    arm(MetricsServer::kIdleTimeout);
    http::async_read(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  const boost::asio::ip::address& peer() const { return peer_; }
  // Waiting for a request (none yet, or the next one on a kept-alive connection): may be closed
  // to make room for a new connection.
  bool idle() const { return !busy_; }

  void close() {
    if (closed_) return;
    closed_ = true;
    auto& list = shared_->sessions;
    list.remove_if([this](const std::weak_ptr<Session>& w) {
      auto p = w.lock();
      return !p || p.get() == this;
    });
    deadline_.cancel();
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

 private:
  // The connection closes when `d` passes before the read or write that follows completes.
  void arm(LoopClock::duration d) {
    deadline_.expires_after(d);
    deadline_.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      auto self = w.lock();
      // Re-armed after this wait fell due (the operation completed in the same turn): not late.
      if (ec || !self || self->deadline_.expiry() > self->deadline_.time().now()) return;
      self->close();
    });
  }

  void on_read(beast::error_code ec) {
    if (ec) return close();
    busy_ = true;
    const auto& req = parser_->get();
    res_ = respond(req);
    arm(kWriteDeadline);
    http::async_write(socket_, res_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || !self->res_.keep_alive()) return self->close();
                        self->read();
                      });
  }

  http::response<http::string_body> respond(const http::request<http::string_body>& req) const {
    http::response<http::string_body> res;
    res.version(req.version());
    res.keep_alive(req.keep_alive());
    res.set(http::field::server, "trainvisor");
    const auto target = std::string_view(req.target().data(), req.target().size());
    const auto path = target.substr(0, target.find('?'));
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      res.result(http::status::method_not_allowed);
      res.set(http::field::allow, "GET, HEAD");
    } else if (path == "/metrics") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.body() = shared_->render();
    } else if (path == "/healthz") {
      res.result(http::status::ok);
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = "ok\n";
    } else {
      res.result(http::status::not_found);
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = "not found: try /metrics or /healthz\n";
    }
    res.prepare_payload();
    if (req.method() == http::verb::head) res.body().clear();
    return res;
  }

  tcp::socket socket_;
  LoopTimer deadline_;
  boost::asio::ip::address peer_;
  bool busy_ = false;
  bool closed_ = false;
  beast::flat_buffer buffer_{MetricsServer::kMaxRequestBytes};
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::shared_ptr<MetricsServer::Shared> shared_;
};

// Room for one more connection from `peer`: under both limits, or after closing the oldest idle
// connection (of that peer when it is the one at its limit). False when every connection that
// would have to go is busy answering.
bool make_room(MetricsServer::Shared& shared, const boost::asio::ip::address& peer) {
  auto& list = shared.sessions;
  list.remove_if([](const std::weak_ptr<Session>& w) { return w.expired(); });
  const auto same_peer = [&](const std::weak_ptr<Session>& w) {
    auto p = w.lock();
    return p && p->peer() == peer;
  };
  const bool peer_full =
      std::count_if(list.begin(), list.end(), same_peer) >= MetricsServer::kMaxPerPeer;
  if (!peer_full && list.size() < static_cast<std::size_t>(MetricsServer::kMaxConnections))
    return true;
  for (const auto& w : list) {
    auto p = w.lock();
    if (p && p->idle() && (!peer_full || p->peer() == peer)) {
      p->close();  // removes itself from the list
      return true;
    }
  }
  return false;
}

}  // namespace

MetricsServer::MetricsServer(boost::asio::io_context& io, Render render, LoopTime& time)
    : acceptor_(io),
      retry_(io, time),
      shared_(std::make_shared<Shared>(Shared{std::move(render), &io, &time, {}})) {}

MetricsServer::~MetricsServer() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  retry_.cancel();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::listen(boost::asio::io_context& io,
                                                             const std::string& address, int port,
                                                             const std::string& origin,
                                                             Render render, LoopTime& time) {
  std::unique_ptr<MetricsServer> s(new MetricsServer(io, std::move(render), time));
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(address, ec);
  if (ec) return Error{ErrorKind::kConfig, origin + ": \"" + address + "\" is not an IP address"};
  const tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  auto fail = [&](const char* what) {
    return Error{ErrorKind::kConfig, origin + "=" + std::to_string(port) + ": cannot " + what +
                                         " " + address + ":" + std::to_string(port) + ": " +
                                         ec.message()};
  };
  s->acceptor_.open(ep.protocol(), ec);
  if (ec) return fail("open a socket for");
  s->acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  s->acceptor_.bind(ep, ec);
  if (!ec) s->acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen on");
  s->port_ = s->acceptor_.local_endpoint(ec).port();
  s->accept();
  return s;
}

void MetricsServer::accept() {
  acceptor_.async_accept(
      [this, shared = shared_](boost::system::error_code ec, tcp::socket socket) {
        if (ec == boost::asio::error::operation_aborted) return;  // closed: the server is gone
        if (ec) {  // e.g. out of descriptors: try again a little later instead of spinning
          retry_.expires_after(std::chrono::milliseconds(200));
          retry_.async_wait([this](boost::system::error_code e) {
            if (!e) accept();
          });
          return;
        }
        const auto peer = socket.remote_endpoint(ec).address();
        if (ec || !make_room(*shared, peer)) {
          socket.close(ec);
        } else {
          auto session = std::make_shared<Session>(std::move(socket), peer, shared);
          shared->sessions.push_back(session);
          session->read();
        }
        accept();
      });
}

}  // namespace tv
