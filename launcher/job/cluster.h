// Cluster: the supervisor's view of the whole job across nodes, and the one place that decides
// when a generation of workers starts, when it must stop, and when the job is over.
//
// The supervisor (launcher/node/supervisor.h) starts and stops only its own node's workers.
// It tells the Cluster what happened locally (report_*), and the Cluster answers through Events.
// Restart policy (counting restarts once for the whole job, backoff, giving up) lives behind this
// interface, so a one-node job (LocalCluster) and a multi-node job (NetworkCluster, the node
// agents talking to the coordinator on node rank 0) behave the same way.
//
// Threading: every method is called on the supervisor's event loop, and every event is delivered
// on it (the io_context given at construction). Implementations never block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_codes.h"

namespace tv {

// Generation is the one word for "one (re)start of the whole job" inside the code; its outside
// spellings (TORCHELASTIC_RESTART_COUNT, attempt_<g>/) are listed in docs/supervision.md.
struct GenerationPlan {
  int generation = 0;   // 0, 1, 2, ...: also the workers' TORCHELASTIC_RESTART_COUNT
  int master_port = 0;  // MASTER_PORT for this generation (fresh after a restart when needed)
  // The RootCauseJudge rule that let this generation start after the last one failed
  // (root_cause_judge.h: Verdict::rule); empty for generation 0.
  std::string retried_by;
  // A checkpoint the RootCauseJudge found poisoned (launcher/job/resume_fallback.h): this
  // generation resumes from the newest complete checkpoint before it; empty for none.
  std::string step_over = {};
  // Elastic membership (docs/coordination.md): this node's rank and the node count of this
  // generation when they differ from the configured layout's; -1 and 0: as configured.
  int node_rank = -1;
  int nnodes = 0;
};

// What a failure looks like to the RootCauseJudge (launcher/job/root_cause_judge.h): the
// exception type, its message normalized (numbers, hex addresses, paths), the progress step.
struct FailureSignature {
  std::string type;                  // "ValueError"; empty when no exception was recognized
  std::string message;               // normalized
  std::optional<std::int64_t> step;  // the last progress step of its generation; none: before any
  bool cuda_oom = false;             // a CUDA out-of-memory (error file or output tail)
  bool operator==(const FailureSignature&) const = default;
  // "ValueError: bad batch <n> at step 40", "... before any progress"
  std::string text() const;
};

// The most of each of a LastCollective's texts that is kept (read from a dump, sent to a peer).
inline constexpr std::size_t kMaxCollectiveText = 64;

// The last collective one rank entered, from its NCCL flight-recorder dump
// (nccl_trace_summary.py: the entry with the highest record_id that is not point-to-point).
struct LastCollective {
  std::int64_t seq = -1;  // collective_seq_id within its process group; -1: none recorded
  std::string op;         // profiling_name: "nccl:all_reduce"
  std::string group;      // the process group's name: "0"
  std::string state;      // scheduled, started, completed
  bool operator==(const LastCollective&) const = default;
};

// Where one rank was when its stacks were taken on a hang (supervisor_stacks.cc) and, where torch
// wrote a flight-recorder dump, the last collective it entered: the evidence the job's culprit is
// decided from (launcher/job/culprit.h).
struct RankEvidence {
  int rank = 0;
  int node_rank = 0;
  std::string frame;    // its main thread's innermost user frame: "train_step (/x/train.py:12)"
  bool silent = false;  // signalled for its stacks, and wrote none (SIGSTOPped, stuck in C code)
  LastCollective collective = {};
  bool operator==(const RankEvidence&) const = default;
};

// What ended a node's workers. exit_code is what `run` exits with if this is the last failure:
// the worker's code, 128+N for signal N, 124 for a hang, 126/127 when the command can't run.
struct NodeFailure {
  int generation = 0;
  int node_rank = 0;
  int exit_code = 1;
  std::string summary;  // root cause, one line: "rank 3 (node 1): exit 1: ValueError: boom"
  int rank = -1;        // the failed worker's global rank; -1: none (a refusal, a node fault)
  // When it failed, wall clock ns (root_cause_judge.h: LocalFailure::when); 0 = not known. A
  // failure of one generation that reaches the job state machine later but happened earlier
  // replaces the root cause (RootCauseJudge::offer).
  std::int64_t failed_at_ns = 0;
  FailureSignature signature;
  // Set on a give-up (JobStateMachine): the RootCauseJudge's decision line, and the last three
  // generations' root causes ("generation N: <summary>") for the termination log.
  std::string verdict;
  std::string
      verdict_rule;  // its rule (root_cause_judge.h: Verdict::rule), "" for a give-up by count
  std::vector<std::string> recent;
  // The checkpoint this node's generation resumed from ("" for none): the resume fallback
  // compares it between consecutive generations (launcher/job/resume_fallback.h).
  std::string resumed_from = {};
  // Set on a give-up: each checkpoint the job stepped over, one line each with its reason.
  std::vector<std::string> fallbacks = {};
  // A hang's evidence: where each of the reporting node's ranks was (its stacks) ...
  std::vector<RankEvidence> ranks = {};
  // ... and, set by the JobStateMachine once every node stopped, the one rank the job waited for
  // ("rank 5 on node 2 is in load_batch (...); every other rank waits in all_reduce (...)").
  std::string culprit = {};
};

// The fields every failure has (field by field: a partial aggregate initializer warns).
inline NodeFailure node_failure(int generation, int node_rank, int exit_code, std::string summary,
                                std::int64_t failed_at_ns = 0) {
  NodeFailure f;
  f.generation = generation;
  f.node_rank = node_rank;
  f.exit_code = exit_code;
  f.summary = std::move(summary);
  f.failed_at_ns = failed_at_ns;
  return f;
}
// The same for a failure trainvisor decides (a refusal, a lost node): its kind's exit code.
inline NodeFailure node_failure(int generation, int node_rank, ErrorKind kind,
                                std::string summary) {
  return node_failure(generation, node_rank, exit_code_of(kind), std::move(summary));
}

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
  // This node's workers of `generation` are all gone (after a failure or a stop); `ranks`: where
  // they were when a hang's stacks were taken on this node (empty: none were); `step`: the last
  // progress step this node's workers printed in `generation` (none: no progress line here), for
  // the judge, which reads the job's progress from every node (only rank 0 prints it in rsl_rl
  // and skrl).
  virtual void report_stopped(int generation, const std::vector<RankEvidence>& ranks,
                              std::optional<std::int64_t> step) = 0;
  // The job's root cause of each judged generation, oldest first, where this node judges them
  // (node 0 of a multi-node job, a one-node job: the JobStateMachine's RootCauseJudge); empty on
  // the other nodes.
  virtual std::vector<NodeFailure> judged_root_causes() const { return {}; }
  // Leave the job: tell the others, release sockets. Idempotent. `signal`: the termination
  // signal this node got (0 when it leaves for another reason), passed on to the other nodes;
  // `reason`: why this node ends when it is its own doing ("node fault: GPU 1 ...: Xid 79"), ""
  // when the others know it already or there is none; the others' failure files name it.
  virtual void leave(int signal, const std::string& reason) = 0;
  // Every frame this node has sent the others (a leave's reason above all) is on the wire: the
  // supervisor lets its last loop run (bounded) until then, so the process does not exit with
  // them queued and the others do not read its exit as a lost node.
  virtual bool flushed() const { return true; }
};

}  // namespace tv
