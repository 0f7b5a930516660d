// The GPUs this container can use, through the CUDA driver loaded at run time (libcuda.so.1,
// which honours CUDA_VISIBLE_DEVICES), and the check of their count against --nproc-per-node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "health/dynamic_library.h"
#include "health/preflight.h"

namespace tv {

struct GpuDevice {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t memory_bytes = 0;
};

struct GpuInventory {
  bool driver_loaded = false;
  std::string driver_path;
  int driver_version = 0;  // 13000 = CUDA 13.0
  std::vector<GpuDevice> devices;
  std::string error;  // why there is no driver or no device, when so
};

GpuInventory query_gpus(const LibraryLoader& loader);
// expected_gpus < 0: no count check. No driver: skip, or fail when GPUs are expected (> 0).
CheckResult gpu_check(const GpuInventory& inv, int expected_gpus);
std::string cuda_version_string(int driver_version);  // 13000 -> "13.0"

struct GpuHealthSnapshot;
// The gpu-health check: NVML's reading of every visible GPU against preflight_faults
// (health/gpu_faults.h). NVML not loadable: skip (no NVIDIA driver), or warn when the CUDA driver
// sees GPUs (a container without libnvidia-ml cannot be watched while training).
CheckResult gpu_health_check(const GpuHealthSnapshot& s, bool cuda_sees_gpus);
// What a preflight's gpu-health check read, parsed back from its details: the GPUs NVML saw
// (index, UUID, PCI bus id, name), or why none (NVML's error, or the failure of its query child:
// hung, crashed, no answer). A report without that check: not loaded, saying so.
GpuHealthSnapshot gpu_health_of(const PreflightReport& report);

}  // namespace tv
