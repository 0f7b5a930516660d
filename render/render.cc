#include "render/render.h"

#include "common/exit_codes.h"
#include "common/instance_facts.h"
#include "common/parse_number.h"
#include "common/platforms.h"

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
    return Error{ErrorKind::kConfig,
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

std::optional<int> metrics_port_of(const std::vector<std::string>& run_options,
                                   const std::map<std::string, std::string>& env) {
  std::optional<std::string> value;
  if (auto it = env.find("TRAINVISOR_METRICS_PORT"); it != env.end()) value = it->second;
  for (std::size_t i = 0; i < run_options.size(); ++i) {
    const std::string& a = run_options[i];
    for (const char* name : {"--metrics-port", "--metrics_port"}) {
      const std::string n = name;
      if (a == n && i + 1 < run_options.size())
        value = run_options[i + 1];
      else if (a.starts_with(n + "="))
        value = a.substr(n.size() + 1);
    }
  }
  if (!value) return std::nullopt;
  return parse_integer<int>(*value, 1, 65535);
}

std::vector<std::string> workdir_args(const JobConfig& c) {
  if (!c.workdir) return {};
  return {"--workdir", *c.workdir};
}

std::vector<std::string> trainvisor_run_args(const JobConfig& c, const std::string& platform,
                                             int grace_seconds, const std::string& checkpoint_dir,
                                             const std::vector<std::string>& owned) {
  // The platform's node count is every container it starts, the spares' included.
  std::vector<std::string> args = {"run", "--platform", platform, "--nnodes",
                                   std::to_string(c.containers())};
  if (c.spare_nodes > 0) {
    args.push_back("--spare-nodes");
    args.push_back(std::to_string(c.spare_nodes));
  }
  if (c.gpus_per_node.value_or(0) > 0) {
    args.push_back("--nproc-per-node");
    args.push_back(std::to_string(*c.gpus_per_node));
  }
  for (const auto& w : {std::string("--max-restarts"), std::to_string(c.max_restarts),
                        std::string("--grace-period"), std::to_string(grace_seconds),
                        std::string("--checkpoint-dir"), checkpoint_dir})
    args.push_back(w);
  args.insert(args.end(), owned.begin(), owned.end());
  args.insert(args.end(), c.run_args.begin(), c.run_args.end());
  if (auto it = c.target_run_args.find(platform); it != c.target_run_args.end())
    args.insert(args.end(), it->second.begin(), it->second.end());
  args.insert(args.end(), c.command.begin(), c.command.end());
  return args;
}

}  // namespace tv
