#include "launcher/supervision/local_cluster.h"

#include <boost/asio/post.hpp>

namespace tv {

LocalCluster::LocalCluster(boost::asio::io_context& io, RestartPolicy policy, int master_port)
    : io_(io), backoff_(io), policy_(policy), master_port_(master_port) {}

void LocalCluster::join(Events events) {
  events_ = std::move(events);
  post_start(0);
}

void LocalCluster::post_start(int generation) {
  GenerationPlan plan{generation, generation, master_port_};
  boost::asio::post(io_, [this, plan] {
    if (!left_) events_.start(plan);
  });
}

void LocalCluster::report_success(int) {
  boost::asio::post(io_, [this] { events_.done(); });
}

void LocalCluster::report_failure(const NodeFailure& failure) {
  if (!failure_) failure_ = failure;
  boost::asio::post(io_, [this, failure] { events_.stop(failure); });
}

void LocalCluster::report_stopped(int generation) {
  if (left_ || !failure_) return;
  NodeFailure failure = *failure_;
  failure_.reset();
  if (!policy_.may_restart(restarts_)) {
    boost::asio::post(io_, [this, failure] { events_.give_up(failure); });
    return;
  }
  ++restarts_;
  backoff_.expires_after(RestartPolicy::backoff(restarts_));
  backoff_.async_wait([this, generation](const boost::system::error_code& ec) {
    if (!ec) post_start(generation + 1);
  });
}

}  // namespace tv
