#include "launcher/supervision/cgroup_memory.h"

#include <gtest/gtest.h>

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
