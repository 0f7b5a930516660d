// What `run` decides before anything starts, from the values its options gave and the node's
// facts: each rule one pure function (the file system only through its seam, the environment a
// snapshot), tested table by table in tests/unit/plan/. plan_run (launcher/plan/run_plan.h) reads
// the options and the node, calls these rules, and cli/run_command.cc wires what they decide.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/resume.h"
#include "common/environment.h"
#include "common/file_system.h"
#include "common/options.h"
#include "common/platforms.h"
#include "common/result.h"

namespace tv {

// Where checkpoints live: --checkpoint-dir (already absolute), else SageMaker's
// /opt/ml/checkpoints where that directory exists (SageMaker syncs it to S3), else none.
std::optional<std::string> checkpoint_dir_rule(const std::optional<std::string>& given,
                                               const FileSystem& fs);

// --export's target: --export-dir, else SageMaker's SM_MODEL_DIR, else /opt/ml/model where
// SageMaker's resource config is (a bring-your-own-container job has no SM_* variables); none of
// them: refused (78), naming --export's value and origin.
struct ExportAsked {
  OptionValue what;                       // --export
  std::optional<std::string> export_dir;  // --export-dir
  std::string resource_config;            // --resource-config's path (its default included)
};
Result<std::string> export_dir_rule(const ExportAsked& asked, const Environment& env,
                                    const FileSystem& fs);

// The node agents' coordinator port: --rdzv-port, else master port + 1; on several nodes a
// master port of 65535 has no port after it: refused (78), naming where the master port came from.
struct PortsAsked {
  std::optional<int> rdzv_port;
  int master_port = 0;
  std::string master_port_origin;
  int nnodes = 1;
};
Result<int> rendezvous_port_rule(const PortsAsked& asked);

// Inside a Slurm step (SLURM_JOB_ID and SLURM_STEP_ID), Slurm delivers every signal of the step to
// every process of it, the workers included: trainvisor must not forward them a second time.
bool signals_reach_workers_rule(const Environment& env);

// The termination log: one given by flag or variable always; the default (/dev/termination-log)
// only where it exists (Kubernetes mounts it; elsewhere it is not created). "" for none.
std::string termination_log_rule(const std::optional<OptionValue>& value, const FileSystem& fs);

// The grace from SIGTERM to SIGKILL: --grace-period, else a few seconds under the platform's
// stop window (common/platforms.h).
std::chrono::milliseconds grace_rule(std::optional<std::chrono::milliseconds> given,
                                     Platform platform, bool in_kubernetes);

// What the resume hook looks up at each start: only with a checkpoint directory and --resume not
// none; the checkpoint --resume picks, in --checkpoint-format, of this job's experiment only
// (--checkpoint-experiment, else the one the workers' command line names, and its --task:
// checkpoint/experiments.h). The hook runs only when no worker of the job is alive on any node, so
// nothing can still be writing: no settle window (the completeness checks decide).
struct ResumeAsked {
  std::optional<std::string> checkpoint_dir;  // checkpoint_dir_rule's
  std::string format;                         // --checkpoint-format
  std::optional<Pick> pick;                   // --resume; nullopt: none
  std::vector<std::string> worker_argv;
  std::optional<std::string> experiment;  // --checkpoint-experiment
};
std::optional<ResumeRequest> resume_rule(const ResumeAsked& asked);

}  // namespace tv
