#include "launcher/rendezvous/rdzv_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/ip/v6_only.hpp>
#include <set>

#include "common/exit_codes.h"
#include "common/json_field.h"
#include "common/open_files.h"
#include "launcher/job/free_port.h"
#include "launcher/rendezvous/rdzv_descriptors.h"
#include "launcher/rendezvous/rdzv_host.h"

namespace tv {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;
using rdzv::Message;
using rdzv::MsgType;

namespace {

std::chrono::milliseconds tick_interval(std::chrono::milliseconds peer_timeout) {
  return std::max(std::chrono::milliseconds(10), peer_timeout / 4);
}

}  // namespace

RdzvCoordinator::RdzvCoordinator(asio::io_context& io, const NetworkClusterConfig& config,
                                 LoopTime& time)
    : io_(io),
      time_(time),
      config_(config),
      acceptor_(io),
      ticker_(io, time),
      rdzv_deadline_(io, time),
      backoff_(io, time),
      accept_retry_(io, time),
      last_call_(io, time),
      pending_(io, rdzv::handshake_deadline(config.peer_timeout),
               rdzv::pending_limits(config.nnodes), time),
      agents_(static_cast<size_t>(std::max(config.nnodes, 1))),
      assigned_(agents_.size()),
      membership_(config.min_nnodes > 0 ? config.min_nnodes : config.nnodes - config.spare_nodes,
                  std::max(config.nnodes, 1), config.spare_nodes),
      machine_(std::max(config.nnodes, 1), config.policy, config.base_master_port,
               config.preflight_unique_id.has_value(), *this) {
  // The family (or both) the master's name resolves to: an IPv6-only name gets an IPv6 listener.
  boost::system::error_code ec;
  asio::ip::make_address(config_.master_addr, ec);
  const bool lookup = ec && config_.bind_addr == "0.0.0.0";
  config_.bind_addr = coordinator_listen_address(
      config_.master_addr, config_.bind_addr,
      lookup ? resolved_families(config_.master_addr) : AddressFamilies{});
}

RdzvCoordinator::~RdzvCoordinator() {
  *alive_ = false;
  boost::system::error_code ec;
  acceptor_.close(ec);
  pending_.close_all();
  for (auto& a : agents_)
    if (a) a->conn->close();
}

Status RdzvCoordinator::listen() {
  if (auto s = reserve_coordinator_descriptors(config_.nnodes, config_.nproc_per_node); !s)
    return s;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(config_.bind_addr, ec);
  tcp::endpoint ep(addr, static_cast<unsigned short>(config_.rdzv_port));
  if (!ec) acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  // "::" takes IPv4 too (dual stack) whatever net.ipv6.bindv6only says.
  if (!ec && addr.is_v6() && addr.is_unspecified())
    acceptor_.set_option(asio::ip::v6_only(false), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  address_in_use_ = ec == asio::error::address_in_use;
  if (ec) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);  // a later listen() starts afresh
    return Error{ErrorKind::kLost, "rendezvous coordinator cannot listen on " + config_.bind_addr +
                                       ":" + std::to_string(config_.rdzv_port) +
                                       " (--rdzv-port): " + ec.message()};
  }
  port_ = acceptor_.local_endpoint().port();
  spdlog::info("rdzv: coordinator listening on {}:{} for {} nodes", config_.bind_addr, port_,
               config_.nnodes);
  accept();
  tick();
  rdzv_deadline_.expires_after(config_.rdzv_timeout);
  rdzv_deadline_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (ec || w.expired() || machine_.state() != State::kGathering || machine_.generation() != 0)
      return;
    lost("rendezvous timed out after " + std::to_string(config_.rdzv_timeout.count()) +
         " s (--rdzv-timeout): " + std::to_string(joined()) + " of " +
         std::to_string(config_.nnodes) + " nodes joined");
  });
  return ok_status();
}

