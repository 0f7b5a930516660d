// Node 0's descriptor decision for the rendezvous (issue 58: 300 nodes at nofile 256 were waited
// out to --rdzv-timeout, then 75 everywhere; now 71 before anything listens).
#include "launcher/rendezvous/rdzv_descriptors.h"

#include <gtest/gtest.h>

#include "common/exit_codes.h"

namespace tv {
namespace {

TEST(RdzvDescriptors, TheLeastIsTheRunsOwnAndAConnectionPerNodeTheComfortableAJoinFlood) {
  const auto need = coordinator_descriptors(300, 1);
  EXPECT_EQ(need.least, open_files_needed(1) + 300 + 2);  // 330
  EXPECT_EQ(need.comfortable, 920u);                      // 300 + (300 + 256) + 64, as warned
  EXPECT_LT(coordinator_descriptors(300, 1).least, coordinator_descriptors(300, 8).least);
}

TEST(RdzvDescriptors, A256LimitAt300NodesIsRefusedWith71NamingLimitNeedAndHow) {
  const auto s = coordinator_descriptor_verdict(300, 1, OpenFileLimit{256, 256});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().exit_code(), exit_code_of(ErrorKind::kOsError));
  const std::string& m = s.error().message;
  for (const char* part : {"RLIMIT_NOFILE) is 256", "hard limit 256", "below the 330 descriptors",
                           "300 nodes", "about 920", "--ulimit nofile="})
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
}

// Short of the comfortable figure is a warning only (a join flood waits for descriptors): a
// 3-node job at 48 forms (tests/integration/test_multinode.py).
TEST(RdzvDescriptors, ALimitThatHoldsTheLeastOrAnUnknownOneIsNotRefused) {
  EXPECT_TRUE(coordinator_descriptor_verdict(300, 1, OpenFileLimit{330, 330}));
  EXPECT_FALSE(coordinator_descriptor_verdict(300, 1, OpenFileLimit{329, 329}));
  EXPECT_TRUE(coordinator_descriptor_verdict(3, 1, OpenFileLimit{48, 48}));
  EXPECT_TRUE(coordinator_descriptor_verdict(300, 1, OpenFileLimit{0, 0}));
}

// The soft limit is raised to the hard one first: what then suffices is not refused.
TEST(RdzvDescriptors, TheHardLimitDecidesAndReserveRaisesTheSoftOneToIt) {
  const auto start = open_file_limit();
  ASSERT_GE(start.hard, coordinator_descriptors(2, 1).least);
  rlimit low{static_cast<rlim_t>(16), static_cast<rlim_t>(start.hard)};
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_TRUE(coordinator_descriptors_possible(2, 1));
  EXPECT_EQ(open_file_limit().soft, 16u);  // asking changes nothing
  EXPECT_TRUE(reserve_coordinator_descriptors(2, 1));
  EXPECT_EQ(open_file_limit().soft, start.hard);
  rlimit back{static_cast<rlim_t>(start.soft), static_cast<rlim_t>(start.hard)};
  ::setrlimit(RLIMIT_NOFILE, &back);
}

}  // namespace
}  // namespace tv
