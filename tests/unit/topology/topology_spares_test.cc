// --spare-nodes K (docs/coordination.md, "Hot spare nodes"): node ranks 0..N+K-1 over an explicit
// fixed world; refused with one line where it cannot work yet (a platform, an elastic range, no
// master address).
#include "tests/unit/topology/topology_fixture.h"

namespace tv {
namespace {

using ::testing::HasSubstr;
using testing::TopologyTest;

TEST_F(TopologyTest, ASpareHasANodeRankPastTheWorld) {
  args = {"--nnodes", "2", "--spare-nodes", "1", "--node-rank", "2", "--master-addr", "10.0.0.5"};
  const Topology t = ok();
  EXPECT_EQ(t.nnodes, 2);
  EXPECT_EQ(t.spare_nodes, 1);
  EXPECT_EQ(t.slots(), 3);
  EXPECT_EQ(t.node_rank, 2);
  EXPECT_EQ(t.world_size(), 2);  // one worker per node here: the spare is not in the world
  EXPECT_EQ(t.origin.at("spare_nodes"), "--spare-nodes");
  args = {"--nnodes", "2", "--spare-nodes", "1", "--node-rank", "3", "--master-addr", "10.0.0.5"};
  EXPECT_THAT(refused(), HasSubstr("--node-rank=\"3\""));
}

TEST_F(TopologyTest, AOneNodeWorldWithASpareFindsRanksAtTheRendezvous) {
  args = {"--nnodes", "1", "--spare-nodes", "1", "--master-addr", "10.0.0.5"};
  const Topology t = ok();
  EXPECT_EQ(t.slots(), 2);
  EXPECT_TRUE(t.rank_by_rendezvous);
}

TEST_F(TopologyTest, SparesAreRefusedWhereTheyCannotWorkYet) {
  args = {"--nnodes", "2:3", "--spare-nodes", "1", "--master-addr", "10.0.0.5"};
  EXPECT_THAT(refused(), HasSubstr("--spare-nodes=\"1\" with --nnodes 2:3: expected a fixed "
                                   "--nnodes N with spares"));
  args = {"--nnodes", "2", "--spare-nodes", "1"};
  EXPECT_THAT(refused(), HasSubstr("without --master-addr"));
}

// A platform's node count is every container it started: the world is that count less the
// spares, and the node's rank (here Kubeflow's replica index 4 of 5) may be a spare's.
TEST_F(TopologyTest, UnderAPlatformTheSparesComeOutOfItsNodeCount) {
  set("PET_NNODES", "5");
  set("PET_NODE_RANK", "4");
  set("PET_MASTER_ADDR", "cosmos-master-0");
  args = {"--spare-nodes", "1"};
  const Topology t = ok();
  EXPECT_EQ(t.nnodes, 4);
  EXPECT_EQ(t.slots(), 5);
  EXPECT_EQ(t.node_rank, 4);
  EXPECT_EQ(t.origin.at("nnodes"), "env PET_NNODES less --spare-nodes 1");
  args = {"--spare-nodes", "5"};
  EXPECT_THAT(refused(), HasSubstr("--spare-nodes=\"5\": expected fewer spares than the 5 nodes"));
  set("PET_NNODES", "2:5");
  args = {"--spare-nodes", "1"};
  EXPECT_THAT(refused(), HasSubstr("with env PET_NNODES 2:5: expected a fixed"));
}

TEST_F(TopologyTest, SageMakerTakesNoSpares) {
  fs.add_file(kRc, testing::topology_data("resourceconfig_plain.json"));
  set("TRAINING_JOB_NAME", "isaac-ppo-2026");
  args = {"--spare-nodes", "1"};
  EXPECT_THAT(refused(),
              HasSubstr("--spare-nodes=\"1\" under platform sagemaker: expected no spares"));
}

}  // namespace
}  // namespace tv
