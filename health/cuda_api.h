// The few CUDA driver API entry points trainvisor uses, as plain function types for dlsym (the
// driver's ABI: CUresult and CUdevice are ints, CUdeviceptr is 64-bit). Never linked.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "health/dynamic_library.h"

namespace tv::cuda {

using Result = int;  // CUresult; 0 is CUDA_SUCCESS
using Device = int;
using DevicePtr = unsigned long long;
using Context = void*;
using Stream = void*;

inline constexpr int kAttrComputeMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
inline constexpr int kAttrComputeMinor = 76;
inline constexpr int kErrorNotReady = 600;  // CUDA_ERROR_NOT_READY
inline constexpr int kErrorNoDevice = 100;  // CUDA_ERROR_NO_DEVICE

struct Api {
  std::shared_ptr<DynamicLibrary> lib;
  Result (*cuInit)(unsigned) = nullptr;
  Result (*cuDriverGetVersion)(int*) = nullptr;
  Result (*cuDeviceGetCount)(int*) = nullptr;
  Result (*cuDeviceGet)(Device*, int) = nullptr;
  Result (*cuDeviceGetName)(char*, int, Device) = nullptr;
  Result (*cuDeviceGetAttribute)(int*, int, Device) = nullptr;
  Result (*cuDeviceTotalMem)(size_t*, Device) = nullptr;  // cuDeviceTotalMem_v2
  Result (*cuGetErrorString)(Result, const char**) = nullptr;
  Result (*cuDevicePrimaryCtxRetain)(Context*, Device) = nullptr;
  Result (*cuCtxSetCurrent)(Context) = nullptr;
  Result (*cuMemAlloc)(DevicePtr*, size_t) = nullptr;            // _v2
  Result (*cuMemFree)(DevicePtr) = nullptr;                      // _v2
  Result (*cuMemsetD32)(DevicePtr, unsigned, size_t) = nullptr;  // _v2
  Result (*cuMemcpyDtoH)(void*, DevicePtr, size_t) = nullptr;    // _v2
  Result (*cuStreamCreate)(Stream*, unsigned) = nullptr;
  Result (*cuStreamQuery)(Stream) = nullptr;
};

// Loads libcuda.so.1 and its symbols. The query functions (init..total mem) are required; the
// others are left null when missing. nullopt-like: returns Api with lib == nullptr and *why set.
Api load(const LibraryLoader& loader, std::string* why);
std::string error_string(const Api& api, Result r);

}  // namespace tv::cuda
