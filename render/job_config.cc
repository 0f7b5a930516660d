#include "render/job_config.h"

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "common/exit_codes.h"
#include "common/json_parse.h"
#include "common/json_text.h"

namespace tv {
namespace {

using nlohmann::json;

// Reads one JSON object's fields; every error names source, field path, value and expectation.
class Fields {
 public:
  Fields(const json& obj, std::string source, std::string path)
      : obj_(obj), source_(std::move(source)), path_(std::move(path)) {}

  Error error(const std::string& field, const std::string& what) const {
    return Error{exit_code::kConfig, source_ + ": " + name(field) + ": " + what};
  }
  std::string name(const std::string& field) const {
    return path_.empty() ? field : path_ + "." + field;
  }
  const json* find(const std::string& field) {
    seen_.insert(field);
    auto it = obj_.find(field);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }
  Fields object(const std::string& field, const json& v) const {
    return Fields(v, source_, name(field));
  }

  Status string(const std::string& field, std::string& out, bool required) {
    const json* v = find(field);
    if (!v) return required ? Status(error(field, "missing (expected a string)")) : ok_status();
    if (!v->is_string() || v->get_ref<const std::string&>().empty())
      return error(field, "expected a non-empty string, got " + json_preview(*v));
    out = v->get<std::string>();
    return ok_status();
  }
  Status string(const std::string& field, std::optional<std::string>& out) {
    std::string s;
    if (auto st = string(field, s, false); !st) return st;
    if (!s.empty()) out = s;
    return ok_status();
  }
  Status integer(const std::string& field, int& out, int min, int max) {
    const json* v = find(field);
    if (!v) return ok_status();
    if (!v->is_number_integer() || v->get<long long>() < min || v->get<long long>() > max)
      return error(field, "expected an integer " + std::to_string(min) + ".." +
                              std::to_string(max) + ", got " + json_preview(*v));
    out = v->get<int>();
    return ok_status();
  }
  Status integer(const std::string& field, std::optional<int>& out, int min, int max) {
    int value = 0;
    if (!find(field)) return ok_status();
    if (auto st = integer(field, value, min, max); !st) return st;
    out = value;
    return ok_status();
  }
  Status boolean(const std::string& field, bool& out) {
    const json* v = find(field);
    if (!v) return ok_status();
    if (!v->is_boolean()) return error(field, "expected true or false, got " + json_preview(*v));
    out = v->get<bool>();
    return ok_status();
  }
  Status strings(const std::string& field, std::vector<std::string>& out, bool required) {
    const json* v = find(field);
    if (!v)
      return required ? Status(error(field, "missing (expected a list of strings)")) : ok_status();
    if (!v->is_array() || (required && v->empty()))
      return error(field, "expected a" + std::string(required ? " non-empty" : "") +
                              " list of strings, got " + json_preview(*v));
    for (const auto& s : *v) {
      if (!s.is_string() || s.get_ref<const std::string&>().empty())
        return error(field, "expected a list of non-empty strings, got " + json_preview(*v));
      out.push_back(s.get<std::string>());
    }
    return ok_status();
  }
  // After reading: any field not read is a typo or an unsupported setting.
  Status no_unknown_fields() const {
    for (const auto& [k, v] : obj_.items())
      if (!seen_.count(k)) return error(k, "unknown field (see docs/render.md for the fields)");
    return ok_status();
  }