int RdzvCoordinator::joined() const {
  return static_cast<int>(
      std::count_if(agents_.begin(), agents_.end(), [](auto& a) { return a.has_value(); }));
}

void RdzvCoordinator::accept() {
  acceptor_.async_accept(
      [this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec, tcp::socket s) {
        if (w.expired() || finished()) return;
        if (!ec) on_accepted(std::move(s));
        if (ec == asio::error::no_descriptors || ec.value() == ENFILE) return accept_later(ec);
        if (ec != asio::error::operation_aborted) accept();
      });
}

// The connection stays in the listen backlog; accepting at once would only fail again, forever.
void RdzvCoordinator::accept_later(const boost::system::error_code& ec) {
  if (!told_out_of_fds_)
    spdlog::warn(
        "rdzv: node 0 cannot accept a connection: {} (RLIMIT_NOFILE {}); retrying every "
        "100 ms",
        ec.message(), open_file_limit().soft);
  told_out_of_fds_ = true;
  accept_retry_.expires_after(std::chrono::milliseconds(100));
  accept_retry_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code e) {
    if (!e && !w.expired() && !finished()) accept();
  });
}

void RdzvCoordinator::on_accepted(tcp::socket socket) {
  boost::system::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return;  // already gone
  auto conn = std::make_shared<rdzv::Connection>(std::move(socket), config_.token,
                                                 rdzv::Direction::kToCoordinator);
  pending_.add(conn, remote.address().to_string());
  const auto nonce = rdzv::random_nonce();
  conn->send(MsgType::kHello, 0, machine_.generation(), {{"nonce", rdzv::to_hex(nonce)}});
  conn->set_context(rdzv::make_context(nonce, std::nullopt));
  std::weak_ptr<rdzv::Connection> wc = conn;
  auto w = std::weak_ptr<bool>(alive_);
  conn->start(
      [this, w, wc, nonce](const Message& m) {
        if (auto c = wc.lock(); c && !w.expired()) on_join(c, m, nonce);
      },
      [this, w, wc](const std::string& why) {
        if (w.expired()) return;
        if (auto c = wc.lock()) pending_.drop(c, why);
      });
}

namespace {
// "10.0.0.7" of "10.0.0.7:43092" (Connection::peer): a node's address, without its port.
std::string address_of(const std::string& peer) { return peer.substr(0, peer.rfind(':')); }

std::string rank_text(int rank) {
  return rank == rdzv::kRankUnassigned ? std::string("a node without a rank")
                                       : "node rank " + std::to_string(rank);
}
}  // namespace

