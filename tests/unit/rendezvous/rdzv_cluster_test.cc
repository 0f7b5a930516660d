// NetworkCluster end to end in one process: the coordinator and several agents on 127.0.0.1,
// real sockets, one event loop (a second one plays a node whose process froze), on simulated time
// (tests/unit/rendezvous/sim_loops.h): the rendezvous deadline, the peer timeout, the handshake
// deadline and the agent's join retries fire at their simulated instants, never after a real wait.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <csignal>

#include "launcher/rendezvous/network_cluster.h"
#include "launcher/rendezvous/rdzv_protocol.h"
#include "tests/unit/rendezvous/sim_loops.h"

namespace tv {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

constexpr int kBasePort = 29500;
constexpr auto kPeerTimeout = 2000ms;
constexpr auto kCheck = kPeerTimeout / 4;  // the coordinator and the agents check their peers

// What one node's supervisor saw; it stops its (imaginary) workers at once when told to.
struct Node {
  std::unique_ptr<NetworkCluster> cluster;
  testing::SimLoops::Loop* loop = nullptr;
  std::vector<GenerationPlan> starts;
  std::vector<NodeFailure> stops;
  bool done = false;
  std::optional<NodeFailure> gave_up;
  std::optional<std::string> lost;
  int lost_signal = 0;
  int terminal_events = 0;
  bool stops_at_once = true;  // reports stopped as soon as it is told to stop
  bool finished() const { return terminal_events > 0; }
};

class RdzvCluster : public ::testing::Test {
 protected:
  NetworkClusterConfig config(int rank, int nnodes) {
    NetworkClusterConfig c;
    c.node_rank = rank;
    c.nnodes = nnodes;
    c.master_addr = "127.0.0.1";
    c.bind_addr = "127.0.0.1";
    c.rdzv_port = rank == 0 ? 0 : port_;
    c.base_master_port = kBasePort;
    c.rdzv_timeout = 20s;
    c.peer_timeout = kPeerTimeout;
    c.token = "unit-test-token";
    c.policy.max_restarts = 3;
    return c;
  }

  Node& add(NetworkClusterConfig c, testing::SimLoops::Loop* loop = nullptr) {
    auto* l = loop ? loop : &loops_.main();
    Node& n = adopt(std::make_unique<NetworkCluster>(l->io, c, l->time), l);
    if (c.node_rank == 0) port_ = n.cluster->coordinator_port();
    return n;
  }

  // A node of an existing cluster (one that already asked for its rank, say), joined now.
  Node& adopt(std::unique_ptr<NetworkCluster> cluster, testing::SimLoops::Loop* loop = nullptr) {
    auto node = std::make_unique<Node>();
    node->loop = loop ? loop : &loops_.main();
    node->cluster = std::move(cluster);
    Node* n = node.get();
    Cluster::Events ev;
    ev.start = [n](const GenerationPlan& p) { n->starts.push_back(p); };
    ev.stop = [n](const NodeFailure& f) {
      n->stops.push_back(f);
      if (n->stops_at_once)
        asio::post(n->loop->io,
                   [n, g = f.generation] { n->cluster->report_stopped(g, {}, std::nullopt); });
    };
    ev.done = [n] { n->done = true, ++n->terminal_events; };
    ev.give_up = [n](const NodeFailure& f) { n->gave_up = f, ++n->terminal_events; };
    ev.lost = [n](const std::string& why, int signal) {
      n->lost = why, n->lost_signal = signal, ++n->terminal_events;
    };
    n->cluster->join(ev);
    nodes_.push_back(std::move(node));
    return *n;
  }

  // Node 0 first (its port is then known), then the others.
  void add_all(int nnodes, std::function<void(NetworkClusterConfig&)> tweak = {}) {
    for (int r = 0; r < nnodes; ++r) {
      auto c = config(r, nnodes);
      if (tweak) tweak(c);
      add(c);
    }
  }

  // Until `pred` holds, moving simulated time at most `limit` (the rendezvous deadline is 20 s).
  bool run_until(const std::function<bool()>& pred, LoopClock::duration limit = 20s) {
    return loops_.advance_until(pred, limit);
  }

