// render: the job description parser (every error names its field, exit 78) and each target's
// shape. The rendered files are validated against the real schemas in
// tests/integration/test_render.py (CRD schema, botocore, bash -n).
#include "render/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"

namespace tv {
namespace {

using nlohmann::json;

const char* kMinimal = R"({"name": "job-a", "image": "img:1", "nodes": 3, "gpus_per_node": 8,
                           "efa_per_node": 4, "command": ["train.py", "--lr", "3e-4"]})";

JobConfig parse_ok(const std::string& text) {
  auto c = parse_job_config(text, "job.json");
  EXPECT_TRUE(c.ok()) << (c ? "" : c.error().message);
  return c ? *c : JobConfig{};
}

// The error for `text`; the test fails if it parsed.
Error parse_error(const std::string& text) {
  auto c = parse_job_config(text, "job.json");
  EXPECT_FALSE(c.ok());
  return c ? Error{0, ""} : c.error();
}

json with(const std::string& key, const json& value) {
  json j = json::parse(kMinimal);
  j[key] = value;
  return j;
}

TEST(JobConfig, ReadsFieldsAndDefaults) {
  const JobConfig c = parse_ok(kMinimal);
  EXPECT_EQ(c.name, "job-a");
  EXPECT_EQ(c.nodes, 3);
  EXPECT_EQ(c.efa_per_node, 4);
  EXPECT_FALSE(c.shm_mib.has_value());
  EXPECT_EQ(c.command, (std::vector<std::string>{"train.py", "--lr", "3e-4"}));
  EXPECT_EQ(c.checkpoint_dir, "/opt/ml/checkpoints");
  EXPECT_EQ(c.max_restarts, 3);
  EXPECT_FALSE(c.grace_period.has_value());
}

TEST(JobConfig, EveryErrorIsConfigAndNamesTheField) {
  const std::vector<std::pair<json, std::string>> cases = {
      {with("nodes", "two"), "job.json: nodes: expected an integer 1..10000, got \"two\""},
      {with("nodes", 0), "nodes: expected an integer"},
      {with("name", "Job_A"), "name: expected lowercase letters"},
      {with("command", json::array()), "command: expected a non-empty list"},
      {with("command", json::array({"train.py", 3})),
       "command: expected a list of non-empty strings"},
      {with("nodez", 2), "nodez: unknown field"},
      {with("storage", {{"pvc", "x"}}), "storage: replaced by volumes"},
      {with("volumes", json::array({{{"name", "fsx"}, {"pvc", "x"}}})),
       "volumes[0].mount_path: missing"},
      {with("volumes", json::array({{{"name", "fsx"}, {"mount_path", "fsx"}, {"pvc", "x"}}})),
       "volumes[0].mount_path: expected an absolute path"},
      {with("volumes", json::array({{{"name", "fsx"}, {"mount_path", "/fsx"}}})),
       "volumes[0].pvc: expected exactly one of pvc, host_path, efs_id"},
      {with("sagemaker", {{"role_arn", "r"}}), "sagemaker.output_s3_uri: missing"},
      {with("kubeflow", {{"max_retry", -1}}), "kubeflow.max_retry: expected an integer 0..100"},
      {with("kubeflow", {{"restart_policy", "Always"}}),
       "kubeflow.restart_policy: expected OnFailure"},
      {with("kubeflow", {{"restart_policy", "ExitCode"}}),
       "kubeflow.restart_policy: ExitCode is refused: the training operator retries only exit "
       "codes >= 128"},
      {with("env", {{"1X", "a"}}), "env.1X: expected a variable name"},
      {with("env", {{"AWS_BATCH_JOB_ID", "a"}}), "env.AWS_BATCH_JOB_ID: is set by the platform"},
      {with("env", {{"X", 1}}), "env.X: expected a string"},
      {with("secrets", {{"HF_TOKEN", {{"key", "token"}}}}), "secrets.HF_TOKEN.secret: missing"},
      {with("secrets", {{"HF_TOKEN", {{"arn", "secret-id"}}}}), "secrets.HF_TOKEN.arn: expected"},
      {with("timeout_s", 10), "timeout_s: expected an integer 60..2419200"},
      {with("workdir", "work"), "workdir: expected an absolute path"},
      {with("image", "img:1\nrm -rf /"), "image: expected an image reference"},
      {with("batch", {{"vcpus", "8"}}), "batch.vcpus: expected an integer"},
      {with("slurm", {{"partitions", "gpu"}}), "slurm.partitions: unknown field"},
      {with("checkpoint_s3_uri", "bucket/x"), "checkpoint_s3_uri: expected s3://"},
      {with("grace_period", 0), "grace_period: expected an integer 1..3600"},
      {with("run_args", json::array({"--nnodes=2"})),
       "run_args: \"--nnodes=2\" is written by render from nodes: set that instead"},
  };
  for (const auto& [doc, expected] : cases) {
    const Error e = parse_error(doc.dump());
    EXPECT_EQ(e.exit_code, exit_code::kConfig) << doc.dump();
    EXPECT_NE(e.message.find(expected), std::string::npos) << e.message;
  }
  EXPECT_EQ(parse_error("{\"name\": ").message.rfind("job.json: not valid JSON (", 0), 0u);
  EXPECT_NE(parse_error(std::string(100000, '[') + std::string(100000, ']'))
                .message.find("job.json: not valid JSON (nested deeper than 64 levels)"),
            std::string::npos);
  EXPECT_NE(parse_error("[1]").message.find("expected a JSON object"), std::string::npos);
  EXPECT_NE(parse_error(R"({"image": "i", "command": ["a"]})").message.find("name: missing"),
            std::string::npos);
}

