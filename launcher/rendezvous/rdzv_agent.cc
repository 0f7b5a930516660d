#include "launcher/rendezvous/rdzv_agent.h"

#include <spdlog/spdlog.h>

#include <boost/asio/connect.hpp>

#include "common/json_field.h"

namespace tv {

namespace asio = boost::asio;
using asio::ip::tcp;
using rdzv::Message;
using rdzv::MsgType;

RdzvAgent::RdzvAgent(asio::io_context& io, const NetworkClusterConfig& config, Handlers handlers,
                     LoopTime& time)
    : io_(io),
      time_(time),
      config_(config),
      handlers_(std::move(handlers)),
      resolver_(io),
      retry_timer_(io, time),
      deadline_(io, time),
      ticker_(io, time) {}

RdzvAgent::~RdzvAgent() {
  *alive_ = false;
  resolver_.cancel();
  if (connecting_) {
    boost::system::error_code ec;
    connecting_->close(ec);
  }
  if (conn_) conn_->close();
}

std::string RdzvAgent::where() const {
  return config_.master_addr + ":" + std::to_string(config_.rdzv_port);
}

std::string RdzvAgent::me() const {
  return config_.node_rank == rdzv::kRankUnassigned ? std::string("this node (no rank yet)")
                                                    : "node " + std::to_string(config_.node_rank);
}

void RdzvAgent::join() {
  deadline_.expires_after(config_.rdzv_timeout);
  deadline_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (ec || w.expired() || started_ || state_ == State::kFinished) return;
    finish();
    handlers_.on_lost("rendezvous timed out after " + std::to_string(config_.rdzv_timeout.count()) +
                          " s (--rdzv-timeout) waiting for every node at coordinator " + where() +
                          (last_error_.empty() ? "" : "; last error: " + last_error_),
                      0);
  });
  tick();
  attempt();
}

void RdzvAgent::attempt() {
  if (state_ != State::kConnecting) return;
  // An address needs no lookup: Asio's resolver would run getaddrinfo on a thread of its own.
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(config_.master_addr, ec);
  if (!ec) return connect({tcp::endpoint(addr, static_cast<unsigned short>(config_.rdzv_port))});
  auto w = std::weak_ptr<bool>(alive_);
  resolver_.async_resolve(
      config_.master_addr, std::to_string(config_.rdzv_port),
      [this, w](boost::system::error_code ec2, tcp::resolver::results_type results) {
        if (w.expired() || state_ != State::kConnecting) return;
        if (ec2) return retry("cannot resolve " + config_.master_addr + ": " + ec2.message());
        std::vector<tcp::endpoint> endpoints;
        for (const auto& r : results) endpoints.push_back(r.endpoint());
        connect(endpoints);
      });
}

void RdzvAgent::connect(const std::vector<tcp::endpoint>& endpoints) {
  auto w = std::weak_ptr<bool>(alive_);
  connecting_ = std::make_shared<tcp::socket>(io_);
  asio::async_connect(
      *connecting_, endpoints,
      [this, w, s = connecting_](boost::system::error_code ec, const tcp::endpoint&) {
        if (w.expired() || state_ != State::kConnecting) return;
        connecting_.reset();
        if (ec) return retry("cannot connect to " + where() + ": " + ec.message());
        on_connected(std::move(*s));
      });
}

void RdzvAgent::retry(const std::string& why) {
  if (handlers_.on_retry) handlers_.on_retry(why);
  if (why != last_error_) spdlog::info("rdzv: {}: {}; retrying", me(), why);
  last_error_ = why;
  state_ = State::kConnecting;
  retry_timer_.expires_after(delay_);
  delay_ = std::min(delay_ * 2, std::chrono::milliseconds(2000));
  retry_timer_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (!ec && !w.expired()) attempt();
  });
}

void RdzvAgent::on_connected(tcp::socket socket) {
  state_ = State::kHandshake;
  handshake_deadline_ =
      time_.now() + std::clamp(config_.peer_timeout, std::chrono::milliseconds(1000),
                               std::chrono::milliseconds(10000));
  conn_ = std::make_shared<rdzv::Connection>(std::move(socket), config_.token,
                                             rdzv::Direction::kToAgent);
  auto w = std::weak_ptr<bool>(alive_);
  conn_->start(
      [this, w](const Message& m) {
        if (!w.expired()) on_handshake(m);
      },
      [this, w](const std::string& why) {
        if (!w.expired()) on_closed(why);
      });
}

