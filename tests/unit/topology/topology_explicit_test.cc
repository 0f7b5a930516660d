// Explicit values over a detected platform (docs/topology.md, "Explicit values"): a flag
// overrides only what it names; the platform's job id, master port and address, workers'
// variables and stop window stay.
#include "tests/unit/topology/topology_fixture.h"

namespace tv {
namespace {

using ::testing::HasSubstr;
using testing::TopologyTest;

class ExplicitOverPlatform : public TopologyTest {
 protected:
  // AWS Batch's variables (docs.aws.amazon.com/batch/latest/userguide/job_env_vars.html) on the
  // child node with index `index` of a two-node job whose main node is index 0.
  void batch(const std::string& index) {
    set("AWS_BATCH_JOB_ID", "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab#" + index);
    set("AWS_BATCH_JOB_NUM_NODES", "2");
    set("AWS_BATCH_JOB_NODE_INDEX", index);
    set("AWS_BATCH_JOB_MAIN_NODE_INDEX", "0");
    if (index != "0") set("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS", "10.0.0.5");
  }
};

// The seed's Batch line: --nnodes=$AWS_BATCH_JOB_NUM_NODES --rdzv_endpoint=$MASTER_ADDR:5555.
TEST_F(ExplicitOverPlatform, BatchKeepsItsJobIdPortAndStopWindowUnderTheSeedsNnodes) {
  batch("1");
  args = {"--nnodes", "2", "--master-addr", "10.0.0.5"};
  auto t = ok();
  EXPECT_EQ(t.platform, "explicit");
  EXPECT_EQ(t.runs_on, "batch");
  EXPECT_EQ(t.job_id, "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab");
  EXPECT_THAT(t.origin["job_id"], HasSubstr("AWS_BATCH_JOB_ID"));
  EXPECT_EQ(t.master_port, job_master_port(t.job_id));
  EXPECT_THAT(t.origin["master_port"], HasSubstr("derived from the job id"));
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_EQ(t.origin["nnodes"], "--nnodes");
  EXPECT_EQ(t.origin["master_addr"], "--master-addr");
}

TEST_F(ExplicitOverPlatform, NnodesAloneTakesThePlatformsMasterAddress) {
  batch("1");
  args = {"--nnodes", "2"};
  auto t = ok();
  EXPECT_EQ(t.master_addr, "10.0.0.5");
  EXPECT_THAT(t.origin["master_addr"],
              HasSubstr("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS (--platform batch)"));
}

TEST_F(ExplicitOverPlatform, AnExplicitRankOrPortStillWins) {
  batch("1");
  args = {"--nnodes",      "2",        "--node-rank",   "0",
          "--master-addr", "10.0.0.5", "--master-port", "4000"};
  auto t = ok();
  EXPECT_EQ(t.node_rank, 0);
  EXPECT_EQ(t.master_port, 4000);
  EXPECT_EQ(t.job_id, "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab");  // the rank flag drops no fact
}

TEST_F(ExplicitOverPlatform, KubeflowsMasterPortStays) {
  set("MASTER_ADDR", "job-master-0");
  set("MASTER_PORT", "23456");
  set("RANK", "1");
  set("WORLD_SIZE", "2");
  args = {"--nnodes", "2", "--node-rank", "1", "--master-addr", "job-master-0"};
  auto t = ok();
  EXPECT_EQ(t.master_port, 23456);
  EXPECT_EQ(t.origin["master_port"], "env MASTER_PORT (--platform kubeflow)");
  EXPECT_EQ(t.job_id, "job");
}

TEST_F(ExplicitOverPlatform, ACountOtherThanThePlatformsKeepsItsJobButNotItsRank) {
  batch("1");
  args = {"--nnodes", "3", "--master-addr", "10.0.0.5"};
  auto t = ok();
  EXPECT_TRUE(t.rank_by_rendezvous);
  EXPECT_EQ(t.job_id, "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab");
}

TEST_F(ExplicitOverPlatform, NoPlatformStillNeedsAMasterAddress) {
  args = {"--nnodes", "2"};
  EXPECT_THAT(refused(), HasSubstr("without --master-addr"));
  args = {"--nnodes", "2", "--master-addr", "10.0.0.5"};
  auto t = ok();
  EXPECT_EQ(t.runs_on, "");
  EXPECT_EQ(t.job_id, "");
}

}  // namespace
}  // namespace tv
