#include "health/gpu_faults.h"

#include <array>

namespace tv {
namespace {

struct XidRow {
  unsigned xid;
  bool fatal;
  const char* meaning;
};

// NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, Ampere and
// newer): fatal where its immediate action is RESET_GPU, RESTART_BM or a replacement, not where it
// is RESTART_APP (the application's own fault, or one the GPU contained).
constexpr std::array<XidRow, 18> kXids{{
    {13, false, "graphics engine exception (usually the application: an illegal address)"},
    {31, false, "GPU memory page fault (usually the application: an illegal address)"},
    {43, false, "GPU stopped processing (the application's channel was reset)"},
    {45, false, "preemptive cleanup after an earlier error (the application was stopped)"},
    {48, true, "double-bit (uncorrectable) ECC error"},
    {61, true, "internal micro-controller breakpoint/warning"},
    {62, true, "internal micro-controller halt"},
    {63, false, "ECC page retirement or row remapping recorded (a GPU reset applies it)"},
    {64, true, "ECC page retirement or row remapping failed"},
    {74, true, "NVLink error"},
    {79, true, "GPU has fallen off the bus"},
    {92, false, "high single-bit ECC error rate"},
    {94, false, "contained uncorrectable ECC error (only the application that used it is hit)"},
    {95, true, "uncontained uncorrectable ECC error"},
    {119, true, "GSP RPC timeout (the GPU's system processor stopped answering)"},
    {120, true, "GSP error"},
    {140, true, "unrecovered ECC error"},
    {154, true, "GPU recovery action changed (the driver asks for a reset or a reboot)"},
}};

void add(std::vector<GpuCondition>& out, const char* name, bool fatal, std::string message) {
  out.push_back({name, fatal, std::move(message)});
}

struct Slowdown {
  unsigned long long bit;
  const char* name;
  const char* message;
};

// nvmlClocksEventReason bits that mean the GPU runs slower than it should. SW power capping (0x4)
// is left out: under full load it is the normal state of a GPU at its power limit.
constexpr std::array<Slowdown, 4> kSlowdowns{{
    {0x8, "hw_slowdown", "hardware slowdown (clocks cut by half or more: power brake or overheat)"},
    {0x20, "sw_thermal", "software thermal slowdown (the GPU or its memory is too hot)"},
    {0x40, "hw_thermal", "hardware thermal slowdown (the GPU is too hot)"},
    {0x80, "hw_power_brake", "hardware power brake slowdown (the power supply asked for it)"},
}};

}  // namespace

XidInfo xid_info(unsigned xid) {
  for (const auto& row : kXids)
    if (row.xid == xid) return {xid, row.fatal, row.meaning};
  return {xid, false, "not in trainvisor's table (NVIDIA's Xid catalog has it)"};
}

std::vector<GpuCondition> training_conditions(const GpuReading& now, const GpuReading& baseline) {
  std::vector<GpuCondition> out;
  if (now.lost) add(out, "lost", true, "the GPU is lost (NVML: GPU is lost)");
  if (now.remap_failed.value_or(false))
    add(out, "remap_failed", true, "row remapping failed: the memory cannot be repaired");
  if (now.ecc_uncorrected && *now.ecc_uncorrected > baseline.ecc_uncorrected.value_or(0))
    add(out, "ecc_uncorrected", false,
        std::to_string(*now.ecc_uncorrected) +
            " uncorrectable ECC error(s) since the driver loaded");
  if (now.remap_pending.value_or(false))
    add(out, "remap_pending", false, "a row remap is pending (a GPU reset applies it)");
  if (now.retired_pages_pending.value_or(false))
    add(out, "retired_pages_pending", false,
        "a page retirement is pending (a GPU reset applies it)");
  for (const auto& s : kSlowdowns)
    if (now.clock_event_reasons.value_or(0) & s.bit) add(out, s.name, false, s.message);
  return out;
}

std::vector<GpuCondition> preflight_faults(const GpuReading& r) {
  std::vector<GpuCondition> out;
  if (r.lost) add(out, "lost", true, "the GPU is lost (NVML: GPU is lost)");
  if (r.remap_failed.value_or(false))
    add(out, "remap_failed", true, "row remapping failed: the memory cannot be repaired");
  if (r.ecc_uncorrected.value_or(0) > 0)
    add(out, "ecc_uncorrected", true,
        std::to_string(*r.ecc_uncorrected) + " uncorrectable ECC error(s) since the driver loaded");
  if (r.remap_pending.value_or(false))
    add(out, "remap_pending", true, "a row remap is pending: reset the GPU before using it");
  if (r.retired_pages_pending.value_or(false))
    add(out, "retired_pages_pending", true,
        "a page retirement is pending: reset the GPU before using it");
  return out;
}

std::string describe_gpu(const GpuIdentity& g) {
  std::string out = "GPU " + std::to_string(g.index) + " (" + (g.uuid.empty() ? "?" : g.uuid);
  if (!g.pci_bus_id.empty()) out += ", PCI " + g.pci_bus_id;
  if (!g.name.empty()) out += ", " + g.name;
  return out + ")";
}

}  // namespace tv
