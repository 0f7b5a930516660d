// The job description `trainvisor render` turns into one platform's job spec (docs/render.md).
// One small JSON file: image, nodes, GPUs per node, instance type, command, checkpoint location,
// volumes, environment and secret references, and a few per-platform settings. Parsing is pure
// (the text in, a value or one error out) and never throws; every error is exit 78 and names the
// field. Defaults that depend on the instance type are filled by render_job (render/render.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

// One volume the workers see at mount_path; exactly one source.
struct VolumeConfig {
  std::string name;                      // a Kubernetes name, unique in the job
  std::string mount_path;                // where the workers see it, e.g. /fsx
  std::optional<std::string> pvc;        // kubeflow: a PersistentVolumeClaim (FSx CSI, EFS CSI)
  std::optional<std::string> host_path;  // kubeflow, batch, slurm: a directory of the host
  std::optional<std::string> efs_id;     // batch: an EFS file system (efsVolumeConfiguration)
  std::string efs_root = "/";            // batch: the EFS directory mounted
  bool read_only = false;
};

// An environment variable whose value comes from the platform's secret store.
struct SecretRef {
  std::optional<std::string> k8s_secret;  // kubeflow: Secret name (secretKeyRef)
  std::string k8s_key = "token";          // kubeflow: key in the Secret
  std::optional<std::string> arn;         // batch: Secrets Manager / SSM parameter ARN
};

// A SageMaker input channel (InputDataConfig): S3 data under /opt/ml/input/data/<name>.
struct ChannelConfig {
  std::string name;                              // ChannelName: [A-Za-z0-9.-_]+, at most 64
  std::string s3_uri;                            // s3://bucket/prefix
  std::string distribution = "FullyReplicated";  // or ShardedByS3Key
  std::string s3_data_type = "S3Prefix";         // or ManifestFile, AugmentedManifestFile
  std::optional<std::string> input_mode;         // File, Pipe, FastFile; default the job's (File)
  std::vector<std::string> instance_groups;      // heterogeneous cluster: the groups that get it
};

// One instance group of a SageMaker heterogeneous cluster (ResourceConfig.InstanceGroups).
struct InstanceGroupConfig {
  std::string name;           // InstanceGroupName
  std::string instance_type;  // ml.c5.18xlarge or c5.18xlarge
  int count = 1;              // InstanceCount
};

struct SageMakerConfig {
  std::string role_arn;
  std::string output_s3_uri;
  int volume_size_gb = 100;
  int max_retry_attempts = 3;  // RetryStrategy: SageMaker retries on its internal errors only
  std::vector<std::string> subnets;
  std::vector<std::string> security_group_ids;
  bool inter_container_encryption = false;  // EnableInterContainerTrafficEncryption
  std::vector<ChannelConfig> channels;      // InputDataConfig
  // A heterogeneous cluster: every group, and the ones that train (--instance-groups); `nodes`
  // is the training groups' instances, `instance_type` theirs.
  std::vector<InstanceGroupConfig> instance_groups;
  std::vector<std::string> training_groups;
};

struct BatchConfig {
  // jobDefinitionName; default `name`. Batch takes upper case (platform_limits.h), so a seed's
  // IsaacLabJobDefinition is kept as it is.
  std::optional<std::string> definition_name;
  std::optional<int> vcpus;       // resourceRequirements VCPU; default: the instance's vCPUs
  std::optional<int> memory_mib;  // resourceRequirements MEMORY; default: 90% of the instance's
  int attempts = 3;               // retryStrategy.attempts
  std::optional<std::string> job_role_arn;
  std::optional<std::string> execution_role_arn;  // needed to read `secrets`
  std::optional<std::string> token_secret_arn;    // Secrets Manager ARN -> TRAINVISOR_RDZV_TOKEN
};

struct SlurmConfig {
  std::optional<std::string> partition;   // letters, digits, `_.-`, comma-separated
  std::optional<std::string> time_limit;  // sbatch --time, e.g. 24:00:00 or 2-00:00:00
  std::optional<std::string> account;
  std::optional<bool> requeue;  // --requeue / --no-requeue; unset: the cluster's JobRequeue
};

