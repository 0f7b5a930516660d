// The Slurm step claim (launcher/topology/step_claim.h) on real abstract sockets: one holder per
// step and node, released with its descriptor; nothing claimed outside Slurm.
#include "launcher/topology/step_claim.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/exit_codes.h"

namespace tv {
namespace {

Topology slurm_topology(const std::string& job_id) {
  Topology t;
  t.platform = Platform::kSlurm;
  t.job_id = job_id + "-" + std::to_string(::getpid());  // unique to this test run
  t.hosts = {"nodeA", "nodeB"};
  return t;
}

TEST(StepClaim, ASecondClaimOfOneStepAndNodeIs78AndNamesThem) {
  const Topology t = slurm_topology("41.0");
  const Environment env{{"SLURMD_NODENAME", "nodeA"}};
  auto first = claim_slurm_step(t, env);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->valid());
  auto second = claim_slurm_step(t, env);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().exit_code(), exit_code_of(ErrorKind::kConfig));
  const std::string& m = second.error().message;
  EXPECT_NE(m.find("Slurm step " + t.job_id + " on node nodeA"), std::string::npos) << m;
  EXPECT_NE(m.find("@" + step_claim_name(t.job_id, "nodeA")), std::string::npos) << m;
  EXPECT_NE(m.find("--ntasks-per-node=1"), std::string::npos) << m;
}

TEST(StepClaim, OtherNodesAndStepsDoNotMeetAndAClosedClaimIsFree) {
  const Topology t = slurm_topology("42.0");
  auto a = claim_slurm_step(t, Environment{{"SLURMD_NODENAME", "nodeA"}});
  ASSERT_TRUE(a.ok());
  // The node from the node list when SLURMD_NODENAME is not set (node_rank 1: nodeB).
  Topology t1 = t;
  t1.node_rank = 1;
  auto b = claim_slurm_step(t1, Environment{});
  ASSERT_TRUE(b.ok()) << b.error().message;
  auto other_step =
      claim_slurm_step(slurm_topology("42.1"), Environment{{"SLURMD_NODENAME", "nodeA"}});
  ASSERT_TRUE(other_step.ok());
  *a = UniqueFd(-1);  // released as at any process end
  EXPECT_TRUE(claim_slurm_step(t, Environment{{"SLURMD_NODENAME", "nodeA"}}).ok());
}

TEST(StepClaim, NothingIsClaimedOutsideSlurm) {
  Topology t;
  t.platform = Platform::kLocal;
  auto c = claim_slurm_step(t, Environment{});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->valid());
}

TEST(StepClaim, ALongNameIsHashedToFitAnAbstractSocketName) {
  const std::string n = step_claim_name(std::string(200, '7'), "node");
  EXPECT_LE(n.size(), 107u);
  EXPECT_EQ(n.rfind("trainvisor-slurm-", 0), 0u);
  EXPECT_NE(n, step_claim_name(std::string(200, '7'), "node2"));
  EXPECT_EQ(step_claim_name("9.0", "tvn1"), "trainvisor-slurm-9.0-tvn1");
}

}  // namespace
}  // namespace tv
