// SupervisorConfig: what `run` hands the Supervisor (supervisor.h): the workers' layout, command
// line and environment, the grace period, the hang rules, the evidence and log files, the warm
// standbys, the save before a stop, the GPU watch, and the hooks cli/ wires (the resume lookup,
// the progress step, the observer); the seams a unit test replaces (fs, rank_dirs,
// wall_clock_ns). Filled by cli/run_command.cc from plan_run's RunPlan (launcher/plan/run_plan.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/file_system.h"
#include "common/off_loop.h"
#include "launcher/job/cluster.h"
#include "launcher/node/run_observer.h"
#include "launcher/workers/rank_dirs.h"
#include "launcher/workers/side_query.h"
#include "launcher/workers/spawner.h"
#include "launcher/workers/stall_detector.h"
#include "launcher/workers/standby.h"
#include "launcher/workers/worker_env.h"
#include "launcher/workers/worker_start.h"

namespace tv {

struct SupervisorConfig {
  WorkerLayout layout;
  std::string executable;         // resolved argv[0]
  std::vector<std::string> argv;  // the workers' command line
  Environment base_env;
  std::chrono::milliseconds grace{25000};
  std::chrono::milliseconds hang_timeout{0};  // 0 = off (or the progress rules, `stall`)
  // --hang-timeout auto: the progress rules decide a hang (stall_detector.h, fed by the steps
  // progress_seen() and the heartbeat files give, the saves checkpoint_saved() gives).
  std::optional<StallRules> stall;
  // Evidence on hang and `trainvisor stacks` (supervisor_stacks.cc): Python workers get the
  // worker hook, a hang and the stacks signal write every rank's stacks first; NCCL's flight
  // recorder is set up. --hang-stacks off: none of it.
  bool stacks = true;
  std::string work_dir;    // error files and heartbeats live under it
  bool keep_logs = false;  // --log-dir: per-rank files under work_dir
  // --log-format json: the workers' forwarded lines are JSON objects too (common/worker_line.h).
  bool json_worker_lines = false;
  // Generation g writes attempt_<first_attempt + g>/: past the attempts an earlier container left
  // in a --log-dir that outlives it (launcher/node/attempt_number.h).
  int first_attempt = 0;
  // Inside a Slurm step, Slurm delivers every signal of the step to every process of it, the
  // workers included: forwarding would deliver each twice (docs/supervision.md, "Signals").
  bool signals_reach_workers = false;
  std::string failure_file;
  std::string termination_log;
  WarmStandbyConfig warm;  // --warm-standby / --warm-import (docs/standby.md)
  // Hook: the checkpoint to resume from at each (re)start, and the arguments that hand it to
  // the workers (--resume-arg, already expanded); may be empty.
  // The plan names the checkpoint to step over when the judge found one poisoned
  // (GenerationPlan::step_over). In three steps, so that no file-system call runs on the loop:
  // called on the loop, the hook returns the lookup; the lookup runs off the loop (off_loop,
  // ResumeWait: launcher/node/resume_wait.h) and owns what it reads; it returns the
  // answer, which runs on the loop again and gives the target.
  using ResumeAnswer = std::function<std::optional<ResumeTarget>()>;
  using ResumeLookup = std::function<ResumeAnswer()>;
  std::function<ResumeLookup(const GenerationPlan&)> find_resume;
  std::string resume_dir;       // the directory looked up, named when a lookup is slow
  OffLoop* off_loop = nullptr;  // where the lookup runs; null: real_off_loop()
  // Where the rank directories under --log-dir are opened and the heartbeat files read (a slow
  // log file system never stalls the loop); null: real_off_loop().
  OffLoop* log_off_loop = nullptr;
  // --save-signal: on a stop signal the workers get this signal first and their SIGTERM waits,
  // inside the grace period, for a complete checkpoint newer than the stop (checkpoint_complete;
  // launcher/node/stop_save.h); 0: off.
  int save_signal = 0;
  // The wall clock (ns since the epoch) that is compared with files' mtimes: the stop with the
  // checkpoints' (default coarse_wall_ns), a worker's reap time with the error files' (default
  // the system clock). A unit test sets it with the FakeFileSystem's mtimes.
  std::function<std::int64_t()> wall_clock_ns;
  // Hook: told about generations, workers and their output (goodput, metrics); may be null.
  RunObserver* observer = nullptr;
  // The GPU health child (`trainvisor __query gpu-watch SECONDS`, docs/health.md); unset: the
  // GPUs are not watched. Required (--gpu-health on): its `unavailable` ends the run with 69.
  // Started once, after the first generation's workers (never on the start or restart path), and
  // lives for the whole run.
  std::optional<SpawnRequest> gpu_health;
  bool gpu_health_required = false;
  // Children that answer once, started beside the first generation's workers (the start banner's
  // GPU query: launcher/run/start_banner.h); the end of the run waits for their answer (bounded by
  // each one's deadline).
  std::vector<SideQueryRequest> side_queries;
  // Hook: the last progress step of the current generation (the progress parser's, wired by
  // cli/), part of a failure's signature; nullopt (or no hook): before any progress.
  std::function<std::optional<std::int64_t>()> progress_step;
  // The files it reads to explain an ending (/proc/self/cgroup, the memory cgroup's OOM count
  // and limit): the unit tests' FakeFileSystem; null: the real one. Must outlive it.
  const FileSystem* fs = nullptr;
  // Where each rank's directory is opened and a stale file in it cleared (rank_dirs.h): the unit
  // tests' fake, which can refuse one; null: the real one. Must outlive it.
  const RankDirs* rank_dirs = nullptr;
};

}  // namespace tv
