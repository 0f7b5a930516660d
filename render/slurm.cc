// sbatch script for Slurm, HyperPod's Slurm clusters included (docs/platforms/slurm.md): one
// trainvisor per node through srun, the image through pyxis/enroot (--container-image).
#include <algorithm>
#include <cstdio>

#include "common/shell_word.h"
#include "common/stop_window.h"
#include "render/render.h"

namespace tv {
namespace {

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
  // append: a requeued job (75) keeps the log of the attempt before it.
  return d + "#SBATCH --output=%x-%j.out\n#SBATCH --open-mode=append\n";
}

std::string srun_line(const JobConfig& c, int grace) {
  // No --kill-on-bad-exit: trainvisor stops every node itself and chooses the exit code (75 when
  // a node is lost); srun's own SIGTERM to the survivors would race it.
  std::vector<std::string> words = {"srun", "--container-image=" + pyxis_image(c.image)};
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
  return line + " &\n";
}

// srun passes the batch script's environment to the tasks and pyxis into the container.
std::string exports(const JobConfig& c) {
  std::string e;
  for (const auto& [name, value] : c.env) e += "export " + name + "=" + shell_word(value) + "\n";
  return e;
}

// srun runs in the background so that this shell, which `sbatch --signal=B:SIG@N` signals alone,
// can pass SIGUSR1/SIGUSR2 on to it (srun signals every process of the step: a warning before the
// time limit, not an end); Slurm's own SIGTERM (scancel, the time limit) reaches the step
// directly, so this shell only keeps waiting for srun's exit code.
const char* const kSignalTraps =
    "# SIGUSR1/SIGUSR2 sent to this shell alone (sbatch --signal=B:USR1@N) go on to srun, which\n"
    "# signals every process of the step; scancel and the time limit signal the step directly.\n"
    "srun_pid=\n"
    "stopped=0\n"
    "forward() { [ -z \"$srun_pid\" ] || kill -s \"$1\" \"$srun_pid\" 2>/dev/null || true; }\n"
    "trap 'forward USR1' USR1\n"
    "trap 'forward USR2' USR2\n"
    "trap 'stopped=1' TERM\n";

// srun exits 128+9 when one node's trainvisor was SIGKILLed (a task killed by a signal outranks
// every exit code: Slurm's src/plugins/launch/slurm/launch_slurm.c, _task_finish); trainvisor never
// exits 137 itself, and the other nodes exit 75 on losing that node, so the job's code is 75.
const char* const kWaitAndExit =
    "srun_pid=$!\n"
    "# srun exits 137 when a node's trainvisor was SIGKILLed: the other nodes exit 75 (node "
    "lost).\n"
    "rc=0\n"
    "wait \"$srun_pid\" || rc=$?\n"
    "while kill -0 \"$srun_pid\" 2>/dev/null; do rc=0; wait \"$srun_pid\" || rc=$?; done\n"
    "if [ \"$rc\" -eq 137 ] && [ \"$stopped\" -eq 0 ]; then rc=75; fi\n"
    "exit \"$rc\"\n";

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
      "# Exit codes: 0 done, 75 a node was lost (requeue), 74 a GPU of a node failed (requeue\n"
      "# without that node; srun reports 75 when another node's code is higher), 78\n"
      "# configuration, 69 preflight failed.\n"
      "set -uo pipefail\n" +
      kSignalTraps + exports(c) + srun_line(c, grace) + kWaitAndExit;
  const bool mounted = std::any_of(c.volumes.begin(), c.volumes.end(), [&](const auto& v) {
    return v.host_path && c.checkpoint_dir.starts_with(v.mount_path);
  });
  if (c.checkpoint_dir == "/opt/ml/checkpoints" && !mounted)
    out.notes.push_back(
        "checkpoint_dir is /opt/ml/checkpoints (SageMaker's path, the default): set it to a "
        "directory every node shares, or the job resumes from nothing");
  return out;
}

}  // namespace tv
