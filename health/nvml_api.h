// The few NVML (libnvidia-ml.so.1) entry points the GPU health watch and its preflight check use,
// declared here as plain function types for dlsym: no nvml.h is needed to build (the driver's ABI,
// as NVIDIA's nvml.h declares it: nvmlReturn_t and the enums are ints, handles are pointers).
// Never linked; loaded only in children (`trainvisor __query gpu-watch|gpu-health`).
#pragma once

#include <memory>
#include <string>

#include "health/dynamic_library.h"

namespace tv::nvml {

using Return = int;  // nvmlReturn_t
using Device = void*;
using EventSet = void*;

inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorResetRequired = 16;

inline constexpr int kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int kVolatileEcc = 0;             // NVML_VOLATILE_ECC
inline constexpr int kFeatureEnabled = 1;          // NVML_FEATURE_ENABLED
inline constexpr unsigned long long kEventXidCriticalError = 0x8;  // nvmlEventTypeXidCriticalError

// nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3)
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

// nvmlEventData_t (nvmlEventSetWait_v2)
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the Xid for kEventXidCriticalError
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

struct Api {
  std::shared_ptr<DynamicLibrary> lib;
  Return (*nvmlInit)() = nullptr;  // nvmlInit_v2
  const char* (*nvmlErrorString)(Return) = nullptr;
  Return (*nvmlSystemGetDriverVersion)(char*, unsigned) = nullptr;
  Return (*nvmlDeviceGetCount)(unsigned*) = nullptr;                  // _v2
  Return (*nvmlDeviceGetHandleByIndex)(unsigned, Device*) = nullptr;  // _v2
  Return (*nvmlDeviceGetUUID)(Device, char*, unsigned) = nullptr;
  Return (*nvmlDeviceGetName)(Device, char*, unsigned) = nullptr;
  Return (*nvmlDeviceGetPciInfo)(Device, PciInfo*) = nullptr;  // _v3
  Return (*nvmlDeviceGetTotalEccErrors)(Device, int, int, unsigned long long*) = nullptr;
  Return (*nvmlDeviceGetRetiredPagesPendingStatus)(Device, int*) = nullptr;
  Return (*nvmlDeviceGetRemappedRows)(Device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons (R535+), else ...ThrottleReasons
  Return (*nvmlDeviceGetCurrentClocksEventReasons)(Device, unsigned long long*) = nullptr;
  Return (*nvmlEventSetCreate)(EventSet*) = nullptr;
  Return (*nvmlDeviceRegisterEvents)(Device, unsigned long long, EventSet) = nullptr;
  Return (*nvmlEventSetWait)(EventSet, EventData*, unsigned) = nullptr;  // _v2, else the first
};

// Loads libnvidia-ml.so.1 and binds its symbols; lib == nullptr with *why set when it cannot be
// loaded or lacks the device queries. The event and counter functions may be left null (old
// drivers): the caller says what it cannot watch.
Api load(const LibraryLoader& loader, std::string* why);
std::string error_string(const Api& api, Return r);

}  // namespace tv::nvml
