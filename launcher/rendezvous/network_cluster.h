// NetworkCluster: the Cluster of a multi-node job (docs/coordination.md).
//
// Every node's agent joins the coordinator that node rank 0 serves on `rdzv_port` (node 0's agent
// joins it too, over loopback TCP, so every node runs the same code). The coordinator starts a
// generation when all `nnodes` agents are present, ends it everywhere when any agent reports a
// failure, restarts it (RestartPolicy: counted once for the whole job, with backoff) when every
// agent has stopped its workers, and ends the job when every node succeeded, when restarts are
// exhausted, or when a node is lost (silent for `peer_timeout`, or its connection closed).
//
// Every message is authenticated with HMAC-SHA256 under `token`
// (launcher/rendezvous/rdzv_protocol.h).
//
// Time: the coordinator's and the agent's timers and clocks are the LoopTime given to the
// constructor (common/loop_time.h; unit tests hand it a simulated one).
//
// Threading: single-threaded on the io_context given to the constructor; nothing blocks (names
// are resolved with async_resolve). Events are always delivered from the io_context, never from
// inside a report_* call.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "common/environment.h"
#include "common/loop_time.h"
#include "common/result.h"
#include "launcher/job/cluster.h"
#include "launcher/job/restart_policy.h"
#include "launcher/rendezvous/fingerprint.h"
#include "launcher/rendezvous/rdzv_protocol.h"

namespace tv {

struct NetworkClusterConfig {
  // rdzv::kRankUnassigned: none given; assign_rank() finds it (docs/coordination.md, "Node ranks")
  int node_rank = 0;
  // This process in its joins; the constructor makes it when node_id is empty (rank_from kept).
  rdzv::NodeIdentity who;
  int nnodes = 1;  // the most nodes (--nnodes N, or MAX of MIN:MAX)
  // Elastic membership (--nnodes MIN:MAX, docs/coordination.md): MIN; 0 (or nnodes): a fixed world.
  int min_nnodes = 0;
  // Hot spare nodes (--spare-nodes K; docs/coordination.md): `nnodes` counts them (N + K slots),
  // the world is nnodes - K; 0: none.
  int spare_nodes = 0;
  // Elastic: how long generation 0 waits for more nodes once MIN joined, and a generation that
  // runs for more nodes to join before it re-forms (--rdzv-conf last_call_timeout).
  std::chrono::milliseconds last_call{30000};
  int nproc_per_node = 0;    // this node's workers, sent in its join (0: not said)
  std::string master_addr;   // node 0's name or address (resolved with retries)
  int rdzv_port = 0;         // coordinator port on node 0 (default master port + 1)
  int base_master_port = 0;  // MASTER_PORT of generation 0
  std::chrono::seconds rdzv_timeout{900};
  std::chrono::milliseconds peer_timeout{30000};
  std::string token;                  // the HMAC key, already derived (derive_rdzv_token)
  RestartPolicy policy;               // launcher/job/restart_policy.h
  std::string bind_addr = "0.0.0.0";  // coordinator listen address (tests use 127.0.0.x); for
                                      // 0.0.0.0 the master's family decides (rdzv_host.h)
  // Node 0 only: when set, the coordinator runs the preflight phase before generation 0 and hands
  // this ncclUniqueId (hex; "" when node 0 could not make one) to every node.
  std::optional<std::string> preflight_unique_id;
  // This node's fingerprint, sent in its joins (launcher/rendezvous/fingerprint.h); unset: none.
  std::optional<rdzv::Fingerprint> fingerprint;
  // Node 0: refuse (78 on every node) a job whose nodes' fingerprints differ (--node-fingerprint).
  bool check_fingerprints = true;
};

// One node's preflight verdict, reported to the coordinator.
struct PreflightVerdict {
  bool passed = false;
  std::string summary;  // one line: "node 1: nccl-transport: NCCL used socket ..."
};

class RdzvCoordinator;
class RdzvAgent;

class NetworkCluster final : public Cluster {
 public:
  NetworkCluster(boost::asio::io_context& io, NetworkClusterConfig config,
                 LoopTime& time = real_loop_time());
  ~NetworkCluster() override;

