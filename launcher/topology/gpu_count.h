// GpuCounter: how many GPUs this container can use, without CUDA (for --nproc-per-node auto).
//
// RealGpuCounter counts NVIDIA device nodes (/dev/nvidia[0-9]+, else the entries of
// /proc/driver/nvidia/gpus/) and filters them by NVIDIA_VISIBLE_DEVICES (all|none|list; `void`,
// which Isaac Sim's base image sets, filters nothing: the devices the container has count) and
// CUDA_VISIBLE_DEVICES (indices or GPU-/MIG- UUIDs; CUDA stops at the first invalid entry).
// It reads the directories once, at construction. Thread-safe after construction.
#pragma once

#include <optional>
#include <string>

#include "common/environment.h"

namespace tv {

class GpuCounter {
 public:
  virtual ~GpuCounter() = default;
  virtual int count() const = 0;
  // Where count() came from, e.g. "2 visible GPUs (4 devices, CUDA_VISIBLE_DEVICES=0,1)".
  virtual std::string describe() const = 0;
};

struct GpuVisibility {
  int count = 0;
  std::string describe;
};

// The pure rule: `devices` device nodes found (`found_in` says where), filtered by the two
// variables (nullopt when unset).
GpuVisibility visible_gpus(int devices, const std::string& found_in,
                           const std::optional<std::string>& nvidia_visible,
                           const std::optional<std::string>& cuda_visible);

class RealGpuCounter final : public GpuCounter {
 public:
  explicit RealGpuCounter(const Environment& env, const std::string& dev_dir = "/dev",
                          const std::string& proc_dir = "/proc/driver/nvidia/gpus");
  int count() const override { return v_.count; }
  std::string describe() const override { return v_.describe; }

 private:
  GpuVisibility v_;
};

}  // namespace tv
