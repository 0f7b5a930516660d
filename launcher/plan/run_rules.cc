#include "launcher/plan/run_rules.h"

#include "checkpoint/experiments.h"
#include "common/exit_codes.h"
#include "common/platforms.h"

namespace tv {

namespace {
constexpr const char* kSageMakerCheckpoints = "/opt/ml/checkpoints";
constexpr const char* kSageMakerModel = "/opt/ml/model";
constexpr int kHighestPort = 65535;
}  // namespace

std::optional<std::string> checkpoint_dir_rule(const std::optional<std::string>& given,
                                               const FileSystem& fs) {
  if (given) return given;
  if (fs.is_directory(kSageMakerCheckpoints)) return std::string(kSageMakerCheckpoints);
  return std::nullopt;
}

Result<std::string> export_dir_rule(const ExportAsked& asked, const Environment& env,
                                    const FileSystem& fs) {
  if (asked.export_dir) return *asked.export_dir;
  if (auto sm = env.get("SM_MODEL_DIR"); sm && !sm->empty()) return *sm;
  if (!asked.resource_config.empty() && fs.exists(asked.resource_config))
    return std::string(kSageMakerModel);
  return Error{ErrorKind::kConfig, asked.what.origin + "=\"" + asked.what.value +
                                       "\": no export directory: expected --export-dir DIR or "
                                       "SM_MODEL_DIR (SageMaker's /opt/ml/model)"};
}

Result<int> rendezvous_port_rule(const PortsAsked& asked) {
  if (asked.rdzv_port) return *asked.rdzv_port;
  const int port = asked.master_port + 1;
  if (asked.nnodes > 1 && port > kHighestPort)
    return Error{ErrorKind::kConfig,
                 "the rendezvous port would be master port + 1 = " + std::to_string(port) +
                     " (master port " + std::to_string(asked.master_port) + " from " +
                     asked.master_port_origin +
                     "): expected at most 65535; pick a lower master port or set --rdzv-port"};
  return port;
}

bool signals_reach_workers_rule(const Environment& env) {
  return env.has("SLURM_JOB_ID") && env.has("SLURM_STEP_ID");
}

std::string termination_log_rule(const std::optional<OptionValue>& value, const FileSystem& fs) {
  if (!value) return "";
  if (value->origin != "default" || fs.exists(value->value)) return value->value;
  return "";
}

std::chrono::milliseconds grace_rule(std::optional<std::chrono::milliseconds> given,
                                     Platform platform, bool in_kubernetes) {
  if (given) return *given;
  return std::chrono::milliseconds(stop_window(platform, in_kubernetes).grace_seconds * 1000L);
}

std::optional<ResumeRequest> resume_rule(const ResumeAsked& asked) {
  if (!asked.checkpoint_dir || !asked.pick) return std::nullopt;
  ResumeRequest req{*asked.checkpoint_dir, asked.format, *asked.pick};
  req.settle = std::chrono::milliseconds(0);
  // Runs of other experiments beside this one's are never resumed.
  const ExperimentWanted wanted = experiment_from_worker_argv(asked.worker_argv);
  req.experiment = asked.experiment.value_or(wanted.name);
  req.task = wanted.task;
  return req;
}

}  // namespace tv
