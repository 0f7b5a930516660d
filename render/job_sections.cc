#include "render/job_sections.h"

#include <regex>
#include <set>

#include "render/section_extras.h"

namespace tv::job_sections {
namespace {

using render_fields::check_all;
using render_fields::Fields;
using render_fields::json;
using render_fields::sub_object;

bool matches(const std::string& s, const char* pattern) {
  return std::regex_match(s, std::regex(pattern));
}

const char* kK8sName = "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?";  // a DNS-1123 label
const char* kK8sSubdomain = "[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?";
const char* kEnvName = "[A-Za-z_][A-Za-z0-9_]*";

Status read_env(Fields& f, JobConfig& c) {
  if (auto r = f.string_map("env", c.env); !r) return r;
  for (const auto& [k, v] : c.env) {
    if (!matches(k, kEnvName))
      return f.error("env." + k,
                     "expected a variable name (letters, digits, '_', not starting "
                     "with a digit)");
    if (k.rfind("AWS_BATCH_", 0) == 0 || k.rfind("SM_", 0) == 0 || k.rfind("PET_", 0) == 0)
      return f.error("env." + k,
                     "is set by the platform (AWS_BATCH_*, SM_*, PET_*): expected a "
                     "name of your own");
    if (v.find('\0') != std::string::npos)
      return f.error("env." + k, "expected a value without NUL characters");
  }
  return ok_status();
}

Status read_secret(Fields& f, const std::string& env, const json& v, SecretRef& out) {
  if (!matches(env, kEnvName))
    return f.error("secrets." + env, "expected a variable name (letters, digits, '_')");
  if (!v.is_object())
    return f.error("secrets." + env,
                   "expected an object {secret, key, arn}, got " + json_preview(v));
  Fields s = f.object("secrets." + env, v);
  if (auto r = check_all({s.string("secret", out.k8s_secret), s.string("key", out.k8s_key, false),
                          s.string("arn", out.arn), s.no_unknown_fields()});
      !r)
    return r;
  if (!out.k8s_secret && !out.arn)
    return s.error("secret", "missing: a Kubernetes Secret (secret, key) or an ARN (arn)");
  if (out.k8s_secret && !matches(*out.k8s_secret, kK8sSubdomain))
    return s.error("secret",
                   "expected a Kubernetes Secret name, got " + json(*out.k8s_secret).dump());
  if (!matches(out.k8s_key, "[-._a-zA-Z0-9]{1,253}"))
    return s.error("key", "expected a Secret key (letters, digits, '-', '_', '.'), got " +
                              json(out.k8s_key).dump());
  if (out.arn && out.arn->rfind("arn:", 0) != 0)
    return s.error("arn", "expected a Secrets Manager or SSM parameter ARN (arn:...), got " +
                              json(*out.arn).dump());
  return ok_status();
}

Status read_secrets(Fields& f, JobConfig& c) {
  auto v = sub_object(f, "secrets");
  if (!v || !*v) return v ? ok_status() : Status(v.error());
  for (const auto& [k, s] : (*v)->items()) {
    if (auto r = read_secret(f, k, s, c.secrets[k]); !r) return r;
    if (c.env.count(k)) return f.error("secrets." + k, "is also in env: expected one of the two");
  }
  return ok_status();
}

Status check_volume(Fields& s, const VolumeConfig& vc) {
  if (!matches(vc.name, kK8sName))
    return s.error("name", "expected a Kubernetes name (lowercase letters, digits, '-'), got " +
                               json(vc.name).dump());
  if (!plain_path(vc.mount_path))
    return s.error("mount_path",
                   "expected an absolute path without ',', ':' or control "
                   "characters, got " +
                       json(vc.mount_path).dump());
  const int sources =
      int(vc.pvc.has_value()) + int(vc.host_path.has_value()) + int(vc.efs_id.has_value());
  if (sources != 1) return s.error("pvc", "expected exactly one of pvc, host_path, efs_id");
  if (vc.host_path && !plain_path(*vc.host_path))
    return s.error("host_path",
                   "expected an absolute path without ',', ':' or control "
                   "characters, got " +
                       json(*vc.host_path).dump());
  if (vc.pvc && !matches(*vc.pvc, kK8sSubdomain))
    return s.error("pvc", "expected a PersistentVolumeClaim name, got " + json(*vc.pvc).dump());
  if (vc.efs_id && !matches(*vc.efs_id, "fs-[0-9a-f]{8,40}"))
    return s.error("efs_id",
                   "expected an EFS file system id (fs-0123abcd), got " + json(*vc.efs_id).dump());
  if (vc.efs_root.front() != '/')
    return s.error("efs_root", "expected an absolute path, got " + json(vc.efs_root).dump());
  return ok_status();
}

Status read_volumes(Fields& f, JobConfig& c) {
  const json* v = f.find("volumes");
  if (!v) return ok_status();
  if (!v->is_array())
    return f.error("volumes", "expected a list of volumes, got " + json_preview(*v));
  std::set<std::string> names, paths;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = "volumes[" + std::to_string(i) + "]";
    if (!(*v)[i].is_object())
      return f.error(at, "expected an object, got " + json_preview((*v)[i]));
    Fields s = f.object(at, (*v)[i]);
    VolumeConfig vc;
    if (auto r =
            check_all({s.string("name", vc.name, true), s.string("mount_path", vc.mount_path, true),
                       s.string("pvc", vc.pvc), s.string("host_path", vc.host_path),
                       s.string("efs_id", vc.efs_id), s.string("efs_root", vc.efs_root, false),
                       s.boolean("read_only", vc.read_only), s.no_unknown_fields()});
        !r)
      return r;
    if (auto r = check_volume(s, vc); !r) return r;
    if (!names.insert(vc.name).second) return s.error("name", "\"" + vc.name + "\" is used twice");
    if (!paths.insert(vc.mount_path).second || vc.name == "shm" || vc.mount_path == "/dev/shm")
      return s.error("mount_path",
                     "\"" + vc.mount_path + "\" is mounted twice (/dev/shm is shm_mib)");
    c.volumes.push_back(vc);
  }
  return ok_status();
}

Status read_kubeflow(Fields& f, JobConfig& c) {
  auto v = sub_object(f, "kubeflow");
  if (!v || !*v) return v ? ok_status() : Status(v.error());
  Fields k = f.object("kubeflow", **v);
  KubeflowConfig& kc = c.kubeflow.emplace();
  if (auto r = check_all(
          {k.string("namespace", kc.namespace_name, false),
           k.boolean("auto_resume", kc.auto_resume), k.boolean("node_health", kc.node_health),
           k.integer("max_retry", kc.max_retry, 0, 100), k.string("token_secret", kc.token_secret),
           k.string("token_secret_key", kc.token_secret_key, false),
           k.string("restart_policy", kc.restart_policy, false),
           k.string("cpu_request", kc.cpu_request), k.string("cpu_limit", kc.cpu_limit),
           k.string("memory_request", kc.memory_request), k.string("memory_limit", kc.memory_limit),
           read_kubeflow_extras(k, kc), read_target_run_args(k, "kubeflow", c),
           k.no_unknown_fields()});
      !r)
    return r;
  for (auto [field, value] : {std::pair{"cpu_request", &kc.cpu_request},
                              {"cpu_limit", &kc.cpu_limit},
                              {"memory_request", &kc.memory_request},
                              {"memory_limit", &kc.memory_limit}})
    if (*value && !matches(**value, "[0-9]+(\\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?"))
      return k.error(
          field, "expected a Kubernetes quantity (16, 500m, 64Gi), got " + json(**value).dump());
  if (!matches(kc.namespace_name, kK8sName))
    return k.error("namespace",
                   "expected a Kubernetes name, got " + json(kc.namespace_name).dump());
  if (kc.token_secret && !matches(*kc.token_secret, kK8sSubdomain))
    return k.error("token_secret", "expected a Secret name, got " + json(*kc.token_secret).dump());
  if (kc.restart_policy == "ExitCode")
    return k.error(
        "restart_policy",
        "ExitCode is refused: the training operator retries only exit codes >= 128 "
        "under it (pkg/util/train/train_util.go IsRetryableExitCode), so trainvisor's 75 "
        "(node lost, retry) would fail the job and 137/143 would be retried without "
        "limit; expected OnFailure (docs/exit-codes.md)");
  if (kc.restart_policy != "OnFailure")
    return k.error("restart_policy", "expected OnFailure, got \"" + kc.restart_policy + "\"");
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
                          s.integer("max_retry_attempts", sm.max_retry_attempts, 1, 30),
                          s.strings("subnets", sm.subnets, false),
                          s.strings("security_group_ids", sm.security_group_ids, false),
                          s.boolean("inter_container_encryption", sm.inter_container_encryption),
                          read_sagemaker_extras(s, sm), read_target_run_args(s, "sagemaker", c),
                          s.no_unknown_fields()});
      !r)
    return r;
  if (sm.subnets.empty() != sm.security_group_ids.empty())
    return s.error("subnets", "subnets and security_group_ids go together (VpcConfig needs both)");
  c.sagemaker = sm;
  return ok_status();
}

