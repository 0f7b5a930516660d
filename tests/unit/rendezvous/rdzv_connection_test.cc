// Connection over real loopback sockets: what a peer sent before its connection died reaches
// on_message before on_close, also when the death shows first on a write (the peer closed with
// frames of ours unread, so its kernel answered with a reset).
#include "launcher/rendezvous/rdzv_connection.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <thread>

namespace tv::rdzv {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

const std::string kKey = "secret-token";

struct Pair {
  asio::io_context io;
  tcp::socket ours{io};
  tcp::socket theirs{io};

  Pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    ours.connect(acceptor.local_endpoint());
    acceptor.accept(theirs);
  }
};

// Waits (bounded) until the kernel has taken the peer's reset on `fd` (poll reports an error or
// a hang-up; reading SO_ERROR would clear it).
bool reset_seen(int fd) {
  for (int i = 0; i < 200; ++i) {
    pollfd pfd{fd, 0, 0};
    if (::poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(RdzvConnection, AFrameSentBeforeAResetIsDeliveredBeforeTheCloseAWriteSaw) {
  Pair p;
  const int fd = p.ours.native_handle();
  auto conn = std::make_shared<Connection>(std::move(p.ours), kKey, Direction::kToAgent);
  std::vector<std::string> seen;
  conn->start([&](const Message& m) { seen.push_back(type_name(m.type)); },
              [&](const std::string& why) { seen.push_back("closed: " + why); });
  conn->send(MsgType::kStopped, 1, 0);  // left unread by the peer
  p.io.poll();
  Message lost{MsgType::kLost, 0, 0, 0, {{"why", "node 0 is shutting down"}, {"signal", 15}}};
  asio::write(p.theirs, asio::buffer(encode(lost, kKey, Direction::kToAgent, Context{})));
  p.theirs.close();  // unread data: the kernel sends a reset, not a FIN
  ASSERT_TRUE(reset_seen(fd));
  conn->send(MsgType::kStopped, 1, 0);  // fails at once: the write's error is ready first
  p.io.run_for(std::chrono::seconds(2));
  ASSERT_EQ(seen.size(), 2u) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen[0], "lost");
  EXPECT_EQ(seen[1].rfind("closed: ", 0), 0u) << seen[1];
}

TEST(RdzvConnection, AWriteErrorWithNothingLeftToReadStillReportsTheCloseOnce) {
  Pair p;
  const int fd = p.ours.native_handle();
  auto conn = std::make_shared<Connection>(std::move(p.ours), kKey, Direction::kToAgent);
  int closes = 0;
  conn->start([](const Message&) {}, [&](const std::string&) { ++closes; });
  conn->send(MsgType::kStopped, 1, 0);
  p.io.poll();
  p.theirs.close();
  ASSERT_TRUE(reset_seen(fd));
  conn->send(MsgType::kStopped, 1, 0);
  p.io.run_for(std::chrono::seconds(2));
  EXPECT_EQ(closes, 1);
  EXPECT_TRUE(conn->closed());
  EXPECT_TRUE(conn->idle());
}

}  // namespace
}  // namespace tv::rdzv
