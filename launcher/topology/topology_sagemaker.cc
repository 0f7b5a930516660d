// SageMaker Training Jobs: the resource config file (launcher/topology/resource_config.h).
#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "common/bounded_read.h"
#include "common/json_parse.h"
#include "launcher/topology/resource_config.h"
#include "launcher/topology/topology_sources.h"

namespace tv::topo {
namespace {

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > at) out.push_back(s.substr(at, end - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// The SageMaker Python SDK's `distribution={"instance_groups": [...]}` reaches the container as
// the hyperparameter sagemaker_distribution_instance_groups, a JSON-encoded list of names (the
// training toolkit reads it: aws/sagemaker-training-toolkit src/sagemaker_training/
// environment.py, distribution_instance_groups). nullopt: no such file or no such entry.
Result<std::optional<std::vector<std::string>>> groups_from_hyperparameters(
    const FileSystem& fs, const std::string& file) {
  if (!fs.exists(file)) return std::optional<std::vector<std::string>>();
  std::string why;
  auto text = fs.read(file, kConfigFileCap, &why);
  if (!text) return config_error("file " + file + " cannot be read (" + why + ")");
  auto doc = parse_json(*text);
  if (!doc || !doc->is_object()) return std::optional<std::vector<std::string>>();
  auto it = doc->find("sagemaker_distribution_instance_groups");
  if (it == doc->end()) return std::optional<std::vector<std::string>>();
  nlohmann::json list = *it;
  if (list.is_string())
    if (auto inner = parse_json(list.get<std::string>())) list = *inner;
  const std::string expected =
      ": expected a JSON list of instance group names (the SDK's distribution instance_groups)";
  if (!list.is_array())
    return config_error("file " + file + ": sagemaker_distribution_instance_groups is " +
                        it->dump() + expected);
  std::vector<std::string> names;
  for (const auto& n : list) {
    if (!n.is_string() || n.get_ref<const std::string&>().empty())
      return config_error("file " + file + ": sagemaker_distribution_instance_groups holds " +
                          n.dump() + expected);
    names.push_back(n.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(names);
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// Narrows the hosts to the training groups; `origin` says which fact named them.
Status choose_groups(ResourceConfig& rc, const FileSystem& fs, const std::string& path,
                     const std::optional<OptionValue>& option, std::string& origin) {
  std::vector<std::string> groups;
  if (option && !option->value.empty()) {
    groups = split_names(option->value);
    origin = option->origin;
  } else {
    const std::string hp = sagemaker_layout(path).hyperparameters;
    auto from_file = groups_from_hyperparameters(fs, hp);
    if (!from_file) return from_file.error();
    if (!*from_file) return ok_status();
    groups = **from_file;
    origin = "file " + hp + " (sagemaker_distribution_instance_groups)";
  }
  if (groups.empty()) return ok_status();
  if (rc.instance_groups.empty())
    return config_error("instance groups " + joined(groups) + " (" + origin + "): file " + path +
                        " has no instance_groups: expected a heterogeneous cluster's resource "
                        "config, or no training groups named");
  return choose_training_groups(rc, groups, path);
}

// SageMaker's topology variables, which the SageMaker training toolkit (and a wrapper that passes
// them through) sets beside the resource config: any one of them set means SageMaker.
constexpr std::array kTopologyNames = {"SM_HOSTS", "SM_CURRENT_HOST"};

// Without the resource config every host would run a one-node job of its own, every one rank 0:
// refused, naming what is set (topology_slurm.cc, check_job_id, refuses a partial Slurm
// environment the same way).
Status check_resource_config_present(const Environment& env, const FileSystem& fs,
                                     const std::string& path) {
  if (sagemaker_file_present(fs, path)) return ok_status();
  std::string set;
  for (const char* n : kTopologyNames)
    if (env.has(n)) set += (set.empty() ? "" : ", ") + std::string(n);
  return config_error(
      "file " + (path.empty() ? std::string("(none: --resource-config is empty)") : path) +
      " does not exist but " + set + (set.find(',') == std::string::npos ? " is" : " are") +
      " set: expected SageMaker's resource config beside SageMaker's variables "
      "(--resource-config PATH or TRAINVISOR_RESOURCE_CONFIG where it is elsewhere); pass "
      "every SM_* variable and the file through, or neither");
}

}  // namespace

// Anything at the path counts: a directory (what `docker -v` of a missing host file creates) or a
// symbolic link loop is then an error naming the path, never a silent fallback to one local node
// (every host of the job would train alone).
bool sagemaker_file_present(const FileSystem& fs, const std::string& path) {
  return !path.empty() && (fs.exists(path) || fs.read_link(path).has_value());
}

bool sagemaker_detected(const Environment& env, const FileSystem& fs, const std::string& path) {
  return sagemaker_file_present(fs, path) ||
         std::any_of(kTopologyNames.begin(), kTopologyNames.end(),
                     [&](const char* n) { return env.has(n); });
}

Result<Topology> sagemaker_source(const Environment& env, const FileSystem& fs,
                                  const std::string& path,
                                  const std::optional<OptionValue>& groups) {
  if (auto st = check_resource_config_present(env, fs, path); !st) return st.error();
  std::string why;
  auto text = fs.read(path, kConfigFileCap, &why);
  if (!text)
    return config_error("file " + path + " cannot be read (" + why +
                        "): expected SageMaker's resource config (--resource-config)");
  auto rc = parse_resource_config(*text, path);
  if (!rc) return rc.error();
  std::string groups_origin;
  if (auto st = choose_groups(*rc, fs, path, groups, groups_origin); !st) return st.error();
  Topology t;
  t.platform = Platform::kSageMaker;
  t.hosts = rc->training_hosts;
  t.nnodes = static_cast<int>(t.hosts.size());
  t.node_rank = rc->rank;
  t.master_addr = t.hosts.front();
  const std::string file = "file " + path;
  const bool hetero = !rc->instance_groups.empty();
  t.origin["hosts"] = file + (!rc->training_groups.empty()
                                  ? " (hosts of instance groups " + joined(rc->training_groups) +
                                        ", named by " + groups_origin + ", sorted)"
                              : hetero ? " (hosts of all instance_groups, sorted)"
                                       : " (hosts, sorted)");
  t.origin["nnodes"] = t.origin["hosts"];
  t.origin["node_rank"] = file + " (index of current_host \"" + rc->current_host + "\")";
  t.origin["master_addr"] = file + " (first of hosts)";
  if (!rc->trains) {
    t.not_training = "SageMaker instance group \"" + rc->current_group_name + "\" (host " +
                     rc->current_host + ") is not one of the training groups " +
                     joined(rc->training_groups) + " (" + groups_origin + ")";
    t.origin["node_rank"] =
        file + " (current_host \"" + rc->current_host + "\" is in none of the training groups)";
  }
  if (const std::string type = current_instance_type(*rc); !type.empty()) {
    t.instance_type = type;
    t.origin["instance_type"] =
        file + (rc->current_instance_type == type ? " (current_instance_type)"
                                                  : " (instance_type of current_group_name)");
  }
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
