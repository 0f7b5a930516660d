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
  return c ? Error{ErrorKind::kFailed, ""} : c.error();
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

TEST(JobConfig, AnUnknownFieldNamesTheNearestKnownOne) {
  EXPECT_NE(parse_error(with("nodez", 2).dump())
                .message.find("job.json: nodez: unknown field (did you mean nodes?) (see "),
            std::string::npos);
  EXPECT_NE(parse_error(with("slurm", {{"partitons", "gpu"}}).dump())
                .message.find("slurm.partitons: unknown field (did you mean partition?)"),
            std::string::npos)
      << parse_error(with("slurm", {{"partitons", "gpu"}}).dump()).message;
  EXPECT_EQ(parse_error(with("frobnicate", 1).dump()).message.find("did you mean"),
            std::string::npos);
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
    EXPECT_EQ(e.kind, ErrorKind::kConfig) << doc.dump();
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
  EXPECT_EQ(r.error().exit_code(), exit_code_of(ErrorKind::kConfig));
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

// Where trainvisor serves /metrics, every pod template carries Prometheus' scrape annotations;
// without a metrics port, none (a pod nobody scrapes says nothing).
TEST(Render, KubeflowPodsCarryTheScrapeAnnotationsWhereMetricsAreOn) {
  const json off = rendered_json(parse_ok(kMinimal), "kubeflow");
  for (const auto& [role, spec] : off["spec"]["pytorchReplicaSpecs"].items())
    EXPECT_FALSE(spec["template"]["metadata"].contains("annotations")) << role;
  json doc = json::parse(kMinimal);
  doc["run_args"] = {"--metrics-port", "9400"};
  const json on = rendered_json(parse_ok(doc.dump()), "kubeflow");
  for (const auto& [role, spec] : on["spec"]["pytorchReplicaSpecs"].items()) {
    const json& a = spec["template"]["metadata"]["annotations"];
    EXPECT_EQ(a["prometheus.io/scrape"], "true") << role;
    EXPECT_EQ(a["prometheus.io/port"], "9400") << role;
    EXPECT_EQ(a["prometheus.io/path"], "/metrics") << role;
  }
  // The job's own annotations stay HyperPod's.
  EXPECT_FALSE(on["metadata"]["annotations"].contains("prometheus.io/scrape"));
}

TEST(Render, MetricsPortComesFromTheLastFlagThenTheEnvironment) {
  using Args = std::vector<std::string>;
  const std::map<std::string, std::string> env = {{"TRAINVISOR_METRICS_PORT", "9100"}};
  EXPECT_EQ(metrics_port_of(Args{"run"}, {}), std::nullopt);
  EXPECT_EQ(metrics_port_of(Args{"run"}, env), 9100);
  EXPECT_EQ(metrics_port_of(Args{"--metrics-port", "9200"}, env), 9200);
  EXPECT_EQ(metrics_port_of(Args{"--metrics_port=9300", "--metrics-port=9301"}, {}), 9301);
  EXPECT_EQ(metrics_port_of(Args{"--metrics-port", "0"}, env), std::nullopt);  // 0 = off
  EXPECT_EQ(metrics_port_of(Args{"--metrics-port", "http"}, {}), std::nullopt);
  EXPECT_EQ(metrics_port_of(Args{"--metrics-port"}, {}), std::nullopt);
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
  EXPECT_EQ(missing.error().exit_code(), exit_code_of(ErrorKind::kConfig));
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
  EXPECT_LT(t.find("trap 'forward USR1'"), t.find("srun \\\n"));  // before srun starts
  EXPECT_NE(t.find(" 2>&3 &\nsrun_pid=$!\n"), std::string::npos);
  EXPECT_NE(t.find("  rc=$new\nfi\nexit \"$rc\"\n"), std::string::npos);
  EXPECT_EQ(t.find("set -e"), std::string::npos);  // srun's code is read, not a reason to stop
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes.back().find("checkpoint_dir is /opt/ml/checkpoints"), std::string::npos);
  auto shared = render_job(parse_ok(with("checkpoint_dir", "/fsx/ckpt").dump()), "slurm");
  ASSERT_TRUE(shared.ok());
  for (const auto& n : shared->notes) EXPECT_EQ(n.find("checkpoint_dir"), std::string::npos) << n;
}

