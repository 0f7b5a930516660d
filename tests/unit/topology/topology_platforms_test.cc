// Each platform source through resolve_topology(): SageMaker, Kubeflow, AWS Batch, Slurm.
#include "tests/unit/topology/topology_fixture.h"

namespace tv {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::topology_data;
using testing::TopologyTest;

// ---- SageMaker ----

TEST_F(TopologyTest, SageMakerPlain) {
  fs.add_file(kRc, topology_data("resourceconfig_plain.json"));
  set("TRAINING_JOB_NAME", "isaac-ppo-2026");
  gpu_count = 8;
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kSageMaker);
  EXPECT_EQ(t.nnodes, 4);
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_EQ(t.master_addr, "algo-1");
  EXPECT_THAT(t.hosts, ElementsAre("algo-1", "algo-2", "algo-3", "algo-4"));
  EXPECT_EQ(t.world_size(), 32);
  EXPECT_EQ(t.job_id, "isaac-ppo-2026");
  EXPECT_EQ(t.worker_env["NCCL_SOCKET_IFNAME"], "eth0");
  EXPECT_THAT(t.origin["node_rank"], HasSubstr(std::string("file ") + kRc));
  EXPECT_THAT(t.origin["node_rank"], HasSubstr("current_host"));
  EXPECT_THAT(t.origin["platform"], HasSubstr("exists"));
}

TEST_F(TopologyTest, SageMakerKeepsAnExistingSocketIfname) {
  fs.add_file(kRc, topology_data("resourceconfig_plain.json"));
  set("NCCL_SOCKET_IFNAME", "^lo,docker");
  EXPECT_TRUE(ok().worker_env.empty());
}

TEST_F(TopologyTest, SageMakerHeterogeneous) {
  fs.add_file(kRc, topology_data("resourceconfig_hetero.json"));
  auto t = ok();
  EXPECT_EQ(t.nnodes, 3);
  EXPECT_EQ(t.node_rank, 2);
  EXPECT_EQ(t.master_addr, "algo-1");
  EXPECT_EQ(t.worker_env["NCCL_SOCKET_IFNAME"], "ens5");
  EXPECT_THAT(t.origin["hosts"], HasSubstr("all instance_groups"));
}

// SageMaker heterogeneous clusters (docs/platforms/sagemaker.md): ranks over the training groups'
// hosts only; a host of another group does not train.
TEST_F(TopologyTest, SageMakerInstanceGroupsOptionNarrowsTheHosts) {
  fs.add_file(kRc, topology_data("resourceconfig_hetero.json"));  // algo-3 is group g5
  args = {"--instance-groups", "g5"};
  auto t = ok();
  EXPECT_EQ(t.nnodes, 1);
  EXPECT_EQ(t.node_rank, 0);
  EXPECT_EQ(t.master_addr, "algo-3");
  EXPECT_TRUE(t.not_training.empty());
  EXPECT_THAT(t.origin["hosts"], HasSubstr("instance groups g5, named by --instance-groups"));
  EXPECT_EQ(t.instance_type, "ml.g5.48xlarge");
  args = {"--instance-groups", "p4d"};
  t = ok();
  EXPECT_EQ(t.nnodes, 2);
  EXPECT_THAT(t.hosts, ElementsAre("algo-1", "algo-2"));
  EXPECT_EQ(t.master_addr, "algo-1");
  EXPECT_THAT(t.not_training, HasSubstr("instance group \"g5\" (host algo-3) is not one of the "
                                        "training groups p4d (--instance-groups)"));
}

TEST_F(TopologyTest, SageMakerTrainingGroupsFromTheSdksHyperparameter) {
  fs.add_file(kRc, topology_data("resourceconfig_hetero.json"));
  // The SDK writes every hyperparameter JSON-encoded (a string holding the list).
  fs.add_file("/opt/ml/input/config/hyperparameters.json",
              R"({"sagemaker_distribution_instance_groups": "[\"p4d\"]", "lr": "0.1"})");
  auto t = ok();
  EXPECT_EQ(t.nnodes, 2);
  EXPECT_THAT(t.origin["hosts"], HasSubstr("sagemaker_distribution_instance_groups"));
  EXPECT_FALSE(t.not_training.empty());
  args = {"--instance-groups", "g5,p4d"};  // the option wins
  t = ok();
  EXPECT_EQ(t.nnodes, 3);
  EXPECT_TRUE(t.not_training.empty());
}

