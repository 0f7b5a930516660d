// What `trainvisor run` will do, read from its options and the environment before anything
// starts: the topology, the platform's defaults (the checkpoint and export directories), the
// ports (rendezvous = master port + 1, kept apart from the workers' MASTER_PORT), the restart,
// resume and hang rules, the signal rule (Slurm delivers to the whole step) and the workers'
// environment. Nothing runs, listens or writes here; the facts of the machine (files, GPUs, this
// host's address, the programs on PATH, this binary's path, the workers' torch, the current
// directory) come through `PlanFacts`, so tests give fakes. Through it one child may run: the
// workers' python, asked for its torch version (health/torch_version.h), when their command is
// python; for `-m MOD` the same child says whether MOD is there (127 when it is not). The rules it
// calls are run_rules.h's, master_port.h's and node_fingerprint.h's; cli/run_command.cc parses,
// calls plan_run with the real facts and wires what it returns.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "checkpoint/resume.h"
#include "common/environment.h"
#include "common/file_system.h"
#include "common/options.h"
#include "common/result.h"
#include "health/gpu_watch.h"
#include "health/preflight.h"
#include "health/torch_version.h"
#include "launcher/job/restart_policy.h"
#include "launcher/node/supervisor.h"
#include "launcher/plan/observability_options.h"
#include "launcher/rendezvous/fingerprint.h"
#include "launcher/topology/gpu_count.h"
#include "launcher/topology/host_address.h"
#include "launcher/topology/topology.h"
#include "launcher/workers/worker_command.h"

namespace tv {

// Everything the options say, checked before anything starts.
struct RunPlan {
  Topology topology;
  SupervisorConfig sup;
  RestartPolicy policy;
  PreflightLevel preflight = PreflightLevel::kAuto;  // as asked
  TransportRule require_transport = TransportRule::kAuto;
  double min_busbw = 0;
  // health/preflight.h's rules on this node's facts: the transport resolved (`auto`: by the
  // nodes and the EFA devices; its variables are in sup.layout.extra), the level the preflight
  // runs at (`auto`: full across nodes over EFA), and, when it runs, the GPUs this node shows
  // (device nodes) and the count it expects of them (-1: no count check).
  TransportDecision transport;
  PreflightLevel preflight_level = PreflightLevel::kNone;
  int visible_gpus = 0;
  int expected_gpus = -1;
  Interpreter interpreter;            // of `script.py` and `-m MOD` (the banner says which)
  std::optional<TorchVersion> torch;  // the workers' torch, when their command is python
  std::optional<GpuHealthSnapshot> preflight_gpus;  // what the preflight's NVML read (the banner's)
  std::optional<std::string> ckpt_dir;
  std::string ckpt_format;
  std::optional<ResumeRequest> resume;    // when there is a checkpoint dir and --resume is not none
  std::optional<std::string> resume_arg;  // --resume-arg TEMPLATE (validated)
  ObservabilityConfig observability;
  std::optional<std::string> rdzv_token;
  std::optional<rdzv::Fingerprint> fingerprint;  // multi-node: this node's, for its joins
  bool check_fingerprints = true;                // --node-fingerprint
  int rdzv_port = 0;
  std::optional<std::string> export_what;  // --export
  std::string export_dir;                  // where it goes (read_export)
  std::chrono::milliseconds rdzv_timeout{0}, peer_timeout{0};
  std::chrono::milliseconds rdzv_last_call{30000};  // --rdzv-last-call (elastic --nnodes MIN:MAX)
};

// The machine's facts plan_run reads: the real ones are wired by cli/run_command.cc.
struct PlanFacts {
  const FileSystem& fs;
  const GpuCounter& gpus;
  const HostAddress& host;
  // The workers' first word as an executable (a PATH lookup: common/process.h find_executable):
  // its path, else 127 (not found) or 126 (not executable).
  std::function<Result<std::string>(const std::string& name, const Environment& env)> executable;
  // The torch that `python` imports and, when `module` is not "", whether that module is there
  // (one child: health/torch_version.h ask_workers_python).
  std::function<WorkersPython(const std::string& python, const Environment& env,
                              const std::string& module)>
      workers_python;
  std::function<std::string()> self_exe;  // this binary, for the GPU watch child
  std::string version;                    // trainvisor's own, in the node fingerprint
  // trainvisor's current directory, read once --workdir (or SageMaker's code directory) is
  // entered: a relative path is made absolute against it; "" when it could not be read.
  std::string cwd;
};

// A bad value is one error naming it (64 for usage, 78 for configuration), before anything
// starts.
Result<RunPlan> plan_run(const Options& o, const Environment& env, const PlanFacts& facts);

// The duration option `name` in seconds, as milliseconds (bounded by its row: never wraps).
Result<std::chrono::milliseconds> seconds_option(const Options& o, const std::string& name);

}  // namespace tv
