#include "launcher/job/local_cluster.h"

#include <boost/asio/post.hpp>

#include "launcher/job/free_port.h"

namespace tv {

namespace asio = boost::asio;

LocalCluster::LocalCluster(asio::io_context& io, RestartPolicy policy, int master_port,
                           std::string bind_addr, LoopTime& time)
    : io_(io),
      time_(time),
      backoff_(io, time),
      bind_addr_(std::move(bind_addr)),
      machine_(1, policy, master_port, false, *this) {}

void LocalCluster::join(Events events) {
  events_ = std::move(events);
  asio::post(io_, [this] { machine_.all_present(time_.now()); });
}

void LocalCluster::report_success(int generation) { machine_.success(0, generation); }

void LocalCluster::report_failure(const NodeFailure& failure) {
  machine_.failure(failure, time_.now());
}

void LocalCluster::report_stopped(int generation, const std::vector<RankEvidence>& ranks,
                                  std::optional<std::int64_t> step) {
  machine_.stopped(0, generation, ranks, step);
}

void LocalCluster::leave(int, const std::string&) {
  left_ = true;
  backoff_.cancel();
}

void LocalCluster::start(const GenerationPlan& plan) {
  asio::post(io_, [this, plan] {
    if (!left_) events_.start(plan);
  });
}

void LocalCluster::stop(const NodeFailure& root_cause) {
  asio::post(io_, [this, root_cause] { events_.stop(root_cause); });
}

void LocalCluster::arm_backoff(LoopClock::duration pause) {
  backoff_.expires_after(pause);
  backoff_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && !left_) machine_.backoff_over(time_.now());
  });
}

void LocalCluster::finish(const JobEnd& end) {
  asio::post(io_, [this, end] {
    if (left_) return;  // the supervisor is ending on its own (a signal): its exit code stands
    switch (end.kind) {
      case JobEnd::Kind::kDone:
        return events_.done();
      case JobEnd::Kind::kGiveUp:
        return events_.give_up(end.failure);
      case JobEnd::Kind::kLost:
        return events_.lost(end.why, end.signal);
    }
  });
}

int LocalCluster::fresh_port() { return kernel_free_port(bind_addr_); }

}  // namespace tv
