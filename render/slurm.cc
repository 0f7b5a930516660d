// sbatch script for Slurm, HyperPod's Slurm clusters included (docs/platforms/slurm.md): one
// trainvisor per node through srun, the image through pyxis/enroot (--container-image).
#include <regex>

#include "common/stop_window.h"
#include "render/render.h"

namespace tv {
namespace {

// One word for bash: plain when it is safe, else single-quoted.
std::string shell_word(const std::string& w) {
  static const std::regex plain("[A-Za-z0-9_./:=@%+,-]+");
  if (std::regex_match(w, plain)) return w;
  std::string q = "'";
  for (char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string directives(const JobConfig& c) {
  std::string d = "#SBATCH --job-name=" + c.name + "\n#SBATCH --nodes=" + std::to_string(c.nodes) +
                  "\n#SBATCH --ntasks-per-node=1\n#SBATCH --exclusive\n";
  if (c.gpus_per_node > 0) d += "#SBATCH --gpus-per-node=" + std::to_string(c.gpus_per_node) + "\n";
  if (c.slurm.partition) d += "#SBATCH --partition=" + *c.slurm.partition + "\n";
  if (c.slurm.time_limit) d += "#SBATCH --time=" + *c.slurm.time_limit + "\n";
  if (c.slurm.account) d += "#SBATCH --account=" + *c.slurm.account + "\n";
  return d + "#SBATCH --output=%x-%j.out\n";
}

std::string srun_line(const JobConfig& c, int grace) {
  std::vector<std::string> words = {"srun", "--kill-on-bad-exit=1", "--container-image=" + c.image};
  if (c.storage && c.storage->host_path)
    words.push_back("--container-mounts=" + *c.storage->host_path + ":" + c.storage->mount_path);
  words.push_back(c.trainvisor);
  for (const auto& a : trainvisor_run_args(c, grace, c.checkpoint_dir)) words.push_back(a);
  // One option (with its value) per line: a break before the binary and before each "--" word.
  std::string line;
  for (const auto& w : words) {
    const bool brk = !line.empty() && (w == c.trainvisor || w.rfind("--", 0) == 0);
    line += (line.empty() ? "" : brk ? " \\\n  " : " ") + shell_word(w);
  }
  return line + "\n";
}

}  // namespace

Result<Rendered> render_slurm(const JobConfig& c) {
  Rendered out;
  const int grace = c.grace_period.value_or(stop_window("slurm", false).grace_seconds);
  out.text =
      "#!/bin/bash\n" + directives(c) +
      "# trainvisor reads the topology from SLURM_* (one task per node) and stops its workers "
      "within\n"
      "# --grace-period " +
      std::to_string(grace) +
      " s of Slurm's SIGTERM (KillWait defaults to 30 s).\n"
      "# Exit codes: 0 done, 75 a node was lost (requeue), 78 configuration, 69 preflight failed.\n"
      "set -euo pipefail\n" +
      srun_line(c, grace);
  if (c.storage && !c.storage->host_path)
    out.notes.push_back("storage.host_path is not set: storage is not mounted");
  if (c.checkpoint_s3_uri) out.notes.push_back("checkpoint_s3_uri is used by sagemaker only");
  return out;
}

}  // namespace tv
