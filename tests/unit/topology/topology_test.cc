// resolve_topology(): choosing the source, explicit values, nproc_per_node, master_port.
#include "launcher/topology/topology_sources.h"
#include "tests/unit/topology/topology_fixture.h"

namespace tv {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TopologyTest;

TEST_F(TopologyTest, NothingDetectedIsLocal) {
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kLocal);
  EXPECT_EQ(t.nnodes, 1);
  EXPECT_EQ(t.node_rank, 0);
  EXPECT_EQ(t.master_addr, "127.0.0.1");
  EXPECT_EQ(t.master_port, 29500);
  EXPECT_EQ(t.nproc_per_node, 1);
  EXPECT_EQ(t.job_id, "");
  EXPECT_EQ(t.origin["platform"], "default (no platform detected)");
  EXPECT_EQ(t.origin["master_port"], "default");
}

TEST_F(TopologyTest, NprocAutoCountsGpus) {
  gpu_count = 4;
  auto t = ok();
  EXPECT_EQ(t.nproc_per_node, 4);
  EXPECT_EQ(t.world_size(), 4);
  EXPECT_THAT(t.origin["nproc_per_node"], HasSubstr("4 fake GPUs"));
}

TEST_F(TopologyTest, NprocAutoWithoutGpusIsOne) {
  args = {"--nproc-per-node", "auto"};
  auto t = ok();
  EXPECT_EQ(t.nproc_per_node, 1);
  EXPECT_THAT(t.origin["nproc_per_node"], HasSubstr("no GPU so 1"));
}

TEST_F(TopologyTest, NprocNumberFromFlagEnvOrPet) {
  gpu_count = 8;
  args = {"--nproc_per_node=2"};
  EXPECT_EQ(ok().nproc_per_node, 2);
  EXPECT_EQ(ok().origin["nproc_per_node"], "--nproc-per-node");
  args = {};
  set("TRAINVISOR_NPROC_PER_NODE", "3");
  EXPECT_EQ(ok().nproc_per_node, 3);
  EXPECT_EQ(ok().origin["nproc_per_node"], "TRAINVISOR_NPROC_PER_NODE");
}

TEST_F(TopologyTest, NprocRefusals) {
  for (const char* bad : {"0", "-1", "x", "2.5", "4097", "cpu"}) {
    args = {"--nproc-per-node", bad};
    std::string m = refused();
    EXPECT_THAT(m, HasSubstr("--nproc-per-node=\"" + std::string(bad) + "\""));
    EXPECT_THAT(m, HasSubstr("or auto"));
  }
}

TEST_F(TopologyTest, ExplicitFlags) {
  args = {"--nnodes",      "4",   "--node-rank", "2", "--master-addr", "head.example",
          "--master-port", "1234"};
  gpu_count = 8;
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kExplicit);
  EXPECT_EQ(t.nnodes, 4);
  EXPECT_EQ(t.node_rank, 2);
  EXPECT_EQ(t.master_addr, "head.example");
  EXPECT_EQ(t.master_port, 1234);
  EXPECT_EQ(t.world_size(), 32);
  EXPECT_EQ(t.origin["nnodes"], "--nnodes");
  EXPECT_EQ(t.origin["node_rank"], "--node-rank");
  EXPECT_EQ(t.origin["platform"], "detected: --nnodes");
}

TEST_F(TopologyTest, ExplicitFromTrainvisorVariables) {
  set("TRAINVISOR_NNODES", "2");
  set("TRAINVISOR_NODE_RANK", "1");
  set("TRAINVISOR_MASTER_ADDR", "10.1.1.1");
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kExplicit);
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_EQ(t.origin["master_addr"], "TRAINVISOR_MASTER_ADDR");
}

// `--nnodes 1` inside a Slurm job of 4 would train four one-node jobs: refused, naming both
// (issue 53, item 1); --standalone is the one-node job of its own.
TEST_F(TopologyTest, ExplicitCountUnlikeTheDetectedPlatformsIsRefused) {
  set("SLURM_JOB_ID", "7");
  set("SLURM_NNODES", "4");
  set("SLURM_NODEID", "3");
  set("SLURM_JOB_NODELIST", "n[1-4]");
  args = {"--nnodes", "1"};
  EXPECT_EQ(refused(),
            "--nnodes=\"1\" conflicts with env SLURM_NNODES = 4 (platform slurm): expected the "
            "same node count, or no --nnodes");
  args = {"--nnodes", "4"};
  EXPECT_EQ(ok().platform, Platform::kSlurm);
}

