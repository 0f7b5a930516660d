// SageMaker's /opt/ml/input/config/resourceconfig.json, parsed and checked.
//
//   {"current_host": "algo-2", "hosts": ["algo-1", "algo-2"], "network_interface_name": "eth0",
//    "current_group_name": "gpu", "instance_groups": [{"instance_group_name": "gpu",
//    "instance_type": "ml.p4d.24xlarge", "hosts": ["algo-2", "algo-1"]}, ...]}
//
// Training hosts: every host named in `hosts` and in every instance_groups[].hosts (heterogeneous
// clusters: all groups take part), without duplicates, sorted lexicographically as SageMaker
// sorts them, so every node computes the same order from the same file. rank = index of
// current_host. choose_training_groups() narrows them to the hosts of the groups the job trains
// on (--instance-groups, or the SDK's sagemaker_distribution_instance_groups hyperparameter):
// a host of another group does not train (`trains` false). Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

struct InstanceGroup {
  std::string name;
  std::string instance_type;
  std::vector<std::string> hosts;
};

struct ResourceConfig {
  std::string current_host;
  std::vector<std::string> hosts;  // as in the file
  std::string network_interface_name;
  std::string current_group_name;
  std::string current_instance_type;  // "ml.p4d.24xlarge"; "" when the file has none
  std::vector<InstanceGroup> instance_groups;

  std::vector<std::string> training_hosts;   // the rule above
  int rank = 0;                              // index of current_host in training_hosts
  bool trains = true;                        // current_host is one of training_hosts
  std::vector<std::string> training_groups;  // the groups chosen; empty: every host trains
};

// Larger files are refused before parsing (a real one is a few hundred bytes per host).
inline constexpr size_t kMaxResourceConfigBytes = 16 * 1024 * 1024;

// `path` names the file in errors (exit_code_of(ErrorKind::kConfig)).
Result<ResourceConfig> parse_resource_config(const std::string& text, const std::string& path);

// Training hosts = the hosts of `groups` (each one of instance_groups[].instance_group_name, else
// 78 naming it and the groups the file has), sorted; `trains` and `rank` follow.
Status choose_training_groups(ResourceConfig& rc, const std::vector<std::string>& groups,
                              const std::string& path);

// SageMaker's files around the resource config, one rule for `run`'s topology and `train`'s
// script: SageMaker lays out BASE/input/config/{resourceconfig,hyperparameters}.json and BASE/code
// (BASE /opt/ml), so a resource config elsewhere (--resource-config, TRAINVISOR_RESOURCE_CONFIG)
// moves the others with it: hyperparameters.json beside it, the code two directories up in code/.
struct SageMakerLayout {
  std::string hyperparameters;  // /opt/ml/input/config/hyperparameters.json
  std::string code_dir;         // /opt/ml/code
};
SageMakerLayout sagemaker_layout(const std::string& resource_config);

// The instance type of current_host: its group's instance_type, else current_instance_type.
std::string current_instance_type(const ResourceConfig& rc);

}  // namespace tv