  // The first check after now of a loop that started checking at `t0`.
  LoopClock::time_point next_check(LoopClock::time_point t0) {
    return t0 + ((loops_.now() - t0) / kCheck + 1) * kCheck;
  }

  bool all(const std::function<bool(const Node&)>& pred) {
    return std::all_of(nodes_.begin(), nodes_.end(), [&](auto& n) { return pred(*n); });
  }
  bool all_started(size_t generations) {
    return all([&](const Node& n) { return n.starts.size() >= generations; });
  }

  NodeFailure failure(int gen, int rank, int code) {
    return node_failure(gen, rank, code,
                        "rank " + std::to_string(rank * 2 + 1) + " (node " + std::to_string(rank) +
                            "): exit " + std::to_string(code) + ": boom");
  }

  // A node's workers fail in `gen`: report, then (workers gone) stopped.
  void fail_node(int rank, int gen, int code) {
    nodes_[rank]->cluster->report_failure(failure(gen, rank, code));
    nodes_[rank]->cluster->report_stopped(gen, {}, std::nullopt);
  }

  testing::SimLoops loops_;  // before the nodes: their timers go first
  asio::io_context& io_ = loops_.main().io;
  int port_ = 0;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(RdzvCluster, BarrierStartsEveryNodeThenSuccessBarrierEndsJob) {
  add_all(3);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  for (auto& n : nodes_) {
    ASSERT_EQ(n->starts.size(), 1u);
    EXPECT_EQ(n->starts[0].generation, 0);
    EXPECT_EQ(n->starts[0].generation, 0);
    EXPECT_EQ(n->starts[0].master_port, kBasePort);
  }
  nodes_[0]->cluster->report_success(0);
  nodes_[1]->cluster->report_success(0);
  loops_.advance(10s);  // not done: node 2 still runs
  EXPECT_FALSE(nodes_[0]->finished());
  nodes_[2]->cluster->report_success(0);
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return n.finished(); }); }));
  EXPECT_TRUE(all([](const Node& n) { return n.done && n.terminal_events == 1; }));
}

TEST_F(RdzvCluster, FailureOnLastNodeRestartsAllWithSharedCountAndPort) {
  add_all(3);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  fail_node(2, 0, 7);
  ASSERT_TRUE(run_until([&] { return all_started(2); }));
  for (auto& n : nodes_) {
    ASSERT_EQ(n->stops.size(), 1u);
    EXPECT_EQ(n->stops[0].node_rank, 2);
    EXPECT_EQ(n->stops[0].exit_code, 7);
    ASSERT_EQ(n->starts.size(), 2u);
    EXPECT_EQ(n->starts[1].generation, 1);
    EXPECT_EQ(n->starts[1].generation, 1);
    EXPECT_EQ(n->starts[1].master_port, nodes_[0]->starts[1].master_port);
  }
  EXPECT_NE(nodes_[0]->starts[1].master_port, kBasePort);
  for (auto& n : nodes_) n->cluster->report_success(1);
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return n.finished(); }); }));
  EXPECT_TRUE(all([](const Node& n) { return n.done; }));
}

TEST_F(RdzvCluster, NoRestartUntilEveryNodeStopped) {
  add_all(2);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  // Node 1 fails but its workers take their time to go; node 0 stops at once.
  nodes_[1]->stops_at_once = false;
  nodes_[1]->cluster->report_failure(failure(0, 1, 1));
  loops_.advance(10s);
  EXPECT_EQ(nodes_[0]->starts.size(), 1u);
  nodes_[1]->cluster->report_stopped(0, {}, std::nullopt);
  ASSERT_TRUE(run_until([&] { return all_started(2); }));
}

