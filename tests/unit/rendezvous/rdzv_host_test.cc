// Where the coordinator listens: the family (or families) the master address resolves to.
#include "launcher/rendezvous/rdzv_host.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

constexpr AddressFamilies kV4{true, false};
constexpr AddressFamilies kV6{false, true};
constexpr AddressFamilies kBoth{true, true};
constexpr AddressFamilies kNone{false, false};

TEST(CoordinatorListenAddress, ANameListensOnTheFamiliesItResolvesTo) {
  EXPECT_EQ(coordinator_listen_address("node0.v6only", "0.0.0.0", kV6), "::");
  EXPECT_EQ(coordinator_listen_address("node0.dual", "0.0.0.0", kBoth), "::");  // dual stack
  EXPECT_EQ(coordinator_listen_address("node0.v4", "0.0.0.0", kV4), "0.0.0.0");
  EXPECT_EQ(coordinator_listen_address("not.yet.in.dns", "0.0.0.0", kNone), "0.0.0.0");
}

TEST(CoordinatorListenAddress, AnAddressDecidesByItself) {
  EXPECT_EQ(coordinator_listen_address("127.0.0.1", "0.0.0.0", kNone), "127.0.0.1");
  EXPECT_EQ(coordinator_listen_address("::1", "0.0.0.0", kNone), "::1");
  EXPECT_EQ(coordinator_listen_address("fd00::2", "0.0.0.0", kNone), "::");
  EXPECT_EQ(coordinator_listen_address("10.0.0.1", "0.0.0.0", kV6), "0.0.0.0");
}

TEST(CoordinatorListenAddress, AnotherBindAddressIsKept) {
  EXPECT_EQ(coordinator_listen_address("node0.v6only", "127.0.0.2", kV6), "127.0.0.2");
}

TEST(ResolvedFamilies, AddressesResolveToTheirOwnFamily) {
  const auto v4 = resolved_families("127.0.0.1");
  EXPECT_TRUE(v4.v4);
  EXPECT_FALSE(v4.v6);
  const auto v6 = resolved_families("::1");
  EXPECT_FALSE(v6.v4);
  EXPECT_TRUE(v6.v6);
  const auto none = resolved_families("no-such-host.invalid");
  EXPECT_FALSE(none.v4 || none.v6);
}

}  // namespace
}  // namespace tv
