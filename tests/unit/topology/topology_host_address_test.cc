#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "launcher/topology/host_address.h"

namespace tv {
namespace {

TEST(PickInterface, FirstUpNonLoopbackIpv4) {
  std::vector<InterfaceAddress> ifs = {
      {"lo", true, true, "127.0.0.1"},    {"eth0", true, false, ""},  // IPv6 entry
      {"eth1", false, false, "10.0.0.5"}, {"ecs", true, false, "169.254.172.2"},
      {"eth0", true, false, "10.0.1.23"}, {"eth2", true, false, "10.0.2.1"}};
  EXPECT_EQ(pick_interface(ifs), 4);
}

TEST(PickInterface, NoneFound) {
  EXPECT_EQ(pick_interface({}), -1);
  EXPECT_EQ(pick_interface({{"lo", true, true, "127.0.0.1"}, {"x", false, false, "10.0.0.1"}}), -1);
}

TEST(RealHostAddress, GivesAnIpv4OrSaysWhy) {
  RealHostAddress self;
  auto a = self.ipv4();
  if (a.ok()) {
    EXPECT_EQ(std::count(a->begin(), a->end(), '.'), 3) << *a;
    EXPECT_THAT(self.describe(), ::testing::HasSubstr("getifaddrs"));
  } else {
    EXPECT_THAT(a.error().message, ::testing::HasSubstr("own address"));
  }
}

}  // namespace
}  // namespace tv