void RdzvCoordinator::on_join(const Conn& conn, const Message& m, const rdzv::Nonce& nonce) {
  std::string refuse;
  const int rank = m.node_rank;
  if (m.type != MsgType::kJoin)
    refuse = std::string("expected join, got ") + rdzv::type_name(m.type);
  else if (m.body["nnodes"].get<int>() != config_.nnodes)
    refuse = "it expects " + std::to_string(m.body["nnodes"].get<int>()) + " nodes, this job has " +
             std::to_string(config_.nnodes);
  else if (rank >= config_.nnodes)
    refuse = "unexpected node rank " + std::to_string(rank);
  // Too late is not the node's mistake (a pod that restarted): it keeps retrying as before. A
  // second node claiming the rank of a live node is: 78 on every node (late_clash).
  const bool late = refuse.empty() && !admits_late(rank) &&
                    (machine_.generation() != 0 || machine_.state() != State::kGathering);
  if (late) refuse = rank_text(rank) + " joined after the job started";
  const bool clash_late = late && m.type == MsgType::kJoin && held_by_another(rank, m);
  if (!refuse.empty() && (m.type != MsgType::kJoin || (late && !clash_late)))
    return pending_.drop(conn, refuse);
  pending_.release(conn);
  conn->set_context(
      rdzv::make_context(nonce, rdzv::nonce_from_hex(m.body["nonce"].get<std::string>())));
  const rdzv::NodeIdentity who = rdzv::identity_from(m);
  if (clash_late) return late_clash(conn, rank, who);
  if (!refuse.empty()) return refuse_join(conn, rank, refuse);
  if (rank == rdzv::kRankUnassigned) return assign_rank(conn, who);
  if (const std::string clash = rank_clash(rank, who, address_of(conn->peer())); !clash.empty()) {
    refuse_join(conn, rank, clash);
    return machine_.refuse(node_failure(
        0, rank, ErrorKind::kConfig,
        "the rendezvous on node 0 refused node rank " + std::to_string(rank) + ": " + clash));
  }
  agents_[rank] = Agent{conn, time_.now(), json_field(m.body, "nproc_per_node", 0), who,
                        rdzv::fingerprint_from(m.body)};
  if (const std::string why = late_mismatch(); !why.empty()) {
    agents_[rank].reset();
    return refuse_join(conn, rank, why);
  }
  membership_.joined(rank);
  auto w = std::weak_ptr<bool>(alive_);
  conn->rebind(
      [this, w, rank](const Message& msg) {
        if (!w.expired()) on_agent_message(rank, msg);
      },
      [this, w, rank](const std::string& why) {
        if (!w.expired()) on_agent_gone(rank, why);
      });
  conn->send(MsgType::kWelcome, 0, machine_.generation(), {{"node_rank", rank}});
  spdlog::info("rdzv: node {} joined from {} ({}/{})", rank, conn->peer(), joined(),
               config_.nnodes);
  if (membership_.with_spares() &&
      (machine_.generation() > 0 || machine_.state() != State::kGathering))
    spdlog::info("rdzv: node {} joined as a spare ({} spare node(s) ready)", rank,
                 membership_.waiting());
  try_start();
}

// torchrun's c10d rendezvous gives ranks to the nodes that joined a round
// (torch/distributed/elastic/rendezvous/dynamic_rendezvous.py, _mark_rendezvous_complete);
// here the coordinator gives them as the nodes ask, from 1 (0 is the node that hosts it). The
// same node asking again (its node_id, or the same host, pid and address: a container's PID 1
// started again before it joined) gets the same rank back.
void RdzvCoordinator::assign_rank(const Conn& conn, const rdzv::NodeIdentity& who) {
  const std::string address = address_of(conn->peer());
  auto same_node = [&](const Assigned& a) {
    return a.who.node_id == who.node_id ||
           (a.who.host == who.host && a.who.pid == who.pid && a.address == address);
  };
  int rank = -1;
  for (std::size_t r = 1; r < assigned_.size() && rank < 0; ++r)
    if (assigned_[r] && same_node(*assigned_[r]) && !agents_[r]) rank = static_cast<int>(r);
  for (std::size_t r = 1; r < agents_.size() && rank < 0; ++r)
    if (!agents_[r] && !assigned_[r]) rank = static_cast<int>(r);
  if (rank < 0)
    return refuse_join(conn, rdzv::kRankUnassigned,
                       "every node rank from 0 to " + std::to_string(config_.nnodes - 1) +
                           " is taken (--nnodes " + std::to_string(config_.nnodes) + ")");
  assigned_[rank] = Assigned{who, address};
  spdlog::info("rdzv: node rank {} assigned in join order to {}", rank,
               rdzv::describe(who, address));
  conn->send(MsgType::kWelcome, 0, machine_.generation(), {{"node_rank", rank}});
  conn->close(/*after_flush=*/true);
}