TEST_F(RdzvCluster, RestartsExhaustedGivesUpEverywhereWithRootCause) {
  add_all(2, [](NetworkClusterConfig& c) { c.policy.max_restarts = 1; });
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  fail_node(1, 0, 3);
  ASSERT_TRUE(run_until([&] { return all_started(2); }));
  fail_node(0, 1, 9);
  fail_node(1, 1, 4);  // later: not the root cause
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return n.finished(); }); }));
  for (auto& n : nodes_) {
    ASSERT_TRUE(n->gave_up);
    EXPECT_EQ(n->gave_up->exit_code, 9);
    EXPECT_EQ(n->gave_up->node_rank, 0);
    EXPECT_EQ(n->gave_up->generation, 1);
    EXPECT_EQ(n->starts.size(), 2u);
  }
}

TEST_F(RdzvCluster, SilentPeerIsLostAtTheFirstCheckPastThePeerTimeout) {
  const auto t0 = loops_.now();  // node 0 checks its peers now and every kCheck after
  add_all(2, [](NetworkClusterConfig& c) { c.nnodes = 3; });
  auto& frozen = loops_.add();  // node 2 lives in its own event loop, which will freeze
  add(config(2, 3), &frozen);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  // At one of node 0's checks, node 2 sends its last frame; then its process hangs: its socket
  // stays open, it says nothing.
  const auto last = next_check(t0);
  loops_.advance(last - loops_.now());
  nodes_[2]->cluster->report_stopped(
      0, {}, std::nullopt);  // a frame the job ignores (nothing is stopping)
  loops_.settle();
  frozen.running = false;
  // Silent for 2 s (--peer-timeout) is not yet "more than"; the check after it is.
  EXPECT_FALSE(run_until([&] { return nodes_[0]->finished() || nodes_[1]->finished(); },
                         kPeerTimeout + kCheck - 1ns));
  ASSERT_TRUE(run_until([&] { return nodes_[0]->finished() && nodes_[1]->finished(); }, 1ns));
  EXPECT_EQ(loops_.now(), last + kPeerTimeout + kCheck);
  for (int r : {0, 1}) {
    ASSERT_TRUE(nodes_[r]->lost);
    EXPECT_NE(nodes_[r]->lost->find("node 2 silent for more than 2000 ms"), std::string::npos)
        << *nodes_[r]->lost;
  }
}

TEST_F(RdzvCluster, KilledAgentIsLostEverywhere) {
  add_all(3);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  nodes_[1]->cluster.reset();  // like SIGKILL: its sockets close
  ASSERT_TRUE(run_until([&] { return nodes_[0]->finished() && nodes_[2]->finished(); }));
  EXPECT_TRUE(nodes_[0]->lost && nodes_[2]->lost);
  EXPECT_NE(nodes_[2]->lost->find("node 1 lost"), std::string::npos) << *nodes_[2]->lost;
}

TEST_F(RdzvCluster, SilentCoordinatorIsLostAtTheFirstCheckPastThePeerTimeout) {
  const auto t0 = loops_.now();  // node 1 checks the coordinator now and every kCheck after
  auto& frozen = loops_.add();
  add(config(0, 2), &frozen);
  add(config(1, 2));
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  // Node 0's last heartbeat goes out at one of its checks (the same instants as node 1's); then
  // its process hangs.
  const auto last = next_check(t0);
  loops_.advance(last - loops_.now());
  frozen.running = false;
  EXPECT_FALSE(run_until([&] { return nodes_[1]->finished(); }, kPeerTimeout + kCheck - 1ns));
  ASSERT_TRUE(run_until([&] { return nodes_[1]->finished(); }, 1ns));
  EXPECT_EQ(loops_.now(), last + kPeerTimeout + kCheck);
  ASSERT_TRUE(nodes_[1]->lost);
  EXPECT_NE(nodes_[1]->lost->find("silent for more than 2000 ms"), std::string::npos)
      << *nodes_[1]->lost;
}

TEST_F(RdzvCluster, KilledCoordinatorIsLost) {
  add_all(2);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  nodes_[0]->cluster.reset();
  ASSERT_TRUE(run_until([&] { return nodes_[1]->finished(); }));
  ASSERT_TRUE(nodes_[1]->lost);
  EXPECT_NE(nodes_[1]->lost->find("lost the coordinator"), std::string::npos) << *nodes_[1]->lost;
}

