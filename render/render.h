// `trainvisor render`: one job description (render/job_config.h) -> the job spec of one platform.
//   kubeflow   a Kubeflow PyTorchJob (kubeflow.org/v1) for SageMaker HyperPod on EKS, as JSON
//   sagemaker  a SageMaker CreateTrainingJob request (aws sagemaker create-training-job
//   --cli-input-json) batch      an AWS Batch multi-node job definition (aws batch
//   register-job-definition --cli-input-json) slurm      an sbatch script (one trainvisor per node
//   through srun, pyxis for the image)
// Pure functions: a config in, text (or an exit-78 error naming the field) out. Settings a target
// does not use are reported in `notes`, never silently dropped.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "render/job_config.h"

namespace tv {

struct Rendered {
  std::string text;                // the spec, ending in a newline
  std::vector<std::string> notes;  // settings this target ignores, one sentence each
};

const std::vector<std::string>& render_targets();  // kubeflow, sagemaker, batch, slurm

Result<Rendered> render_job(const JobConfig& config, const std::string& target);

// Per target (render_job dispatches; exposed for the unit tests).
Result<Rendered> render_kubeflow(const JobConfig& config);
Result<Rendered> render_sagemaker(const JobConfig& config);
Result<Rendered> render_batch(const JobConfig& config);
Result<Rendered> render_slurm(const JobConfig& config);

// `trainvisor run ...` for the container: run, the restart/stop/checkpoint options, the user's
// run_args, then the command.
std::vector<std::string> trainvisor_run_args(const JobConfig& config, int grace_seconds,
                                             const std::string& checkpoint_dir);

}  // namespace tv