// Two nodes with one rank: the job must not start, and both are told (the holder by the job's
// give-up, the newcomer by refuse_join). The same node_id is the same process joining again
// (its handshake timed out after the coordinator had accepted it): its old connection goes.
std::string RdzvCoordinator::rank_clash(int rank, const rdzv::NodeIdentity& who,
                                        const std::string& address) {
  const std::string fix =
      ": expected a different rank on each node (--node-rank, TRAINVISOR_NODE_RANK, "
      "PET_NODE_RANK or the platform's), or none on any node, so that node 0 assigns them in "
      "join order";
  if (agents_[rank] && agents_[rank]->who.node_id == who.node_id) {
    spdlog::info("rdzv: node {} joined again from {}; its earlier connection is closed", rank,
                 address);
    agents_[rank]->conn->close();
    agents_[rank].reset();
    return "";
  }
  if (agents_[rank])
    return "node rank " + std::to_string(rank) + " is claimed by two nodes: " +
           rdzv::describe(agents_[rank]->who, address_of(agents_[rank]->conn->peer())) + " and " +
           rdzv::describe(who, address) + fix;
  if (assigned_[rank] && assigned_[rank]->who.node_id != who.node_id)
    return "node rank " + std::to_string(rank) + " was assigned in join order to " +
           rdzv::describe(assigned_[rank]->who, assigned_[rank]->address) + ", and " +
           rdzv::describe(who, address) + " claims it" + fix;
  return "";
}

// A join with rank `rank` while a live node with another identity holds it: two nodes claim one
// rank (a restarted pod's old connection is gone by the time it joins again: its process died).
bool RdzvCoordinator::held_by_another(int rank, const Message& join) const {
  if (rank < 0 || rank >= static_cast<int>(agents_.size()) || !agents_[rank]) return false;
  return agents_[rank]->who.node_id != rdzv::identity_from(join).node_id;
}

// Two nodes claim one rank after the job started: the job cannot go on as configured. Both are
// told, as before generation 0 (README, docs/coordination.md "Node ranks"): the newcomer by
// refuse_join, every node of the job (the holder too) by the job's give-up, 78 with the reason.
void RdzvCoordinator::late_clash(const Conn& conn, int rank, const rdzv::NodeIdentity& who) {
  const std::string clash = rank_clash(rank, who, address_of(conn->peer())) +
                            " (the second joined after the job started)";
  refuse_join(conn, rank, clash);
  machine_.refuse(node_failure(
      machine_.generation(), rank, ErrorKind::kConfig,
      "the rendezvous on node 0 refused node rank " + std::to_string(rank) + ": " + clash));
}

// An authenticated join that cannot be part of this job (a second node rank 1, another --nnodes):
// the node is told why, as a give-up with 78, so it stops at once instead of retrying until the
// rendezvous times out (75, which a job retry policy would repeat). Nothing changes here.
void RdzvCoordinator::refuse_join(const Conn& conn, int rank, const std::string& why) {
  spdlog::warn("rdzv: refused {} from {}: {}", rank_text(rank), conn->peer(), why);
  NodeFailure f;
  f.generation = machine_.generation();
  f.node_rank = std::max(rank, 0);
  f.exit_code = exit_code_of(ErrorKind::kConfig);
  f.summary = "the rendezvous on node 0 refused " + rank_text(rank) + ": " + why;
  conn->send(MsgType::kGiveUp, 0, machine_.generation(), rdzv::failure_body(f));
  conn->close(/*after_flush=*/true);
}

void RdzvCoordinator::on_agent_message(int rank, const Message& m) {
  if (finished()) return;
  if (m.node_rank != rank || m.type == MsgType::kJoin) {
    agents_[rank]->conn->close();
    return on_agent_gone(
        rank, m.node_rank != rank ? "frame from unexpected node rank " + std::to_string(m.node_rank)
                                  : std::string("second join"));
  }
  agents_[rank]->last_seen = time_.now();
  switch (m.type) {
    case MsgType::kSuccess:
      return machine_.success(rank, m.generation);
    case MsgType::kFailure: {
      auto f = rdzv::failure_from(m);
      f.node_rank = rank;
      return machine_.failure(f, time_.now());
    }
    case MsgType::kStopped:
      return machine_.stopped(rank, m.generation, rdzv::ranks_from(m.body, rank),
                              rdzv::stopped_step(m.body));
    case MsgType::kProbeResult:
      return on_probe_result(rank, m);
    case MsgType::kLeave:
      if (waits_outside(rank)) return waiting_node_left(rank, rdzv::peer_text(m.body, "why"));
      return lost("node " + std::to_string(rank) + " left: " + rdzv::peer_text(m.body, "why"),
                  json_field(m.body, "signal", 0));
    default:
      return;  // heartbeat
  }
}