TEST_F(RdzvCluster, LateJoinerInsideDeadlineIsWaitedFor) {
  add(config(0, 2));
  loops_.advance(19s);  // inside the 20 s rendezvous deadline
  EXPECT_TRUE(nodes_[0]->starts.empty());
  add(config(1, 2));
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
}

TEST_F(RdzvCluster, AgentStartingBeforeNodeZeroRetriesWithBackoffUntilItListens) {
  // Node 1 first, on a port where nothing listens yet (Batch starts children in any order): it
  // tries at once and again after 0.1, 0.2, 0.4, 0.8 s ..., at 0, 0.1, 0.3, 0.7, 1.5 s.
  asio::io_context probe;
  tcp::acceptor a(probe, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  port_ = a.local_endpoint().port();
  a.close();
  const auto t0 = loops_.now();
  add(config(1, 2));
  loops_.advance(1s);
  auto c0 = config(0, 2);
  c0.rdzv_port = port_;
  add(c0);  // node 0 listens from 1 s on; node 1's next attempt is at 1.5 s
  EXPECT_FALSE(run_until([&] { return all_started(1); }, 500ms - 1ns));
  ASSERT_TRUE(run_until([&] { return all_started(1); }, 1ns));
  EXPECT_EQ(loops_.now(), t0 + 1500ms);
}

TEST_F(RdzvCluster, RendezvousTimeoutIsLost) {
  add_all(2, [](NetworkClusterConfig& c) {
    c.nnodes = 3;
    c.rdzv_timeout = 1s;
  });
  const auto t0 = loops_.now();
  EXPECT_FALSE(run_until([&] { return nodes_[0]->finished() || nodes_[1]->finished(); }, 1s - 1ns));
  // Node 1 hears it at 1 s; node 0 once the coordinator's last frames are written.
  ASSERT_TRUE(run_until([&] { return nodes_[1]->finished(); }, 1ns));
  EXPECT_EQ(loops_.now(), t0 + 1s);
  ASSERT_TRUE(run_until([&] { return nodes_[0]->finished(); }, 1s));
  for (auto& n : nodes_) {
    ASSERT_TRUE(n->lost);
    EXPECT_NE(n->lost->find("rendezvous timed out"), std::string::npos) << *n->lost;
    EXPECT_TRUE(n->starts.empty());
  }
}

TEST_F(RdzvCluster, NoCoordinatorAtAllTimesOut) {
  port_ = 1;  // nothing listens on 127.0.0.1:1
  auto c = config(1, 2);
  c.rdzv_timeout = 1s;
  add(c);
  EXPECT_FALSE(run_until([&] { return nodes_[0]->finished(); }, 1s - 1ns));
  ASSERT_TRUE(run_until([&] { return nodes_[0]->finished(); }, 1ns));
  ASSERT_TRUE(nodes_[0]->lost);
  EXPECT_NE(nodes_[0]->lost->find("rendezvous timed out"), std::string::npos) << *nodes_[0]->lost;
}

// Raw clients that send something and wait for the coordinator to close on them.
struct RawClient {
  RawClient(asio::io_context& io, int port, std::string payload)
      : socket(io), data(std::move(payload)) {
    socket.connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
    asio::async_write(socket, asio::buffer(data), [](boost::system::error_code, size_t) {});
    read_more();
  }
  void read_more() {
    socket.async_read_some(asio::buffer(buf), [this](boost::system::error_code ec, size_t) {
      if (ec)
        closed = true;
      else
        read_more();
    });
  }
  tcp::socket socket;
  std::string data;
  std::array<char, 4096> buf{};
  bool closed = false;
};

TEST_F(RdzvCluster, HostileConnectionsLeaveTheJobUntouched) {
  add_all(2, [](NetworkClusterConfig& c) { c.nnodes = 3; });
  std::vector<std::unique_ptr<RawClient>> raw;
  raw.push_back(std::make_unique<RawClient>(io_, port_, std::string(1000, '\x5a')));
  raw.push_back(
      std::make_unique<RawClient>(io_, port_, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  // An oversized frame: a valid header that announces 1 MiB.
  std::string big = "TVRD";
  big += std::string("\x01\x10\x00\x00", 4) + std::string(12, '\0') +
         std::string("\x00\x10\x00\x00", 4);
  big += std::string(70000, 'x');
  raw.push_back(std::make_unique<RawClient>(io_, port_, big));
  // A frame tagged under another key, and a client that connects and says nothing.
  rdzv::Message join{rdzv::MsgType::kJoin,
                     2,
                     0,
                     0,
                     {{"nonce", rdzv::to_hex(rdzv::random_nonce())}, {"nnodes", 3}}};
  raw.push_back(std::make_unique<RawClient>(
      io_, port_, rdzv::encode(join, "wrong", rdzv::Direction::kToCoordinator, rdzv::Context{})));
  raw.push_back(std::make_unique<RawClient>(io_, port_, ""));
  // A whole agent with the wrong token.
  auto wrong = config(2, 3);
  wrong.token = "not-the-token";
  wrong.rdzv_timeout = 1s;
  add(wrong);
  ASSERT_TRUE(run_until([&] {
    return std::all_of(raw.begin(), raw.end(), [](auto& r) { return r->closed; }) &&
           nodes_[2]->finished();
  }));
  EXPECT_TRUE(nodes_[2]->lost);  // the wrong token never got in
  // The job itself noticed nothing, and the real node 2 still gets in.
  EXPECT_FALSE(nodes_[0]->finished() || nodes_[1]->finished());
  EXPECT_TRUE(nodes_[0]->starts.empty() && nodes_[1]->starts.empty());
  auto real = config(2, 3);
  add(real);
  ASSERT_TRUE(
      run_until([&] { return nodes_[0]->starts.size() == 1 && nodes_[3]->starts.size() == 1; }));
  EXPECT_EQ(nodes_[1]->starts.size(), 1u);
  EXPECT_FALSE(nodes_[0]->finished());
}

TEST_F(RdzvCluster, UnjoinedConnectionIsClosedAtTheHandshakeDeadlineAndNotBefore) {
  auto c = config(0, 2);
  c.peer_timeout = 30s;  // the handshake deadline: 5 s (rdzv::handshake_deadline)
  add(c);
  loops_.settle();
  RawClient silent(io_, port_, "");
  RawClient slow(io_, port_, "TVRD");  // a slowloris: a header's first bytes, then nothing
  loops_.settle();                     // both accepted and sent a hello now
  const auto accepted = loops_.now();
  const auto both = [&] { return silent.closed && slow.closed; };
  EXPECT_FALSE(run_until([&] { return silent.closed || slow.closed; }, 5s - 1ns));
  ASSERT_TRUE(run_until(both, 1ns));
  EXPECT_EQ(loops_.now(), accepted + 5s);
  EXPECT_FALSE(nodes_[0]->finished());  // the job noticed nothing; node 1 still gets in
  add(config(1, 2));
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
}

// Two nodes claim rank 1 (two processes, two join identities): the job never starts, and both
// are told, naming the rank, both addresses and where each rank came from.
TEST_F(RdzvCluster, TwoNodesClaimingOneRankBothGiveUpNamingBoth) {
  add_all(2, [](NetworkClusterConfig& c) {
    c.nnodes = 3;
    c.who.rank_from = "--node-rank";
  });
  ASSERT_TRUE(run_until([&] { return nodes_[0]->cluster->coordinator_port() > 0; }, 2s));
  run_until([] { return false; }, 1s);  // the first node rank 1 is in
  auto dup = config(1, 3);
  dup.who.rank_from = "env SLURM_NODEID";
  add(dup);
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return n.finished(); }); }));
  for (int i : {1, 2}) {
    ASSERT_TRUE(nodes_[i]->gave_up) << i;
    EXPECT_EQ(nodes_[i]->gave_up->exit_code, 78);
    const std::string& why = nodes_[i]->gave_up->summary;
    EXPECT_NE(why.find("node rank 1 is claimed by two nodes: host "), std::string::npos) << why;
    EXPECT_NE(why.find("at 127.0.0.1, pid "), std::string::npos) << why;
    EXPECT_NE(why.find("rank from --node-rank"), std::string::npos) << why;
    EXPECT_NE(why.find("rank from env SLURM_NODEID"), std::string::npos) << why;
  }
  EXPECT_TRUE(nodes_[0]->gave_up);  // every node: the job does not start
  EXPECT_TRUE(all([](const Node& n) { return n.starts.empty(); }));
}

