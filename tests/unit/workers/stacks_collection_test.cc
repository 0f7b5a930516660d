// StacksCollection on simulated time with a FakeSpawner and the workers' stacks files in a
// FakeFileSystem (the report, <work dir>/stacks.txt, is a real file): who is signalled,
// the bounded wait, the report, a hang's evidence kept by generation, a second hang joining the
// first collection.
#include "launcher/workers/stacks_collection.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/init.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/fakes/temp_dir.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::FakeFileSystem;
using testing::FakeSpawner;
using testing::SimLoopTime;
using testing::TempDir;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class StacksCollectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int r = 0; r < 2; ++r) {
      const pid_t pid = *spawner_.spawn(SpawnRequest{"/w", {"w"}, {}, -1, -1, -1}, nullptr);
      workers_.push_back({r, pid, dir_ + "/stacks_" + std::to_string(r) + ".txt"});
    }
  }
  void header(int r, pid_t pid) {
    fs_.add_file(workers_[r].stacks_path, "# trainvisor stacks: pid " + std::to_string(pid) +
                                              " main thread 0x00007f0" + std::to_string(r) + "\n");
  }
  void dump(int r, const std::string& fn) {
    fs_.append(workers_[r].stacks_path,
               "Current thread 0x00007f0" + std::to_string(r) +
                   " (most recent call first):\n  File \"/x/train.py\", line " +
                   std::to_string(5 + r) + " in " + fn + "\n");
  }
  const std::vector<int>& signalled(int r) {
    return spawner_.child(workers_[r].pid).process_signals;
  }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  FakeFileSystem fs_;
  TempDir tmp_{"tv-stacks"};
  std::string dir_ = tmp_.path();
  std::vector<StacksCollection::Worker> workers_;
};

TEST_F(StacksCollectionTest, OnlyAWorkerWhoseHeaderNamesItIsSignalledAndItsFrameIsReported) {
  StacksCollection c(io_, time_, spawner_, fs_, dir_, 1);
  header(0, workers_[0].pid);
  header(1, 1);  // another pid: its default action would kill whatever it is
  int thens = 0;
  c.collect(
      "on request", 0, workers_, true, [&] { ++thens; }, false);
  EXPECT_TRUE(c.busy());
  EXPECT_EQ(signalled(0), std::vector<int>{stacks_signal()});
  EXPECT_TRUE(signalled(1).empty());
  dump(0, "step");
  time_.advance(50ms);  // grown
  EXPECT_EQ(thens, 0);
  time_.advance(50ms);  // settled
  EXPECT_EQ(thens, 1);
  EXPECT_FALSE(c.busy());
  const std::string report = read_file(dir_ + "/stacks.txt");
  EXPECT_NE(report.find("# trainvisor stacks #1"), std::string::npos) << report;
  EXPECT_NE(report.find("rank 0 (pid " + std::to_string(workers_[0].pid) +
                        "): main thread in step (/x/train.py:5)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("rank 1 (pid " + std::to_string(workers_[1].pid) +
                        "): no stack: its stacks file names pid 1"),
            std::string::npos)
      << report;
  EXPECT_EQ(c.hang_report(0), "");  // a request is no hang's evidence
  EXPECT_TRUE(c.hang_evidence(0).empty());
}

TEST_F(StacksCollectionTest, AHangsCollectionIsKeptAndASilentRankIsSaidAfterThreeSeconds) {
  StacksCollection c(io_, time_, spawner_, fs_, dir_, 1);
  header(0, workers_[0].pid);
  header(1, workers_[1].pid);
  int thens = 0;
  c.hang_then("on hang", 2, workers_, true, [&] { ++thens; });
  c.hang_then("on node 0's hang", 2, workers_, true, [&] { ++thens; });  // joins the first
  dump(0, "load_batch");  // rank 1 writes nothing: SIGSTOPped, stuck in C code
  time_.advance(2900ms);
  EXPECT_EQ(thens, 0);
  time_.advance(200ms);
  EXPECT_EQ(thens, 2);
  const auto ev = c.hang_evidence(2);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0], (RankEvidence{0, 1, "load_batch (/x/train.py:5)", false, {}}));
  EXPECT_EQ(ev[1], (RankEvidence{1, 1, "", true, {}}));
  EXPECT_NE(c.hang_report(2).find("stacks on hang (attempt 2)"), std::string::npos);
  EXPECT_NE(c.hang_report(2).find("no stack written within 3 s"), std::string::npos);
  EXPECT_EQ(c.hang_report(1), "");
}

TEST_F(StacksCollectionTest, WorkersWithoutTheHookAreEachSaidAndNothingIsSignalled) {
  StacksCollection c(io_, time_, spawner_, fs_, dir_, 0);
  bool then = false;
  c.collect(
      "on request", 0, workers_, false, [&] { then = true; }, false);
  time_.advance(3100ms);
  EXPECT_TRUE(then);
  EXPECT_TRUE(signalled(0).empty());
  EXPECT_TRUE(signalled(1).empty());
  EXPECT_NE(read_file(dir_ + "/stacks.txt").find("not a Python worker with trainvisor's hook"),
            std::string::npos);
  c.collect("on request", -1, {}, false, nullptr, false);  // none running (a restart's pause)
  time_.advance(3100ms);
  EXPECT_NE(read_file(dir_ + "/stacks.txt").find("stacks on request (before generation 0)"),
            std::string::npos);
  EXPECT_NE(read_file(dir_ + "/stacks.txt").find("no running worker"), std::string::npos);
}

}  // namespace
}  // namespace tv
