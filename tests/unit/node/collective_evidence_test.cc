#include "launcher/node/collective_evidence.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(CollectiveEvidence, EachWellFormedLineGivesItsRanksLastCollective) {
  const auto found = collectives_from(
      "{\"rank\": 2, \"seq\": 7, \"op\": \"nccl:all_reduce\", \"group\": \"0\", \"state\": "
      "\"started\"}\n"
      "not json\n"
      "{\"rank\": -1, \"seq\": 7, \"op\": \"a\", \"group\": \"0\", \"state\": \"s\"}\n"
      "{\"rank\": 4, \"seq\": \"7\", \"op\": \"a\", \"group\": \"0\", \"state\": \"s\"}\n"
      "{\"rank\": 5, \"seq\": 1, \"op\": 3, \"group\": \"0\", \"state\": \"s\"}\n"
      "[1, 2]\n"
      "{\"rank\": 3, \"seq\": 6, \"op\": \"nccl:all_reduce\", \"group\": \"0\", \"state\": "
      "\"completed\"}\n"
      "{\"rank\": 9, \"seq\": 6, \"op\": \"trunc");  // a last line cut short
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found.at(2), (LastCollective{7, "nccl:all_reduce", "0", "started"}));
  EXPECT_EQ(found.at(3).state, "completed");
}

TEST(CollectiveEvidence, TextsAreEscapedAndBounded) {
  const auto found =
      collectives_from("{\"rank\": 1, \"seq\": 1, \"op\": \"\\u001b[2J" + std::string(500, 'x') +
                       "\", \"group\": \"0\", \"state\": \"s\"}");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.at(1).op.find('\x1b'), std::string::npos);
  EXPECT_LE(found.at(1).op.size(), 64u);
}

TEST(CollectiveEvidence, ARankWithoutStacksIsAddedOnThisNode) {
  std::vector<RankEvidence> ranks = {{2, 1, "all_reduce (/a.py:1)", false, {}}};
  add_collectives(ranks, {{2, {7, "op", "0", "started"}}, {3, {6, "op", "0", "completed"}}}, 1);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].frame, "all_reduce (/a.py:1)");
  EXPECT_EQ(ranks[0].collective.seq, 7);
  EXPECT_EQ(ranks[1].rank, 3);
  EXPECT_EQ(ranks[1].node_rank, 1);
  EXPECT_EQ(ranks[1].collective.seq, 6);
}

}  // namespace
}  // namespace tv
