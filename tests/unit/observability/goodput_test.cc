#include "launcher/observability/goodput.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "launcher/observability/ledger.h"
#include "tests/unit/observability/fake_clock.h"

namespace tv {
namespace {

double bad(const GoodputSnapshot& s, Badput b) { return s.badput[static_cast<std::size_t>(b)]; }
double phase(const GoodputSnapshot& s, Phase p) {
  return s.phase_seconds[static_cast<std::size_t>(p)];
}

class Goodput : public ::testing::Test {
 protected:
  void at(double t) { clock.set(t); }
  void steps(GoodputAccountant& g, std::int64_t from, std::int64_t to, double t_from, double dt) {
    for (std::int64_t k = from; k <= to; ++k) {
      at(t_from + static_cast<double>(k - from) * dt);
      g.progress({k, 100});
    }
  }
  FakeClock clock;
};

// The fail-once job of the integration test, in simulated time: progress lines every second, a
// checkpoint at step 5, a failure after step 10, a restart that resumes from step 5.
TEST_F(Goodput, FailOnceWithProgressAndCheckpoint) {
  GoodputConfig cfg;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  at(1), g.enter(Phase::kPreflight);
  at(3), g.enter(Phase::kRendezvous);
  at(4), g.resume_selected(std::nullopt), g.generation_started(0);
  steps(g, 0, 5, 6, 1);                             // steps 0..5 at t=6..11
  at(11.5), g.checkpoint_seen({0.5, -1, 1000, 5});  // written t=11..11.5
  steps(g, 6, 10, 12, 1);                           // steps 6..10 at t=12..16
  at(17.5), g.generation_failed(0);
  g.generation_failed(0);  // the cluster's stop event for the same generation: counted once
  at(19), g.resume_selected(5), g.generation_started(1);
  steps(g, 5, 20, 21, 1);  // steps 5..20 at t=21..36
  at(36.5), g.ending(0);
  at(37);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(s.wall, 37);
  const double sum = std::accumulate(s.phase_seconds.begin(), s.phase_seconds.end(), 0.0);
  EXPECT_DOUBLE_EQ(sum, s.wall);
  EXPECT_DOUBLE_EQ(phase(s, Phase::kInit), 1);
  EXPECT_DOUBLE_EQ(phase(s, Phase::kPreflight), 2);
  EXPECT_DOUBLE_EQ(phase(s, Phase::kRendezvous), 1);
  EXPECT_DOUBLE_EQ(phase(s, Phase::kRunning), 13.5 + 17.5);
  EXPECT_DOUBLE_EQ(phase(s, Phase::kRestarting), 1.5);
  EXPECT_DOUBLE_EQ(phase(s, Phase::kDraining), 0.5);
  EXPECT_EQ(s.restarts, 1);
  EXPECT_EQ(s.failures, 1);
  EXPECT_EQ(s.lost_steps, 5);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kLostProgress),
                   5 * 1.0 + 1.5);  // 5 steps + the 1.5 s after step 10
  EXPECT_DOUBLE_EQ(bad(s, Badput::kStartup), 2 + 2);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kCheckpointStall), 0.5);
  EXPECT_DOUBLE_EQ(s.productive, 31 - 4 - 0.5 - 6.5);
  const double badsum = std::accumulate(s.badput.begin(), s.badput.end(), 0.0);
  EXPECT_DOUBLE_EQ(badsum + s.productive, s.wall);
  EXPECT_DOUBLE_EQ(s.goodput, 20.0 / 37.0);
  EXPECT_EQ(s.step, 20);
  EXPECT_EQ(s.total_steps, 100);
  EXPECT_DOUBLE_EQ(*s.seconds_per_step, 1.0);
  EXPECT_EQ(s.checkpoints, 1);
  EXPECT_DOUBLE_EQ(*s.checkpoint_cost, 0.5);
  EXPECT_EQ(s.mtbf_source, "observed");
  EXPECT_DOUBLE_EQ(*s.mtbf, 37);
  EXPECT_DOUBLE_EQ(*s.advised_interval, std::sqrt(2 * 0.5 * 37));
  EXPECT_EQ(s.exit_code, 0);
}