void RdzvCoordinator::on_probe_result(int rank, const Message& m) {
  if (machine_.state() != State::kPreflight) return;
  const bool passed = m.body["passed"].get<bool>();
  const auto summary = rdzv::peer_text(m.body, "summary");
  // A failed verdict's text is logged once, by the state machine when every node has reported.
  if (passed)
    spdlog::info("rdzv: node {} preflight passed: {}", rank, summary);
  else
    spdlog::info("rdzv: node {} preflight FAILED", rank);
  machine_.preflight_result(rank, passed, summary, time_.now());
}

void RdzvCoordinator::try_start() {
  if (machine_.state() != State::kGathering || machine_.generation() != 0) return maybe_grow();
  if (!membership_.full()) {
    if (!membership_.fixed() && membership_.enough()) arm_last_call();
    return;
  }
  form_and_start();
}

// Generation 0's members are the nodes present (every node of a fixed world).
void RdzvCoordinator::form_and_start() {
  rdzv_deadline_.cancel();
  last_call_.cancel();
  last_call_armed_ = false;
  membership_.form();
  machine_.set_nodes(membership_.members());
  if (membership_.elastic())
    spdlog::info("rdzv: generation 0 forms with {} of {}..{} nodes (node ranks: {})",
                 membership_.members(), membership_.min_nodes(), membership_.max_nodes(),
                 membership_.ranks_text());
  // RANK = node_rank * nproc_per_node + local rank holds only when every node runs as many
  // workers; otherwise ranks overlap or leave gaps and init_process_group hangs. Refused on every
  // node (78), naming each node's count (docs/coordination.md).
  if (const std::string why = unequal_nproc(); !why.empty())
    return machine_.refuse(node_failure(0, 0, ErrorKind::kConfig, why));
  // Nodes that differ (versions, GPU model, NCCL_*/FI_* settings) hang at the first collective or
  // run slow: refused the same way, each difference named per node (docs/coordination.md).
  if (const std::string why = unequal_fingerprints(); !why.empty())
    return machine_.refuse(node_failure(0, 0, ErrorKind::kConfig, why));
  machine_.all_present(time_.now());
}

std::string RdzvCoordinator::unequal_nproc() const {
  std::string counts;
  std::set<int> seen;
  for (std::size_t n = 0; n < agents_.size(); ++n) {
    if (!agents_[n] || agents_[n]->nproc_per_node <= 0) continue;
    seen.insert(agents_[n]->nproc_per_node);
    counts += (counts.empty() ? "" : ", ") + ("node " + std::to_string(n)) + ": " +
              std::to_string(agents_[n]->nproc_per_node);
  }
  if (seen.size() <= 1) return "";
  return "the nodes run different numbers of workers (--nproc-per-node: " + counts +
         "): expected the same on every node (set --nproc-per-node explicitly)";
}

std::string RdzvCoordinator::unequal_fingerprints() const {
  if (!config_.check_fingerprints) return "";
  std::vector<rdzv::NodePrint> nodes;
  for (std::size_t n = 0; n < agents_.size(); ++n)
    if (agents_[n]) nodes.push_back({static_cast<int>(n), agents_[n]->who.host, agents_[n]->print});
  return rdzv::fingerprint_mismatch(nodes);
}

void RdzvCoordinator::begin_preflight() {
  spdlog::info("rdzv: every node joined; preflight on {} nodes before generation 0",
               membership_.members());
  broadcast(MsgType::kPreflight, {{"unique_id", config_.preflight_unique_id.value_or("")}});
}

