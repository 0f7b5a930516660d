// The topology sources of resolve_topology(), each a pure function from an environment snapshot
// (and file contents) to a partial Topology: platform, nnodes, node_rank, master_addr, hosts,
// job_id, worker_env, their origins, and master_port only when the platform states one.
// nproc_per_node and option overrides are applied by resolve_topology() (topology.cc).
// Internal to the launcher; tested through resolve_topology() and directly.
#pragma once

#include <optional>
#include <string>

#include "common/environment.h"
#include "common/file_system.h"
#include "common/options.h"
#include "common/result.h"
#include "launcher/topology/topology.h"

namespace tv::topo {

Error config_error(const std::string& message);

// `NAME="value": expected ...`
Error bad_var(const std::string& name, const std::string& value, const std::string& expected);

// An integer variable in [min, max]; nullopt when unset or empty.
Result<std::optional<long>> env_int(const Environment& env, const std::string& name, long min,
                                    long max, const std::string& why_range = "");
// The same, but unset is an error that says `needed_for`.
Result<long> env_int_required(const Environment& env, const std::string& name, long min, long max,
                              const std::string& why_range, const std::string& needed_for);

// A host name or address as given to workers: 1..255 printable characters, no spaces; a value in
// brackets only when it holds an IPv6 address ("[::1]", as torchrun's endpoints write it).
bool plausible_host(const std::string& s);
// "[::1]" -> "::1" (what sockets, TCPStore and MASTER_ADDR take); any other value unchanged.
std::string unbracketed_host(const std::string& s);

// Origin of a value read from the environment: "env NAME".
inline std::string from_env(const std::string& name) { return "env " + name; }

// Anything at the resource config's path (a file; a directory or a link loop is then refused by
// name rather than taken for no SageMaker).
bool sagemaker_file_present(const FileSystem& fs, const std::string& path);
// The resource config is present, or one of SageMaker's topology variables (SM_HOSTS,
// SM_CURRENT_HOST) is set: a partial environment is SageMaker's and sagemaker_source refuses it,
// as slurm_source refuses a Slurm environment without SLURM_JOB_ID.
bool sagemaker_detected(const Environment& env, const FileSystem& fs, const std::string& path);
// `groups`: --instance-groups (NAME[,NAME]); unset: the hyperparameter
// sagemaker_distribution_instance_groups beside the resource config, else every host trains.
Result<Topology> sagemaker_source(const Environment& env, const FileSystem& fs,
                                  const std::string& path,
                                  const std::optional<OptionValue>& groups = std::nullopt);

bool kubeflow_detected(const Environment& env);
// `master_given`: --master-addr replaces the master pod's address, so none is required.
Result<Topology> kubeflow_source(const Environment& env, bool master_given = false);

bool batch_detected(const Environment& env);
// `master_given`: --master-addr replaces the main node's address, so it is neither looked up (the
// main node's own) nor required (a child's AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS).
Result<Topology> batch_source(const Environment& env, const HostAddress& self, bool master_given);

bool slurm_detected(const Environment& env);
Result<Topology> slurm_source(const Environment& env);

Topology local_source();

}  // namespace tv::topo