// A CPU job (gpus_per_node 0): render writes no --nproc-per-node, so run_args may; with GPUs it
// is render's own.
TEST(JobConfig, RunArgsSetTheWorkerCountOnlyOfACpuJob) {
  json cpu = with("gpus_per_node", 0);
  cpu["run_args"] = json::array({"--nproc-per-node", "2"});
  EXPECT_EQ(parse_ok(cpu.dump()).run_args.size(), 2u);
  const Error e = parse_error(with("run_args", json::array({"--nproc-per-node", "2"})).dump());
  EXPECT_NE(e.message.find("is written by render from gpus_per_node"), std::string::npos);
}

json rendered_json(const JobConfig& c, const std::string& target) {
  auto r = render_job(c, target);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? json::parse(r->text) : json{};
}

TEST(Render, UnknownTargetIsAConfigError) {
  auto r = render_job(parse_ok(kMinimal), "nomad");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code, exit_code::kConfig);
  EXPECT_NE(r.error().message.find("--target"), std::string::npos);
}

TEST(Render, KubeflowMasterAndWorkersWithEfaShmTokenAndStopWindow) {
  const json j = rendered_json(parse_ok(kMinimal), "kubeflow");
  const json& specs = j["spec"]["pytorchReplicaSpecs"];
  EXPECT_EQ(specs["Master"]["replicas"], 1);
  EXPECT_EQ(specs["Worker"]["replicas"], 2);
  EXPECT_EQ(specs["Worker"]["restartPolicy"], "OnFailure");
  EXPECT_EQ(specs["Master"]["restartPolicy"], "OnFailure");
  EXPECT_EQ(j["spec"]["nprocPerNode"], "8");
  const json& pod = specs["Worker"]["template"]["spec"];
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], 30);  // default grace 25 + 5
  const json& ct = pod["containers"][0];
  EXPECT_EQ(ct["name"], "pytorch");
  EXPECT_EQ(ct["resources"]["limits"]["vpc.amazonaws.com/efa"], 4);
  EXPECT_EQ(ct["resources"]["limits"]["nvidia.com/gpu"], 8);
  EXPECT_EQ(ct["volumeMounts"][0]["mountPath"], "/dev/shm");
  EXPECT_EQ(pod["volumes"][0]["emptyDir"]["medium"], "Memory");
  EXPECT_EQ(ct["env"][0]["valueFrom"]["secretKeyRef"]["name"], "job-a-rdzv");
  const auto args = ct["args"].get<std::vector<std::string>>();
  EXPECT_EQ(std::vector<std::string>(args.begin(), args.begin() + 7),
            (std::vector<std::string>{"run", "--platform", "kubeflow", "--nnodes", "3",
                                      "--nproc-per-node", "8"}));
  EXPECT_EQ(args.back(), "3e-4");
  // No instance type: 16 GiB of /dev/shm, not Docker's 64 MB.
  EXPECT_EQ(pod["volumes"][0]["emptyDir"]["sizeLimit"], "16384Mi");
  EXPECT_EQ(pod["tolerations"][0]["key"], "sagemaker.amazonaws.com/node-health-status");
  EXPECT_EQ(pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
               ["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0],
            "Schedulable");
  EXPECT_EQ(pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
               ["preference"]["matchExpressions"][0]["key"],
            "sagemaker.amazonaws.com/deep-health-check-status");
  EXPECT_EQ(j["metadata"]["annotations"]["sagemaker.amazonaws.com/enable-job-auto-resume"], "true");
}

