#include "launcher/topology/gpu_count.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tv {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

int visible(int devices, std::optional<std::string> nv, std::optional<std::string> cuda) {
  return visible_gpus(devices, "/dev/nvidia*", nv, cuda).count;
}

TEST(VisibleGpus, NoDevicesMeansZero) {
  EXPECT_EQ(visible(0, std::nullopt, std::nullopt), 0);
  EXPECT_EQ(visible(0, "all", "0,1"), 0);
  EXPECT_THAT(visible_gpus(0, "/dev/nvidia*", {}, {}).describe, HasSubstr("no NVIDIA GPU"));
}

TEST(VisibleGpus, UnfilteredCountsEveryDevice) {
  EXPECT_EQ(visible(8, std::nullopt, std::nullopt), 8);
  EXPECT_EQ(visible(8, "all", std::nullopt), 8);
  EXPECT_EQ(visible(8, "ALL", std::nullopt), 8);
}

TEST(VisibleGpus, NvidiaVisibleDevices) {
  EXPECT_EQ(visible(8, "none", std::nullopt), 0);
  EXPECT_EQ(visible(8, "", std::nullopt), 0);
  EXPECT_EQ(visible(8, "0,1,2", std::nullopt), 3);
  EXPECT_EQ(visible(2, "0,1,2,3", std::nullopt), 2);
  EXPECT_EQ(visible(8, "GPU-aaaa,GPU-bbbb", std::nullopt), 2);
}

// Isaac Sim's base image sets void; the runtime still mounts the node's GPUs, and CUDA uses them.
TEST(VisibleGpus, VoidCountsTheDevicesTheContainerHas) {
  EXPECT_EQ(visible(8, "void", std::nullopt), 8);
  EXPECT_EQ(visible(4, "VOID", std::nullopt), 4);
  EXPECT_EQ(visible(0, "void", std::nullopt), 0);
  EXPECT_EQ(visible(8, "void", "0,1"), 2);
  EXPECT_THAT(visible_gpus(4, "/dev/nvidia*", "void", {}).describe,
              HasSubstr("NVIDIA_VISIBLE_DEVICES=void ignored"));
}

TEST(VisibleGpus, CudaVisibleDevicesFollowsCudaRules) {
  EXPECT_EQ(visible(8, std::nullopt, "0,1"), 2);
  EXPECT_EQ(visible(8, std::nullopt, ""), 0);
  EXPECT_EQ(visible(8, std::nullopt, "-1"), 0);
  EXPECT_EQ(visible(8, std::nullopt, "0,-1,2"), 1);  // stops at the first invalid entry
  EXPECT_EQ(visible(4, std::nullopt, "3,4,1"), 1);   // 4 does not exist
  EXPECT_EQ(visible(8, std::nullopt, "1,1,2"), 1);   // a repeat is invalid
  EXPECT_EQ(visible(8, std::nullopt, "0, 1"), 2);    // spaces around entries
  EXPECT_EQ(visible(8, std::nullopt, "GPU-1234,MIG-5678"), 2);
  EXPECT_EQ(visible(2, std::nullopt, "GPU-1,GPU-2,GPU-3"), 2);
  EXPECT_EQ(visible(8, std::nullopt, "abc"), 0);
}

TEST(VisibleGpus, BothFiltersTakeTheSmaller) {
  EXPECT_EQ(visible(8, "0,1,2,3", "0,1"), 2);
  EXPECT_EQ(visible(8, "0", "0,1,2"), 1);
}

TEST(VisibleGpus, DescribeNamesTheFilters) {
  auto v = visible_gpus(4, "/dev/nvidia*", std::nullopt, "0,1");
  EXPECT_THAT(v.describe, HasSubstr("2 visible GPUs"));
  EXPECT_THAT(v.describe, HasSubstr("4 devices"));
  EXPECT_THAT(v.describe, HasSubstr("CUDA_VISIBLE_DEVICES=0,1"));
}

class RealGpuCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tv_gpu_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "dev");
    fs::create_directories(root_ / "proc");
  }
  void TearDown() override { fs::remove_all(root_); }
  void touch(const fs::path& p) { std::ofstream(p) << ""; }
  RealGpuCounter counter(Environment env = {}) {
    return RealGpuCounter(env, (root_ / "dev").string(), (root_ / "proc").string());
  }
  fs::path root_;
};

TEST_F(RealGpuCounterTest, CountsNumberedDeviceNodesOnly) {
  for (const char* n : {"nvidia0", "nvidia1", "nvidia7", "nvidiactl", "nvidia-uvm", "nvidia-caps",
                        "nvidia1x", "null"})
    touch(root_ / "dev" / n);
  EXPECT_EQ(counter().count(), 3);
  EXPECT_THAT(counter().describe(), HasSubstr("3 devices"));
}

TEST_F(RealGpuCounterTest, FallsBackToProcDriverEntries) {
  fs::create_directories(root_ / "proc" / "0000:10:1c.0");
  fs::create_directories(root_ / "proc" / "0000:10:1d.0");
  EXPECT_EQ(counter().count(), 2);
}

TEST_F(RealGpuCounterTest, NothingFoundIsZero) {
  EXPECT_EQ(counter().count(), 0);
  RealGpuCounter missing(Environment{}, "/nonexistent/dev", "/nonexistent/proc");
  EXPECT_EQ(missing.count(), 0);
}

TEST_F(RealGpuCounterTest, AppliesCudaVisibleDevicesFromTheEnvironment) {
  for (const char* n : {"nvidia0", "nvidia1", "nvidia2", "nvidia3"}) touch(root_ / "dev" / n);
  EXPECT_EQ(
      counter(Environment(std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "2,3"}}))
          .count(),
      2);
  EXPECT_EQ(
      counter(Environment(std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "none"}}))
          .count(),
      0);
}

TEST_F(RealGpuCounterTest, VoidCountsTheDeviceNodesOrDriverEntries) {
  const Environment isaac(std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "void"}});
  fs::create_directories(root_ / "proc" / "0000:10:1c.0");
  EXPECT_EQ(counter(isaac).count(), 1);
  for (const char* n : {"nvidia0", "nvidia1", "nvidiactl"}) touch(root_ / "dev" / n);
  EXPECT_EQ(counter(isaac).count(), 2);
}

}  // namespace
}  // namespace tv