void RdzvCoordinator::start(const GenerationPlan& plan) {
  spdlog::info("rdzv: starting generation {} on {} nodes (MASTER_PORT {})", plan.generation,
               membership_.members(), plan.master_port);
  json body = {{"master_port", plan.master_port}};
  if (!plan.retried_by.empty()) body["retried_by"] = plan.retried_by;
  if (!plan.step_over.empty()) body["step_over"] = plan.step_over.substr(0, rdzv::kMaxText);
  if (membership_.fixed()) return broadcast(MsgType::kStart, body);
  // Elastic, or with spares: each member its own node rank of this generation, and the node
  // count; a spare gets nothing and waits.
  body["nnodes"] = membership_.members();
  for (std::size_t slot = 0; slot < agents_.size(); ++slot) {
    const auto rank = membership_.node_rank(static_cast<int>(slot));
    if (!agents_[slot] || !rank) continue;
    body["node_rank"] = *rank;
    agents_[slot]->conn->send(MsgType::kStart, 0, machine_.generation(), body);
  }
}

void RdzvCoordinator::stop(const NodeFailure& f) {
  spdlog::warn("rdzv: generation {} {} node {}: {}; stopping every node", f.generation,
               f.exit_code == exit_code_of(ErrorKind::kLost) && !membership_.fixed()
                   ? "re-forms for"
                   : "failed on",
               f.node_rank, f.summary);
  // Only the generation's members run workers; a node waiting to join has none to stop.
  for (std::size_t slot = 0; slot < agents_.size(); ++slot)
    if (agents_[slot] && membership_.member(static_cast<int>(slot)))
      agents_[slot]->conn->send(MsgType::kStop, 0, machine_.generation(), rdzv::failure_body(f));
}

void RdzvCoordinator::arm_backoff(LoopClock::duration pause) {
  backoff_.expires_after(pause);
  backoff_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (ec || w.expired()) return;
    form_next();
    machine_.backoff_over(time_.now());
  });
}

void RdzvCoordinator::set_preflight_unique_id(const std::string& hex) {
  config_.preflight_unique_id = hex;
  machine_.set_preflight(true);
}

int RdzvCoordinator::fresh_port() { return kernel_free_port(config_.bind_addr); }

void RdzvCoordinator::broadcast(MsgType type, const json& body) {
  for (auto& a : agents_)
    if (a) a->conn->send(type, 0, machine_.generation(), body);
}

void RdzvCoordinator::finish(const JobEnd& end) {
  MsgType type = MsgType::kDone;
  json body = json::object();
  if (end.kind == JobEnd::Kind::kGiveUp) {
    type = MsgType::kGiveUp;
    body = rdzv::failure_body(end.failure);
  } else if (end.kind == JobEnd::Kind::kLost) {
    type = MsgType::kLost;
    body = {{"why", end.why}};
    if (end.signal > 0) body["signal"] = end.signal;
  }
  spdlog::log(type == MsgType::kDone ? spdlog::level::info : spdlog::level::warn, "rdzv: {}{}",
              type == MsgType::kLost ? "job lost: " : "", end.why);
  broadcast(type, body);
  boost::system::error_code ec;
  acceptor_.close(ec);
  ticker_.cancel();
  rdzv_deadline_.cancel();
  backoff_.cancel();
  accept_retry_.cancel();
  last_call_.cancel();
  pending_.close_all();
  for (auto& a : agents_)
    if (a) a->conn->close(/*after_flush=*/true);
}

void RdzvCoordinator::lost(const std::string& why, int signal) { machine_.lost(why, signal); }

