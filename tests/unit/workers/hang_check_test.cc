#include "launcher/workers/hang_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace tv {
namespace {

using std::chrono::milliseconds;
using Seconds = std::chrono::duration<double>;

WorkerLook look(int local_rank, double silent, bool heartbeat = false) {
  return {local_rank, 10 + local_rank, Seconds(silent), heartbeat};
}

TEST(HangCheck, OffWithNeitherRule) {
  HangCheck h(milliseconds(0), std::nullopt);
  EXPECT_FALSE(h.on());
  EXPECT_FALSE(h.check(0, 1e6, {look(0, 1e6)}));
  EXPECT_FALSE(h.generation_started(0));
}

TEST(HangCheck, TheFirstRunningWorkerSilentForTheTimeoutIsHung) {
  HangCheck h(milliseconds(2000), std::nullopt);
  ASSERT_TRUE(h.on());
  EXPECT_FALSE(h.check(0, 5, {look(0, 1.9), look(1, 0.1)}));
  auto v = h.check(3, 5, {look(0, 0.5), look(1, 2.5), look(2, 3.0)});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->local_rank, 1);
  EXPECT_DOUBLE_EQ(v->waited, 2.5);
  EXPECT_FALSE(v->in_startup);
  EXPECT_EQ(v->reason, "");
  EXPECT_EQ(v->log, "rank 11: no output and no heartbeat for 2000 ms: treating it as hung");
  EXPECT_FALSE(h.reason_of(3));  // silence has no words of the progress rules
}

TEST(HangCheck, TheTickIsAQuarterOfTheShortestDeadlineWithinBounds) {
  EXPECT_EQ(HangCheck(milliseconds(2000), std::nullopt).tick(), milliseconds(500));
  EXPECT_EQ(HangCheck(milliseconds(100), std::nullopt).tick(), milliseconds(50));
  EXPECT_EQ(HangCheck(milliseconds(600000), std::nullopt).tick(), milliseconds(1000));
  // auto: the stall floor is the shortest deadline, whatever S says.
  EXPECT_EQ(HangCheck(milliseconds(0), StallRules{.floor = 1}).tick(), milliseconds(250));
}

TEST(HangCheck, AStartupVerdictNamesTheFirstRunningRankAndKeepsItsReason) {
  HangCheck h(milliseconds(0), StallRules{.floor = 1, .startup_timeout = 10.0});
  auto rules = h.generation_started(100);
  ASSERT_TRUE(rules);
  EXPECT_NE(rules->find("10"), std::string::npos) << *rules;
  EXPECT_FALSE(h.check(0, 109, {look(2, 9), look(3, 9)}));
  EXPECT_FALSE(h.check(0, 111, {}));  // nobody running: nobody to name
  auto v = h.check(0, 111, {look(2, 11), look(3, 11)});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->local_rank, 2);
  EXPECT_TRUE(v->in_startup);
  EXPECT_NE(v->log.find("generation 0: start-up: no first step"), std::string::npos) << v->log;
  EXPECT_EQ(h.reason_of(0), v->reason);
  EXPECT_FALSE(h.reason_of(1));
}

TEST(HangCheck, AHeartbeatChangeOrAHigherStepIsProgressAndAStaleStepIsNot) {
  HangCheck h(milliseconds(0), StallRules{.floor = 1, .startup_timeout = 10.0});
  h.generation_started(0);
  h.progress_seen(9, 5);  // the first step, within the start-up deadline
  EXPECT_FALSE(h.check(0, 18, {look(0, 0)}));
  h.progress_seen(18, 5);  // the same step again: no progress
  EXPECT_TRUE(h.check(0, 19.5, {look(0, 0)}));
  // A new generation: its steps count from nothing, and a heartbeat is a step too.
  h.generation_started(100);
  h.progress_seen(101, 1);
  EXPECT_FALSE(h.check(1, 109, {look(0, 0, /*heartbeat=*/true)}));
  EXPECT_FALSE(h.check(1, 118, {look(0, 0)}));
  EXPECT_TRUE(h.check(1, 120, {look(0, 0)}));
}

TEST(HangCheck, ASaveUnderWayHoldsTheStall) {
  HangCheck h(milliseconds(0), StallRules{.floor = 1, .startup_timeout = 10.0});
  h.generation_started(0);
  h.progress_seen(1, 1);
  h.save_started(2);
  EXPECT_FALSE(h.check(0, 15, {look(0, 0)}));
  h.save_ended(16, 14);
  EXPECT_FALSE(h.check(0, 17, {look(0, 0)}));
}

TEST(HangCheck, TheNodesSilenceIsItsMostRecentlyActiveWorkers) {
  EXPECT_DOUBLE_EQ(HangCheck::node_silence({}), 0);
  EXPECT_DOUBLE_EQ(HangCheck::node_silence({look(0, 7), look(1, 3), look(2, 9)}), 3);
}

}  // namespace
}  // namespace tv
