// The coordinator's unauthenticated connections: accepted, sent a hello, not yet joined
// (docs/coordination.md, "Security"). Strangers must never keep the job's own nodes out:
//   - each connection has a handshake deadline (a valid join within kHandshake, clamped by the
//     peer timeout), enforced by its own timer, so a silent or slowloris peer is cut off on time;
//   - at most limits.per_source per source address and limits.total in all (pending_limits: the
//     job's whole --nnodes joining at once, plus 64 per address and 256 in all for strangers, so a
//     join flood of every node, even from one address, evicts none of them); a new connection is
//     never refused for lack of room: the oldest connection of its own source makes way when that
//     source is at its limit, otherwise the oldest of the source holding the most. A flood from one
//     address therefore only ever evicts itself (or the biggest flooder), and the newest
//     connection (a node retrying) always gets its handshake;
//   - closing them is logged a bounded number of times per source, never once per connection.
// The deadlines are LoopTimers of the coordinator's LoopTime (common/loop_time.h).
// Single-threaded (the io_context's thread).
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/loop_time.h"
#include "launcher/rendezvous/rdzv_connection.h"

namespace tv::rdzv {

// Which pending connection to close so that one more from `source` fits: nullopt while there is
// room; else an index into `sources` (oldest first): the oldest of `source` when it holds
// `per_source`, otherwise the oldest of the source that holds the most.
std::optional<size_t> eviction_victim(const std::vector<std::string>& sources,
                                      const std::string& source, size_t max_total,
                                      size_t per_source);

struct PendingLimits {
  size_t total = 256;
  size_t per_source = 64;
};
// The limits of a job of `nnodes` nodes: every node at once (each from its own address, or all of
// them from one: one host, one NAT), plus room for strangers (64 per address, 256 in all).
PendingLimits pending_limits(int nnodes);

// The handshake deadline for a peer timeout: 5 s, or the peer timeout when shorter (at least 1 s).
std::chrono::milliseconds handshake_deadline(std::chrono::milliseconds peer_timeout);

class PendingConnections {
 public:
  using Conn = std::shared_ptr<Connection>;
  static constexpr int kLoggedPerSource = 10;

  PendingConnections(boost::asio::io_context& io, std::chrono::milliseconds deadline,
                     PendingLimits limits, LoopTime& time = real_loop_time());
  ~PendingConnections();

  // Admits `conn` (from address `source`), evicting an older one first when full.
  void add(const Conn& conn, const std::string& source);
  // `conn` joined: forget it, leave it open.
  void release(const Conn& conn);
  // Closes `conn` and forgets it; `why` is logged (a bounded number of times per source).
  // By value: the caller's reference may be the entry that is erased here.
  void drop(Conn conn, const std::string& why);
  void close_all();
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Conn conn;
    std::string source;
    std::shared_ptr<LoopTimer> timer;
  };
  void log_closed(const std::string& source, const std::string& peer, const std::string& why);
  std::list<Entry>::iterator find(const Conn& conn);

  boost::asio::io_context& io_;
  LoopTime& time_;
  std::chrono::milliseconds deadline_;
  PendingLimits limits_;
  std::list<Entry> entries_;                // oldest first
  std::map<std::string, uint64_t> closed_;  // per source, bounded by kMaxSourcesLogged
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace tv::rdzv
