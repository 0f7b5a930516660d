// sbatch script for Slurm, HyperPod's Slurm clusters included (docs/platforms/slurm.md): one
// trainvisor per node through srun, the image through pyxis/enroot (--container-image).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "common/parse_number.h"
#include "common/platforms.h"
#include "common/shell_word.h"
#include "render/render.h"

namespace tv {
namespace {

constexpr int kDefaultPeerTimeout = 30;  // run's --peer-timeout default (docs/options.md)

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
  std::string d = "#SBATCH --job-name=" + c.name +
                  "\n#SBATCH --nodes=" + std::to_string(c.containers()) +
                  "\n#SBATCH --ntasks-per-node=1\n#SBATCH --exclusive\n";
  if (*c.gpus_per_node > 0)
    d += "#SBATCH --gpus-per-node=" + std::to_string(*c.gpus_per_node) + "\n";
  const SlurmConfig s = c.slurm.value_or(SlurmConfig{});  // values checked by the parser
  if (s.partition) d += "#SBATCH --partition=" + *s.partition + "\n";
  if (s.time_limit) d += "#SBATCH --time=" + *s.time_limit + "\n";
  if (!s.time_limit && c.timeout_s) d += "#SBATCH --time=" + slurm_time(*c.timeout_s) + "\n";
  if (s.account) d += "#SBATCH --account=" + *s.account + "\n";
  // A requeued job (a node failed; scontrol requeue) starts again from its checkpoints.
  if (s.requeue) d += *s.requeue ? "#SBATCH --requeue\n" : "#SBATCH --no-requeue\n";
  // append: a requeued job (75) keeps the log of the attempt before it.
  return d + "#SBATCH --output=%x-%j.out\n#SBATCH --open-mode=append\n";
}

// The last value of `option` in run_args ("--peer-timeout 30" or "--peer-timeout=30"), else the
// environment's `env_name`, else `fallback`; seconds, rounded up.
int run_arg_seconds(const JobConfig& c, const std::string& option, const char* env_name,
                    int fallback) {
  std::optional<std::string> text;
  if (auto e = c.env.find(env_name); e != c.env.end()) text = e->second;
  for (size_t i = 0; i < c.run_args.size(); ++i) {
    const std::string& a = c.run_args[i];
    if (a == option && i + 1 < c.run_args.size()) text = c.run_args[++i];
    if (a.starts_with(option + "=")) text = a.substr(option.size() + 1);
  }
  const auto v = text ? parse_finite(*text, 0, 86400) : std::nullopt;
  return v ? static_cast<int>(std::ceil(*v)) : fallback;
}

// srun --wait: once the first task has exited, srun SIGKILLs the step's other tasks after this
// many seconds. Every node ends within it after the first: a node lost is seen by every other node
// within --peer-timeout, which then stops its workers within --grace-period; 10 s more for node
// 0's last messages (2 s) and the exits. A frozen node (SIGSTOP, a hung kernel) no longer holds
// the allocation to the time limit.
int srun_wait_seconds(const JobConfig& c, int grace) {
  // --grace-period is render's own (run_args may not set it): `grace` is what run gets.
  return run_arg_seconds(c, "--peer-timeout", "TRAINVISOR_PEER_TIMEOUT", kDefaultPeerTimeout) +
         grace + 10;
}

std::string srun_line(const JobConfig& c, int grace) {
  // No --kill-on-bad-exit: trainvisor stops every node itself and chooses the exit code (75 when
  // a node is lost); srun's own SIGTERM to the survivors would race it.
  // With spares a lost node's task ends and the others go on: srun must neither end the step
  // (--no-kill) nor kill the others once a task has exited (--wait=0: no limit).
  std::vector<std::string> words = {"srun"};
  if (c.spare_nodes > 0) words.push_back("--no-kill");
  words.push_back("--wait=" + std::to_string(c.spare_nodes > 0 ? 0 : srun_wait_seconds(c, grace)));
  words.push_back("--container-image=" + pyxis_image(c.image));
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
  return line + " 2>&3 &\n";
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
    "# signals every process of the step; scancel and the time limit signal the step directly,\n"
    "# and this shell keeps waiting for srun's code.\n"
    "srun_pid=\n"
    "forward() { [ -z \"$srun_pid\" ] || kill -s \"$1\" \"$srun_pid\" 2>/dev/null || true; }\n"
    "trap 'forward USR1' USR1\n"
    "trap 'forward USR2' USR2\n"
    "trap : TERM\n";

// srun's own lines on its stderr are the only place that tells a task killed by a signal ("tvn2:
// task 1: Killed") from one that exited with 128+N ("task 0: Exited with exit code 137"): srun
// exits 128+N for both (a signal outranks every exit code: Slurm's
// src/plugins/launch/slurm/launch_slurm.c, _task_finish). A filter passes srun's stderr on as it
// is and keeps three facts: a task killed, srun told to stop ("forcing job termination": its
// SIGTERM/SIGHUP, which it answers by SIGKILLing the step, src/srun/libsrun/srun_job.c), the
// highest exit code of the tasks that exited. tee passes every byte on as it comes (awk would
// hold its input back in blocks); the analysis reads a copy.
const char* const kSrunFilter =
    "# srun's stderr goes on through tee at once; a copy goes to awk, which keeps how each task\n"
    "# ended (srun's own lines). Both ignore the signals of scancel --full.\n"
    "tv_dir=\n"
    "filter_pid=\n"
    "exec 3>&2\n"
    "if tv_dir=$(mktemp -d 2>/dev/null) && trap 'rm -rf \"$tv_dir\"' EXIT &&\n"
    "   mkfifo \"$tv_dir/srun.err\" \"$tv_dir/copy\"; then\n"
    "  ( trap '' TERM INT HUP USR1 USR2 PIPE; exec awk -v out=\"$tv_dir/ends\" '\n"
    "    /^srun: error: .*: tasks? [0-9][-0-9,]*: / {\n"
    "      if (match($0, /Exited with exit code [0-9]+$/)) {\n"
    "        c = substr($0, RSTART + 22) + 0; if (c > high) high = c\n"
    "      } else killed = 1\n"
    "    }\n"
    "    /^srun: forcing job termination/ { forced = 1 }\n"
    "    END { print killed + 0, forced + 0, high + 0 > out }' ) <\"$tv_dir/copy\" &\n"
    "  filter_pid=$!\n"
    "  ( trap '' TERM INT HUP USR1 USR2 PIPE; exec tee -p \"$tv_dir/copy\" ) <\"$tv_dir/srun.err\" "
    ">&2 &\n"
    "  exec 3>\"$tv_dir/srun.err\"\n"
    "fi\n";

// srun's 128+N is mapped only when srun says a task was killed by a signal, i.e. a node's
// trainvisor did not choose its code: SIGKILLed by srun (--wait, a forced termination), by the
// OOM killer or by hand. A task that exited 137 itself (an OOM-killed worker after
// --max-restarts, docs/exit-codes.md) keeps 137, so RequeueExit=75 never requeues it.
const char* const kWaitAndExit =
    "srun_pid=$!\n"
    "exec 3>&-\n"
    "rc=0\n"
    "wait \"$srun_pid\" || rc=$?\n"
    "while kill -0 \"$srun_pid\" 2>/dev/null; do rc=0; wait \"$srun_pid\" || rc=$?; done\n"
    "[ -z \"$filter_pid\" ] ||\n"
    "  while kill -0 \"$filter_pid\" 2>/dev/null; do wait \"$filter_pid\" 2>/dev/null; done\n"
    "# A task killed by a signal: srun's 128+N is not a trainvisor's code. Stopped (srun forced "
    "the\n"
    "# termination): 143; else the highest code a task exited with (75: the others lost that\n"
    "# node); none: 75, the node was lost.\n"
    "if [ \"$rc\" -gt 128 ] && [ -n \"$filter_pid\" ] && read -r killed forced high "
    "<\"$tv_dir/ends\" "
    "&&\n"
    "   [ \"$killed\" = 1 ]; then\n"
    "  new=75\n"
    "  if [ \"$forced\" = 1 ]; then new=143; elif [ \"$high\" -gt 0 ]; then new=$high; fi\n"
    "  [ \"$new\" = \"$rc\" ] || echo \"sbatch script: srun exited $rc with a task killed by a "
    "\"\\\n"
    "\"signal (srun forced the termination: $forced; highest exit code of the other tasks: \"\\\n"
    "\"$high): exiting $new\" >&2\n"
    "  rc=$new\n"
    "fi\n"
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
      "# configuration, 69 preflight failed, 143 stopped (scancel, the time limit), a worker's\n"
      "# own code (1, 137 ...) after --max-restarts.\n"
      "set -uo pipefail\n" +
      kSignalTraps + kSrunFilter + exports(c) + srun_line(c, grace) + kWaitAndExit;
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