TEST_F(Goodput, PhasesAddUpWhileRunning) {
  GoodputAccountant g(clock, {});
  at(2), g.generation_started(0);
  at(9.25);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(std::accumulate(s.phase_seconds.begin(), s.phase_seconds.end(), 0.0), 9.25);
  EXPECT_EQ(s.phase, Phase::kRunning);
  EXPECT_DOUBLE_EQ(s.productive, 7.25);  // no progress lines: every running second counts
}

TEST_F(Goodput, StartTimeBeforeTheAccountantExisted) {
  at(5);
  GoodputAccountant g(clock, {}, 2.0);
  at(6);
  EXPECT_DOUBLE_EQ(g.snapshot().wall, 4);
  EXPECT_DOUBLE_EQ(g.snapshot().phase_seconds[0], 4);
}

// Without a resume step (no --checkpoint-dir), the next generation's first step tells where it
// resumed.
TEST_F(Goodput, LostStepsFromTheNextGenerationsFirstStep) {
  GoodputAccountant g(clock, {});
  at(0), g.generation_started(0);
  steps(g, 0, 10, 1, 2);  // 2 s per step, step 10 at t=21
  at(22), g.generation_failed(0);
  at(23), g.generation_started(1);
  EXPECT_EQ(g.snapshot().lost_steps, 0);  // not known yet
  at(25), g.progress({7, std::nullopt});
  const auto s = g.snapshot();
  EXPECT_EQ(s.lost_steps, 3);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kLostProgress), 3 * 2.0 + 1);
  EXPECT_TRUE(s.lost_progress_known);
}

// No checkpoint to resume from while a checkpoint dir is watched: the job starts over at step 0.
TEST_F(Goodput, NoCheckpointMeansEverythingIsLost) {
  GoodputConfig cfg;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  at(0), g.generation_started(0);
  steps(g, 1, 4, 1, 1);
  at(5), g.generation_failed(0);
  at(6), g.resume_selected(std::nullopt), g.generation_started(1);
  EXPECT_EQ(g.snapshot().lost_steps, 4);
}

// No progress lines: the checkpoint the next generation resumes from marks what was kept.
TEST_F(Goodput, LostTimeFromCheckpointsWithoutProgress) {
  GoodputConfig cfg;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  at(0), g.generation_started(0);
  at(10), g.checkpoint_seen({2, -1, 10, -1});  // its state is from t=8
  at(15), g.generation_failed(0);
  at(16), g.resume_selected(-1), g.generation_started(1);
  at(20);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(bad(s, Badput::kLostProgress), 7);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kCheckpointStall), 2);
  EXPECT_EQ(s.lost_steps, 0);
}

TEST_F(Goodput, NothingToMeasureLostWorkWithIsSaidSo) {
  GoodputAccountant g(clock, {});
  at(0), g.generation_started(0);
  at(5), g.generation_failed(0);
  at(6), g.generation_started(1);
  EXPECT_FALSE(g.snapshot().lost_progress_known);
}

TEST_F(Goodput, LostTimeNeverExceedsRunningTime) {
  GoodputConfig cfg;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  at(0), g.generation_started(0);
  steps(g, 1000, 1002, 1, 1);
  at(4), g.generation_failed(0);
  at(5), g.resume_selected(0), g.generation_started(1);  // an old checkpoint: 1002 steps "lost"
  at(6);
  const auto s = g.snapshot();
  EXPECT_GE(s.productive, 0);
  EXPECT_DOUBLE_EQ(std::accumulate(s.badput.begin(), s.badput.end(), 0.0) + s.productive, s.wall);
}

// The checkpoint's cost from the gap it leaves in the progress lines when the watcher does not
// know how long the write took.
TEST_F(Goodput, CheckpointCostFromTheProgressGap) {
  GoodputAccountant g(clock, {});
  at(0), g.generation_started(0);
  steps(g, 0, 4, 0, 1);  // 1 s per step, step 4 at t=4
  at(4.5), g.checkpoint_seen({-1, -1, 10, 4});
  at(8), g.progress({5, std::nullopt});  // 4 s for one step: 3 s of stall
  const auto s = g.snapshot();
  ASSERT_TRUE(s.checkpoint_cost);
  EXPECT_DOUBLE_EQ(*s.checkpoint_cost, 3);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kCheckpointStall), 3);
}