Status read_batch(Fields& f, JobConfig& c) {
  auto b = sub_object(f, "batch");
  if (!b || !*b) return b ? ok_status() : Status(b.error());
  Fields bf = f.object("batch", **b);
  BatchConfig bc;
  if (auto r = check_all(
          {bf.string("definition_name", bc.definition_name), bf.integer("vcpus", bc.vcpus, 1, 4096),
           bf.integer("memory_mib", bc.memory_mib, 4, 100000000),
           bf.integer("attempts", bc.attempts, 1, 10), bf.string("job_role_arn", bc.job_role_arn),
           bf.string("execution_role_arn", bc.execution_role_arn),
           bf.string("token_secret_arn", bc.token_secret_arn), read_target_run_args(bf, "batch", c),
           bf.no_unknown_fields()});
      !r)
    return r;
  c.batch = bc;
  return ok_status();
}

// sbatch reads `#SBATCH --partition=...` to the end of the line: a newline would start a shell
// line of its own, so every value is one word of the characters Slurm allows.
Status read_slurm(Fields& f, JobConfig& c) {
  auto s = sub_object(f, "slurm");
  if (!s || !*s) return s ? ok_status() : Status(s.error());
  Fields sf = f.object("slurm", **s);
  SlurmConfig sc;
  if (auto r = check_all({sf.string("partition", sc.partition), sf.string("time", sc.time_limit),
                          sf.string("account", sc.account), sf.boolean("requeue", sc.requeue),
                          read_target_run_args(sf, "slurm", c), sf.no_unknown_fields()});
      !r)
    return r;
  for (auto [field, value] : {std::pair{"partition", &sc.partition}, {"account", &sc.account}})
    if (*value && !matches(**value, "[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*"))
      return sf.error(field,
                      "expected names of letters, digits, '_', '.', '-' (comma-separated), "
                      "got " +
                          json(**value).dump());
  // sbatch(1) --time: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
  // days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED.
  if (sc.time_limit && !matches(*sc.time_limit,
                                "UNLIMITED|unlimited|infinite|[0-9]+(:[0-5]?[0-9]){0,2}|[0-9]+-[0-"
                                "9]{1,2}(:[0-5]?[0-9]){0,2}"))
    return sf.error("time",
                    "expected minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS "
                    "(sbatch --time), got " +
                        json(*sc.time_limit).dump());
  c.slurm = sc;
  return ok_status();
}

}  // namespace

bool plain_path(const std::string& path) {
  return !path.empty() && path.front() == '/' && matches(path, "/[A-Za-z0-9._/+@=-]*");
}

Status read_sections(Fields& f, JobConfig& c) {
  if (f.find("storage"))
    return f.error("storage",
                   "replaced by volumes: [{\"name\", \"mount_path\", \"pvc\" | "
                   "\"host_path\" | \"efs_id\"}] (docs/render.md)");
  return check_all({read_env(f, c), read_secrets(f, c), read_volumes(f, c), read_kubeflow(f, c),
                    read_sagemaker(f, c), read_batch(f, c), read_slurm(f, c)});
}

}  // namespace tv::job_sections
