#include "launcher/observability/metrics_server.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "common/exit_codes.h"

namespace tv {

namespace beast = boost::beast;
namespace http = beast::http;
using boost::asio::ip::tcp;

struct MetricsServer::Shared {
  Render render;
  int active = 0;
};

namespace {

constexpr auto kDeadline = std::chrono::seconds(10);

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<MetricsServer::Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {
    ++shared_->active;
  }
  ~Session() { --shared_->active; }

  void read() {
    parser_.emplace();
    parser_->header_limit(MetricsServer::kMaxRequestBytes);
    parser_->body_limit(MetricsServer::kMaxRequestBytes);
    stream_.expires_after(kDeadline);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) return close();
    const auto& req = parser_->get();
    res_ = respond(req);
    stream_.expires_after(kDeadline);
    http::async_write(stream_, res_,
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

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{MetricsServer::kMaxRequestBytes};
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::shared_ptr<MetricsServer::Shared> shared_;
};

}  // namespace

MetricsServer::MetricsServer(boost::asio::io_context& io, Render render)
    : acceptor_(io), retry_(io), shared_(std::make_shared<Shared>(Shared{std::move(render), 0})) {}

MetricsServer::~MetricsServer() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  retry_.cancel();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::listen(boost::asio::io_context& io,
                                                             const std::string& address, int port,
                                                             const std::string& origin,
                                                             Render render) {
  std::unique_ptr<MetricsServer> s(new MetricsServer(io, std::move(render)));
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(address, ec);
  if (ec) return Error{exit_code::kConfig, origin + ": \"" + address + "\" is not an IP address"};
  const tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  auto fail = [&](const char* what) {
    return Error{exit_code::kConfig, origin + "=" + std::to_string(port) + ": cannot " + what +
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
        if (shared->active >= kMaxConnections)
          socket.close(ec);
        else
          std::make_shared<Session>(std::move(socket), shared)->read();
        accept();
      });
}

}  // namespace tv
