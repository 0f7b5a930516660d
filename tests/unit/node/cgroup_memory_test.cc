#include "launcher/node/cgroup_memory.h"

#include <gtest/gtest.h>

#include <csignal>

#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

TEST(CgroupMemory, V2CountsAndLimit) {
  testing::FakeFileSystem fs;
  fs.add_file("/sys/fs/cgroup/kubepods/pod1/memory.events",
              "low 0\nhigh 0\nmax 12\noom 2\noom_kill 3\noom_group_kill 0\n");
  fs.add_file("/sys/fs/cgroup/kubepods/pod1/memory.max", "100663296\n");
  auto cg = find_memory_cgroup(fs, "0::/kubepods/pod1\n");
  ASSERT_TRUE(cg);
  EXPECT_EQ(oom_kill_count(fs, *cg), 3u);
  EXPECT_EQ(memory_limit(fs, *cg), 100663296u);
  EXPECT_EQ(out_of_memory_text(memory_limit(fs, *cg)), "out of memory (cgroup limit 96 MiB)");
}

// Only a SIGKILL with a kill counted since the generation started was the OOM killer's; the
// count before it (an earlier generation's kill) is the baseline; no cgroup: never.
TEST(OomKills, ASigkillIsOutOfMemoryOnlyWithAKillSinceTheGenerationStarted) {
  testing::FakeFileSystem fs;
  const std::string cg = "/sys/fs/cgroup/job";
  fs.add_file("/proc/self/cgroup", "0::/job\n");
  fs.add_file(cg + "/memory.events", "oom_kill 1\n");
  fs.add_file(cg + "/memory.max", "67108864\n");
  OomKills kills(fs);
  kills.generation_started();
  EXPECT_EQ(kills.why(SIGKILL), "");  // the earlier kill is not this generation's
  fs.add_file(cg + "/memory.events", "oom_kill 2\n");
  EXPECT_EQ(kills.why(SIGKILL), "out of memory (cgroup limit 64 MiB)");
  EXPECT_EQ(kills.why(0), "");  // an exit code, not the killer
  EXPECT_EQ(kills.why(SIGSEGV), "");
  kills.generation_started();
  EXPECT_EQ(kills.why(SIGKILL), "");
  testing::FakeFileSystem none;  // no /proc/self/cgroup
  OomKills unknown(none);
  unknown.generation_started();
  EXPECT_EQ(unknown.why(SIGKILL), "");
}

TEST(CgroupMemory, V2WithoutLimit) {
  testing::FakeFileSystem fs;
  fs.add_file("/sys/fs/cgroup/memory.events", "oom_kill 0\n");
  fs.add_file("/sys/fs/cgroup/memory.max", "max\n");
  auto cg = find_memory_cgroup(fs, "0::/\n");
  ASSERT_TRUE(cg);
  EXPECT_EQ(memory_limit(fs, *cg), std::nullopt);
  EXPECT_EQ(out_of_memory_text(std::nullopt), "out of memory (cgroup OOM killer)");
}

TEST(CgroupMemory, V1BeforeAnEmptyUnifiedHierarchy) {
  testing::FakeFileSystem fs;
  fs.add_file("/sys/fs/cgroup/memory/job/memory.oom_control",
              "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  fs.add_file("/sys/fs/cgroup/memory/job/memory.limit_in_bytes", "9223372036854771712\n");
  auto cg = find_memory_cgroup(fs, "4:memory:/job\n1:cpu,cpuacct:/\n0::/\n");
  ASSERT_TRUE(cg);
  EXPECT_EQ(oom_kill_count(fs, *cg), 1u);
  EXPECT_EQ(memory_limit(fs, *cg), std::nullopt);  // v1's "unlimited"
}

TEST(CgroupMemory, NoneWhenTheFilesAreNotThere) {
  testing::FakeFileSystem fs;
  EXPECT_FALSE(find_memory_cgroup(fs, "0::/\n"));
  EXPECT_FALSE(find_memory_cgroup(fs, "garbage"));
}

}  // namespace
}  // namespace tv
