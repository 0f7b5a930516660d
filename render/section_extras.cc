#include "render/section_extras.h"

#include <regex>
#include <set>

#include "render/platform_limits.h"

namespace tv::job_sections {
namespace {

using render_fields::check_all;
using render_fields::Fields;
using render_fields::json;
using render_fields::sub_object;

bool one_of(const std::string& v, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (v == w) return true;
  return false;
}

Status read_labels(Fields& k, KubeflowConfig& kc) {
  if (auto r = k.string_map("labels", kc.labels); !r) return r;
  for (const auto& [key, value] : kc.labels) {
    if (auto r = check_label(k.name("labels." + key), key, value); !r) return r;
    if (key == "kueue.x-k8s.io/queue-name")
      return k.error("labels." + key, "is queue_name: set kubeflow.queue_name (the job's label)");
    if (key == "trainvisor.io/job")
      return k.error("labels." + key, "is render's own (the job's name, for topology_key)");
  }
  return ok_status();
}

// Kubernetes: "HugePages require cpu or memory" (pkg/apis/core/validation,
// validateResourceRequirements), and the page sizes a node offers: 2Mi and 1Gi (x86-64), 64Ki, 2Mi,
// 32Mi, 1Gi (arm64).
Status check_hugepages(Fields& k, const KubeflowConfig& kc) {
  static const std::regex quantity("[0-9]+(\\.[0-9]+)?(k|M|G|T|Ki|Mi|Gi|Ti)?");
  for (const auto& [size, amount] : kc.hugepages) {
    if (!one_of(size, {"64Ki", "2Mi", "32Mi", "1Gi"}))
      return k.error("hugepages." + size,
                     "expected a page size 2Mi or 1Gi (arm64: 64Ki, 32Mi too)");
    if (!std::regex_match(amount, quantity))
      return k.error("hugepages." + size,
                     "expected a Kubernetes quantity (1Gi, 512Mi), got " + json(amount).dump());
  }
  if (!kc.hugepages.empty() && !kc.cpu_request && !kc.cpu_limit && !kc.memory_request &&
      !kc.memory_limit)
    return k.error("hugepages",
                   "needs cpu or memory too: Kubernetes refuses a container whose resources have "
                   "hugepages without cpu or memory (\"HugePages require cpu or memory\", "
                   "pkg/apis/core/validation); set kubeflow.memory_limit or cpu_limit");
  return ok_status();
}

Status read_channel(Fields& f, const std::string& at, const json& v, ChannelConfig& ch) {
  if (!v.is_object()) return f.error(at, "expected an object, got " + json_preview(v));
  Fields c = f.object(at, v);
  if (auto r = check_all(
          {c.string("name", ch.name, true), c.string("s3_uri", ch.s3_uri, true),
           c.string("distribution", ch.distribution, false),
           c.string("s3_data_type", ch.s3_data_type, false), c.string("input_mode", ch.input_mode),
           c.strings("instance_groups", ch.instance_groups, false), c.no_unknown_fields()});
      !r)
    return r;
  if (auto r = check_name(platform_limits::kSageMakerChannelName, c.name("name"), ch.name); !r)
    return r;
  static const std::regex s3("s3://[^/]+(/.*)?");
  if (!std::regex_match(ch.s3_uri, s3) || ch.s3_uri.size() > 1024)
    return c.error("s3_uri",
                   "expected s3://bucket/prefix of at most 1024 characters (S3Uri), got " +
                       json(ch.s3_uri).dump());
  if (!one_of(ch.distribution, {"FullyReplicated", "ShardedByS3Key"}))
    return c.error("distribution", "expected FullyReplicated or ShardedByS3Key, got " +
                                       json(ch.distribution).dump());
  if (!one_of(ch.s3_data_type, {"S3Prefix", "ManifestFile", "AugmentedManifestFile"}))
    return c.error("s3_data_type", "expected S3Prefix, ManifestFile or AugmentedManifestFile");
  if (ch.input_mode && !one_of(*ch.input_mode, {"File", "Pipe", "FastFile"}))
    return c.error("input_mode",
                   "expected File, Pipe or FastFile, got " + json(*ch.input_mode).dump());
  return ok_status();
}

Status read_channels(Fields& s, SageMakerConfig& sm) {
  const json* v = s.find("channels");
  if (!v) return ok_status();
  if (!v->is_array()) return s.error("channels", "expected a list, got " + json_preview(*v));
  if (v->size() > platform_limits::kSageMakerChannelsMax)
    return s.error("channels", std::to_string(v->size()) +
                                   " channels: CreateTrainingJob takes at most 20 "
                                   "(InputDataConfig)");
  std::set<std::string> names;
  for (size_t i = 0; i < v->size(); ++i) {
    ChannelConfig ch;
    const std::string at = "channels[" + std::to_string(i) + "]";
    if (auto r = read_channel(s, at, (*v)[i], ch); !r) return r;
    if (!names.insert(ch.name).second)
      return s.error(at + ".name", "\"" + ch.name + "\" is used twice");
    sm.channels.push_back(ch);
  }
  return ok_status();
}

Status read_groups(Fields& s, SageMakerConfig& sm) {
  const json* v = s.find("instance_groups");
  if (!v) return ok_status();
  if (!v->is_array() || v->empty())
    return s.error("instance_groups", "expected a non-empty list, got " + json_preview(*v));
  if (v->size() > platform_limits::kSageMakerInstanceGroupsMax)
    return s.error("instance_groups", std::to_string(v->size()) +
                                          " groups: ResourceConfig takes at most 5 "
                                          "(InstanceGroups)");
  std::set<std::string> names;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = "instance_groups[" + std::to_string(i) + "]";
    if (!(*v)[i].is_object())
      return s.error(at, "expected an object, got " + json_preview((*v)[i]));
    Fields g = s.object(at, (*v)[i]);
    InstanceGroupConfig ig;
    if (auto r = check_all({g.string("name", ig.name, true),
                            g.string("instance_type", ig.instance_type, true),
                            g.integer("count", ig.count, 1, 10000), g.no_unknown_fields()});
        !r)
      return r;
    if (auto r = check_name(platform_limits::kSageMakerInstanceGroupName, g.name("name"), ig.name);
        !r)
      return r;
    if (ig.name.find(',') != std::string::npos)
      return g.error("name", "expected no ',' (--instance-groups separates names with it)");
    if (!names.insert(ig.name).second) return g.error("name", "\"" + ig.name + "\" is used twice");
    sm.instance_groups.push_back(ig);
  }
  return ok_status();
}

Status check_group_names(Fields& s, const SageMakerConfig& sm) {
  std::set<std::string> known;
  for (const auto& g : sm.instance_groups) known.insert(g.name);
  if (sm.instance_groups.empty() != sm.training_groups.empty())
    return s.error(sm.instance_groups.empty() ? "training_groups" : "instance_groups",
                   "instance_groups and training_groups go together (a heterogeneous cluster)");
  auto known_or_error = [&](const std::string& field, const std::string& name) -> Status {
    if (known.count(name)) return ok_status();
    return s.error(field, "\"" + name + "\" is not one of instance_groups");
  };
  for (const auto& t : sm.training_groups)
    if (auto r = known_or_error("training_groups", t); !r) return r;
  for (size_t i = 0; i < sm.channels.size(); ++i)
    for (const auto& g : sm.channels[i].instance_groups)
      if (auto r = known_or_error("channels[" + std::to_string(i) + "].instance_groups", g); !r)
        return r;
  return ok_status();
}

}  // namespace

