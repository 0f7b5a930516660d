// Kubeflow PyTorchJob for SageMaker HyperPod on EKS (docs/platforms/hyperpod-eks.md).
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/platforms.h"
#include "render/json_fields.h"
#include "render/platform_limits.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

// Each hugepage size's volume name (a Kubernetes name: "hugepages-2mi").
std::vector<std::pair<std::string, std::string>> hugepage_volumes(const KubeflowConfig& k) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& [size, amount] : k.hugepages) {
    std::string name = "hugepages-" + size;
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    v.emplace_back(size, name);
  }
  return v;
}

// The job's own labels: the user's, and Kueue's queue (Kueue reads it on the job, not its pods:
// kueue.x-k8s.io/queue-name, Kueue docs "Run a Kubeflow PyTorchJob").
json job_labels(const KubeflowConfig& k) {
  json labels = json::object();
  for (const auto& [key, value] : k.labels) labels[key] = value;
  if (k.queue_name) labels["kueue.x-k8s.io/queue-name"] = *k.queue_name;
  return labels;
}

json resources(const JobConfig& c, const KubeflowConfig& k) {
  json r = json::object();
  if (*c.gpus_per_node > 0) r["nvidia.com/gpu"] = *c.gpus_per_node;
  if (*c.efa_per_node > 0) r["vpc.amazonaws.com/efa"] = *c.efa_per_node;
  json limits = r, requests = r;
  if (k.cpu_limit) limits["cpu"] = *k.cpu_limit;
  if (k.memory_limit) limits["memory"] = *k.memory_limit;
  if (k.cpu_request) requests["cpu"] = *k.cpu_request;
  if (k.memory_request) requests["memory"] = *k.memory_request;
  for (const auto& [size, amount] : k.hugepages)  // requests equal limits (Kubernetes' rule)
    limits["hugepages-" + size] = requests["hugepages-" + size] = amount;
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
  // The node's instance type, for --require-transport auto (docs/health.md): a pod cannot read
  // its node's labels (the downward API gives its own labels and annotations only), but the
  // nodeSelector pins it to this type, and the pod asks for EFA interfaces.
  if (c.instance_type && *c.efa_per_node > 0 && !c.env.count("TRAINVISOR_INSTANCE_TYPE"))
    env.push_back({{"name", "TRAINVISOR_INSTANCE_TYPE"}, {"value", *c.instance_type}});
  return env;
}

