// NodeWorkers (launcher/node/node_workers.h): the WorkerGroup's actions carried out on a fake
// Spawner, and what the group decides told as Events, each with its data: every worker's end
// first, then the group's failure, success or stop; the root cause's held SIGTERM; the grace
// period's SIGKILL, at the save's kill time when there is one.
#include "launcher/node/node_workers.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <optional>
#include <vector>

#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/fakes/temp_dir.h"
#include "tests/unit/workers/fake_rank_dirs.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::FakeFileSystem;
using testing::FakeRankDirs;
using testing::FakeSpawner;
using testing::SimLoopTime;
using testing::TempDir;

class NodeWorkersTest : public ::testing::Test {
 protected:
  SupervisorConfig config() const {
    SupervisorConfig c;
    c.layout.nproc_per_node = 2;
    c.executable = "/opt/train/worker";
    c.argv = {"worker"};
    c.base_env = Environment({{"PATH", "/usr/bin:/bin"}});
    c.grace = 5000ms;
    c.work_dir = tmp_.path();
    return c;
  }
  EvidenceSetup evidence_setup() const {
    EvidenceSetup e;
    e.stacks = false;
    e.work_dir = tmp_.path();
    return e;
  }
  NodeWorkers::Events events() {
    NodeWorkers::Events ev;
    ev.over = [this](const WorkerEnd& e) {
      log_.push_back("over " + std::to_string(e.local_rank) + " " + std::to_string(e.exit_code));
    };
    // As LocalRootCause's: only the root cause's SIGTERM waits, never the grace period's SIGKILL.
    ev.holds_signal = [this](int local_rank, int sig) {
      return local_rank == held_ && sig == SIGTERM;
    };
    ev.kill_at = [this] { return kill_at_; };
    ev.failed = [this](int g, const WorkerEnd& first) {
      log_.push_back("failed " + std::to_string(g) + " rank " + std::to_string(first.local_rank));
    };
    ev.succeeded = [this](int g) { log_.push_back("succeeded " + std::to_string(g)); };
    ev.stopped = [this](int g) { log_.push_back("stopped " + std::to_string(g)); };
    return ev;
  }
  // Generation `g`'s rank directories opened (as the Supervisor does off the loop) and every
  // worker started; returns their pids by local rank.
  void TearDown() override {  // as the Supervisor's end: pending reads run while io_ lives
    workers_.release();
    io_.restart();
    io_.poll();
  }
  std::vector<pid_t> start(int g) {
    GenerationPlan plan;
    plan.generation = g;
    plan.master_port = 29500;
    workers_.place(plan);
    workers_.new_generation();
    EXPECT_TRUE(workers_.take_rank_dirs(g, workers_.rank_dirs_work(g)()));
    workers_.start(plan, std::nullopt);
    time_.run_ready();
    std::vector<pid_t> pids;
    for (int r = 0; r < 2; ++r) pids.push_back(workers_.roster().at(r) ? spawned_at(r) : -1);
    return pids;
  }
  pid_t spawned_at(int local_rank) {
    pid_t found = -1;
    for (pid_t p : spawner_.spawned())
      if (spawner_.child(p).req.env.get("LOCAL_RANK") == std::to_string(local_rank)) found = p;
    return found;
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  FakeFileSystem fs_;
  FakeRankDirs dirs_;
  TempDir tmp_{"tv-node-workers"};
  const SupervisorConfig cfg_ = config();  // before workers_, which keeps it
  EvidenceFiles evidence_{evidence_setup(), fs_};
  std::vector<std::string> log_;
  int held_ = -1;
  std::optional<LoopClock::time_point> kill_at_;
  NodeWorkers workers_{io_, time_, cfg_, spawner_, fs_, dirs_, evidence_, events()};
};

TEST_F(NodeWorkersTest, EveryWorkerExitingZeroIsTheGenerationsSuccess) {
  const auto pids = start(0);
  EXPECT_EQ(workers_.group().running(), 2);
  spawner_.exit_code(pids[0], 0);
  spawner_.exit_code(pids[1], 0);
  time_.advance(1s);  // each worker's output drained
  EXPECT_EQ(log_, (std::vector<std::string>{"over 0 0", "over 1 0", "succeeded 0"}));
}

TEST_F(NodeWorkersTest, AFailureStopsTheOthersAndTheirEndIsTheGroupsStop) {
  const auto pids = start(0);
  spawner_.exit_code(pids[1], 3);
  time_.advance(1s);
  EXPECT_EQ(log_, (std::vector<std::string>{"over 1 3", "failed 0 rank 1"}));
  EXPECT_EQ(spawner_.child(pids[0]).signals.front(), SIGTERM);  // the group's stop
  spawner_.exit(pids[0], W_EXITCODE(0, SIGTERM));
  time_.advance(1s);
  ASSERT_EQ(log_.size(), 4u);
  EXPECT_EQ(log_.back(), "stopped 0");
}

TEST_F(NodeWorkersTest, AHeldSignalIsNotSentAndTheGracePeriodEndsInSigkill) {
  const auto pids = start(0);
  held_ = 0;  // rank 0 is the root cause on its way out: its SIGTERM waits
  workers_.group().stop(SIGTERM);
  time_.run_ready();
  EXPECT_TRUE(spawner_.child(pids[0]).signals.empty());
  EXPECT_EQ(spawner_.child(pids[1]).signals.front(), SIGTERM);
  time_.advance(4900ms);
  EXPECT_TRUE(spawner_.child(pids[0]).signals.empty());
  time_.advance(200ms);  // the grace period is over: SIGKILL stands, held or not
  ASSERT_FALSE(spawner_.child(pids[0]).signals.empty());
  EXPECT_EQ(spawner_.child(pids[0]).signals.back(), SIGKILL);
  time_.advance(1s);
  EXPECT_EQ(log_.back(), "stopped 0");
}

TEST_F(NodeWorkersTest, AfterASavesWaitTheSigkillComesAtItsTime) {
  const auto pids = start(0);
  kill_at_ = time_.now() + 1s;  // SaveBeforeStop's: the stop + the grace, already under way
  workers_.group().stop(SIGTERM);
  time_.advance(900ms);
  ASSERT_FALSE(spawner_.child(pids[0]).signals.empty());
  EXPECT_NE(spawner_.child(pids[0]).signals.back(), SIGKILL);
  time_.advance(200ms);
  EXPECT_EQ(spawner_.child(pids[0]).signals.back(), SIGKILL);
}

TEST_F(NodeWorkersTest, AnEarlierGenerationsWorkerChangesNothing) {
  const auto old = start(0);
  spawner_.exit_code(old[0], 0);
  spawner_.exit_code(old[1], 0);
  time_.advance(1s);
  log_.clear();
  start(1);
  spawner_.exit(old[0], W_EXITCODE(1, 0));  // a late exit of a pid already over: not a worker now
  time_.advance(1s);
  EXPECT_TRUE(log_.empty());
  EXPECT_EQ(workers_.group().generation(), 1);
  EXPECT_EQ(workers_.group().running(), 2);
}

}  // namespace
}  // namespace tv
