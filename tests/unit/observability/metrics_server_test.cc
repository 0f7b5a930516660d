// The metrics server on a real loopback socket (port chosen by the kernel), its loop on a thread;
// its idle deadline on a simulated LoopTime (tests/unit/fakes/sim_loop_time.h), in one thread.
#include "launcher/observability/metrics_server.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <thread>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv {
namespace {

using boost::asio::ip::tcp;

class Server : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = MetricsServer::listen(io, "127.0.0.1", 0, "--metrics-port", [this] {
      ++renders;
      return std::string("trainvisor_up 1\n");
    });
    ASSERT_TRUE(s.ok()) << s.error().message;
    server = std::move(*s);
    loop = std::thread([this] { io.run(); });
  }
  void TearDown() override {
    io.stop();
    loop.join();
  }
  // One request on a fresh connection; the whole response as text ("" when the server closed it).
  std::string request(const std::string& text) {
    boost::asio::io_context cio;
    tcp::socket s(cio);
    s.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                            static_cast<unsigned short>(server->port())));
    // A server that drops a connection while the request is still being written (an oversized
    // one) makes this write fail with EPIPE or ECONNRESET: what it answered is read all the same.
    boost::system::error_code ec;
    boost::asio::write(s, boost::asio::buffer(text), ec);
    std::string out;
    boost::asio::read(s, boost::asio::dynamic_buffer(out), ec);
    return out;
  }
  std::string get(const std::string& path) {
    return request("GET " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  }

  boost::asio::io_context io;
  std::unique_ptr<MetricsServer> server;
  std::thread loop;
  std::atomic<int> renders{0};
};

TEST_F(Server, ServesMetricsAndHealth) {
  const auto m = get("/metrics");
  EXPECT_NE(m.find("HTTP/1.1 200"), std::string::npos) << m;
  EXPECT_NE(m.find("text/plain; version=0.0.4"), std::string::npos) << m;
  EXPECT_NE(m.find("trainvisor_up 1"), std::string::npos) << m;
  const auto h = get("/healthz");
  EXPECT_NE(h.find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(h.find("ok"), std::string::npos);
  EXPECT_EQ(renders.load(), 1);
}

TEST_F(Server, RefusesOtherPathsAndMethods) {
  EXPECT_NE(get("/nope").find("HTTP/1.1 404"), std::string::npos);
  const auto p = request(
      "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_NE(p.find("HTTP/1.1 405"), std::string::npos) << p;
  EXPECT_EQ(renders.load(), 0);
}

TEST_F(Server, KeepAliveServesSeveralRequestsOnOneConnection) {
  const std::string one = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
  const auto r =
      request(one + one + "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  std::size_t n = 0;
  for (auto pos = r.find("HTTP/1.1 200"); pos != std::string::npos;
       pos = r.find("HTTP/1.1 200", pos + 1))
    ++n;
  EXPECT_EQ(n, 3u) << r;
}

TEST_F(Server, OversizedRequestIsDropped) {
  const auto r =
      request("GET /metrics HTTP/1.1\r\nHost: t\r\nX: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
  EXPECT_EQ(r.find("HTTP/1.1 200"), std::string::npos);
  EXPECT_EQ(renders.load(), 0);
}

// Connections held open and silent (twice the limit, from the probe's own address) never lock out
// a probe: each new connection closes the oldest idle one, so the probe is answered at once and
// the oldest idle connection has been closed by the server.
TEST_F(Server, IdleConnectionsNeverLockOutAProbe) {
  boost::asio::io_context cio;
  const tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"),
                         static_cast<unsigned short>(server->port()));
  std::vector<tcp::socket> idle;
  for (int i = 0; i < 2 * MetricsServer::kMaxConnections; ++i) {
    idle.emplace_back(cio);
    idle.back().connect(ep);
  }
  EXPECT_NE(get("/healthz").find("HTTP/1.1 200"), std::string::npos);
  // Before the fix the ninth connection was closed unanswered while eight silent ones stayed.
  idle.front().non_blocking(true);
  char c = 0;
  boost::system::error_code ec;
  idle.front().read_some(boost::asio::buffer(&c, 1), ec);
  EXPECT_EQ(ec, boost::asio::error::eof) << ec.message();
  idle.back().non_blocking(true);
  idle.back().read_some(boost::asio::buffer(&c, 1), ec);
  EXPECT_EQ(ec, boost::asio::error::would_block) << ec.message();  // the newest is still open
}

// What a client socket sees without blocking: "open" (nothing to read yet), "closed" (EOF), or the
// bytes the server sent.
std::string peek(tcp::socket& s) {
  s.non_blocking(true);
  std::string got;
  std::array<char, 4096> buf{};
  for (;;) {
    boost::system::error_code ec;
    const auto n = s.read_some(boost::asio::buffer(buf), ec);
    got.append(buf.data(), n);
    if (ec == boost::asio::error::would_block) return got.empty() ? "open" : got;
    if (ec) return got.empty() ? "closed" : got;
  }
}

TEST(ServerIdle, ConnectionsCloseAtTheIdleDeadlineAndNotBefore) {
  boost::asio::io_context io;
  testing::SimLoopTime time;
  auto s = MetricsServer::listen(
      io, "127.0.0.1", 0, "--metrics-port", [] { return std::string("up 1\n"); }, time);
  ASSERT_TRUE(s.ok()) << s.error().message;
  boost::asio::io_context cio;
  const tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"),
                         static_cast<unsigned short>((*s)->port()));
  tcp::socket silent(cio), kept(cio);
  silent.connect(ep);
  kept.connect(ep);
  time.run_ready();  // both accepted now: each waits kIdleTimeout for a request
  const LoopClock::duration idle = MetricsServer::kIdleTimeout;  // halves in nanoseconds
  time.advance(idle / 2);
  boost::asio::write(kept,
                     boost::asio::buffer(std::string("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")));
  time.run_ready();  // answered, kept alive: its next request's window starts now
  EXPECT_NE(peek(kept).find("HTTP/1.1 200"), std::string::npos);
  time.advance(idle / 2 - std::chrono::nanoseconds(1));
  EXPECT_EQ(peek(silent), "open");
  time.advance(std::chrono::nanoseconds(1));
  EXPECT_EQ(peek(silent), "closed");
  EXPECT_EQ(peek(kept), "open");
  time.advance(idle / 2 - std::chrono::nanoseconds(1));
  EXPECT_EQ(peek(kept), "open");
  time.advance(std::chrono::nanoseconds(1));
  EXPECT_EQ(peek(kept), "closed");
}

TEST(ServerListen, PortInUseIsAnErrorNamingTheOption) {
  boost::asio::io_context io;
  auto first =
      MetricsServer::listen(io, "127.0.0.1", 0, "--metrics-port", [] { return std::string(); });
  ASSERT_TRUE(first.ok());
  auto second = MetricsServer::listen(io, "127.0.0.1", (*first)->port(), "--metrics-port",
                                      [] { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().exit_code(), 78);
  EXPECT_NE(second.error().message.find("--metrics-port"), std::string::npos);
  auto bad =
      MetricsServer::listen(io, "not-an-ip", 0, "--metrics-address", [] { return std::string(); });
  ASSERT_FALSE(bad.ok());
}

}  // namespace
}  // namespace tv
