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
