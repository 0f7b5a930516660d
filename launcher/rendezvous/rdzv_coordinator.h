// The coordinator that node rank 0 serves for the node agents (docs/coordination.md).
//
// The job's decisions are JobStateMachine's (launcher/job/job_state.h), the same state
// machine a one-node job runs in-process: restarts counted once for the whole job, their pauses,
// a fresh MASTER_PORT for every restart (from the kernel, on bind_addr), the preflight phase.
// The coordinator feeds it what the agents report and relays its actions to every node; it adds
// only what needs a network: joining, the rendezvous deadline, and a node that is lost (silent
// for peer_timeout, its connection closed or left) -> lost everywhere.
//
// Unauthenticated connections (anything before a valid Join) are closed at the first bad frame
// or after a short handshake deadline, and change nothing; rdzv::PendingConnections bounds them
// per source address and in all without ever refusing a newcomer
// (launcher/rendezvous/rdzv_pending.h); their limits grow with --nnodes, so every node joining at
// once fits. Node 0 holds a descriptor per node (twice that while they all join): listen() raises
// its soft RLIMIT_NOFILE to the hard limit and says so (common/open_files.h), and refuses (71) a
// limit below what --nnodes need at the least (rdzv_descriptors.h); out of descriptors,
// it accepts again after a pause instead of spinning. Its deadlines, ticker and pauses are
// LoopTimers and every "now" is its LoopTime's (common/loop_time.h). Single-threaded on the
// io_context; nothing blocks.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/loop_time.h"
#include "common/result.h"
#include "launcher/job/job_state.h"
#include "launcher/rendezvous/membership.h"
#include "launcher/rendezvous/network_cluster.h"
#include "launcher/rendezvous/rdzv_connection.h"
#include "launcher/rendezvous/rdzv_pending.h"

namespace tv {

class RdzvCoordinator final : private JobActions {
 public:
  RdzvCoordinator(boost::asio::io_context& io, const NetworkClusterConfig& config,
                  LoopTime& time = real_loop_time());
  ~RdzvCoordinator() override;

  // Binds bind_addr:rdzv_port (0: any) and starts accepting. Error: exit 75 with the address.
  Status listen();
  int port() const { return port_; }
  bool listening() const { return port_ != 0; }
  // The last listen() failed because the address and port are taken (another node hosts).
  bool address_in_use() const { return address_in_use_; }
  // The preflight phase, asked after the coordinator was made (a node that learnt it is node 0
  // by binding the port, docs/coordination.md, "Node ranks"); before any node joined.
  void set_preflight_unique_id(const std::string& hex);
  // The job is lost (why; `signal`: the stop signal node 0 left on, 0 none): every agent is told,
  // nothing more is accepted.
  void lost(const std::string& why, int signal = 0);
  // `fn` once every queued frame is written (or after a 2 s cap), on the io_context.
  void when_flushed(std::function<void()> fn);
  bool flushed() const;  // every agent's connection has nothing queued

  // Introspection for tests and figures.
  int generation() const { return machine_.generation(); }
  // The job's root cause of each judged generation (JobStateMachine::root_causes).
  std::vector<NodeFailure> root_causes() const { return machine_.root_causes(); }
  int joined() const;

 private:
  using State = JobStateMachine::State;
  using Conn = std::shared_ptr<rdzv::Connection>;
  using Clock = LoopClock;
  struct Agent {
    Conn conn;
    Clock::time_point last_seen;
    int nproc_per_node = 0;  // from its join (0: not said)
    rdzv::NodeIdentity who;
    std::optional<rdzv::Fingerprint> print;  // from its join (none: an older trainvisor)
  };
  // A node that asked for a rank and got it; it joins again with that rank.
  struct Assigned {
    rdzv::NodeIdentity who;
    std::string address;
  };

  void accept();
  void accept_later(const boost::system::error_code& ec);
  void on_accepted(boost::asio::ip::tcp::socket socket);
  // "" when every node that said runs as many workers; else each node's count.
  std::string unequal_nproc() const;
  // "" when every node's fingerprint is the same (or the check is off); else each difference.
  std::string unequal_fingerprints() const;
  void refuse_join(const Conn& conn, int rank, const std::string& why);
  bool held_by_another(int rank, const rdzv::Message& join) const;
  void late_clash(const Conn& conn, int rank, const rdzv::NodeIdentity& who);
  void on_join(const Conn& conn, const rdzv::Message& m, const rdzv::Nonce& nonce);
  // A join without a rank: the next free rank in join order (rank 0 is this node's), answered
  // with a welcome, then the connection is closed; the node joins again with it.
  void assign_rank(const Conn& conn, const rdzv::NodeIdentity& who);
  // A join with `rank`: "" when `who` may hold it (a stale connection of the same node is
  // replaced); else why not, and then the whole job gives up (78), every node told why.
  std::string rank_clash(int rank, const rdzv::NodeIdentity& who, const std::string& address);
  void on_agent_message(int rank, const rdzv::Message& m);
  void on_agent_gone(int rank, const std::string& why);
  // Elastic membership (membership.h): a node silent or disconnected is dropped; the job is lost
  // only below MIN. A fixed world: lost.
  void on_member_lost(int rank, const std::string& why);
  // With spares: a lost member's rank goes to a spare at the next formation; none left: lost.
  void on_spared_loss(int rank, const std::string& why, bool was_member);
  // A spare or a waiting elastic node that leaves after generation 0 formed: its own, not the
  // job's.
  bool waits_outside(int rank) const;
  void waiting_node_left(int rank, const std::string& why);
  // A node admitted after generation 0 started (elastic): "" or why it cannot run beside the rest.
  std::string late_mismatch() const;
  bool admits_late(int rank) const;
  void arm_last_call();
  void on_last_call();
  void form_and_start();  // generation 0: the present nodes are its members
  void maybe_grow();  // nodes waiting while a generation runs: re-form (now, or after last call)
  void form_next();   // before a later generation: the present nodes are its members
  void on_probe_result(int rank, const rdzv::Message& m);
  void try_start();
  void broadcast(rdzv::MsgType type, const nlohmann::json& body);
  bool finished() const { return machine_.state() == State::kFinished; }

  // JobActions: the machine's decisions, relayed to every node.
  void begin_preflight() override;
  void start(const GenerationPlan& plan) override;
  void stop(const NodeFailure& root_cause) override;
  void arm_backoff(LoopClock::duration pause) override;
  void finish(const JobEnd& end) override;
  int fresh_port() override;
  void tick();
  void flush_poll(std::function<void()> fn, Clock::time_point cap);

  boost::asio::io_context& io_;
  LoopTime& time_;
  NetworkClusterConfig config_;
  boost::asio::ip::tcp::acceptor acceptor_;
  LoopTimer ticker_;
  LoopTimer rdzv_deadline_;
  LoopTimer backoff_;
  LoopTimer accept_retry_;  // out of descriptors: accept again shortly
  LoopTimer last_call_;     // elastic: the last-call window (armed: last_call_armed_)
  bool last_call_armed_ = false;
  bool told_out_of_fds_ = false;
  bool address_in_use_ = false;
  int port_ = 0;
  rdzv::PendingConnections pending_;
  std::vector<std::optional<Agent>> agents_;       // by node rank
  std::vector<std::optional<Assigned>> assigned_;  // by node rank: given in join order
  rdzv::Membership membership_;  // who is in each generation, and their node ranks
  JobStateMachine machine_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tv
