// render: the fields the seeds need (env, secrets, volumes, /dev/shm, timeouts, job-name suffix,
// workdir, scheduling), the instance table's defaults and refusals, and every text that reaches a
// shell line checked or quoted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/instance_facts.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

json base() {
  return json::parse(
      R"({"name": "isaac", "image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/isaac:5.1",
    "nodes": 2, "command": ["train.py"], "instance_type": "ml.g6.12xlarge",
    "sagemaker": {"role_arn": "arn:aws:iam::1:role/r", "output_s3_uri": "s3://b/o"},
    "checkpoint_s3_uri": "s3://b/c"})");
}

Result<Rendered> render(const json& doc, const std::string& target, RenderOptions o = {}) {
  auto c = parse_job_config(doc.dump(), "job.json");
  if (!c) return c.error();
  return render_job(*c, target, o);
}

json rendered(const json& doc, const std::string& target, RenderOptions o = {}) {
  auto r = render(doc, target, o);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? json::parse(r->text) : json{};
}

std::string refused(const json& doc, const std::string& target) {
  auto r = render(doc, target);
  EXPECT_FALSE(r.ok()) << target << ": " << doc.dump();
  if (r) return "";
  EXPECT_EQ(r.error().exit_code(), exit_code_of(ErrorKind::kConfig));
  return r.error().message;
}

