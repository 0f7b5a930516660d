#include "launcher/topology/resource_config.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "common/exit_codes.h"
#include "common/json_parse.h"
#include "common/json_text.h"
#include "launcher/topology/topology.h"

namespace tv {
namespace {

using nlohmann::json;

Error bad(const std::string& path, const std::string& why) {
  return Error{ErrorKind::kConfig, "file " + path + ": " + why};
}

std::string shown(const json& v) { return json_preview(v); }

// Host names (strings already checked), as JSON, at most 80 characters.
std::string host_list(const std::vector<std::string>& hosts) {
  std::string s = json_text(json(hosts));
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

Result<std::string> get_string(const json& obj, const std::string& key, bool required,
                               const std::string& path, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return bad(path, where + "\"" + key + "\" is missing: expected a string");
    return std::string();
  }
  if (!it->is_string() || (required && it->get_ref<const std::string&>().empty()))
    return bad(path, where + "\"" + key + "\" is " + shown(*it) + ": expected a non-empty string");
  return it->get<std::string>();
}

Result<std::vector<std::string>> get_hosts(const json& obj, const std::string& path,
                                           const std::string& where, bool required) {
  auto it = obj.find("hosts");
  if (it == obj.end() && !required) return std::vector<std::string>{};
  if (it == obj.end()) return bad(path, where + "\"hosts\" is missing: expected a list of names");
  if (!it->is_array() || it->size() > static_cast<size_t>(kMaxNodes))
    return bad(path, where + "\"hosts\" is " + shown(*it) + ": expected a list of at most " +
                         std::to_string(kMaxNodes) + " host names");
  std::vector<std::string> hosts;
  std::set<std::string> seen;
  for (const auto& h : *it) {
    if (!h.is_string() || h.get_ref<const std::string&>().empty())
      return bad(path, where + "\"hosts\" holds " + shown(h) + ": expected non-empty strings");
    if (!seen.insert(h.get<std::string>()).second)
      return bad(path, where + "\"hosts\" names " + shown(h) + " twice: expected unique names");
    hosts.push_back(h.get<std::string>());
  }
  return hosts;
}

Result<InstanceGroup> parse_group(const json& g, const std::string& path, size_t i) {
  const std::string where = "instance_groups[" + std::to_string(i) + "].";
  if (!g.is_object())
    return bad(path,
               where.substr(0, where.size() - 1) + " is " + shown(g) + ": expected an object");
  InstanceGroup out;
  auto name = get_string(g, "instance_group_name", true, path, where);
  if (!name) return name.error();
  auto type = get_string(g, "instance_type", false, path, where);
  if (!type) return type.error();
  auto hosts = get_hosts(g, path, where, true);
  if (!hosts) return hosts.error();
  return InstanceGroup{*name, *type, *hosts};
}

Status parse_groups(const json& root, const std::string& path, ResourceConfig& rc) {
  auto it = root.find("instance_groups");
  if (it == root.end() || it->is_null()) return ok_status();
  if (!it->is_array())
    return bad(path, "\"instance_groups\" is " + shown(*it) + ": expected a list of objects");
  for (size_t i = 0; i < it->size(); ++i) {
    auto g = parse_group((*it)[i], path, i);
    if (!g) return g.error();
    rc.instance_groups.push_back(std::move(*g));
  }
  return ok_status();
}

// The current group, when named, must exist and hold current_host.
Status check_current_group(const ResourceConfig& rc, const std::string& path) {
  if (rc.current_group_name.empty()) return ok_status();
  for (const auto& g : rc.instance_groups) {
    if (g.name != rc.current_group_name) continue;
    if (std::find(g.hosts.begin(), g.hosts.end(), rc.current_host) != g.hosts.end())
      return ok_status();
    return bad(path, "current_host \"" + rc.current_host +
                         "\" is not in the hosts of its group \"" + g.name +
                         "\": expected the file SageMaker wrote");
  }
  if (rc.instance_groups.empty()) return ok_status();
  return bad(path, "current_group_name \"" + rc.current_group_name +
                       "\" is not in instance_groups: expected one of its instance_group_name");
}

Status compute_training_hosts(ResourceConfig& rc, const std::string& path) {
  std::set<std::string> all(rc.hosts.begin(), rc.hosts.end());
  for (const auto& g : rc.instance_groups) all.insert(g.hosts.begin(), g.hosts.end());
  if (all.size() > static_cast<size_t>(kMaxNodes))
    return bad(path, "more than " + std::to_string(kMaxNodes) + " hosts");
  rc.training_hosts.assign(all.begin(), all.end());  // std::set: sorted lexicographically
  if (rc.training_hosts.empty())
    return bad(path, "\"hosts\" is empty: expected at least current_host");
  auto pos = std::find(rc.training_hosts.begin(), rc.training_hosts.end(), rc.current_host);
  if (pos == rc.training_hosts.end())
    return bad(path, "current_host \"" + rc.current_host + "\" is not in hosts " +
                         host_list(rc.training_hosts) + ": expected one of them");
  rc.rank = static_cast<int>(pos - rc.training_hosts.begin());
  return ok_status();
}

Result<ResourceConfig> from_json(const json& root, const std::string& path) {
  if (!root.is_object()) return bad(path, "is " + shown(root) + ": expected a JSON object");
  ResourceConfig rc;
  auto cur = get_string(root, "current_host", true, path, "");
  if (!cur) return cur.error();
  rc.current_host = *cur;
  auto hosts = get_hosts(root, path, "", root.find("instance_groups") == root.end());
  if (!hosts) return hosts.error();
  rc.hosts = *hosts;
  auto nic = get_string(root, "network_interface_name", false, path, "");
  if (!nic) return nic.error();
  rc.network_interface_name = *nic;
  auto group = get_string(root, "current_group_name", false, path, "");
  if (!group) return group.error();
  rc.current_group_name = *group;
  auto type = get_string(root, "current_instance_type", false, path, "");
  if (!type) return type.error();
  rc.current_instance_type = *type;
  if (auto st = parse_groups(root, path, rc); !st) return st.error();
  if (auto st = check_current_group(rc, path); !st) return st.error();
  if (auto st = compute_training_hosts(rc, path); !st) return st.error();
  return rc;
}

std::string group_names(const ResourceConfig& rc) {
  std::string s;
  for (const auto& g : rc.instance_groups) {
    if (!s.empty()) s += ", ";
    s += g.name;
  }
  return s.empty() ? "none" : s;
}

}  // namespace

Status choose_training_groups(ResourceConfig& rc, const std::vector<std::string>& groups,
                              const std::string& path) {
  std::set<std::string> hosts;
  for (const auto& name : groups) {
    auto g = std::find_if(rc.instance_groups.begin(), rc.instance_groups.end(),
                          [&](const InstanceGroup& x) { return x.name == name; });
    if (g == rc.instance_groups.end())
      return bad(path, "has no instance group \"" + name +
                           "\" (the training groups named): expected one of its "
                           "instance_groups: " +
                           group_names(rc));
    hosts.insert(g->hosts.begin(), g->hosts.end());
  }
  if (hosts.empty()) return bad(path, "the training groups have no hosts: expected at least one");
  rc.training_groups = groups;
  rc.training_hosts.assign(hosts.begin(), hosts.end());
  auto pos = std::find(rc.training_hosts.begin(), rc.training_hosts.end(), rc.current_host);
  rc.trains = pos != rc.training_hosts.end();
  rc.rank = rc.trains ? static_cast<int>(pos - rc.training_hosts.begin()) : 0;
  return ok_status();
}

SageMakerLayout sagemaker_layout(const std::string& resource_config) {
  const std::filesystem::path dir = std::filesystem::path(resource_config).parent_path();
  const std::filesystem::path config = dir.empty() ? std::filesystem::path(".") : dir;
  return {(config / "hyperparameters.json").string(),
          (config / ".." / ".." / "code").lexically_normal().string()};
}

std::string current_instance_type(const ResourceConfig& rc) {
  for (const auto& g : rc.instance_groups)
    if (g.name == rc.current_group_name && !g.instance_type.empty()) return g.instance_type;
  return rc.current_instance_type;
}

Result<ResourceConfig> parse_resource_config(const std::string& text, const std::string& path) {
  if (text.size() > kMaxResourceConfigBytes)
    return bad(path, "is " + std::to_string(text.size()) + " bytes: expected at most " +
                         std::to_string(kMaxResourceConfigBytes));
  auto root = parse_json(text);
  if (!root)
    return bad(path, "is not valid JSON (" + root.error().message +
                         "): expected SageMaker's resource config object");
  return from_json(*root, path);
}

}  // namespace tv