TEST_F(TopologyTest, SageMakerUnknownInstanceGroupIsRefused) {
  fs.add_file(kRc, topology_data("resourceconfig_hetero.json"));
  args = {"--instance-groups", "gpu"};
  EXPECT_THAT(refused(), HasSubstr("has no instance group \"gpu\" (the training groups named): "
                                   "expected one of its instance_groups: p4d, g5"));
  fs.add_file(kRc, topology_data("resourceconfig_minimal.json"));
  EXPECT_THAT(refused(), HasSubstr("has no instance_groups"));
}

TEST_F(TopologyTest, InstanceTypeFromResourceConfigOrOption) {
  fs.add_file(kRc, topology_data("resourceconfig_hetero.json"));
  auto t = ok();
  EXPECT_EQ(t.instance_type, "ml.g5.48xlarge");
  EXPECT_THAT(t.origin["instance_type"], HasSubstr("(current_instance_type)"));
  args = {"--instance-type", "p5.48xlarge"};
  t = ok();
  EXPECT_EQ(t.instance_type, "p5.48xlarge");
  EXPECT_EQ(t.origin["instance_type"], "--instance-type");
}

TEST_F(TopologyTest, SageMakerPathOverride) {
  fs.add_file("/tmp/rc.json", topology_data("resourceconfig_ten_hosts.json"));
  args = {"--resource-config", "/tmp/rc.json"};
  auto t = ok();
  EXPECT_EQ(t.nnodes, 10);
  EXPECT_EQ(t.node_rank, 1);  // algo-10 sorts second
}

TEST_F(TopologyTest, SageMakerRefusals) {
  fs.add_file(kRc, topology_data("resourceconfig_malformed.json"));
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr(std::string("file ") + kRc));
  EXPECT_THAT(m, HasSubstr("not valid JSON"));
  fs.add_file(kRc, topology_data("resourceconfig_stranger.json"));
  EXPECT_THAT(refused(), HasSubstr("current_host \"algo-9\" is not in hosts"));
}

TEST_F(TopologyTest, ForcedSageMakerWithoutTheFile) {
  args = {"--platform", "sagemaker"};
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr(kRc));
  EXPECT_THAT(m, HasSubstr("does not exist"));
}

// issue 53, item 7: SageMaker's variables without its resource config are refused (78), as a
// Slurm environment without SLURM_JOB_ID is: never a one-node job on every host.
TEST_F(TopologyTest, PartialSageMakerEnvironmentIsRefused) {
  set("SM_HOSTS", "[\"algo-1\",\"algo-2\"]");
  set("SM_CURRENT_HOST", "algo-2");
  EXPECT_EQ(refused(), std::string("file ") + kRc +
                           " does not exist but SM_HOSTS, SM_CURRENT_HOST are set: expected "
                           "SageMaker's resource config beside SageMaker's variables "
                           "(--resource-config PATH or TRAINVISOR_RESOURCE_CONFIG where it is "
                           "elsewhere); pass every SM_* variable and the file through, or neither");
  env.erase("SM_HOSTS");
  EXPECT_THAT(refused(), HasSubstr("but SM_CURRENT_HOST is set"));
  args = {"--nnodes", "2", "--master-addr", "algo-1"};  // explicit values do not hide it
  EXPECT_THAT(refused(), HasSubstr("but SM_CURRENT_HOST is set"));
  args = {"--standalone"};
  EXPECT_EQ(ok().platform, Platform::kLocal);
  args = {};
  set("TRAINVISOR_RESOURCE_CONFIG", "/tmp/rc.json");  // the file where it is: SageMaker
  fs.add_file("/tmp/rc.json", topology_data("resourceconfig_plain.json"));
  EXPECT_EQ(ok().platform, Platform::kSageMaker);
}

