// AWS Batch multi-node parallel job definition (docs/platforms/aws-batch.md).
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/platforms.h"
#include "render/platform_limits.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

json resource_requirements(const JobConfig& c, const BatchConfig& b) {
  json r = json::array({{{"type", "VCPU"}, {"value", std::to_string(*b.vcpus)}},
                        {{"type", "MEMORY"}, {"value", std::to_string(*b.memory_mib)}}});
  if (*c.gpus_per_node > 0)
    r.push_back({{"type", "GPU"}, {"value", std::to_string(*c.gpus_per_node)}});
  return r;
}

// EFA reaches the container as /dev/infiniband/uverbsN devices.
json linux_parameters(const JobConfig& c) {
  json devices = json::array();
  for (int i = 0; i < *c.efa_per_node; ++i) {
    const std::string dev = "/dev/infiniband/uverbs" + std::to_string(i);
    devices.push_back({{"hostPath", dev},
                       {"containerPath", dev},
                       {"permissions", json::array({"READ", "WRITE", "MKNOD"})}});
  }
  return {{"devices", devices},
          {"initProcessEnabled", false},  // trainvisor is the init process
          {"sharedMemorySize", *c.shm_mib}};
}

void add_volumes(const JobConfig& c, json& ct) {
  json volumes = json::array(), mounts = json::array();
  for (const auto& v : c.volumes) {
    if (v.host_path)
      volumes.push_back({{"name", v.name}, {"host", {{"sourcePath", *v.host_path}}}});
    else if (v.efs_id)
      volumes.push_back({{"name", v.name},
                         {"efsVolumeConfiguration",
                          {{"fileSystemId", *v.efs_id}, {"rootDirectory", v.efs_root}}}});
    else
      continue;
    mounts.push_back(
        {{"sourceVolume", v.name}, {"containerPath", v.mount_path}, {"readOnly", v.read_only}});
  }
  if (!volumes.empty()) {
    ct["volumes"] = volumes;
    ct["mountPoints"] = mounts;
  }
}

// Batch fetches `secrets` with the execution role before the container starts.
Status add_environment(const JobConfig& c, const BatchConfig& b, json& ct) {
  json env = json::array(), secrets = json::array();
  for (const auto& [name, value] : c.env) env.push_back({{"name", name}, {"value", value}});
  if (b.token_secret_arn)
    secrets.push_back({{"name", "TRAINVISOR_RDZV_TOKEN"}, {"valueFrom", *b.token_secret_arn}});
  for (const auto& [name, ref] : c.secrets) {
    if (!ref.arn)
      return Error{ErrorKind::kConfig, "secrets." + name +
                                           ".arn: missing for --target batch (a Secrets Manager "
                                           "or SSM parameter ARN)"};
    secrets.push_back({{"name", name}, {"valueFrom", *ref.arn}});
  }
  if (!env.empty()) ct["environment"] = env;
  if (secrets.empty()) return ok_status();
  if (!b.execution_role_arn)
    return Error{ErrorKind::kConfig,
                 "batch.execution_role_arn: missing: Batch reads secrets (" +
                     secrets[0]["name"].get<std::string>() +
                     ") with the job's execution role (secretsmanager:GetSecretValue)"};
  ct["secrets"] = secrets;
  ct["executionRoleArn"] = *b.execution_role_arn;
  return ok_status();
}

// Batch runs the image's ENTRYPOINT with `command` after it and has no entrypoint field of its
// own: with ENTRYPOINT ["/usr/local/bin/trainvisor"] (docs/deployment.md) the command starts at
// `run`.
Result<json> container(const JobConfig& c, const BatchConfig& b, int grace) {
  json ct = {
      {"image", c.image},
      {"command", trainvisor_run_args(c, "batch", grace, c.checkpoint_dir, workdir_args(c))},
      {"resourceRequirements", resource_requirements(c, b)},
      {"linuxParameters", linux_parameters(c)},
      // EFA and NCCL pin memory: no locked-memory limit.
      {"ulimits", json::array({{{"name", "memlock"}, {"softLimit", -1}, {"hardLimit", -1}}})}};
  if (c.instance_type) ct["instanceType"] = *c.instance_type;
  if (b.job_role_arn) ct["jobRoleArn"] = *b.job_role_arn;
  if (auto s = add_environment(c, b, ct); !s) return s.error();
  add_volumes(c, ct);
  return ct;
}

// First match wins; Batch retries when no entry matches, so the last entry exits on everything
// else. 75 (a peer lost, the rendezvous timed out), 74 (a node fault: a GPU of this node failed;
// the attempt's containers are gone with its instances' jobs and a new attempt is placed again)
// and a host taken away are worth a new attempt; everything else exits at the last entry: 78 (bad
// configuration), 69 (preflight failed) and a worker's own failure, which was already retried
// --max-restarts times inside the job. Batch takes at most 5 entries (platform_limits.h).
json retry_strategy(const BatchConfig& b) {
  return {{"attempts", b.attempts},
          {"evaluateOnExit", json::array({{{"onExitCode", "75"}, {"action", "RETRY"}},
                                          {{"onExitCode", "74"}, {"action", "RETRY"}},
                                          {{"onStatusReason", "Host EC2*"}, {"action", "RETRY"}},
                                          {{"onReason", "*"}, {"action", "EXIT"}}})}};
}

}  // namespace

Result<Rendered> render_batch(const JobConfig& c) {
  const BatchConfig b = c.batch.value_or(BatchConfig{});
  const int grace = c.grace_period.value_or(stop_window("batch", false).grace_seconds);
  const std::string name = b.definition_name.value_or(c.name);
  if (auto s = check_name(platform_limits::kBatchJobDefinition,
                          b.definition_name ? "batch.definition_name" : "name", name);
      !s)
    return s.error();
  auto ct = container(c, b, grace);
  if (!ct) return ct.error();
  const json retry = retry_strategy(b);
  if (retry["evaluateOnExit"].size() > platform_limits::kBatchEvaluateOnExitMax)
    return Error{ErrorKind::kConfig,
                 "retryStrategy.evaluateOnExit: " + std::to_string(retry["evaluateOnExit"].size()) +
                     " entries, Batch takes at most 5 (RetryStrategy)"};
  json def = {
      {"jobDefinitionName", name},
      {"type", "multinode"},
      {"platformCapabilities", json::array({"EC2"})},
      {"nodeProperties",
       {{"numNodes", c.containers()},
        {"mainNode", 0},
        {"nodeRangeProperties", json::array({{{"targetNodes", "0:"}, {"container", *ct}}})}}},
      {"retryStrategy", retry},
      {"propagateTags", true}};
  if (c.timeout_s) def["timeout"] = {{"attemptDurationSeconds", *c.timeout_s}};
  Rendered out;
  out.text = def.dump(2) + "\n";
  return out;
}

}  // namespace tv
