// LocalCluster: the Cluster of a one-node job. It runs the job's state machine
// (launcher/job/job_state.h) in-process, the same one the rendezvous coordinator runs for
// many nodes, with this node as its only member: restarts, their pauses, fresh MASTER_PORTs and
// restart counting are the same code for one node and many. Events are always posted to the event
// loop, never delivered from inside a report_* call. Its time (the backoff pause, the "now" the
// state machine measures a generation's run with) is the LoopTime it is given (common/loop_time.h).
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "common/loop_time.h"
#include "launcher/job/cluster.h"
#include "launcher/job/job_state.h"
#include "launcher/job/restart_policy.h"

namespace tv {

class LocalCluster final : public Cluster, private JobActions {
 public:
  // bind_addr: where fresh MASTER_PORTs must be free (0.0.0.0: every address of this node).
  LocalCluster(boost::asio::io_context& io, RestartPolicy policy, int master_port,
               std::string bind_addr = "0.0.0.0", LoopTime& time = real_loop_time());
  void join(Events events) override;
  void report_success(int generation) override;
  void report_failure(const NodeFailure& failure) override;
  void report_stopped(int generation, const std::vector<RankEvidence>& ranks,
                      std::optional<std::int64_t> step) override;
  std::vector<NodeFailure> judged_root_causes() const override { return machine_.root_causes(); }
  void leave(int signal, const std::string& reason) override;

 private:
  // JobActions
  void begin_preflight() override {}  // a one-node preflight runs before the Cluster exists
  void start(const GenerationPlan& plan) override;
  void stop(const NodeFailure& root_cause) override;
  void arm_backoff(LoopClock::duration pause) override;
  void finish(const JobEnd& end) override;
  int fresh_port() override;

  boost::asio::io_context& io_;
  LoopTime& time_;
  LoopTimer backoff_;
  std::string bind_addr_;
  JobStateMachine machine_;
  Events events_;
  bool left_ = false;
};

}  // namespace tv