void RdzvCoordinator::on_agent_gone(int rank, const std::string& why) {
  if (finished()) return;
  if (machine_.generation() == 0 && machine_.state() == State::kGathering) {
    spdlog::warn("rdzv: node {} disconnected before the job started ({}); waiting for it again",
                 rank, why);
    agents_[rank].reset();
    membership_.left(rank);
    return;
  }
  on_member_lost(rank, "node " + std::to_string(rank) + " lost: " + why);
}

void RdzvCoordinator::tick() {
  if (finished()) return;
  const auto now = time_.now();
  for (size_t r = 0; r < agents_.size(); ++r) {
    if (!agents_[r]) continue;
    if (now - agents_[r]->last_seen > config_.peer_timeout) {
      on_member_lost(static_cast<int>(r), "node " + std::to_string(r) + " silent for more than " +
                                              std::to_string(config_.peer_timeout.count()) +
                                              " ms (--peer-timeout)");
      if (finished()) return;
      continue;
    }
    agents_[r]->conn->send(MsgType::kHeartbeat, 0, machine_.generation());
  }
  ticker_.expires_after(tick_interval(config_.peer_timeout));
  ticker_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (!ec && !w.expired()) tick();
  });
}

void RdzvCoordinator::when_flushed(std::function<void()> fn) {
  flush_poll(std::move(fn), time_.now() + std::chrono::seconds(2));
}

bool RdzvCoordinator::flushed() const {
  return std::all_of(agents_.begin(), agents_.end(), [](auto& a) { return !a || a->conn->idle(); });
}

void RdzvCoordinator::flush_poll(std::function<void()> fn, Clock::time_point cap) {
  if (flushed() || time_.now() >= cap) return asio::post(io_, std::move(fn));
  auto t = std::make_shared<LoopTimer>(io_, time_);
  t->expires_after(std::chrono::milliseconds(5));
  t->async_wait([this, t, fn = std::move(fn), cap,
                 w = std::weak_ptr<bool>(alive_)](boost::system::error_code) mutable {
    if (w.expired()) return fn();
    flush_poll(std::move(fn), cap);
  });
}

}  // namespace tv

