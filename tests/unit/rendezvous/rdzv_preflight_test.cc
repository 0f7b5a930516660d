// The coordinator's preflight phase end to end in one process: node agents on 127.0.0.1, real
// sockets, a fake probe behind NetworkCluster::Probe (run on the cluster's probe thread as the
// real one is), on simulated time (tests/unit/rendezvous/sim_loops.h): nothing here waits for a
// timeout; the loop runs until the probe threads' verdicts are in.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <future>
#include <mutex>

#include "common/exit_codes.h"
#include "launcher/rendezvous/network_cluster.h"
#include "tests/unit/rendezvous/sim_loops.h"

namespace tv {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr int kBasePort = 29600;
const std::string kId = std::string(128, '0') + std::string(128, 'e');

struct Node {
  std::unique_ptr<NetworkCluster> cluster;
  std::optional<Status> preflight;  // what begin_preflight reported
  std::vector<GenerationPlan> starts;
  std::optional<NodeFailure> gave_up;
  std::optional<std::string> lost;
  std::mutex mu;
  std::vector<std::string> probed_ids;  // the ids the probe was called with (probe thread)
};

class RdzvPreflight : public ::testing::Test {
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
    c.peer_timeout = 2000ms;
    c.token = "unit-test-token";
    if (rank == 0) c.preflight_unique_id = kId;
    return c;
  }

  Node& make(int rank, int nnodes) {
    nodes_.push_back(std::make_unique<Node>());
    Node& n = *nodes_.back();
    n.cluster = std::make_unique<NetworkCluster>(io_, config(rank, nnodes), loops_.main().time);
    return n;
  }

  // Joins through the preflight with a probe that records its id and answers `verdict`.
  void preflight(Node& n, PreflightVerdict verdict) {
    Node* p = &n;
    n.cluster->begin_preflight(
        [p, verdict](const std::string& id) {
          std::lock_guard lock(p->mu);
          p->probed_ids.push_back(id);
          return verdict;
        },
        [p](const Status& s) { p->preflight = s; });
    if (n.cluster->coordinator_port()) port_ = n.cluster->coordinator_port();
  }

  void join(Node& n) {
    Node* p = &n;
    Cluster::Events ev;
    ev.start = [p](const GenerationPlan& g) { p->starts.push_back(g); };
    ev.stop = [](const NodeFailure&) {};
    ev.done = [] {};
    ev.give_up = [p](const NodeFailure& f) { p->gave_up = f; };
    ev.lost = [p](const std::string& why, int) { p->lost = why; };
    n.cluster->join(ev);
    if (n.cluster->coordinator_port()) port_ = n.cluster->coordinator_port();
  }

  // Runs the loop (time stands still) until `pred` holds: the probes answer on their threads.
  bool run_until(const std::function<bool()>& pred) { return loops_.settle_until(pred); }

  bool all(const std::function<bool(const Node&)>& pred) {
    return std::all_of(nodes_.begin(), nodes_.end(), [&](auto& n) { return pred(*n); });
  }

  testing::SimLoops loops_;  // before the nodes: their timers go first
  asio::io_context& io_ = loops_.main().io;
  int port_ = 0;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(RdzvPreflight, PassEverywhereStartsGenerationZeroWithNodeZerosId) {
  for (int r = 0; r < 3; ++r)
    preflight(make(r, 3), {true, "node " + std::to_string(r) + ": passed"});
  ASSERT_TRUE(
      run_until([&] { return all([](const Node& n) { return n.preflight.has_value(); }); }));
  for (auto& n : nodes_) {
    EXPECT_TRUE(n->preflight->ok()) << n->preflight->error().message;
    std::lock_guard lock(n->mu);
    EXPECT_EQ(n->probed_ids, std::vector<std::string>{kId});  // once, with node 0's id
    EXPECT_TRUE(n->starts.empty());                           // the supervisor has not joined yet
  }
  for (auto& n : nodes_) join(*n);  // generation 0 was held for the supervisor
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return !n.starts.empty(); }); }));
  for (auto& n : nodes_) {
    ASSERT_EQ(n->starts.size(), 1u);
    EXPECT_EQ(n->starts[0].generation, 0);
    EXPECT_EQ(n->starts[0].master_port, kBasePort);
    EXPECT_FALSE(n->lost.has_value());
  }
}

