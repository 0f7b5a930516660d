// resolve_expected_gpus and nvidia_gpu_functions: the one rule `run` and `preflight` share for
// how many GPUs the preflight expects (health/preflight.h).
#include <gtest/gtest.h>

#include "health/preflight.h"
#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

using testing::FakeFileSystem;

constexpr const char* kPci = "/sys/bus/pci/devices";

void add_function(FakeFileSystem& fs, const std::string& addr, const std::string& vendor,
                  const std::string& cls) {
  fs.add_file(std::string(kPci) + "/" + addr + "/vendor", vendor + "\n");
  fs.add_file(std::string(kPci) + "/" + addr + "/class", cls + "\n");
}

TEST(ExpectedGpus, ANodeWithoutNvidiaGpusChecksNoCountInRunAndPreflightAlike) {
  EXPECT_EQ(resolve_expected_gpus(8, 0, 0), -1);  // its 8 workers run on the CPU (gloo)
}

TEST(ExpectedGpus, AGpuNodeExpectsItsWorkersDriverOrNot) {
  EXPECT_EQ(resolve_expected_gpus(8, 8, 8), 8);
  EXPECT_EQ(resolve_expected_gpus(8, 0, 8), 8);    // no driver: no device node, the GPUs are there
  EXPECT_EQ(resolve_expected_gpus(-1, 4, 4), -1);  // preflight without a count: none checked
}

TEST(ExpectedGpus, OnlyNvidiaDisplayAnd3dControllersAreGpus) {
  FakeFileSystem fs;
  add_function(fs, "0000:00:1e.0", "0x10de", "0x030200");  // H100/H200: 3D controller
  add_function(fs, "0000:00:1f.0", "0x10de", "0x030000");  // VGA controller
  add_function(fs, "0000:00:20.0", "0x10de", "0x068000");  // NVSwitch: a bridge
  add_function(fs, "0000:00:21.0", "0x10de", "0x040300");  // an HDMI audio function
  add_function(fs, "0000:00:22.0", "0x1d0f", "0x020000");  // EFA
  add_function(fs, "0000:00:23.0", "0x1af4", "0x030000");  // virtio GPU
  EXPECT_EQ(nvidia_gpu_functions(fs), 2);
  EXPECT_EQ(nvidia_gpu_functions(FakeFileSystem()), 0);
}

}  // namespace
}  // namespace tv