TEST_F(TopologyTest, ExplicitMasterAddrAloneIsOneNode) {
  args = {"--master-addr", "10.0.0.1"};
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kExplicit);
  EXPECT_EQ(t.nnodes, 1);
  EXPECT_EQ(t.master_addr, "10.0.0.1");
}

TEST_F(TopologyTest, ExplicitRefusals) {
  args = {"--nnodes", "2", "--node-rank", "2", "--master-addr", "h"};
  EXPECT_THAT(refused(), HasSubstr("--node-rank=\"2\": expected an integer from 0 to 1"));
  args = {"--nnodes", "x"};
  EXPECT_THAT(refused(), HasSubstr("--nnodes=\"x\": expected an integer from 1"));
  args = {"--nnodes", "0"};
  EXPECT_THAT(refused(), HasSubstr("--nnodes=\"0\""));
  args = {"--nnodes", "2", "--node-rank", "-1", "--master-addr", "h"};
  EXPECT_THAT(refused(), HasSubstr("--node-rank=\"-1\""));
  args = {"--node-rank", "1"};
  EXPECT_THAT(refused(), HasSubstr("--node-rank=\"1\": expected an integer from 0 to 0"));
  args = {"--nnodes", "2", "--node-rank", "0"};
  EXPECT_THAT(refused(), HasSubstr("without --master-addr"));
  args = {"--master-addr", "has space"};
  EXPECT_THAT(refused(), HasSubstr("--master-addr=\"has space\": expected a host name"));
}

TEST_F(TopologyTest, MasterPortRules) {
  args = {"--master-port", "0"};
  EXPECT_THAT(refused(), HasSubstr("--master-port=\"0\": expected an integer from 1 to 65535"));
  args = {"--master-port", "65536"};
  EXPECT_THAT(refused(), HasSubstr("65536"));
  args = {"--master-port", "http"};
  EXPECT_THAT(refused(), HasSubstr("\"http\""));
  args = {};
  set("TRAINVISOR_MASTER_PORT", "40000");
  EXPECT_EQ(ok().master_port, 40000);
  EXPECT_EQ(ok().origin["master_port"], "TRAINVISOR_MASTER_PORT");
}

TEST_F(TopologyTest, PlatformChoiceIsValidated) {
  args = {"--platform", "k8s"};
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr("--platform=\"k8s\""));
  EXPECT_THAT(m, HasSubstr("auto|sagemaker|kubeflow|batch|slurm|local"));
}

TEST_F(TopologyTest, StandaloneIsLocalEvenInsideAJob) {
  set("SLURM_JOB_ID", "7");
  set("SLURM_NNODES", "4");
  args = {"--standalone"};
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kLocal);
  EXPECT_EQ(t.nnodes, 1);
  EXPECT_EQ(t.origin["platform"], "--standalone");
}

TEST_F(TopologyTest, StandaloneConflictsWithAnotherPlatform) {
  args = {"--standalone", "--platform", "slurm"};
  EXPECT_THAT(refused(), HasSubstr("--standalone conflicts with --platform=\"slurm\""));
}

TEST_F(TopologyTest, ForcedLocalRefusesMoreNodes) {
  args = {"--platform", "local", "--nnodes", "2", "--master-addr", "x"};
  EXPECT_THAT(refused(), HasSubstr("--nnodes=\"2\" conflicts with"));
}

TEST_F(TopologyTest, AutoDetectionOrderSageMakerFirst) {
  fs.add_file(kRc, testing::topology_data("resourceconfig_minimal.json"));
  set("PET_NNODES", "2");
  set("AWS_BATCH_JOB_NUM_NODES", "2");
  set("SLURM_JOB_ID", "1");
  set("SLURM_NNODES", "2");
  EXPECT_EQ(ok().platform, Platform::kSageMaker);
}

