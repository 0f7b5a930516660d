// SageMaker Training Jobs: the resource config file (launcher/topology/resource_config.h).
#include "common/bounded_read.h"
#include "launcher/topology/resource_config.h"
#include "launcher/topology/topology_sources.h"

namespace tv::topo {

bool sagemaker_detected(const FileSystem& fs, const std::string& path) {
  return fs.exists(path) && !fs.is_directory(path);
}

Result<Topology> sagemaker_source(const Environment& env, const FileSystem& fs,
                                  const std::string& path) {
  std::string why;
  auto text = fs.read(path, kConfigFileCap, &why);
  if (!text)
    return config_error("file " + path + " cannot be read (" + why +
                        "): expected SageMaker's resource config (--resource-config)");
  auto rc = parse_resource_config(*text, path);
  if (!rc) return rc.error();
  Topology t;
  t.platform = "sagemaker";
  t.hosts = rc->training_hosts;
  t.nnodes = static_cast<int>(t.hosts.size());
  t.node_rank = rc->rank;
  t.master_addr = t.hosts.front();
  const std::string file = "file " + path;
  const bool hetero = !rc->instance_groups.empty();
  t.origin["hosts"] =
      file + (hetero ? " (hosts of all instance_groups, sorted)" : " (hosts, sorted)");
  t.origin["nnodes"] = t.origin["hosts"];
  t.origin["node_rank"] = file + " (index of current_host \"" + rc->current_host + "\")";
  t.origin["master_addr"] = file + " (first of hosts)";
  if (auto job = env.get("TRAINING_JOB_NAME"); job && !job->empty()) {
    t.job_id = *job;
    t.origin["job_id"] = from_env("TRAINING_JOB_NAME");
  }
  if (!rc->network_interface_name.empty() && !env.has("NCCL_SOCKET_IFNAME")) {
    t.worker_env["NCCL_SOCKET_IFNAME"] = rc->network_interface_name;
    t.origin["worker_env.NCCL_SOCKET_IFNAME"] = file + " (network_interface_name)";
  }
  return t;
}

}  // namespace tv::topo
