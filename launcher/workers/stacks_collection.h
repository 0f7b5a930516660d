// StacksCollection: every rank's Python stacks, collected on the event loop (docs/supervision.md,
// "Evidence on hang"). The stacks signal goes to each running worker whose hook has registered (its
// stacks file's header names its pid: the signal's default action would kill any other), a short
// bounded wait (a 50 ms poll, 3 s at most, never blocking the loop) until each stacks file has
// grown and settled, then one report: per rank the innermost frame of its main thread, and the
// whole collection in <work dir>/stacks.txt for `trainvisor stacks`. A hang's collection is kept
// by generation: its report's lines and where each rank was (RankEvidence, for the culprit).
// Owned by the Supervisor, which says which workers run and what comes after (`then`).
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/file_system.h"
#include "common/loop_time.h"
#include "launcher/job/cluster.h"
#include "launcher/workers/spawner.h"

namespace tv {

class StacksCollection {
 public:
  struct Worker {
    int rank = 0;
    pid_t pid = -1;
    std::string stacks_path;  // attempt_<g>/rank_<r>/stacks.txt
  };
  // `hooked`: the workers are Python with trainvisor's hook (else each says why it has no stack).
  // The stacks files are read through `fs`; <work dir>/stacks.txt is written.
  StacksCollection(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                   const FileSystem& fs, std::string work_dir, int node_rank)
      : timer_(io, time),
        spawner_(spawner),
        fs_(fs),
        work_dir_(std::move(work_dir)),
        node_rank_(node_rank) {}

  bool busy() const { return request_.has_value(); }
  // Collects `workers`' stacks ("on request", "on hang", "on node 1's hang"), then `then`.
  void collect(const std::string& why, int generation, const std::vector<Worker>& workers,
               bool hooked, std::function<void()> then, bool hang);
  // A hang's collection, or, while one is under way, `then` after it (this node's hang and a
  // peer's at once): the workers are never stopped before their stacks are in.
  void hang_then(const std::string& why, int generation, const std::vector<Worker>& workers,
                 bool hooked, std::function<void()> then);
  // What generation's hang collection found: its report's lines ("" for none), where each rank was.
  std::string hang_report(int generation) const;
  std::vector<RankEvidence> hang_evidence(int generation) const;

 private:
  struct Target {
    Worker worker;
    std::string main_thread;  // from the hook's header; empty: not signalled (why says why)
    std::string why;
    std::size_t before = 0, last = 0;  // its size before the signal, at the last poll
  };
  struct Request {
    std::string why;
    int generation = 0;
    bool hang = false;
    int polls = 0;
    std::vector<Target> targets;
    std::function<void()> then;
  };
  Target aim(const Worker& w, bool hooked) const;
  void poll();
  void finish();
  std::string rank_line(const Target& t, std::vector<RankEvidence>& evidence,
                        std::string& dumps) const;

  LoopTimer timer_;
  Spawner& spawner_;
  const FileSystem& fs_;
  std::string work_dir_;
  int node_rank_;
  std::optional<Request> request_;                     // a collection under way
  std::map<int, std::string> reports_;                 // by generation: a hang's lines
  std::map<int, std::vector<RankEvidence>> evidence_;  // by generation: where ranks were
  int seq_ = 0;                                        // collections so far (the stacks.txt header)
};

}  // namespace tv
