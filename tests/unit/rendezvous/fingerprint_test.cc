#include "launcher/rendezvous/fingerprint.h"

#include <gtest/gtest.h>

namespace tv::rdzv {
namespace {

Fingerprint print(std::map<std::string, std::string> facts, Environment env = {}) {
  Fingerprint fp;
  fp.facts = {{"trainvisor", "1.0.0"}, {"driver", "550.54.15"},     {"cuda", "12.8"},
              {"nccl", "2.26.2"},      {"aws-ofi-nccl", "unknown"}, {"torch", "2.11.0"},
              {"gpu", "NVIDIA H200"}};
  for (auto& [k, v] : facts) fp.facts[k] = v;
  set_compared_variables(fp, env);
  return fp;
}

std::vector<NodePrint> nodes(std::vector<Fingerprint> prints) {
  std::vector<NodePrint> out;
  for (std::size_t i = 0; i < prints.size(); ++i)
    out.push_back({static_cast<int>(i), "host-" + std::string(1, char('a' + i)), prints[i]});
  return out;
}

TEST(Fingerprint, TheVariablesComparedAndThoseThatDifferByDesign) {
  for (const char* name : {"NCCL_PROTO", "NCCL_ALGO", "FI_PROVIDER", "FI_EFA_USE_DEVICE_RDMA",
                           "CUDA_DEVICE_MAX_CONNECTIONS", "TORCH_NCCL_ASYNC_ERROR_HANDLING"})
    EXPECT_TRUE(compared_variable(name)) << name;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA",
                           "NCCL_HOSTID", "FI_EFA_IFACE", "TORCH_MASTER_ADDR", "NCCL_DEBUG_FILE",
                           "TORCHELASTIC_RUN_ID", "PATH", "NCCLX", "MASTER_PORT", "TORCH_RANK"})
    EXPECT_FALSE(compared_variable(name)) << name;
}

TEST(Fingerprint, TheSameOnEveryNodeIsNoMismatch) {
  const Environment env{{"NCCL_PROTO", "Simple"}, {"PATH", "/a"}};
  EXPECT_EQ(fingerprint_mismatch(nodes({print({}, env), print({}, env), print({}, env)})), "");
  // Per-node variables and everything outside the four prefixes may differ.
  EXPECT_EQ(fingerprint_mismatch(nodes({print({}, {{"CUDA_VISIBLE_DEVICES", "0"}, {"PATH", "/a"}}),
                                        print({}, {{"CUDA_VISIBLE_DEVICES", "1"}})})),
            "");
  EXPECT_EQ(fingerprint_mismatch(nodes({print({})})), "");  // one node: nothing to compare
}

struct Case {
  std::vector<Fingerprint> prints;
  std::vector<std::string> named;  // each must appear in the message
};

TEST(Fingerprint, EachMismatchIsNamedPerNode) {
  const Fingerprint same = print({});
  const Case cases[] = {
      {{same, same, same, print({{"torch", "2.10.0"}})},
       {"torch 2.11.0 on nodes 0-2, 2.10.0 on node 3 (host-d)"}},
      {{same, print({}, {{"NCCL_PROTO", "Simple"}})},
       {"NCCL_PROTO=Simple on node 1 (host-b), unset on node 0 (host-a)"}},
      {{print({}, {{"NCCL_ALGO", "Ring"}}), print({}, {{"NCCL_ALGO", "Tree"}})},
       {"NCCL_ALGO=Ring on node 0 (host-a), NCCL_ALGO=Tree on node 1 (host-b)"}},
      {{same, print({{"driver", "535.1"}}), same, same, print({{"driver", "535.1"}})},
       {"driver 550.54.15 on nodes 0,2-3, 535.1 on nodes 1,4"}},
      {{same, print({{"gpu", "NVIDIA H100 80GB HBM3"}})},
       {"gpu NVIDIA H200 on node 0 (host-a), NVIDIA H100 80GB HBM3 on node 1 (host-b)"}},
      {{same, print({{"nccl", "unknown"}})}, {"nccl 2.26.2 on node 0 (host-a), unknown on node 1"}},
      {{same, print({{"cuda", "12.6"}, {"aws-ofi-nccl", "1.14.0"}, {"trainvisor", "0.9.0"}})},
       {"trainvisor 1.0.0 on node 0", "cuda 12.8 on node 0", "aws-ofi-nccl unknown on node 0"}},
  };
  for (const auto& c : cases) {
    const std::string m = fingerprint_mismatch(nodes(c.prints));
    EXPECT_EQ(m.rfind("the nodes differ: ", 0), 0u) << m;
    for (const auto& n : c.named) EXPECT_NE(m.find(n), std::string::npos) << n << "\n in: " << m;
  }
}

