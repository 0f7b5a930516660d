// StandbySet with no process: standbys are FakeSpawner children (their control socket and output
// pipes real descriptors, the test speaking for the bootstrap), their ages on a SimLoopTime.
#include "launcher/workers/standby_set.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

class StandbySetTest : public ::testing::Test {
 protected:
  StandbySetTest() {
    cfg_.mode = WarmMode::kOn;
    env_ = {Environment({{"RANK", "0"}, {"OMP_NUM_THREADS", "4"}}),
            Environment({{"RANK", "1"}, {"OMP_NUM_THREADS", "4"}})};
  }
  std::unique_ptr<StandbySet> make() {
    return StandbySet::create(io_, time_, cfg_, "/usr/bin/python3", argv_, 2, spawner_,
                              [this](pid_t pid, int status) {
                                exits_.push_back({pid, status});
                              });
  }

  // StandbySet arms no timer (SimLoopTime polls only the loops of its timers): run the loop here.
  void run() {
    io_.restart();
    io_.poll();
  }
  // Prepares every rank's standby; the one of `rank` then says `said` (the bootstrap's lines).
  pid_t prepare_and_say(StandbySet& set, int rank, const std::string& said) {
    set.prepare(env_);
    const pid_t pid = spawner_.spawned()[static_cast<size_t>(rank)];
    spawner_.write_stdin(pid, said);
    run();
    return pid;
  }

  boost::asio::io_context io_;
  testing::SimLoopTime time_;
  testing::FakeSpawner spawner_{io_};
  WarmStandbyConfig cfg_;
  std::vector<std::string> argv_ = {"python3", "-u", "train.py", "--epochs", "2"};
  std::vector<Environment> env_;
  std::vector<std::pair<pid_t, int>> exits_;
};

TEST_F(StandbySetTest, OffOrNotPythonIsNoSet) {
  cfg_.mode = WarmMode::kOff;
  EXPECT_EQ(make(), nullptr);
  cfg_.mode = WarmMode::kOn;
  argv_ = {"/opt/train/worker"};
  EXPECT_EQ(make(), nullptr);
  EXPECT_TRUE(spawner_.spawned().empty());
}

TEST_F(StandbySetTest, AReadyStandbyBecomesTheWorkerWithItsEnvironmentAndPipes) {
  auto set = make();
  ASSERT_NE(set, nullptr);
  set->prepare(env_);
  ASSERT_EQ(spawner_.spawned().size(), 2u);
  const pid_t s0 = spawner_.spawned()[0];
  const SpawnRequest& req = spawner_.child(s0).req;
  EXPECT_EQ(req.executable, "/usr/bin/python3");
  ASSERT_EQ(req.argv.size(), 7u);
  EXPECT_EQ(req.argv[2], "-c");  // the bootstrap is on the command line, never in a file
  EXPECT_EQ((std::vector<std::string>(req.argv.begin() + 4, req.argv.end())),
            (std::vector<std::string>{"script", "train.py", "torch"}));
  EXPECT_TRUE(req.ignore_user_signals);
  EXPECT_EQ(req.env.get("RANK"), "0");
  EXPECT_EQ(set->pids(), (std::set<pid_t>{s0, spawner_.spawned()[1]}));

  // Not ready yet: rank 0 starts cold, its standby stays for the next time.
  int out_r = -1, err_r = -1;
  EXPECT_FALSE(set->take(0, 0, env_[0], argv_, &out_r, &err_r));
  spawner_.write_stdin(s0, "R\n");  // the bootstrap: imports done
  run();

  Environment next = env_[0];
  next.set("MASTER_PORT", "29501");  // per attempt: does not keep it from serving
  const auto pid = set->take(0, 0, next, argv_, &out_r, &err_r);
  ASSERT_EQ(pid, s0);
  EXPECT_EQ(spawner_.priority_restored, std::vector<pid_t>{s0});
  const std::string sent = spawner_.read_stdin(s0);
  EXPECT_NE(sent.find("\"MASTER_PORT\":\"29501\""), std::string::npos) << sent;
  EXPECT_NE(sent.find("\"--epochs\""), std::string::npos) << sent;
  ASSERT_GE(out_r, 0);
  ASSERT_GE(err_r, 0);
  spawner_.write(s0, "hello from the standby\n");
  char buf[64] = {};
  EXPECT_EQ(::read(out_r, buf, sizeof buf), 23);
  EXPECT_EQ(std::string(buf), "hello from the standby\n");
  ::close(out_r);
  ::close(err_r);
  EXPECT_EQ(set->pids(), std::set<pid_t>{spawner_.spawned()[1]});  // s0 is a worker now
  EXPECT_TRUE(spawner_.child(s0).signals.empty());
}