json container(const JobConfig& c, const KubeflowConfig& k, int grace) {
  json mounts = json::array({{{"name", "shm"}, {"mountPath", "/dev/shm"}}});
  for (const auto& [size, name] : hugepage_volumes(k))
    mounts.push_back(
        {{"name", name},
         {"mountPath", k.hugepages.size() == 1 ? "/dev/hugepages" : "/dev/hugepages-" + size}});
  for (const auto& v : c.volumes)
    if (v.pvc || v.host_path)
      mounts.push_back({{"name", v.name}, {"mountPath", v.mount_path}, {"readOnly", v.read_only}});
  json ct = {{"name", "pytorch"},  // the training operator finds its container by this name
             {"image", c.image},
             {"imagePullPolicy", k.image_pull_policy},
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

json volumes(const JobConfig& c, const KubeflowConfig& k) {
  json v = json::array(
      {{{"name", "shm"},
        {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", std::to_string(*c.shm_mib) + "Mi"}}}}});
  // Kubernetes docs, Manage HugePages: medium HugePages for one size, HugePages-<size> for each
  // of several.
  for (const auto& [size, name] : hugepage_volumes(k))
    v.push_back(
        {{"name", name},
         {"emptyDir", {{"medium", k.hugepages.size() == 1 ? "HugePages" : "HugePages-" + size}}}});
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
void node_health(json& spec, const KubeflowConfig& k) {
  const std::string& health = k.node_health_label;
  spec["tolerations"] =
      json::array({{{"key", health}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  auto term = [](const std::string& key, const std::string& value) {
    return json{{"matchExpressions",
                 json::array({{{"key", key}, {"operator", "In"}, {"values", {value}}}})}};
  };
  spec["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms", json::array({term(health, k.node_health_value)})}}},
        {"preferredDuringSchedulingIgnoredDuringExecution",
         json::array({{{"weight", 100},
                       {"preference",
                        term("sagemaker.amazonaws.com/deep-health-check-status", "Passed")}}})}}}};
}

// The job's pods prefer nodes with the same value of a topology label (the same network node):
// fewer EFA hops between them.
void topology_affinity(json& spec, const JobConfig& c, const KubeflowConfig& k) {
  if (!k.topology_key) return;
  spec["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] =
      json::array({{{"weight", k.topology_weight},
                    {"podAffinityTerm",
                     {{"labelSelector", {{"matchLabels", {{"trainvisor.io/job", c.name}}}}},
                      {"topologyKey", *k.topology_key}}}}});
}

// Prometheus' Kubernetes pod discovery keeps pods annotated prometheus.io/scrape (the
// convention of Prometheus' example kubernetes-pods job and of the managed collectors that copy
// it): where trainvisor serves /metrics (`--metrics-port N` in the args, else
// TRAINVISOR_METRICS_PORT in `env`), the pod says so and on which port.
json pod_annotations(const JobConfig& c, const std::vector<std::string>& args) {
  json annotations = json::object();
  if (auto port = metrics_port_of(args, c.env)) {
    annotations["prometheus.io/scrape"] = "true";
    annotations["prometheus.io/port"] = std::to_string(*port);
    annotations["prometheus.io/path"] = "/metrics";
  }
  return annotations;
}

json pod_template(const JobConfig& c, const KubeflowConfig& k, int grace) {
  json labels = {{"app.kubernetes.io/name", "trainvisor"}, {"trainvisor.io/job", c.name}};
  for (const auto& [key, value] : k.labels) labels[key] = value;
  json spec = {{"terminationGracePeriodSeconds", grace + 5},
               {"containers", json::array({container(c, k, grace)})},
               {"volumes", volumes(c, k)}};
  if (k.service_account) spec["serviceAccountName"] = *k.service_account;
  if (c.instance_type)
    spec["nodeSelector"] = {{"node.kubernetes.io/instance-type", *c.instance_type}};
  if (k.node_health) node_health(spec, k);
  topology_affinity(spec, c, k);
  json metadata = {{"labels", labels}};
  auto args = spec["containers"][0]["args"].get<std::vector<std::string>>();
  args.resize(args.size() - c.command.size());  // the run options: the command comes last
  json annotations = pod_annotations(c, args);
  if (!annotations.empty()) metadata["annotations"] = annotations;
  return {{"metadata", metadata}, {"spec", spec}};
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
  const std::string longest = c.containers() > 1
                                  ? c.name + "-worker-" + std::to_string(c.containers() - 2)
                                  : c.name + "-master-0";
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
  for (const auto& v : c.volumes)
    if (!k.hugepages.empty() &&
        (v.name.starts_with("hugepages-") || v.mount_path.starts_with("/dev/hugepages")))
      return Error{ErrorKind::kConfig, "volumes " + v.name + ": " + v.mount_path +
                                           " is where kubeflow.hugepages mounts its volumes "
                                           "(hugepages-<size> at /dev/hugepages): expected "
                                           "another name and mount_path"};
  json annotations = json::object();
  if (k.auto_resume) {
    annotations["sagemaker.amazonaws.com/enable-job-auto-resume"] = "true";
    annotations["sagemaker.amazonaws.com/job-max-retry-count"] = std::to_string(k.max_retry);
  }
  json specs = {{"Master", replica(c, k, 1, grace)}};
  if (c.containers() > 1) specs["Worker"] = replica(c, k, c.containers() - 1, grace);
  json run_policy = {{"cleanPodPolicy", "None"},
                     {"backoffLimit", backoff_limit(c.containers(), k.max_retry)}};
  if (c.timeout_s) run_policy["activeDeadlineSeconds"] = *c.timeout_s;
  json job = {{"apiVersion", "kubeflow.org/v1"},
              {"kind", "PyTorchJob"},
              {"metadata",
               {{"name", c.name},
                {"namespace", k.namespace_name},
                {"annotations", annotations},
                {"labels", job_labels(k)}}},
              {"spec", {{"runPolicy", run_policy}, {"pytorchReplicaSpecs", specs}}}};
  if (*c.gpus_per_node > 0) job["spec"]["nprocPerNode"] = std::to_string(*c.gpus_per_node);
  for (const auto& [name, ref] : c.secrets)
    if (!ref.k8s_secret)
      return Error{ErrorKind::kConfig, "secrets." + name +
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