TEST(Render, KubeflowOneNodeHasNoWorkersAndGraceFollowsConfig) {
  json doc = with("nodes", 1);
  doc["grace_period"] = 60;
  doc["kubeflow"] = {{"node_health", false}};
  const json j = rendered_json(parse_ok(doc.dump()), "kubeflow");
  EXPECT_FALSE(j["spec"]["pytorchReplicaSpecs"].contains("Worker"));
  EXPECT_EQ(j["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
             ["terminationGracePeriodSeconds"],
            65);
  EXPECT_FALSE(j["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"].contains("affinity"));
}

TEST(Render, SageMakerNeedsItsFieldsAndUsesContainerEntrypoint) {
  auto missing = render_job(parse_ok(kMinimal), "sagemaker");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code, exit_code::kConfig);
  EXPECT_NE(missing.error().message.find("sagemaker: missing"), std::string::npos);

  json doc =
      with("sagemaker", {{"role_arn", "arn:aws:iam::1:role/r"}, {"output_s3_uri", "s3://b/o"}});
  doc["instance_type"] = "p5.48xlarge";  // ml. is added for SageMaker
  doc["checkpoint_s3_uri"] = "s3://b/ckpt";
  const json j = rendered_json(parse_ok(doc.dump()), "sagemaker");
  EXPECT_EQ(j["ResourceConfig"]["InstanceType"], "ml.p5.48xlarge");
  EXPECT_EQ(j["AlgorithmSpecification"]["ContainerEntrypoint"][0], "/usr/local/bin/trainvisor");
  EXPECT_EQ(j["CheckpointConfig"]["LocalPath"], "/opt/ml/checkpoints");
  EXPECT_EQ(j["ResourceConfig"]["InstanceCount"], 3);
  const auto args =
      j["AlgorithmSpecification"]["ContainerArguments"].get<std::vector<std::string>>();
  const auto grace = std::find(args.begin(), args.end(), "--grace-period");
  ASSERT_NE(grace, args.end());
  EXPECT_EQ(*(grace + 1), "110");  // under SageMaker's 120 s
}