 private:
  const json& obj_;
  std::string source_;
  std::string path_;
  std::set<std::string> seen_;
};

Status check_all(std::initializer_list<Status> steps) {
  for (const Status& s : steps)
    if (!s) return s;
  return ok_status();
}

Result<const json*> sub_object(Fields& f, const std::string& field) {
  const json* v = f.find(field);
  if (v && !v->is_object()) return f.error(field, "expected an object, got " + json_preview(*v));
  return v;
}

Status read_storage(Fields& f, JobConfig& c) {
  auto v = sub_object(f, "storage");
  if (!v) return v.error();
  if (!*v) return ok_status();
  Fields s = f.object("storage", **v);
  StorageConfig st;
  if (auto r = check_all({s.string("mount_path", st.mount_path, true), s.string("pvc", st.pvc),
                          s.string("host_path", st.host_path), s.no_unknown_fields()});
      !r)
    return r;
  if (st.mount_path.front() != '/')
    return s.error("mount_path", "expected an absolute path, got \"" + st.mount_path + "\"");
  c.storage = st;
  return ok_status();
}

Status read_kubeflow(Fields& f, JobConfig& c) {
  auto v = sub_object(f, "kubeflow");
  if (!v || !*v) return v ? ok_status() : Status(v.error());
  Fields k = f.object("kubeflow", **v);
  KubeflowConfig& kc = c.kubeflow;
  if (auto r = check_all(
          {k.string("namespace", kc.namespace_name, false),
           k.boolean("auto_resume", kc.auto_resume), k.integer("max_retry", kc.max_retry, 0, 100),
           k.string("token_secret", kc.token_secret),
           k.string("token_secret_key", kc.token_secret_key, false),
           k.string("restart_policy", kc.restart_policy, false), k.no_unknown_fields()});
      !r)
    return r;
  if (kc.restart_policy != "ExitCode" && kc.restart_policy != "OnFailure")
    return k.error("restart_policy",
                   "expected ExitCode or OnFailure, got \"" + kc.restart_policy + "\"");
  return ok_status();
}

Status read_sagemaker(Fields& f, JobConfig& c) {
  auto v = sub_object(f, "sagemaker");
  if (!v || !*v) return v ? ok_status() : Status(v.error());
  Fields s = f.object("sagemaker", **v);
  SageMakerConfig sm;
  if (auto r = check_all({s.string("role_arn", sm.role_arn, true),
                          s.string("output_s3_uri", sm.output_s3_uri, true),
                          s.integer("volume_size_gb", sm.volume_size_gb, 1, 16384),
                          s.integer("max_runtime_seconds", sm.max_runtime_seconds, 1, 2419200),
                          s.integer("max_retry_attempts", sm.max_retry_attempts, 1, 30),
                          s.strings("subnets", sm.subnets, false),
                          s.strings("security_group_ids", sm.security_group_ids, false),
                          s.no_unknown_fields()});
      !r)
    return r;
  if (sm.subnets.empty() != sm.security_group_ids.empty())
    return s.error("subnets", "subnets and security_group_ids go together (VpcConfig needs both)");
  c.sagemaker = sm;
  return ok_status();
}

Status read_batch_and_slurm(Fields& f, JobConfig& c) {
  auto b = sub_object(f, "batch");
  if (!b) return b.error();
  if (*b) {
    Fields bf = f.object("batch", **b);
    if (auto r = check_all({bf.integer("vcpus", c.batch.vcpus, 1, 4096),
                            bf.integer("memory_mib", c.batch.memory_mib, 4, 100000000),
                            bf.integer("shm_mib", c.batch.shm_mib, 1, 100000000),
                            bf.integer("attempts", c.batch.attempts, 1, 10),
                            bf.string("job_role_arn", c.batch.job_role_arn),
                            bf.string("token_secret_arn", c.batch.token_secret_arn),
                            bf.no_unknown_fields()});
        !r)
      return r;
  }
  auto s = sub_object(f, "slurm");
  if (!s) return s.error();
  if (!*s) return ok_status();
  Fields sf = f.object("slurm", **s);
  return check_all({sf.string("partition", c.slurm.partition),
                    sf.string("time", c.slurm.time_limit), sf.string("account", c.slurm.account),
                    sf.no_unknown_fields()});
}

Status check_name(Fields& f, const std::string& name) {
  static const std::regex dns_label("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  if (!std::regex_match(name, dns_label))
    return f.error(
        "name",
        "expected lowercase letters, digits and '-', starting and ending with a letter or "
        "digit, at most 63 characters (a Kubernetes name), got \"" +
            name + "\"");
  return ok_status();
}

Status read_top_level(Fields& f, JobConfig& c) {
  return check_all(
      {f.string("name", c.name, true), f.string("image", c.image, true),
       f.integer("nodes", c.nodes, 1, 10000), f.integer("gpus_per_node", c.gpus_per_node, 0, 64),
       f.string("instance_type", c.instance_type), f.integer("efa_per_node", c.efa_per_node, 0, 64),
       f.strings("command", c.command, true), f.strings("run_args", c.run_args, false),
       f.string("trainvisor", c.trainvisor, false),
       f.integer("max_restarts", c.max_restarts, 0, 1000),
       f.integer("grace_period", c.grace_period, 1, 3600),
       f.string("checkpoint_dir", c.checkpoint_dir, false),
       f.string("checkpoint_s3_uri", c.checkpoint_s3_uri)});
}

}  // namespace

Result<JobConfig> parse_job_config(const std::string& text, const std::string& source) {
  const auto parsed = parse_json(text);
  if (!parsed)
    return Error{exit_code::kConfig, source + ": not valid JSON (" + parsed.error().message + ")"};
  const json& doc = *parsed;
  if (!doc.is_object())
    return Error{exit_code::kConfig, source + ": expected a JSON object at the top"};
  Fields f(doc, source, "");
  JobConfig c;
  if (auto r = check_all({read_top_level(f, c), check_name(f, c.name), read_storage(f, c),
                          read_kubeflow(f, c), read_sagemaker(f, c), read_batch_and_slurm(f, c),
                          f.no_unknown_fields()});
      !r)
    return r.error();
  if (c.checkpoint_dir.empty()) c.checkpoint_dir = "/opt/ml/checkpoints";
  if (c.checkpoint_dir.front() != '/')
    return f.error("checkpoint_dir", "expected an absolute path, got \"" + c.checkpoint_dir + "\"");
  if (c.checkpoint_s3_uri && c.checkpoint_s3_uri->rfind("s3://", 0) != 0)
    return f.error("checkpoint_s3_uri",
                   "expected s3://bucket/prefix, got \"" + *c.checkpoint_s3_uri + "\"");
  return c;
}

}  // namespace tv
