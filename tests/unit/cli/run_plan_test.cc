// plan_run (cli/run_plan.h): what `run` decides from its options, the environment the platform
// injects and the machine's facts (an in-memory file system, a fixed GPU count and address), before
// anything starts. The workers' command is /bin/true, so no python is asked for its torch.
#include "cli/run_plan.h"

#include <gtest/gtest.h>

#include <csignal>

#include "cli/run_options.h"
#include "common/exit_codes.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/topology/fixed_inputs.h"

namespace tv {
namespace {

class RunPlanTest : public ::testing::Test {
 protected:
  Result<RunPlan> plan(std::vector<std::string> args) {
    args.insert(args.end(), {"--no-python", "/bin/true"});
    auto o = parse_options(run_option_specs(), args, env, ParseMode{true, true});
    if (!o) return o.error();
    const FixedGpuCounter gpus(0);
    const FixedHostAddress host("10.0.0.9");
    return plan_run(*o, env, PlanFacts{fs, gpus, host});
  }
  RunPlan ok(std::vector<std::string> args) {
    auto p = plan(std::move(args));
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    return p.ok() ? *p : RunPlan{};
  }
  Error refused(std::vector<std::string> args) {
    auto p = plan(std::move(args));
    EXPECT_FALSE(p.ok());
    return p.ok() ? Error{} : p.error();
  }
  void slurm_step() {
    for (const auto& [k, v] : {std::pair{"SLURM_JOB_ID", "7"}, {"SLURM_STEP_ID", "0"},
                               {"SLURM_NNODES", "1"}, {"SLURM_STEP_NUM_NODES", "1"},
                               {"SLURM_NODEID", "0"}, {"SLURM_LOCALID", "0"},
                               {"SLURM_STEP_NODELIST", "tvn1"}, {"SLURM_NTASKS_PER_NODE", "1"}})
      env.set(k, v);
  }

