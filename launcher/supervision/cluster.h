// Cluster: the supervisor's view of the whole job across nodes, and the one place that decides
// when a generation of workers starts, when it must stop, and when the job is over.
//
// The supervisor (launcher/supervision/supervisor.h) starts and stops only its own node's workers.
// It tells the Cluster what happened locally (report_*), and the Cluster answers through Events.
// Restart policy (counting restarts once for the whole job, backoff, giving up) lives behind this
// interface, so a one-node job (LocalCluster) and a multi-node job (NetworkCluster, the node
// agents talking to the coordinator on node rank 0) behave the same way.
//
// Threading: every method is called on the supervisor's event loop, and every event is delivered
// on it (the io_context given at construction). Implementations never block.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace tv {

struct GenerationPlan {
  int generation = 0;     // 0, 1, 2, ...: one per (re)start of the whole job
  int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT for this generation's workers
  int master_port = 0;    // MASTER_PORT for this generation (fresh after a restart when needed)
};

// What ended a node's workers. exit_code is what `run` exits with if this is the last failure:
// the worker's code, 128+N for signal N, 124 for a hang, 126/127 when the command can't run.
struct NodeFailure {
  int generation = 0;
  int node_rank = 0;
  int exit_code = 1;
  std::string summary;  // root cause, one line: "rank 3 (node 1): exit 1: ValueError: boom"
  // When it failed, wall clock ns (root_cause.h: FailureTime); 0 = not known. Failures of one
  // generation that reach the job state machine later but happened earlier replace the root cause.
  std::int64_t failed_at_ns = 0;
};

class Cluster {
 public:
  struct Events {
    std::function<void(const GenerationPlan&)> start;  // all nodes present: start these workers
    // Another node failed (or this one did): stop the local workers, then report_stopped().
    std::function<void(const NodeFailure&)> stop;
    std::function<void()> done;                       // every node's workers exited 0: exit 0
    std::function<void(const NodeFailure&)> give_up;  // restarts exhausted: exit failure.exit_code
    // A node was lost or the rendezvous timed out: exit 75. `signal` > 0: the lost node left
    // because it got that termination signal (the job is being stopped from outside): exit
    // 128 + signal like that node (docs/coordination.md, "Stopped from outside").
    std::function<void(const std::string& why, int signal)> lost;
  };

  virtual ~Cluster() = default;
  // Joins the job; `start` arrives when every node is there.
  virtual void join(Events events) = 0;
  // This node's workers of `generation` all exited 0.
  virtual void report_success(int generation) = 0;
  // One of this node's workers failed (the supervisor has begun stopping the others).
  virtual void report_failure(const NodeFailure& failure) = 0;
  // This node's workers of `generation` are all gone (after a failure or a stop).
  virtual void report_stopped(int generation) = 0;
  // Leave the job: tell the others, release sockets. Idempotent. `signal`: the termination
  // signal this node got (0 when it leaves for another reason), passed on to the other nodes.
  virtual void leave(int signal) = 0;
};

}  // namespace tv
