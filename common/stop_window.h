// How long each platform waits between its SIGTERM and its SIGKILL, and the grace period that
// trainvisor uses there by default: a few seconds under the window, so that trainvisor's own
// SIGKILL to the workers, the root-cause report and its exit all happen before the platform's.
// One table for `run` (the default of --grace-period) and `render` (the rendered stop settings).
// docs/platforms/README.md explains each figure.
#pragma once

#include <string_view>

namespace tv {

struct StopWindow {
  int window_seconds;  // the platform's SIGTERM -> SIGKILL window
  int grace_seconds;   // trainvisor's default --grace-period there
  std::string_view what;
};

// `platform`: kubeflow, sagemaker, batch, slurm; anything else (local, explicit) is a plain
// docker/podman container. `in_kubernetes`: KUBERNETES_SERVICE_HOST is set (any pod).
inline StopWindow stop_window(std::string_view platform, bool in_kubernetes) {
  if (platform == "sagemaker") return {120, 110, "SageMaker sends SIGKILL 120 s after SIGTERM"};
  if (platform == "batch") return {30, 25, "AWS Batch (ECS_CONTAINER_STOP_TIMEOUT) waits 30 s"};
  if (platform == "slurm") return {30, 25, "Slurm's KillWait defaults to 30 s"};
  if (platform == "kubeflow" || in_kubernetes)
    return {30, 25, "Kubernetes' terminationGracePeriodSeconds defaults to 30 s"};
  return {10, 8, "docker stop and podman stop wait 10 s unless given --stop-timeout / --time"};
}

}  // namespace tv