// The example: C = 30 s, MTBF = 24 h gives about 2,300 s; four nodes fail four times as
// often.
TEST_F(Goodput, YoungDalyAdviceScalesWithNodes) {
  for (auto [nodes, expected] :
       {std::pair{1, std::sqrt(2.0 * 30 * 86400)}, std::pair{4, std::sqrt(2.0 * 30 * 21600)}}) {
    GoodputConfig cfg;
    cfg.nnodes = nodes;
    cfg.mtbf_hours = 24;
    GoodputAccountant g(clock, cfg);
    g.checkpoint_seen({30, -1, 1, -1});
    const auto s = g.snapshot();
    EXPECT_EQ(s.mtbf_source, "--mtbf-hours");
    EXPECT_NEAR(*s.advised_interval, expected, 1e-9);
  }
  EXPECT_NEAR(std::sqrt(2.0 * 30 * 86400), 2277, 1);
}

TEST_F(Goodput, NoAdviceWithoutCostOrMtbf) {
  GoodputAccountant g(clock, {});
  EXPECT_FALSE(g.snapshot().advised_interval);
  EXPECT_FALSE(g.snapshot().mtbf);
}

// The job of issue 39: progress until t=4.5, then silent; the hang verdict at t=10.5 (6 s after
// the last step), no restart left. The 6 s are badput "hang", not productive.
TEST_F(Goodput, TheTimeFromTheLastStepToTheHangVerdictIsHang) {
  GoodputAccountant g(clock, GoodputConfig{});
  at(0), g.generation_started(0);
  steps(g, 0, 7, 1, 0.5);  // steps 0..7 at t=1..4.5
  at(10.5), g.generation_hung(0, 6.0);
  g.generation_hung(0, 6.0);  // once per generation
  g.generation_failed(0);
  at(11), g.ending(124);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(bad(s, Badput::kHang), 6);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kStartup), 1);
  EXPECT_DOUBLE_EQ(s.productive, 3.5);  // steps 0..7: 3.5 s
  EXPECT_DOUBLE_EQ(s.goodput, 3.5 / 11);
  EXPECT_DOUBLE_EQ(phase(s, Phase::kRunning), 10.5);
  const double badsum = std::accumulate(s.badput.begin(), s.badput.end(), 0.0);
  EXPECT_DOUBLE_EQ(badsum + s.productive, s.wall);
  EXPECT_TRUE(s.progress_evidence);
}

// A hang that is restarted: the silence is hang, the steps done again lost progress, the stacks
// time after the verdict restart, nothing counted twice.
TEST_F(Goodput, AHungGenerationThatRestartsCountsItsSilenceOnceAsHang) {
  GoodputConfig cfg;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  at(0), g.generation_started(0);
  steps(g, 0, 4, 1, 1);  // steps 0..4 at t=1..5
  at(9), g.generation_hung(0, 4.0);
  at(10), g.generation_failed(0);  // 1 s of stacks collection after the verdict
  at(11), g.resume_selected(2), g.generation_started(1);
  steps(g, 2, 6, 12, 1);  // steps 2..6 at t=12..16
  at(16), g.ending(0);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(bad(s, Badput::kHang), 4);
  EXPECT_EQ(s.lost_steps, 2);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kLostProgress), 2 * 1.0);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kStartup), 1 + 1);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kRestart), 2);  // the verdict at 9 to the next start at 11
  EXPECT_DOUBLE_EQ(s.productive, 9 + 5 - 4 - 2 - 2);
}

// A job that prints no progress at all: the silence the verdict waited for is hang.
TEST_F(Goodput, AHangWithoutProgressLinesCountsTheSilence) {
  GoodputAccountant g(clock, GoodputConfig{});
  at(0), g.generation_started(0);
  at(10), g.generation_hung(0, 3.0);
  g.generation_failed(0);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(bad(s, Badput::kHang), 3);
  EXPECT_DOUBLE_EQ(s.productive, 7);
  EXPECT_FALSE(s.progress_evidence);
}