// One process joining twice (its handshake timed out after the coordinator had welcomed it) is
// the same node (its node_id): its rank is not taken for a duplicate.
TEST_F(RdzvCluster, TheSameNodeJoiningAgainKeepsItsRank) {
  auto c0 = config(0, 3);
  add(c0);
  auto c1 = config(1, 3);
  c1.who = rdzv::this_process_identity("--node-rank");
  add(c1);
  run_until([] { return false; }, 1s);
  add(c1);  // the same identity on a second connection
  add(config(2, 3));
  ASSERT_TRUE(run_until([&] { return nodes_[0]->starts.size() == 1; }));
  EXPECT_FALSE(nodes_[0]->finished());
  EXPECT_EQ(nodes_[3]->starts.size(), 1u);
  // The connection that joined last runs the job; the earlier one was closed (that agent saw it
  // lost). Usually the second (the wait above), but the order is the loop's under load.
  ASSERT_TRUE(run_until([&] { return nodes_[1]->finished() || nodes_[2]->finished(); }));
  EXPECT_NE(nodes_[1]->finished(), nodes_[2]->finished());
  EXPECT_EQ(nodes_[1]->starts.size() + nodes_[2]->starts.size(), 1u);
}

// No rank given: node 0 hosts the coordinator, each other node asks it and gets the next rank
// in join order, then joins with it; a node asking again gets the same rank back.
TEST_F(RdzvCluster, NodesWithoutRankGetThemInJoinOrder) {
  add(config(0, 3));
  std::vector<int> got;
  std::vector<std::unique_ptr<NetworkCluster>> askers;
  for (int i = 0; i < 2; ++i) {
    auto c = config(rdzv::kRankUnassigned, 3);
    c.rdzv_port = port_;
    c.who = rdzv::this_process_identity("");
    c.who.pid = 100 + i;  // two processes (one host, one address: told apart by pid)
    askers.push_back(std::make_unique<NetworkCluster>(io_, c, loops_.main().time));
    auto r = askers.back()->assign_rank();
    ASSERT_TRUE(r) << r.error().message;
    got.push_back(*r);
    EXPECT_EQ(askers.back()->rank_origin(),
              "assigned by node 0 in join order (no --node-rank, no platform rank)");
  }
  EXPECT_EQ(got, (std::vector<int>{1, 2}));
  EXPECT_EQ(*askers[0]->assign_rank(), 1);  // known now: no second question
  for (auto& a : askers) adopt(std::move(a));
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  EXPECT_FALSE(nodes_[0]->finished());
}

