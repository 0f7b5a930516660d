#include "launcher/observability/otlp_request.h"

#include <boost/asio/connect.hpp>

#include "common/escape.h"
#include "common/parse_number.h"

namespace tv {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

OtlpRequest::OtlpRequest(boost::asio::io_context& io, const OtlpConfig& c,
                         http::request<http::string_body> req, std::chrono::milliseconds timeout,
                         int& lookups, Done done)
    : host_(c.host),
      port_(c.port),
      resolver_(io),
      stream_(io),
      deadline_(io),
      timeout_(timeout),
      req_(std::move(req)),
      done_(std::move(done)),
      lookups_(lookups) {}

void OtlpRequest::start() {
  auto self = shared_from_this();
  deadline_.expires_after(timeout_);
  deadline_.async_wait([self](const boost::system::error_code& ec) {
    if (ec) return;
    self->timed_out_ = true;
    self->resolver_.cancel();
    boost::system::error_code ignored;
    self->stream_.socket().close(ignored);
  });
  // An address needs no lookup (and no resolver thread); a host name is getaddrinfo's.
  boost::system::error_code bad;
  const auto address = boost::asio::ip::make_address(host_, bad);
  const auto port = parse_integer<unsigned short>(port_, 1, 65535);
  if (!bad && port) return connect(Endpoints::create(tcp::endpoint(address, *port), host_, port_));
  ++lookups_;
  resolver_.async_resolve(host_, port_, [self](const boost::system::error_code& ec, Endpoints r) {
    --self->lookups_;
    if (ec) return self->fail("cannot resolve " + self->host_, ec);
    self->connect(r);
  });
}

void OtlpRequest::connect(const Endpoints& endpoints) {
  auto self = shared_from_this();
  stream_.async_connect(endpoints, [self](const boost::system::error_code& ec, auto) {
    if (ec) return self->fail("cannot connect to " + self->host_ + ":" + self->port_, ec);
    http::async_write(self->stream_, self->req_,
                      [self](const boost::system::error_code& ec2, std::size_t) {
                        if (ec2) return self->fail("cannot send", ec2);
                        self->read();
                      });
  });
}

void OtlpRequest::read() {
  auto self = shared_from_this();
  parser_.emplace();
  parser_->body_limit(64 * 1024);
  http::async_read(stream_, buffer_, *parser_,
                   [self](const boost::system::error_code& ec, std::size_t) {
                     if (ec) return self->fail("no answer", ec);
                     self->on_read();
                   });
}

void OtlpRequest::on_read() {
  const auto& res = parser_->get();
  const unsigned status = res.result_int();
  if (status >= 200 && status < 300) return finish("");
  std::string what = "HTTP ";  // piece by piece: GCC 12's -Wrestrict on "lit" + string&&
  what += std::to_string(status);
  if (!res.reason().empty()) {
    what += ' ';
    what += escape_control(res.reason());
  }
  if (!res.body().empty()) {
    what += ": ";
    what += escape_control(std::string_view(res.body()).substr(0, 200));
  }
  finish(what);
}

void OtlpRequest::fail(const std::string& what, const boost::system::error_code& ec) {
  if (timed_out_) {
    std::string what = "no answer within ";
    what += std::to_string(timeout_.count());
    what += " ms";
    return finish(what);
  }
  finish(what + ": " + ec.message());
}

void OtlpRequest::abort() {
  resolver_.cancel();
  boost::system::error_code ignored;
  stream_.socket().close(ignored);
  finish("abandoned at the exit deadline");
}

void OtlpRequest::finish(const std::string& failure) {
  deadline_.cancel();
  if (!done_) return;
  auto done = std::move(done_);
  done_ = nullptr;
  done(failure);
}

}  // namespace tv
