// Topology: how many nodes, which one this is, where node rank 0 listens, and how many workers
// run here; resolved once, before anything starts, from the options and the platform.
//
// resolve_topology() is a pure function of its inputs: the parsed options (each value knows its
// origin), an environment snapshot, a read-only file system, a GPU counter and this node's own
// address. It never resolves names and never opens sockets. Sources (docs/topology.md):
//   sagemaker  the resource config file exists (--resource-config), or SM_HOSTS/SM_CURRENT_HOST
//              is set (then the file must exist: a partial environment is refused)
//   kubeflow   PET_NNODES/PET_NODE_RANK/PET_MASTER_ADDR, else MASTER_ADDR+RANK+WORLD_SIZE
//   batch      AWS_BATCH_JOB_NUM_NODES
//   slurm      SLURM_JOB_ID with SLURM_NNODES (or SLURM_JOB_NUM_NODES)
//   explicit   none of the above, and --nnodes/--node-rank/--master-addr given as a flag or
//              TRAINVISOR_ variable
//   local      none of the above
// `--platform auto` takes the first that is detected; `--platform NAME` forces one and refuses
// when its variables are missing. Over a platform (detected or forced), an explicit value
// overrides only its own field, or is refused where the platform fixes it otherwise (topology.cc,
// apply_explicit: the rule's one place). Every refusal is Error{ErrorKind::kConfig} naming the
// variable or file, the bad value and what was expected. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/file_system.h"
#include "common/options.h"
#include "common/platforms.h"
#include "common/result.h"
#include "launcher/topology/gpu_count.h"
#include "launcher/topology/host_address.h"

namespace tv {

struct Topology {
  // Where the job runs (common/platforms.h: its name, its stop window): a detected or forced
  // platform, else kExplicit (options make the topology) or kLocal (one node).
  Platform platform = Platform::kLocal;
  int nnodes = 1, node_rank = 0, nproc_per_node = 1, master_port = 29500;
  // Elastic membership (--nnodes MIN:MAX, PET_NNODES=MIN:MAX; docs/coordination.md): MIN, with
  // nnodes the MAX; 0: a fixed world of nnodes.
  int min_nnodes = 0;
  // Hot spare nodes (--spare-nodes K; docs/coordination.md): nodes beyond the nnodes of the world,
  // node ranks nnodes..nnodes+K-1; 0: none.
  int spare_nodes = 0;
  // The nodes of the job: the world's and the spares (more than 1: the rendezvous runs).
  int slots() const { return nnodes + spare_nodes; }
  // More than one node, no platform and no --node-rank: node_rank is not known until
  // the rendezvous (NetworkCluster::assign_rank); origin["node_rank"] says so.
  bool rank_by_rendezvous = false;
  std::string master_addr = "127.0.0.1";
  std::vector<std::string> hosts;  // every node's name, in rank order, when the platform says
  // Non-empty: this node takes no part in training (a SageMaker heterogeneous cluster's host of a
  // group that does not train); the reason, for the one line `run` logs before it exits 0.
  std::string not_training;
  // The EC2 instance type of this node when a fact says it ("ml.p4d.24xlarge": SageMaker's
  // resource config, --instance-type / TRAINVISOR_INSTANCE_TYPE); "" when unknown. Decides
  // --require-transport auto (health/preflight.h, decide_require_transport).
  std::string instance_type;
  // TRAINING_JOB_NAME / AWS_BATCH_JOB_ID (without "#index") / Kubeflow job name / SLURM_JOB_ID
  std::string job_id;
  // Field name -> where its value came from: "--nnodes", "TRAINVISOR_NNODES", "env SLURM_NODEID",
  // "file /opt/ml/input/config/resourceconfig.json (current_host)", "default", ...
  // Keys: platform nnodes node_rank nproc_per_node master_addr master_port hosts job_id,
  // instance_type (when known), and
  // "worker_env.NAME" for each worker_env entry.
  std::map<std::string, std::string> origin;
  // Extra variables for the workers (NCCL_SOCKET_IFNAME from SageMaker's network_interface_name
  // unless the environment already sets it).
  std::map<std::string, std::string> worker_env;
  int world_size() const { return nnodes * nproc_per_node; }
  std::string origin_of(const std::string& field) const {
    auto it = origin.find(field);
    return it == origin.end() ? "" : it->second;
  }
};

// Largest node count accepted from any source (and the Slurm hostlist expansion cap).
inline constexpr int kMaxNodes = 100000;

// The default master port of a job with an id (docs/topology.md, "Master port"): even ports
// kJobPortBase .. kJobPortBase + 2 * (kJobPortSlots - 1), so the rendezvous port (master port + 1)
// never meets another job's master port; a numeric id (SLURM_JOB_ID) takes slot id % kJobPortSlots,
// so jobs whose ids differ by less than kJobPortSlots never share a port; a Slurm step "J.S"
// (SLURM_JOB_ID.SLURM_STEP_ID) takes slot (J + S * kJobStepStride) % kJobPortSlots, so concurrent
// steps of one job never share a port and step 0 keeps the job's slot; any other id its FNV-1a
// hash. Below the Linux ephemeral range (32768-60999).
inline constexpr int kJobPortBase = 20000;
inline constexpr int kJobPortSlots = 5000;
// About kJobPortSlots / golden ratio^2: steps 1-8 of a job land at least 345 slots away from
// slot 0, so from step 0 of every job whose id is within 345 of it.
inline constexpr uint64_t kJobStepStride = 1931;
int job_master_port(const std::string& job_id);

// `opts` from parse_options(run_option_specs() or topology_option_specs(), ..., use_env=true).
Result<Topology> resolve_topology(const Options& opts, const Environment& env, const FileSystem& fs,
                                  const GpuCounter& gpus, const HostAddress& self);

// platform nnodes node_rank nproc_per_node world_size master_addr master_port (numbers as
// numbers), hosts (when known), job_id, worker_env, and "sources": {field: origin}.
nlohmann::json topology_to_json(const Topology& t);

// Human table: one field per line with its origin.
std::string format_topology(const Topology& t);

}  // namespace tv
