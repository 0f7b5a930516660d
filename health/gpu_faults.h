// What a GPU's NVML figures mean for a training job: pure rules shared by the health watch that
// runs beside the workers (health/gpu_watch.h) and the preflight's gpu-health check.
//
// Fatal ("node fault": the job stops on this node and exits exit_code_of(ErrorKind::kNodeFault) so
// that the orchestrator replaces the node rather than retrying on it): a critical Xid whose
// resolution in NVIDIA's Xid catalog is a GPU reset, a reboot or a hardware replacement (xid_info),
// a GPU that NVML reports lost (NVML_ERROR_GPU_IS_LOST), a failed row remapping. Everything else
// the watch sees is a condition that is logged once and exported on /metrics: an Xid the catalog
// resolves by restarting the application (the worker's own failure goes through --max-restarts), a
// new uncorrectable (contained) ECC error, a pending row remap or page retirement, a clock
// slowdown. The preflight is stricter: a GPU that already counts an uncorrectable error, or has a
// remap or retirement pending, fails it (preflight_faults).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tv {

struct XidInfo {
  unsigned xid = 0;
  bool fatal = false;   // the node must be reset or replaced
  std::string meaning;  // what the driver says happened
};

// NVIDIA's meaning of `xid` and whether it is fatal; an Xid outside the table is not fatal and
// says so ("not in trainvisor's table").
XidInfo xid_info(unsigned xid);

// Which GPU, as the failure file names it.
struct GpuIdentity {
  int index = 0;  // NVML's index
  std::string uuid;
  std::string pci_bus_id;
  std::string name;
};

// One reading of a GPU's counters; an unset field is one the GPU or driver does not support.
struct GpuReading {
  bool lost = false;                                  // NVML_ERROR_GPU_IS_LOST from any query
  std::optional<unsigned long long> ecc_uncorrected;  // volatile, since the driver loaded
  std::optional<bool> retired_pages_pending;
  std::optional<bool> remap_pending;
  std::optional<bool> remap_failed;
  std::optional<unsigned long long> clock_event_reasons;  // nvmlClocksEventReason bits
};

struct GpuCondition {
  std::string name;  // lost, remap_failed, ecc_uncorrected, remap_pending, ... hw_thermal
  bool fatal = false;
  std::string message;
};

// The conditions `now` shows while training; `baseline` is the first reading of the run (an
// uncorrectable ECC count is a condition only when it grew since then).
std::vector<GpuCondition> training_conditions(const GpuReading& now, const GpuReading& baseline);
// What fails the preflight: lost, a failed remap, any uncorrectable error, a pending remap or
// page retirement. Empty: the GPU passes.
std::vector<GpuCondition> preflight_faults(const GpuReading& r);
// "GPU 3 (GPU-1d2c..., PCI 00000000:53:00.0, NVIDIA H200)"
std::string describe_gpu(const GpuIdentity& g);

}  // namespace tv