// The node that can bind the endpoint hosts the coordinator and is rank 0; a node of the same
// machine that finds the port taken asks it instead.
TEST_F(RdzvCluster, TheNodeThatBindsTheEndpointIsRankZero) {
  tcp::acceptor probe(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const int port = probe.local_endpoint().port();
  probe.close();
  auto c = config(rdzv::kRankUnassigned, 2);
  c.rdzv_port = port;
  // Three processes of one host: each its own pid (the same host, pid and address would be one
  // node started again, which gets its rank back).
  auto as = [&](int pid) {
    auto x = c;
    x.who = rdzv::this_process_identity("");
    x.who.pid = pid;
    return x;
  };
  NetworkCluster host(io_, as(10), loops_.main().time);
  auto r0 = host.assign_rank();
  ASSERT_TRUE(r0) << r0.error().message;
  EXPECT_EQ(*r0, 0);
  EXPECT_EQ(host.coordinator_port(), port);
  EXPECT_NE(host.rank_origin().find("hosts the coordinator on 127.0.0.1:"), std::string::npos);
  NetworkCluster other(io_, as(11), loops_.main().time);
  auto r1 = other.assign_rank();
  ASSERT_TRUE(r1) << r1.error().message;
  EXPECT_EQ(*r1, 1);
  // A third finds every rank taken: told so with 78, at once.
  NetworkCluster third(io_, as(12), loops_.main().time);
  auto r2 = third.assign_rank();
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().exit_code(), 78);
  EXPECT_NE(r2.error().message.find("every node rank from 0 to 1 is taken"), std::string::npos)
      << r2.error().message;
  // The second one's process started again (same host, pid, address; a new node_id): rank 1.
  NetworkCluster again(io_, as(11), loops_.main().time);
  auto r3 = again.assign_rank();
  ASSERT_TRUE(r3) << r3.error().message;
  EXPECT_EQ(*r3, 1);
}

