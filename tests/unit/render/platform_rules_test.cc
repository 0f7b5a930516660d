// render against each platform's own accounting: Kubeflow's backoffLimit as the operator counts it,
// the documented limits of each API (render/platform_limits.h), what timeout_s becomes per target,
// HyperPod's auto-resume namespaces. tests/integration/test_render_platform_rules.py applies the
// same rules to the real binary's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "render/platform_limits.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

json job(int nodes) {
  return {{"name", "ppo"},      {"image", "img:1"},        {"nodes", nodes},
          {"gpus_per_node", 8}, {"command", {"train.py"}}, {"kubeflow", {{"max_retry", 3}}}};
}

Result<Rendered> render(const json& doc, const std::string& target, RenderOptions o = {}) {
  auto c = parse_job_config(doc.dump(), "job.json");
  if (!c) return c.error();
  return render_job(*c, target, o);
}

json rendered(const json& doc, const std::string& target) {
  auto r = render(doc, target);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? json::parse(r->text) : json{};
}

// PastBackoffLimit (kubeflow/training-operator pkg/core/job.go): the restarts of every running
// pod's containers, summed, against the limit (`result >= BackoffLimit`). One whole-job retry
// restarts every node's container once.
TEST(KubeflowBackoffLimit, EveryNodeRestartsOncePerWholeJobRetry) {
  for (int nodes : {1, 2, 4, 16}) {
    const int limit = rendered(job(nodes), "kubeflow")["spec"]["runPolicy"]["backoffLimit"];
    EXPECT_EQ(limit, backoff_limit(nodes, 3));
    EXPECT_LT(nodes * 3, limit) << nodes << " nodes: the third retry is still allowed";
    EXPECT_GE(nodes * 4, limit) << nodes << " nodes: the fourth fails the job";
  }
  EXPECT_EQ(backoff_limit(4, 0), 4);  // no retry: the first restarts fail the job
}

// Each API's documented limits are data with their source, checked on what render writes.
TEST(PlatformLimits, EveryRuleNamesItsSourceAndRefusesWithIt) {
  for (const NameRule* r : platform_limits::name_rules()) {
    EXPECT_FALSE(r->source.empty()) << r->what;
    const std::string too_long(r->max_length + 1, 'a');
    auto e = check_name(*r, "name", too_long);
    ASSERT_FALSE(e.ok()) << r->what;
    EXPECT_EQ(e.error().exit_code(), exit_code_of(ErrorKind::kConfig));
    EXPECT_NE(e.error().message.find(std::string(r->source)), std::string::npos);
    EXPECT_TRUE(check_name(*r, "name", std::string(r->max_length, 'a')).ok()) << r->what;
  }
  using namespace platform_limits;
  EXPECT_TRUE(check_name(kBatchJobDefinition, "name", "IsaacLabJobDefinition").ok());
  EXPECT_FALSE(check_name(kBatchJobDefinition, "name", "isaac.lab").ok());
  EXPECT_FALSE(check_name(kSageMakerTrainingJob, "name", "job_1").ok());
  EXPECT_FALSE(check_name(kPyTorchJobName, "name", "1job").ok());
  EXPECT_TRUE(check_name(kKubernetesNamespace, "kubeflow.namespace", "1team").ok());
}

TEST(PlatformLimits, BatchRetryRulesFitTheApi) {
  json doc = job(2);
  doc["batch"] = {{"vcpus", 8}, {"memory_mib", 4096}};
  doc.erase("kubeflow");
  const json def = rendered(doc, "batch");
  EXPECT_LE(def["retryStrategy"]["evaluateOnExit"].size(),
            platform_limits::kBatchEvaluateOnExitMax);
  EXPECT_EQ(def["retryStrategy"]["evaluateOnExit"].back(),
            json({{"onReason", "*"}, {"action", "EXIT"}}));
}

