// NetworkCluster: the Cluster of a multi-node job (docs/coordination.md).
//
// Every node's agent joins the coordinator that node rank 0 serves on `rdzv_port` (node 0's agent
// joins it too, over loopback TCP, so every node runs the same code). The coordinator starts a
// generation when all `nnodes` agents are present, ends it everywhere when any agent reports a
// failure, restarts it (RestartPolicy: counted once for the whole job, with backoff) when every
// agent has stopped its workers, and ends the job when every node succeeded, when restarts are
// exhausted, or when a node is lost (silent for `peer_timeout`, or its connection closed).
//
// Every message is authenticated with HMAC-SHA256 under `token` (launcher/rdzv_protocol.h).
//
// Threading: single-threaded on the io_context given to the constructor; nothing blocks (names
// are resolved with async_resolve). Events are always delivered from the io_context, never from
// inside a report_* call.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/environment.h"
#include "launcher/cluster.h"
#include "launcher/restart_policy.h"

namespace tv {

struct NetworkClusterConfig {
  int node_rank = 0;
  int nnodes = 1;
  std::string master_addr;   // node 0's name or address (resolved with retries)
  int rdzv_port = 0;         // coordinator port on node 0 (default master port + 1)
  int base_master_port = 0;  // MASTER_PORT of generation 0
  std::chrono::seconds rdzv_timeout{900};
  std::chrono::milliseconds peer_timeout{30000};
  std::string token;                  // the HMAC key, already derived (derive_rdzv_token)
  RestartPolicy policy;               // launcher/restart_policy.h
  std::string bind_addr = "0.0.0.0";  // coordinator listen address (tests use 127.0.0.x);
                                      // a loopback master_addr narrows 0.0.0.0 to itself
};

class RdzvCoordinator;
class RdzvAgent;

class NetworkCluster final : public Cluster {
 public:
  NetworkCluster(boost::asio::io_context& io, NetworkClusterConfig config);
  ~NetworkCluster() override;

  void join(Events events) override;
  void report_success(int generation) override;
  void report_failure(const NodeFailure& failure) override;
  void report_stopped(int generation) override;
  void leave() override;

  // The coordinator's bound port on node 0 (useful when rdzv_port was 0 in tests); 0 elsewhere.
  int coordinator_port() const;

 private:
  void deliver_terminal(std::function<void()> fire);

  boost::asio::io_context& io_;
  NetworkClusterConfig config_;
  Events events_;
  std::unique_ptr<RdzvCoordinator> coordinator_;  // node 0 only
  std::unique_ptr<RdzvAgent> agent_;
  bool finished_ = false;
};

// The HMAC key of the node agents. An explicit non-empty token wins. Otherwise the key is derived
// from the job's id (SHA-256 of a fixed prefix and the id), which every node of the job knows
// without configuration. WEAKNESS: the job id is not a secret (it shows in consoles, logs, pod
// names), so a derived key only keeps out other jobs and accidental cross-talk; only an explicit
// secret token (--rdzv-token / TRAINVISOR_RDZV_TOKEN) keeps out someone who knows the job's id.
// With neither (job_id empty) the key is a fixed public value.
std::string derive_rdzv_token(const std::optional<std::string>& explicit_token,
                              const std::string& job_id);

// The job's id as every node sees it: TRAINING_JOB_NAME (SageMaker), AWS_BATCH_JOB_ID without its
// "#<node index>" suffix (Batch multi-node), the Kubeflow job name (PET_MASTER_ADDR or MASTER_ADDR
// "<job>-master-0[...]"), SLURM_JOB_ID; "" when none is set.
std::string rdzv_job_id(const Environment& env);

}  // namespace tv