TEST_F(RdzvCluster, LeaveTellsTheOthers) {
  add_all(3);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  nodes_[2]->cluster->leave(SIGTERM, "");
  nodes_[2]->cluster->leave(SIGTERM, "");  // idempotent
  ASSERT_TRUE(run_until([&] { return nodes_[0]->finished() && nodes_[1]->finished(); }));
  EXPECT_NE(nodes_[1]->lost->find("node 2 left"), std::string::npos) << *nodes_[1]->lost;
  EXPECT_EQ(nodes_[1]->lost_signal, SIGTERM);  // stopped from outside: the others exit 143 too
  EXPECT_FALSE(nodes_[2]->finished());         // the leaver hears nothing more
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

rdzv::Fingerprint print_with(const std::string& torch, const std::string& nccl_proto) {
  rdzv::Fingerprint fp;
  fp.facts = {{"trainvisor", "1.0.0"}, {"torch", torch}};
  Environment env;
  if (!nccl_proto.empty()) env.set("NCCL_PROTO", nccl_proto);
  rdzv::set_compared_variables(fp, env);
  return fp;
}

// docs/coordination.md, "Node fingerprint": nodes that differ never start; each is told why.
TEST_F(RdzvCluster, NodesWhoseFingerprintsDifferAllGiveUpBeforeGenerationZero) {
  add_all(3, [](NetworkClusterConfig& c) {
    c.fingerprint =
        print_with(c.node_rank == 2 ? "2.10.0" : "2.11.0", c.node_rank == 1 ? "LL" : "");
  });
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return n.finished(); }); }));
  for (const auto& n : nodes_) {
    ASSERT_TRUE(n->gave_up);
    EXPECT_EQ(n->gave_up->exit_code, 78);
    const std::string& why = n->gave_up->summary;
    EXPECT_NE(why.find("torch 2.11.0 on nodes 0-1, 2.10.0 on node 2 ("), std::string::npos) << why;
    EXPECT_NE(why.find("NCCL_PROTO=LL on node 1 ("), std::string::npos) << why;
  }
  EXPECT_TRUE(all([](const Node& n) { return n.starts.empty(); }));
}

TEST_F(RdzvCluster, ANodeWithoutAFingerprintIsRefusedByName) {
  add_all(2, [](NetworkClusterConfig& c) {
    if (c.node_rank == 0) c.fingerprint = print_with("2.11.0", "");
  });
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return n.finished(); }); }));
  ASSERT_TRUE(nodes_[1]->gave_up);
  EXPECT_NE(nodes_[1]->gave_up->summary.find("node 1 ("), std::string::npos);
  EXPECT_NE(nodes_[1]->gave_up->summary.find("sent no fingerprint"), std::string::npos);
}

TEST_F(RdzvCluster, TheSameFingerprintsStartTheJob) {
  add_all(2, [](NetworkClusterConfig& c) { c.fingerprint = print_with("2.11.0", "Simple"); });
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
}

