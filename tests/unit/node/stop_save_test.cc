// A confirmed save before a stop (launcher/node/stop_save.h), pure: which checkpoint is the
// save, the window inside the grace period, the steps saved and lost, --save-signal's values.
#include "launcher/node/stop_save.h"

#include <gtest/gtest.h>

#include <csignal>

namespace tv {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const LoopClock::time_point t0{};
constexpr std::int64_t kStopNs = 1'000'000'000'000;

TEST(StopSave, TheWindowLeavesTheWorkersAPartOfTheGracePeriod) {
  EXPECT_EQ(StopSave::window(seconds(25)), seconds(20));               // a fifth kept
  EXPECT_EQ(StopSave::window(seconds(110)), seconds(88));              // SageMaker
  EXPECT_EQ(StopSave::window(seconds(3)), seconds(2));                 // at least 1 s kept
  EXPECT_EQ(StopSave::window(milliseconds(1000)), milliseconds(500));  // at most half
}

TEST(StopSave, ACheckpointCompletedAfterTheStopIsTheSave) {
  StopSave s;
  s.begin(SIGUSR1, kStopNs, t0, seconds(10), SavedCheckpoint{"/c/agent_30.pt", 30, kStopNs - 5});
  EXPECT_TRUE(s.waiting());
  EXPECT_EQ(s.outcome().saved_step, 30);  // what stands if no save comes
  // Older than the stop (a save that finished before it, reported late): not the save.
  EXPECT_FALSE(s.offer({"/c/agent_30.pt", 30, kStopNs - 5}, t0 + milliseconds(10)));
  EXPECT_FALSE(s.offer({"/c/agent_31.pt", 31, kStopNs - 1}, t0 + milliseconds(10)));
  EXPECT_TRUE(s.waiting());
  EXPECT_TRUE(s.offer({"/c/agent_34.pt", 34, kStopNs}, t0 + milliseconds(1500)));
  EXPECT_FALSE(s.waiting());
  s.set_last_step(36);
  const auto& o = s.outcome();
  EXPECT_TRUE(o.completed);
  EXPECT_DOUBLE_EQ(o.waited_seconds, 1.5);
  EXPECT_EQ(o.path, "/c/agent_34.pt");
  EXPECT_EQ(o.saved_step, 34);
  EXPECT_EQ(o.lost_steps, 2);
  EXPECT_DOUBLE_EQ(o.window_seconds, 8.0);
}

TEST(StopSave, TheNewestKnownReportedAgainInTheStopsTickIsNoSave) {
  StopSave s;
  s.begin(SIGUSR1, kStopNs, t0, seconds(10), SavedCheckpoint{"/c/best.pt", -1, kStopNs});
  EXPECT_FALSE(s.offer({"/c/best.pt", -1, kStopNs}, t0));
  EXPECT_TRUE(s.offer({"/c/best.pt", -1, kStopNs + 1}, t0));  // rewritten after the stop
}

TEST(StopSave, NoSaveInTheWindowCountsFromTheNewestBefore) {
  StopSave s;
  s.begin(SIGUSR2, kStopNs, t0, seconds(10), SavedCheckpoint{"/c/agent_30.pt", 30, kStopNs - 5});
  s.expire(t0 + seconds(8));
  s.set_last_step(45);
  EXPECT_FALSE(s.waiting());
  EXPECT_FALSE(s.offer({"/c/agent_46.pt", 46, kStopNs + 9}, t0 + seconds(9)));  // too late
  const auto& o = s.outcome();
  EXPECT_FALSE(o.completed);
  EXPECT_DOUBLE_EQ(o.waited_seconds, 8.0);
  EXPECT_EQ(o.saved_step, 30);
  EXPECT_EQ(o.lost_steps, 15);
  EXPECT_TRUE(o.path.empty());
}

TEST(StopSave, StepsUnknownLeaveTheLossUnknown) {
  StopSave s;
  s.begin(SIGUSR1, kStopNs, t0, seconds(10), std::nullopt);
  EXPECT_TRUE(s.offer({"/c/ckpt", -1, kStopNs + 1}, t0));
  s.set_last_step(12);
  EXPECT_FALSE(s.outcome().saved_step);
  EXPECT_FALSE(s.outcome().lost_steps);
}

TEST(StopSave, SaveSignalValues) {
  EXPECT_EQ(*save_signal_number("USR1"), SIGUSR1);
  EXPECT_EQ(*save_signal_number("SIGUSR2"), SIGUSR2);
  EXPECT_EQ(*save_signal_number("10"), 10);
  EXPECT_EQ(*save_signal_number("RTMIN+2"), SIGRTMIN + 2);
  for (const char* bad : {"TERM", "SIGINT", "HUP", "KILL", "STOP", "CHLD", "USR3", "", "0", "99"}) {
    auto r = save_signal_number(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().exit_code(), 78);
    EXPECT_EQ(r.error().message.rfind("--save-signal \"" + std::string(bad) + "\": ", 0), 0u)
        << r.error().message;
  }
}

}  // namespace
}  // namespace tv