TEST(Fingerprint, ANodeWithoutOneIsNamed) {
  auto n = nodes({print({}), print({})});
  n[1].print.reset();
  EXPECT_NE(fingerprint_mismatch(n).find("node 1 (host-b) sent no fingerprint"), std::string::npos)
      << fingerprint_mismatch(n);
}

TEST(Fingerprint, AnotherFormatIsADifference) {
  Fingerprint newer = print({});
  newer.format = 2;
  const std::string m = fingerprint_mismatch(nodes({print({}), newer}));
  EXPECT_NE(m.find("fingerprint format 1 on node 0 (host-a), 2 on node 1 (host-b)"),
            std::string::npos)
      << m;
}

TEST(Fingerprint, ADifferencePastTheVariablesSentStillCounts) {
  Fingerprint a = print({}), b = print({});
  b.vars_hash = "0";
  EXPECT_NE(fingerprint_mismatch(nodes({a, b})).find("differ beyond the first 256"),
            std::string::npos);
}

TEST(Fingerprint, ManyDifferencesAreCut) {
  Environment e1, e2;
  for (int i = 0; i < 20; ++i) e1.set("NCCL_V" + std::to_string(i), "x");
  const std::string m = fingerprint_mismatch(nodes({print({}, e1), print({}, e2)}));
  EXPECT_NE(m.find("; and 12 more"), std::string::npos) << m;
  EXPECT_LT(m.size(), 4096u);
}

TEST(Fingerprint, RoundTripsThroughTheJoinAndDistrustsItsTexts) {
  const Fingerprint fp = print({{"torch", "2.11.0+cu128"}}, {{"NCCL_PROTO", "LL128"}});
  const nlohmann::json join = {{"fingerprint", fingerprint_json(fp)}};
  const auto back = fingerprint_from(join);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->facts, fp.facts);
  EXPECT_EQ(back->vars, fp.vars);
  EXPECT_EQ(back->vars_hash, fp.vars_hash);
  EXPECT_EQ(fingerprint_mismatch(nodes({fp, *back})), "");
  EXPECT_FALSE(fingerprint_from({{"nnodes", 2}}));
  const auto hostile = fingerprint_from(
      {{"fingerprint",
        {{"format", 1}, {"facts", {{"torch", "2\n[trainvisor] fake"}, {"gpu", 7}}}}}});
  ASSERT_TRUE(hostile);
  EXPECT_EQ(hostile->facts.at("torch").find('\n'), std::string::npos);
  EXPECT_EQ(hostile->facts.at("gpu"), "unknown");
}

TEST(Fingerprint, TheHashCoversEveryComparedVariable) {
  Environment many;
  for (int i = 0; i < 300; ++i) many.set("NCCL_X" + std::to_string(1000 + i), "1");
  Fingerprint a = print({}, many);
  many.set("NCCL_X1299", "2");  // past the 256 variables sent
  Fingerprint b = print({}, many);
  EXPECT_EQ(a.vars.size(), kMaxFingerprintVars);
  EXPECT_EQ(a.vars, b.vars);
  EXPECT_NE(a.vars_hash, b.vars_hash);
}

}  // namespace
}  // namespace tv::rdzv

namespace tv::rdzv {
namespace {

TEST(Fingerprint, NoNodeWithOneIsNothingToCompare) {
  auto n = nodes({print({}), print({})});
  n[0].print.reset();
  n[1].print.reset();
  EXPECT_EQ(fingerprint_mismatch(n), "");
}

}  // namespace
}  // namespace tv::rdzv