TEST_F(RdzvPreflight, OneNodeFailsEveryNodeGetsItsVerdictAndExit69) {
  const std::string why = "node 1: nccl-transport: NCCL used socket (NET/Socket: TCP)";
  preflight(make(0, 3), {true, "node 0: passed"});
  preflight(make(1, 3), {false, why});
  preflight(make(2, 3), {true, "node 2: passed"});
  ASSERT_TRUE(
      run_until([&] { return all([](const Node& n) { return n.preflight.has_value(); }); }));
  for (auto& n : nodes_) {
    ASSERT_FALSE(n->preflight->ok());
    EXPECT_EQ(n->preflight->error().exit_code(), exit_code_of(ErrorKind::kPreflightFailed));
    EXPECT_EQ(n->preflight->error().message, why);
  }
  loops_.advance(10s);
  EXPECT_TRUE(all([](const Node& n) { return n.starts.empty(); }));
}

TEST_F(RdzvPreflight, LowestFailingNodeIsTheVerdict) {
  preflight(make(0, 3), {true, "node 0: passed"});
  preflight(make(1, 3), {false, "node 1: gpu: 0 GPUs"});
  preflight(make(2, 3), {false, "node 2: nccl-probe: rank 5 timed out"});
  ASSERT_TRUE(
      run_until([&] { return all([](const Node& n) { return n.preflight.has_value(); }); }));
  for (auto& n : nodes_) {
    ASSERT_FALSE(n->preflight->ok());
    EXPECT_EQ(n->preflight->error().message, "node 1: gpu: 0 GPUs");
  }
}

TEST_F(RdzvPreflight, NodeWithoutAProbeAnswersPass) {
  preflight(make(0, 2), {true, "node 0: passed"});
  Node& plain = make(1, 2);
  join(plain);  // this node asked for no preflight: its agent passes the phase
  ASSERT_TRUE(run_until([&] { return nodes_[0]->preflight.has_value(); }));
  EXPECT_TRUE(nodes_[0]->preflight->ok());
  join(*nodes_[0]);
  ASSERT_TRUE(run_until([&] { return all([](const Node& n) { return !n.starts.empty(); }); }));
  EXPECT_EQ(plain.starts[0].generation, 0);
  EXPECT_TRUE(plain.probed_ids.empty());
}

TEST_F(RdzvPreflight, WithoutAnIdOnNodeZeroThereIsNoPhase) {
  Node& n0 = make(0, 2);
  n0.cluster = std::make_unique<NetworkCluster>(
      io_,
      [&] {
        auto c = config(0, 2);
        c.preflight_unique_id.reset();
        return c;
      }(),
      loops_.main().time);
  preflight(n0, {false, "never asked"});
  preflight(make(1, 2), {false, "never asked"});
  ASSERT_TRUE(
      run_until([&] { return all([](const Node& n) { return n.preflight.has_value(); }); }));
  for (auto& n : nodes_) {
    EXPECT_TRUE(n->preflight->ok());
    EXPECT_TRUE(n->probed_ids.empty());
  }
}

TEST_F(RdzvPreflight, NodeLostDuringThePhaseIsLostEverywhere) {
  preflight(make(0, 2), {true, "node 0: passed"});
  Node& n1 = make(1, 2);
  auto probing = std::make_shared<std::atomic<bool>>(false);
  std::promise<void> release;
  // Node 1's process goes away while its probe runs (the probe waits until the test lets it go).
  n1.cluster->begin_preflight(
      [probing, go = release.get_future().share()](const std::string&) {
        *probing = true;
        go.wait();
        return PreflightVerdict{true, "late"};
      },
      [](const Status&) {});
  ASSERT_TRUE(run_until([&] { return probing->load(); }));
  release.set_value();
  n1.cluster.reset();  // joins its probe thread (its verdict finds no cluster), closes its socket
  ASSERT_TRUE(run_until([&] { return nodes_[0]->preflight.has_value(); }));
  EXPECT_EQ(nodes_[0]->preflight->error().exit_code(), exit_code_of(ErrorKind::kLost));
}

}  // namespace
}  // namespace tv
