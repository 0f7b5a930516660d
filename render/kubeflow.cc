// Kubeflow PyTorchJob for SageMaker HyperPod on EKS (docs/platforms/hyperpod-eks.md).
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/stop_window.h"
#include "render/json_fields.h"
#include "render/platform_limits.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

json resources(const JobConfig& c, const KubeflowConfig& k) {
  json r = json::object();
  if (*c.gpus_per_node > 0) r["nvidia.com/gpu"] = *c.gpus_per_node;
  if (*c.efa_per_node > 0) r["vpc.amazonaws.com/efa"] = *c.efa_per_node;
  json limits = r, requests = r;
  if (k.cpu_limit) limits["cpu"] = *k.cpu_limit;
  if (k.memory_limit) limits["memory"] = *k.memory_limit;
  if (k.cpu_request) requests["cpu"] = *k.cpu_request;
  if (k.memory_request) requests["memory"] = *k.memory_request;
  return {{"limits", limits}, {"requests", requests}};
}

json environment(const JobConfig& c, const KubeflowConfig& k) {
  const std::string token = k.token_secret.value_or(c.name + "-rdzv");
  auto from_secret = [](const std::string& name, const std::string& secret,
                        const std::string& key) {
    return json{{"name", name},
                {"valueFrom", {{"secretKeyRef", {{"name", secret}, {"key", key}}}}}};
  };
  json env = json::array({from_secret("TRAINVISOR_RDZV_TOKEN", token, k.token_secret_key)});
  for (const auto& [name, value] : c.env) env.push_back({{"name", name}, {"value", value}});
  for (const auto& [name, ref] : c.secrets)
    if (ref.k8s_secret) env.push_back(from_secret(name, *ref.k8s_secret, ref.k8s_key));
  return env;
}

json container(const JobConfig& c, const KubeflowConfig& k, int grace) {
  json mounts = json::array({{{"name", "shm"}, {"mountPath", "/dev/shm"}}});
  for (const auto& v : c.volumes)
    if (v.pvc || v.host_path)
      mounts.push_back({{"name", v.name}, {"mountPath", v.mount_path}, {"readOnly", v.read_only}});
  json ct = {{"name", "pytorch"},  // the training operator finds its container by this name
             {"image", c.image},
             {"imagePullPolicy", "IfNotPresent"},
             {"command", json::array({c.trainvisor})},
             {"args", trainvisor_run_args(c, "kubeflow", grace, c.checkpoint_dir)},
             {"env", environment(c, k)},
             {"resources", resources(c, k)},
             {"volumeMounts", mounts}};
  if (c.workdir) ct["workingDir"] = *c.workdir;
  // EFA registers (pins) memory: the seeds add IPC_LOCK for it.
  if (*c.efa_per_node > 0) ct["securityContext"] = {{"capabilities", {{"add", {"IPC_LOCK"}}}}};
  return ct;
}

