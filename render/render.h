// `trainvisor render`: one job description (render/job_config.h) -> the job spec of one platform.
//   kubeflow   a Kubeflow PyTorchJob (kubeflow.org/v1) for SageMaker HyperPod on EKS, as JSON
//   sagemaker  a SageMaker CreateTrainingJob request (aws sagemaker create-training-job
//              --cli-input-json)
//   batch      an AWS Batch multi-node job definition (aws batch register-job-definition
//              --cli-input-json)
//   slurm      an sbatch script (one trainvisor per node through srun, pyxis for the image)
// Pure functions: a config in, text (or an exit-78 error naming the field) out. Defaults that
// depend on the instance type come from common/instance_facts.h; settings a target does not use
// are reported in `notes`, never silently dropped.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "render/job_config.h"

namespace tv {

struct Rendered {
  std::string text;                // the spec, ending in a newline
  std::vector<std::string> notes;  // settings this target ignores, warnings; one sentence each
};

struct RenderOptions {
  // sagemaker: appended to TrainingJobName ("-20261201-094500") so that a second submission of
  // the same request does not collide with the first; empty = the name as it is.
  std::string name_suffix;
};

const std::vector<std::string>& render_targets();  // kubeflow, sagemaker, batch, slurm

Result<Rendered> render_job(const JobConfig& config, const std::string& target,
                            const RenderOptions& options = {});

// Per target, on a config whose defaults render_job has filled (exposed for the unit tests).
Result<Rendered> render_kubeflow(const JobConfig& config);
Result<Rendered> render_sagemaker(const JobConfig& config, const RenderOptions& options);
Result<Rendered> render_batch(const JobConfig& config);
Result<Rendered> render_slurm(const JobConfig& config);

// Kubeflow's runPolicy.backoffLimit for `max_retry` whole-job retries of `nodes` pods
// (render/kubeflow.cc: the operator counts every pod's container restarts).
int backoff_limit(int nodes, int max_retry);

// `run --platform P --nnodes N --nproc-per-node G` (the topology is checked against the
// platform's, not guessed), the restart/stop/checkpoint options, the target's own options
// (`owned`: --workdir, --instance-groups, --metrics-log-interval), the user's run_args, the
// section's run_args (`<platform>.run_args`), the command.
std::vector<std::string> trainvisor_run_args(const JobConfig& config, const std::string& platform,
                                             int grace_seconds, const std::string& checkpoint_dir,
                                             const std::vector<std::string>& owned = {});

// The port `trainvisor run` serves /metrics on with these run options (the words before the
// command): the last `--metrics-port N` / `--metrics-port=N` (or `--metrics_port`), else
// TRAINVISOR_METRICS_PORT in `env`; nullopt when off (0), absent or not a port (run refuses it).
std::optional<int> metrics_port_of(const std::vector<std::string>& run_options,
                                   const std::map<std::string, std::string>& env);

// `--workdir DIR` for a target without a working-directory setting (batch, sagemaker), or none.
std::vector<std::string> workdir_args(const JobConfig& config);

// The config with the instance-dependent defaults filled (gpus_per_node, efa_per_node, shm_mib,
// batch vcpus/memory_mib, instance_type spelled for the target) and checked against the instance
// table (exit 78 naming both values), plus the notes: unknown instance type, grace period above
// the platform's stop window, every setting the target does not use.
struct Resolved {
  JobConfig config;
  std::vector<std::string> notes;
};
Result<Resolved> resolve_job(const JobConfig& config, const std::string& target);

// The settings of `config` that `target` does not use, one sentence each (render/unused.cc).
std::vector<std::string> unused_settings(const JobConfig& config, const std::string& target);

}  // namespace tv