TEST(PlatformLimits, KubeflowNamesAreTheOperatorsRfc1035Labels) {
  json doc = job(102);
  doc["name"] = std::string(53, 'a');
  auto r = render(doc, "kubeflow");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(std::string(53, 'a') + "-worker-100"), std::string::npos)
      << r.error().message;
  doc["nodes"] = 101;  // <name>-worker-99: 63 characters
  EXPECT_TRUE(render(doc, "kubeflow").ok());
  doc["name"] = "1ppo";
  r = render(doc, "kubeflow");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("RFC 1035"), std::string::npos) << r.error().message;
}

bool has_note(const Rendered& r, const std::string& text) {
  for (const auto& n : r.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

// Each target's limit is another one: Kubeflow's counts from the job's start across restarts
// (PastActiveDeadline, pkg/core/job.go), SageMaker's over every attempt (MaxRuntimeInSeconds with
// RetryStrategy), Batch's per attempt (JobTimeout.attemptDurationSeconds), Slurm's the
// allocation's.
TEST(Timeout, EachTargetSaysWhatItBecomes) {
  json doc = job(2);
  doc["timeout_s"] = 7200;
  doc["instance_type"] = "p5.48xlarge";
  doc["checkpoint_s3_uri"] = "s3://b/c";
  doc["sagemaker"] = {{"role_arn", "arn:aws:iam::1:role/r"}, {"output_s3_uri", "s3://b/o"}};
  const std::vector<std::pair<std::string, std::string>> becomes = {
      {"kubeflow",
       "timeout_s 7200 s becomes runPolicy.activeDeadlineSeconds: a limit on the whole "
       "job from its start, across every container restart"},
      {"sagemaker", "becomes StoppingCondition.MaxRuntimeInSeconds: a limit on all the attempts"},
      {"batch", "becomes timeout.attemptDurationSeconds: a limit on each attempt"},
      {"slurm", "becomes sbatch --time"}};
  for (const auto& [target, note] : becomes) {
    auto r = render(doc, target);
    ASSERT_TRUE(r.ok()) << target << ": " << r.error().message;
    EXPECT_TRUE(has_note(*r, note)) << target;
  }
  doc.erase("timeout_s");
  for (const auto& [target, note] : becomes)
    EXPECT_FALSE(has_note(*render(doc, target), "timeout_s"));
}

// "The job must be running under the kubeflow namespace or a namespace prefixed with hyperpod"
// (AWS, SageMaker HyperPod, Running jobs using the SageMaker HyperPod CLI: job auto-resume).
TEST(HyperPodAutoResume, NamespaceOutsideKubeflowAndHyperpodIsWarned) {
  const std::string warning = "HyperPod resumes jobs only in the namespace kubeflow or one whose";
  for (const auto& [ns, warned] :
       std::vector<std::pair<std::string, bool>>{{"kubeflow", false},
                                                 {"hyperpod-team-a", false},
                                                 {"hyperpod", false},
                                                 {"cosmos3", true},
                                                 {"default", true},
                                                 {"team-hyperpod", true}}) {
    json doc = job(2);
    doc["kubeflow"]["namespace"] = ns;
    auto r = render(doc, "kubeflow");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(has_note(*r, warning), warned) << ns;
    doc["kubeflow"]["auto_resume"] = false;
    EXPECT_FALSE(has_note(*render(doc, "kubeflow"), warning)) << ns;
  }
}

// RegisterJobDefinition's jobDefinitionName takes upper case: the seed's name is kept as it is.
TEST(PlatformLimits, BatchDefinitionNameKeepsItsCase) {
  json doc = job(2);
  doc.erase("kubeflow");
  doc["batch"] = {{"vcpus", 8}, {"memory_mib", 4096}, {"definition_name", "IsaacLabJobDefinition"}};
  EXPECT_EQ(rendered(doc, "batch")["jobDefinitionName"], "IsaacLabJobDefinition");
  doc["batch"]["definition_name"] = "Isaac.Lab";
  auto r = render(doc, "batch");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("batch.definition_name: \"Isaac.Lab\""), std::string::npos)
      << r.error().message;
  doc["batch"].erase("definition_name");
  EXPECT_EQ(rendered(doc, "batch")["jobDefinitionName"], "ppo");
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// Kubernetes' label rules (apimachinery pkg/util/validation: IsQualifiedName, IsValidLabelValue).
TEST(PlatformLimits, LabelsFollowKubernetesRules) {
  for (auto [key, value] : {std::pair{"app", "cosmos3-droid-policy-hp"},
                            {"kueue.x-k8s.io/queue-name", "team-a"},
                            {"example.com/Team_1.x", ""},
                            {"a", "A.b_c-9"}})
    EXPECT_TRUE(check_label("labels", key, value)) << key << "=" << value;
  const std::string n63(63, 'n'), n64(64, 'n');
  EXPECT_TRUE(check_label("labels", n63, n63));
  for (auto [key, value] : {std::pair<std::string, std::string>{"-app", "x"},
                            {"app-", "x"},
                            {"Ex.com/app", "x"},
                            {"example.com/", "x"},
                            {n64, "x"},
                            {"app", n64},
                            {"app", "-x"},
                            {"app", "a b"},
                            {"a/b/c", "x"},
                            {std::string(254, 'a') + "/app", "x"}}) {
    auto s = check_label("labels", key, value);
    ASSERT_FALSE(s) << key << "=" << value;
    EXPECT_EQ(s.error().exit_code(), exit_code_of(ErrorKind::kConfig));
    EXPECT_NE(s.error().message.find("Labels and Selectors"), std::string::npos);
  }
}

TEST(SeedFields, KubeflowLabelsQueueServiceAccountAndHugepages) {
  json doc = job(2);
  doc["kubeflow"] = {{"labels", {{"app", "x"}}}, {"queue_name", "q"},
                     {"service_account", "sa"},  {"hugepages", {{"1Gi", "2Gi"}, {"2Mi", "1Gi"}}},
                     {"memory_limit", "64Gi"},   {"image_pull_policy", "Never"}};
  const json out = rendered(doc, "kubeflow");
  EXPECT_EQ(out["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "q");
  const json& pod = out["spec"]["pytorchReplicaSpecs"]["Worker"]["template"];
  EXPECT_EQ(pod["metadata"]["labels"]["app"], "x");
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "sa");
  const json& ct = pod["spec"]["containers"][0];
  EXPECT_EQ(ct["imagePullPolicy"], "Never");
  EXPECT_EQ(ct["resources"]["requests"]["hugepages-1Gi"], "2Gi");
  // two sizes: one volume each, medium HugePages-<size> (Kubernetes docs, Manage HugePages)
  json media = json::array();
  for (const auto& v : pod["spec"]["volumes"])
    if (v["name"].get<std::string>().rfind("hugepages-", 0) == 0)
      media.push_back(v["emptyDir"]["medium"]);
  EXPECT_EQ(media, json({"HugePages-1Gi", "HugePages-2Mi"}));
  doc["kubeflow"]["labels"] = {{"trainvisor.io/job", "other"}};
  EXPECT_FALSE(render(doc, "kubeflow"));
}

TEST(SeedFields, SageMakerTrainingGroupsAreWrittenAsAnOption) {
  json doc = job(2);
  doc.erase("kubeflow");
  doc["instance_type"] = "p4d.24xlarge";
  doc["checkpoint_s3_uri"] = "s3://b/c";
  doc["sagemaker"] = {{"role_arn", "arn:aws:iam::1:role/r"},
                      {"output_s3_uri", "s3://b/o"},
                      {"instance_groups",
                       {{{"name", "cpu"}, {"instance_type", "c5.xlarge"}, {"count", 1}},
                        {{"name", "gpu"}, {"instance_type", "ml.p4d.24xlarge"}, {"count", 2}}}},
                      {"training_groups", {"gpu"}}};
  const json out = rendered(doc, "sagemaker");
  const auto& args = out["AlgorithmSpecification"]["ContainerArguments"];
  const auto at = std::find(args.begin(), args.end(), "--instance-groups");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "gpu");
  EXPECT_FALSE(out["ResourceConfig"].contains("InstanceCount"));
  EXPECT_EQ(out["ResourceConfig"]["InstanceGroups"][0]["InstanceType"], "ml.c5.xlarge");
  doc["sagemaker"].erase("training_groups");  // the two go together
  EXPECT_FALSE(render(doc, "sagemaker"));
}

}  // namespace
}  // namespace tv