// srun --wait: the peer timeout (run_args, else env, else run's 30) + the grace period + 10 s.
TEST(Render, SlurmWaitFollowsThePeerTimeoutAndTheGracePeriod) {
  auto wait_of = [](const json& doc) {
    auto r = render_job(parse_ok(doc.dump()), "slurm");
    EXPECT_TRUE(r.ok());
    const auto at = r->text.find("--wait=");
    return at == std::string::npos ? -1 : std::stoi(r->text.substr(at + 7));
  };
  EXPECT_EQ(wait_of(with("name", "j")), 30 + 25 + 10);
  json doc = with("run_args", json::array({"--peer-timeout", "12.5"}));
  doc["grace_period"] = 5;
  EXPECT_EQ(wait_of(doc), 13 + 5 + 10);
  doc = with("run_args", json::array({"--peer-timeout=40"}));
  EXPECT_EQ(wait_of(doc), 40 + 25 + 10);
  doc = with("env", json{{"TRAINVISOR_PEER_TIMEOUT", "20"}});
  EXPECT_EQ(wait_of(doc), 20 + 25 + 10);
  doc["run_args"] = json::array({"--peer-timeout", "8"});  // the command line wins
  EXPECT_EQ(wait_of(doc), 8 + 25 + 10);
}

// srun's 128+N is mapped only when srun's own lines say a task was killed by a signal; a task's
// own exit 137 (an OOM-killed worker) stays 137; there is no "stopped" flag a TERM to the batch
// shell alone could leave set (test_slurm_edges.py runs the mapping against a fake srun and the
// real cluster).
TEST(Render, SlurmMapsOnlyWhatSrunSaysWasKilled) {
  auto r = render_job(parse_ok(with("name", "j").dump()), "slurm");
  ASSERT_TRUE(r.ok());
  const std::string& t = r->text;
  EXPECT_EQ(t.find("stopped="), std::string::npos) << t;
  EXPECT_EQ(t.find("-eq 137"), std::string::npos) << t;
  EXPECT_NE(t.find("/^srun: error: .*: tasks? [0-9][-0-9,]*: /"), std::string::npos) << t;
  EXPECT_NE(t.find("/Exited with exit code [0-9]+$/"), std::string::npos) << t;
  EXPECT_NE(t.find("/^srun: forcing job termination/"), std::string::npos) << t;
  EXPECT_NE(t.find("trap '' TERM INT HUP USR1 USR2 PIPE; exec awk"), std::string::npos) << t;
  EXPECT_NE(t.find("exec tee -p \"$tv_dir/copy\" ) <\"$tv_dir/srun.err\" >&2 &"), std::string::npos)
      << t;
  EXPECT_LT(t.find("mkfifo"), t.find("srun \\\n"));
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

namespace tv {
namespace {

// spare_nodes (docs/coordination.md, "Hot spare nodes"): the platform starts nodes + spares
// containers, run gets that count and --spare-nodes; srun keeps the step going; SageMaker refuses.
TEST(Render, SpareNodesAreContainersOfTheirOwnAndRunIsTold) {
  const std::string doc = with("spare_nodes", 1).dump();  // kMinimal: nodes 3
  const json k = rendered_json(parse_ok(doc), "kubeflow");
  EXPECT_EQ(k["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], 3);
  const auto args =
      k["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["args"]
          .get<std::vector<std::string>>();
  EXPECT_EQ(std::vector<std::string>(args.begin(), args.begin() + 7),
            (std::vector<std::string>{"run", "--platform", "kubeflow", "--nnodes", "4",
                                      "--spare-nodes", "1"}));
  json batch = json::parse(doc);
  batch["batch"] = {{"vcpus", 8}, {"memory_mib", 4096}};
  EXPECT_EQ(rendered_json(parse_ok(batch.dump()), "batch")["nodeProperties"]["numNodes"], 4);
  auto slurm = render_job(parse_ok(doc), "slurm");
  ASSERT_TRUE(slurm.ok());
  EXPECT_NE(slurm->text.find("#SBATCH --nodes=4"), std::string::npos) << slurm->text;
  EXPECT_NE(slurm->text.find("srun \\\n  --no-kill \\\n  --wait=0 \\\n"), std::string::npos)
      << slurm->text;
  auto sm = render_job(parse_ok(doc), "sagemaker");
  ASSERT_FALSE(sm.ok());
  EXPECT_NE(sm.error().message.find("spare_nodes: 1: expected 0 for --target sagemaker"),
            std::string::npos)
      << sm.error().message;
}

}  // namespace
}  // namespace tv
