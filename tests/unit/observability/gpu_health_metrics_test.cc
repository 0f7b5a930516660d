#include "launcher/observability/gpu_health_metrics.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(GpuHealthMetrics, NothingBeforeTheWatchSaidAnything) {
  EXPECT_EQ(GpuHealthMetrics().render(), "");
}

TEST(GpuHealthMetrics, ConditionsAreGaugesAndXidsCount) {
  GpuHealthMetrics m;
  m.watching(true);
  m.condition(1, "GPU-b", "hw_thermal", true);
  m.xid(0, "GPU-a", 13);
  m.xid(0, "GPU-a", 13);
  std::string text = m.render();
  EXPECT_NE(text.find("trainvisor_gpu_health_watching 1\n"), std::string::npos);
  EXPECT_NE(text.find(R"(trainvisor_gpu_condition{gpu="1",uuid="GPU-b",condition="hw_thermal"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(trainvisor_gpu_xid_events_total{gpu="0",uuid="GPU-a",xid="13"} 2)"),
            std::string::npos);
  m.condition(1, "GPU-b", "hw_thermal", false);
  text = m.render();
  EXPECT_NE(text.find(R"(condition="hw_thermal"} 0)"), std::string::npos);
}

}  // namespace
}  // namespace tv
