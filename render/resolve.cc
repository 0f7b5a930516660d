// resolve_job (render/render.h): instance-dependent defaults and the checks against the table.
#include <optional>

#include "common/exit_codes.h"
#include "common/instance_facts.h"
#include "common/platforms.h"
#include "render/render.h"

namespace tv {
namespace {

Error config_error(const std::string& what) { return Error{ErrorKind::kConfig, what}; }

std::string has(const InstanceFacts& f, int n, const std::string& what) {
  return std::string(f.type) + " has " + std::to_string(n) + " " + what;
}

Status check_gpus_and_efa(JobConfig& c, const std::optional<InstanceFacts>& f) {
  if (f && c.gpus_per_node && *c.gpus_per_node > f->gpus)
    return config_error("gpus_per_node: " + std::to_string(*c.gpus_per_node) + " GPUs on " +
                        "instance_type " + *c.instance_type + ": " +
                        has(*f, f->gpus, std::string(f->gpu) + " GPUs"));
  if (f && c.efa_per_node && *c.efa_per_node > f->efa)
    return config_error("efa_per_node: " + std::to_string(*c.efa_per_node) +
                        " EFA interfaces on instance_type " + *c.instance_type + ": " +
                        has(*f, f->efa, "EFA interfaces"));
  if (f && c.rt_cores && !f->rt_cores)
    return config_error("rt_cores: true (Isaac Sim renders with RTX) on instance_type " +
                        *c.instance_type + ": its " + std::string(f->gpu) +
                        " GPUs have no RT cores; expected a G instance (g5, g6, g6e, g7e)");
  if (!c.gpus_per_node) c.gpus_per_node = f ? f->gpus : 8;
  if (!c.efa_per_node) c.efa_per_node = f ? f->efa : 0;
  return ok_status();
}

Status fill_memory(JobConfig& c, const std::optional<InstanceFacts>& f, const std::string& target) {
  const long mem_mib = f ? long(f->memory_gib) * 1024 : 0;
  if (f && c.shm_mib && *c.shm_mib >= mem_mib)
    return config_error("shm_mib: " + std::to_string(*c.shm_mib) + " MiB of /dev/shm on " +
                        *c.instance_type + ": " + has(*f, f->memory_gib, "GiB of memory"));
  // Docker's 64 MB breaks Isaac Sim and DataLoader workers: a quarter of the memory, else 16 GiB.
  if (!c.shm_mib) c.shm_mib = f ? int(mem_mib / 4) : 16384;
  if (target != "batch") return ok_status();
  BatchConfig& b = c.batch ? *c.batch : c.batch.emplace();
  if (f && b.vcpus && *b.vcpus > f->vcpus)
    return config_error("batch.vcpus: " + std::to_string(*b.vcpus) + " on " + *c.instance_type +
                        ": " + has(*f, f->vcpus, "vCPUs"));
  if (f && b.memory_mib && *b.memory_mib > mem_mib)
    return config_error("batch.memory_mib: " + std::to_string(*b.memory_mib) + " on " +
                        *c.instance_type + ": " + has(*f, f->memory_gib, "GiB"));
  if (!b.vcpus && !f)
    return config_error(
        "batch.vcpus: missing (the vCPUs each node's container reserves; "
        "render fills it from an instance_type it knows, e.g. p5.48xlarge: 192)");
  if (!b.memory_mib && !f)
    return config_error(
        "batch.memory_mib: missing (the container's memory limit in MiB; "
        "render fills it from an instance_type it knows)");
  if (!b.vcpus) b.vcpus = f->vcpus;
  // The ECS agent and the OS keep some memory: a definition asking for all of it never starts.
  if (!b.memory_mib) b.memory_mib = int(mem_mib * 9 / 10);
  return ok_status();
}

// SageMaker and HyperPod name instances ml.*; Batch names them without the prefix.
void spell_instance_type(JobConfig& c, const std::string& target) {
  if (!c.instance_type) return;
  const std::string bare(without_ml_prefix(*c.instance_type));
  c.instance_type = target == "sagemaker" || target == "kubeflow" ? "ml." + bare : bare;
}

void note_grace(const JobConfig& c, const std::string& target, std::vector<std::string>& notes) {
  if (!c.grace_period || target == "kubeflow") return;  // kubeflow: the pod's window follows it
  const StopWindow w = stop_window(target, false);
  if (*c.grace_period >= w.window_seconds)
    notes.push_back("grace_period " + std::to_string(*c.grace_period) + " s is not below " +
                    target + "'s stop window (" + std::string(w.what) +
                    "): the platform kills the workers before trainvisor's grace period ends");
}

// timeout_s is a different limit on each platform: said once, where it goes and what it bounds.
void note_timeout(const JobConfig& c, const std::string& target, std::vector<std::string>& notes) {
  if (!c.timeout_s || (target == "slurm" && c.slurm && c.slurm->time_limit)) return;
  static const std::vector<std::pair<std::string, std::string>> becomes = {
      {"kubeflow",
       "runPolicy.activeDeadlineSeconds: a limit on the whole job from its start, across every "
       "container restart and whole-job retry, not on one attempt (the operator's "
       "PastActiveDeadline, kubeflow/training-operator pkg/core/job.go)"},
      {"sagemaker",
       "StoppingCondition.MaxRuntimeInSeconds: a limit on all the attempts of the job together "
       "(with RetryStrategy, CreateTrainingJob's MaxRuntimeInSeconds)"},
      {"batch",
       "timeout.attemptDurationSeconds: a limit on each attempt (of batch.attempts) from its "
       "start, "
       "all its nodes together; an attempt ended by it is not retried (RegisterJobDefinition's "
       "JobTimeout)"},
      {"slurm", "sbatch --time (rounded up to a minute): the job's allocation's run time limit"}};
  for (const auto& [t, what] : becomes)
    if (t == target)
      notes.push_back("timeout_s " + std::to_string(*c.timeout_s) + " s becomes " + what);
}

}  // namespace

Result<Resolved> resolve_job(const JobConfig& config, const std::string& target) {
  Resolved r{config, {}};
  JobConfig& c = r.config;
  std::optional<InstanceFacts> facts;
  if (c.instance_type) {
    facts = instance_facts(*c.instance_type);
    if (!facts)
      r.notes.push_back("instance_type " + *c.instance_type +
                        " is not in render's instance table (docs/render.md): its GPUs, EFA "
                        "interfaces, vCPUs and memory are not checked");
  } else if (c.rt_cores) {
    r.notes.push_back("rt_cores is not checked: no instance_type");
  }
  if (auto s = check_gpus_and_efa(c, facts); !s) return s.error();
  if (auto s = fill_memory(c, facts, target); !s) return s.error();
  spell_instance_type(c, target);
  note_grace(c, target, r.notes);
  note_timeout(c, target, r.notes);
  for (auto& n : unused_settings(config, target)) r.notes.push_back(std::move(n));
  return r;
}

}  // namespace tv
