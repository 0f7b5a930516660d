#include "launcher/network_cluster.h"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "launcher/rdzv_agent.h"
#include "launcher/rdzv_coordinator.h"

namespace tv {

namespace asio = boost::asio;

NetworkCluster::NetworkCluster(asio::io_context& io, NetworkClusterConfig config)
    : io_(io), config_(std::move(config)) {
  if (config_.node_rank == 0) coordinator_ = std::make_unique<RdzvCoordinator>(io_, config_);
}

NetworkCluster::~NetworkCluster() = default;

int NetworkCluster::coordinator_port() const { return coordinator_ ? coordinator_->port() : 0; }

void NetworkCluster::join(Events events) {
  events_ = std::move(events);
  auto agent_config = config_;
  if (coordinator_) {
    if (auto st = coordinator_->listen(); !st) {
      finished_ = true;
      asio::post(io_, [lost = events_.lost, why = st.error().message] { lost(why); });
      return;
    }
    agent_config.rdzv_port = coordinator_->port();  // the same unless rdzv_port was 0
  }
  RdzvAgent::Handlers h;
  h.on_start = [this](const GenerationPlan& p) {
    if (!finished_) events_.start(p);
  };
  h.on_stop = [this](const NodeFailure& f) {
    if (!finished_) events_.stop(f);
  };
  h.on_done = [this] { deliver_terminal([this] { events_.done(); }); };
  h.on_give_up = [this](const NodeFailure& f) {
    deliver_terminal([this, f] { events_.give_up(f); });
  };
  h.on_lost = [this](const std::string& why) {
    deliver_terminal([this, why] { events_.lost(why); });
  };
  agent_ = std::make_unique<RdzvAgent>(io_, agent_config, std::move(h));
  agent_->join();
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

void NetworkCluster::report_stopped(int generation) {
  if (agent_) agent_->send_stopped(generation);
}

void NetworkCluster::leave() {
  if (finished_) return;
  finished_ = true;
  if (agent_) agent_->leave("node " + std::to_string(config_.node_rank) + " is shutting down");
  if (coordinator_) coordinator_->shutdown("node 0 is shutting down");
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

std::string rdzv_job_id(const Environment& env) {
  if (auto v = env.get("TRAINING_JOB_NAME"); v && !v->empty()) return "sagemaker:" + *v;
  if (auto v = env.get("AWS_BATCH_JOB_ID"); v && !v->empty())
    return "batch:" + v->substr(0, v->find('#'));
  for (const char* name : {"PET_MASTER_ADDR", "MASTER_ADDR"}) {
    auto v = env.get(name);
    if (!v) continue;
    auto at = v->rfind("-master-0");
    if (at != std::string::npos && at > 0) return "kubeflow:" + v->substr(0, at);
  }
  if (auto v = env.get("SLURM_JOB_ID"); v && !v->empty()) return "slurm:" + *v;
  return "";
}

}  // namespace tv
