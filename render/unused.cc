// unused_settings (render/render.h): what each target leaves out of its spec, said once each, so
// that a setting is never dropped without a word (docs/render.md).
#include <functional>

#include "render/render.h"

namespace tv {
namespace {

struct Rule {
  std::function<bool(const JobConfig&)> set;
  std::vector<std::string> unused_by;
  std::string why;  // "<field> is not used by <target>: " + why
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {[](const JobConfig& c) { return c.checkpoint_s3_uri.has_value(); },
       {"kubeflow", "batch", "slurm"},
       "checkpoint_s3_uri|only SageMaker syncs a checkpoint dir to S3: put checkpoint_dir on a "
       "shared volume"},
      {[](const JobConfig& c) { return c.instance_type.has_value(); },
       {"slurm"},
       "instance_type|the partition decides the nodes (the type is still checked against the "
       "instance table)"},
      {[](const JobConfig& c) { return c.efa_per_node.has_value(); },
       {"sagemaker"},
       "efa_per_node|SageMaker gives EFA-capable ml. instances their interfaces on its own"},
      {[](const JobConfig& c) { return c.efa_per_node.has_value(); },
       {"slurm"},
       "efa_per_node|pyxis containers see the host's /dev/infiniband devices"},
      {[](const JobConfig& c) { return c.shm_mib.has_value(); },
       {"sagemaker"},
       "shm_mib|SageMaker sizes the training container's /dev/shm itself"},
      {[](const JobConfig& c) { return c.shm_mib.has_value(); },
       {"slurm"},
       "shm_mib|enroot containers share the host's /dev/shm"},
      {[](const JobConfig& c) { return !c.secrets.empty(); },
       {"slurm"},
       "secrets|Slurm has no secret store: sbatch passes the submitting shell's environment, "
       "export the variables before sbatch"},
      {[](const JobConfig& c) { return c.trainvisor != "/usr/local/bin/trainvisor"; },
       {"batch"},
       "trainvisor|Batch runs the image's ENTRYPOINT with the command: the ENTRYPOINT must be "
       "trainvisor (docs/platforms/aws-batch.md)"},
      {[](const JobConfig& c) { return c.kubeflow.has_value(); },
       {"sagemaker", "batch", "slurm"},
       "kubeflow|the section is for --target kubeflow"},
      {[](const JobConfig& c) { return c.sagemaker.has_value(); },
       {"kubeflow", "batch", "slurm"},
       "sagemaker|the section is for --target sagemaker"},
      {[](const JobConfig& c) { return c.batch.has_value(); },
       {"kubeflow", "sagemaker", "slurm"},
       "batch|the section is for --target batch"},
      {[](const JobConfig& c) { return c.slurm.has_value(); },
       {"kubeflow", "sagemaker", "batch"},
       "slurm|the section is for --target slurm"},
      {[](const JobConfig& c) { return c.timeout_s && c.slurm && c.slurm->time_limit; },
       {"slurm"},
       "timeout_s|slurm.time is set and wins"},
  };
  return r;
}

// Each target mounts some kinds of volume only.
std::string volume_note(const VolumeConfig& v, const std::string& target) {
  const std::string at = "volumes " + v.name + ": ";
  if (target == "sagemaker")
    return at +
           "not used by sagemaker (FSx and EFS go in InputDataConfig, by hand; "
           "checkpoints go through CheckpointConfig)";
  if (v.pvc && target != "kubeflow")
    return at + "pvc is not used by " + target + ": expected host_path (the host's mount)" +
           (target == "batch" ? " or efs_id" : "");
  if (v.efs_id && target != "batch")
    return at + "efs_id is not used by " + target +
           (target == "kubeflow" ? ": mount EFS through a PVC of the EFS CSI driver"
                                 : ": expected host_path (the host's NFS mount)");
  return "";
}

}  // namespace

std::vector<std::string> unused_settings(const JobConfig& c, const std::string& target) {
  std::vector<std::string> notes;
  for (const Rule& r : rules()) {
    bool unused = false;
    for (const auto& t : r.unused_by) unused = unused || t == target;
    if (!unused || !r.set(c)) continue;
    const auto bar = r.why.find('|');
    notes.push_back(r.why.substr(0, bar) + " is not used by " + target + ": " +
                    r.why.substr(bar + 1));
  }
  for (const auto& v : c.volumes)
    if (auto n = volume_note(v, target); !n.empty()) notes.push_back(n);
  return notes;
}

}  // namespace tv
