// A WorkerRoster of simulated workers for unit tests: WorkerProcesses on real pipes whose pids
// are FakeSpawner children, error files in a FakeFileSystem, times on SimLoopTime.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "launcher/workers/worker_env.h"
#include "launcher/workers/worker_roster.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv::testing {

// A wall-clock time `s` seconds into a test, and the same in ns (an error file's mtime).
inline std::chrono::system_clock::time_point at_s(int s) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000 + s));
}
inline std::int64_t ns_of(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

class RosterFixture : public ::testing::Test {
 protected:
  void SetUp() override { roster_.new_generation(3); }
  void TearDown() override {
    roster_.release();
    time_.run_ready();
  }
  // This node: node 2 of a job of 3 workers per node.
  static WorkerLayout layout() {
    WorkerLayout l;
    l.nnodes = 3;
    l.node_rank = 2;
    l.nproc_per_node = 3;
    return l;
  }
  // Worker `local_rank` (global rank 6 + local_rank) of generation 0, its files under
  // /w/rank_<local_rank>/. `held`: a grandchild's copies of its pipes' write ends, which keep its
  // streams open after its exit.
  std::shared_ptr<WorkerProcess> start(int local_rank, std::vector<int>* held = nullptr) {
    const std::string dir = "/w/rank_" + std::to_string(local_rank);
    WorkerProcess::Identity id{local_rank,
                               global_rank(layout(), local_rank),
                               0,
                               dir + "/error.json",
                               dir + "/heartbeat",
                               dir + "/stacks.txt",
                               "",
                               false};
    auto w = std::make_shared<WorkerProcess>(io_, time_, spawner_, id, -1);
    const pid_t pid = *spawner_.spawn(SpawnRequest{}, nullptr);
    int out_w = -1, err_w = -1;
    EXPECT_TRUE(w->open_pipes(&out_w, &err_w));
    if (held) *held = {::dup(out_w), ::dup(err_w)};
    roster_.add(w, pid);
    ::close(out_w);  // as WorkerStart does after the spawn: the child has its own copies
    ::close(err_w);
    return w;
  }
  // Its error file, written at `s` seconds.
  void error_file(int local_rank, int s, const std::string& message = "boom") {
    const std::string path = "/w/rank_" + std::to_string(local_rank) + "/error.json";
    fs_.add_file(path, R"({"message": ")" + message + R"("})");
    fs_.touch(path, ns_of(at_s(s)));
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  FakeFileSystem fs_;
  std::vector<WorkerEnd> over_;  // the ends on_over was given, in order
  WorkerRoster roster_{io_, fs_, [this](const auto&, const WorkerEnd& e) { over_.push_back(e); }};
};

}  // namespace tv::testing
