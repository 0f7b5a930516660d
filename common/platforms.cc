#include "common/platforms.h"

#include <array>

namespace tv {
namespace {

constexpr StopWindow kContainer{10, 8,
                                "docker stop and podman stop wait 10 s unless given "
                                "--stop-timeout / --time"};
constexpr StopWindow kKubernetes{30, 25,
                                 "Kubernetes' terminationGracePeriodSeconds defaults to 30 s"};

const std::array<PlatformRow, 6> kRows = {{
    {Platform::kLocal, "local", kContainer},
    {Platform::kExplicit, "explicit", kContainer},
    {Platform::kSageMaker, "sagemaker", {120, 110, "SageMaker sends SIGKILL 120 s after SIGTERM"}},
    {Platform::kKubeflow, "kubeflow", kKubernetes},
    {Platform::kBatch, "batch", {30, 25, "AWS Batch (ECS_CONTAINER_STOP_TIMEOUT) waits 30 s"}},
    {Platform::kSlurm, "slurm", {30, 25, "Slurm's KillWait defaults to 30 s"}},
}};

}  // namespace

std::span<const PlatformRow> platforms() { return kRows; }

const PlatformRow& platform_row(Platform p) {
  for (const auto& r : kRows)
    if (r.id == p) return r;
  return kRows[0];
}

std::optional<Platform> platform_named(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.id;
  return std::nullopt;
}

StopWindow stop_window(Platform p, bool in_kubernetes) {
  if ((p == Platform::kLocal || p == Platform::kExplicit) && in_kubernetes) return kKubernetes;
  return platform_row(p).stop;
}

StopWindow stop_window(std::string_view platform, bool in_kubernetes) {
  return stop_window(platform_named(platform).value_or(Platform::kLocal), in_kubernetes);
}

}  // namespace tv