TEST_F(TopologyTest, AutoDetectionOrderKubeflowBeforeBatchAndSlurm) {
  set("PET_NNODES", "1");
  set("PET_NODE_RANK", "0");
  set("AWS_BATCH_JOB_NUM_NODES", "1");
  set("AWS_BATCH_JOB_NODE_INDEX", "0");
  set("AWS_BATCH_JOB_MAIN_NODE_INDEX", "0");
  set("SLURM_JOB_ID", "1");
  set("SLURM_NNODES", "1");
  EXPECT_EQ(ok().platform, Platform::kKubeflow);
  env.erase("PET_NNODES");
  env.erase("PET_NODE_RANK");
  EXPECT_EQ(ok().platform, Platform::kBatch);
  env.erase("AWS_BATCH_JOB_NUM_NODES");
  EXPECT_EQ(ok().platform, Platform::kSlurm);
}

TEST_F(TopologyTest, PetValuesAreNotExplicit) {
  set("PET_NNODES", "2");
  set("PET_NODE_RANK", "1");
  set("PET_MASTER_ADDR", "job-master-0");
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kKubeflow);
  EXPECT_EQ(t.origin["nnodes"], "env PET_NNODES");
}

TEST_F(TopologyTest, JobIdOriginIsNoneWhenUnknown) { EXPECT_EQ(ok().origin["job_id"], "none"); }

}  // namespace
}  // namespace tv

namespace tv {
namespace {

TEST_F(TopologyTest, ExplicitNodesWithoutRankTakeThePlatformsRank) {
  set("AWS_BATCH_JOB_NUM_NODES", "2");
  set("AWS_BATCH_JOB_NODE_INDEX", "0");
  set("AWS_BATCH_JOB_MAIN_NODE_INDEX", "1");
  set("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS", "10.0.0.9");
  args = {"--nnodes", "2", "--master-addr", "10.0.0.9"};
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kBatch);
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_FALSE(t.rank_by_rendezvous);
  EXPECT_THAT(t.origin["node_rank"], HasSubstr("AWS_BATCH_JOB_NODE_INDEX"));
  args = {"--nnodes", "2", "--master-addr", "10.0.0.9", "--node-rank", "1"};
  EXPECT_EQ(ok().node_rank, 1);  // the command line's rank agrees with Batch's
  args = {"--nnodes", "2", "--master-addr", "10.0.0.9", "--node-rank", "0"};
  EXPECT_THAT(refused(), HasSubstr("--node-rank=\"0\" conflicts with"));
  args = {"--nnodes", "3", "--master-addr", "10.0.0.9"};
  EXPECT_THAT(refused(), HasSubstr("--nnodes=\"3\" conflicts with env AWS_BATCH_JOB_NUM_NODES"));
}

// No rank from the options and no platform (torchrun's c10d line on a plain cluster): the
// rendezvous gives it (NetworkCluster::assign_rank); a rank anywhere keeps the old path.
TEST_F(TopologyTest, NoRankAnywhereIsTheRendezvoussToGive) {
  args = {"--nnodes", "2", "--master-addr", "10.0.0.9"};
  auto t = ok();
  EXPECT_TRUE(t.rank_by_rendezvous);
  EXPECT_THAT(t.origin["node_rank"], HasSubstr("the node that hosts the rendezvous"));
  args = {"--nnodes", "2", "--master-addr", "10.0.0.9", "--node-rank", "1"};
  t = ok();
  EXPECT_FALSE(t.rank_by_rendezvous);
  EXPECT_EQ(t.node_rank, 1);
  args = {"--nnodes", "1", "--master-addr", "10.0.0.9"};
  EXPECT_FALSE(ok().rank_by_rendezvous);  // one node: rank 0, nothing to ask
  args = {};
  set("SLURM_JOB_ID", "7");
  set("SLURM_NNODES", "2");
  set("SLURM_NODEID", "1");
  set("SLURM_JOB_NODELIST", "n[1-2]");
  t = ok();
  EXPECT_FALSE(t.rank_by_rendezvous);
  EXPECT_EQ(t.node_rank, 1);
}

}  // namespace
}  // namespace tv
namespace tv::topo {
namespace {

TEST(HostNames, BracketedIpv6IsAcceptedAndUnbracketed) {
  EXPECT_TRUE(plausible_host("[::1]"));
  EXPECT_TRUE(plausible_host("[fd00::2]"));
  EXPECT_FALSE(plausible_host("[node-1]"));
  EXPECT_FALSE(plausible_host("[::1"));
  EXPECT_FALSE(plausible_host("::1]"));
  EXPECT_EQ(unbracketed_host("[::1]"), "::1");
  EXPECT_EQ(unbracketed_host("algo-1"), "algo-1");
}

}  // namespace
}  // namespace tv::topo
