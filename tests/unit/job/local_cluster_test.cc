// LocalCluster, the one-node job's Cluster, on a simulated LoopTime (tests/unit/fakes): the
// restart pauses of the job state machine (docs/supervision.md, "Restarts") are checked to the
// nanosecond without sleeping; time moves only in SimLoopTime::advance.
#include "launcher/job/local_cluster.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::SimLoopTime;

constexpr int kBasePort = 29500;

class LocalClusterTest : public ::testing::Test {
 protected:
  void join(int max_restarts) {
    RestartPolicy policy;
    policy.max_restarts = max_restarts;
    cluster_.emplace(io_, policy, kBasePort, "127.0.0.1", time_);
    Cluster::Events ev;
    ev.start = [this](const GenerationPlan& p) { starts_.push_back({p, time_.now()}); };
    ev.stop = [this](const NodeFailure& f) { stops_.push_back(f); };
    ev.done = [this] { done_ = true; };
    ev.give_up = [this](const NodeFailure& f) { gave_up_ = f; };
    ev.lost = [](const std::string&, int) { FAIL() << "a one-node job is never lost"; };
    cluster_->join(ev);
    time_.run_ready();
  }

  // Generation `gen`'s workers fail now and are gone at once, as the Supervisor reports it.
  void fail(int gen) {
    cluster_->report_failure(
        node_failure(gen, 0, 1, "rank 0: exit 1 (generation " + std::to_string(gen) + ")"));
    time_.run_ready();
    cluster_->report_stopped(gen, {}, std::nullopt);
    time_.run_ready();
  }

  struct Start {
    GenerationPlan plan;
    LoopClock::time_point at;
  };
  boost::asio::io_context io_;
  SimLoopTime time_;
  std::optional<LocalCluster> cluster_;
  std::vector<Start> starts_;
  std::vector<NodeFailure> stops_;
  bool done_ = false;
  std::optional<NodeFailure> gave_up_;
};

TEST_F(LocalClusterTest, FirstRestartIsImmediateQuickSuccessionsPauseAndGrow) {
  join(5);
  ASSERT_EQ(starts_.size(), 1u);
  EXPECT_EQ(starts_[0].plan.generation, 0);
  EXPECT_EQ(starts_[0].plan.master_port, kBasePort);

  time_.advance(3s);
  fail(0);  // the first restart: no pause at all
  ASSERT_EQ(starts_.size(), 2u);
  EXPECT_EQ(starts_[1].plan.generation, 1);
  EXPECT_EQ(starts_[1].at, time_.now());
  EXPECT_NE(starts_[1].plan.master_port, kBasePort);  // a fresh port from the kernel
  EXPECT_EQ(stops_.size(), 1u);

  // Generation 1 fails 1 s in (quick succession): 0.1 s, not a nanosecond less.
  time_.advance(1s);
  fail(1);
  const auto failed = time_.now();
  time_.advance(100ms - 1ns);
  EXPECT_EQ(starts_.size(), 2u);
  time_.advance(1ns);
  ASSERT_EQ(starts_.size(), 3u);
  EXPECT_EQ(starts_[2].plan.generation, 2);
  EXPECT_EQ(starts_[2].at, failed + 100ms);

  // Quick again: 0.2 s.
  fail(2);
  time_.advance(200ms - 1ns);
  EXPECT_EQ(starts_.size(), 3u);
  time_.advance(1ns);
  ASSERT_EQ(starts_.size(), 4u);
  EXPECT_EQ(starts_[3].plan.generation, 3);

  // Generation 3 ran 10 s (JobStateMachine::kSettled): a crash after a long run restarts at once.
  time_.advance(JobStateMachine::kSettled);
  fail(3);
  ASSERT_EQ(starts_.size(), 5u);
  EXPECT_EQ(starts_[4].at, time_.now());
  EXPECT_FALSE(done_ || gave_up_);
}

TEST_F(LocalClusterTest, GivesUpWithTheRootCauseWhenRestartsRunOut) {
  join(2);
  fail(0);
  fail(1);
  time_.advance(100ms);
  ASSERT_EQ(starts_.size(), 3u);
  fail(2);                         // the second restart was the last one allowed
  EXPECT_EQ(time_.pending(), 0u);  // no pause armed: nothing more will start
  ASSERT_TRUE(gave_up_);
  EXPECT_EQ(gave_up_->generation, 2);
  EXPECT_EQ(gave_up_->exit_code, 1);
  EXPECT_NE(gave_up_->verdict.find("restarts exhausted"), std::string::npos) << gave_up_->verdict;
  time_.advance(1h);
  EXPECT_EQ(starts_.size(), 3u);
}

TEST_F(LocalClusterTest, LeavingDuringThePauseStartsNothing) {
  join(3);
  fail(0);
  fail(1);  // a 0.1 s pause is armed
  ASSERT_EQ(time_.pending(), 1u);
  cluster_->leave(15, "");
  time_.advance(1s);
  EXPECT_EQ(starts_.size(), 2u);
  EXPECT_FALSE(done_ || gave_up_);
}

TEST_F(LocalClusterTest, SuccessEndsTheJob) {
  join(3);
  cluster_->report_success(0);
  time_.run_ready();
  EXPECT_TRUE(done_);
  EXPECT_EQ(starts_.size(), 1u);
}

}  // namespace
}  // namespace tv
