// The GPU health watch: NVML (libnvidia-ml.so.1) read in a child of trainvisor, never in trainvisor
// itself (health/isolated_query.h says why). Two entry points:
//   `trainvisor __query gpu-health`: one reading of every visible GPU, one JSON line (the
//     preflight's gpu-health check);
//   `trainvisor __query gpu-watch SECONDS`: runs beside the workers until it is killed. It blocks
//   in
//     nvmlEventSetWait for critical Xid events (SECONDS at most) and reads the counters every
//     SECONDS (uncorrectable ECC, pending retirement, row remapping, clock slowdown, a lost GPU).
//     It prints one JSON line per event (the protocol in docs/health.md, "GPU health while
//     training"): `watching`, `unavailable`, `reading` (the first reading), `xid`, `condition`
//     (a condition that became active or cleared); the Supervisor reads them
//     (launcher/node/gpu_health_watch.h). What is fatal is health/gpu_faults.h's.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"
#include "health/dynamic_library.h"
#include "health/gpu_faults.h"

namespace tv {

// NVML's indices of the GPUs CUDA_VISIBLE_DEVICES (unset: all) leaves visible, given every GPU's
// UUID in NVML's order. Entries are indices or UUID prefixes (`GPU-...`); as in CUDA, the list
// ends at the first entry that names no GPU; MIG entries are skipped.
std::vector<unsigned> visible_gpus(const std::optional<std::string>& cuda_visible_devices,
                                   const std::vector<std::string>& uuids);

struct GpuHealthSnapshot {
  bool loaded = false;
  std::string error;  // why NVML could not be read, when so
  std::string library_path;
  std::string driver_version;
  std::vector<GpuIdentity> gpus;
  std::vector<GpuReading> readings;  // by position in gpus
};

// `__query gpu-health`: one reading of every visible GPU.
GpuHealthSnapshot query_gpu_health(const LibraryLoader& loader, const Environment& env);
nlohmann::json snapshot_to_json(const GpuHealthSnapshot& s);
GpuHealthSnapshot snapshot_from_json(const nlohmann::json& j);
nlohmann::json identity_json(const GpuIdentity& g);
nlohmann::json reading_json(const GpuReading& r);

// `__query gpu-watch SECONDS`: never returns while NVML answers; exit 0 after `unavailable`, 1
// when stdout is gone.
int gpu_watch_main(const LibraryLoader& loader, const Environment& env, double interval_s);

}  // namespace tv