bool has_note(const Rendered& r, const std::string& text) {
  for (const auto& n : r.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

const json& batch_container(const json& def) {
  return def["nodeProperties"]["nodeRangeProperties"][0]["container"];
}
const json& kube_pod(const json& job) {
  return job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"];
}

TEST(InstanceFacts, TableAndPrefix) {
  ASSERT_TRUE(instance_facts("ml.g6.12xlarge"));
  EXPECT_EQ(instance_facts("g6.12xlarge")->gpus, 4);
  EXPECT_EQ(instance_facts("p5en.48xlarge")->efa, 16);
  EXPECT_EQ(instance_facts("p5.48xlarge")->efa, 32);
  EXPECT_FALSE(instance_facts("p5.48xlarge")->rt_cores);
  EXPECT_TRUE(instance_facts("g7e.48xlarge")->rt_cores);
  EXPECT_FALSE(instance_facts("x9.huge"));
  EXPECT_EQ(without_ml_prefix("ml.p4d.24xlarge"), "p4d.24xlarge");
}

TEST(InstanceFacts, ImpossibleCombinationsNameBothValues) {
  json doc = base();
  doc["instance_type"] = "ml.g6.12xlarge";
  doc["gpus_per_node"] = 8;
  EXPECT_EQ(refused(doc, "kubeflow"),
            "gpus_per_node: 8 GPUs on instance_type ml.g6.12xlarge: g6.12xlarge has 4 L4 GPUs");
  doc = base();
  doc["instance_type"] = "p5en.48xlarge";
  doc["efa_per_node"] = 32;
  EXPECT_NE(refused(doc, "batch")
                .find("efa_per_node: 32 EFA interfaces on instance_type "
                      "p5en.48xlarge: p5en.48xlarge has 16"),
            std::string::npos);
  doc = base();
  doc["instance_type"] = "ml.p5.48xlarge";
  doc["rt_cores"] = true;
  EXPECT_NE(refused(doc, "sagemaker")
                .find("rt_cores: true (Isaac Sim renders with RTX) on "
                      "instance_type ml.p5.48xlarge: its H100 GPUs have no "
                      "RT cores"),
            std::string::npos);
}

TEST(InstanceFacts, DefaultsComeFromTheTableAndMlFollowsTheTarget) {
  json doc = base();
  doc["instance_type"] = "ml.g6.12xlarge";
  doc["rt_cores"] = true;
  const json def = rendered(doc, "batch");
  const json& ct = batch_container(def);
  EXPECT_EQ(ct["instanceType"], "g6.12xlarge");
  EXPECT_EQ(ct["resourceRequirements"][0]["value"], "48");
  EXPECT_EQ(ct["resourceRequirements"][1]["value"], std::to_string(192 * 1024 * 9 / 10));
  EXPECT_EQ(ct["resourceRequirements"][2]["value"], "4");
  EXPECT_EQ(ct["linuxParameters"]["devices"].size(), 1u);  // g6.12xlarge: one EFA
  EXPECT_EQ(ct["linuxParameters"]["sharedMemorySize"], 192 * 1024 / 4);
  doc["instance_type"] = "g6.12xlarge";
  EXPECT_EQ(rendered(doc, "sagemaker")["ResourceConfig"]["InstanceType"], "ml.g6.12xlarge");
  EXPECT_EQ(kube_pod(rendered(doc, "kubeflow"))["nodeSelector"]["node.kubernetes.io/instance-type"],
            "ml.g6.12xlarge");
}

TEST(InstanceFacts, UnknownTypeIsAWarning) {
  json doc = base();
  doc["instance_type"] = "ml.x9.huge";
  auto r = render(doc, "kubeflow");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(has_note(*r, "instance_type ml.x9.huge is not in render's instance table"));
  EXPECT_NE(refused(doc, "batch").find("batch.vcpus: missing"), std::string::npos);
}

TEST(Fields, EnvReachesEveryTarget) {
  json doc = base();
  doc["env"] = {{"ACCEPT_EULA", "Y"}, {"NCCL_SOCKET_IFNAME", "eth0"}};
  doc["batch"] = {{"vcpus", 16}, {"memory_mib", 60000}};
  const json job = rendered(doc, "kubeflow");
  const json& k = kube_pod(job)["containers"][0]["env"];
  EXPECT_EQ(k[1], json({{"name", "ACCEPT_EULA"}, {"value", "Y"}}));
  EXPECT_EQ(batch_container(rendered(doc, "batch"))["environment"][1],
            json({{"name", "NCCL_SOCKET_IFNAME"}, {"value", "eth0"}}));
  EXPECT_EQ(rendered(doc, "sagemaker")["Environment"]["ACCEPT_EULA"], "Y");
  auto s = render(doc, "slurm");
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->text.find("export ACCEPT_EULA=Y\nexport NCCL_SOCKET_IFNAME=eth0\nsrun"),
            std::string::npos)
      << s->text;
}

TEST(Fields, SecretsPerTarget) {
  json doc = base();
  doc["secrets"] = {{"HF_TOKEN",
                     {{"secret", "hf-token"},
                      {"key", "token"},
                      {"arn", "arn:aws:secretsmanager:us-west-2:1:secret:hf"}}}};
  doc["batch"] = {{"vcpus", 16}, {"memory_mib", 60000}};
  const json job = rendered(doc, "kubeflow");
  const json& env = kube_pod(job)["containers"][0]["env"];
  EXPECT_EQ(env[1]["valueFrom"]["secretKeyRef"], json({{"name", "hf-token"}, {"key", "token"}}));
  EXPECT_EQ(refused(doc, "batch").rfind("batch.execution_role_arn: missing", 0), 0u);
  doc["batch"]["execution_role_arn"] = "arn:aws:iam::1:role/exec";
  const json def = rendered(doc, "batch");
  const json& ct = batch_container(def);
  EXPECT_EQ(
      ct["secrets"][0],
      json({{"name", "HF_TOKEN"}, {"valueFrom", "arn:aws:secretsmanager:us-west-2:1:secret:hf"}}));
  EXPECT_EQ(ct["executionRoleArn"], "arn:aws:iam::1:role/exec");
  EXPECT_NE(refused(doc, "sagemaker")
                .find("secrets.HF_TOKEN: SageMaker training jobs have no "
                      "secret references"),
            std::string::npos);
  auto s = render(doc, "slurm");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(has_note(*s, "secrets is not used by slurm"));
  doc["secrets"]["HF_TOKEN"].erase("secret");
  EXPECT_NE(refused(doc, "kubeflow").find("secrets.HF_TOKEN.secret: missing for --target kubeflow"),
            std::string::npos);
}

TEST(Fields, VolumesPerTarget) {
  json doc = base();
  doc["volumes"] =
      json::array({{{"name", "efs"}, {"mount_path", "/efs"}, {"efs_id", "fs-0123abcd"}},
                   {{"name", "fsx"}, {"mount_path", "/fsx"}, {"pvc", "fsx-claim"}},
                   {{"name", "data"},
                    {"mount_path", "/data"},
                    {"host_path", "/mnt/data"},
                    {"read_only", true}}});
  doc["batch"] = {{"vcpus", 16}, {"memory_mib", 60000}};
  auto b = render(doc, "batch");
  ASSERT_TRUE(b.ok());
  const json ct = batch_container(json::parse(b->text));
  EXPECT_EQ(ct["volumes"][0], json({{"name", "efs"},
                                    {"efsVolumeConfiguration",
                                     {{"fileSystemId", "fs-0123abcd"}, {"rootDirectory", "/"}}}}));
  EXPECT_EQ(ct["volumes"][1]["host"]["sourcePath"], "/mnt/data");
  EXPECT_EQ(ct["mountPoints"][1],
            json({{"sourceVolume", "data"}, {"containerPath", "/data"}, {"readOnly", true}}));
  EXPECT_TRUE(has_note(*b, "volumes fsx: pvc is not used by batch"));
  auto k = render(doc, "kubeflow");
  ASSERT_TRUE(k.ok());
  const json pod = kube_pod(json::parse(k->text));
  EXPECT_EQ(pod["volumes"][1]["persistentVolumeClaim"]["claimName"], "fsx-claim");
  EXPECT_EQ(pod["volumes"][2]["hostPath"]["path"], "/mnt/data");
  EXPECT_TRUE(has_note(*k, "volumes efs: efs_id is not used by kubeflow"));
  auto s = render(doc, "slurm");
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->text.find("--container-mounts=/mnt/data:/data:ro"), std::string::npos);
  auto m = render(doc, "sagemaker");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(has_note(*m, "volumes fsx: not used by sagemaker"));
}

