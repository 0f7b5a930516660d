// The start banner: once per node, before the first start (its GPUs, when no preflight read
// them, once the query beside the first workers answers), what the seeds' entrypoints echo by
// hand (host, platform, ranks, master, workers, GPUs, interpreter, resume), one item per log line
// "start: ITEM: VALUE (from ORIGIN)"; with --log-format json each line is one JSON record, and the
// gpus record also carries the GPUs as an array (`gpus`, `gpus_state`, `gpus_from`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "health/gpu_faults.h"
#include "health/gpu_watch.h"
#include "launcher/topology/gpu_count.h"
#include "launcher/topology/topology.h"

namespace tv {

// The GPUs this node's workers will use, as NVML names them (the UUIDs `nvidia-smi -L` prints),
// in CUDA's order: CUDA_VISIBLE_DEVICES' order, so worker i's `cuda:i` is the i-th.
struct BannerGpus {
  enum class State { kListed, kNone, kUnknown };
  State state = State::kNone;
  std::vector<GpuIdentity> gpus;  // kListed: the first `workers` of the visible GPUs
  int unused = 0;                 // visible GPUs beyond the workers'
  int missing = 0;                // workers beyond the visible GPUs
  std::string from;               // kListed: what read the list, the device nodes; else the reason
};

// The banner's GPUs from an NVML reading (`read`: the preflight's gpu-health check, else one
// `trainvisor __query gpu-health` child; its error is the child's failure) and the device nodes
// (`devices`: /dev/nvidia*, NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES). No reading (nullopt)
// or no GPU in it: none where the container has no GPU device, else unknown, saying why.
BannerGpus banner_gpus(const std::optional<Result<GpuHealthSnapshot>>& read,
                       const std::string& read_by, const GpuVisibility& devices, int workers);
// "GPU 0: NAME (UUID: GPU-..., PCI 00000000:18:00.0); GPU 1: ... (from ...)", "none (...)",
// "unknown (...)".
std::string gpus_text(const BannerGpus& g);
// {"gpus": [{index, name, uuid, pci_bus_id}...] (null when unknown), "gpus_state":
// "listed|none|unknown", "gpus_from": `from`}.
nlohmann::json gpus_json(const BannerGpus& g);

struct BannerFacts {
  std::string host;
  Topology topology;
  // Unset: a `__query gpu-health` child beside the workers reads them, and its line comes when it
  // answers (log_banner_item(gpus_item(...))), off the start path.
  std::optional<BannerGpus> gpus;
  std::string command;      // the workers' argv, joined
  std::string interpreter;  // "PATH (from ORIGIN)", or "" when the command is not python
  std::string torch;        // the workers' torch version, or ""
  std::string resume;       // the checkpoint to resume, or why none
  std::string exported;     // --export SRC -> DIR, or ""
};

struct BannerItem {
  std::string name;
  std::string text;
  nlohmann::json fields;  // the JSON record's extra members (null: none)
};

// The items, in order.
std::vector<BannerItem> banner_items(const BannerFacts& f);
BannerItem gpus_item(const BannerGpus& g);

// Logs them, one line each.
void log_banner(const BannerFacts& f);
void log_banner_item(const BannerItem& item);

}  // namespace tv
