// SaveBeforeStop (launcher/node/save_before_stop.h) on simulated time: the save signal
// first, the stop once a checkpoint newer than the stop is reported or the window is over, the
// SIGKILL still at the stop + the grace period, and the outcome told exactly once.
#include "launcher/node/save_before_stop.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::SimLoopTime;

constexpr std::int64_t kStopNs = 1'000'000'000'000;
constexpr auto kGrace = 10s;

class SaveBeforeStopTest : public ::testing::Test {
 protected:
  SaveBeforeStop::Hooks hooks() {
    return {[this](int sig) { forwarded_.push_back(sig); },
            [this](int sig) { stopped_.push_back(sig); },
            [] { return std::optional<std::int64_t>(40); },
            [this](const StopSaveOutcome& o) { told_.push_back(o); }};
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  std::vector<int> forwarded_, stopped_;
  std::vector<StopSaveOutcome> told_;
  SaveBeforeStop saves_{io_, time_, SIGUSR1, kGrace, [] { return kStopNs; }, hooks()};
};

TEST_F(SaveBeforeStopTest, ASaveNewerThanTheStopEndsTheWaitAndTheStopFollows) {
  saves_.checkpoint_complete({"/c/agent_30.pt", 30, kStopNs - 5});  // before the stop
  const auto stop = time_.now();
  saves_.begin(SIGTERM, SIGINT);
  EXPECT_EQ(forwarded_, (std::vector<int>{SIGUSR1}));
  EXPECT_TRUE(stopped_.empty());
  EXPECT_EQ(saves_.kill_at(), stop + kGrace);
  time_.advance(1500ms);
  saves_.checkpoint_complete({"/c/agent_30.pt", 30, kStopNs - 5});  // reported again: not it
  EXPECT_TRUE(stopped_.empty());
  saves_.checkpoint_complete({"/c/agent_34.pt", 34, kStopNs + 1});
  EXPECT_EQ(stopped_, (std::vector<int>{SIGINT}));  // the stop's own signal
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_TRUE(told_[0].completed);
  EXPECT_EQ(told_[0].saved_step, 34);
  EXPECT_EQ(told_[0].lost_steps, 6);  // the last step, 40
  EXPECT_DOUBLE_EQ(told_[0].waited_seconds, 1.5);
  time_.advance(kGrace);  // the window's timer was cancelled: nothing more
  saves_.run_ended();
  EXPECT_EQ(stopped_.size(), 1u);
  EXPECT_EQ(told_.size(), 1u);
}

TEST_F(SaveBeforeStopTest, NoSaveInTheWindowStopsWithoutItAtTheWindowsEnd) {
  saves_.begin(SIGTERM, SIGTERM);
  const auto window = StopSave::window(kGrace);
  time_.advance(window - 1ms);
  EXPECT_TRUE(stopped_.empty());
  time_.advance(1ms);
  EXPECT_EQ(stopped_, (std::vector<int>{SIGTERM}));
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_FALSE(told_[0].completed);
  saves_.checkpoint_complete({"/c/agent_34.pt", 34, kStopNs + 1});  // too late: no second stop
  EXPECT_EQ(stopped_.size(), 1u);
  EXPECT_EQ(told_.size(), 1u);
}

TEST_F(SaveBeforeStopTest, ARunThatEndsDuringTheWaitIsToldOnceAndStopsNothing) {
  EXPECT_FALSE(saves_.kill_at());  // no stop yet: the plain grace period
  saves_.begin(SIGTERM, SIGTERM);
  time_.advance(200ms);
  saves_.run_ended();
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_FALSE(told_[0].completed);
  EXPECT_TRUE(stopped_.empty());
  time_.advance(kGrace);  // the window's timer was cancelled
  EXPECT_TRUE(stopped_.empty());
  EXPECT_EQ(told_.size(), 1u);
}

}  // namespace
}  // namespace tv
