// rdzv::Membership: who is in each generation and each member's node rank, as a table.
#include "launcher/rendezvous/membership.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tv::rdzv {
namespace {

struct Row {
  const char* what;
  int min, max;
  std::vector<int> join;   // slots present
  std::vector<int> lose;   // then lost (after generation 0 formed)
  std::vector<int> later;  // then joined while the generation ran
  bool enough;             // at least MIN present at the end
  std::string ranks;       // slot->rank of the next formation
  int waiting;             // before that formation
};

TEST(Membership, Table) {
  const std::vector<Row> rows = {
      {"fixed N: rank is the slot", 3, 3, {0, 1, 2}, {}, {}, true, "0->0 1->1 2->2", 0},
      {"lost middle node: renumbered in order", 2, 3, {0, 1, 2}, {1}, {}, true, "0->0 2->1", 0},
      {"lost last node", 2, 3, {0, 1, 2}, {2}, {}, true, "0->0 1->1", 0},
      {"below MIN", 2, 3, {0, 1, 2}, {1, 2}, {}, false, "0->0", 0},
      {"late join waits, then is a member", 2, 3, {0, 1}, {}, {2}, true, "0->0 1->1 2->2", 1},
      {"lost then replaced at its slot", 2, 3, {0, 1, 2}, {1}, {1}, true, "0->0 1->1 2->2", 1},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    Membership m(r.min, r.max);
    EXPECT_EQ(m.elastic(), r.min < r.max);
    for (int s : r.join) m.joined(s);
    m.form();
    for (int s : r.lose) m.left(s);
    for (int s : r.later) m.joined(s);
    EXPECT_EQ(m.enough(), r.enough);
    EXPECT_EQ(m.waiting(), r.waiting);
    for (int s : r.later) EXPECT_FALSE(m.node_rank(s).has_value());
    m.form();
    EXPECT_EQ(m.ranks_text(), r.ranks);
    EXPECT_EQ(m.waiting(), 0);
  }
}

TEST(Membership, FullAtMaxEnoughAtMin) {
  Membership m(2, 3);
  m.joined(0);
  EXPECT_FALSE(m.enough());
  m.joined(2);
  EXPECT_TRUE(m.enough());
  EXPECT_FALSE(m.full());
  m.joined(1);
  EXPECT_TRUE(m.full());
  m.form();
  EXPECT_EQ(m.node_rank(2), 2);
  m.left(1);
  EXPECT_EQ(m.node_rank(2), 1);
}

}  // namespace
}  // namespace tv::rdzv

namespace tv::rdzv {
namespace {

// Hot spares (--nnodes 2 --spare-nodes K): the world keeps its N ranks; a lost member's rank goes
// to a spare, one that was a member before first, then the earliest joined.
struct SpareRow {
  const char* what;
  int n, spares;
  std::vector<int> join;   // slots present, in join order, before generation 0 forms
  std::vector<int> lose;   // then lost
  std::vector<int> later;  // then joined (a node back, or a new one)
  bool enough;
  std::string ranks;  // slot->rank of the next formation
  int waiting;        // spares ready after it
};

TEST(Membership, SpareTable) {
  const std::vector<SpareRow> rows = {
      {"no loss: slots below N hold their ranks", 2, 1, {0, 1, 2}, {}, {}, true, "0->0 1->1", 1},
      {"spare joined first: still a spare", 2, 1, {2, 0, 1}, {}, {}, true, "0->0 1->1", 1},
      {"member lost: the spare takes its rank", 2, 1, {0, 1, 2}, {1}, {}, true, "0->0 2->1", 0},
      {"rank 0's node lost: the spare is rank 0", 2, 1, {0, 1, 2}, {0}, {}, true, "1->1 2->0", 0},
      {"no spare left", 2, 1, {0, 1, 2}, {1, 2}, {}, false, "0->0", 0},
      {"earliest joined spare first", 2, 2, {0, 1, 3, 2}, {0}, {}, true, "1->1 3->0", 1},
      {"a lost spare changes no rank", 2, 2, {0, 1, 2, 3}, {2}, {}, true, "0->0 1->1", 1},
      {"a node back before the re-formation: a member before, so first",
       2,
       1,
       {0, 1, 2},
       {1},
       {1},
       true,
       "0->0 1->1",
       1},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    Membership m(r.n, r.n + r.spares, r.spares);
    EXPECT_FALSE(m.elastic());
    EXPECT_TRUE(m.with_spares());
    for (int s : r.join) m.joined(s);
    EXPECT_TRUE(m.full());
    m.form();
    EXPECT_EQ(m.members(), r.n);
    for (int s : r.lose) m.left(s);
    for (int s : r.later) m.joined(s);
    EXPECT_EQ(m.enough(), r.enough);
    if (!r.enough) continue;
    m.form();
    EXPECT_EQ(m.ranks_text(), r.ranks);
    EXPECT_EQ(m.members(), r.n);
    EXPECT_EQ(m.waiting(), r.waiting);
  }
}

// Generation 0 waits for slots 0..N-1 (full); with N others present only after the last call
// (enough), when a spare's slot takes the missing rank.
TEST(Membership, ASpareSlotTakesAMissingRankOnlyAfterTheLastCall) {
  Membership m(2, 3, 1);
  m.joined(2);
  m.joined(0);
  EXPECT_FALSE(m.full());
  EXPECT_TRUE(m.enough());
  m.form();
  EXPECT_EQ(m.ranks_text(), "0->0 2->1");
  m.joined(1);  // late: a spare
  EXPECT_EQ(m.waiting(), 1);
}

// A spare promoted twice in a row: each loss takes the next spare; the world never changes.
TEST(Membership, ASparePromotedTwiceInARow) {
  Membership m(2, 4, 2);
  for (int s : {0, 1, 2, 3}) m.joined(s);
  m.form();
  m.left(1);
  m.form();
  EXPECT_EQ(m.ranks_text(), "0->0 2->1");
  m.left(2);
  m.form();
  EXPECT_EQ(m.ranks_text(), "0->0 3->1");
  EXPECT_EQ(m.waiting(), 0);
  m.joined(1);  // node 1 back after the re-formation: a spare
  EXPECT_EQ(m.waiting(), 1);
  EXPECT_FALSE(m.node_rank(1).has_value());
  m.left(3);
  m.form();
  EXPECT_EQ(m.ranks_text(), "0->0 1->1");
}

}  // namespace
}  // namespace tv::rdzv
