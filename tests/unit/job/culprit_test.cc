#include "launcher/job/culprit.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

constexpr const char* kWait = "all_reduce (/w/train.py:12)";

// `n` ranks over nodes of `per_node`, every one waiting in kWait.
std::vector<RankEvidence> waiting(int n, int per_node) {
  std::vector<RankEvidence> out;
  for (int r = 0; r < n; ++r) out.push_back({r, r / per_node, kWait, false});
  return out;
}

TEST(Culprit, TheOneRankElsewhereIsNamedWithWhereTheOthersWait) {
  auto ranks = waiting(8, 4);
  ranks[5].frame = "load_batch (/w/data.py:30)";
  EXPECT_EQ(decide_culprit(ranks),
            "rank 5 on node 1 is in load_batch (/w/data.py:30); every other rank waits in "
            "all_reduce (/w/train.py:12)");
}

TEST(Culprit, ASilentRankIsTheCulpritWhateverTheOthersFrames) {
  auto ranks = waiting(4, 2);
  ranks[2] = {2, 1, "", true};
  ranks[3].frame = "barrier (/w/train.py:40)";  // no majority among the others is needed
  const auto c = decide_culprit(ranks);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rfind("rank 2 on node 1 wrote no stack within 3 s", 0), 0u) << *c;
  // Two ranks, one stopped: still named.
  EXPECT_TRUE(decide_culprit({{0, 0, kWait, false}, {1, 0, "", true}}));
}

TEST(Culprit, NobodyWhenAllAgreeNoMajorityOrNoEvidence) {
  EXPECT_FALSE(decide_culprit(waiting(8, 4))) << "every rank in one place";
  EXPECT_FALSE(decide_culprit({})) << "no evidence";
  EXPECT_FALSE(decide_culprit(waiting(1, 1))) << "one rank is its own hang";
  auto split = waiting(4, 2);
  split[2].frame = split[3].frame = "other (/w/train.py:50)";
  EXPECT_FALSE(decide_culprit(split)) << "two against two";
  auto silent = waiting(2, 1);
  for (auto& r : silent) r.silent = true, r.frame.clear();
  EXPECT_FALSE(decide_culprit(silent)) << "nobody answered";
}

TEST(Culprit, ManyCulpritsAreCountedAfterTheFirstFew) {
  auto ranks = waiting(16, 8);
  for (int r = 10; r < 16; ++r) ranks[static_cast<std::size_t>(r)].frame = "x (/w/a.py:1)";
  const auto c = decide_culprit(ranks);
  ASSERT_TRUE(c);
  EXPECT_NE(c->find("rank 13 on node 1 is in x (/w/a.py:1); and 2 more rank(s); every other"),
            std::string::npos)
      << *c;
}

LastCollective entered(std::int64_t seq, const char* state = "started", const char* group = "0") {
  return {seq, "nccl:all_reduce", group, state};
}

TEST(Culprit, TheFlightRecorderNamesTheRankBehindTheFurthestCollective) {
  auto ranks = waiting(8, 4);  // the stacks agree: without the dumps, nobody
  for (auto& r : ranks) r.collective = entered(812);
  ranks[5].collective = entered(811, "completed");
  EXPECT_EQ(decide_culprit(ranks),
            "rank 5 on node 1 never entered nccl:all_reduce #812 of process group 0 (its last: "
            "#811, completed) and is in all_reduce (/w/train.py:12); every other rank of the "
            "group entered it and waits in it");
  // The dumps come before the stacks' rules: a silent rank elsewhere does not outrank them.
  ranks[2] = {2, 0, "", true, entered(812)};
  EXPECT_EQ(decide_culprit(ranks)->rfind("rank 5 on node 1 never entered", 0), 0u);
}

TEST(Culprit, DumpsThatAgreeOrStandAloneLeaveTheStacksToDecide) {
  auto ranks = waiting(4, 2);
  for (auto& r : ranks) r.collective = entered(7);
  ranks[3].frame = "load_batch (/w/data.py:30)";
  EXPECT_EQ(decide_culprit(ranks)->rfind("rank 3 on node 1 is in load_batch", 0), 0u);
  // One rank of a group recorded: nothing to compare it with.
  ranks = waiting(4, 2);
  ranks[0].collective = entered(9);
  EXPECT_FALSE(decide_culprit(ranks));
  // Only dumps (a failure: no stacks), equal everywhere: nobody.
  std::vector<RankEvidence> only_dumps;
  for (int r = 0; r < 4; ++r) only_dumps.push_back({r, r / 2, "", false, entered(3)});
  EXPECT_FALSE(decide_culprit(only_dumps));
  only_dumps[1].collective = entered(2, "completed");
  EXPECT_EQ(decide_culprit(only_dumps)->rfind("rank 1 on node 0 never entered", 0), 0u);
}

TEST(Culprit, TheGroupWithMostRanksRecordedIsLookedAtFirst) {
  std::vector<RankEvidence> ranks;
  for (int r = 0; r < 6; ++r) ranks.push_back({r, 0, "", false, entered(40, "started", "0")});
  ranks[4].collective = entered(39, "completed", "0");
  // A two-rank subgroup where rank 0 is behind, too: the default group's culprit is named.
  ranks.push_back({6, 1, "", false, entered(5, "started", "tp_1")});
  ranks.push_back({7, 1, "", false, entered(3, "completed", "tp_1")});
  EXPECT_EQ(decide_culprit(ranks)->rfind("rank 4 on node 0 never entered nccl:all_reduce #40 of "
                                         "process group 0",
                                         0),
            0u);
}

}  // namespace
}  // namespace tv
