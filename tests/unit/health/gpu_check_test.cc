#include "health/gpu_check.h"

#include <gtest/gtest.h>

#include <cstring>

#include "fakes.h"

namespace tv {
namespace {

int g_count = 2;
int fake_init(unsigned) { return 0; }
int fake_version(int* v) {
  *v = 13000;
  return 0;
}
int fake_count(int* n) {
  *n = g_count;
  return 0;
}
int fake_get(int* d, int i) {
  *d = i;
  return 0;
}
int fake_name(char* buf, int len, int) {
  std::strncpy(buf, "NVIDIA H200", len);
  return 0;
}
int fake_attr(int* v, int attr, int) {
  *v = attr == 75 ? 9 : 0;
  return 0;
}
int fake_mem(size_t* b, int) {
  *b = 143771ull << 20;
  return 0;
}

testing::FakeLoader loader_with_gpus(int n) {
  g_count = n;
  auto lib = std::make_shared<testing::FakeLibrary>("/usr/lib/libcuda.so.1");
  lib->add("cuInit", &fake_init);
  lib->add("cuDriverGetVersion", &fake_version);
  lib->add("cuDeviceGetCount", &fake_count);
  lib->add("cuDeviceGet", &fake_get);
  lib->add("cuDeviceGetName", &fake_name);
  lib->add("cuDeviceGetAttribute", &fake_attr);
  lib->add("cuDeviceTotalMem_v2", &fake_mem);
  testing::FakeLoader loader;
  loader.add("libcuda.so.1", lib);
  return loader;
}

TEST(GpuCheck, ReadsDevicesThroughTheDriver) {
  auto inv = query_gpus(loader_with_gpus(2));
  ASSERT_TRUE(inv.driver_loaded);
  ASSERT_EQ(inv.devices.size(), 2u);
  EXPECT_EQ(inv.devices[1].name, "NVIDIA H200");
  EXPECT_EQ(inv.devices[1].cc_major, 9);
  EXPECT_EQ(inv.devices[0].memory_bytes, 143771ull << 20);
  auto r = gpu_check(inv, 2);
  EXPECT_EQ(r.outcome, Outcome::kPass);
  EXPECT_NE(r.message.find("CUDA driver 13.0"), std::string::npos);
  EXPECT_EQ(r.details["devices"][0]["compute_capability"], "9.0");
}

TEST(GpuCheck, FewerGpusThanExpectedFails) {
  auto r = gpu_check(query_gpus(loader_with_gpus(2)), 8);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("--nproc-per-node 8"), std::string::npos);
}

TEST(GpuCheck, NoDriverSaysSoPlainly) {
  testing::FakeLoader empty;
  auto inv = query_gpus(empty);
  EXPECT_FALSE(inv.driver_loaded);
  auto r = gpu_check(inv, -1);
  EXPECT_EQ(r.outcome, Outcome::kSkip);
  EXPECT_NE(r.message.find("no NVIDIA driver"), std::string::npos);
  EXPECT_EQ(gpu_check(inv, 1).outcome, Outcome::kFail);
}

TEST(GpuCheck, DriverWithoutDevices) {
  auto r = gpu_check(query_gpus(loader_with_gpus(0)), 1);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

}  // namespace
}  // namespace tv
