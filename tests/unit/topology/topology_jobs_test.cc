// Jobs sharing nodes and Slurm steps of the wrong shape: the default master port derived from the
// job id, one task per node, no `run` in a multi-node batch script (docs/topology.md).
#include <set>

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

TEST(JobMasterPort, SlurmStepsOfOneJobTakeDistantSlots) {
  EXPECT_EQ(job_master_port("1234.0"), job_master_port("1234"));  // step 0 keeps the job's slot
  std::set<int> ports;
  for (int step = 0; step < 9; ++step)
    ports.insert(job_master_port("1234." + std::to_string(step)));
  EXPECT_EQ(ports.size(), 9u);
  // Step 1..8 of job J never takes the slot of step 0 of a job within 345 of J.
  for (int step = 1; step < 9; ++step)
    for (int near = 1234 - 344; near <= 1234 + 344; ++near)
      EXPECT_NE(job_master_port("1234." + std::to_string(step)),
                job_master_port(std::to_string(near)))
          << step << " " << near;
  EXPECT_EQ(job_master_port("1234.5001"), job_master_port("1234.1"));
  const int odd = job_master_port("1234.x");  // not a step: hashed
  EXPECT_GE(odd, kJobPortBase);
  EXPECT_LT(odd, kJobPortBase + 2 * kJobPortSlots);
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
  EXPECT_EQ(t.job_id, "4242.0");
  EXPECT_EQ(t.master_port, kJobPortBase + 2 * 4242);
  EXPECT_THAT(t.origin["master_port"],
              HasSubstr("derived from the job id (env SLURM_JOB_ID + SLURM_STEP_ID)"));
  args = {"--master-port", "1234"};
  EXPECT_EQ(ok().master_port, 1234);  // a port given wins
}

TEST_F(SlurmJobsTest, ConcurrentStepsGetTheirOwnJobIdAndPort) {
  const auto step0 = ok();
  set("SLURM_STEP_ID", "1");
  const auto step1 = ok();
  EXPECT_EQ(step1.job_id, "4242.1");  // the rendezvous key comes from it (cli/run_command.cc)
  EXPECT_NE(step1.master_port, step0.master_port);
  env.erase("SLURM_STEP_ID");
  set("SLURM_NNODES", "1");
  set("SLURM_NODEID", "0");
  set("SLURM_JOB_NODELIST", "n1");
  EXPECT_EQ(ok().job_id, "4242");  // no step (salloc's shell, a one-node batch script)
}

TEST_F(SlurmJobsTest, APartialEnvironmentIsRefusedNamingWhatIsMissing) {
  env.erase("SLURM_JOB_ID");
  auto m = refused();
  EXPECT_THAT(m, HasSubstr("SLURM_JOB_ID is not set but SLURM_NNODES, SLURM_NODEID, "
                           "SLURM_JOB_NODELIST are set"));
  set("SLURM_JOB_ID", "");
  EXPECT_THAT(refused(), HasSubstr("SLURM_JOB_ID is empty"));
  env.erase("SLURM_JOB_ID");
  env.erase("SLURM_NNODES");
  env.erase("SLURM_JOB_NODELIST");
  EXPECT_THAT(refused(), HasSubstr("but SLURM_NODEID is set"));
}

TEST_F(SlurmJobsTest, TheStepsNodesWinOverTheAllocations) {
  set("SLURM_JOB_NUM_NODES", "3");
  set("SLURM_JOB_NODELIST", "n[1-3]");
  set("SLURM_NODELIST", "n[1-3]");
  set("SLURM_STEP_NUM_NODES", "2");
  set("SLURM_STEP_NODELIST", "n[2-3]");
  auto t = ok();
  EXPECT_EQ(t.nnodes, 2);
  EXPECT_EQ(t.master_addr, "n2");
  env.erase("SLURM_STEP_NODELIST");  // the step's count without the step's list
  EXPECT_THAT(refused(), HasSubstr("SLURM_STEP_NODELIST is not set"));
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
