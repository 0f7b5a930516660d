#include "launcher/supervision/gpu_health_watch.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(GpuHealthLine, AFatalXidNamesTheGpu) {
  const auto e = parse_gpu_health_line(
      R"({"event":"xid","gpu":{"index":1,"uuid":"GPU-fake-0001","pci_bus_id":"00000000:02:00.0",)"
      R"("name":"Fake H200"},"xid":79,"fatal":true,"meaning":"GPU has fallen off the bus"})");
  EXPECT_EQ(e.kind, GpuHealthEvent::Kind::kXid);
  EXPECT_TRUE(e.fatal);
  EXPECT_EQ(e.xid, 79u);
  EXPECT_EQ(describe_gpu_event(e),
            "GPU 1 (GPU-fake-0001, PCI 00000000:02:00.0, Fake H200): Xid 79: GPU has fallen off "
            "the bus");
}

TEST(GpuHealthLine, AConditionThatCleared) {
  const auto e = parse_gpu_health_line(
      R"({"event":"condition","gpu":{"index":0,"uuid":"GPU-a"},"condition":"hw_thermal",)"
      R"("active":false,"fatal":false,"message":"cleared"})");
  EXPECT_EQ(e.kind, GpuHealthEvent::Kind::kCondition);
  EXPECT_FALSE(e.active);
  EXPECT_EQ(e.condition, "hw_thermal");
}

TEST(GpuHealthLine, AnythingElseIsUnknownNeverAThrow) {
  for (const char* line : {"", "not json", "[1]", R"({"event":7})", R"({"event":"xid","gpu":[]})"})
    EXPECT_NO_THROW(parse_gpu_health_line(line)) << line;
  EXPECT_EQ(parse_gpu_health_line("garbage").kind, GpuHealthEvent::Kind::kUnknown);
  EXPECT_EQ(parse_gpu_health_line(R"({"event":"unavailable","reason":"no NVML"})").message,
            "no NVML");
}

}  // namespace
}  // namespace tv
