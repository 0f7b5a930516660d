// The dense BF16 tensor peak of the GPUs the seeds use, for MFU (model FLOPs utilization). Pure:
// a GPU's name as the CUDA driver reports it (cuDeviceGetName, asked in the `__query gpu` child:
// PID 1 never loads libcuda) to its peak in FLOP/s. The figures and their datasheets are in
// docs/observability.md, "MFU".
#pragma once

#include <optional>
#include <string_view>

namespace tv {

struct GpuPeak {
  const char* model;  // "H100 SXM", the table row that matched
  double flops;       // dense BF16 FLOP/s of one GPU (no structured sparsity)
};

// nullopt for a GPU the table does not know (MFU is then left out, saying why).
std::optional<GpuPeak> gpu_peak_bf16(std::string_view device_name);

}  // namespace tv