namespace tv {

// Elastic membership (docs/coordination.md, "Elastic membership"). The rule of who is in a
// generation is rdzv::Membership's; here it meets the sockets and the job state machine.

bool RdzvCoordinator::admits_late(int rank) const {
  if (membership_.fixed() || finished()) return false;
  if (rank == rdzv::kRankUnassigned) return true;
  return rank >= 0 && rank < static_cast<int>(agents_.size()) && !agents_[rank];
}

std::string RdzvCoordinator::late_mismatch() const {
  if (machine_.generation() == 0 && machine_.state() == State::kGathering) return "";
  if (std::string why = unequal_nproc(); !why.empty()) return why;
  return unequal_fingerprints();
}

void RdzvCoordinator::on_member_lost(int rank, const std::string& why) {
  if (membership_.fixed()) return lost(why);
  if (agents_[rank]) agents_[rank]->conn->close();
  if (machine_.state() == State::kGathering && machine_.generation() == 0)
    return on_agent_gone(rank, why);  // frees its slot; it may join again
  agents_[rank].reset();
  assigned_[rank].reset();  // its rank may go to a node that joins later
  const bool was_member = membership_.member(rank);
  membership_.left(rank);
  if (membership_.with_spares()) return on_spared_loss(rank, why, was_member);
  if (!membership_.enough())
    return lost(why + "; " + std::to_string(membership_.present()) +
                " node(s) remain, fewer than the minimum " +
                std::to_string(membership_.min_nodes()) + " (--nnodes " +
                std::to_string(membership_.min_nodes()) + ":" +
                std::to_string(membership_.max_nodes()) + ")");
  spdlog::warn("rdzv: {}; {} node(s) remain (--nnodes {}:{}){}", why, membership_.present(),
               membership_.min_nodes(), membership_.max_nodes(),
               was_member ? ": the next generation forms without it" : "");
  if (was_member) machine_.member_lost(rank, why, membership_.members());
}

void RdzvCoordinator::arm_last_call() {
  if (last_call_armed_) return;
  last_call_armed_ = true;
  spdlog::info("rdzv: {} of {} nodes present; last call for more: {} ms (--rdzv-last-call)",
               membership_.present(), membership_.max_nodes(), config_.last_call.count());
  last_call_.expires_after(config_.last_call);
  last_call_.async_wait([this, w = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (!ec && !w.expired()) on_last_call();
  });
}

void RdzvCoordinator::on_last_call() {
  last_call_armed_ = false;
  if (finished()) return;
  if (machine_.state() == State::kGathering && machine_.generation() == 0) {
    if (membership_.enough()) form_and_start();  // else a node left meanwhile: wait again
    return;
  }
  // A node waiting while a generation runs: elastic growth; a spare waits for a loss instead.
  if (!membership_.elastic() || machine_.state() != State::kRunning || membership_.waiting() == 0)
    return;
  for (std::size_t slot = 0; slot < agents_.size(); ++slot)
    if (agents_[slot] && !membership_.member(static_cast<int>(slot)))
      return machine_.reform(static_cast<int>(slot),
                             std::to_string(membership_.waiting()) +
                                 " node(s) joined: the generation re-forms with " +
                                 std::to_string(membership_.present()) + " nodes");
}

// torchrun's agent restarts its workers as soon as it sees nodes waiting
// (SimpleElasticAgent._invoke_run: num_nodes_waiting > 0): here the same, after the last-call
// window (several nodes arriving together cost one restart), or at once when the job is full.
void RdzvCoordinator::maybe_grow() {
  if (!membership_.elastic() || membership_.waiting() == 0) return;
  if (machine_.state() != State::kRunning) return;  // the next formation takes them anyway
  if (membership_.full()) {
    last_call_.cancel();
    last_call_armed_ = false;
    return on_last_call();
  }
  arm_last_call();
}

// Hot spares (docs/coordination.md, "Hot spare nodes"): a lost member's rank goes to a spare at
// the next formation (rdzv::Membership's rule); a lost spare changes nothing; no spare left: 75.
void RdzvCoordinator::on_spared_loss(int rank, const std::string& why, bool was_member) {
  const int ready = membership_.waiting();
  if (!was_member) {
    spdlog::warn("rdzv: {} (a spare); {} spare node(s) ready (--spare-nodes {})", why, ready,
                 membership_.spares());
    return;
  }
  if (!membership_.enough())
    return lost(why + "; no spare node left to take its rank (--spare-nodes " +
                std::to_string(membership_.spares()) + ")");
  spdlog::warn("rdzv: {}; a spare node takes its rank at the next generation ({} ready)", why,
               ready);
  machine_.member_lost(rank, why, membership_.members());
}

// A spare, or an elastic node waiting to be taken in, after generation 0 formed: it runs no worker,
// so its leaving (its pod deleted, its run stopped) is its own and the job goes on.
bool RdzvCoordinator::waits_outside(int rank) const {
  const bool formed = machine_.generation() > 0 || machine_.state() != State::kGathering;
  return formed && !membership_.fixed() && !membership_.member(rank);
}

void RdzvCoordinator::waiting_node_left(int rank, const std::string& why) {
  if (agents_[rank]) agents_[rank]->conn->close(/*after_flush=*/true);
  agents_[rank].reset();
  assigned_[rank].reset();
  membership_.left(rank);
  spdlog::info("rdzv: node {} left ({}); it ran no worker: the job goes on ({} node(s) waiting)",
               rank, why, membership_.waiting());
}

void RdzvCoordinator::form_next() {
  if (membership_.fixed()) return;
  membership_.form();
  machine_.set_nodes(membership_.members());
  spdlog::info("rdzv: generation {} forms with {} nodes (node ranks: {})",
               machine_.generation() + 1, membership_.members(), membership_.ranks_text());
}

}  // namespace tv
