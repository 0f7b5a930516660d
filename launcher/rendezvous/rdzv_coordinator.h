// The coordinator that node rank 0 serves for the node agents (docs/coordination.md).
//
// State machine of the whole job:
//   gathering(g) --all nnodes joined (g = 0) / all stopped + backoff (g > 0)--> running(g)
//   gathering(0) --all joined, preflight_unique_id set--> preflight --every node passed-->
//             running(0) | --all reported, one failed--> give-up (exit 69, the lowest failing
//             node's summary)
//   running(g) --any failure--> stopping(g) --all stopped--> gathering(g+1) | give-up
//   running(g) --all succeeded--> done
//   any state --node silent for peer_timeout, connection lost or left, or rendezvous timeout
//             before generation 0--> lost
// Restarts are counted here, once for the whole job (generation g is restart g), with
// RestartPolicy's limit and backoff. Generation 0 uses base_master_port; every later generation
// a fresh port that the coordinator gets from the kernel (bind port 0 on bind_addr, release it),
// the same for every node, because the old port may still be held by a dying TCPStore.
//
// Unauthenticated connections (anything before a valid Join) are closed at the first bad frame
// or after a handshake timeout, logged once each, and change nothing. At most kMaxPending of
// them at a time. Single-threaded on the io_context; nothing blocks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "common/result.h"
#include "launcher/rendezvous/network_cluster.h"
#include "launcher/rendezvous/rdzv_connection.h"

namespace tv {

class RdzvCoordinator {
 public:
  static constexpr size_t kMaxPending = 256;

  RdzvCoordinator(boost::asio::io_context& io, const NetworkClusterConfig& config);
  ~RdzvCoordinator();

  // Binds bind_addr:rdzv_port (0: any) and starts accepting. Error: exit 75 with the address.
  Status listen();
  int port() const { return port_; }
  // Tells every agent the job is lost (why), stops accepting.
  void shutdown(const std::string& why);
  // `fn` once every queued frame is written (or after a 2 s cap), on the io_context.
  void when_flushed(std::function<void()> fn);

  // Introspection for tests and figures.
  int generation() const { return gen_; }
  int joined() const;

 private:
  enum class State { kGathering, kPreflight, kBackoff, kRunning, kStopping, kFinished };
  using Conn = std::shared_ptr<rdzv::Connection>;
  using Clock = std::chrono::steady_clock;
  struct Agent {
    Conn conn;
    Clock::time_point last_seen;
  };

  void accept();
  void on_accepted(boost::asio::ip::tcp::socket socket);
  void on_join(const Conn& conn, const rdzv::Message& m, const rdzv::Nonce& nonce);
  void on_agent_message(int rank, const rdzv::Message& m);
  void on_agent_gone(int rank, const std::string& why);
  void on_failure(int rank, const rdzv::Message& m);
  void on_stopped(int rank);
  void on_probe_result(int rank, const rdzv::Message& m);
  void try_start();
  void after_stop();
  int next_master_port();
  void broadcast(rdzv::MsgType type, const nlohmann::json& body);
  void finish(rdzv::MsgType type, const nlohmann::json& body, const std::string& log);
  void lost(const std::string& why);
  void tick();
  void drop_pending(const Conn& conn);
  void flush_poll(std::function<void()> fn, Clock::time_point cap);

  boost::asio::io_context& io_;
  NetworkClusterConfig config_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer ticker_;
  boost::asio::steady_timer rdzv_deadline_;
  boost::asio::steady_timer backoff_;
  int port_ = 0;
  std::vector<std::pair<Conn, Clock::time_point>> pending_;  // with their handshake deadlines
  std::vector<std::optional<Agent>> agents_;                 // by node rank
  State state_ = State::kGathering;
  int gen_ = 0;
  int master_port_ = 0;
  std::optional<NodeFailure> root_cause_;
  std::set<int> succeeded_;
  std::set<int> stopped_;
  std::map<int, PreflightVerdict> probe_results_;  // by node rank, the first report of each
  bool preflight_passed_ = false;
  bool warned_full_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tv
