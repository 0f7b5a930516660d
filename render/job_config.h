// The job description `trainvisor render` turns into one platform's job spec (docs/render.md).
// One small JSON file: image, nodes, GPUs per node, instance type, command, checkpoint location,
// shared storage, rendezvous token source, and a few per-platform settings. Parsing is pure (the
// text in, a value or one error out) and never throws; every error is exit 78 and names the field.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

struct StorageConfig {
  std::string mount_path;                // where the workers see it, e.g. /fsx
  std::optional<std::string> pvc;        // kubeflow: a PersistentVolumeClaim (FSx for Lustre CSI)
  std::optional<std::string> host_path;  // batch, slurm: the host's mount (launch template)
};

struct SageMakerConfig {
  std::string role_arn;
  std::string output_s3_uri;
  int volume_size_gb = 100;
  int max_runtime_seconds = 86400;
  int max_retry_attempts = 3;  // RetryStrategy: SageMaker retries on its internal errors
  std::vector<std::string> subnets;
  std::vector<std::string> security_group_ids;
};

struct BatchConfig {
  int vcpus = 0;       // required by Batch (resourceRequirements VCPU)
  int memory_mib = 0;  // required by Batch (resourceRequirements MEMORY, a hard limit)
  int shm_mib = 0;     // linuxParameters.sharedMemorySize (/dev/shm), 0 = Docker's 64 MiB
  int attempts = 3;    // retryStrategy.attempts
  std::optional<std::string> job_role_arn;
  std::optional<std::string> token_secret_arn;  // Secrets Manager ARN -> TRAINVISOR_RDZV_TOKEN
};

struct SlurmConfig {
  std::optional<std::string> partition;
  std::optional<std::string> time_limit;  // sbatch --time, e.g. 24:00:00
  std::optional<std::string> account;
};

struct KubeflowConfig {
  std::string namespace_name = "kubeflow";
  bool auto_resume = true;  // HyperPod job auto-resume annotations
  std::string restart_policy =
      "ExitCode";     // or OnFailure (what HyperPod documents for auto-resume)
  int max_retry = 3;  // HyperPod job-max-retry-count and runPolicy.backoffLimit
  std::optional<std::string> token_secret;  // Secret name holding the rendezvous token
  std::string token_secret_key = "token";
};

struct JobConfig {
  std::string name;  // DNS-1123 label: valid as a PyTorchJob, training job and job definition name
  std::string image;
  int nodes = 1;
  int gpus_per_node = 8;
  std::optional<std::string> instance_type;  // ml.p5.48xlarge, p5.48xlarge, ...
  int efa_per_node = 0;                      // EFA interfaces per node (p5.48xlarge: 32)
  std::vector<std::string> command;   // what trainvisor runs, e.g. ["train.py", "--lr", "3e-4"]
  std::vector<std::string> run_args;  // extra `trainvisor run` options
  std::string trainvisor = "/usr/local/bin/trainvisor";  // the binary's path in the image
  int max_restarts = 3;
  std::optional<int> grace_period;  // seconds; default: the platform's (docs/platforms)
  std::string checkpoint_dir;       // default: /opt/ml/checkpoints
  std::optional<std::string> checkpoint_s3_uri;  // sagemaker CheckpointConfig.S3Uri
  std::optional<StorageConfig> storage;
  KubeflowConfig kubeflow;
  std::optional<SageMakerConfig> sagemaker;
  BatchConfig batch;
  SlurmConfig slurm;
};

// `source` names the file in errors ("job.json: nodes: expected an integer 1..10000, got \"two\"").
Result<JobConfig> parse_job_config(const std::string& text, const std::string& source);

}  // namespace tv