TEST_F(RdzvCluster, WithTheCheckOffOnNodeZeroDifferentNodesStart) {
  add_all(2, [](NetworkClusterConfig& c) {
    c.fingerprint = print_with(c.node_rank == 0 ? "2.11.0" : "2.10.0", "");
    c.check_fingerprints = c.node_rank != 0;  // node 0 decides: off
  });
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// Elastic membership (--nnodes MIN:MAX, launcher/rendezvous/membership.h) through the real
// coordinator and agents. The fixed world's counterpart: KilledAgentIsLostEverywhere.
void elastic(NetworkClusterConfig& c) {
  c.min_nnodes = 2;
  c.last_call = 5s;
}

TEST_F(RdzvCluster, ElasticKilledAgentReformsWithoutItRanksRenumbered) {
  add_all(3, elastic);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  EXPECT_EQ(nodes_[2]->starts[0].nnodes, 3);
  EXPECT_EQ(nodes_[2]->starts[0].node_rank, 2);
  nodes_[1]->cluster.reset();  // like SIGKILL: its sockets close
  ASSERT_TRUE(
      run_until([&] { return nodes_[0]->starts.size() == 2 && nodes_[2]->starts.size() == 2; }));
  for (int r : {0, 2}) {
    const GenerationPlan& p = nodes_[r]->starts[1];
    EXPECT_EQ(p.generation, 1);
    EXPECT_EQ(p.nnodes, 2);
    EXPECT_EQ(p.node_rank, r == 0 ? 0 : 1);  // node order kept, contiguous
    ASSERT_EQ(nodes_[r]->stops.size(), 1u);
    EXPECT_EQ(nodes_[r]->stops[0].exit_code, 75);
    EXPECT_NE(nodes_[r]->stops[0].summary.find("node 1 lost"), std::string::npos);
    EXPECT_FALSE(nodes_[r]->finished());
  }
  for (int r : {0, 2}) nodes_[r]->cluster->report_success(1);
  ASSERT_TRUE(run_until([&] { return nodes_[0]->done && nodes_[2]->done; }));
}

TEST_F(RdzvCluster, ElasticBelowMinIsLostEverywhere) {
  add_all(3, elastic);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  nodes_[1]->cluster.reset();
  nodes_[2]->cluster.reset();
  ASSERT_TRUE(run_until([&] { return nodes_[0]->finished(); }));
  ASSERT_TRUE(nodes_[0]->lost);
  EXPECT_NE(nodes_[0]->lost->find("fewer than the minimum 2 (--nnodes 2:3)"), std::string::npos)
      << *nodes_[0]->lost;
}

TEST_F(RdzvCluster, ElasticGenerationZeroWaitsTheLastCallThenALateNodeIsTakenIn) {
  const auto t0 = loops_.now();
  add_all(2, [](NetworkClusterConfig& c) { elastic(c), c.nnodes = 3; });
  EXPECT_FALSE(run_until([&] { return all_started(1); }, 4s));
  ASSERT_TRUE(run_until([&] { return all_started(1); }, 2s));
  EXPECT_GE(loops_.now() - t0, 5s);
  EXPECT_EQ(nodes_[1]->starts[0].nnodes, 2);
  auto late = config(2, 3);
  elastic(late);
  add(late);
  // Three of three present: the generation re-forms at once (no last call to wait).
  ASSERT_TRUE(run_until([&] { return all_started(2) || nodes_[2]->starts.size() == 1; }, 1s));
  ASSERT_TRUE(run_until([&] { return nodes_[0]->starts.size() == 2; }, 1s));
  ASSERT_EQ(nodes_[2]->starts.size(), 1u);  // it ran nothing in generation 0
  EXPECT_EQ(nodes_[2]->starts[0].generation, 1);
  EXPECT_EQ(nodes_[2]->starts[0].node_rank, 2);
  EXPECT_EQ(nodes_[2]->starts[0].nnodes, 3);
  EXPECT_TRUE(nodes_[2]->stops.empty());  // a waiting node has no workers to stop
  EXPECT_EQ(nodes_[0]->stops.size(), 1u);
}

// --nnodes N: the start frames say nothing of ranks (each node keeps its own), as before.
TEST_F(RdzvCluster, AFixedWorldsStartsCarryNoElasticRanks) {
  add_all(2);
  ASSERT_TRUE(run_until([&] { return all_started(1); }));
  EXPECT_EQ(nodes_[1]->starts[0].nnodes, 0);
  EXPECT_EQ(nodes_[1]->starts[0].node_rank, -1);
}

}  // namespace
}  // namespace tv