TEST_F(TopologyTest, ForcedSageMakerWithAgreeingAndConflictingFlags) {
  fs.add_file(kRc, topology_data("resourceconfig_plain.json"));
  args = {"--platform", "sagemaker", "--nnodes", "4", "--node-rank", "1"};
  EXPECT_EQ(ok().nnodes, 4);
  args = {"--platform", "sagemaker", "--node-rank", "0"};
  EXPECT_THAT(refused(), HasSubstr("--node-rank=\"0\" conflicts with file"));
}

// ---- Kubeflow ----

// The training operator v1.7.0 .. v1.9.0 (kubeflow/training-operator pkg/controller.v1/pytorch
// envvar.go setPodEnv, master.go): MASTER_* and PET_MASTER_* both, PET_NNODES, PET_NODE_RANK,
// PET_NPROC_PER_NODE, WORLD_SIZE = replicas x nprocPerNode, RANK.
TEST_F(TopologyTest, KubeflowPetVariables) {
  set("MASTER_ADDR", "cosmos-sft-master-0");
  set("MASTER_PORT", "23456");
  set("PET_NNODES", "4");
  set("PET_NODE_RANK", "3");
  set("PET_MASTER_ADDR", "cosmos-sft-master-0");
  set("PET_MASTER_PORT", "23456");
  set("PET_NPROC_PER_NODE", "8");
  set("WORLD_SIZE", "32");
  set("RANK", "3");
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kKubeflow);
  EXPECT_EQ(t.nnodes, 4);
  EXPECT_EQ(t.node_rank, 3);
  EXPECT_EQ(t.master_addr, "cosmos-sft-master-0");
  EXPECT_EQ(t.master_port, 23456);
  EXPECT_EQ(t.nproc_per_node, 8);
  EXPECT_EQ(t.origin["nproc_per_node"], "PET_NPROC_PER_NODE");
  EXPECT_EQ(t.job_id, "cosmos-sft");
}

TEST_F(TopologyTest, KubeflowNnodesRangeNN) {
  set("PET_NNODES", "2:2");
  set("PET_NODE_RANK", "1");
  set("PET_MASTER_ADDR", "m");
  EXPECT_EQ(ok().nnodes, 2);
}

// elasticPolicy minReplicas:maxReplicas: elastic membership (docs/coordination.md).
TEST_F(TopologyTest, KubeflowElasticRangeIsMinAndMax) {
  set("PET_NNODES", "1:4");
  set("PET_NODE_RANK", "0");
  set("PET_MASTER_ADDR", "m");
  const Topology t = ok();
  EXPECT_EQ(t.nnodes, 4);
  EXPECT_EQ(t.min_nnodes, 1);
  env = Environment({{"PET_NNODES", "4:1"}, {"PET_NODE_RANK", "0"}});
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr("PET_NNODES=\"4:1\""));
  EXPECT_THAT(m, HasSubstr("expected N or MIN:MAX with 1 <= MIN <= MAX"));
}

TEST_F(TopologyTest, KubeflowBadPetNnodes) {
  for (const char* bad : {"x", "0", "2:x", ":2", "-1"}) {
    env = Environment({{"PET_NNODES", bad}, {"PET_NODE_RANK", "0"}});
    EXPECT_THAT(refused(), HasSubstr("PET_NNODES=\"" + std::string(bad) + "\""));
  }
}

// The training operator v1.6.0 and before (setPodEnv, master.go): MASTER_ADDR, MASTER_PORT, RANK
// and WORLD_SIZE = replicas; no PET_* variable.
TEST_F(TopologyTest, KubeflowWorldSizeIsThePodCountWithoutNproc) {
  set("MASTER_ADDR", "train-master-0.train.ns.svc");
  set("MASTER_PORT", "23456");
  set("RANK", "1");
  set("WORLD_SIZE", "3");
  gpu_count = 4;
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kKubeflow);
  EXPECT_EQ(t.nnodes, 3);
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_EQ(t.nproc_per_node, 4);
  EXPECT_EQ(t.master_port, 23456);
  EXPECT_EQ(t.origin["master_port"], "env MASTER_PORT");
  EXPECT_THAT(t.origin["nnodes"], HasSubstr("pod count"));
  EXPECT_EQ(t.job_id, "train");
}

