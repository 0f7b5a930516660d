// The default grace period stays under each platform's stop window.
#include "common/stop_window.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tv