TEST_F(StandbySetTest, TheActivationCarriesTheEnvironmentTheStandbyWasStartedWith) {
  auto set = make();
  // The bootstrap under Isaac Sim: a note (it imports nothing), then ready.
  const pid_t s0 =
      prepare_and_say(*set, 0, "N ISAAC_PATH is set: the standby imports nothing\nR\n");
  Environment next = env_[0];
  next.set("MASTER_PORT", "29501");
  int out_r = -1, err_r = -1;
  ASSERT_EQ(set->take(0, 0, next, argv_, &out_r, &err_r), s0);
  const std::string sent = spawner_.read_stdin(s0);
  const auto j = nlohmann::json::parse(sent.substr(sent.find('\n') + 1));
  EXPECT_EQ(j["env"]["MASTER_PORT"], "29501");
  // What it was spawned with: the bootstrap applies what changed since (a wrapper's exports).
  EXPECT_EQ(j["launch_env"], nlohmann::json(spawner_.child(s0).req.env.vars()));
  EXPECT_FALSE(j["launch_env"].contains("MASTER_PORT"));
  ::close(out_r);
  ::close(err_r);
}

TEST_F(StandbySetTest, ADifferentImportEnvironmentKillsTheStandbyAndStartsCold) {
  auto set = make();
  const pid_t s1 = prepare_and_say(*set, 1, "R\n");
  Environment changed = env_[1];
  changed.set("OMP_NUM_THREADS", "8");
  int out_r = -1, err_r = -1;
  EXPECT_FALSE(set->take(1, 1, changed, argv_, &out_r, &err_r));
  EXPECT_EQ(spawner_.child(s1).signals, std::vector<int>{SIGKILL});
  EXPECT_EQ(out_r, -1);
}

TEST_F(StandbySetTest, NoPriorityRestoreMeansNoStandbysAtAll) {
  spawner_.priority_refused = "setpriority: Permission denied";
  auto set = make();
  set->prepare(env_);
  for (pid_t p : spawner_.spawned()) spawner_.write_stdin(p, "R\n");
  run();
  int out_r = -1, err_r = -1;
  EXPECT_FALSE(set->take(0, 0, env_[0], argv_, &out_r, &err_r));
  for (pid_t p : spawner_.spawned())
    EXPECT_EQ(spawner_.child(p).signals, std::vector<int>{SIGKILL});
  set->prepare(env_);  // off for good: nothing more is started
  EXPECT_EQ(spawner_.spawned().size(), 2u);
}

TEST_F(StandbySetTest, AnImportFailureTurnsStandbysOffAndShutdownWaitsForTheKilled) {
  auto set = make();
  set->prepare(env_);
  const pid_t s0 = spawner_.spawned()[0], s1 = spawner_.spawned()[1];
  spawner_.write_stdin(s0, "E import torch failed: No module named 'torch'\n");
  run();
  spawner_.exit_code(s0, 1);
  run();
  ASSERT_EQ(exits_.size(), 1u);
  EXPECT_TRUE(set->on_exit(s0, exits_[0].second));
  set->prepare(env_);  // off: rank 0 gets no new standby
  EXPECT_EQ(spawner_.spawned().size(), 2u);

  set->shutdown();
  EXPECT_EQ(spawner_.child(s1).signals, std::vector<int>{SIGKILL});
  EXPECT_FALSE(set->all_gone());  // killed, not reaped yet
  run();
  ASSERT_EQ(exits_.size(), 2u);
  EXPECT_EQ(exits_[1], (std::pair<pid_t, int>{s1, W_EXITCODE(0, SIGKILL)}));
  EXPECT_TRUE(set->on_exit(s1, exits_[1].second));
  EXPECT_TRUE(set->all_gone());
  EXPECT_FALSE(set->on_exit(4242, 0));  // not a standby
}

}  // namespace
}  // namespace tv
