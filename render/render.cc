#include "render/render.h"

#include "common/exit_codes.h"
#include "common/stop_window.h"
#include "render/instance_facts.h"

namespace tv {

const std::vector<std::string>& render_targets() {
  static const std::vector<std::string> targets = {"kubeflow", "sagemaker", "batch", "slurm"};
  return targets;
}

Result<Rendered> render_job(const JobConfig& config, const std::string& target,
                            const RenderOptions& options) {
  bool known = false;
  for (const auto& t : render_targets()) known = known || t == target;
  if (!known)
    return Error{exit_code::kConfig,
                 "--target: expected kubeflow, sagemaker, batch or slurm, got \"" + target + "\""};
  auto resolved = resolve_job(config, target);
  if (!resolved) return resolved.error();
  const JobConfig& c = resolved->config;
  auto out = target == "kubeflow"    ? render_kubeflow(c)
             : target == "sagemaker" ? render_sagemaker(c, options)
             : target == "batch"     ? render_batch(c)
                                     : render_slurm(c);
  if (!out) return out;
  out->notes.insert(out->notes.begin(), resolved->notes.begin(), resolved->notes.end());
  return out;
}

std::vector<std::string> trainvisor_run_args(const JobConfig& c, const std::string& platform,
                                             int grace_seconds, const std::string& checkpoint_dir) {
  std::vector<std::string> args = {"run", "--platform", platform, "--nnodes",
                                   std::to_string(c.nodes)};
  if (c.gpus_per_node.value_or(0) > 0) {
    args.push_back("--nproc-per-node");
    args.push_back(std::to_string(*c.gpus_per_node));
  }
  for (const auto& w : {std::string("--max-restarts"), std::to_string(c.max_restarts),
                        std::string("--grace-period"), std::to_string(grace_seconds),
                        std::string("--checkpoint-dir"), checkpoint_dir})
    args.push_back(w);
  args.insert(args.end(), c.run_args.begin(), c.run_args.end());
  args.insert(args.end(), c.command.begin(), c.command.end());
  return args;
}

}  // namespace tv