Status read_kubeflow_extras(Fields& k, KubeflowConfig& kc) {
  if (auto r = check_all({read_labels(k, kc), k.string("queue_name", kc.queue_name),
                          k.string("service_account", kc.service_account),
                          k.string("image_pull_policy", kc.image_pull_policy, false),
                          k.string_map("hugepages", kc.hugepages),
                          k.string("node_health_label", kc.node_health_label, false),
                          k.string("node_health_value", kc.node_health_value, false),
                          k.string("topology_key", kc.topology_key),
                          k.integer("topology_weight", kc.topology_weight, 1, 100)});
      !r)
    return r;
  using namespace platform_limits;
  if (kc.queue_name)  // a LocalQueue's name, as a label value
    if (auto r = check_label(k.name("queue_name"), "kueue.x-k8s.io/queue-name", *kc.queue_name); !r)
      return r;
  if (kc.service_account)
    if (auto r = check_name(kServiceAccountName, k.name("service_account"), *kc.service_account);
        !r)
      return r;
  if (!one_of(kc.image_pull_policy, {"Always", "IfNotPresent", "Never"}))
    return k.error("image_pull_policy", "expected Always, IfNotPresent or Never, got " +
                                            json(kc.image_pull_policy).dump());
  if (auto r = check_label(k.name("node_health_label"), kc.node_health_label, kc.node_health_value);
      !r)
    return r;
  if (kc.topology_key)
    if (auto r = check_label(k.name("topology_key"), *kc.topology_key, ""); !r) return r;
  return check_hugepages(k, kc);
}

Status read_sagemaker_extras(Fields& s, SageMakerConfig& sm) {
  return check_all({read_channels(s, sm), read_groups(s, sm),
                    s.strings("training_groups", sm.training_groups, false),
                    check_group_names(s, sm)});
}

Status read_target_run_args(Fields& s, const std::string& target, JobConfig& c) {
  std::vector<std::string> args;
  if (auto r = s.strings("run_args", args, false); !r) return r;
  if (!args.empty()) c.target_run_args[target] = args;
  return ok_status();
}

}  // namespace tv::job_sections
