#include "launcher/node/root_cause_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/unit/fakes/temp_dir.h"

namespace tv {
namespace {

using testing::TempDir;

FailureRecord own_record(int generation, int node_rank) {
  FailureRecord r;
  r.generation = generation;
  r.node_rank = node_rank;
  r.rank = 3;
  r.local_rank = 1;
  r.traceback = {"Traceback (most recent call last):", "  File \"train.py\", line 7",
                 "ValueError: bad batch"};
  return r;
}

Ending gave_up(int generation, int node_rank) {
  Ending e;
  e.kind = Ending::Kind::kGaveUp;
  e.failure = node_failure(generation, node_rank, 1, "rank 3 (node 1, local 1): exit 1: boom");
  e.failure->verdict = "giving up: the same failure twice";
  e.failure->recent = {"generation 0: rank 3: boom", "generation 1: rank 3: boom"};
  return e;
}

std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RootCauseFiles, ASuccessOrAStopTellsNothing) {
  Ending e;
  e.kind = Ending::Kind::kStopped;
  e.signal = 15;
  EXPECT_FALSE(root_cause_texts(e, {own_record(0, 1)}, [](int) { return "x"; }));
}

TEST(RootCauseFiles, ThisNodesOwnRootCauseCarriesItsTracebackAndEvidence) {
  std::vector<int> asked;
  const auto texts =
      root_cause_texts(gave_up(1, 1), {own_record(0, 1), own_record(1, 1)}, [&asked](int g) {
        asked.push_back(g);
        return "evidence of generation " + std::to_string(g) + "\n";
      });
  ASSERT_TRUE(texts);
  EXPECT_EQ(asked, std::vector<int>{1});  // only the root cause's generation is read
  const std::string& f = texts->failure_file;
  EXPECT_NE(f.find("ValueError: bad batch"), std::string::npos) << f;
  EXPECT_NE(f.find("evidence of generation 1"), std::string::npos) << f;
  EXPECT_NE(f.find("giving up: the same failure twice"), std::string::npos) << f;
  // The last generations' causes are the termination log's only.
  EXPECT_EQ(f.find("last generations' root causes"), std::string::npos) << f;
  EXPECT_NE(texts->termination_log.find("last generations' root causes:\n  generation 0"),
            std::string::npos)
      << texts->termination_log;
}

// Issue 53: a hang on node 1 while node 0's rank waits. Every node sent where its ranks were, and
// the give-up relays them all: node 0's failure file names node 1's frame too.
TEST(RootCauseFiles, AHangsFilesListWhereEveryNodesRanksWere) {
  Ending e = gave_up(0, 1);
  e.failure->exit_code = 124;
  e.failure->summary = "rank 1 (node 1, local 0): hang (no output or heartbeat)";
  e.failure->ranks = {{0, 0, "all_reduce (/x/worker.py:14)", false, {}},
                      {1, 1, "load_batch (/x/worker.py:9)", false, {}},
                      {2, 1, "", true, {}},
                      {3, 1, "", false, {7, "nccl:all_reduce", "0", "started"}}};
  const auto texts = root_cause_texts(e, {own_record(0, 0)}, [](int) { return std::string(); });
  ASSERT_TRUE(texts);
  const std::string& f = texts->failure_file;
  EXPECT_NE(f.find("stacks on hang (attempt 0, every node):\n"
                   "  rank 0 (node 0): main thread in all_reduce (/x/worker.py:14)\n"
                   "  rank 1 (node 1): main thread in load_batch (/x/worker.py:9)\n"
                   "  rank 2 (node 1): wrote no stack within 3 s\n"),
            std::string::npos)
      << f;
  EXPECT_EQ(f.find("rank 3 (node 1)"), std::string::npos) << f;  // a collective alone: no stack
  EXPECT_NE(texts->termination_log.find("main thread in load_batch"), std::string::npos);
  // Node 1's own root cause: its stacks are in its evidence; the other nodes' follow them.
  FailureRecord hung = own_record(0, 1);
  const auto own = root_cause_texts(e, {hung}, [](int) { return std::string("own stacks\n"); });
  EXPECT_NE(own->failure_file.find("own stacks\nstacks on hang (attempt 0, the other nodes):\n"
                                   "  rank 0 (node 0): main thread in all_reduce"),
            std::string::npos)
      << own->failure_file;
  EXPECT_EQ(own->failure_file.find("rank 1 (node 1): main"), std::string::npos)
      << own->failure_file;
}

// Node 0's table is the job's: every judged generation's root cause, from whichever node, then
// its own of a generation not judged; elsewhere, the node's own.
TEST(RootCauseFiles, TheTableIsTheJobsWhereThisNodeJudged) {
  NodeFailure peer = node_failure(0, 1, 1, "rank 3 (node 1, local 1): exit 1: ValueError: boom");
  peer.rank = 3;
  NodeFailure fault = node_failure(1, 2, 75, "node 2 lost");
  FailureRecord own = own_record(2, 0);
  own.rank = 0;
  own.local_rank = 0;
  const std::string table = root_cause_table({peer, fault}, {own_record(0, 0), own});
  EXPECT_EQ(table,
            "generation  rank  node  exit  root cause\n"
            "0           3     1     1     exit 1: ValueError: boom\n"
            "1           -     2     75    node 2 lost\n"
            "2           0     0     1     exit 1: ValueError: bad batch\n");
  EXPECT_EQ(root_cause_table({}, {own}), format_failure_table({own}));
  EXPECT_EQ(root_cause_table({}, {}), "");
}

TEST(RootCauseFiles, AnotherNodesRootCauseIsItsSummaryLineNotTheCollateralHere) {
  const auto texts = root_cause_texts(gave_up(1, 2), {own_record(1, 1)}, [](int) {
    ADD_FAILURE() << "no evidence is read for another node's root cause";
    return std::string();
  });
  ASSERT_TRUE(texts);
  EXPECT_EQ(texts->failure_file.rfind("rank 3 (node 1, local 1): exit 1: boom\n", 0), 0u)
      << texts->failure_file;
  EXPECT_EQ(texts->failure_file.find("ValueError"), std::string::npos);
}

TEST(RootCauseFiles, ANodeFaultIsItsOwnText) {
  Ending e;
  e.kind = Ending::Kind::kNodeFault;
  e.failure = node_failure(0, 0, 74, "node 0: GPU 1: Xid 79");
  e.fault = "GPU 1 (00000000:1B:00.0) fell off the bus (Xid 79): this node is faulty";
  const auto texts = root_cause_texts(e, {}, [](int) { return std::string(); });
  ASSERT_TRUE(texts);
  EXPECT_EQ(texts->failure_file, e.fault + "\n");
}

TEST(RootCauseFiles, TheFailureFileKeepsTheFirstReasonAndTheLogIsReplaced) {
  TempDir tmp("tv-root-cause");
  const RootCausePaths paths{(tmp.path() / "failure").string(),
                             (tmp.path() / "termination-log").string()};
  EXPECT_TRUE(write_root_cause_files(paths, {"first\n", "first log\n"}));
  EXPECT_FALSE(write_root_cause_files(paths, {"second\n", "second log\n"}));
  EXPECT_EQ(text_of(paths.failure_file), "first\n");
  EXPECT_EQ(text_of(paths.termination_log), "second log\n");
  // Each file is cut at its reader's limit.
  const std::string big(5000, 'x');
  std::filesystem::remove(paths.failure_file);
  write_root_cause_files(paths, {big, big});
  EXPECT_EQ(std::filesystem::file_size(paths.failure_file), kFailureFileLimit);
  EXPECT_EQ(std::filesystem::file_size(paths.termination_log), kTerminationLogLimit);
}

}  // namespace
}  // namespace tv