TEST_F(TopologyTest, KubeflowWorldSizeCountsProcessesWithNproc) {
  set("MASTER_ADDR", "m");
  set("RANK", "1");
  set("WORLD_SIZE", "16");
  set("PET_NPROC_PER_NODE", "8");
  auto t = ok();
  EXPECT_EQ(t.nnodes, 2);
  EXPECT_EQ(t.world_size(), 16);
}

TEST_F(TopologyTest, KubeflowWorldSizeConflicts) {
  set("PET_NNODES", "2");
  set("PET_NODE_RANK", "0");
  set("PET_MASTER_ADDR", "m");
  set("PET_NPROC_PER_NODE", "8");
  set("WORLD_SIZE", "2");
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr("WORLD_SIZE=\"2\" conflicts with PET_NNODES=\"2\" and "
                           "PET_NPROC_PER_NODE=\"8\""));
  EXPECT_THAT(m, HasSubstr("= 16"));
  env.erase("PET_NPROC_PER_NODE");
  set("WORLD_SIZE", "16");
  EXPECT_THAT(refused(), HasSubstr("WORLD_SIZE=\"16\" conflicts with PET_NNODES=\"2\""));
}

TEST_F(TopologyTest, KubeflowWorldSizeNotDivisible) {
  set("MASTER_ADDR", "m");
  set("RANK", "0");
  set("WORLD_SIZE", "12");
  set("PET_NPROC_PER_NODE", "8");
  EXPECT_THAT(refused(), HasSubstr("WORLD_SIZE=\"12\" with PET_NPROC_PER_NODE=\"8\""));
  set("PET_NPROC_PER_NODE", "auto");
  EXPECT_THAT(refused(), HasSubstr("node count is unknown"));
}

TEST_F(TopologyTest, KubeflowRankRefusals) {
  set("PET_NNODES", "2");
  set("PET_MASTER_ADDR", "m");
  EXPECT_THAT(refused(), HasSubstr("RANK is not set"));
  set("PET_NODE_RANK", "2");
  EXPECT_THAT(refused(), HasSubstr("PET_NODE_RANK=\"2\": expected an integer from 0 to 1"));
  set("PET_NODE_RANK", "one");
  EXPECT_THAT(refused(), HasSubstr("PET_NODE_RANK=\"one\""));
}

TEST_F(TopologyTest, KubeflowMasterRequiredForSeveralNodes) {
  set("PET_NNODES", "2");
  set("PET_NODE_RANK", "1");
  EXPECT_THAT(refused(), HasSubstr("PET_MASTER_ADDR and MASTER_ADDR are not set"));
}

TEST_F(TopologyTest, KubeflowBadPort) {
  set("PET_NNODES", "1");
  set("PET_NODE_RANK", "0");
  set("MASTER_PORT", "70000");
  EXPECT_THAT(refused(), HasSubstr("MASTER_PORT=\"70000\": expected an integer from 1 to 65535"));
}

TEST_F(TopologyTest, FlagPortWinsOverKubeflow) {
  set("PET_NNODES", "1");
  set("PET_NODE_RANK", "0");
  set("PET_MASTER_PORT", "23456");
  args = {"--master-port", "30000"};
  EXPECT_EQ(ok().master_port, 30000);
}

TEST_F(TopologyTest, ForcedKubeflowWithoutVariables) {
  args = {"--platform", "kubeflow"};
  EXPECT_THAT(refused(), HasSubstr("--platform kubeflow: none of PET_NNODES"));
}

TEST_F(TopologyTest, ForcedBatchWithoutVariables) {
  args = {"--platform", "batch"};
  EXPECT_THAT(refused(), HasSubstr("--platform batch: AWS_BATCH_JOB_NUM_NODES is not set"));
}

// ---- AWS Batch ----

void batch_env(Environment& env, const char* n, const char* index, const char* main) {
  env.set("AWS_BATCH_JOB_NUM_NODES", n);
  env.set("AWS_BATCH_JOB_NODE_INDEX", index);
  env.set("AWS_BATCH_JOB_MAIN_NODE_INDEX", main);
  env.set("AWS_BATCH_JOB_ID", std::string("a1b2c3#") + index);
}

