// Kubeflow PyTorchJob for SageMaker HyperPod on EKS (docs/platforms/hyperpod-eks.md).
#include <nlohmann/json.hpp>

#include "common/stop_window.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

json resources(const JobConfig& c) {
  json r = json::object();
  if (c.gpus_per_node > 0) r["nvidia.com/gpu"] = c.gpus_per_node;
  if (c.efa_per_node > 0) r["vpc.amazonaws.com/efa"] = c.efa_per_node;
  return {{"limits", r}, {"requests", r}};
}

json container(const JobConfig& c, int grace) {
  const std::string secret = c.kubeflow.token_secret.value_or(c.name + "-rdzv");
  json mounts = json::array({{{"name", "shm"}, {"mountPath", "/dev/shm"}}});
  if (c.storage) mounts.push_back({{"name", "storage"}, {"mountPath", c.storage->mount_path}});
  return {{"name", "pytorch"},  // the training operator finds its container by this name
          {"image", c.image},
          {"imagePullPolicy", "IfNotPresent"},
          {"command", json::array({c.trainvisor})},
          {"args", trainvisor_run_args(c, grace, c.checkpoint_dir)},
          {"env",
           json::array(
               {{{"name", "TRAINVISOR_RDZV_TOKEN"},
                 {"valueFrom",
                  {{"secretKeyRef", {{"name", secret}, {"key", c.kubeflow.token_secret_key}}}}}}})},
          {"resources", resources(c)},
          {"volumeMounts", mounts}};
}

json pod_template(const JobConfig& c, int grace) {
  json volumes = json::array({{{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}}}}});
  if (c.storage && c.storage->pvc)
    volumes.push_back(
        {{"name", "storage"}, {"persistentVolumeClaim", {{"claimName", *c.storage->pvc}}}});
  // HyperPod labels nodes that passed its health checks; auto-resume needs the job on them.
  json selector = {{"sagemaker.amazonaws.com/node-health-status", "Schedulable"}};
  if (c.instance_type) selector["node.kubernetes.io/instance-type"] = *c.instance_type;
  json labels = {{"app.kubernetes.io/name", "trainvisor"}, {"trainvisor.io/job", c.name}};
  json spec = {{"terminationGracePeriodSeconds", grace + 5},
               {"nodeSelector", selector},
               {"containers", json::array({container(c, grace)})},
               {"volumes", volumes}};
  return {{"metadata", {{"labels", labels}}}, {"spec", spec}};
}

json replica(const JobConfig& c, int replicas, int grace) {
  // ExitCode: the operator fails the job on 1, 2, 126, 127, 128 and 139 and recreates the pods
  // on any other code (75 peer lost, 69 preflight, 137/143 killed, 124 hang).
  return {{"replicas", replicas},
          {"restartPolicy", c.kubeflow.restart_policy},
          {"template", pod_template(c, grace)}};
}

}  // namespace

Result<Rendered> render_kubeflow(const JobConfig& c) {
  Rendered out;
  const int grace = c.grace_period.value_or(stop_window("kubeflow", true).grace_seconds);
  json annotations = json::object();
  if (c.kubeflow.auto_resume) {
    annotations["sagemaker.amazonaws.com/enable-job-auto-resume"] = "true";
    annotations["sagemaker.amazonaws.com/job-max-retry-count"] =
        std::to_string(c.kubeflow.max_retry);
  }
  json specs = {{"Master", replica(c, 1, grace)}};
  if (c.nodes > 1) specs["Worker"] = replica(c, c.nodes - 1, grace);
  json job = {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata",
       {{"name", c.name}, {"namespace", c.kubeflow.namespace_name}, {"annotations", annotations}}},
      {"spec",
       {{"runPolicy", {{"cleanPodPolicy", "None"}, {"backoffLimit", c.kubeflow.max_retry}}},
        {"pytorchReplicaSpecs", specs}}}};
  if (c.gpus_per_node > 0) job["spec"]["nprocPerNode"] = std::to_string(c.gpus_per_node);
  if (c.storage && !c.storage->pvc)
    out.notes.push_back("storage.pvc is not set: storage is not mounted in the pods");
  if (c.checkpoint_s3_uri)
    out.notes.push_back(
        "checkpoint_s3_uri is used by sagemaker only: put checkpoint_dir on the PVC");
  if (c.sagemaker) out.notes.push_back("the sagemaker settings are not used by kubeflow");
  out.text = job.dump(2) + "\n";
  return out;
}

}  // namespace tv