json volumes(const JobConfig& c) {
  json v = json::array(
      {{{"name", "shm"},
        {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", std::to_string(*c.shm_mib) + "Mi"}}}}});
  for (const auto& vol : c.volumes) {
    if (vol.pvc)
      v.push_back({{"name", vol.name}, {"persistentVolumeClaim", {{"claimName", *vol.pvc}}}});
    else if (vol.host_path)
      v.push_back(
          {{"name", vol.name}, {"hostPath", {{"path", *vol.host_path}, {"type", "Directory"}}}});
  }
  return v;
}

// HyperPod's health agent labels and taints nodes (sagemaker.amazonaws.com/node-health-status);
// as the Cosmos seed: tolerate the taint, require Schedulable, prefer a passed deep health check.
void node_health(json& spec) {
  const std::string health = "sagemaker.amazonaws.com/node-health-status";
  spec["tolerations"] =
      json::array({{{"key", health}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  auto term = [](const std::string& key, const std::string& value) {
    return json{{"matchExpressions",
                 json::array({{{"key", key}, {"operator", "In"}, {"values", {value}}}})}};
  };
  spec["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms", json::array({term(health, "Schedulable")})}}},
        {"preferredDuringSchedulingIgnoredDuringExecution",
         json::array({{{"weight", 100},
                       {"preference",
                        term("sagemaker.amazonaws.com/deep-health-check-status", "Passed")}}})}}}};
}

json pod_template(const JobConfig& c, const KubeflowConfig& k, int grace) {
  json labels = {{"app.kubernetes.io/name", "trainvisor"}, {"trainvisor.io/job", c.name}};
  json spec = {{"terminationGracePeriodSeconds", grace + 5},
               {"containers", json::array({container(c, k, grace)})},
               {"volumes", volumes(c)}};
  if (c.instance_type)
    spec["nodeSelector"] = {{"node.kubernetes.io/instance-type", *c.instance_type}};
  if (k.node_health) node_health(spec);
  return {{"metadata", {{"labels", labels}}}, {"spec", spec}};
}

// OnFailure: the kubelet restarts a failed container in place, the operator fails the job once
// the restarts pass runPolicy.backoffLimit, and HyperPod's auto-resume (which needs OnFailure)
// moves the job off a bad node. ExitCode is refused at parse time (docs/exit-codes.md).
json replica(const JobConfig& c, const KubeflowConfig& k, int replicas, int grace) {
  return {{"replicas", replicas},
          {"restartPolicy", k.restart_policy},
          {"template", pod_template(c, k, grace)}};
}

// The job's name, and the longest of its pods' and Services' names (<name>-worker-<nodes - 2>).
Status check_names(const JobConfig& c, const KubeflowConfig& k) {
  using namespace platform_limits;
  const std::string longest =
      c.nodes > 1 ? c.name + "-worker-" + std::to_string(c.nodes - 2) : c.name + "-master-0";
  return render_fields::check_all(
      {check_name(kPyTorchJobName, "name", c.name), check_name(kKubernetesService, "name", longest),
       check_name(kKubernetesNamespace, "kubeflow.namespace", k.namespace_name)});
}

}  // namespace

// The operator fails the job once the container restarts summed over every running pod reach
// backoffLimit (PastBackoffLimit, kubeflow/training-operator pkg/core/job.go: `result >=
// BackoffLimit`). trainvisor ends every node of an attempt together (a lost node: the others exit
// 75), so one whole-job retry restarts `nodes` containers: max_retry retries are nodes x max_retry
// restarts, and the job fails at the restarts of the retry after them.
int backoff_limit(int nodes, int max_retry) { return nodes * (max_retry + 1); }

Result<Rendered> render_kubeflow(const JobConfig& c) {
  Rendered out;
  const KubeflowConfig k = c.kubeflow.value_or(KubeflowConfig{});
  const int grace = c.grace_period.value_or(stop_window("kubeflow", true).grace_seconds);
  if (auto s = check_names(c, k); !s) return s.error();
  json annotations = json::object();
  if (k.auto_resume) {
    annotations["sagemaker.amazonaws.com/enable-job-auto-resume"] = "true";
    annotations["sagemaker.amazonaws.com/job-max-retry-count"] = std::to_string(k.max_retry);
  }
  json specs = {{"Master", replica(c, k, 1, grace)}};
  if (c.nodes > 1) specs["Worker"] = replica(c, k, c.nodes - 1, grace);
  json run_policy = {{"cleanPodPolicy", "None"},
                     {"backoffLimit", backoff_limit(c.nodes, k.max_retry)}};
  if (c.timeout_s) run_policy["activeDeadlineSeconds"] = *c.timeout_s;
  json job = {{"apiVersion", "kubeflow.org/v1"},
              {"kind", "PyTorchJob"},
              {"metadata",
               {{"name", c.name}, {"namespace", k.namespace_name}, {"annotations", annotations}}},
              {"spec", {{"runPolicy", run_policy}, {"pytorchReplicaSpecs", specs}}}};
  if (*c.gpus_per_node > 0) job["spec"]["nprocPerNode"] = std::to_string(*c.gpus_per_node);
  for (const auto& [name, ref] : c.secrets)
    if (!ref.k8s_secret)
      return Error{exit_code::kConfig, "secrets." + name +
                                           ".secret: missing for --target kubeflow (the "
                                           "Kubernetes Secret holding it; arn is for batch)"};
  // "The job must be running under the kubeflow namespace or a namespace prefixed with hyperpod"
  // (AWS, SageMaker HyperPod: Running jobs using the SageMaker HyperPod CLI, job auto-resume).
  if (k.auto_resume && k.namespace_name != "kubeflow" && !k.namespace_name.starts_with("hyperpod"))
    out.notes.push_back("kubeflow.auto_resume in namespace \"" + k.namespace_name +
                        "\": HyperPod resumes jobs only in the namespace kubeflow or one whose "
                        "name starts with hyperpod (AWS: job auto-resume), so the annotations do "
                        "nothing there: set kubeflow.namespace, or auto_resume false");
  out.text = job.dump(2) + "\n";
  return out;
}

}  // namespace tv
