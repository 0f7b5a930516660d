#include "health/cuda_api.h"

namespace tv::cuda {
namespace {

template <class Fn>
void bind(const DynamicLibrary& lib, Fn*& fn, const char* name) {
  fn = lib.function<Fn>(name);
}

}  // namespace

Api load(const LibraryLoader& loader, std::string* why) {
  Api api;
  auto lib = loader.open("libcuda.so.1", why);
  if (!lib) return api;
  bind(*lib, api.cuInit, "cuInit");
  bind(*lib, api.cuDriverGetVersion, "cuDriverGetVersion");
  bind(*lib, api.cuDeviceGetCount, "cuDeviceGetCount");
  bind(*lib, api.cuDeviceGet, "cuDeviceGet");
  bind(*lib, api.cuDeviceGetName, "cuDeviceGetName");
  bind(*lib, api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(*lib, api.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  bind(*lib, api.cuGetErrorString, "cuGetErrorString");
  bind(*lib, api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(*lib, api.cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(*lib, api.cuMemAlloc, "cuMemAlloc_v2");
  bind(*lib, api.cuMemFree, "cuMemFree_v2");
  bind(*lib, api.cuMemsetD32, "cuMemsetD32_v2");
  bind(*lib, api.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(*lib, api.cuStreamCreate, "cuStreamCreate");
  bind(*lib, api.cuStreamQuery, "cuStreamQuery");
  if (!api.cuInit || !api.cuDriverGetVersion || !api.cuDeviceGetCount || !api.cuDeviceGet ||
      !api.cuDeviceGetName || !api.cuDeviceGetAttribute || !api.cuDeviceTotalMem) {
    if (why)
      *why = lib->path() + " lacks the CUDA driver API entry points (cuInit, cuDeviceGetCount...)";
    return Api{};
  }
  api.lib = std::move(lib);
  return api;
}

std::string error_string(const Api& api, Result r) {
  const char* s = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(r, &s) == 0 && s)
    return std::string(s) + " (" + std::to_string(r) + ")";
  return "CUDA error " + std::to_string(r);
}

}  // namespace tv::cuda
