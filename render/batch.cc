// AWS Batch multi-node parallel job definition (docs/platforms/aws-batch.md).
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/stop_window.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

json resource_requirements(const JobConfig& c) {
  json r = json::array({{{"type", "VCPU"}, {"value", std::to_string(c.batch.vcpus)}},
                        {{"type", "MEMORY"}, {"value", std::to_string(c.batch.memory_mib)}}});
  if (c.gpus_per_node > 0)
    r.push_back({{"type", "GPU"}, {"value", std::to_string(c.gpus_per_node)}});
  return r;
}

// EFA reaches the container as /dev/infiniband/uverbsN devices.
json linux_parameters(const JobConfig& c) {
  json devices = json::array();
  for (int i = 0; i < c.efa_per_node; ++i) {
    const std::string dev = "/dev/infiniband/uverbs" + std::to_string(i);
    devices.push_back({{"hostPath", dev},
                       {"containerPath", dev},
                       {"permissions", json::array({"READ", "WRITE", "MKNOD"})}});
  }
  json p = {{"devices", devices}, {"initProcessEnabled", false}};  // trainvisor is the init process
  if (c.batch.shm_mib > 0) p["sharedMemorySize"] = c.batch.shm_mib;
  return p;
}

json container(const JobConfig& c, int grace) {
  std::vector<std::string> command = {c.trainvisor};
  const auto args = trainvisor_run_args(c, grace, c.checkpoint_dir);
  command.insert(command.end(), args.begin(), args.end());
  json ct = {
      {"image", c.image},
      {"command", command},
      {"resourceRequirements", resource_requirements(c)},
      {"linuxParameters", linux_parameters(c)},
      // EFA and NCCL pin memory: no locked-memory limit.
      {"ulimits", json::array({{{"name", "memlock"}, {"softLimit", -1}, {"hardLimit", -1}}})}};
  if (c.instance_type) ct["instanceType"] = *c.instance_type;
  if (c.batch.job_role_arn) ct["jobRoleArn"] = *c.batch.job_role_arn;
  if (c.batch.token_secret_arn)
    ct["secrets"] = json::array(
        {{{"name", "TRAINVISOR_RDZV_TOKEN"}, {"valueFrom", *c.batch.token_secret_arn}}});
  if (c.storage && c.storage->host_path) {
    ct["volumes"] =
        json::array({{{"name", "storage"}, {"host", {{"sourcePath", *c.storage->host_path}}}}});
    ct["mountPoints"] = json::array({{{"sourceVolume", "storage"},
                                      {"containerPath", c.storage->mount_path},
                                      {"readOnly", false}}});
  }
  return ct;
}

// Batch retries when no entry matches, so the last entry exits on everything else. 75 (a peer
// lost, the rendezvous timed out) and a host taken away are worth a new attempt; 78 (bad
// configuration) and 69 (preflight failed) are not; a worker's own failure was already retried
// --max-restarts times inside the job.
json retry_strategy(const JobConfig& c) {
  return {{"attempts", c.batch.attempts},
          {"evaluateOnExit", json::array({{{"onExitCode", "75"}, {"action", "RETRY"}},
                                          {{"onStatusReason", "Host EC2*"}, {"action", "RETRY"}},
                                          {{"onExitCode", "78"}, {"action", "EXIT"}},
                                          {{"onExitCode", "69"}, {"action", "EXIT"}},
                                          {{"onReason", "*"}, {"action", "EXIT"}}})}};
}

}  // namespace

Result<Rendered> render_batch(const JobConfig& c) {
  if (c.batch.vcpus == 0)
    return Error{
        exit_code::kConfig,
        "batch.vcpus: missing (the vCPUs each node's container reserves, e.g. 192 on p5.48xlarge)"};
  if (c.batch.memory_mib == 0)
    return Error{exit_code::kConfig,
                 "batch.memory_mib: missing (the container's memory limit in MiB, e.g. 1900000 on "
                 "p5.48xlarge)"};
  Rendered out;
  const int grace = c.grace_period.value_or(stop_window("batch", false).grace_seconds);
  json def = {{"jobDefinitionName", c.name},
              {"type", "multinode"},
              {"platformCapabilities", json::array({"EC2"})},
              {"nodeProperties",
               {{"numNodes", c.nodes},
                {"mainNode", 0},
                {"nodeRangeProperties",
                 json::array({{{"targetNodes", "0:"}, {"container", container(c, grace)}}})}}},
              {"retryStrategy", retry_strategy(c)},
              {"propagateTags", true}};
  if (c.storage && !c.storage->host_path)
    out.notes.push_back("storage.host_path is not set: storage is not mounted");
  if (c.checkpoint_s3_uri)
    out.notes.push_back(
        "checkpoint_s3_uri is used by sagemaker only: put checkpoint_dir on shared storage");
  out.text = def.dump(2) + "\n";
  return out;
}

}  // namespace tv