TEST(Fields, ShmTimeoutWorkdirAndNameSuffix) {
  json doc = base();
  doc["shm_mib"] = 60000;
  doc["timeout_s"] = 3600;
  doc["workdir"] = "/workspace/IsaacLab";
  doc["batch"] = {{"vcpus", 16}, {"memory_mib", 60001}};
  const json def = rendered(doc, "batch");
  EXPECT_EQ(def["timeout"]["attemptDurationSeconds"], 3600);
  EXPECT_EQ(batch_container(def)["linuxParameters"]["sharedMemorySize"], 60000);
  const json job = rendered(doc, "kubeflow");
  EXPECT_EQ(job["spec"]["runPolicy"]["activeDeadlineSeconds"], 3600);
  EXPECT_EQ(kube_pod(job)["volumes"][0]["emptyDir"]["sizeLimit"], "60000Mi");
  EXPECT_EQ(kube_pod(job)["containers"][0]["workingDir"], "/workspace/IsaacLab");
  const json req = rendered(doc, "sagemaker", {.name_suffix = "20261201-094500"});
  EXPECT_EQ(req["TrainingJobName"], "isaac-20261201-094500");
  EXPECT_EQ(req["StoppingCondition"]["MaxRuntimeInSeconds"], 3600);
  auto s = render(doc, "slurm");
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->text.find("#SBATCH --time=0-01:00:00\n"), std::string::npos) << s->text;
  EXPECT_NE(s->text.find("--container-workdir=/workspace/IsaacLab"), std::string::npos);
  doc["instance_type"] = "g6.12xlarge";
  doc["shm_mib"] = 192 * 1024;
  EXPECT_NE(refused(doc, "batch")
                .find("shm_mib: 196608 MiB of /dev/shm on g6.12xlarge: "
                      "g6.12xlarge has 192 GiB of memory"),
            std::string::npos);
  doc["shm_mib"] = 60000;
  doc["name"] = std::string(63, 'a');
  EXPECT_EQ(rendered(doc, "sagemaker", {.name_suffix = "20261201-094500"})["TrainingJobName"],
            std::string(47, 'a') + "-20261201-094500");
  EXPECT_NE(render(doc, "sagemaker", {.name_suffix = "a b"}).error().message.find("--name-suffix"),
            std::string::npos);
}

TEST(Fields, GraceAboveTheStopWindowIsNoted) {
  json doc = base();
  doc["grace_period"] = 60;
  auto s = render(doc, "slurm");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(has_note(*s, "grace_period 60 s is not below slurm's stop window"));
  auto m = render(doc, "sagemaker");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(has_note(*m, "grace_period"));  // SageMaker waits 120 s
}

