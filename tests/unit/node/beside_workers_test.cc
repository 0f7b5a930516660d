// BesideWorkers on simulated time with a FakeSpawner: nothing starts before start(), which starts
// the GPU watch and each side query once, at the lowest CPU priority; at the end a side query is
// given until its deadline to answer (an answer ends the wait at once), or is killed at once when
// the run was stopped by a signal; the watch is stopped either way.
#include "launcher/node/beside_workers.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::FakeSpawner;
using testing::SimLoopTime;

class BesideWorkersTest : public ::testing::Test {
 protected:
  BesideWorkers& make(bool watch) {
    SideQueryRequest q;
    q.request = request("gpu-health");
    q.deadline = 10s;
    q.done = [this](const SideQueryEnd& e) { answers_.push_back(e.output); };
    std::optional<SpawnRequest> w;
    if (watch) w = request("gpu-watch");
    beside_ = std::make_unique<BesideWorkers>(
        io_, time_, spawner_, w, [](const GpuHealthEvent&) {}, std::vector{q});
    return *beside_;
  }
  static SpawnRequest request(const std::string& query) {
    SpawnRequest r;
    r.executable = "/bin/trainvisor";
    r.argv = {"trainvisor", "__query", query};
    return r;
  }
  pid_t spawned_with(const std::string& word) {
    for (pid_t p : spawner_.spawned())
      if (spawner_.child(p).req.argv.at(2) == word) return p;
    return -1;
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  std::unique_ptr<BesideWorkers> beside_;
  std::vector<std::string> answers_;
};

TEST_F(BesideWorkersTest, StartedOnceAtTheLowestPriorityAndNotBefore) {
  BesideWorkers& b = make(/*watch=*/true);
  EXPECT_TRUE(spawner_.spawned().empty());
  b.start();
  b.start();
  ASSERT_EQ(spawner_.spawned().size(), 2u);
  for (pid_t p : spawner_.spawned()) EXPECT_TRUE(spawner_.child(p).req.background) << p;
  EXPECT_EQ(b.gpu_watch_pid(), spawned_with("gpu-watch"));
  EXPECT_FALSE(b.gone());
  b.stop(/*await_answers=*/false);
  time_.run_ready();  // the watch's SIGKILL, reaped
  EXPECT_TRUE(b.gone());
}

TEST_F(BesideWorkersTest, TheEndWaitsForAnAnswerUntilItComes) {
  BesideWorkers& b = make(/*watch=*/false);
  EXPECT_EQ(b.gpu_watch_pid(), 0);
  EXPECT_TRUE(b.gone());
  b.start();
  const pid_t q = spawned_with("gpu-health");
  spawner_.write(q, "{\"gpus\": 8}\n");
  spawner_.exit_code(q, 0);
  b.stop(/*await_answers=*/true);
  EXPECT_EQ(answers_, std::vector<std::string>{"{\"gpus\": 8}\n"});
  EXPECT_TRUE(spawner_.child(q).signals.empty());
}

TEST_F(BesideWorkersTest, ASilentQueryIsKilledAtItsDeadlineOrAtOnceAfterASignal) {
  BesideWorkers& b = make(/*watch=*/false);
  b.start();
  const pid_t q = spawned_with("gpu-health");
  const auto before = time_.now();
  b.stop(/*await_answers=*/true);
  EXPECT_GE(time_.now() - before, 10s);  // simulated: its deadline, not a moment less
  EXPECT_EQ(spawner_.child(q).signals.front(), SIGKILL);

  BesideWorkers& stopped = make(/*watch=*/false);
  stopped.start();
  const pid_t q2 = spawner_.spawned().back();
  const auto at = time_.now();
  stopped.stop(/*await_answers=*/false);
  EXPECT_EQ(time_.now(), at);
  EXPECT_EQ(spawner_.child(q2).signals.front(), SIGKILL);
}

}  // namespace
}  // namespace tv
