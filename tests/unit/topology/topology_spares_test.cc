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
  args = {"--spare-nodes", "1"};
  set("AWS_BATCH_JOB_ID", "0b1c2d3e#0");
  set("AWS_BATCH_JOB_NUM_NODES", "2");
  set("AWS_BATCH_JOB_NODE_INDEX", "0");
  set("AWS_BATCH_JOB_MAIN_NODE_INDEX", "0");
  EXPECT_THAT(refused(), HasSubstr("--spare-nodes=\"1\" under platform batch: expected an "
                                   "explicit topology"));
}

}  // namespace
}  // namespace tv