TEST_F(TopologyTest, BatchMainNodeUsesItsOwnAddress) {
  batch_env(env, "4", "0", "0");
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kBatch);
  EXPECT_EQ(t.nnodes, 4);
  EXPECT_EQ(t.node_rank, 0);
  EXPECT_EQ(t.master_addr, "10.0.0.9");
  EXPECT_THAT(t.origin["master_addr"], HasSubstr("own address"));
  EXPECT_EQ(t.job_id, "a1b2c3");
}

TEST_F(TopologyTest, BatchChildUsesTheMainNodeAddress) {
  batch_env(env, "4", "3", "0");
  set("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS", "10.0.5.5");
  auto t = ok();
  EXPECT_EQ(t.node_rank, 3);
  EXPECT_EQ(t.master_addr, "10.0.5.5");
  EXPECT_EQ(t.job_id, "a1b2c3");
}

TEST_F(TopologyTest, BatchRankZeroIsTheMainNodeWhateverItsIndex) {
  batch_env(env, "4", "2", "2");
  EXPECT_EQ(ok().node_rank, 0);
  batch_env(env, "4", "0", "2");
  set("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS", "10.0.5.5");
  EXPECT_EQ(ok().node_rank, 2);
  batch_env(env, "4", "3", "2");
  EXPECT_EQ(ok().node_rank, 1);
  batch_env(env, "4", "1", "2");
  EXPECT_EQ(ok().node_rank, 3);
}

TEST_F(TopologyTest, BatchRefusals) {
  batch_env(env, "4", "4", "0");
  EXPECT_THAT(refused(),
              HasSubstr("AWS_BATCH_JOB_NODE_INDEX=\"4\": expected an integer from 0 to 3"));
  batch_env(env, "4", "1", "7");
  EXPECT_THAT(refused(), HasSubstr("AWS_BATCH_JOB_MAIN_NODE_INDEX=\"7\""));
  batch_env(env, "four", "1", "0");
  EXPECT_THAT(refused(), HasSubstr("AWS_BATCH_JOB_NUM_NODES=\"four\""));
  batch_env(env, "4", "1", "0");
  EXPECT_THAT(refused(), HasSubstr("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS is not set"));
  set("AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS", "ip-10-0-0-1");
  EXPECT_THAT(refused(), HasSubstr("\"ip-10-0-0-1\": expected an IPv4 address"));
  env.erase("AWS_BATCH_JOB_MAIN_NODE_INDEX");
  EXPECT_THAT(refused(), HasSubstr("AWS_BATCH_JOB_MAIN_NODE_INDEX is not set"));
}

TEST_F(TopologyTest, BatchMainNodeWithoutAnAddress) {
  batch_env(env, "2", "0", "0");
  own_address = "";
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr("main node"));
  EXPECT_THAT(m, HasSubstr("--master-addr"));
  args = {"--platform", "batch", "--master-addr", "10.9.9.9"};
  EXPECT_EQ(ok().master_addr, "10.9.9.9");
}

TEST_F(TopologyTest, BatchSingleNodeNeedsNoAddress) {
  batch_env(env, "1", "0", "0");
  own_address = "";
  EXPECT_EQ(ok().master_addr, "127.0.0.1");
}

// ---- Slurm ----

void slurm_env(Environment& env, const char* n, const char* id, const char* list) {
  env.set("SLURM_JOB_ID", "4242");
  env.set("SLURM_NNODES", n);
  env.set("SLURM_NODEID", id);
  env.set("SLURM_JOB_NODELIST", list);
}

TEST_F(TopologyTest, SlurmSpecExample) {
  slurm_env(env, "6", "5", "gpu-[001-004,007],head");
  set("SLURMD_NODENAME", "head");
  auto t = ok();
  EXPECT_EQ(t.platform, Platform::kSlurm);
  EXPECT_EQ(t.nnodes, 6);
  EXPECT_EQ(t.node_rank, 5);
  EXPECT_EQ(t.master_addr, "gpu-001");
  EXPECT_EQ(t.hosts.size(), 6u);
  EXPECT_EQ(t.job_id, "4242");
  EXPECT_EQ(t.origin["node_rank"], "env SLURM_NODEID");
}

