#include "health/gpu_check.h"

#include <cstdio>

#include "health/cuda_api.h"
#include "health/gpu_watch.h"

namespace tv {
namespace {

GpuDevice describe_device(const cuda::Api& api, int index) {
  GpuDevice d;
  d.index = index;
  cuda::Device dev = 0;
  if (api.cuDeviceGet(&dev, index) != 0) return d;
  char name[256] = {};
  if (api.cuDeviceGetName(name, sizeof(name) - 1, dev) == 0) d.name = name;
  api.cuDeviceGetAttribute(&d.cc_major, cuda::kAttrComputeMajor, dev);
  api.cuDeviceGetAttribute(&d.cc_minor, cuda::kAttrComputeMinor, dev);
  size_t bytes = 0;
  if (api.cuDeviceTotalMem(&bytes, dev) == 0) d.memory_bytes = bytes;
  return d;
}

nlohmann::json inventory_json(const GpuInventory& inv) {
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : inv.devices)
    devs.push_back(
        {{"index", d.index},
         {"name", d.name},
         {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
         {"memory_bytes", d.memory_bytes}});
  return {{"driver_loaded", inv.driver_loaded},
          {"driver_path", inv.driver_path},
          {"cuda_driver_version", inv.driver_loaded ? cuda_version_string(inv.driver_version) : ""},
          {"count", inv.devices.size()},
          {"devices", devs},
          {"error", inv.error}};
}

std::string device_list(const GpuInventory& inv) {
  std::string out;
  for (const auto& d : inv.devices) {
    char buf[320];
    std::snprintf(buf, sizeof(buf), "%s%d: %s (sm_%d%d, %.0f GiB)", out.empty() ? "" : "; ",
                  d.index, d.name.c_str(), d.cc_major, d.cc_minor, d.memory_bytes / 1073741824.0);
    out += buf;
  }
  return out;
}

}  // namespace

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

GpuInventory query_gpus(const LibraryLoader& loader) {
  GpuInventory inv;
  std::string why;
  cuda::Api api = cuda::load(loader, &why);
  if (!api.lib) {
    inv.error = "no NVIDIA driver: libcuda.so.1 could not be loaded (" + why + ")";
    return inv;
  }
  inv.driver_loaded = true;
  inv.driver_path = api.lib->path();
  api.cuDriverGetVersion(&inv.driver_version);
  if (cuda::Result r = api.cuInit(0); r != 0) {
    inv.error = "cuInit failed: " + cuda::error_string(api, r);
    return inv;
  }
  int count = 0;
  if (cuda::Result r = api.cuDeviceGetCount(&count); r != 0) {
    inv.error = "cuDeviceGetCount failed: " + cuda::error_string(api, r);
    return inv;
  }
  for (int i = 0; i < count; ++i) inv.devices.push_back(describe_device(api, i));
  return inv;
}

CheckResult gpu_check(const GpuInventory& inv, int expected) {
  CheckResult r{"gpu", Outcome::kPass, "", inventory_json(inv)};
  const int count = static_cast<int>(inv.devices.size());
  if (!inv.driver_loaded || count == 0) {
    std::string why = inv.error.empty() ? "the CUDA driver reports no GPU" : inv.error;
    if (inv.driver_loaded && count == 0)
      why +=
          "; check CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES and that the container was given "
          "GPUs";
    else if (!inv.driver_loaded)
      why +=
          ". This machine or container has no GPU driver (Kubernetes: request nvidia.com/gpu; "
          "docker: --gpus all)";
    r.outcome = expected > 0 ? Outcome::kFail : Outcome::kSkip;
    r.message = expected > 0 ? why + "; " + std::to_string(expected) + " GPUs were expected" : why;
    return r;
  }
  r.message = std::to_string(count) + " GPU(s), CUDA driver " +
              cuda_version_string(inv.driver_version) + ": " + device_list(inv);
  if (expected > count) {
    r.outcome = Outcome::kFail;
    r.message = "--nproc-per-node " + std::to_string(expected) + " but only " +
                std::to_string(count) + " GPU(s) visible (" + device_list(inv) +
                "): lower --nproc-per-node or give the "
                "container more GPUs (CUDA_VISIBLE_DEVICES, nvidia.com/gpu)";
  }
  return r;
}

CheckResult gpu_health_check(const GpuHealthSnapshot& s, bool cuda_sees_gpus) {
  CheckResult r{"gpu-health", Outcome::kPass, "", snapshot_to_json(s)};
  if (!s.loaded || s.gpus.empty()) {
    r.outcome = cuda_sees_gpus && !s.loaded ? Outcome::kWarn : Outcome::kSkip;
    r.message = (s.loaded ? "NVML: " : "no NVML: ") + s.error +
                (r.outcome == Outcome::kWarn ? "; the GPUs cannot be watched while training" : "");
    return r;
  }
  std::string faults;
  for (std::size_t i = 0; i < s.gpus.size(); ++i)
    for (const auto& f : preflight_faults(s.readings.at(i)))
      faults += (faults.empty() ? "" : "; ") + describe_gpu(s.gpus[i]) + ": " + f.message;
  if (!faults.empty()) {
    r.outcome = Outcome::kFail;
    r.message = faults + ": replace the node (or reset the GPU: nvidia-smi -r)";
    return r;
  }
  r.message = std::to_string(s.gpus.size()) +
              " GPU(s) with no uncorrectable ECC error, no pending or failed remap (NVML, driver " +
              s.driver_version + ")";
  return r;
}

GpuHealthSnapshot gpu_health_of(const PreflightReport& report) {
  for (const auto& c : report.checks)
    if (c.name == "gpu-health") return snapshot_from_json(c.details);
  GpuHealthSnapshot none;
  none.error = "the preflight read no GPU health";
  return none;
}

}  // namespace tv
