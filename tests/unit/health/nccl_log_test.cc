#include "health/nccl_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "health/transport.h"

namespace tv {
namespace {

std::string load(const std::string& name) {
  std::ifstream in(std::string(TV_TESTDATA) + "/nccl/" + name);
  EXPECT_TRUE(in) << name;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(NcclLog, RealNvlinkLogIsP2pAlthoughNetworkSaysSocket) {
  auto s = classify_nccl_log(load("h200x2-nccl2.28.9-p2p-nvlink.log"));
  EXPECT_EQ(s.transport, "p2p");
  EXPECT_EQ(s.nccl_version, "2.28.9+cuda13.0");
  EXPECT_EQ(s.network, "Socket");
  EXPECT_EQ(s.nnodes, 1);
  EXPECT_EQ(s.channel_kinds["P2P/CUMEM"], 48);
  EXPECT_TRUE(s.init_complete);
  EXPECT_FALSE(s.gdr.has_value());
}

TEST(NcclLog, RealSocketLog) {
  auto s = classify_nccl_log(load("h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log"));
  EXPECT_EQ(s.transport, "socket");
  EXPECT_EQ(s.nnodes, 2);
  EXPECT_EQ(s.gdr, false);
  EXPECT_EQ(s.channel_kinds["NET/Socket"], 8);
  EXPECT_FALSE(s.findings.empty());
}

TEST(NcclLog, RealShmLog) {
  auto s = classify_nccl_log(load("h200x2-nccl2.28.9-p2p-disabled-shm.log"));
  EXPECT_EQ(s.transport, "shm");
}

TEST(NcclLog, RealForcedLibfabricWithoutPluginFailed) {
  auto s = classify_nccl_log(load("h200x2-nccl2.28.9-net-libfabric-forced-no-plugin-fatal.log"));
  EXPECT_EQ(s.transport, "failed");
  EXPECT_FALSE(s.init_complete);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("Failed to initialize any NET plugin"), std::string::npos);
  EXPECT_EQ(s.missing_plugins, std::vector<std::string>{"libnccl-net.so"});
}

TEST(NcclLog, RealOfiPluginNotFound) {
  auto s = classify_nccl_log(load("h200x2-nccl2.28.9-plugin-ofi-not-found-fatal.log"));
  EXPECT_EQ(s.transport, "failed");
  EXPECT_EQ(s.missing_plugins, std::vector<std::string>{"ofi libnccl-net-ofi.so"});
  bool explained = false;
  for (const auto& f : s.findings)
    explained |= f.find("aws-ofi-nccl plugin is not on the library path") != std::string::npos;
  EXPECT_TRUE(explained);
}

TEST(NcclLog, Nccl218Plugin17OldProviderLine) {
  auto s = classify_nccl_log(load("synthetic-nccl2.18.5-ofi1.7.3-efa-4nics-gdr.log"));
  EXPECT_EQ(s.transport, "efa-gdr");
  EXPECT_EQ(s.plugin_name, "AWS Libfabric");
  EXPECT_EQ(s.plugin_api, 6);
  EXPECT_EQ(s.plugin_version, "1.7.3-aws");
  EXPECT_EQ(s.libfabric_version, "1.18");
  EXPECT_EQ(s.provider, "efa");
  EXPECT_EQ(s.nic_count, 4);
  EXPECT_EQ(s.gdr, true);
  EXPECT_FALSE(s.fabric.has_value());
}

TEST(NcclLog, Plugin113WithoutGdr) {
  auto s = classify_nccl_log(load("synthetic-nccl2.23.4-ofi1.13.2-efa-nogdr.log"));
  EXPECT_EQ(s.transport, "efa");
  EXPECT_EQ(s.gdr, false);
  EXPECT_EQ(s.network, "Libfabric");
}

TEST(NcclLog, Plugin118NewProviderLineAndPxnSuffix) {
  auto s = classify_nccl_log(load("synthetic-nccl2.27.5-ofi1.18.0-efa-direct-16nics-gdr.log"));
  EXPECT_EQ(s.transport, "efa-gdr");
  EXPECT_EQ(s.fabric, "efa-direct");
  EXPECT_EQ(s.nic_count, 16);
  EXPECT_EQ(s.libfabric_version, "2.4");
  EXPECT_EQ(s.channel_kinds["NET/Libfabric"], 2);
}

TEST(NcclLog, InfiniBand) {
  auto s = classify_nccl_log(load("synthetic-nccl2.26.2-ib-gdr.log"));
  EXPECT_EQ(s.transport, "ib");
  EXPECT_EQ(s.gdr, true);
}

TEST(NcclLog, LibfabricTcpProviderIsOfi) {
  auto s = classify_nccl_log(load("synthetic-nccl2.21.5-ofi1.9.1-tcp-provider.log"));
  EXPECT_EQ(s.transport, "ofi");
  EXPECT_EQ(s.provider, "tcp");
}

TEST(NcclLog, OldLibfabricExplained) {
  auto s = classify_nccl_log(load("synthetic-nccl2.28.3-ofi1.18.0-old-libfabric-fatal.log"));
  EXPECT_EQ(s.transport, "failed");
  bool explained = false;
  for (const auto& f : s.findings)
    explained |= f.find("older than the plugin needs") != std::string::npos;
  EXPECT_TRUE(explained);
}

TEST(NcclLog, EmptyAndGarbage) {
  EXPECT_EQ(classify_nccl_log("").transport, "unknown");
  EXPECT_EQ(classify_nccl_log("NCCL NCCL via via NET/\n\n\0x").transport, "unknown");
  EXPECT_EQ(classify_nccl_log("x NCCL INFO Channel 00/0 : 0[0] -> 1[0] via NET/").transport,
            "unknown");
}

// The rule a word names (the words are transport_word's).
TransportRule rule_of(const std::string& word) {
  for (auto r :
       {TransportRule::kAuto, TransportRule::kEfa, TransportRule::kNet, TransportRule::kAny})
    if (word == transport_word(r)) return r;
  ADD_FAILURE() << "no --require-transport word " << word;
  return TransportRule::kAny;
}

struct Case {
  const char* file;
  const char* require;
  Outcome expected;
};

class Judge : public ::testing::TestWithParam<Case> {};

TEST_P(Judge, Verdict) {
  const Case c = GetParam();
  auto v = judge_transport(classify_nccl_log(load(c.file)), rule_of(c.require));
  EXPECT_EQ(outcome_name(v.outcome), std::string(outcome_name(c.expected)))
      << c.file << " " << c.require << ": " << v.message;
}

INSTANTIATE_TEST_SUITE_P(
    Logs, Judge,
    ::testing::Values(
        Case{"h200x2-nccl2.28.9-p2p-nvlink.log", "any", Outcome::kPass},
        Case{"h200x2-nccl2.28.9-p2p-nvlink.log", "efa", Outcome::kFail},
        Case{"h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log", "any", Outcome::kPass},
        Case{"h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log", "net", Outcome::kFail},
        Case{"h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log", "efa", Outcome::kFail},
        Case{"h200x2-nccl2.28.9-net-libfabric-forced-no-plugin-fatal.log", "any", Outcome::kFail},
        Case{"h200x2-nccl2.28.9-plugin-ofi-not-found-fatal.log", "any", Outcome::kFail},
        Case{"synthetic-nccl2.18.5-ofi1.7.3-efa-4nics-gdr.log", "efa", Outcome::kPass},
        Case{"synthetic-nccl2.23.4-ofi1.13.2-efa-nogdr.log", "efa", Outcome::kPass},
        Case{"synthetic-nccl2.26.2-ib-gdr.log", "net", Outcome::kPass},
        Case{"synthetic-nccl2.26.2-ib-gdr.log", "efa", Outcome::kFail},
        Case{"synthetic-nccl2.21.5-ofi1.9.1-tcp-provider.log", "net", Outcome::kFail},
        Case{"synthetic-nccl2.21.5-ofi1.9.1-tcp-provider.log", "any", Outcome::kPass}));

TEST(Judge, SocketFailureNamesTheCauses) {
  auto v =
      judge_transport(classify_nccl_log(load("h200x2-nccl2.28.9-p2p-shm-disabled-net-socket.log")),
                      TransportRule::kEfa);
  EXPECT_NE(v.message.find("NET/Socket"), std::string::npos);
  EXPECT_NE(v.message.find("uverbs"), std::string::npos);
  EXPECT_NE(v.message.find("NCCL_NET_PLUGIN=none"), std::string::npos);
}

std::string resolved(const std::string& requested, int nnodes, bool devices,
                     const std::string& type = "") {
  return transport_word(
      decide_require_transport(rule_of(requested), {nnodes, devices, type, "test"}).resolved);
}

TEST(RequireTransport, Resolve) {
  EXPECT_EQ(resolved("auto", 2, true), "efa");
  EXPECT_EQ(resolved("auto", 2, false), "any");
  EXPECT_EQ(resolved("auto", 1, true), "any");
  EXPECT_EQ(resolved("net", 1, false), "net");
}

// Issue 40 item 9: a 2-node job on ml.p4d.24xlarge (4 EFA interfaces in the instance table) whose
// container does not see the devices yet requires efa instead of training over TCP.
TEST(RequireTransport, AnInstanceTypeWithEfaDecidesAcrossNodes) {
  const auto d = decide_require_transport(
      TransportRule::kAuto, {2, false, "ml.p4d.24xlarge", "file rc.json (current_instance_type)"});
  EXPECT_EQ(d.resolved, TransportRule::kEfa);
  EXPECT_TRUE(d.efa_expected);
  EXPECT_NE(d.reason.find("instance type ml.p4d.24xlarge (file rc.json (current_instance_type)) "
                          "has 4 EFA interfaces"),
            std::string::npos)
      << d.reason;
  EXPECT_EQ(resolved("auto", 1, false, "p5.48xlarge"), "any");   // one node: no network
  EXPECT_EQ(resolved("auto", 2, false, "g5.2xlarge"), "any");    // in the table, no EFA
  EXPECT_EQ(resolved("auto", 2, false, "m7i.48xlarge"), "any");  // not in the table
  EXPECT_EQ(resolved("any", 2, false, "p5.48xlarge"), "any");    // an explicit choice stays
  const auto unknown = decide_require_transport(TransportRule::kAuto, {2, false, "", ""});
  EXPECT_NE(unknown.reason.find("instance type unknown"), std::string::npos) << unknown.reason;
  const auto devices = decide_require_transport(TransportRule::kAuto, {2, true, "", ""});
  EXPECT_NE(devices.reason.find("EFA devices in /sys/class/infiniband"), std::string::npos);
}

// One rule for run --preflight auto and preflight without --level.
TEST(PreflightLevel, AutoIsFullOnlyAcrossNodesOverEfa) {
  using L = PreflightLevel;
  EXPECT_EQ(resolve_preflight_level(L::kAuto, 2, true), L::kFull);
  EXPECT_EQ(resolve_preflight_level(L::kAuto, 2, false), L::kBasic);
  EXPECT_EQ(resolve_preflight_level(L::kAuto, 1, true), L::kBasic);
  for (const L level : {L::kNone, L::kBasic, L::kFull})
    EXPECT_EQ(resolve_preflight_level(level, 4, true), level);
  EXPECT_STREQ(level_word(L::kAuto), "auto");
  EXPECT_STREQ(level_word(L::kNone), "none");
  EXPECT_STREQ(level_word(L::kBasic), "basic");
  EXPECT_STREQ(level_word(L::kFull), "full");
}

TEST(RequireTransport, EachRuleHasItsWord) {
  EXPECT_STREQ(transport_word(TransportRule::kAuto), "auto");
  EXPECT_STREQ(transport_word(TransportRule::kEfa), "efa");
  EXPECT_STREQ(transport_word(TransportRule::kNet), "net");
  EXPECT_STREQ(transport_word(TransportRule::kAny), "any");
}

TEST(RequireTransport, WorkerEnvSetsNcclNetOnlyForEfaWhenUnset) {
  Environment env;
  EXPECT_EQ(transport_worker_env(TransportRule::kEfa, env).at("NCCL_NET"), "AWS Libfabric");
  EXPECT_TRUE(transport_worker_env(TransportRule::kNet, env).empty());
  env.set("NCCL_NET", "Socket");
  EXPECT_TRUE(transport_worker_env(TransportRule::kEfa, env).empty());
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// Logs our own probe wrote on 2 H200s (NCCL_DEBUG_FILE per rank, both ranks concatenated).
TEST(NcclLog, ProbeCapturedLogs) {
  auto p2p = classify_nccl_log(load("probe-h200x2-nccl2.28.9-p2p-nvlink.log"));
  EXPECT_EQ(p2p.transport, "p2p");
  EXPECT_EQ(p2p.nccl_version, "2.28.9+cuda13.0");
  auto sys = classify_nccl_log(load("probe-h200x2-nccl2.28.3-system-p2p-nvlink.log"));
  EXPECT_EQ(sys.transport, "p2p");
  ASSERT_TRUE(sys.nccl_version.has_value());
  EXPECT_EQ(sys.nccl_version->rfind("2.28.3", 0), 0u);
  auto sock = classify_nccl_log(load("probe-h200x2-nccl2.28.9-single-node-net-socket.log"));
  EXPECT_EQ(sock.transport, "socket");
  EXPECT_EQ(sock.nnodes, 2);
  EXPECT_EQ(judge_transport(sock, TransportRule::kEfa).outcome, Outcome::kFail);
}

}  // namespace
}  // namespace tv
