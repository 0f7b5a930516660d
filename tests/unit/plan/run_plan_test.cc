// plan_run (launcher/plan/run_plan.h): what `run` decides from its options, the environment the
// platform injects and the machine's facts (an in-memory file system, a fixed GPU count and
// address, PATH and the workers' torch as answers, a current directory that is not this test's),
// before anything starts. No child runs: the torch is the fake's answer, and each python asked for
// it is recorded. The options are parsed with run's own table (cli/run_options.cc), as run_command
// does.
#include "launcher/plan/run_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <map>

#include "cli/run_options.h"
#include "common/exit_codes.h"
#include "health/transport.h"
#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/topology/fixed_inputs.h"

namespace tv {
namespace {

class RunPlanTest : public ::testing::Test {
 protected:
  // `args`, then the workers' command: /bin/true unless a test gives its own after "--".
  Result<RunPlan> plan(std::vector<std::string> args) {
    if (std::find(args.begin(), args.end(), "--") == args.end())
      args.insert(args.end(), {"--no-python", "/bin/true"});
    auto o = parse_options(run_option_specs(), args, env, ParseMode{true, true});
    if (!o) return o.error();
    const FixedGpuCounter gpus(0);
    const FixedHostAddress host("10.0.0.9");
    return plan_run(*o, env, facts(gpus, host));
  }
  PlanFacts facts(const GpuCounter& gpus, const HostAddress& host) {
    return {
        .fs = fs,
        .gpus = gpus,
        .host = host,
        .executable = [this](const std::string& name, const Environment&) -> Result<std::string> {
          if (!on_path.count(name))
            return Error{ErrorKind::kNotFound, "command not found: " + name};
          return on_path.at(name);
        },
        .workers_python = [this](const std::string& python, const Environment&,
                                 const std::string& module) -> WorkersPython {
          asked_torch.push_back(python);
          asked_module.push_back(module);
          return {torch, module.empty() ? std::nullopt : module_found};
        },
        .self_exe = [] { return std::string("/usr/bin/trainvisor"); },
        .version = "9.9.9",
        .cwd = cwd};
  }
  RunPlan ok(std::vector<std::string> args) {
    auto p = plan(std::move(args));
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    return p.ok() ? *p : RunPlan{};
  }
  Error refused(std::vector<std::string> args) {
    auto p = plan(std::move(args));
    EXPECT_FALSE(p.ok());
    return p.ok() ? Error{ErrorKind::kFailed, ""} : p.error();
  }
  void slurm_step() {
    for (const auto& [k, v] : {std::pair{"SLURM_JOB_ID", "7"},
                               {"SLURM_STEP_ID", "0"},
                               {"SLURM_NNODES", "1"},
                               {"SLURM_STEP_NUM_NODES", "1"},
                               {"SLURM_NODEID", "0"},
                               {"SLURM_LOCALID", "0"},
                               {"SLURM_STEP_NODELIST", "tvn1"},
                               {"SLURM_NTASKS_PER_NODE", "1"}})
      env.set(k, v);
  }