// Injection points: every text that reaches the sbatch script or a YAML/JSON document.
TEST(Injection, SlurmValuesAreCheckedOrQuoted) {
  json doc = base();
  doc["slurm"] = {{"partition", "gpu\nrm -rf /"}};
  EXPECT_NE(refused(doc, "slurm").find("slurm.partition: expected names"), std::string::npos);
  doc["slurm"] = {{"account", "a;b"}};
  EXPECT_NE(refused(doc, "slurm").find("slurm.account: expected names"), std::string::npos);
  for (const char* bad : {"48h", "1:2:3:4", "2-", "10:00\n", "-1"}) {
    doc["slurm"] = {{"time", bad}};
    EXPECT_NE(refused(doc, "slurm").find("slurm.time: expected minutes"), std::string::npos) << bad;
  }
  for (const char* good : {"60", "48:00:00", "2-00:00:00", "1-12", "UNLIMITED"}) {
    doc["slurm"] = {{"time", good}};
    EXPECT_TRUE(render(doc, "slurm").ok()) << good;
  }
  doc["slurm"] = {{"partition", "gpu,debug"}};
  doc["env"] = {{"NOTE", "a'b\n$(touch /x)"}};
  auto s = render(doc, "slurm");
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->text.find("export NOTE='a'\\''b\n$(touch /x)'\n"), std::string::npos) << s->text;
  doc["volumes"] = json::array({{{"name", "d"}, {"mount_path", "/d"}, {"host_path", "/a:/b"}}});
  EXPECT_NE(render(doc, "slurm")
                .error()
                .message.find("volumes[0].host_path: expected an absolute "
                              "path without ','"),
            std::string::npos);
  doc.erase("volumes");
  doc["workdir"] = "/w\nx";
  EXPECT_NE(render(doc, "slurm").error().message.find("workdir: expected an absolute path"),
            std::string::npos);
}

TEST(Injection, NamesAndImageAreChecked) {
  json doc = base();
  doc["kubeflow"] = {{"namespace", "a\nb"}};
  EXPECT_NE(refused(doc, "kubeflow").find("kubeflow.namespace: expected a Kubernetes name"),
            std::string::npos);
  doc["kubeflow"] = {{"memory_limit", "80Gi\n"}};
  EXPECT_NE(refused(doc, "kubeflow").find("kubeflow.memory_limit: expected a Kubernetes quantity"),
            std::string::npos);
  doc.erase("kubeflow");
  doc["secrets"] = {{"T", {{"secret", "Bad Name"}}}};
  EXPECT_NE(refused(doc, "kubeflow").find("secrets.T.secret: expected a Kubernetes Secret name"),
            std::string::npos);
  doc.erase("secrets");
  doc["volumes"] = json::array({{{"name", "Fsx"}, {"mount_path", "/fsx"}, {"pvc", "c"}}});
  EXPECT_NE(refused(doc, "kubeflow").find("volumes[0].name: expected a Kubernetes name"),
            std::string::npos);
  doc["image"] = "img 1";
  EXPECT_NE(refused(doc, "slurm").find("image: expected an image reference"), std::string::npos);
}

TEST(Injection, PyxisImageGetsTheRegistrySeparator) {
  json doc = base();
  auto s = render(doc, "slurm");
  ASSERT_TRUE(s.ok());
  EXPECT_NE(
      s->text.find("'--container-image=123456789012.dkr.ecr.us-west-2.amazonaws.com#isaac:5.1'"),
      std::string::npos)
      << s->text;
  doc["image"] = "nvcr.io#nvidia/pytorch:24.05-py3";  // already separated: kept
  EXPECT_NE(render(doc, "slurm")->text.find("nvcr.io#nvidia/pytorch:24.05-py3"), std::string::npos);
  doc["image"] = "ubuntu/python:3";  // Docker Hub: no registry part
  EXPECT_NE(render(doc, "slurm")->text.find("--container-image=ubuntu/python:3"),
            std::string::npos);
}

}  // namespace
}  // namespace tv
