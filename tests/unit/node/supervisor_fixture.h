// The Supervisor's unit-test fixture (tests/unit/node/supervisor_test.cc and
// supervisor_states_test.cc): its event loop with no process, no signal and no sleep, a
// FakeSpawner for the workers (tests/unit/workers/fake_spawner.h), a FakeCluster that decides
// as LocalCluster does, FakeSignals in place of Init, and a SimLoopTime whose clock moves only in
// advance(). A test calls begin(), drives the loop through the clock (SimLoopTime polls the
// io_context) and reads the exit code from end() once over().
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "launcher/node/supervisor.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/fakes/fake_off_loop.h"
#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/fakes/temp_dir.h"
#include "tests/unit/job/fake_cluster.h"
#include "tests/unit/node/fake_signals.h"
#include "tests/unit/workers/fake_rank_dirs.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv::testing {

using namespace std::chrono_literals;

inline constexpr auto kGrace = 5000ms;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline int count(const std::vector<int>& v, int x) {
  return static_cast<int>(std::ranges::count(v, x));
}

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_.layout.nproc_per_node = 2;
    cfg_.executable = "/opt/train/worker";
    cfg_.argv = {"worker", "--lr", "0.1"};
    cfg_.base_env = Environment({{"PATH", "/usr/bin:/bin"}});
    cfg_.grace = kGrace;
    cfg_.work_dir = dir_;
    cfg_.failure_file = dir_ + "/failure.txt";
    cfg_.off_loop = &off_loop_;          // a resume lookup waits until the test releases it
    cfg_.log_off_loop = &log_off_loop_;  // the rank directories and heartbeats: never slow
  }
  void TearDown() override { sup_.reset(); }

  // Joins the (fake) cluster and runs everything that is ready: generation 0 is spawned.
  void begin(int restarts = 0) {
    cluster_ = std::make_unique<FakeCluster>(io_, restarts);
    sup_ = std::make_unique<Supervisor>(io_, cfg_, *cluster_, spawner_, time_, signals_);
    sup_->begin();
    time_.run_ready();
  }
  // The workers spawned for `generation`, by local rank.
  std::vector<pid_t> workers(int generation) {
    std::vector<pid_t> out;
    for (pid_t p : spawner_.spawned())
      if (spawner_.child(p).req.env.get("TORCHELASTIC_RESTART_COUNT") == std::to_string(generation))
        out.push_back(p);
    return out;
  }
  const std::vector<int>& signals_of(pid_t pid) { return spawner_.child(pid).signals; }
  // Worker `pid` writes its error file (in fs_) with `message`, its mtime `ns`.
  void write_error_file(pid_t pid, const std::string& message, std::int64_t ns) {
    const auto path = spawner_.child(pid).req.env.get("TORCHELASTIC_ERROR_FILE");
    ASSERT_TRUE(path);
    fs_.add_file(*path, R"({"message": ")" + message + "\"}");
    fs_.touch(*path, ns);
  }
  // The one failure reported: its exit code, time, and the rank and message its summary names.
  void expect_reported(int exit_code, std::int64_t failed_at_ns, const std::string& rank,
                       const std::string& message) {
    ASSERT_EQ(cluster_->failures.size(), 1u);
    const NodeFailure& f = cluster_->failures[0];
    EXPECT_EQ(f.exit_code, exit_code);
    EXPECT_EQ(f.failed_at_ns, failed_at_ns);
    EXPECT_NE(f.summary.find(rank + " "), std::string::npos) << f.summary;
    EXPECT_NE(f.summary.find(message), std::string::npos) << f.summary;
  }
  int end() {
    EXPECT_TRUE(sup_->over());
    return sup_->end();
  }
  // Another node's socket closes without a word; the workers end of the SIGTERM they get.
  int end_after_peer_lost() {
    begin();
    const auto w = workers(0);
    cluster_->peer_lost("node 1 lost: closed by peer");
    time_.run_ready();
    for (pid_t p : w) {
      EXPECT_EQ(signals_of(p).front(), SIGTERM);
      spawner_.exit(p, W_EXITCODE(0, SIGTERM));
    }
    time_.run_ready();
    return end();
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  FakeSignals signals_;
  FakeFileSystem fs_;       // what cfg_.fs reads, where a test sets it
  FakeRankDirs rank_dirs_;  // what cfg_.rank_dirs opens, where a test sets it
  FakeOffLoop off_loop_;    // where cfg_.find_resume's lookups run
  FakeOffLoop log_off_loop_{
      /*hold=*/false};  // where the rank directories are opened, the heartbeats read
  TempDir tmp_{"tv-supervisor"};
  std::string dir_ = tmp_.path();
  SupervisorConfig cfg_;
  std::unique_ptr<FakeCluster> cluster_;
  std::unique_ptr<Supervisor> sup_;
};

}  // namespace tv::testing