  Environment env;
  testing::FakeFileSystem fs;
  std::map<std::string, std::string> on_path = {{"/bin/true", "/bin/true"},
                                                {"python3", "/usr/bin/python3"}};
  std::optional<TorchVersion> torch;      // the workers' python's answer
  std::vector<std::string> asked_torch;   // each python asked
  std::vector<std::string> asked_module;  // and the module it was asked about ("": none)
  std::optional<bool> module_found;       // its answer about that module
  std::string cwd = "/jobs/42";           // trainvisor's current directory (not this test's)
};

TEST_F(RunPlanTest, TheOperatorsPortOnTheMetricsPortBecomesAFreshMasterPort) {
  env.set("PET_MASTER_PORT", "29500");
  const RunPlan p = ok({"--nproc-per-node", "1", "--metrics-port", "29500"});
  EXPECT_EQ(p.topology.master_port, 0);  // generation 0 takes a fresh one from the kernel
  EXPECT_NE(p.topology.origin.at("master_port").find("metrics"), std::string::npos)
      << p.topology.origin.at("master_port");
}

TEST_F(RunPlanTest, OnePortNamedForTheMasterAndTheMetricsByTrainvisorsOptionsIsRefused) {
  const Error e =
      refused({"--nproc-per-node", "1", "--master-port", "29500", "--metrics-port", "29500"});
  EXPECT_EQ(e.kind, ErrorKind::kConfig);
  EXPECT_NE(e.message.find("29500"), std::string::npos) << e.message;
}

// The preflight's plan from this node's facts, read through the plan's file system: an EFA device
// on a job of two nodes makes `auto` the full preflight over EFA (NCCL_NET for the workers); a GPU
// on the PCI bus with no driver (no device node) is expected all the same.
TEST_F(RunPlanTest, ThePreflightsTransportLevelAndGpusComeFromTheNodesFacts) {
  const std::string dev = "/sys/class/infiniband/rdmap16s27/device";
  fs.add_link(dev + "/driver", "../../../../bus/pci/drivers/efa");
  fs.add_file(dev + "/vendor", "0x1d0f\n");
  const std::vector<std::string> two_nodes = {"--nnodes",         "2", "--node-rank",   "1",
                                              "--nproc-per-node", "2", "--master-addr", "10.0.0.1"};
  RunPlan p = ok(two_nodes);
  EXPECT_EQ(p.transport.resolved, TransportRule::kEfa);
  EXPECT_EQ(p.preflight_level, PreflightLevel::kFull);
  EXPECT_EQ(p.sup.layout.extra.at("NCCL_NET"), kEfaNcclNet);
  EXPECT_EQ(p.expected_gpus, -1);  // no NVIDIA GPU on this node's bus: its workers use the CPU
  fs.add_file("/sys/bus/pci/devices/0000:00:1e.0/vendor", "0x10de\n");
  fs.add_file("/sys/bus/pci/devices/0000:00:1e.0/class", "0x030200\n");
  p = ok(two_nodes);
  EXPECT_EQ(p.visible_gpus, 0);
  EXPECT_EQ(p.expected_gpus, 2);  // the driver is missing, the GPUs are not
  env.set("NCCL_NET", "Socket");  // the operator's own choice stands
  EXPECT_FALSE(ok(two_nodes).sup.layout.extra.contains("NCCL_NET"));
  p = ok({"--nproc-per-node", "2"});  // one node: any transport, the basic checks
  EXPECT_EQ(p.transport.resolved, TransportRule::kAny);
  EXPECT_EQ(p.preflight_level, PreflightLevel::kBasic);
  p = ok({"--nproc-per-node", "2", "--preflight", "none"});
  EXPECT_EQ(p.preflight_level, PreflightLevel::kNone);
  EXPECT_EQ(p.expected_gpus, -1);  // not read: no preflight runs
}

// With hot spares the full preflight's cross-node probe has no fixed set of nodes: `auto` (full
// on EFA) is basic on every node, `--preflight full` is refused naming both options.
TEST_F(RunPlanTest, WithSparesThePreflightIsBasicAndFullIsRefused) {
  const std::string dev = "/sys/class/infiniband/rdmap16s27/device";
  fs.add_link(dev + "/driver", "../../../../bus/pci/drivers/efa");
  fs.add_file(dev + "/vendor", "0x1d0f\n");
  std::vector<std::string> args = {"--nnodes",         "2", "--spare-nodes", "1",
                                   "--node-rank",      "2", "--master-addr", "10.0.0.1",
                                   "--nproc-per-node", "2"};
  const RunPlan p = ok(args);
  EXPECT_EQ(p.transport.resolved, TransportRule::kEfa);
  EXPECT_EQ(p.preflight_level, PreflightLevel::kBasic);
  args.insert(args.end(), {"--preflight", "full"});
  const Error e = refused(args);
  EXPECT_EQ(e.kind, ErrorKind::kConfig);
  EXPECT_NE(e.message.find("--preflight full with --spare-nodes 1"), std::string::npos)
      << e.message;
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
  EXPECT_EQ(e.kind, ErrorKind::kConfig);
  EXPECT_NE(e.message.find("--master-port"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("--rdzv-port"), std::string::npos) << e.message;
}

TEST_F(RunPlanTest, InsideASlurmStepSignalsAreSlurmsToDeliverAndNotForwarded) {
  EXPECT_FALSE(ok({"--nproc-per-node", "1"}).sup.signals_reach_workers);
  slurm_step();
  const RunPlan p = ok({});
  EXPECT_EQ(p.topology.platform, Platform::kSlurm);
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
  EXPECT_EQ(e.kind, ErrorKind::kConfig);
  env.erase("SM_MODEL_DIR");
  const Error none = refused({"--nproc-per-node", "1", "--export", "/runs/out"});
  EXPECT_NE(none.message.find("--export-dir"), std::string::npos) << none.message;
}

// --export's overlap check reads the fake and the cwd fact, never this machine: a link only the
// fake holds, a glob's match only the fake holds, a relative path under the cwd fact.
TEST_F(RunPlanTest, TheExportsOverlapIsReadThroughTheFileSystemAndTheCwdFact) {
  auto export_into = [&](const std::string& what, const std::string& dir) {
    return plan({"--nproc-per-node", "1", "--export", what, "--export-dir", dir});
  };
  auto expect_refused = [&](const std::string& what, const std::string& dir,
                            const std::string& text) {
    const auto p = export_into(what, dir);
    ASSERT_FALSE(p.ok()) << what << " into " << dir;
    EXPECT_EQ(p.error().exit_code(), exit_code_of(ErrorKind::kConfig));
    EXPECT_NE(p.error().message.find(text), std::string::npos) << p.error().message;
  };
  fs.add_file("/out/model/weights.pt", "");
  EXPECT_TRUE(export_into("/ckpt/latest", "/out/model").ok());
  fs.add_link("/ckpt/latest", "/out");
  expect_refused("/ckpt/latest", "/out/model",
                 "the source /ckpt/latest holds the export directory /out/model");

  EXPECT_TRUE(export_into("/runs/model/*.pt", "/runs/model").ok());
  fs.add_file("/runs/model/old.pt", "");
  expect_refused("/runs/model/*.pt", "/runs/model",
                 "the match /runs/model/old.pt is already in the export directory");

  expect_refused("out", "/jobs/42/out/model",
                 "the source out holds the export directory /jobs/42/out/model");
  expect_refused("/jobs/42/out", "out", "the export directory out is the source /jobs/42/out");
  cwd = "/jobs/7";
  EXPECT_TRUE(export_into("out", "/jobs/42/out/model").ok());
}

TEST_F(RunPlanTest, TheDefaultTerminationLogIsUsedOnlyWhereKubernetesMountedIt) {
  EXPECT_EQ(ok({"--nproc-per-node", "1"}).sup.termination_log, "");
  fs.add_file("/dev/termination-log", "");
  EXPECT_EQ(ok({"--nproc-per-node", "1"}).sup.termination_log, "/dev/termination-log");
}

TEST_F(RunPlanTest, ASaveSignalWithoutACheckpointDirectoryIsRefused) {
  const Error e = refused({"--nproc-per-node", "1", "--save-signal", "USR1"});
  EXPECT_EQ(e.kind, ErrorKind::kConfig);
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

TEST_F(RunPlanTest, APythonScriptRunsUnderTheInterpreterAndItsTorchDecidesTheLayout) {
  fs.add_file("train.py", "");
  torch = TorchVersion{2, 5, "2.5.1+cu124", "12.4", "2.21.5"};
  const RunPlan p = ok({"--nproc-per-node", "1", "--", "train.py", "--lr", "1"});
  EXPECT_EQ(p.sup.argv, (std::vector<std::string>{"python3", "-u", "train.py", "--lr", "1"}));
  EXPECT_EQ(p.sup.executable, "/usr/bin/python3");  // PATH's answer
  EXPECT_EQ(p.interpreter.origin, "PATH");
  EXPECT_EQ(asked_torch, std::vector<std::string>{"python3"});
  ASSERT_TRUE(p.sup.layout.torch.has_value());
  EXPECT_EQ(*p.sup.layout.torch, (std::pair{2, 5}));
}

TEST_F(RunPlanTest, ACommandThatIsNotPythonAsksNoTorch) {
  const RunPlan p = ok({"--nproc-per-node", "1"});
  EXPECT_TRUE(asked_torch.empty());
  EXPECT_FALSE(p.torch.has_value());
  EXPECT_FALSE(p.sup.layout.torch.has_value());
}

TEST_F(RunPlanTest, AMissingScriptOrCommandIsRefusedBeforeAnythingStarts) {
  const Error script = refused({"--nproc-per-node", "1", "--", "missing.py"});
  EXPECT_EQ(script.kind, ErrorKind::kNotFound);
  EXPECT_NE(script.message.find("missing.py: no such file"), std::string::npos) << script.message;
  const Error command = refused({"--nproc-per-node", "1", "--no-python", "--", "nosuch"});
  EXPECT_EQ(command.kind, ErrorKind::kNotFound);
  EXPECT_EQ(command.message, "command not found: nosuch");  // PATH's answer, passed on
}

TEST_F(RunPlanTest, AModuleThePythonCannotFindIsRefusedBeforeAnythingStarts) {
  module_found = false;
  const Error e = refused({"--nproc-per-node", "1", "-m", "--", "no_such_module", "--lr", "1"});
  EXPECT_EQ(e.kind, ErrorKind::kNotFound);
  EXPECT_NE(e.message.find("no_such_module: no such module"), std::string::npos) << e.message;
  EXPECT_EQ(asked_module, std::vector<std::string>{"no_such_module"});  // the torch query's child
  module_found = true;
  ok({"--nproc-per-node", "1", "-m", "--", "pkg.train"});
  module_found.reset();  // no answer (python late or broken): never refused
  ok({"--nproc-per-node", "1", "-m", "--", "pkg.train"});
  EXPECT_EQ(asked_module.back(), "pkg.train");
}

TEST_F(RunPlanTest, AScriptAsksTheWorkersPythonAboutNoModule) {
  fs.add_file("train.py", "");
  module_found = false;
  ok({"--nproc-per-node", "1", "--", "train.py"});
  EXPECT_EQ(asked_module, std::vector<std::string>{""});
}

TEST_F(RunPlanTest, TheGpuWatchRunsThisBinaryUnlessItIsOff) {
  const RunPlan p = ok({"--nproc-per-node", "1"});
  ASSERT_TRUE(p.sup.gpu_health.has_value());
  EXPECT_EQ(p.sup.gpu_health->executable, "/usr/bin/trainvisor");
  EXPECT_EQ(p.sup.gpu_health->argv.at(1), "__query");
  EXPECT_FALSE(ok({"--nproc-per-node", "1", "--gpu-health", "off"}).sup.gpu_health.has_value());
}

TEST_F(RunPlanTest, TheFingerprintCarriesThisVersionAndTheWorkersTorch) {
  fs.add_file("train.py", "");
  torch = TorchVersion{2, 5, "2.5.1+cu124", "12.4", "2.21.5"};
  const RunPlan p = ok({"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "1",
                        "--master-addr", "10.0.0.1", "--", "train.py"});
  ASSERT_TRUE(p.fingerprint.has_value());
  const auto& facts = p.fingerprint->facts;
  EXPECT_EQ(facts.at("trainvisor"), "9.9.9");
  EXPECT_EQ(facts.at("torch"), "2.5.1+cu124");
  EXPECT_EQ(facts.at("cuda"), "12.4");
}

TEST_F(RunPlanTest, ARelativeCheckpointDirectoryIsUnderTrainvisorsDirectoryNotTheTests) {
  const RunPlan p = ok({"--nproc-per-node", "1", "--checkpoint-dir", "ckpt"});
  ASSERT_TRUE(p.ckpt_dir.has_value());
  EXPECT_EQ(*p.ckpt_dir, "/jobs/42/ckpt");  // PlanFacts::cwd, not this process's directory
  ASSERT_TRUE(p.resume.has_value());
  EXPECT_EQ(p.resume->dir, "/jobs/42/ckpt");
}

TEST_F(RunPlanTest, TheFingerprintReadsTheNetPluginThroughThePlansFileSystem) {
  // A plugin file only the fake holds, on the LD_LIBRARY_PATH the workers get.
  env.set("LD_LIBRARY_PATH", "/fake/ofi/lib");
  fs.add_file("/fake/ofi/lib/libnccl-net-ofi.so", "NET/OFI Initializing aws-ofi-nccl 1.99.0-fake");
  const RunPlan p = ok(
      {"--nnodes", "2", "--node-rank", "1", "--nproc-per-node", "1", "--master-addr", "10.0.0.1"});
  ASSERT_TRUE(p.fingerprint.has_value());
  EXPECT_EQ(p.fingerprint->facts.at("aws-ofi-nccl"), "1.99.0-fake");
}

TEST_F(RunPlanTest, TheResumeLookupIsTheWorkersExperimentsUnlessOneIsNamed) {
  fs.add_file("train.py", "");
  const RunPlan p = ok({"--nproc-per-node", "1", "--checkpoint-dir", "/ckpt", "--", "train.py",
                        "--experiment_name", "cartpole", "--task", "Isaac-Cartpole-v0"});
  ASSERT_TRUE(p.resume.has_value());
  EXPECT_EQ(p.resume->experiment, "cartpole");
  EXPECT_EQ(p.resume->task, "Isaac-Cartpole-v0");
  EXPECT_EQ(p.resume->settle.count(), 0);
  EXPECT_FALSE(
      ok({"--nproc-per-node", "1", "--checkpoint-dir", "/ckpt", "--resume", "none"}).resume);
}

}  // namespace
}  // namespace tv
