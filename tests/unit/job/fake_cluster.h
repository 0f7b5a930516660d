// FakeCluster: a one-node Cluster (launcher/job/cluster.h) that answers as LocalCluster
// does, on the loop (every event posted), with the decision made by the test: `restarts` more
// generations after a failure (generation g+1 on MASTER_PORT first_port + g+1), then give_up with
// the first failure reported for the last generation. Every call is recorded.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <string>
#include <vector>

#include "launcher/job/cluster.h"

namespace tv::testing {

class FakeCluster final : public Cluster {
 public:
  explicit FakeCluster(boost::asio::io_context& io, int restarts = 0, int first_port = 29500)
      : io_(io), restarts_(restarts), first_port_(first_port) {}

  void join(Events events) override {
    calls.push_back("join");
    events_ = std::move(events);
    start(0, "");
  }
  void report_success(int generation) override {
    calls.push_back("success " + std::to_string(generation));
    post([this] { events_.done(); });
  }
  void report_failure(const NodeFailure& failure) override {
    calls.push_back("failure " + std::to_string(failure.generation));
    failures.push_back(failure);
    // The job's first failure of a generation stops every node, this one included.
    if (failures.size() == 1 || failures[failures.size() - 2].generation != failure.generation)
      post([this, failure] { events_.stop(failure); });
  }
  void report_stopped(int generation, const std::vector<RankEvidence>& ranks,
                      std::optional<std::int64_t> step) override {
    calls.push_back("stopped " + std::to_string(generation));
    stopped_evidence = ranks;
    stopped_step = step;
    if (restarts_ > 0) {
      --restarts_;
      return start(generation + 1, "test");
    }
    NodeFailure cause = failures.empty() ? node_failure(generation, 0, 1, "stopped") : failures[0];
    for (const auto& f : failures)
      if (f.generation == generation) {
        cause = f;
        break;
      }
    post([this, cause] { events_.give_up(cause); });
  }
  void leave(int signal, const std::string& reason) override {
    calls.push_back("leave " + std::to_string(signal) + (reason.empty() ? "" : " " + reason));
    left_ = true;
  }
  // The last frames are on the wire after `unflushed` more asks (a socket's write completing).
  bool flushed() const override {
    ++flush_asks;
    return flush_asks > unflushed;
  }
  int unflushed = 0;
  mutable int flush_asks = 0;

  // Another node's failure reaches this node as the job state machine sends it: a stop.
  void peer_failure(const NodeFailure& failure) {
    post([this, failure] { events_.stop(failure); });
  }

  // Another node gone without a word (its socket closed): the job is lost, 75 unless it is
  // stopped.
  void peer_lost(const std::string& why) {
    post([this, why] { events_.lost(why, 0); });
  }

  int port_of(int generation) const { return first_port_ + generation; }
  std::vector<std::string> calls;
  std::vector<NodeFailure> failures;
  std::vector<RankEvidence> stopped_evidence;  // the last report_stopped's
  std::optional<std::int64_t> stopped_step;    // the last report_stopped's

 private:
  void start(int generation, std::string rule) {
    GenerationPlan plan;
    plan.generation = generation;
    plan.master_port = port_of(generation);
    plan.retried_by = std::move(rule);
    post([this, plan] { events_.start(plan); });
  }
  template <class F>
  void post(F f) {
    // After leave() nothing more arrives (LocalCluster::finish drops it).
    boost::asio::post(io_, [this, f = std::move(f)] {
      if (!left_) f();
    });
  }
  boost::asio::io_context& io_;
  Events events_;
  int restarts_;
  int first_port_;
  bool left_ = false;
};

}  // namespace tv::testing
