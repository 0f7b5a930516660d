// One OTLP/HTTP POST on the sender's io_context (otlp_exporter.h): resolve, connect, write, read
// the answer (at most 64 KiB), all under one deadline; `done` is called once, with "" when the
// collector answered 2xx, else one phrase saying what went wrong. `lookups` counts the host-name
// lookups running (getaddrinfo on Asio's resolver thread: nothing cancels one, and the
// io_context's destructor waits for it).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "launcher/observability/otlp_config.h"

namespace tv {

class OtlpRequest : public std::enable_shared_from_this<OtlpRequest> {
 public:
  using Done = std::function<void(const std::string& failure)>;
  OtlpRequest(boost::asio::io_context& io, const OtlpConfig& c,
              boost::beast::http::request<boost::beast::http::string_body> req,
              std::chrono::milliseconds timeout, int& lookups, Done done);
  void start();
  void abort();  // done("abandoned") at once unless it was already called

 private:
  using Endpoints = boost::asio::ip::tcp::resolver::results_type;
  void connect(const Endpoints& endpoints);
  void read();
  void fail(const std::string& what, const boost::system::error_code& ec);
  void finish(const std::string& failure);
  void on_read();

  std::string host_, port_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::beast::tcp_stream stream_;
  boost::asio::steady_timer deadline_;
  std::chrono::milliseconds timeout_;
  boost::beast::http::request<boost::beast::http::string_body> req_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser_;
  Done done_;
  bool timed_out_ = false;
  int& lookups_;  // the sender's count of host-name lookups running
};

}  // namespace tv
