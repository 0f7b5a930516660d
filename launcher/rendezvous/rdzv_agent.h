// A node agent's side of the rendezvous (docs/coordination.md): joins the coordinator on node 0,
// hands its decisions to the owner, reports this node's results, and watches the coordinator.
//
// The coordinator may first run a preflight phase (on_preflight); the deadline then no longer
// applies (the probe is bounded by its own timeouts, the coordinator by peer_timeout).
// Joining retries name resolution, connection and handshake with backoff (0.1 s doubling to 2 s)
// until rdzv_timeout; until the first Start arrives the same deadline applies, then `on_lost`.
// Once joined, a closed connection or a coordinator silent for peer_timeout is `on_lost`.
// Exactly one of on_done / on_give_up / on_lost fires, once; then the agent is finished.
// Its timers are LoopTimers and every "now" is its LoopTime's (common/loop_time.h).
// Single-threaded on the io_context; nothing blocks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <memory>
#include <vector>

#include "common/loop_time.h"
#include "launcher/rendezvous/network_cluster.h"
#include "launcher/rendezvous/rdzv_connection.h"

namespace tv {

class RdzvAgent {
 public:
  struct Handlers {
    std::function<void(const GenerationPlan&)> on_start;
    std::function<void(const NodeFailure&)> on_stop;
    std::function<void()> on_done;
    std::function<void(const NodeFailure&)> on_give_up;
    std::function<void(const std::string& why, int signal)> on_lost;  // signal: see Cluster::Events
    // The preflight phase (before generation 0): run the probe with this ncclUniqueId (hex, or
    // "" when node 0 has none), then send_probe_result.
    std::function<void(const std::string& unique_id)> on_preflight;
    // A join without a rank (config.node_rank == rdzv::kRankUnassigned) ends here: the rank the
    // coordinator assigned; the agent is finished (the node joins again with it).
    std::function<void(int node_rank)> on_rank;
    // Optional: each attempt that failed before a join (why); the agent retries unless it is
    // destroyed.
    std::function<void(const std::string& why)> on_retry;
  };

  RdzvAgent(boost::asio::io_context& io, const NetworkClusterConfig& config, Handlers handlers,
            LoopTime& time = real_loop_time());
  ~RdzvAgent();

  void join();
  void send_success(int generation);
  void send_failure(const NodeFailure& failure);
  void send_stopped(int generation, const std::vector<RankEvidence>& ranks = {},
                    std::optional<std::int64_t> step = std::nullopt);
  void send_probe_result(const PreflightVerdict& verdict);
  // Tells the coordinator and closes (once the frame is written). No handler fires afterwards.
  void leave(const std::string& why, int signal);
  bool flushed() const { return !conn_ || conn_->idle(); }  // nothing queued to node 0

 private:
  using Clock = LoopClock;
  enum class State { kConnecting, kHandshake, kJoined, kFinished };

  void attempt();
  void connect(const std::vector<boost::asio::ip::tcp::endpoint>& endpoints);
  void retry(const std::string& why);
  void on_connected(boost::asio::ip::tcp::socket socket);
  void on_handshake(const rdzv::Message& m);
  void on_message(const rdzv::Message& m);
  void on_closed(const std::string& why);
  void tick();
  void finish();
  void send(rdzv::MsgType type, int generation, nlohmann::json body = nlohmann::json::object());
  std::string where() const;
  std::string me() const;  // "node 2", or "this node (no rank yet)"

  boost::asio::io_context& io_;
  LoopTime& time_;
  NetworkClusterConfig config_;
  Handlers handlers_;
  boost::asio::ip::tcp::resolver resolver_;
  LoopTimer retry_timer_;
  LoopTimer deadline_;
  LoopTimer ticker_;
  std::shared_ptr<boost::asio::ip::tcp::socket> connecting_;
  std::shared_ptr<rdzv::Connection> conn_;
  State state_ = State::kConnecting;
  bool started_ = false;  // a Start has arrived
  std::chrono::milliseconds delay_{100};
  Clock::time_point handshake_deadline_;
  Clock::time_point last_seen_;
  rdzv::Nonce nonce_{};
  std::string last_error_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tv
