// Explicit values over a detected platform (docs/topology.md, "Explicit values over a
// platform"): a flag overrides only what it names, or is refused where it disagrees with what the
// platform fixes; the platform's job id, master port and address, workers' variables and stop
// window stay. The whole table: tests/unit/plan/explicit_over_platform_test.cc.
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
  EXPECT_EQ(t.platform, Platform::kBatch);
  EXPECT_EQ(t.job_id, "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab");
  EXPECT_THAT(t.origin["job_id"], HasSubstr("AWS_BATCH_JOB_ID"));
  EXPECT_EQ(t.master_port, job_master_port(t.job_id));
  EXPECT_THAT(t.origin["master_port"], HasSubstr("derived from the job id"));
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_EQ(t.origin["nnodes"], "env AWS_BATCH_JOB_NUM_NODES");
  EXPECT_EQ(t.origin["master_addr"], "--master-addr");
}

TEST_F(ExplicitOverPlatform, NnodesAloneTakesThePlatformsMasterAddress) {
  batch("1");
  args = {"--nnodes", "2"};
  auto t = ok();
  EXPECT_EQ(t.master_addr, "10.0.0.5");
  EXPECT_EQ(t.origin["master_addr"], "env AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS");
}

TEST_F(ExplicitOverPlatform, AnExplicitPortWinsARankMustAgree) {
  batch("1");
  args = {"--nnodes",      "2",        "--node-rank",   "1",
          "--master-addr", "10.0.0.5", "--master-port", "4000"};
  auto t = ok();
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_EQ(t.master_port, 4000);
  EXPECT_EQ(t.job_id, "0b1c2d3e-aaaa-bbbb-cccc-1234567890ab");  // the rank flag drops no fact
  args = {"--node-rank", "0", "--master-addr", "10.0.0.5"};
  EXPECT_EQ(refused(),
            "--node-rank=\"0\" conflicts with env AWS_BATCH_JOB_NODE_INDEX - "
            "AWS_BATCH_JOB_MAIN_NODE_INDEX (mod nnodes) = 1 (platform batch): expected the same "
            "rank, or no --node-rank");
}

TEST_F(ExplicitOverPlatform, KubeflowsMasterPortStays) {
  set("MASTER_ADDR", "job-master-0");
  set("MASTER_PORT", "23456");
  set("RANK", "1");
  set("WORLD_SIZE", "2");
  args = {"--nnodes", "2", "--node-rank", "1", "--master-addr", "job-master-0"};
  auto t = ok();
  EXPECT_EQ(t.master_port, 23456);
  EXPECT_EQ(t.origin["master_port"], "env MASTER_PORT");
  EXPECT_EQ(t.job_id, "job");
}

// issue 53, item 1: a count other than the platform's is refused, naming both, never a world of
// another size.
TEST_F(ExplicitOverPlatform, ACountOtherThanThePlatformsIsRefused) {
  batch("1");
  args = {"--nnodes", "3", "--master-addr", "10.0.0.5"};
  EXPECT_EQ(refused(),
            "--nnodes=\"3\" conflicts with env AWS_BATCH_JOB_NUM_NODES = 2 (platform batch): "
            "expected the same node count, or no --nnodes");
}

// issue 53, item 1: only --master-addr (the seed's main node line, docs/platforms/aws-batch.md)
// keeps Batch's 2 nodes and rank 0; the banner's platform is batch.
TEST_F(ExplicitOverPlatform, MasterAddrAloneKeepsThePlatformsWorld) {
  batch("0");
  args = {"--master-addr", "127.0.0.1"};
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kBatch);
  EXPECT_EQ(t.nnodes, 2);
  EXPECT_EQ(t.node_rank, 0);
  EXPECT_EQ(t.master_addr, "127.0.0.1");
  EXPECT_EQ(t.origin["platform"], "detected: env AWS_BATCH_JOB_NUM_NODES");
}

TEST_F(ExplicitOverPlatform, NoPlatformStillNeedsAMasterAddress) {
  args = {"--nnodes", "2"};
  EXPECT_THAT(refused(), HasSubstr("without --master-addr"));
  args = {"--nnodes", "2", "--master-addr", "10.0.0.5"};
  auto t = ok();
  EXPECT_EQ(t.job_id, "");
}

}  // namespace
}  // namespace tv