// --hang-timeout auto's start-up deadline passed: the whole window is startup, even in a job that
// has not printed a step yet (else it would be productive), and never hang.
TEST_F(Goodput, AnExpiredStartupIsStartupEvenBeforeAnyStep) {
  GoodputAccountant g(clock, GoodputConfig{});
  at(0), g.generation_started(0);
  at(20), g.generation_startup_expired(0);
  g.generation_hung(0, 20);  // no second verdict for the same generation
  g.generation_failed(0);
  at(22), g.generation_started(1);
  steps(g, 0, 4, 25, 1);  // its first step at 25: 3 s of startup
  at(30), g.ending(0);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(bad(s, Badput::kStartup), 20 + 3);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kHang), 0);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kRestart), 2);
  EXPECT_DOUBLE_EQ(*s.longest_startup, 3);
  const double badsum = std::accumulate(s.badput.begin(), s.badput.end(), 0.0);
  EXPECT_DOUBLE_EQ(badsum + s.productive, s.wall);
}

TEST_F(Goodput, AStartupVerdictAfterAWarmupStepIsAHangFromThatStep) {
  GoodputAccountant g(clock, GoodputConfig{});
  at(0), g.generation_started(0);
  steps(g, 0, 1, 4, 1);  // steps 0, 1 at t=4, 5
  at(25), g.generation_startup_expired(0);
  g.generation_failed(0);
  const auto s = g.snapshot();
  EXPECT_DOUBLE_EQ(bad(s, Badput::kStartup), 4);
  EXPECT_DOUBLE_EQ(bad(s, Badput::kHang), 20);
}

// The longest save measured goes to the ledger (--hang-timeout auto's prior in the next container).
TEST_F(Goodput, TheLongestSaveMeasuredIsInTheSnapshotAndTheRecord) {
  GoodputAccountant g(clock, GoodputConfig{});
  at(0), g.generation_started(0);
  EXPECT_FALSE(g.snapshot().longest_write_seconds);
  at(5), g.checkpoint_seen({3, -1, 100, 10});
  at(9), g.checkpoint_seen({5, 4, 100, 20});
  at(12), g.checkpoint_seen({-1, 3, 100, 30});  // unknown: not a measurement
  EXPECT_DOUBLE_EQ(*g.snapshot().longest_write_seconds, 5);
  EXPECT_DOUBLE_EQ(*record_from(g.snapshot(), 0, 0, 12, false).longest_save, 5);
}

// Node 1 of a job whose rank 0 alone prints progress: checkpoints show that steps were made, not
// when, so its goodput is flagged as an upper bound.
TEST_F(Goodput, ANodeWithCheckpointsButNoProgressLinesOfItsOwnIsAnUpperBound) {
  GoodputConfig cfg;
  cfg.nnodes = 2;
  cfg.node_rank = 1;
  cfg.checkpoints_watched = true;
  GoodputAccountant g(clock, cfg);
  at(0), g.generation_started(0);
  at(5), g.checkpoint_seen({0.5, -1, 10, 3});
  at(10);
  const auto s = g.snapshot();
  EXPECT_EQ(s.checkpoints, 1);
  EXPECT_FALSE(s.progress_evidence);
}

TEST_F(Goodput, WorkersAndExitCodes) {
  GoodputConfig cfg;
  cfg.nproc_per_node = 2;
  GoodputAccountant g(clock, cfg);
  g.generation_started(0);
  g.worker_started(), g.worker_started();
  g.worker_exited(1);
  auto s = g.snapshot();
  EXPECT_EQ(s.workers_up, 1);
  EXPECT_EQ(s.workers_expected, 2);
  g.worker_exited(143);
  s = g.snapshot();
  EXPECT_EQ(s.workers_up, 0);
  EXPECT_EQ(s.worker_exits, (std::map<int, long>{{1, 1}, {143, 1}}));
}

}  // namespace
}  // namespace tv