void RdzvAgent::on_handshake(const Message& m) {
  if (m.type == MsgType::kHello && m.seq == 0) {  // the first frame; the connection checks seq
    const auto server = *rdzv::nonce_from_hex(m.body["nonce"].get<std::string>());
    nonce_ = rdzv::random_nonce();
    conn_->set_context(rdzv::make_context(server, std::nullopt));
    conn_->send(MsgType::kJoin, config_.node_rank, 0,
                rdzv::join_body(nonce_, config_.nnodes, config_.nproc_per_node, config_.who,
                                config_.fingerprint ? rdzv::fingerprint_json(*config_.fingerprint)
                                                    : nlohmann::json()));
    conn_->set_context(rdzv::make_context(server, nonce_));
    return;
  }
  if (m.type == MsgType::kGiveUp) {  // refused (another node has this rank, another --nnodes)
    finish();
    return handlers_.on_give_up(rdzv::failure_from(m));
  }
  if (m.type != MsgType::kWelcome) {
    conn_->close();
    return retry(std::string("coordinator sent ") + rdzv::type_name(m.type) +
                 " during the handshake");
  }
  const int rank = m.body["node_rank"].get<int>();
  if (config_.node_rank == rdzv::kRankUnassigned) {
    finish();
    return handlers_.on_rank(rank);
  }
  if (rank != config_.node_rank) {
    conn_->close();
    return retry("coordinator welcomed node rank " + std::to_string(rank) + ", not " +
                 std::to_string(config_.node_rank));
  }
  state_ = State::kJoined;
  last_seen_ = time_.now();
  spdlog::info("rdzv: node {} joined the coordinator at {}", config_.node_rank, where());
  auto w = std::weak_ptr<bool>(alive_);
  conn_->rebind(
      [this, w](const Message& msg) {
        if (!w.expired()) on_message(msg);
      },
      [this, w](const std::string& why) {
        if (!w.expired()) on_closed(why);
      });
}

void RdzvAgent::on_message(const Message& m) {
  if (state_ != State::kJoined) return;
  last_seen_ = time_.now();
  switch (m.type) {
    case MsgType::kStart:
      started_ = true;
      deadline_.cancel();
      return handlers_.on_start(
          {m.generation, m.body["master_port"].get<int>(), rdzv::peer_text(m.body, "retried_by"),
           rdzv::peer_text(m.body, "step_over"), json_field(m.body, "node_rank", -1),
           json_field(m.body, "nnodes", 0)});
    case MsgType::kPreflight:
      if (started_) return;
      deadline_.cancel();
      return handlers_.on_preflight(m.body["unique_id"].get<std::string>());
    case MsgType::kStop:
      return handlers_.on_stop(rdzv::failure_from(m));
    case MsgType::kDone:
      finish();
      return handlers_.on_done();
    case MsgType::kGiveUp:
      finish();
      return handlers_.on_give_up(rdzv::failure_from(m));
    case MsgType::kLost:
      finish();
      return handlers_.on_lost(rdzv::peer_text(m.body, "why"), json_field(m.body, "signal", 0));
    default:
      return;  // heartbeat (a second hello or welcome changes nothing)
  }
}

void RdzvAgent::on_closed(const std::string& why) {
  if (state_ == State::kFinished) return;
  conn_.reset();
  if (state_ == State::kHandshake) return retry("handshake with " + where() + " failed: " + why);
  finish();
  handlers_.on_lost("lost the coordinator on node 0 (" + where() + "): " + why, 0);
}

void RdzvAgent::tick() {
  if (state_ == State::kFinished) return;
  const auto now = time_.now();
  if (state_ == State::kHandshake && now > handshake_deadline_) {
    conn_->close();
    conn_.reset();
    return retry("no handshake from " + where() + " in time");
  }
  if (state_ == State::kJoined) {
    if (now - last_seen_ > config_.peer_timeout) {
      finish();
      return handlers_.on_lost("coordinator on node 0 (" + where() + ") silent for more than " +
                                   std::to_string(config_.peer_timeout.count()) +
                                   " ms (--peer-timeout)",
                               0);
    }
    send(MsgType::kHeartbeat, 0);
  }
  ticker_.expires_after(std::max(std::chrono::milliseconds(10), config_.peer_timeout / 4));
  ticker_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (!ec && !w.expired()) tick();
  });
}

void RdzvAgent::finish() {
  state_ = State::kFinished;
  resolver_.cancel();
  retry_timer_.cancel();
  deadline_.cancel();
  ticker_.cancel();
  if (conn_) conn_->close(/*after_flush=*/true);
}

void RdzvAgent::send(MsgType type, int generation, nlohmann::json body) {
  if (state_ == State::kJoined && conn_)
    conn_->send(type, config_.node_rank, generation, std::move(body));
}

void RdzvAgent::send_success(int generation) { send(MsgType::kSuccess, generation); }

void RdzvAgent::send_failure(const NodeFailure& f) {
  send(MsgType::kFailure, f.generation, rdzv::failure_body(f));
}

void RdzvAgent::send_stopped(int generation, const std::vector<RankEvidence>& ranks,
                             std::optional<std::int64_t> step) {
  nlohmann::json body = nlohmann::json::object();
  if (!ranks.empty()) body["ranks"] = rdzv::ranks_json(ranks);
  if (step && *step >= 0) body["step"] = *step;
  send(MsgType::kStopped, generation, std::move(body));
}

void RdzvAgent::send_probe_result(const PreflightVerdict& v) {
  send(MsgType::kProbeResult, 0,
       {{"passed", v.passed}, {"summary", v.summary.substr(0, rdzv::kMaxText)}});
}

void RdzvAgent::leave(const std::string& why, int signal) {
  if (state_ == State::kFinished) return;
  nlohmann::json body{{"why", why.substr(0, rdzv::kMaxText)}};
  if (signal > 0) body["signal"] = signal;
  send(MsgType::kLeave, 0, body);
  finish();
}

}  // namespace tv
