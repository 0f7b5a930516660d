#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "launcher/topology/topology.h"

namespace tv {
namespace {

using ::testing::HasSubstr;

Topology sample() {
  Topology t;
  t.platform = Platform::kSlurm;
  t.nnodes = 2;
  t.node_rank = 1;
  t.nproc_per_node = 8;
  t.master_addr = "n1";
  t.hosts = {"n1", "n2"};
  t.job_id = "42";
  t.origin = {{"nnodes", "env SLURM_NNODES"}, {"node_rank", "env SLURM_NODEID"}};
  t.worker_env = {{"NCCL_SOCKET_IFNAME", "eth0"}};
  return t;
}

TEST(TopologyJson, NumbersAreNumbers) {
  auto j = topology_to_json(sample());
  EXPECT_EQ(j["platform"], "slurm");
  EXPECT_TRUE(j["nnodes"].is_number_integer());
  EXPECT_EQ(j["nnodes"], 2);
  EXPECT_EQ(j["node_rank"], 1);
  EXPECT_EQ(j["nproc_per_node"], 8);
  EXPECT_EQ(j["world_size"], 16);
  EXPECT_EQ(j["master_port"], 29500);
  EXPECT_EQ(j["master_addr"], "n1");
  EXPECT_EQ(j["hosts"], nlohmann::json({"n1", "n2"}));
  EXPECT_EQ(j["job_id"], "42");
  EXPECT_EQ(j["sources"]["node_rank"], "env SLURM_NODEID");
  EXPECT_EQ(j["worker_env"]["NCCL_SOCKET_IFNAME"], "eth0");
}

TEST(TopologyJson, HostsOmittedWhenUnknown) {
  Topology t;
  t.platform = Platform::kLocal;
  EXPECT_FALSE(topology_to_json(t).contains("hosts"));
}

TEST(TopologyTable, OneFieldPerLineWithItsOrigin) {
  std::string s = format_topology(sample());
  EXPECT_THAT(s, HasSubstr("node_rank"));
  EXPECT_THAT(s, HasSubstr("env SLURM_NODEID"));
  EXPECT_THAT(s, HasSubstr("world_size          16"));
  EXPECT_THAT(s, HasSubstr("NCCL_SOCKET_IFNAME  eth0"));
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 11);
}

// A field longer than the usual column (a worker_env variable) is never run into its value
// (it was "NCCL_SOCKET_IFNAMEeth0"), and every value starts in the same column.
TEST(TopologyTable, LongFieldNamesKeepTheColumns) {
  std::istringstream lines(format_topology(sample()));
  std::string line;
  while (std::getline(lines, line)) {
    const auto name_end = line.find(' ');
    ASSERT_NE(name_end, std::string::npos) << line;
    EXPECT_EQ(line.find_first_not_of(' ', name_end), 20U) << line;
  }
  Topology plain = sample();
  plain.worker_env.clear();
  EXPECT_THAT(format_topology(plain), HasSubstr("world_size      16"));  // 16 wide, as before
}

TEST(TopologyTable, LongHostListsAreShortened) {
  Topology t = sample();
  t.hosts.clear();
  for (int i = 0; i < 20; ++i) t.hosts.push_back("h" + std::to_string(i));
  EXPECT_THAT(format_topology(t), HasSubstr("(20 hosts)"));
}

}  // namespace
}  // namespace tv
