// Jobs sharing nodes and Slurm steps of the wrong shape: the default master port derived from the
// job id, one task per node, no `run` in a multi-node batch script (docs/topology.md).
#include "tests/unit/topology/topology_fixture.h"

namespace tv::testing {
namespace {

using ::testing::HasSubstr;

TEST(JobMasterPort, NumericIdsTakeConsecutiveSlots) {
  EXPECT_EQ(job_master_port("0"), kJobPortBase);
  EXPECT_EQ(job_master_port("1234"), kJobPortBase + 2 * 1234);
  EXPECT_EQ(job_master_port("1235"), kJobPortBase + 2 * 1235);
  EXPECT_EQ(job_master_port("5001"), kJobPortBase + 2);
}

TEST(JobMasterPort, AnyOtherIdHashesIntoTheRange) {
  for (const char* id : {"my-training-job-2026", "batch:abc#0", "", "99999999999999999999999"}) {
    const int p = job_master_port(id);
    EXPECT_GE(p, kJobPortBase) << id;
    EXPECT_LT(p + 1, kJobPortBase + 2 * kJobPortSlots) << id;  // the rendezvous port too
    EXPECT_EQ(p % 2, 0) << id;
  }
  EXPECT_NE(job_master_port("job-a"), job_master_port("job-b"));
}

class SlurmJobsTest : public TopologyTest {
 protected:
  void SetUp() override {
    set("SLURM_JOB_ID", "4242");
    set("SLURM_NNODES", "2");
    set("SLURM_NODEID", "1");
    set("SLURM_JOB_NODELIST", "n[1-2]");
    set("SLURM_STEP_ID", "0");
  }
};

TEST_F(SlurmJobsTest, DefaultPortComesFromTheJobId) {
  auto t = ok();
  EXPECT_EQ(t.master_port, kJobPortBase + 2 * 4242);
  EXPECT_THAT(t.origin["master_port"], HasSubstr("derived from the job id (env SLURM_JOB_ID)"));
  args = {"--master-port", "1234"};
  EXPECT_EQ(ok().master_port, 1234);  // a port given wins
}

TEST_F(SlurmJobsTest, TwoTasksPerNodeAreRefused) {
  set("SLURM_STEP_TASKS_PER_NODE", "2(x2)");
  set("SLURM_LOCALID", "0");
  auto m = refused();
  EXPECT_THAT(m, HasSubstr("SLURM_STEP_TASKS_PER_NODE=\"2(x2)\""));
  EXPECT_THAT(m, HasSubstr("--ntasks-per-node=1"));
  set("SLURM_STEP_TASKS_PER_NODE", "1,2");
  EXPECT_THAT(refused(), HasSubstr("one trainvisor task per node"));
  set("SLURM_STEP_TASKS_PER_NODE", "1(x2)");
  set("SLURM_LOCALID", "1");
  EXPECT_THAT(refused(), HasSubstr("SLURM_LOCALID=\"1\""));
  set("SLURM_LOCALID", "0");
  EXPECT_EQ(ok().nnodes, 2);
}

TEST_F(SlurmJobsTest, MultiNodeBatchScriptIsRefused) {
  env.erase("SLURM_STEP_ID");
  set("SLURM_NODEID", "0");
  set("ENVIRONMENT", "BATCH");
  auto m = refused();
  EXPECT_THAT(m, HasSubstr("batch script"));
  EXPECT_THAT(m, HasSubstr("srun --ntasks-per-node=1 trainvisor run"));
  set("SLURM_STEP_ID", "0");  // srun inside the batch script: fine
  EXPECT_EQ(ok().nnodes, 2);
  env.erase("SLURM_STEP_ID");
  set("SLURM_NNODES", "1");
  set("SLURM_JOB_NODELIST", "n1");
  EXPECT_EQ(ok().nnodes, 1);  // a one-node batch script runs where its node is
}

}  // namespace
}  // namespace tv::testing
