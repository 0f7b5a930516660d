// MetricsServer: `/metrics` (Prometheus text) and `/healthz` over HTTP/1.1 with Boost.Beast, on
// the supervisor's own io_context (no thread of its own). Every operation is asynchronous with a
// deadline, so a slow or silent client never blocks supervision. At most kMaxConnections are open
// at once, at most kMaxPerPeer from one address; a connection waits at most kIdleTimeout for each
// request. A new connection beyond a limit closes the oldest idle one (of that address, when it is
// the one at its limit): connections held open and silent never lock out a liveness probe, and
// every connection is accepted, so the backlog never fills. Requests are capped at
// kMaxRequestBytes. GET and HEAD only. The body is rendered per request by `render`. The deadlines
// are LoopTimers of the LoopTime it is given (common/loop_time.h), each closing its connection.
//
// /healthz answers "ok" whenever the event loop runs: a liveness probe that fails when
// trainvisor's loop is stuck, not when the training is failing (that is what /metrics says).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/loop_time.h"
#include "common/result.h"

namespace tv {

class MetricsServer {
 public:
  using Render = std::function<std::string()>;
  static constexpr int kMaxConnections = 8;
  static constexpr int kMaxPerPeer = 4;
  static constexpr std::chrono::seconds kIdleTimeout{5};
  static constexpr std::size_t kMaxRequestBytes = 8192;

  // Binds and listens at once, so a port in use is an error (exit 78, naming `origin`) before
  // anything starts; serving begins when the loop runs.
  static Result<std::unique_ptr<MetricsServer>> listen(boost::asio::io_context& io,
                                                       const std::string& address, int port,
                                                       const std::string& origin, Render render,
                                                       LoopTime& time = real_loop_time());
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  struct Shared;  // what sessions share with the server (render, connection count)

 private:
  MetricsServer(boost::asio::io_context& io, Render render, LoopTime& time);
  void accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  LoopTimer retry_;
  std::shared_ptr<Shared> shared_;
  int port_ = 0;
};

}  // namespace tv
