// sbatch script for Slurm, HyperPod's Slurm clusters included (docs/platforms/slurm.md): one
// trainvisor per node through srun, the image through pyxis/enroot (--container-image).
#include <cstdio>
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

// enroot reads `REGISTRY#IMAGE`: without the '#' it takes the registry's host for a Docker Hub
// user ("docker://123456789012.dkr.ecr..." fails). A first part with a '.' or ':' (or localhost)
// is a registry.
std::string pyxis_image(const std::string& image) {
  const auto slash = image.find('/');
  if (image.find('#') != std::string::npos || slash == std::string::npos) return image;
  const std::string head = image.substr(0, slash);
  if (head.find_first_of(".:") == std::string::npos && head != "localhost") return image;
  return head + "#" + image.substr(slash + 1);
}

// sbatch --time from seconds, rounded up to a minute: D-HH:MM:00.
std::string slurm_time(int seconds) {
  const int minutes = (seconds + 59) / 60;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d-%02d:%02d:00", minutes / 1440, minutes / 60 % 24,
                minutes % 60);
  return buf;
}

std::string directives(const JobConfig& c) {
  std::string d = "#SBATCH --job-name=" + c.name + "\n#SBATCH --nodes=" + std::to_string(c.nodes) +
                  "\n#SBATCH --ntasks-per-node=1\n#SBATCH --exclusive\n";
  if (*c.gpus_per_node > 0)
    d += "#SBATCH --gpus-per-node=" + std::to_string(*c.gpus_per_node) + "\n";
  const SlurmConfig s = c.slurm.value_or(SlurmConfig{});  // values checked by the parser
  if (s.partition) d += "#SBATCH --partition=" + *s.partition + "\n";
  if (s.time_limit) d += "#SBATCH --time=" + *s.time_limit + "\n";
  if (!s.time_limit && c.timeout_s) d += "#SBATCH --time=" + slurm_time(*c.timeout_s) + "\n";
  if (s.account) d += "#SBATCH --account=" + *s.account + "\n";
  return d + "#SBATCH --output=%x-%j.out\n";
}

std::string srun_line(const JobConfig& c, int grace) {
  std::vector<std::string> words = {"srun", "--kill-on-bad-exit=1",
                                    "--container-image=" + pyxis_image(c.image)};
  std::string mounts;  // paths are checked: no ',' or ':' in them
  for (const auto& v : c.volumes)
    if (v.host_path)
      mounts += (mounts.empty() ? "" : ",") + *v.host_path + ":" + v.mount_path +
                (v.read_only ? ":ro" : "");
  if (!mounts.empty()) words.push_back("--container-mounts=" + mounts);
  if (c.workdir) words.push_back("--container-workdir=" + *c.workdir);
  words.push_back(c.trainvisor);
  for (const auto& a : trainvisor_run_args(c, "slurm", grace, c.checkpoint_dir)) words.push_back(a);
  // One option (with its value) per line: a break before the binary and before each "--" word.
  std::string line;
  for (const auto& w : words) {
    const bool brk = !line.empty() && (w == c.trainvisor || w.rfind("--", 0) == 0);
    line += (line.empty() ? "" : brk ? " \\\n  " : " ") + shell_word(w);
  }
  return line + "\n";
}

// srun passes the batch script's environment to the tasks and pyxis into the container.
std::string exports(const JobConfig& c) {
  std::string e;
  for (const auto& [name, value] : c.env) e += "export " + name + "=" + shell_word(value) + "\n";
  return e;
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
      exports(c) + srun_line(c, grace);
  return out;
}

}  // namespace tv
