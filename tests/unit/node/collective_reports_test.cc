// CollectiveReports on simulated time with a FakeSpawner: a report without dumps leaves at once,
// one with dumps waits for its reader's answer and holds back the reports asked after it, a
// reader that fails or overruns its deadline still lets its report leave (without collectives),
// and drop_all kills the readers and sends nothing more.
#include "launcher/node/collective_reports.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"
#include "tests/unit/workers/fake_spawner.h"

namespace tv {
namespace {

using namespace std::chrono_literals;
using testing::FakeSpawner;
using testing::SimLoopTime;

const std::string kRank1Line =
    "{\"rank\": 1, \"seq\": 6, \"op\": \"nccl:all_reduce\", \"group\": \"0\", \"state\": "
    "\"started\"}\n";

class CollectiveReportsTest : public ::testing::Test {
 protected:
  CollectiveReports::Send record(const std::string& name) {
    return [this, name](std::vector<RankEvidence> ranks) {
      sent_.push_back(name);
      evidence_[name] = std::move(ranks);
    };
  }
  std::vector<RankEvidence> one_rank(int rank) {
    RankEvidence r;
    r.rank = rank;
    r.node_rank = 0;
    return {r};
  }
  pid_t last_reader() const { return spawner_.spawned().back(); }

  boost::asio::io_context io_;
  SimLoopTime time_;
  FakeSpawner spawner_{io_};
  CollectiveReports reports_{io_, time_, spawner_, {"/usr/bin/python3", {}, 0}};
  std::vector<std::string> sent_;
  std::map<std::string, std::vector<RankEvidence>> evidence_;
};

TEST_F(CollectiveReportsTest, AReportWithoutDumpsLeavesAtOnceAndStartsNoChild) {
  reports_.add(0, {}, one_rank(1), record("failure"));
  EXPECT_EQ(sent_, std::vector<std::string>{"failure"});
  EXPECT_TRUE(spawner_.spawned().empty());
}

TEST_F(CollectiveReportsTest, AReportWaitsForItsDumpsAndHoldsBackTheReportsAskedAfterIt) {
  reports_.add(0, {"/w/attempt_0/rank_1/nccl_trace_rank_1"}, one_rank(1), record("failure"));
  ASSERT_EQ(spawner_.spawned().size(), 1u);
  const auto& argv = spawner_.child(last_reader()).req.argv;
  EXPECT_EQ(argv.front(), "/usr/bin/python3");
  EXPECT_EQ(argv.back(), "/w/attempt_0/rank_1/nccl_trace_rank_1");
  EXPECT_EQ(std::ranges::count(argv, std::string("--evidence")), 1);
  reports_.add(0, {}, one_rank(1), record("stopped"));
  time_.run_ready();
  EXPECT_TRUE(sent_.empty()) << "the Stopped waits for the failure's dumps";
  spawner_.write(last_reader(), kRank1Line);
  spawner_.exit_code(last_reader(), 0);
  time_.run_ready();
  ASSERT_EQ(sent_, (std::vector<std::string>{"failure", "stopped"}));
  ASSERT_EQ(evidence_["failure"].size(), 1u);
  EXPECT_EQ(evidence_["failure"][0].collective.seq, 6);
  EXPECT_EQ(evidence_["failure"][0].collective.op, "nccl:all_reduce");
  EXPECT_EQ(evidence_["stopped"][0].collective.seq, -1);  // it had no dumps of its own
}

TEST_F(CollectiveReportsTest, AReaderThatFailsLetsItsReportLeaveWithoutCollectives) {
  reports_.add(0, {"/w/d"}, one_rank(1), record("failure"));
  spawner_.write(last_reader(), kRank1Line);
  spawner_.exit_code(last_reader(), 1);
  time_.run_ready();
  ASSERT_EQ(sent_, std::vector<std::string>{"failure"});
  EXPECT_TRUE(evidence_["failure"][0].collective.op.empty());
}

TEST_F(CollectiveReportsTest, AReaderPastItsDeadlineIsKilledAndItsReportLeaves) {
  reports_.add(0, {"/w/d"}, one_rank(1), record("failure"));
  const pid_t reader = last_reader();
  time_.advance(9s);
  EXPECT_TRUE(sent_.empty());
  time_.advance(2s);
  const auto& signals = spawner_.child(reader).signals;
  EXPECT_NE(std::ranges::find(signals, SIGKILL), signals.end());
  spawner_.exit(reader, W_EXITCODE(0, SIGKILL));
  time_.run_ready();
  EXPECT_EQ(sent_, std::vector<std::string>{"failure"});
}

TEST_F(CollectiveReportsTest, DropAllKillsTheReadersAndSendsNothingMore) {
  reports_.add(0, {"/w/d"}, one_rank(1), record("failure"));
  reports_.add(0, {}, one_rank(1), record("stopped"));
  const pid_t reader = last_reader();
  reports_.drop_all();
  const auto& signals = spawner_.child(reader).signals;
  EXPECT_NE(std::ranges::find(signals, SIGKILL), signals.end());
  spawner_.exit(reader, W_EXITCODE(0, SIGKILL));
  time_.run_ready();
  EXPECT_TRUE(sent_.empty());
}

}  // namespace
}  // namespace tv