  void join(Events events) override;
  void report_success(int generation) override;
  void report_failure(const NodeFailure& failure) override;
  void report_stopped(int generation, const std::vector<RankEvidence>& ranks,
                      std::optional<std::int64_t> step) override;
  std::vector<NodeFailure> judged_root_causes() const override;
  void leave(int signal, const std::string& reason) override;
  bool flushed() const override;

  // The multi-node preflight (docs/coordination.md, "Preflight phase"): joins the job and, when
  // the coordinator sends the preflight phase, runs `probe(unique_id)` on its own thread (it may
  // block for minutes; heartbeats go on) and reports its verdict. `done` gets ok once every node
  // passed and generation 0 was handed out (join() then delivers it), or the error every node
  // shares: exit 69 and the failing node's summary, or exit 75 when a node was lost. A node that
  // never calls this answers the phase with a pass ("no probe on this node").
  using Probe = std::function<PreflightVerdict(const std::string& unique_id)>;
  void begin_preflight(Probe probe, std::function<void(const Status&)> done);
  // The same, blocking: runs the io_context until the verdict (before the supervisor exists).
  Status preflight(Probe probe);

  // A node without a rank (config.node_rank == rdzv::kRankUnassigned) finds it, blocking (runs
  // the io_context): when the endpoint's host is this machine (rdzv_host.h) and this node can
  // listen on the coordinator's address and port, it hosts the coordinator and is rank 0;
  // otherwise (the port is taken: another node of this machine hosts it) it asks the coordinator,
  // which assigns ranks in join order. Then the node joins as usual with that rank. Errors: the
  // coordinator's refusal (78), no coordinator within --rdzv-timeout (75), a listen error (75).
  // Returns the rank, at once when it was given.
  Result<int> assign_rank();
  // Where assign_rank's rank came from, for the start banner.
  const std::string& rank_origin() const { return rank_origin_; }
  // `--preflight full` on a node that learnt it is node 0 after this cluster was made.
  void set_preflight_unique_id(const std::string& hex);

  // The coordinator's bound port on node 0 (useful when rdzv_port was 0 in tests); 0 elsewhere.
  int coordinator_port() const;

 private:
  void deliver_terminal(std::function<void()> fire);
  void start_agent();
  void cannot_join(const Error& e);
  std::function<void(const std::string&)> join_the_holder(const std::string& listen_error);
  void run_probe(const std::string& unique_id);
  void preflight_over(const Status& s);

  boost::asio::io_context& io_;
  LoopTime& time_;
  NetworkClusterConfig config_;
  Events events_;
  std::unique_ptr<RdzvCoordinator> coordinator_;  // node 0 only
  std::unique_ptr<RdzvAgent> agent_;
  std::string rank_origin_;
  bool finished_ = false;
  bool joined_ = false;  // join() has handed over the supervisor's events
  Probe probe_;
  std::function<void(const Status&)> preflight_done_;
  std::optional<GenerationPlan> pending_start_;  // generation 0, arrived before join()
  std::thread probe_thread_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for the probe thread's post
};

// The HMAC key of the node agents. An explicit non-empty token wins. Otherwise the key is derived
// from the job's id (SHA-256 of a fixed prefix and the id), which every node of the job knows
// without configuration. WEAKNESS: the job id is not a secret (it shows in consoles, logs, pod
// names), so a derived key only keeps out other jobs and accidental cross-talk; only an explicit
// secret token (--rdzv-token / TRAINVISOR_RDZV_TOKEN) keeps out someone who knows the job's id.
// With neither (job_id empty) the key is a fixed public value.
std::string derive_rdzv_token(const std::optional<std::string>& explicit_token,
                              const std::string& job_id);

}  // namespace tv
