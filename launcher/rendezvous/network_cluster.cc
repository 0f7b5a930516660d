#include "launcher/rendezvous/network_cluster.h"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <cstring>

#include "common/exit_codes.h"
#include "launcher/rendezvous/rdzv_agent.h"
#include "launcher/rendezvous/rdzv_coordinator.h"
#include "launcher/rendezvous/rdzv_host.h"

namespace tv {

namespace asio = boost::asio;

NetworkCluster::NetworkCluster(asio::io_context& io, NetworkClusterConfig config, LoopTime& time)
    : io_(io), time_(time), config_(std::move(config)) {
  if (config_.who.node_id.empty()) config_.who = rdzv::this_process_identity(config_.who.rank_from);
  if (config_.node_rank == 0) coordinator_ = std::make_unique<RdzvCoordinator>(io_, config_, time_);
}

NetworkCluster::~NetworkCluster() {
  if (probe_thread_.joinable()) probe_thread_.join();
  alive_.reset();  // a verdict posted by the probe thread now finds no cluster
}

int NetworkCluster::coordinator_port() const { return coordinator_ ? coordinator_->port() : 0; }

void NetworkCluster::join(Events events) {
  events_ = std::move(events);
  joined_ = true;
  if (agent_) {  // joined already for the preflight
    if (pending_start_)
      asio::post(io_, [this, p = *pending_start_] {
        if (!finished_) events_.start(p);
      });
    pending_start_.reset();
    return;
  }
  start_agent();
}

// Before any join: the job cannot gather, the supervisor or the preflight is told (75 when it
// cannot listen, 71 short of descriptors).
void NetworkCluster::cannot_join(const Error& e) {
  finished_ = true;
  asio::post(io_, [this, e] {
    agent_.reset();
    if (joined_) return events_.lost(e.message, 0);
    preflight_over(e);
  });
}

// A node 0 whose coordinator's port is taken on this machine: most likely the coordinator of a
// second node 0 of this job (two nodes given node rank 0 on one host). It joins that coordinator
// as node 0, which finds the rank claimed twice: 78 on both nodes at once, as for any other rank
// (rdzv_coordinator.h, rank_clash), not 75 here and the other node waiting out --rdzv-timeout.
// What holds the port is not this job's coordinator when the first attempt fails (no hello, an
// unauthenticated join): then the listen error, 75, at once as before.
// Returns the agent's on_retry.
std::function<void(const std::string&)> NetworkCluster::join_the_holder(
    const std::string& listen_error) {
  coordinator_.reset();
  spdlog::info(
      "rdzv: {}; joining the coordinator there as node 0 (another node claims node rank 0?)",
      listen_error);
  return [this, listen_error](const std::string& why) {
    if (!finished_)
      cannot_join(
          Error{ErrorKind::kLost,
                listen_error + "; what holds it is not this job's coordinator (" + why + ")"});
  };
}

void NetworkCluster::start_agent() {
  auto agent_config = config_;
  std::string taken;  // this node 0 cannot listen: another process of this machine holds the port
  if (coordinator_ && !coordinator_->listening()) {
    if (auto st = coordinator_->listen(); !st) {
      if (!coordinator_->address_in_use()) return cannot_join(st.error());
      taken = st.error().message;
    }
  }
  RdzvAgent::Handlers h;
  if (!taken.empty()) h.on_retry = join_the_holder(taken);
  if (coordinator_) agent_config.rdzv_port = coordinator_->port();  // the same unless it was 0
  h.on_start = [this](const GenerationPlan& p) {
    if (finished_) return;
    if (joined_) return events_.start(p);
    pending_start_ = p;  // every node passed the preflight
    preflight_over(ok_status());
  };
  h.on_stop = [this](const NodeFailure& f) {
    if (!finished_ && joined_) events_.stop(f);
  };
  h.on_done = [this] {
    deliver_terminal([this] {
      if (joined_) events_.done();
    });
  };
  h.on_give_up = [this](const NodeFailure& f) {
    deliver_terminal([this, f] {
      if (joined_) return events_.give_up(f);
      preflight_over(Error::from_exit_code(f.exit_code, f.summary));
    });
  };
  h.on_lost = [this](const std::string& why, int signal) {
    deliver_terminal([this, why, signal] {
      if (joined_) return events_.lost(why, signal);
      preflight_over(Error{ErrorKind::kLost, why});
    });
  };
  h.on_preflight = [this](const std::string& unique_id) { run_probe(unique_id); };
  agent_ = std::make_unique<RdzvAgent>(io_, agent_config, std::move(h), time_);
  agent_->join();
}

Result<int> NetworkCluster::assign_rank() {
  if (config_.node_rank != rdzv::kRankUnassigned) return config_.node_rank;
  const std::string endpoint = config_.master_addr + ":" + std::to_string(config_.rdzv_port);
  if (is_this_machine(config_.master_addr)) {
    auto c = std::make_unique<RdzvCoordinator>(io_, config_, time_);
    auto st = c->listen();
    if (st) {
      coordinator_ = std::move(c);
      config_.node_rank = 0;
      rank_origin_ = "this node hosts the coordinator on " + endpoint + " (--rdzv-endpoint)";
      config_.who.rank_from = rank_origin_;
      return 0;
    }
    if (!c->address_in_use()) return st.error();
    spdlog::info(
        "rdzv: {} is taken on this machine: another node hosts the coordinator; asking it for a "
        "node rank",
        endpoint);
  }
  std::optional<Result<int>> answer;
  RdzvAgent::Handlers h;
  h.on_rank = [&answer](int rank) { answer = rank; };
  h.on_give_up = [&answer](const NodeFailure& f) {
    answer = Error::from_exit_code(f.exit_code, f.summary);
  };
  h.on_lost = [&answer](const std::string& why, int) { answer = Error{ErrorKind::kLost, why}; };
  h.on_done = [&answer] { answer = Error{ErrorKind::kLost, "the job ended before it started"}; };
  h.on_start = [](const GenerationPlan&) {};
  h.on_stop = [](const NodeFailure&) {};
  h.on_preflight = [](const std::string&) {};
  auto asker = std::make_unique<RdzvAgent>(io_, config_, std::move(h), time_);
  asker->join();
  while (!answer && io_.run_one() > 0) {
  }
  asker.reset();
  if (!answer) return Error{ErrorKind::kLost, "rendezvous: event loop ended asking for a rank"};
  if (!*answer) return answer->error();
  config_.node_rank = answer->value();
  rank_origin_ = "assigned by node 0 in join order (no --node-rank, no platform rank)";
  config_.who.rank_from = rank_origin_;
  spdlog::info("rdzv: node rank {} {}", config_.node_rank, rank_origin_);
  return config_.node_rank;
}

void NetworkCluster::set_preflight_unique_id(const std::string& hex) {
  config_.preflight_unique_id = hex;
  if (coordinator_) coordinator_->set_preflight_unique_id(hex);
}

void NetworkCluster::begin_preflight(Probe probe, std::function<void(const Status&)> done) {
  probe_ = std::move(probe);
  preflight_done_ = std::move(done);
  start_agent();
}

Status NetworkCluster::preflight(Probe probe) {
  std::optional<Status> verdict;
  begin_preflight(std::move(probe), [&verdict](const Status& s) { verdict = s; });
  while (!verdict && io_.run_one() > 0) {
  }
  if (probe_thread_.joinable()) probe_thread_.join();
  if (!verdict) return Error{ErrorKind::kLost, "rendezvous: event loop ended during the preflight"};
  return *verdict;
}

// The probe blocks (it spawns and waits for the NCCL ranks), so it runs beside the event loop;
// its verdict comes back to the loop. Without a probe (this node did not ask for the preflight,
// or it is already running under the supervisor) the phase is answered with a pass.
void NetworkCluster::run_probe(const std::string& unique_id) {
  if (!probe_ || probe_thread_.joinable()) {
    agent_->send_probe_result(
        {true, "node " + std::to_string(config_.node_rank) + ": no NCCL probe on this node"});
    return;
  }
  probe_thread_ = std::thread([this, unique_id, probe = probe_, w = std::weak_ptr<bool>(alive_)] {
    PreflightVerdict v = probe(unique_id);
    asio::post(io_, [this, w, v] {
      if (!w.expired() && agent_) agent_->send_probe_result(v);
    });
  });
}

void NetworkCluster::preflight_over(const Status& s) {
  if (!preflight_done_) return;
  auto done = std::move(preflight_done_);
  preflight_done_ = nullptr;
  done(s);
}

// On node 0 the coordinator's last frames to the other nodes must be on the wire before the
// supervisor acts on the outcome (and the process exits).
void NetworkCluster::deliver_terminal(std::function<void()> fire) {
  if (finished_) return;
  finished_ = true;
  if (coordinator_)
    coordinator_->when_flushed(std::move(fire));
  else
    fire();
}

void NetworkCluster::report_success(int generation) {
  if (agent_) agent_->send_success(generation);
}

void NetworkCluster::report_failure(const NodeFailure& failure) {
  if (agent_) agent_->send_failure(failure);
}

void NetworkCluster::report_stopped(int generation, const std::vector<RankEvidence>& ranks,
                                    std::optional<std::int64_t> step) {
  if (agent_) agent_->send_stopped(generation, ranks, step);
}

std::vector<NodeFailure> NetworkCluster::judged_root_causes() const {
  return coordinator_ ? coordinator_->root_causes() : std::vector<NodeFailure>{};
}

void NetworkCluster::leave(int signal, const std::string& reason) {
  if (finished_) return;
  finished_ = true;
  const std::string on = signal > 0       ? std::string(" (it got SIG") + sigabbrev_np(signal) + ")"
                         : reason.empty() ? std::string()
                                          : ": " + reason;
  if (agent_)
    agent_->leave("node " + std::to_string(config_.node_rank) + " is shutting down" + on, signal);
  if (coordinator_) coordinator_->lost("node 0 is shutting down" + on, signal);
}

bool NetworkCluster::flushed() const {
  return (!coordinator_ || coordinator_->flushed()) && (!agent_ || agent_->flushed());
}

std::string derive_rdzv_token(const std::optional<std::string>& explicit_token,
                              const std::string& job_id) {
  if (explicit_token && !explicit_token->empty()) return *explicit_token;
  const std::string input = "trainvisor-rdzv-v1:" + job_id;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(input.data(), input.size(), digest, &len, EVP_sha256(), nullptr);
  return rdzv::to_hex({digest, len});
}

}  // namespace tv