TEST_F(TopologyTest, SlurmAlternativeNames) {
  set("SLURM_JOB_ID", "1");
  set("SLURM_JOB_NUM_NODES", "4");
  set("SLURM_NODEID", "1");
  set("SLURM_NODELIST", "r[1-2]n[01-02]");
  auto t = ok();
  EXPECT_THAT(t.hosts, ElementsAre("r1n01", "r1n02", "r2n01", "r2n02"));
  EXPECT_EQ(t.origin["nnodes"], "env SLURM_JOB_NUM_NODES");
}

TEST_F(TopologyTest, SlurmStepInsideALargerAllocation) {
  slurm_env(env, "2", "1", "n[1-4]");
  set("SLURM_STEP_NUM_NODES", "2");
  set("SLURM_STEP_NODELIST", "n[3-4]");
  auto t = ok();
  EXPECT_THAT(t.hosts, ElementsAre("n3", "n4"));
  EXPECT_EQ(t.master_addr, "n3");
}

TEST_F(TopologyTest, SlurmRefusals) {
  slurm_env(env, "4", "0", "n[1-3]");
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr("SLURM_JOB_NODELIST=\"n[1-3]\" names 3 hosts but SLURM_NNODES=\"4\""));
  slurm_env(env, "4", "4", "n[1-4]");
  EXPECT_THAT(refused(), HasSubstr("SLURM_NODEID=\"4\": expected an integer from 0 to 3"));
  slurm_env(env, "x", "0", "n[1-4]");
  EXPECT_THAT(refused(), HasSubstr("SLURM_NNODES=\"x\""));
  slurm_env(env, "4", "0", "n[1-4");
  EXPECT_THAT(refused(), HasSubstr("unmatched"));
  slurm_env(env, "4", "0", "n[0-999999999]");
  EXPECT_THAT(refused(), HasSubstr("more than 100000 hosts"));
  slurm_env(env, "2", "0", "n[1-2]");
  env.erase("SLURM_NODEID");
  EXPECT_THAT(refused(), HasSubstr("SLURM_NODEID is not set"));
  slurm_env(env, "2", "0", "");
  EXPECT_THAT(refused(), HasSubstr("SLURM_JOB_NODELIST is not set"));
}

TEST_F(TopologyTest, SlurmNodeNameMustMatchItsRank) {
  slurm_env(env, "2", "0", "n[1-2]");
  set("SLURMD_NODENAME", "n2");
  EXPECT_THAT(refused(), HasSubstr("SLURMD_NODENAME=\"n2\""));
}

TEST_F(TopologyTest, ForcedSlurmConflictsWithExplicitNnodes) {
  slurm_env(env, "4", "1", "n[1-4]");
  args = {"--platform", "slurm", "--nnodes", "2"};
  std::string m = refused();
  EXPECT_THAT(m, HasSubstr("--nnodes=\"2\" conflicts with env SLURM_NNODES = 4"));
  args = {"--platform", "slurm", "--nnodes", "4", "--master-addr", "n1.cluster"};
  auto t = ok();
  EXPECT_EQ(t.master_addr, "n1.cluster");
  EXPECT_EQ(t.origin["master_addr"], "--master-addr");
}

TEST_F(TopologyTest, ForcedSlurmWithoutAJob) {
  args = {"--platform", "slurm"};
  EXPECT_THAT(refused(), HasSubstr("SLURM_JOB_ID is not set"));
  set("SLURM_JOB_ID", "3");
  EXPECT_THAT(refused(), HasSubstr("SLURM_NNODES is not set"));
}

TEST_F(TopologyTest, ForcedPlatformIgnoresOtherSources) {
  fs.add_file(kRc, topology_data("resourceconfig_plain.json"));
  slurm_env(env, "2", "1", "n[1-2]");
  args = {"--platform", "slurm"};
  EXPECT_EQ(ok().platform, Platform::kSlurm);
  EXPECT_EQ(ok().origin["platform"], "--platform");
}

}  // namespace
}  // namespace tv
