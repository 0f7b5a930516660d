// LoopTimeClock: the goodput accountant's seconds read off the event loop's LoopTime, so a test
// that simulates the loop's time simulates the accounting's too.
#include "launcher/observability/clock.h"

#include <gtest/gtest.h>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv {
namespace {

using namespace std::chrono_literals;

TEST(LoopTimeClock, ReadsTheLoopTimeInSeconds) {
  testing::SimLoopTime time;
  const LoopTimeClock clock(time);
  const double t = clock.now();
  EXPECT_DOUBLE_EQ(t, std::chrono::duration<double>(time.now().time_since_epoch()).count());
  time.advance(1500ms);
  EXPECT_NEAR(clock.now() - t, 1.5, 1e-9);
  EXPECT_GT(clock.unix_now(), 1.7e9);  // the Unix clock, not the loop's
}

}  // namespace
}  // namespace tv
