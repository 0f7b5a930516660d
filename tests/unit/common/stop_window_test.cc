// The platforms' registry (common/platforms.h): one row per platform, its name and its stop
// window; the default grace period stays under each window.
#include <gtest/gtest.h>

#include <set>

#include "common/platforms.h"

namespace tv {
namespace {

TEST(StopWindow, GraceIsAFewSecondsUnderEachPlatformsWindow) {
  EXPECT_EQ(stop_window("kubeflow", false).grace_seconds, 25);
  EXPECT_EQ(stop_window("sagemaker", false).grace_seconds, 110);
  EXPECT_EQ(stop_window("batch", false).grace_seconds, 25);
  EXPECT_EQ(stop_window("slurm", false).grace_seconds, 25);
  EXPECT_EQ(stop_window("local", false).grace_seconds, 8);
  EXPECT_EQ(stop_window("explicit", true).window_seconds, 30);  // any Kubernetes pod
  for (const char* p : {"kubeflow", "sagemaker", "batch", "slurm", "local", "explicit"})
    for (bool k8s : {false, true}) {
      const StopWindow w = stop_window(p, k8s);
      EXPECT_GE(w.window_seconds - w.grace_seconds, 2) << p;
      EXPECT_LE(w.window_seconds - w.grace_seconds, 10) << p;
    }
}

TEST(Platforms, OneRowPerPlatformFoundByItsName) {
  std::set<std::string_view> names;
  for (const PlatformRow& r : platforms()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_EQ(platform_named(r.name), r.id);
    EXPECT_EQ(&platform_row(r.id), &r);
    EXPECT_EQ(stop_window(r.id, false).grace_seconds, stop_window(r.name, false).grace_seconds);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(Platform::kSlurm) + 1);
  EXPECT_EQ(platform_named("lsf"), std::nullopt);
  EXPECT_EQ(stop_window("lsf", false).window_seconds, 10);  // a plain container's
}

}  // namespace
}  // namespace tv
