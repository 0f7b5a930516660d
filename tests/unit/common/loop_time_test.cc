// LoopTime: the real one is Asio's steady_timer; the simulated one (tests/unit/fakes/) answers as
// it does (order, cancel, re-arm, destruction), which the same checks run against both show.
#include "common/loop_time.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <string>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::SimLoopTime;

std::string outcome(const boost::system::error_code& ec) {
  return ec == boost::asio::error::operation_aborted ? "aborted" : ec ? ec.message() : "fired";
}

TEST(SimLoopTime, FiresInDeadlineOrderWithNowAtEachDeadline) {
  boost::asio::io_context io;
  SimLoopTime time;
  const auto t0 = time.now();
  LoopTimer late(io, time), early(io, time);
  std::vector<std::string> seen;
  late.expires_after(3s);
  late.async_wait([&](auto ec) {
    seen.push_back("late " + outcome(ec) + " at " + std::to_string((time.now() - t0) / 1s));
  });
  early.expires_after(1s);
  early.async_wait([&](auto ec) {
    seen.push_back("early " + outcome(ec) + " at " + std::to_string((time.now() - t0) / 1s));
  });
  time.advance(999ms);
  EXPECT_TRUE(seen.empty());
  time.advance(5s);
  EXPECT_EQ(seen, (std::vector<std::string>{"early fired at 1", "late fired at 3"}));
  EXPECT_EQ(time.now() - t0, 5999ms);
  EXPECT_EQ(time.pending(), 0u);
}

TEST(SimLoopTime, AHandlerThatArmsAgainInsideTheWindowFiresInItsTurn) {
  boost::asio::io_context io;
  SimLoopTime time;
  LoopTimer ticker(io, time);
  int ticks = 0;
  std::function<void()> arm = [&] {
    ticker.expires_after(100ms);
    ticker.async_wait([&](auto ec) {
      if (ec) return;
      ++ticks;
      arm();
    });
  };
  arm();
  time.advance(1s);
  EXPECT_EQ(ticks, 10);
  EXPECT_EQ(time.pending(), 1u);
}

// The same contract, checked against Asio's own timer and the simulated one.
template <class Drive>
std::vector<std::string> cancel_rearm_destroy(boost::asio::io_context& io, LoopTime& time,
                                              Drive drive) {
  std::vector<std::string> seen;
  LoopTimer a(io, time);
  a.expires_after(0ms);
  a.async_wait([&](auto ec) { seen.push_back("a1 " + outcome(ec)); });
  a.expires_after(0ms);  // ends the first wait
  a.async_wait([&](auto ec) { seen.push_back("a2 " + outcome(ec)); });
  {
    LoopTimer b(io, time);
    b.expires_after(1h);
    b.async_wait([&](auto ec) { seen.push_back("b " + outcome(ec)); });
  }  // destroyed: aborted
  LoopTimer c(io, time);
  c.expires_after(1h);
  c.async_wait([&](auto ec) { seen.push_back("c " + outcome(ec)); });
  EXPECT_EQ(c.cancel(), 1u);
  EXPECT_EQ(c.cancel(), 0u);
  drive();
  std::sort(seen.begin(), seen.end());
  return seen;
}

TEST(LoopTime, SimulatedAnswersAsAsiosSteadyTimerDoes) {
  const std::vector<std::string> expected{"a1 aborted", "a2 fired", "b aborted", "c aborted"};
  boost::asio::io_context real_io;
  EXPECT_EQ(cancel_rearm_destroy(real_io, real_loop_time(), [&] { real_io.run(); }), expected);
  boost::asio::io_context sim_io;
  SimLoopTime sim;
  EXPECT_EQ(cancel_rearm_destroy(sim_io, sim, [&] { sim.run_ready(); }), expected);
}

TEST(SimLoopTime, AWaitAlreadyDueRunsWithSuccessEvenWhenCancelledAfter) {
  boost::asio::io_context io;
  SimLoopTime time;
  LoopTimer first(io, time), second(io, time);
  std::string got;
  std::size_t cancelled = 9;
  // Both due at once: the first's handler cancels the second, whose handler is already posted.
  first.expires_after(1s);
  first.async_wait([&](auto) { cancelled = second.cancel(); });
  second.expires_after(1s);
  second.async_wait([&](auto ec) { got = outcome(ec); });
  time.advance(1s);
  EXPECT_EQ(cancelled, 0u);
  EXPECT_EQ(got, "fired");
}

TEST(SimLoopTime, AdvanceToNextStopsAtTheNextDeadline) {
  boost::asio::io_context io;
  SimLoopTime time;
  const auto t0 = time.now();
  EXPECT_FALSE(time.advance_to_next());
  LoopTimer t(io, time);
  t.expires_after(25s);
  bool fired = false;
  t.async_wait([&](auto ec) { fired = !ec; });
  EXPECT_EQ(time.next_deadline(), t0 + 25s);
  EXPECT_TRUE(time.advance_to_next());
  EXPECT_TRUE(fired);
  EXPECT_EQ(time.now() - t0, 25s);
}

}  // namespace
}  // namespace tv
