// LocalCluster: the Cluster of a one-node job. Starts generation 0 at once, restarts after a
// failure (RestartPolicy: up to max_restarts, growing backoff), gives up when they are spent.
// Events are always posted to the event loop, never delivered from inside a report_* call.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <optional>

#include "launcher/supervision/cluster.h"
#include "launcher/supervision/restart_policy.h"

namespace tv {

class LocalCluster final : public Cluster {
 public:
  LocalCluster(boost::asio::io_context& io, RestartPolicy policy, int master_port);
  void join(Events events) override;
  void report_success(int generation) override;
  void report_failure(const NodeFailure& failure) override;
  void report_stopped(int generation) override;
  void leave() override { left_ = true; }

 private:
  void post_start(int generation);

  boost::asio::io_context& io_;
  boost::asio::steady_timer backoff_;
  RestartPolicy policy_;
  int master_port_;
  Events events_;
  std::optional<NodeFailure> failure_;  // of the current generation
  int restarts_ = 0;
  bool left_ = false;
};

}  // namespace tv
