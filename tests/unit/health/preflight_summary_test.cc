// preflight_summary: the one line a node sends the others in a multi-node preflight.
#include <gtest/gtest.h>

#include "health/preflight.h"
#include "health/transport.h"

namespace tv {
namespace {

TEST(PreflightSummary, FirstFailedCheckNamesNodeCheckAndMessage) {
  PreflightReport r;
  r.checks = {{"gpu", Outcome::kPass, "2 GPUs", nullptr},
              {"efa-devices", Outcome::kWarn, "mlx5 beside EFA", nullptr},
              {"nccl-transport", Outcome::kFail, "NCCL used socket (NET/Socket: TCP)", nullptr},
              {"busbw", Outcome::kFail, "busbw 3.3 GB/s", nullptr}};
  EXPECT_EQ(preflight_summary(r, 3), "node 3: nccl-transport: NCCL used socket (NET/Socket: TCP)");
}

TEST(PreflightSummary, TheListOfUsualCausesStaysInTheNodesOwnReport) {
  PreflightReport r;
  r.checks = {
      {"nccl-transport", Outcome::kFail, "NCCL used socket. " + efa_fallback_causes(), nullptr}};
  EXPECT_EQ(preflight_summary(r, 1),
            "node 1: nccl-transport: NCCL used socket. (usual causes: in node 1's log)");
}

TEST(PreflightSummary, PassQuotesTheProbe) {
  PreflightReport r;
  r.passed = true;
  r.checks = {
      {"gpu", Outcome::kPass, "2 GPUs", nullptr},
      {"nccl-probe", Outcome::kPass, "NCCL 2.28.9, 1 rank(s) of 2: busbw 20.0 GB/s", nullptr}};
  EXPECT_EQ(preflight_summary(r, 0),
            "node 0: passed (NCCL 2.28.9, 1 rank(s) of 2: busbw 20.0 GB/s)");
  r.checks.pop_back();
  EXPECT_EQ(preflight_summary(r, 1), "node 1: passed");
}

}  // namespace
}  // namespace tv
