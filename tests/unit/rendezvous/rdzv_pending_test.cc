#include "launcher/rendezvous/rdzv_pending.h"

#include <gtest/gtest.h>

namespace tv::rdzv {
namespace {

using std::chrono::milliseconds;

TEST(EvictionVictim, NoneWhileThereIsRoom) {
  EXPECT_EQ(eviction_victim({}, "a", 4, 2), std::nullopt);
  EXPECT_EQ(eviction_victim({"a", "b", "c"}, "a", 4, 2), std::nullopt);
}

TEST(EvictionVictim, ASourceAtItsLimitMakesWayWithItsOwnOldest) {
  // b holds 2 of 2: b's oldest (index 1) goes, never a's or c's.
  EXPECT_EQ(eviction_victim({"a", "b", "c", "b"}, "b", 8, 2), 1u);
}

TEST(EvictionVictim, WhenFullTheBiggestSourceMakesWay) {
  // Full (4 of 4); a newcomer from d evicts the oldest of the flooder f, not the lone node n.
  EXPECT_EQ(eviction_victim({"n", "f", "f", "f"}, "d", 4, 3), 1u);
  EXPECT_EQ(eviction_victim({"n", "f", "f", "f"}, "n", 4, 3), 1u);
}

TEST(PendingLimits, EveryNodeOfTheJobJoiningAtOnceFitsEvenFromOneAddress) {
  const auto l = pending_limits(1024);
  EXPECT_EQ(l.total, 1024u + 256u);
  EXPECT_EQ(l.per_source, 1024u + 64u);
  const std::vector<std::string> flood(1023, "127.0.0.1");  // 1,024 nodes on one host
  EXPECT_EQ(eviction_victim(flood, "127.0.0.1", l.total, l.per_source), std::nullopt);
  EXPECT_EQ(eviction_victim(flood, "127.0.0.1", 256, 64), 0u);  // the fixed limits evicted them
  // One address beyond the job's nodes plus 64 still evicts its own oldest.
  const std::vector<std::string> stranger(l.per_source, "10.0.0.9");
  EXPECT_EQ(eviction_victim(stranger, "10.0.0.9", l.total, l.per_source), 0u);
  EXPECT_EQ(pending_limits(2).total, 258u);
  EXPECT_EQ(pending_limits(2).per_source, 66u);
}

TEST(HandshakeDeadline, FiveSecondsOrThePeerTimeoutWhenShorter) {
  EXPECT_EQ(handshake_deadline(milliseconds(30000)), milliseconds(5000));
  EXPECT_EQ(handshake_deadline(milliseconds(2000)), milliseconds(2000));
  EXPECT_EQ(handshake_deadline(milliseconds(10)), milliseconds(1000));
}

}  // namespace
}  // namespace tv::rdzv
