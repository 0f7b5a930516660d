#include "render/render.h"

#include "common/exit_codes.h"

namespace tv {

const std::vector<std::string>& render_targets() {
  static const std::vector<std::string> targets = {"kubeflow", "sagemaker", "batch", "slurm"};
  return targets;
}

Result<Rendered> render_job(const JobConfig& config, const std::string& target) {
  if (target == "kubeflow") return render_kubeflow(config);
  if (target == "sagemaker") return render_sagemaker(config);
  if (target == "batch") return render_batch(config);
  if (target == "slurm") return render_slurm(config);
  return Error{exit_code::kConfig,
               "--target: expected kubeflow, sagemaker, batch or slurm, got \"" + target + "\""};
}

std::vector<std::string> trainvisor_run_args(const JobConfig& c, int grace_seconds,
                                             const std::string& checkpoint_dir) {
  std::vector<std::string> args = {"run",
                                   "--max-restarts",
                                   std::to_string(c.max_restarts),
                                   "--grace-period",
                                   std::to_string(grace_seconds),
                                   "--checkpoint-dir",
                                   checkpoint_dir};
  args.insert(args.end(), c.run_args.begin(), c.run_args.end());
  args.insert(args.end(), c.command.begin(), c.command.end());
  return args;
}

}  // namespace tv