TEST(Render, BatchRetriesPeerLossExitsOnConfigAndPreflight) {
  auto missing = render_job(parse_ok(kMinimal), "batch");  // no instance type to take it from
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("batch.vcpus: missing"), std::string::npos);
  const json j =
      rendered_json(parse_ok(with("batch", {{"vcpus", 8}, {"memory_mib", 4096}}).dump()), "batch");
  EXPECT_EQ(j["type"], "multinode");
  EXPECT_EQ(j["nodeProperties"]["numNodes"], 3);
  const json& rules = j["retryStrategy"]["evaluateOnExit"];
  EXPECT_EQ(rules[0], json({{"onExitCode", "75"}, {"action", "RETRY"}}));
  EXPECT_EQ(rules[1], json({{"onExitCode", "74"}, {"action", "RETRY"}}));
  // 78 and 69 reach the last entry: EXIT (Batch takes at most 5 entries).
  EXPECT_EQ(rules[3], json({{"onReason", "*"}, {"action", "EXIT"}}));
  EXPECT_EQ(rules.size(), 4u);
  const json& ct = j["nodeProperties"]["nodeRangeProperties"][0]["container"];
  EXPECT_EQ(ct["linuxParameters"]["devices"].size(), 4u);
  EXPECT_EQ(ct["linuxParameters"]["devices"][3]["hostPath"], "/dev/infiniband/uverbs3");
  // Batch runs ENTRYPOINT ["/usr/local/bin/trainvisor"] + command: the command starts at run.
  EXPECT_EQ(ct["command"][0], "run");
  EXPECT_EQ(ct["command"][2], "batch");
  EXPECT_EQ(ct["linuxParameters"]["sharedMemorySize"], 16384);
}

TEST(Render, SlurmQuotesWordsThatNeedIt) {
  json doc = with("command", json::array({"train.py", "--name", "it's a run", "$HOME"}));
  auto r = render_job(parse_ok(doc.dump()), "slurm");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->text.find("#SBATCH --nodes=3\n"), std::string::npos);
  EXPECT_NE(r->text.find("'it'\\''s a run'"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("'$HOME'"), std::string::npos);
  EXPECT_NE(r->text.find("--container-image=img:1"), std::string::npos);
}

// The batch shell survives sbatch --signal=B:USR1@N and passes it on; srun does not kill what
// trainvisor stops; a requeued job's log is appended to (test_slurm.py runs it on a real Slurm).
TEST(Render, SlurmScriptForwardsUserSignalsAndKeepsTrainvisorsExitCode) {
  auto r = render_job(parse_ok(with("name", "j").dump()), "slurm");
  ASSERT_TRUE(r.ok());
  const std::string& t = r->text;
  EXPECT_NE(t.find("#SBATCH --open-mode=append\n"), std::string::npos);
  EXPECT_EQ(t.find("--kill-on-bad-exit"), std::string::npos);
  EXPECT_NE(t.find("trap 'forward USR1' USR1\n"), std::string::npos);
  EXPECT_NE(t.find("trap 'forward USR2' USR2\n"), std::string::npos);
  EXPECT_LT(t.find("trap 'forward USR1'"), t.find("srun --container-image"));  // before srun starts
  EXPECT_NE(t.find(" &\nsrun_pid=$!\n"), std::string::npos);
  EXPECT_NE(t.find("then rc=75; fi\nexit \"$rc\"\n"), std::string::npos);
  EXPECT_EQ(t.find("set -e"), std::string::npos);  // srun's code is read, not a reason to stop
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes.back().find("checkpoint_dir is /opt/ml/checkpoints"), std::string::npos);
  auto shared = render_job(parse_ok(with("checkpoint_dir", "/fsx/ckpt").dump()), "slurm");
  ASSERT_TRUE(shared.ok());
  for (const auto& n : shared->notes) EXPECT_EQ(n.find("checkpoint_dir"), std::string::npos) << n;
}

TEST(Render, SettingsATargetIgnoresAreNoted) {
  json doc = with("checkpoint_s3_uri", "s3://b/c");
  auto r = render_job(parse_ok(doc.dump()), "kubeflow");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("checkpoint_s3_uri is not used by kubeflow"), std::string::npos);
}

}  // namespace
}  // namespace tv