  Environment env;
  testing::FakeFileSystem fs;
};

TEST_F(RunPlanTest, TheOperatorsPortOnTheMetricsPortBecomesAFreshMasterPort) {
  env.set("PET_MASTER_PORT", "29500");
  const RunPlan p = ok({"--nproc-per-node", "1", "--metrics-port", "29500"});
  EXPECT_EQ(p.topology.master_port, 0);  // generation 0 takes a fresh one from the kernel
  EXPECT_NE(p.topology.origin.at("master_port").find("metrics"), std::string::npos)
      << p.topology.origin.at("master_port");
}

TEST_F(RunPlanTest, OnePortNamedForTheMasterAndTheMetricsByTrainvisorsOptionsIsRefused) {
  const Error e = refused({"--nproc-per-node", "1", "--master-port", "29500", "--metrics-port",
                           "29500"});
  EXPECT_EQ(e.exit_code, exit_code::kConfig);
  EXPECT_NE(e.message.find("29500"), std::string::npos) << e.message;
}

TEST_F(RunPlanTest, OnSeveralNodesTheRendezvousPortIsTheMasterPortPlusOne) {
  const RunPlan p = ok({"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "1",
                        "--master-addr", "10.0.0.1", "--master-port", "29400"});
  EXPECT_EQ(p.rdzv_port, 29401);
  EXPECT_TRUE(p.fingerprint.has_value());  // sent in this node's joins
}

TEST_F(RunPlanTest, AMasterPortWithNoPortAfterItOnSeveralNodesIsRefusedNamingItsOrigin) {
  const Error e = refused({"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "1",
                           "--master-addr", "10.0.0.1", "--master-port", "65535"});
  EXPECT_EQ(e.exit_code, exit_code::kConfig);
  EXPECT_NE(e.message.find("--master-port"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("--rdzv-port"), std::string::npos) << e.message;
}

TEST_F(RunPlanTest, InsideASlurmStepSignalsAreSlurmsToDeliverAndNotForwarded) {
  EXPECT_FALSE(ok({"--nproc-per-node", "1"}).sup.signals_reach_workers);
  slurm_step();
  const RunPlan p = ok({});
  EXPECT_EQ(p.topology.platform, "slurm");
  EXPECT_TRUE(p.sup.signals_reach_workers);
}

TEST_F(RunPlanTest, SageMakersCheckpointDirectoryIsTheDefaultWhereItExists) {
  EXPECT_FALSE(ok({"--nproc-per-node", "1"}).ckpt_dir.has_value());
  fs.add_file("/opt/ml/checkpoints/.keep", "");
  const RunPlan p = ok({"--nproc-per-node", "1"});
  ASSERT_TRUE(p.ckpt_dir.has_value());
  EXPECT_EQ(*p.ckpt_dir, "/opt/ml/checkpoints");
  ASSERT_TRUE(p.resume.has_value());  // --resume's default looks there
  EXPECT_EQ(p.resume->dir, "/opt/ml/checkpoints");
  EXPECT_EQ(p.observability.ledger_dir, p.ckpt_dir);
}

TEST_F(RunPlanTest, TheRendezvousTokenIsTrainvisorsAloneAndTheRestOfTheEnvironmentIsTheWorkers) {
  env.set("TRAINVISOR_RDZV_TOKEN", "s3cret");
  env.set("ISAAC_PATH", "/isaac-sim");
  const RunPlan p = ok({"--nproc-per-node", "1"});
  EXPECT_EQ(p.rdzv_token.value_or(""), "s3cret");
  EXPECT_FALSE(p.sup.base_env.has("TRAINVISOR_RDZV_TOKEN"));
  EXPECT_EQ(p.sup.base_env.get("ISAAC_PATH").value_or(""), "/isaac-sim");
}

TEST_F(RunPlanTest, TheExportGoesToSageMakersModelDirectoryAndNeverIntoItself) {
  env.set("SM_MODEL_DIR", "/opt/ml/model");
  EXPECT_EQ(ok({"--nproc-per-node", "1", "--export", "/runs/out"}).export_dir, "/opt/ml/model");
  const Error e = refused({"--nproc-per-node", "1", "--export", "/opt/ml"});
  EXPECT_EQ(e.exit_code, exit_code::kConfig);
  env.erase("SM_MODEL_DIR");
  const Error none = refused({"--nproc-per-node", "1", "--export", "/runs/out"});
  EXPECT_NE(none.message.find("--export-dir"), std::string::npos) << none.message;
}

TEST_F(RunPlanTest, TheDefaultTerminationLogIsUsedOnlyWhereKubernetesMountedIt) {
  EXPECT_EQ(ok({"--nproc-per-node", "1"}).sup.termination_log, "");
  fs.add_file("/dev/termination-log", "");
  EXPECT_EQ(ok({"--nproc-per-node", "1"}).sup.termination_log, "/dev/termination-log");
}

TEST_F(RunPlanTest, ASaveSignalWithoutACheckpointDirectoryIsRefused) {
  const Error e = refused({"--nproc-per-node", "1", "--save-signal", "USR1"});
  EXPECT_EQ(e.exit_code, exit_code::kConfig);
  EXPECT_NE(e.message.find("--checkpoint-dir"), std::string::npos) << e.message;
  const RunPlan p =
      ok({"--nproc-per-node", "1", "--save-signal", "USR1", "--checkpoint-dir", "/ckpt"});
  EXPECT_EQ(p.sup.save_signal, SIGUSR1);
}

TEST_F(RunPlanTest, TheGracePeriodIsGivenOrUnderThePlatformsStopWindow) {
  EXPECT_EQ(ok({"--nproc-per-node", "1", "--grace-period", "3"}).sup.grace.count(), 3000);
  const auto local = ok({"--nproc-per-node", "1"}).sup.grace;
  env.set("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  const auto kubernetes = ok({"--nproc-per-node", "1"}).sup.grace;
  EXPECT_LT(kubernetes.count(), 30000);  // under the pod's terminationGracePeriodSeconds
  EXPECT_GT(local.count(), 0);
}

}  // namespace
}  // namespace tv
