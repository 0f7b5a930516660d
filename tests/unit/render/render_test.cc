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
      {with("storage", {{"pvc", "x"}}), "storage.mount_path: missing"},
      {with("storage", {{"mount_path", "fsx"}}), "storage.mount_path: expected an absolute path"},
      {with("sagemaker", {{"role_arn", "r"}}), "sagemaker.output_s3_uri: missing"},
      {with("kubeflow", {{"max_retry", -1}}), "kubeflow.max_retry: expected an integer 0..100"},
      {with("kubeflow", {{"restart_policy", "Always"}}),
       "kubeflow.restart_policy: expected ExitCode or OnFailure"},
      {with("batch", {{"vcpus", "8"}}), "batch.vcpus: expected an integer"},
      {with("slurm", {{"partitions", "gpu"}}), "slurm.partitions: unknown field"},
      {with("checkpoint_s3_uri", "bucket/x"), "checkpoint_s3_uri: expected s3://"},
      {with("grace_period", 0), "grace_period: expected an integer 1..3600"},
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
  EXPECT_EQ(specs["Worker"]["restartPolicy"], "ExitCode");
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
  EXPECT_EQ(args.front(), "run");
  EXPECT_EQ(args.back(), "3e-4");
  EXPECT_EQ(j["metadata"]["annotations"]["sagemaker.amazonaws.com/enable-job-auto-resume"], "true");
}

TEST(Render, KubeflowOneNodeHasNoWorkersAndGraceFollowsConfig) {
  json doc = with("nodes", 1);
  doc["grace_period"] = 60;
  doc["kubeflow"] = {{"restart_policy", "OnFailure"}};
  const json j = rendered_json(parse_ok(doc.dump()), "kubeflow");
  EXPECT_FALSE(j["spec"]["pytorchReplicaSpecs"].contains("Worker"));
  EXPECT_EQ(j["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
             ["terminationGracePeriodSeconds"],
            65);
  EXPECT_EQ(j["spec"]["pytorchReplicaSpecs"]["Master"]["restartPolicy"], "OnFailure");
}

TEST(Render, SageMakerNeedsItsFieldsAndUsesContainerEntrypoint) {
  auto missing = render_job(parse_ok(kMinimal), "sagemaker");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().exit_code, exit_code::kConfig);
  EXPECT_NE(missing.error().message.find("sagemaker: missing"), std::string::npos);

  json doc =
      with("sagemaker", {{"role_arn", "arn:aws:iam::1:role/r"}, {"output_s3_uri", "s3://b/o"}});
  doc["instance_type"] = "p5.48xlarge";
  auto bad_type = render_job(parse_ok(doc.dump()), "sagemaker");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(
      bad_type.error().message.find("instance_type: SageMaker instance types start with \"ml.\""),
      std::string::npos);

  doc["instance_type"] = "ml.p5.48xlarge";
  doc["checkpoint_s3_uri"] = "s3://b/ckpt";
  const json j = rendered_json(parse_ok(doc.dump()), "sagemaker");
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
  auto missing = render_job(parse_ok(kMinimal), "batch");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("batch.vcpus: missing"), std::string::npos);
  const json j =
      rendered_json(parse_ok(with("batch", {{"vcpus", 8}, {"memory_mib", 4096}}).dump()), "batch");
  EXPECT_EQ(j["type"], "multinode");
  EXPECT_EQ(j["nodeProperties"]["numNodes"], 3);
  const json& rules = j["retryStrategy"]["evaluateOnExit"];
  EXPECT_EQ(rules[0], json({{"onExitCode", "75"}, {"action", "RETRY"}}));
  EXPECT_EQ(rules[2], json({{"onExitCode", "78"}, {"action", "EXIT"}}));
  EXPECT_EQ(rules[3], json({{"onExitCode", "69"}, {"action", "EXIT"}}));
  const json& ct = j["nodeProperties"]["nodeRangeProperties"][0]["container"];
  EXPECT_EQ(ct["linuxParameters"]["devices"].size(), 4u);
  EXPECT_EQ(ct["linuxParameters"]["devices"][3]["hostPath"], "/dev/infiniband/uverbs3");
  EXPECT_EQ(ct["command"][0], "/usr/local/bin/trainvisor");
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

TEST(Render, SettingsATargetIgnoresAreNoted) {
  json doc = with("checkpoint_s3_uri", "s3://b/c");
  auto r = render_job(parse_ok(doc.dump()), "kubeflow");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("checkpoint_s3_uri"), std::string::npos);
}

}  // namespace
}  // namespace tv