struct KubeflowConfig {
  std::string namespace_name = "kubeflow";
  bool auto_resume = true;  // HyperPod job auto-resume annotations
  bool node_health = true;  // HyperPod node-health toleration, affinity, deep-health preference
  std::string restart_policy = "OnFailure";  // ExitCode is refused (docs/exit-codes.md)
  // Whole-job retries: HyperPod's job-max-retry-count, and runPolicy.backoffLimit =
  // nodes x (max_retry + 1) (the operator counts every pod's restarts: render/kubeflow.cc).
  int max_retry = 3;
  std::optional<std::string> token_secret;  // Secret name holding the rendezvous token
  std::string token_secret_key = "token";
  // Kubernetes quantities ("16", "500m", "64Gi") for the container's cpu and memory.
  std::optional<std::string> cpu_request, cpu_limit, memory_request, memory_limit;
  std::map<std::string, std::string> labels;       // the job's and its pods' labels
  std::optional<std::string> queue_name;           // Kueue: the job's kueue.x-k8s.io/queue-name
  std::optional<std::string> service_account;      // the pods' serviceAccountName
  std::string image_pull_policy = "IfNotPresent";  // or Always, Never
  std::map<std::string, std::string> hugepages;    // page size (2Mi, 1Gi) -> quantity
  // HyperPod's node-health label and the value a node must have (node_health).
  std::string node_health_label = "sagemaker.amazonaws.com/node-health-status";
  std::string node_health_value = "Schedulable";
  // A node label of the network topology (topology.k8s.aws/network-node-layer-3): the job's pods
  // prefer nodes with the same value (podAffinity, topology_weight 1..100).
  std::optional<std::string> topology_key;
  int topology_weight = 50;
};

struct JobConfig {
  std::string name;  // DNS-1123 label: valid as a PyTorchJob, training job and job definition name
  std::string image;
  int nodes = 1;
  // Hot spare nodes beside the world of `nodes` (run --spare-nodes, docs/coordination.md): the
  // platform starts `containers()` of them, and its node count includes the spares.
  int spare_nodes = 0;
  int containers() const { return nodes + spare_nodes; }
  std::optional<int> gpus_per_node;          // default: the instance's GPUs, else 8
  std::optional<std::string> instance_type;  // p5.48xlarge or ml.p5.48xlarge: either, per target
  std::optional<int> efa_per_node;           // default: the instance's EFA interfaces, else 0
  bool rt_cores = false;              // the job renders with RTX (Isaac Sim): GPUs need RT cores
  std::vector<std::string> command;   // what trainvisor runs, e.g. ["train.py", "--lr", "3e-4"]
  std::vector<std::string> run_args;  // extra `trainvisor run` options
  std::string trainvisor = "/usr/local/bin/trainvisor";  // the binary's path in the image
  int max_restarts = 3;
  std::optional<int> grace_period;  // seconds; default: the platform's (docs/platforms)
  std::string checkpoint_dir;       // default: /opt/ml/checkpoints
  std::optional<std::string> checkpoint_s3_uri;  // sagemaker CheckpointConfig.S3Uri
  std::map<std::string, std::string> env;        // NAME -> value, every target
  std::map<std::string, SecretRef> secrets;      // NAME -> where its value is kept
  std::vector<VolumeConfig> volumes;
  std::optional<int> shm_mib;    // /dev/shm size; default: a quarter of the instance's memory
  std::optional<int> timeout_s;  // the whole attempt's limit (Batch, SageMaker, Kubeflow, Slurm)
  std::optional<std::string> workdir;  // the command's working directory (absolute)
  std::optional<KubeflowConfig> kubeflow;
  std::optional<SageMakerConfig> sagemaker;
  std::optional<BatchConfig> batch;
  std::optional<SlurmConfig> slurm;
  // A section's run_args (kubeflow.run_args, sagemaker.run_args, ...): `trainvisor run` options
  // for that target only (sagemaker's --export), after run_args.
  std::map<std::string, std::vector<std::string>> target_run_args;
};

// `source` names the file in errors ("job.json: nodes: expected an integer 1..10000, got \"two\"").
Result<JobConfig> parse_job_config(const std::string& text, const std::string& source);

}  // namespace tv
