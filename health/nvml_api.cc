#include "health/nvml_api.h"

namespace tv::nvml {
namespace {

template <class Fn>
void bind(const DynamicLibrary& lib, Fn*& fn, const char* name, const char* fallback = nullptr) {
  fn = lib.function<Fn>(name);
  if (!fn && fallback) fn = lib.function<Fn>(fallback);
}

}  // namespace

Api load(const LibraryLoader& loader, std::string* why) {
  Api api;
  auto lib = loader.open("libnvidia-ml.so.1", why);
  if (!lib) return api;
  bind(*lib, api.nvmlInit, "nvmlInit_v2", "nvmlInit");
  bind(*lib, api.nvmlErrorString, "nvmlErrorString");
  bind(*lib, api.nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  bind(*lib, api.nvmlDeviceGetCount, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
  bind(*lib, api.nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2",
       "nvmlDeviceGetHandleByIndex");
  bind(*lib, api.nvmlDeviceGetUUID, "nvmlDeviceGetUUID");
  bind(*lib, api.nvmlDeviceGetName, "nvmlDeviceGetName");
  bind(*lib, api.nvmlDeviceGetPciInfo, "nvmlDeviceGetPciInfo_v3");
  bind(*lib, api.nvmlDeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors");
  bind(*lib, api.nvmlDeviceGetRetiredPagesPendingStatus, "nvmlDeviceGetRetiredPagesPendingStatus");
  bind(*lib, api.nvmlDeviceGetRemappedRows, "nvmlDeviceGetRemappedRows");
  bind(*lib, api.nvmlDeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons",
       "nvmlDeviceGetCurrentClocksThrottleReasons");
  bind(*lib, api.nvmlEventSetCreate, "nvmlEventSetCreate");
  bind(*lib, api.nvmlDeviceRegisterEvents, "nvmlDeviceRegisterEvents");
  bind(*lib, api.nvmlEventSetWait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
  if (!api.nvmlInit || !api.nvmlDeviceGetCount || !api.nvmlDeviceGetHandleByIndex ||
      !api.nvmlDeviceGetUUID) {
    if (why)
      *why = lib->path() +
             " lacks the NVML device queries (nvmlInit_v2, nvmlDeviceGetCount_v2, "
             "nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID)";
    return Api{};
  }
  api.lib = std::move(lib);
  return api;
}

std::string error_string(const Api& api, Return r) {
  const char* s = api.nvmlErrorString ? api.nvmlErrorString(r) : nullptr;
  return s ? std::string(s) + " (" + std::to_string(r) + ")" : "NVML error " + std::to_string(r);
}

}  // namespace tv::nvml
